#ifndef SPARSE_COMMON_SPARSE24_H_
#define SPARSE_COMMON_SPARSE24_H_
// The 2:4 format of the sparse-tensor-core SpMM (cuda/spmm/spmm_24_kernel.cuh): at most two
// nonzeros in every group of four consecutive columns of a row (columns 4 j .. 4 j + 3), the
// pattern mma.sp runs at twice the dense rate. Plain C++, no CUDA.
//
// The M x K matrix is cut into strips of 16 rows and k-steps of 32 columns (K is padded to
// a multiple of 32 with zero groups): tile (s, j) is the A operand of one
// mma.sp.m16n8k32, 16 x 32 compressed to 16 x 16 values (the two kept elements of each group
// of four, in column order, zeros where a group has fewer than two nonzeros) plus 4 bits of
// metadata per group (the two kept column indices within the group, 2 bits each, ascending).
//   values: tile (s, j) at (s * ksteps + j) * 256 16-bit words, in the order of the A
//           fragment registers: lane l (g = l / 4, t = l % 4) owns 8 words (16 bytes) at
//           8 l: compressed (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1), (g, 2t+8),
//           (g, 2t+9), (g+8, 2t+8), (g+8, 2t+9);
//   meta:   tile (s, j) at (s * ksteps + j) * 16 32-bit words; word 2 g + h (h = 0, 1) is
//           what lane 4 g + h passes to mma.sp (sparsity selector 0): bits 4 c .. 4 c + 3
//           hold the indices of group 4 h + c of row g (c = 0..3), bits 16 + 4 c .. those of
//           row g + 8.
// Bytes per element: 1 (values) + 0.125 (metadata) = 1.125, against 2 for dense f16.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparse {

constexpr int kSp24TileRows = 16;
constexpr int kSp24TileCols = 32;

struct Sp24Tiles {
  int m = 0, k = 0;
  int strips = 0, ksteps = 0;
  std::vector<uint16_t> values;  // strips * ksteps * 256
  std::vector<uint32_t> meta;    // strips * ksteps * 16
  size_t Bytes() const { return 2 * values.size() + 4 * meta.size(); }
};

// Builds the 2:4 tiles from a host CSR matrix: row_offsets (m + 1), column_indices (nnz, in
// [0, k), no repeats in a row), values16 (nnz raw 16-bit words). Stored zeros (+0 and -0)
// count as zeros. Returns "" or an error; a matrix that is not 2:4 gets
//   "not 2:4: row R, columns C..C+3 hold N nonzeros (at most 2)"
// naming the first such group in row-major order.
std::string BuildSp24Tiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                           Sp24Tiles* out);

// Whether a host CSR is 2:4: at most two nonzeros (stored entries whose 16-bit value is not
// +-0; every entry when values16 is null) in each group of four columns of every row.
bool IsTwoFour(int m, const int* row_offsets, const int* column_indices, const uint16_t* values16);

// One tile of the staged form: its 512 bytes of values, then its 64 bytes of metadata.
constexpr int kSp24StagedTileBytes = 512 + 64;

// The tiles staged for the streaming engine (cuda/spmm/stream_engine.cuh, TwoFourTiled and
// TwoFourWg): the matrix cut into row blocks of `strips` strips and K stages of `steps`
// k-steps, ceil(strips_total / strips) x ceil(ksteps / steps) stages; stage (rb, ks) is one
// contiguous run, at (rb * kstages + ks) * strips * steps tiles, holding tile (strip
// rb * strips + q, k-step ks * steps + kt) at (q * steps + kt) tiles. Tiles past the matrix
// are zero with metadata 0x44444444 (indices 0 and 1 in every group).
std::vector<uint8_t> StageSp24Tiles(const Sp24Tiles& t, int strips, int steps);

// The 2:4 form of the GEMM engine's `_ss` kernels, whose wgmma read A from shared memory
// (cuda/gemm/gemm_engine.cuh): the compressed values as a plain row-major matrix of m rows and
// 16 ksteps columns (row r, column 16 j + c: compressed column c of k-step j, two per group of
// four in column order, as in the tiles), for a tensor map to cut into boxes.
std::vector<uint16_t> Sp24CompressedRows(const Sp24Tiles& t);

// ... and its metadata by K stage: K stage ks (`steps` k-steps) of strip s is
// ((ks * padded_strips + s) * steps + kt) * 16 words, the tiles' words (word 2 g + h as
// above); the strips are padded to a multiple of `strip_multiple` (so every tile height that
// divides it reads whole runs), padding and k-steps past the matrix with metadata 0x44444444.
std::vector<uint32_t> StageSp24Meta(const Sp24Tiles& t, int strip_multiple, int steps);

// The same form as the `_ss` kernels read it since v61: one contiguous run of kSp24RunBytes per
// unit of 128 rows (8 strips) and K stage of 2 k-steps (64 columns of K, 32 compressed), run
// (u, ks) at (u * kstages + ks) * kSp24RunBytes, kstages = ceil(ksteps / 2), so that a stage
// comes in two bulk copies per unit. In a run: row r's 32 compressed values (Sp24CompressedRows'
// columns 32 ks..) at 64 r, their 16-byte chunk c at 16 (c ^ ((r >> 1) & 3)) (the 64-byte
// swizzle wgmma's descriptor reads), then the unit's 8 strips' metadata, 128 bytes each
// (StageSp24Meta's 2 k-steps of 16 words). Units: ceil(m / 128) padded to a multiple of
// `unit_multiple` (a tile of 128 u rows reads u units, so the addon pads to its tile's u and the
// workbench to 6 for every height); rows and columns past the matrix zero, their metadata
// 0x44444444. Empty when unit_multiple is below 1.
constexpr int kSp24RunRows = 128;
constexpr int kSp24RunBytes = kSp24RunRows * 64 + kSp24RunRows * 8;
std::vector<uint8_t> StageSp24Runs(const Sp24Tiles& t, int unit_multiple);

// The CSR of the tiles' nonzeros (rows in order, columns ascending; zeros left out).
void Sp24TilesToCsr(const Sp24Tiles& t, std::vector<int>* row_offsets, std::vector<int>* column_indices,
                    std::vector<uint16_t>* values16);

}  // namespace sparse
#endif  // SPARSE_COMMON_SPARSE24_H_
