// Element storage types shared by the kernel templates and their conversions to and from fp32.
// fp16 and bf16 travel as 16-bit integers and are converted with PTX cvt instructions, so the
// templates need no CUDA header (they compile the same under NVRTC and nvcc). KT_DTYPE picks
// the storage type of a template's I/O: 0 = f32, 1 = f16, 2 = bf16.
#ifndef KTUNE_COMMON_DTYPE_CUH
#define KTUNE_COMMON_DTYPE_CUH

#ifndef KT_DTYPE
#define KT_DTYPE 0
#endif

/// fp32 storage: conversions are the identity (no packed form: from_float2 is not used).
struct KtF32 {
  typedef float storage;
  static __device__ __forceinline__ float to_float(float v) { return v; }
  static __device__ __forceinline__ float from_float(float v) { return v; }
};

/// IEEE binary16 storage (bits in an unsigned short), round-to-nearest-even on store.
struct KtF16 {
  typedef unsigned short storage;
  static __device__ __forceinline__ float to_float(unsigned short v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
  }
  static __device__ __forceinline__ unsigned short from_float(float f) {
    unsigned short v;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(f));
    return v;
  }
  /// Two values packed in one instruction (lo in the low half), same rounding as from_float.
  static __device__ __forceinline__ unsigned int from_float2(float lo, float hi) {
    unsigned int v;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(v) : "f"(hi), "f"(lo));
    return v;
  }
};

/// bfloat16 storage (bits in an unsigned short), round-to-nearest-even on store (sm_80+).
struct KtBF16 {
  typedef unsigned short storage;
  static __device__ __forceinline__ float to_float(unsigned short v) {
    return __uint_as_float(static_cast<unsigned int>(v) << 16);
  }
  static __device__ __forceinline__ unsigned short from_float(float f) {
    unsigned short v;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v) : "f"(f));
    return v;
  }
  /// Two values packed in one instruction (lo in the low half), same rounding as from_float.
  static __device__ __forceinline__ unsigned int from_float2(float lo, float hi) {
    unsigned int v;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(v) : "f"(hi), "f"(lo));
    return v;
  }
};

#if KT_DTYPE == 0
typedef KtF32 KtIO;  ///< the I/O type selected by KT_DTYPE
#elif KT_DTYPE == 1
typedef KtF16 KtIO;
#elif KT_DTYPE == 2
typedef KtBF16 KtIO;
#else
#error "KT_DTYPE must be 0 (f32), 1 (f16) or 2 (bf16)"
#endif

/// Storage element type of the selected I/O type.
typedef KtIO::storage kt_io_t;

/// +infinity / -infinity without math headers.
__device__ __forceinline__ float kt_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float kt_neg_inf() { return __int_as_float(0xff800000); }

#endif  // KTUNE_COMMON_DTYPE_CUH
