// GPU-side verification checks of the worker (see device_checks.h).
#include "device_checks.h"

#include <algorithm>
#include <cstring>

#include "cuda_module.h"
#include "ktune/error.h"
#include "verify.h"

namespace ktune::worker {

namespace {

/// One result slot in device memory: the first bad index stored inverted (0 = none, so a
/// memset clears it and atomicMax keeps the smallest index), then the two sums.
struct Slot {
  unsigned long long bad_inverted;
  double diff2;
  double ref2;
  double unused;
};
static_assert(sizeof(Slot) == 32, "slot layout shared with the kernels");

constexpr int kThreads = 256;

}  // namespace

const std::string& device_checks_source() {
  static const std::string source = R"CUDA(
struct Slot { unsigned long long bad_inverted; double diff2; double ref2; double unused; };

__device__ void note_bad(Slot* s, unsigned long long i) { atomicMax(&s->bad_inverted, ~i); }

extern "C" __global__ void kt_bytes_equal_value(const unsigned char* p, unsigned long long n,
                                                unsigned int value, Slot* slot) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    if (p[i] != (unsigned char)value) { note_bad(slot, i); return; }
}

extern "C" __global__ void kt_bytes_equal(const unsigned char* a, const unsigned char* b,
                                          unsigned long long n, Slot* slot) {
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long words = ((((unsigned long long)a | (unsigned long long)b) & 15) == 0) ? n / 16 : 0;
  const uint4* a4 = (const uint4*)a;
  const uint4* b4 = (const uint4*)b;
  for (unsigned long long w = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; w < words;
       w += stride) {
    uint4 x = a4[w], y = b4[w];
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
      for (unsigned long long i = 16 * w; i < 16 * w + 16; ++i)
        if (a[i] != b[i]) { note_bad(slot, i); break; }
      return;
    }
  }
  for (unsigned long long i = 16 * words + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < n; i += stride)
    if (a[i] != b[i]) { note_bad(slot, i); return; }
}

// dtype codes follow ktune::DType: f32, f16, bf16, f64, i32, i64, u8.
__device__ double kt_half(unsigned short h) {
  unsigned int e = (h >> 10) & 31u, m = h & 1023u;
  double v;
  if (e == 0) v = (double)m * (1.0 / 16777216.0);
  else if (e == 31) v = m ? __longlong_as_double(0x7ff8000000000000ll)
                          : __longlong_as_double(0x7ff0000000000000ll);
  else v = (double)(m | 1024u) * (double)(1ull << e) * (1.0 / 33554432.0);
  return (h & 0x8000u) ? -v : v;
}

__device__ double kt_load(const unsigned char* p, int dtype, unsigned long long i) {
  switch (dtype) {
    case 0: return (double)((const float*)p)[i];
    case 1: return kt_half(((const unsigned short*)p)[i]);
    case 2: return (double)__uint_as_float(((unsigned int)((const unsigned short*)p)[i]) << 16);
    case 3: return ((const double*)p)[i];
    case 4: return (double)((const int*)p)[i];
    case 5: return (double)((const long long*)p)[i];
    default: return (double)p[i];
  }
}

__device__ bool kt_finite(double x) { return x - x == 0.0; }

// Whether element i (of `size` bytes) still holds the poison byte in every byte.
__device__ bool kt_poisoned(const unsigned char* p, unsigned long long i, int size, unsigned int poison) {
  for (int b = 0; b < size; ++b)
    if (p[i * size + b] != (unsigned char)poison) return false;
  return true;
}

extern "C" __global__ void kt_compare(const unsigned char* got, const unsigned char* expected,
                                      unsigned long long n, int dtype, int size, unsigned int poison,
                                      double max_abs, double rel_elem, Slot* slot) {
  double diff2 = 0, ref2 = 0;
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    double g = kt_load(got, dtype, i), e = kt_load(expected, dtype, i);
    if (!kt_finite(g) || !kt_finite(e)) {
      // The poison is a NaN too: checked first, as on the host, so that an unwritten element
      // never passes as an expected NaN.
      if (kt_poisoned(got, i, size, poison)) { note_bad(slot, i); continue; }
      if ((g != g && e != e) || g == e) continue;
      note_bad(slot, i);
      continue;
    }
    if (g != e && dtype != 6 && kt_poisoned(got, i, size, poison)) { note_bad(slot, i); continue; }
    double d = g - e;
    if (max_abs >= 0 && fabs(d) > max_abs + rel_elem * fabs(e)) note_bad(slot, i);
    diff2 += d * d;
    ref2 += e * e;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    diff2 += __shfl_down_sync(0xffffffffu, diff2, offset);
    ref2 += __shfl_down_sync(0xffffffffu, ref2, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&slot->diff2, diff2);
    atomicAdd(&slot->ref2, ref2);
  }
}
)CUDA";
  return source;
}

DeviceChecks::DeviceChecks(const std::string& arch, int slots) : slots_(slots) {
  module_ = detail::load_utility_kernels(device_checks_source(), "ktune_device_checks.cu", arch,
                                         "the worker's verification kernels");
  detail::check_cuda(cudaMalloc(&slots_mem_, sizeof(Slot) * static_cast<std::size_t>(slots)),
                     "allocating verification slots");
  blocks_cap_ = static_cast<int>(detail::utility_grid_blocks(static_cast<unsigned>(blocks_cap_)));
}

DeviceChecks::~DeviceChecks() {
  if (slots_mem_) cudaFree(slots_mem_);
}

cudaError_t DeviceChecks::reset(cudaStream_t stream) {
  return cudaMemsetAsync(slots_mem_, 0, sizeof(Slot) * static_cast<std::size_t>(slots_), stream);
}

cudaError_t DeviceChecks::launch(const char* entry, std::size_t work, void** args,
                                 cudaStream_t stream) {
  if (work == 0) return cudaSuccess;
  std::size_t blocks = std::min<std::size_t>((work + kThreads - 1) / kThreads,
                                             static_cast<std::size_t>(blocks_cap_));
  auto status = module_->launch(entry, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, args, stream);
  return status.error;
}

namespace {
void* slot_ptr(void* base, int slot) { return static_cast<char*>(base) + sizeof(Slot) * static_cast<std::size_t>(slot); }
}  // namespace

cudaError_t DeviceChecks::bytes_equal_value(const void* data, std::size_t bytes, std::uint8_t value,
                                            int slot, cudaStream_t stream) {
  unsigned long long n = bytes;
  unsigned int v = value;
  void* s = slot_ptr(slots_mem_, slot);
  void* args[] = {&data, &n, &v, &s};
  return launch("kt_bytes_equal_value", bytes, args, stream);
}

cudaError_t DeviceChecks::bytes_equal(const void* a, const void* b, std::size_t bytes, int slot,
                                      cudaStream_t stream) {
  unsigned long long n = bytes;
  void* s = slot_ptr(slots_mem_, slot);
  void* args[] = {&a, &b, &n, &s};
  return launch("kt_bytes_equal", std::max<std::size_t>(bytes / 16, 1), args, stream);
}

cudaError_t DeviceChecks::compare(const void* got, const void* expected, DType t,
                                  std::size_t elements, const Tolerance& tol, int slot,
                                  cudaStream_t stream) {
  unsigned long long n = elements;
  int dtype = static_cast<int>(t);
  int size = static_cast<int>(dtype_size(t));
  unsigned int poison = verify::poison_byte(t);
  double max_abs = tol.max_abs, rel_elem = tol.rel_elem;
  void* s = slot_ptr(slots_mem_, slot);
  void* args[] = {&got, &expected, &n, &dtype, &size, &poison, &max_abs, &rel_elem, &s};
  return launch("kt_compare", elements, args, stream);
}

cudaError_t DeviceChecks::read(int count, cudaStream_t stream, std::vector<CheckResult>& out) {
  std::vector<Slot> host(static_cast<std::size_t>(count));
  cudaError_t rc = cudaMemcpyAsync(host.data(), slots_mem_, sizeof(Slot) * host.size(),
                                   cudaMemcpyDeviceToHost, stream);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream);
  if (rc != cudaSuccess) return rc;
  out.clear();
  for (const auto& s : host) {
    CheckResult r;
    if (s.bad_inverted != 0) r.first_bad = static_cast<std::size_t>(~s.bad_inverted);
    r.diff2 = s.diff2;
    r.ref2 = s.ref2;
    out.push_back(r);
  }
  return cudaSuccess;
}

}  // namespace ktune::worker
