#ifndef SPARSE_COMMON_TC_TILES_H_
#define SPARSE_COMMON_TC_TILES_H_
// The tiled format of the tensor-core SpMM (cuda/spmm/spmm_tc_kernel.cuh), built once from a
// CSR matrix with 16-bit values (f16 or bf16) on the host. Plain C++, no CUDA: the CPU-only
// build has it too (and the tests check it there).
//
// The matrix (M x K) is cut into tiles of kTcTileRows x kTcTileCols (16 x 32): "strips" of 16
// rows, each cut into ceil(K / 32) k-tiles. Tile (s, t) is number s * ktiles + t. Its
// nonzeros are a list of 32-bit entries, value bits << 16 | position, where the position is
// where the value goes in the kernel's shared-memory image of the dense tile: four 8 x 8
// blocks per 16-column half, each 128 contiguous bytes, in the order the operand registers
// of mma.m16n8k16 (and ldmatrix.x4) expect:
//   position = ((h * 4 + (c / 8) * 2 + r / 8) * 64) + (r % 8) * 8 + c % 8
// with r the row in the strip (0..15), h = column / 16 in the tile (0 or 1) and c = column % 16.
// Each tile's list is padded to a multiple of 4 entries (16 bytes, one vector load) with
// kTcDummyEntry, whose position (512) is a scratch slot past the tile: the kernel stores
// those zeros where nobody reads. offsets[s * ktiles + t] is the first entry of tile (s, t)
// and offsets[tiles] the total; the order of entries inside a tile does not matter (each
// position occurs once).
//
// Bytes: 4 per stored entry, explicit zeros included (as CSR with 16-bit values and 16-bit
// column indices), plus the padding (under 4 entries per tile) and 4 per tile of offsets, and
// one more (src/sparse/memory.ts sizes them for `sparse bench`).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparse {

constexpr int kTcTileRows = 16;
constexpr int kTcTileCols = 32;
constexpr int kTcTileElems = kTcTileRows * kTcTileCols;  // 512
constexpr uint32_t kTcDummyEntry = static_cast<uint32_t>(kTcTileElems);  // value 0 at the scratch slot

inline int TcPosition(int r, int col_in_tile) {
  const int h = col_in_tile >> 4, c = col_in_tile & 15;
  return ((h * 4 + (c >> 3) * 2 + (r >> 3)) << 6) | ((r & 7) << 3) | (c & 7);
}

struct TcTiles {
  int m = 0, k = 0;
  int strips = 0, ktiles = 0;
  std::vector<uint32_t> offsets;  // strips * ktiles + 1
  std::vector<uint32_t> entries;  // offsets.back(), a multiple of 4
  size_t Bytes() const { return 4 * (offsets.size() + entries.size()); }
};

// Builds the tiles from a host CSR matrix: row_offsets (m + 1), column_indices (nnz, int32,
// each in [0, k)), values16 (nnz raw 16-bit words, f16 or bf16 bits). Returns "" or an
// error (bad dimensions, a column out of range, a repeated column in a row, too many
// entries for 32-bit offsets). The CSR's row order is kept (no row swizzle: every strip
// covers 16 consecutive rows).
std::string BuildTcTiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                         TcTiles* out);

// The tensor-core SDDMM (cuda/sddmm/sddmm_tc_kernel.cuh) computes the product in chunks of
// kTcSddmmChunk mask columns and then picks the nonzeros of each row that fall in the chunk.
// Their CSR range is given by the chunk starts, built once per mask: starts[r * (chunks + 1)
// + j] = the first CSR index of row r with column >= j * kTcSddmmChunk, and
// starts[r * (chunks + 1) + chunks] = the row's end. 4 bytes per row per chunk.
constexpr int kTcSddmmChunk = 256;
// Returns "" or an error (a column out of range or not ascending in its row; the CSR
// must be sorted, as `sparse` writes it).
std::string BuildSddmmChunkStarts(int m, int n, const int* row_offsets, const int* column_indices,
                                  std::vector<int>* starts);

}  // namespace sparse
#endif  // SPARSE_COMMON_TC_TILES_H_
