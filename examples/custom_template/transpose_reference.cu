// The independent reference of transpose.cu: one element per thread in a grid-stride loop,
// as plain as possible. ktune runs it once per verification seed on the same inputs and
// compares every candidate's output with its result.
extern "C" __global__ void transpose_reference(float* out, const float* in, int rows, int cols) {
  const long long n = static_cast<long long>(rows) * cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const long long r = e / cols, c = e % cols;
    out[c * rows + r] = in[e];
  }
}
