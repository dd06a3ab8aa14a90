// Warp-level tensor-core step of the GEMM family (reused by implicit-GEMM convolution):
// mma.sync wrappers (m16n8k16 f16/bf16, m16n8k8 tf32, fp32 accumulation), ldmatrix fragment
// loads (transposed where the tile is stored m- or n-contiguous), and WarpMma, which
// multiplies one warp's WarpM x WarpN tile over one k step of a shared-memory stage laid out as
// SwizzledTile. Orientation flags are template parameters, so callers choose them from their
// own layouts (GEMM layouts, NHWC/KRSC convolution) without macros.
#pragma once

#include "gemm/gemm_smem_copy.cuh"

namespace ktg {

/// Loads four 8x8 b16 matrices; lane l gives the row address of matrix l / 8, row l % 8.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// ldmatrix_x4 with each 8x8 matrix transposed on the way into registers.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

/// ldmatrix_x4 at shared address `address + Offset`: the constant stays an immediate of the
/// instruction, so fragments Offset bytes apart share one address register.
template <int Offset>
__device__ __forceinline__ void ldmatrix_x4_at(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4+%5];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address), "n"(Offset));
}

/// ldmatrix_x4_trans at shared address `address + Offset` (see ldmatrix_x4_at).
template <int Offset>
__device__ __forceinline__ void ldmatrix_x4_trans_at(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4+%5];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address), "n"(Offset));
}

/// fp32 bits rounded to the nearest TF32 value (as the tensor core reads them).
__device__ __forceinline__ unsigned to_tf32(float v) {
  unsigned out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(v));
  return out;
}

/// D += A * B for one m16n8 tile with k = 16 (f16 or bf16 inputs) or k = 8 (tf32 inputs).
template <class T>
__device__ __forceinline__ void mma_16x8(float (&d)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2]) {
  if constexpr (sizeof(T) == 4) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (same_type<T, __nv_bfloat16>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

/// One warp's WarpM x WarpN tile of tensor-core products over one shared-memory stage.
/// AKContiguous: the A tile is stored [m][k] (else [k][m]); BKContiguous: the B tile is
/// stored [n][k] (else [k][n]). ALayout / BLayout are the SwizzledTile types of the stage.
/// Accumulator acc[mi][ni][0..3] holds rows (g, g, g + 8, g + 8) and columns
/// (2t, 2t + 1, 2t, 2t + 1) of sub-tile (mi, ni), with g = lane / 4 and t = lane % 4.
template <class T, int WarpM, int WarpN, bool AKContiguous, bool BKContiguous, class ALayout,
          class BLayout>
struct WarpMma {
  static constexpr int kMi = WarpM / 16;                     ///< m16 sub-tiles per warp
  static constexpr int kNi = WarpN / 8;                      ///< n8 sub-tiles per warp
  static constexpr int kStep = sizeof(T) == 4 ? 8 : 16;  ///< k per mma instruction
  static_assert(WarpM % 16 == 0 && WarpN % 16 == 0, "warp tile must be a multiple of 16 x 16");

  /// The A and B fragments of one k step (what step() loads before its mma instructions).
  struct Fragments {
    unsigned a[kMi][4];
    unsigned b[kNi][2];
  };

  /// Loads the fragments of k step k0 from a stage (for a pipelined main loop that loads
  /// step s + 1 while the mma instructions of step s run).
  __device__ __forceinline__ static void load(const char* sA, const char* sB, int wm0, int wn0,
                                              int k0, Fragments& f, int lane) {
    load_fragments(sA, sB, wm0, wn0, k0, f.a, f.b, lane);
  }

  /// acc += the product of one k step's fragments.
  __device__ __forceinline__ static void mma(const Fragments& f, float (&acc)[kMi][kNi][4]) {
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNi; ++ni) mma_16x8<T>(acc[mi][ni], f.a[mi], f.b[ni]);
  }

  /// acc += A[wm0 .. wm0 + WarpM, k0 .. k0 + kStep] * B[k0 .., wn0 .. wn0 + WarpN] from the stage.
  __device__ __forceinline__ static void step(const char* sA, const char* sB, int wm0, int wn0,
                                              int k0, float (&acc)[kMi][kNi][4], int lane) {
    unsigned a[kMi][4];
    unsigned b[kNi][2];
    load_fragments(sA, sB, wm0, wn0, k0, a, b, lane);
#pragma unroll
    for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNi; ++ni) mma_16x8<T>(acc[mi][ni], a[mi], b[ni]);
  }

  /// ldmatrix of the A fragments of sub-tiles Mi .. kMi - 1 at k step k0 (16-bit types) from
  /// the stage at shared address `base`; lane (j, r) addresses row r of 8x8 matrix j.
  template <int Mi>
  __device__ __forceinline__ static void load_a16(unsigned (&a)[kMi][4], unsigned base, int wm0,
                                                  int k0, int j, int r) {
    if constexpr (Mi < kMi) {
      if constexpr (AKContiguous) {
        const int m = wm0 + (j & 1) * 8;
        const int k = k0 + (j >> 1) * 8;
        ldmatrix_x4_at<Mi * 16 * ALayout::kRowBytes>(
            a[Mi], base + (m * ALayout::kRowBytes + ALayout::offset(r, k)));
      } else {
        const int m = wm0 + Mi * 16 + (j & 1) * 8;
        const int k = k0 + (j >> 1) * 8;
        ldmatrix_x4_trans_at<0>(a[Mi], base + (k * ALayout::kRowBytes + ALayout::offset(r, m)));
      }
      load_a16<Mi + 1>(a, base, wm0, k0, j, r);
    }
  }

  /// ldmatrix of the B fragments of sub-tile pairs (Ni, Ni + 1) .. (kNi - 2, kNi - 1) at k
  /// step k0 (16-bit types); see load_a16.
  template <int Ni>
  __device__ __forceinline__ static void load_b16(unsigned (&b)[kNi][2], unsigned base, int wn0,
                                                  int k0, int j, int r) {
    if constexpr (Ni < kNi) {
      unsigned q[4];
      if constexpr (BKContiguous) {
        const int n = wn0 + (j >> 1) * 8;
        const int k = k0 + (j & 1) * 8;
        ldmatrix_x4_at<Ni * 8 * BLayout::kRowBytes>(
            q, base + (n * BLayout::kRowBytes + BLayout::offset(r, k)));
      } else {
        const int n = wn0 + Ni * 8 + (j >> 1) * 8;
        const int k = k0 + (j & 1) * 8;
        ldmatrix_x4_trans_at<0>(q, base + (k * BLayout::kRowBytes + BLayout::offset(r, n)));
      }
      b[Ni][0] = q[0];
      b[Ni][1] = q[1];
      b[Ni + 1][0] = q[2];
      b[Ni + 1][1] = q[3];
      load_b16<Ni + 2>(b, base, wn0, k0, j, r);
    }
  }

  /// Fragment loads of one k step (ldmatrix for 16-bit types, scalar loads rounded to TF32).
  __device__ __forceinline__ static void load_fragments(const char* sA, const char* sB, int wm0,
                                                        int wn0, int k0, unsigned (&a)[kMi][4],
                                                        unsigned (&b)[kNi][2], int lane) {
    if constexpr (sizeof(T) == 2) {
      const int j = lane >> 3;  // which 8x8 matrix this lane addresses
      const int r = lane & 7;   // which row of it
      // Every matrix starts on a multiple of 8 rows, where the swizzle repeats, so the part of
      // its start that steps by sub-tile (k-contiguous tiles) or by k step (transposed ones)
      // is a plain multiple of the row pitch: a compile-time immediate of ldmatrix. Only
      // one address register per k step (or per sub-tile) remains, instead of one per
      // fragment (NVRTC hoisted 32 of them out of the k loop at 64 x 64 warp tiles).
      load_a16<0>(a, smem_address(sA), wm0, k0, j, r);
      load_b16<0>(b, smem_address(sB), wn0, k0, j, r);
    } else {
      const int g = lane >> 2;
      const int t = lane & 3;
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) {
        const int m = wm0 + mi * 16 + g;
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // (m, k): (g, t) (g+8, t) (g, t+4) (g+8, t+4)
          const int mm = m + (q & 1) * 8;
          const int kk = k0 + t + (q >> 1) * 4;
          const int off = AKContiguous ? ALayout::offset(mm, kk) : ALayout::offset(kk, mm);
          a[mi][q] = to_tf32(*reinterpret_cast<const float*>(sA + off));
        }
      }
#pragma unroll
      for (int ni = 0; ni < kNi; ++ni) {
        const int n = wn0 + ni * 8 + g;
#pragma unroll
        for (int q = 0; q < 2; ++q) {  // (k, n): (t, g) (t+4, g)
          const int kk = k0 + t + q * 4;
          const int off = BKContiguous ? BLayout::offset(n, kk) : BLayout::offset(kk, n);
          b[ni][q] = to_tf32(*reinterpret_cast<const float*>(sB + off));
        }
      }
    }
  }
};

}  // namespace ktg
