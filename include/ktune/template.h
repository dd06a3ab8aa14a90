// KernelTemplate: a parameterized CUDA kernel (its .cu source embedded at build time), the
// space of its tunables for a problem, what a config can implement, how it is launched, and
// the workload (buffers, random inputs, reference, tolerance) that verifies it. Templates are
// found by name in a registry; built-in ones are registered on first use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/config.h"
#include "ktune/device.h"
#include "ktune/problem.h"
#include "ktune/space.h"

namespace ktune {

/// Element types of buffers.
enum class DType { f32, f16, bf16, f64, i32, i64, u8 };
/// Bytes per element.
std::size_t dtype_size(DType t);
/// "f32", "f16", "bf16", ...
const char* to_string(DType t);
/// Parses "f32"/"fp32"/"float", "f16"/"fp16"/"half", "bf16", ...; throws Error naming it.
DType dtype_from_string(const std::string& text);

/// How a kernel uses a buffer.
enum class Role {
  input,   ///< read only: checked unchanged after the run
  output,  ///< written: poisoned before the run, compared with the reference
  inout,   ///< read and written (in place): restored before every timed run, compared
  scratch  ///< workspace: no content expectations
};

/// A device buffer of a workload or launch plan.
struct BufferSpec {
  std::string name;        ///< argument name, for messages
  DType dtype = DType::f32;
  std::size_t elements = 0;
  Role role = Role::input;
  std::size_t offset_bytes = 0;  ///< pointer offset from an aligned allocation (misalignment tests)
};

/// Host copy of one buffer's contents.
struct HostBuffer {
  BufferSpec spec;                 ///< what it is
  std::vector<std::uint8_t> bytes; ///< elements * dtype_size bytes
  /// Typed view (caller picks the type matching spec.dtype; f16/bf16 as uint16_t).
  template <class T> T* as() { return reinterpret_cast<T*>(bytes.data()); }
  /// Typed const view.
  template <class T> const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
};

/// One kernel argument: a buffer (by index into workload buffers followed by plan scratch) or
/// a scalar passed by value.
struct KernelArg {
  /// What the argument is: a buffer's device pointer, or a scalar of that type.
  enum class Kind { buffer, i32, i64, f32, f64 };
  Kind kind = Kind::i32;   ///< what the argument is
  std::size_t buffer = 0;  ///< for Kind::buffer
  std::int64_t i = 0;      ///< for i32 / i64
  double f = 0;            ///< for f32 / f64
  /// A buffer argument.
  static KernelArg buf(std::size_t index) { KernelArg a; a.kind = Kind::buffer; a.buffer = index; return a; }
  /// A 32-bit integer argument.
  static KernelArg i32(std::int64_t v) { KernelArg a; a.kind = Kind::i32; a.i = v; return a; }
  /// A 64-bit integer argument.
  static KernelArg i64(std::int64_t v) { KernelArg a; a.kind = Kind::i64; a.i = v; return a; }
  /// A float argument.
  static KernelArg f32(double v) { KernelArg a; a.kind = Kind::f32; a.f = v; return a; }
  /// A double argument.
  static KernelArg f64(double v) { KernelArg a; a.kind = Kind::f64; a.f = v; return a; }
};

/// One step of a launch plan: a kernel launch, or a memset of a buffer.
struct LaunchStep {
  /// What the step does: launch `entry`, or zero a buffer (memset_buffer).
  enum class Kind { kernel, memset };
  Kind kind = Kind::kernel;             ///< what the step does
  std::string entry;                    ///< extern "C" kernel name (kernel steps)
  unsigned grid[3] = {1, 1, 1};         ///< grid dimensions
  unsigned block[3] = {1, 1, 1};        ///< block dimensions
  unsigned dynamic_smem = 0;            ///< dynamic shared memory bytes
  std::vector<KernelArg> args;          ///< parameters in order
  std::size_t memset_buffer = 0;        ///< memset steps: buffer index
  int memset_byte = 0;                  ///< memset steps: byte value
  /// Kernel steps: the kernel's first statement is griddepcontrol.wait
  /// (kt_grid_dependency_wait of templates/common/grid_dependency.cuh), so it touches no memory
  /// before the grids it depends on have completed and flushed. Only such a kernel may be
  /// launched with programmatic stream serialization (programmatic dependent launch, PDL:
  /// TimingOptions::programmatic_launch, DispatcherOptions::programmatic_launch), which lets
  /// its launch overlap the previous kernel's last blocks instead of waiting for the stream.
  bool grid_dependency_wait = false;
};

/// How one config runs a problem: the steps in order, plus config-dependent scratch buffers
/// (indexed after the workload's buffers).
struct LaunchPlan {
  std::vector<LaunchStep> steps;    ///< executed in order on one stream
  std::vector<BufferSpec> scratch;  ///< extra buffers this config needs
};

/// Acceptance threshold for an output.
struct Tolerance {
  double rel_l2 = 1e-5;      ///< max ||out - ref||_2 / ||ref||_2
  double max_abs = -1;       ///< optional per-element bound |out - ref| <= max_abs + rel_elem*|ref|; <0 off
  double rel_elem = 0;       ///< see max_abs
};

/// An independent reference computed on the GPU: a deliberately simple kernel with its own
/// source (not the template's), run once per seed on the same inputs, whose outputs become the
/// expected values. For problems whose host reference would take too long (large GEMMs,
/// convolutions, huge reductions). It should accumulate in higher precision than the candidates.
struct DeviceReference {
  std::string source;                 ///< CUDA source (extern "C" kernels), compiled by NVRTC
  std::string source_name = "device_reference.cu";  ///< the file name NVRTC's messages give
  std::vector<std::string> options;   ///< extra NVRTC options, e.g. "-DREF_DTYPE=1"
  LaunchPlan plan;                    ///< writes every output/inout buffer (workload indices;
                                      ///< plan.scratch after them)
};

/// What a template needs verified and timed for one problem: buffers, random inputs, the
/// independent reference and the tolerance.
class Workload {
 public:
  virtual ~Workload() = default;
  /// The problem's buffers, in the order LaunchStep args index them.
  virtual std::vector<BufferSpec> buffers() const = 0;
  /// Fills every input and inout buffer with fresh random (never all-zero) data for `seed`.
  virtual void fill(std::vector<HostBuffer>& buffers, std::uint64_t seed) const = 0;
  /// Computes the expected contents of every output and inout buffer from the inputs
  /// (independent of the kernel, e.g. CPU in double precision). `buffers` holds the inputs as
  /// filled; the function overwrites outputs/inouts with expected values.
  virtual void reference(std::vector<HostBuffer>& buffers) const = 0;
  /// Tolerance for an output buffer.
  virtual Tolerance tolerance(const BufferSpec& output) const = 0;
  /// Minimum bytes the operation must move (each input read once, each output written once).
  virtual double bytes() const = 0;
  /// Floating-point operations (0 for pure data movement).
  virtual double flops() const { return 0; }
  /// Estimated host work of reference() in scalar operations (e.g. M*N*K multiply-adds for a
  /// GEMM); 0 = cheap. A runner may replace a reference this costly by the template's vendor
  /// library on the GPU (KernelTemplate::vendor_reference) or verify on a smaller shape.
  virtual double reference_cost() const { return 0; }
  /// A GPU reference the worker uses instead of reference() when present (the inputs are
  /// still filled on the host by fill()). Default: none. A workload typically returns one only
  /// above some reference_cost(), keeping the double-precision host reference for small shapes.
  virtual std::optional<DeviceReference> device_reference() const { return std::nullopt; }
};

/// A tunable kernel family.
class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;
  /// Registry name, e.g. "copy", "gemm_simt".
  virtual std::string name() const = 0;
  /// Operator implemented, e.g. "gemm"; problems name their op.
  virtual std::string op() const = 0;
  /// One line for `ktune list`.
  virtual std::string description() const = 0;
  /// CUDA source (embedded .cu) compiled by NVRTC with config and problem defines.
  virtual const std::string& source() const = 0;
  /// The file name compiler messages give the source: "<name>.cu" (a user template: its
  /// kernel file's name, so that errors point at the user's file).
  virtual std::string source_name() const { return name() + ".cu"; }
  /// Shape dimension names in order, e.g. {"M","N","K"}; used to parse "4096x4096x4096".
  virtual std::vector<std::string> dim_names() const = 0;
  /// Allowed values per attribute, e.g. {"dtype": {"f32","f16"}}; first value is the default.
  virtual std::map<std::string, std::vector<std::string>> attr_domains() const = 0;
  /// Throws Error naming what is wrong with the problem: unknown_name for an attribute the
  /// template lacks, invalid_argument or unsupported otherwise.
  virtual void check_problem(const Problem& problem) const;
  /// A typical problem (for `ktune list`, compile tests and examples).
  virtual Problem example_problem() const = 0;
  /// The tunables and constraints for a problem on a device.
  virtual SearchSpace space(const Problem& problem, const Device& device) const = 0;
  /// True when the config computes this problem correctly; else `why` says what blocks it.
  virtual bool can_implement(const Problem& problem, const Config& config,
                             std::string* why = nullptr) const;
  /// Throws Error(invalid_argument) naming the template, the config and can_implement's
  /// reason when the config cannot compute this problem (every built-in template's launch()
  /// calls it first).
  void require_implementable(const Problem& problem, const Config& config) const;
  /// Defines derived from the (checked) problem, e.g. "-DKT_DTYPE=1". Values come only from
  /// validated problem fields, never from free text.
  virtual std::vector<std::string> problem_defines(const Problem& problem) const;
  /// NVRTC target, e.g. device.arch() or "sm_90a" for wgmma variants.
  virtual std::string target_arch(const Device& device, const Config& config) const;
  /// Launch steps and scratch for a config.
  virtual LaunchPlan launch(const Problem& problem, const Config& config,
                            const Device& device) const = 0;
  /// Buffers, inputs, reference and tolerance for a problem.
  virtual std::unique_ptr<Workload> workload(const Problem& problem) const = 0;
  /// Vendor baseline to report against: "copy", "cublas", "cudnn", or "" for none.
  virtual std::string vendor_reference() const { return ""; }
  /// Byte alignment the kernels need of every caller buffer's address: Dispatcher::launch
  /// refuses a buffer that lacks it (or its element's own alignment, if larger), rather than
  /// let a vector access fault and corrupt the CUDA context. Default 16, what the built-in
  /// templates need and any cudaMalloc result has; a C++ template whose kernels take less
  /// overrides it (1: only each element's own alignment). A workload buffer tuned at an
  /// offset (BufferSpec::offset_bytes) needs only the alignment its offset has.
  virtual std::size_t buffer_alignment() const { return 16; }
};

/// Adds a template to the global registry (replacing one of the same name).
void register_template(std::shared_ptr<const KernelTemplate> tmpl);
/// Finds a template by name; throws Error(unknown_name) listing the known names.
std::shared_ptr<const KernelTemplate> find_template(const std::string& name);
/// All registered templates (built-ins included), sorted by name.
std::vector<std::shared_ptr<const KernelTemplate>> all_templates();
/// The embedded text of a source under templates/, e.g. "copy/copy.cu"; throws if absent.
const std::string& embedded_source(const std::string& relative_path);

/// Builds a Problem for a template from CLI-style text: shape "AxBxC" and attrs "k=v,k=v";
/// missing attrs take their defaults; validated with check_problem().
Problem make_problem(const KernelTemplate& tmpl, const std::string& shape,
                     const std::map<std::string, std::string>& attrs = {});

}  // namespace ktune
