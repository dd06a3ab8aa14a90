// Independent GPU reference of conv2d (Workload::device_reference of the conv templates): a
// deliberately plain direct convolution, one thread per output element, every product
// accumulated in double precision, then bias, ReLU and one rounding to the output dtype. It
// shares no code with the tuned kernels (no implicit GEMM, no tiles); only the storage types
// of common/dtype.cuh. Layouts: x NHWC, w KRSC, y NPQK. KT_DTYPE picks the element type.
#include "common/dtype.cuh"

/// y[n, p, q, k] = act(bias[k] + sum_{r,s,c} x[n, p*stride - pad + r*dil,
/// q*stride - pad + s*dil, c] * w[k, r, s, c]); taps outside the image read zero.
/// Grid-stride over the N*P*Q*K outputs (k fastest).
extern "C" __global__ void conv2d_reference(const kt_io_t* x, const kt_io_t* w, kt_io_t* y,
                                            const kt_io_t* bias, int N, int H, int W, int C,
                                            int K, int R, int S, int P, int Q, int stride,
                                            int pad, int dil, int has_bias, int relu) {
  const long long total = static_cast<long long>(N) * P * Q * K;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int k = static_cast<int>(i % K);
    long long pixel = i / K;
    const int q = static_cast<int>(pixel % Q);
    pixel /= Q;
    const int p = static_cast<int>(pixel % P);
    const int n = static_cast<int>(pixel / P);
    double sum = 0.0;
    for (int r = 0; r < R; ++r) {
      const int h = p * stride - pad + r * dil;
      if (h < 0 || h >= H) continue;
      for (int s = 0; s < S; ++s) {
        const int ww = q * stride - pad + s * dil;
        if (ww < 0 || ww >= W) continue;
        const kt_io_t* xp = x + ((static_cast<long long>(n) * H + h) * W + ww) * C;
        const kt_io_t* wp = w + ((static_cast<long long>(k) * R + r) * S + s) * C;
        for (int c = 0; c < C; ++c)
          sum += static_cast<double>(KtIO::to_float(xp[c])) *
                 static_cast<double>(KtIO::to_float(wp[c]));
      }
    }
    if (has_bias) sum += static_cast<double>(KtIO::to_float(bias[k]));
    if (relu && sum < 0.0) sum = 0.0;
    y[i] = KtIO::from_float(static_cast<float>(sum));
  }
}
