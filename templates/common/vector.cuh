// Vector memory access for the kernel templates: N elements of a storage type moved as one
// 2/4/8/16-byte load or store (the widest the hardware has is 16 bytes), with an optional
// cache hint (0 = default, 1 = streaming / evict-first, 2 = read-only path), and unpacking
// to fp32 through a KtF32 / KtF16 / KtBF16 conversion type (dtype.cuh).
#ifndef KTUNE_COMMON_VECTOR_CUH
#define KTUNE_COMMON_VECTOR_CUH

#include "common/dtype.cuh"

/// The raw integer type that moves BYTES bytes in one access.
template <int BYTES> struct KtRaw;
template <> struct KtRaw<16> { typedef uint4 type; };
template <> struct KtRaw<8> { typedef uint2 type; };
template <> struct KtRaw<4> { typedef unsigned int type; };
template <> struct KtRaw<2> { typedef unsigned short type; };

/// Loads one raw value with a cache hint (0 default, 1 streaming, 2 read-only cache).
template <int HINT, class R>
__device__ __forceinline__ R kt_load_raw(const R* p) {
  if (HINT == 1) return __ldcs(p);
  if (HINT == 2) return __ldg(p);
  return *p;
}

/// Stores one raw value with a cache hint (1 streaming, otherwise default).
template <int HINT, class R>
__device__ __forceinline__ void kt_store_raw(R* p, R v) {
  if (HINT == 1) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

/// Packs two fp32 values into two 16-bit elements through C::from_float2 (KtF16, KtBF16);
/// for KtF32 it is never called (the overload keeps the template well-formed).
template <class C>
__device__ __forceinline__ unsigned int kt_pack2(float lo, float hi) {
  return C::from_float2(lo, hi);
}
template <>
__device__ __forceinline__ unsigned int kt_pack2<KtF32>(float, float) {
  return 0u;
}

/// N elements of storage type S, loaded and stored as one access (sizeof(S)*N must be
/// 2, 4, 8 or 16 and the address a multiple of it).
template <class S, int N>
struct KtVec {
  typedef typename KtRaw<sizeof(S) * N>::type raw_t;
  union {
    raw_t raw;
    S v[N];
  };

  /// Loads the vector starting at element p (aligned to sizeof(S)*N bytes).
  template <int HINT>
  __device__ __forceinline__ void load(const S* p) {
    raw = kt_load_raw<HINT>(reinterpret_cast<const raw_t*>(p));
  }
  /// Stores the vector at element p (aligned to sizeof(S)*N bytes).
  template <int HINT>
  __device__ __forceinline__ void store(S* p) const {
    kt_store_raw<HINT>(reinterpret_cast<raw_t*>(p), raw);
  }
  /// Converts every element to fp32 with conversion type C.
  template <class C>
  __device__ __forceinline__ void to_float(float (&out)[N]) const {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = C::to_float(v[i]);
  }
  /// Sets every element from fp32 with conversion type C (rounding to nearest even).
  /// 16-bit storage converts pairs with one packed cvt (f16x2 / bf16x2) where N allows.
  template <class C>
  __device__ __forceinline__ void from_float(const float (&in)[N]) {
    if (sizeof(S) == 2 && N % 2 == 0) {
      unsigned int* pairs = reinterpret_cast<unsigned int*>(v);
#pragma unroll
      for (int i = 0; i < N / 2; ++i) pairs[i] = kt_pack2<C>(in[2 * i], in[2 * i + 1]);
    } else {
#pragma unroll
      for (int i = 0; i < N; ++i) v[i] = C::from_float(in[i]);
    }
  }
};

#endif  // KTUNE_COMMON_VECTOR_CUH
