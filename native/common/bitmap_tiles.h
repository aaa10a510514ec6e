#ifndef SPARSE_COMMON_BITMAP_TILES_H_
#define SPARSE_COMMON_BITMAP_TILES_H_
// The bitmap format of the bitmap tensor-core SpMM (cuda/spmm/spmm_bitmap_kernel.cuh), built
// once per matrix from a CSR matrix with 16-bit values (f16 or bf16). Plain C++, no CUDA.
//
// The M x K matrix is cut into strips of 16 rows and each strip into k-tiles of 16 columns:
// tile (s, t) is the 16 x 16 block rows [16 s, 16 s + 16) x columns [16 t, 16 t + 16), the
// A operand of one mma.m16n8k16. Its four 8 x 8 blocks are numbered in the order of the A
// fragment registers: q = 0 rows 0-7 / columns 0-7, 1 rows 8-15 / columns 0-7, 2 rows 0-7 /
// columns 8-15, 3 rows 8-15 / columns 8-15. Block q has a 64-bit bitmap, bit r * 8 + c for
// its element (r, c); lane l of the warp owns bits 2 l and 2 l + 1 (its two A-fragment
// elements), so lanes 0-15 read the low 32 bits and lanes 16-31 the high 32 bits.
//
// A tile is stored from a 16-byte boundary as
//   words[0..3]  the low 32 bits of blocks 0..3,
//   words[4..7]  the high 32 bits of blocks 0..3 (lanes 16-31 read words 4..7 at +16 bytes),
//   bytes[32..39] the start of each half-block's values within the tile: [lo0 lo1 lo2 lo3 hi0
//                hi1 hi2 hi3] (at most 224: fits a byte),
//   then the tile's values as 16-bit words, block by block, each block's in bit order,
// padded with zeros to a multiple of 16 bytes. offsets[s * ktiles + t] is where tile (s, t)
// starts, in 16-byte units; offsets[strips * ktiles] the total. Rows past M and columns past
// K have no bits.
//
// Bytes per element: 40 / 256 (bitmaps and starts) + 2 (1 - sparsity) + the padding (about
// 7 bytes per tile) + 4 / 256 (offsets): 0.21 + 2 (1 - s).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparse {

constexpr int kBitmapTileRows = 16;
constexpr int kBitmapTileCols = 16;
constexpr int kBitmapHeaderBytes = 40;
// The largest tile: header + 256 values, rounded up to 16 bytes.
constexpr int kBitmapMaxTileBytes = kBitmapHeaderBytes + 2 * kBitmapTileRows * kBitmapTileCols + 8;

struct BitmapTiles {
  int m = 0, k = 0;
  int strips = 0, ktiles = 0;
  std::vector<uint32_t> offsets;  // strips * ktiles + 1, in 16-byte units
  std::vector<uint32_t> data;     // 4 * offsets.back() words
  size_t Bytes() const { return 4 * (offsets.size() + data.size()); }
};

// Builds the tiles from a host CSR matrix: row_offsets (m + 1), column_indices (nnz, each in
// [0, k), no repeats within a row), values16 (nnz raw 16-bit words, f16 or bf16 bits).
// Returns "" or an error.
std::string BuildBitmapTiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                             BitmapTiles* out);

// The CSR of the tiles' matrix (rows in order, columns ascending): for tests and decoding.
void BitmapTilesToCsr(const BitmapTiles& t, std::vector<int>* row_offsets, std::vector<int>* column_indices,
                      std::vector<uint16_t>* values16);

}  // namespace sparse
#endif  // SPARSE_COMMON_BITMAP_TILES_H_
