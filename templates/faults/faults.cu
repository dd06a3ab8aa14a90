// ktune test template "faults": y[i] = 2 * x[i] + 1 over n floats, with a MODE parameter that
// selects deliberately broken variants so the runner's fault handling can be tested:
//   0 good            1 out-of-bounds write (just past the end of y)
//   2 illegal address 3 infinite loop           4 too much shared memory (launch fails)
//   5 too many threads per block (launch fails) 6 wrong result    7 NaN in the output
//   8 compile error   9 trap (__trap)
// BLOCK threads per block and ITEMS elements per thread make good variants differ in speed.
// L2_MARK 1 (MODE 0 only) is correct too, but prefetches x into L2 with evict_last priority:
// lines that outlive the launch, for testing that the measurer resets L2 eviction priorities
// before timing the next candidate.
// Every parameter has a default, so the file compiles on its own.
#ifndef MODE
#define MODE 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef L2_MARK
#define L2_MARK 0
#endif

#if MODE == 8
#error "faults template: MODE 8 is a deliberate compile error"
#endif

extern "C" __global__ void ktune_faults(const float* __restrict__ x, float* __restrict__ y,
                                        long long n) {
#if MODE == 4
  extern __shared__ float staging[];  // the launch asks for more than any GPU has
  staging[threadIdx.x] = 0.f;
#endif
#if MODE == 3
  while (clock64() >= 0) {  // never ends: clock64 is a volatile read
  }
#endif
#if MODE == 2
  if (blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<volatile float*>(16) = 1.f;
#endif
#if MODE == 9
  if (blockIdx.x == 0 && threadIdx.x == 0) __trap();
#endif
  const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * ITEMS + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = base + static_cast<long long>(k) * blockDim.x;
    if (i < n) {
#if L2_MARK
      asm volatile("prefetch.global.L2::evict_last [%0];\n" ::"l"(x + i));
#endif
      float v = 2.f * x[i] + 1.f;
#if MODE == 6
      if (i % 7 == 3) v += 0.25f;
#endif
#if MODE == 7
      if (i == n / 2) v = __int_as_float(0x7fc00000);
#endif
      y[i] = v;
#if MODE == 1
      if (i == n - 1) y[n + 5] = v;  // lands in the guard bytes right after y
#endif
    }
  }
}
