// A user's own kernel, tuned by ktune without any C++: out (cols x rows) = transpose of in
// (rows x cols), both row-major float. Every tunable has an #ifndef default, so the file also
// compiles on its own; ktune passes the config as -D definitions. The kernel is extern "C" so
// that its name is the one KernelSpecification.KernelName gives.
//
// Tunables (transpose.T1.json): block_size_x x block_size_y threads per block, tile_size_y rows
// per thread, use_shared (stage a tile in shared memory so that both the reads and the writes
// are coalesced) and use_padding (one extra column against shared-memory bank conflicts).
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_shared
#define use_shared 0
#endif
#ifndef use_padding
#define use_padding 0
#endif

/// Rows of `in` one block covers.
#define TILE_ROWS (block_size_y * tile_size_y)

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
transpose(float* __restrict__ out, const float* __restrict__ in, int rows, int cols) {
  const int c0 = blockIdx.x * block_size_x;  // first column of in (row of out) of the block
  const int r0 = blockIdx.y * TILE_ROWS;     // first row of in (column of out) of the block
  const int c = c0 + threadIdx.x;
#if use_shared
  __shared__ float tile[TILE_ROWS][block_size_x + use_padding];
#pragma unroll
  for (int k = 0; k < tile_size_y; ++k) {
    const int i = threadIdx.y + k * block_size_y;
    const int r = r0 + i;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[static_cast<long long>(r) * cols + c];
  }
  __syncthreads();
  // Write the tile out row by row of `out`: consecutive threads write consecutive addresses.
  const int t = threadIdx.y * block_size_x + threadIdx.x;
  for (int e = t; e < block_size_x * TILE_ROWS; e += block_size_x * block_size_y) {
    const int j = e / TILE_ROWS;  // column of the tile = row of out
    const int i = e % TILE_ROWS;  // row of the tile = column of out
    if (c0 + j < cols && r0 + i < rows)
      out[static_cast<long long>(c0 + j) * rows + (r0 + i)] = tile[i][j];
  }
#else
#pragma unroll
  for (int k = 0; k < tile_size_y; ++k) {
    const int r = r0 + threadIdx.y + k * block_size_y;
    if (r < rows && c < cols)
      out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
  }
#endif
}
