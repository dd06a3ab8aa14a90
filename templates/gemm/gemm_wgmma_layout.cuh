// Shared-memory layout of the gemm_wgmma operand tiles and the wgmma matrix descriptors that
// describe them: pure index arithmetic, usable on the host (CPU unit tests replay the tensor
// core's address generation against the loader's placement) and on the device.
//
// Layout ("K-major, 128-byte swizzle"): an operand tile of ROWS x BK 16-bit elements (rows are
// M for A, N for B; k contiguous) is stored as BK/64 "k atoms" one after the other, each
// ROWS x 64 elements = ROWS rows of 128 bytes. Within a k atom, row r starts at byte r * 128
// and its eight 16-byte chunks (8 elements each) are permuted: chunk c is stored at chunk
// position c ^ (r % 8). Eight rows (1024 bytes) form one swizzle pattern; every k atom and
// every stage starts on a 1024-byte boundary, so that the pattern's phase is the row index.
//
// Why this is what wgmma reads: with 128-byte swizzle the tensor core forms the plain
// (unswizzled) address start + (r / 8) * SBO + (r % 8) * 128 + byte_in_row, then XORs address
// bits [4:6] with bits [7:9]. With start 1024-aligned plus a k offset of 32 * s bytes (k step
// s of 16 elements inside the atom, s = 0..3), bits [7:9] are r % 8 and bits [4:6] the chunk
// index k / 8, so the XOR lands exactly on the chunk position the loader wrote. Hence:
// SBO = 1024 (next group of 8 rows), LBO unused for swizzled K-major layouts (encoded as 1),
// base offset 0, swizzle mode 1 (128B) in bits 62-63.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KTG_HD __host__ __device__
#else
#define KTG_HD
#endif

namespace ktg {

/// Elements (16-bit) per k atom row: one 128-byte swizzle row.
constexpr int kWgmmaAtomK = 64;
/// Bytes of one swizzle pattern (8 rows of 128 bytes): the alignment every tile needs.
constexpr int kWgmmaSwizzleBytes = 1024;

/// Byte offset of element (row, k) inside a ROWS x BK tile of 16-bit elements (K-major,
/// 128-byte swizzle, k atoms of 64 consecutive).
KTG_HD constexpr unsigned wgmma_tile_offset(int rows, int row, int k) {
  return static_cast<unsigned>((k / kWgmmaAtomK) * rows * 128 + row * 128 +
                               ((((k % kWgmmaAtomK) / 8) ^ (row % 8)) * 16) + (k % 8) * 2);
}

/// Byte offset of the 16-byte chunk `chunk` (k / 8) of row `row`: where a loader copies it.
KTG_HD constexpr unsigned wgmma_chunk_offset(int rows, int row, int chunk) {
  return wgmma_tile_offset(rows, row, chunk * 8);
}

/// The constant part of a K-major 128-byte-swizzle descriptor: LBO field 1 (unused), SBO
/// 1024 bytes, base offset 0, swizzle mode 1 (bits 62-63).
KTG_HD constexpr unsigned long long wgmma_desc_base() {
  return (1ull << 16) | (static_cast<unsigned long long>(1024 >> 4) << 32) | (1ull << 62);
}

/// Descriptor of a K-major 128B-swizzled operand whose (row 0, k 0) byte is at shared-memory
/// address `addr` (1024-aligned, plus 32 bytes per 16-element k step inside a k atom).
KTG_HD constexpr unsigned long long wgmma_desc(unsigned addr) {
  return wgmma_desc_base() | ((addr & 0x3FFFF) >> 4);
}

/// Shared-memory address of the descriptor's operand for the 16-element k step `k_step` of
/// a ROWS-row tile starting at `tile` (1024-aligned): row `row0` (multiple of 8) onwards.
KTG_HD constexpr unsigned wgmma_operand_addr(unsigned tile, int rows, int row0, int k_step) {
  return tile + static_cast<unsigned>((k_step / 4) * rows * 128 + row0 * 128 + (k_step % 4) * 32);
}

/// The byte the tensor core reads for element (r, kk) of the 64 x 16 (or N x 16) operand of a
/// descriptor (r < rows of the operand, kk < 16), per the 128B-swizzle rule above: a model of
/// the hardware for host tests, never called on the device.
KTG_HD constexpr unsigned wgmma_model_address(unsigned long long desc, int r, int kk) {
  const unsigned start = static_cast<unsigned>(desc & 0x3FFF) << 4;
  const unsigned sbo = static_cast<unsigned>((desc >> 32) & 0x3FFF) << 4;
  const unsigned plain = start + static_cast<unsigned>(r / 8) * sbo +
                         static_cast<unsigned>(r % 8) * 128 + static_cast<unsigned>(kk) * 2;
  return plain ^ (((plain >> 7) & 7u) << 4);
}

}  // namespace ktg
