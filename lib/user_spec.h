// The parsed form of a user template's T1 / Kernel Tuner document (user_spec.cc reads it;
// user_template.cc builds the template and its workloads from it): the names expressions may
// use, the launch geometry, the arguments and the reference, every expression parsed once,
// and how they evaluate for a problem and a config.
// Internal API of the library (not installed).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expression.h"
#include "ktune/space.h"
#include "ktune/template.h"

namespace ktune::user_spec {

/// Most threads in a block (CUDA's limit, checked before a config is compiled).
constexpr std::int64_t kMaxThreads = 1024;
/// Most elements of a vector argument (2^40: beyond any GPU's memory; bytes never overflow).
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

/// Names an expression may use: tunables, then problem dimensions, then ProblemSize_i.
struct Names {
  std::vector<std::string> all;
  std::size_t tunables = 0;
  std::size_t dims = 0;
};

/// A parsed expression that remembers whether it needs tunable values.
struct Expr {
  Expression code;
  bool uses_tunables = false;
  Value eval(const std::vector<Value>& values) const { return code.evaluate(values); }
  /// The value as a double (a float scalar's `rows / 3`); NaN on a division by zero.
  double eval_real(const std::vector<Value>& values) const { return code.evaluate_real(values); }
  /// The value of a count (threads, blocks, bytes, elements): nullopt with `why` set ("is
  /// 10.6667, not a whole number (// divides rounding down)", "is not a number ... (a division
  /// by zero ...)", "is beyond a 64-bit integer") where eval() would truncate, give 0 or clamp.
  std::optional<Value> eval_whole(const std::vector<Value>& values, std::string* why) const;
};

/// Launch geometry: block from LocalSize, grid from ProblemSize / GridDiv or GlobalSize.
struct Geometry {
  std::vector<Expr> block;                   // X, Y, Z
  std::vector<std::vector<Expr>> grid_div;   // per dimension (grid_div mode)
  std::vector<Expr> global;                  // per dimension (global mode)
  bool global_is_threads = false;            // GlobalSizeType OpenCL
  std::optional<Expr> shared_bytes;          // dynamic shared memory
  std::size_t problem_dims = 0;              // ProblemSize entries (grid_div mode)

  /// Grid and block for the values; `why` explains an impossible launch.
  bool compute(const std::vector<Value>& values, const Names& names, std::int64_t grid[3],
               std::int64_t block_out[3], std::int64_t& smem, std::string* why) const;

  /// True when a tuning parameter appears in the block, grid or shared-memory expressions.
  bool uses_tunables() const;

  /// "(bx)*(by)*(bz) <= max_threads" when the block uses tuning parameters only (so the
  /// space can rule out oversized blocks before they are compiled), else "".
  std::string thread_limit_constraint(const std::vector<std::string>& texts, std::size_t tunables,
                                      int max_threads) const;
};

/// One kernel argument of the specification.
struct ArgumentSpec {
  std::string name;
  bool vector = true;
  DType dtype = DType::f32;
  Role role = Role::input;
  std::optional<Expr> size;        // vectors: elements
  bool random_fill = true;         // vectors: Random, else Constant
  double fill_value = 1.0;         // vectors: scale or constant; scalars: the value
  std::optional<Expr> value;       // scalars: value as an expression over dimensions
  std::optional<double> tolerance; // outputs: relative L2 bound
};

/// Everything read from the document (shared by the template and its workloads).
struct UserSpec {
  std::string name;
  std::string origin;
  std::string kernel_name;
  std::string source;
  std::string source_name;  // the kernel file's name, for compiler messages
  std::vector<std::string> compiler_options;
  SearchSpace space;
  std::vector<std::pair<std::string, Value>> dims;  // name, example value
  Names names;
  std::vector<Expr> problem_size;                   // ProblemSize_i over dimensions
  Geometry geometry;
  std::vector<std::string> block_texts;
  std::vector<ArgumentSpec> args;
  std::string reference_name;
  std::string reference_source;
  std::string reference_source_name;  // the reference KernelFile's name, for NVRTC messages
  Geometry reference_geometry;
  /// Recorded reference (instead of a kernel): argument name -> raw little-endian file of its
  /// Type, absolute paths. Inputs are loaded as given for every seed; outputs are the expected
  /// values.
  std::map<std::string, std::string> input_files, output_files;
  bool recorded() const { return !output_files.empty(); }
  std::optional<double> tolerance;
  std::optional<Expr> bytes, flops;
  /// KtuneExtensions.GridDependencyWait: the kernel waits for the previous grid
  /// (griddepcontrol.wait) before it touches global memory, so its launch step is marked
  /// grid_dependency_wait (the Builder checks each config's PTX for it).
  bool grid_dependency_wait = false;
  std::string description;

  /// The value array for a problem (tunables left at 0) or a problem and a config.
  std::vector<Value> values(const Problem& problem, const Config* config) const;

  /// Kernel arguments in order (vectors by their buffer index).
  std::vector<KernelArg> kernel_args(const std::vector<Value>& values) const;

  /// One-step plan of `entry` with `geometry`; throws Error(unsupported) for a bad launch.
  LaunchPlan plan(const std::string& entry, const Geometry& g, const std::vector<Value>& values,
                  const std::string& what) const;
};

/// Default relative L2 bound of an output of a dtype.
double default_tolerance(DType dtype);

/// The sections of a T1 document ktune reads (others are left to the tools that use them).
inline constexpr std::initializer_list<const char*> kDocumentSections = {
    "General", "ConfigurationSpace", "KernelSpecification", "KtuneExtensions"};

/// Reads the document `spec_json` with its kernel and reference sources ("" when the document
/// names no reference file). `origin` names the document in errors ("<origin>: <field>:
/// <what>"); `kernel_name` names the kernel source in compiler messages ("" = the document's
/// KernelFile).
std::shared_ptr<const UserSpec> read_user_spec(const std::string& spec_json,
                                               const std::string& kernel_source,
                                               const std::string& reference_source,
                                               const std::string& origin,
                                               const std::string& kernel_name);

}  // namespace ktune::user_spec
