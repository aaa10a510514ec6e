#ifndef SPARSE_COMMON_UNSTRUCTURED_STREAM_H_
#define SPARSE_COMMON_UNSTRUCTURED_STREAM_H_
// The scatter-decoded unstructured stream of the streaming engine (issue 24; device side
// cuda/spmm/stream_unstructured.cuh), built once from a CSR matrix with 16-bit values (f16 or
// bf16) on the host. Plain C++, no CUDA.
//
// The matrix (M x K) is cut as the engine walks it: row blocks of `strips` 16-row strips, K
// stages of `kks` columns (a multiple of 16), stage (rb, ks) the engine's item rb kstages + ks.
// Each stage is one contiguous run, 16-byte aligned, at offsets[rb kstages + ks] x 16 bytes of
// `data` (offsets has one more entry: the end), so the producer moves it with a few bulk
// copies. A run:
//   header: strips + 1 uint16 word starts (strip q's words are [start[q], start[q + 1])),
//           padded to a multiple of 16 bytes;
//   words:  one uint32 per nonzero, byte offset << 16 | value bits, padded with zero words to
//           a multiple of 16 bytes.
// The byte offset is where the value goes in the consumer warp's shared-memory image of the
// strip's kks / 16 dense 16 x 16 tiles: tile t at 512 t, inside it the four 8 x 8 blocks in the
// order of mma.m16n8k16's A registers (and of ldmatrix.x4: lane i addresses 16 i), each 128
// contiguous bytes:
//   offset = 512 t + 2 (((c / 8) 2 + r / 8) 64 + (r % 8) 8 + c % 8)
// for row r (0..15) of the strip and column c (0..15) of the tile. The image's shared-memory
// bank is (r % 8) 4 + (c % 8) / 2 whatever the tile, and a warp stores words i .. i + 31 of a
// strip in one instruction (lane j the word i + j), so each strip's words are ordered in
// groups of 32 with distinct banks where the counts allow (UnstStats counts what is left).
//
// Bytes: 4 per nonzero, plus per stage the header and under 16 bytes of padding, plus 4 per
// stage of offsets. Zero values (+0 and -0) are left out: the image is zero-filled.
//
// A second layout (UnstLayout::kWg64, for the warpgroup decode UnstructuredWg) addresses images
// of 64 rows (a warpgroup's four strips) x 64 columns (a k-block) laid out as wgmma reads A
// from shared memory through a K-major descriptor with the 128-byte swizzle (the layout a
// 128-byte-swizzled tensor copy writes): row r at 128 r, 16-byte chunk c of the row at chunk
// c ^ (r % 8), so
//   offset = 128 r + 16 ((c / 8) ^ (r % 8)) + 2 (c % 8)      (r, c in 0..63, offset < 8192).
// A run's header then holds one word start per segment (unit u of 64 rows, k-block kb), in
// the order u (kks / 64) + kb, plus the end; the words of a segment are ordered by bank in
// groups of 32 from the segment's start, as the strips' are (a warp of the warpgroup stores
// 32 consecutive words). Needs strips % 4 == 0 and kks % 64 == 0.
//
// A third layout (UnstLayout::kBitmapFrag, for UnstructuredBitmap) has no offsets at all: the
// consumers decode each 16 x 16 tile straight into the registers of the mma / wgmma A fragment
// (lane l = 4 g + t holds rows g and g + 8, columns 2 t, 2 t + 1, 2 t + 8, 2 t + 9 of its warp's
// strip; UnstBitmapLane / UnstBitmapSlot). A run is
//   tiles:  per strip q and tile j (the stage's kks / 16 tiles of 16 columns), at
//           (q kks / 16 + j) x 48 bytes: a 32-byte bitmap whose byte l is lane l's eight slots
//           (bit i: slot i; slots 2 i, 2 i + 1 are the low and high halves of A register i), then
//           eight uint16 counts: the values of the stage before lane 4 p's, for p = 0..7;
//   values: from strips (kks / 16) 48 bytes on, one uint16 per nonzero in the order strip, tile,
//           lane, slot; padded with zeros to a multiple of 16 bytes.
// A lane finds its first value at count[l / 4] + popc(the bits of the lanes before it in its
// 32-bit bitmap word). Strips past M and columns past K are empty tiles (zero bitmaps). Bytes:
// 2 per nonzero and 0.1875 per weight. Needs strips kks <= 4096 (counts are 16 bits).
//
// A fifth layout (UnstLayout::kRows, for a decode on the CUDA cores whose work follows the
// nonzeros: UnstructuredRows) keeps each row's nonzeros in column order: the header holds one
// uint16 word start per row of the row block (strips 16 segments, rows past M empty), and each
// word is the column within the stage (0 .. kks - 1) << 16 | the value. Bytes: 4 per nonzero
// and, per stage, 2 (strips 16 + 1) of header rounded to 16 (0.017 a weight at 8 strips of
// 128 columns).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sparse {

// The image offset (bytes) of row r, column c (both 0..15) of tile t of a strip.
inline int UnstImageOffset(int t, int r, int c) {
  return 512 * t + 2 * ((((c >> 3) * 2 + (r >> 3)) << 6) | ((r & 7) << 3) | (c & 7));
}
// The offset of row r, column c (both 0..63) in a 64 x 64 image of the kWg64 layout.
inline int UnstWgOffset(int r, int c) { return 128 * r + ((((c >> 3) ^ (r & 7)) << 4) | ((c & 7) << 1)); }
// The shared-memory bank of an image offset (4-byte banks, the image 128-byte aligned).
inline int UnstBank(int offset) { return (offset >> 2) & 31; }

// Which images a stage's words address (see above).
enum class UnstLayout : int {
  kStrip16 = 0,  // per strip, kks / 16 tiles in mma.m16n8k16 fragment order (UnstImageOffset)
  kWg64 = 1,     // per 64-row unit and 64-column k-block, wgmma's 128-byte swizzle (UnstWgOffset)
  kBitmapFrag = 2,  // no offsets: per strip and 16-column tile a bitmap in A-fragment order and
                    // the values lane by lane (UnstructuredBitmap decodes into registers)
  kPairFrag = 3,    // as kBitmapFrag a bit per A register (two adjacent columns of a row) and
                    // its two halves stored whole where either is nonzero (UnstructuredPairs)
  kRows = 4,        // per row its nonzeros in column order, column << 16 | value (UnstructuredRows)
};

// kBitmapFrag: the lane and slot of row r, column c (both 0..15) of a tile.
inline int UnstBitmapLane(int r, int c) { return 4 * (r & 7) + ((c & 7) >> 1); }
inline int UnstBitmapSlot(int r, int c) { return 4 * (c >> 3) + 2 * (r >> 3) + (c & 1); }
// kBitmapFrag: bytes of one tile's bitmap and counts, and of a stage's tiles.
constexpr int kUnstBitmapTileBytes = 48;
inline int UnstBitmapFixedBytes(int strips, int kks) { return strips * (kks / 16) * kUnstBitmapTileBytes; }

// kPairFrag: per strip and 16 x 16 tile a 32-byte record of eight 32-bit words, one per lane
// quad p (lanes 4 p .. 4 p + 3): bits 4 t + i (t = 0..3, i = 0..3) say whether lane 4 p + t's
// A register i (slots 2 i, 2 i + 1 of kBitmapFrag) is stored; bits 16-31 count the stage's
// stored registers before the quad. The stored registers follow the records, one 32-bit word
// each (slot 2 i in the low half, 2 i + 1 in the high half, +0 where that one is zero), in the
// order strip, tile, lane, register. Bytes: 4 per stored register and 0.125 per weight; at
// density d a register is stored with probability 1 - (1 - d)^2.
// A tile may be stored whole (BuildUnstStream's whole_min): all its 128 registers, zeros
// included, from a register index that is a multiple of 4 (up to 3 registers of padding before
// it, uncounted), so every quad's word has its 16 bits set and lane l's four registers are the
// 16 aligned bytes at (the tile's first register + 4 l) x 4: one 16-byte load a lane (the GEMM
// engine's kUnWhole decodes). A tile whose words all have 16 bits set and whose first count is a
// multiple of 4 is whole by definition; a decoder that knows nothing of it reads it as any other
// (the counts place every register; a stored +0 adds nothing). Bytes: 512 a whole tile.
constexpr int kUnstPairTileBytes = 32;
inline int UnstPairFixedBytes(int strips, int kks) { return strips * (kks / 16) * kUnstPairTileBytes; }

// Header bytes of a stage of `strips` strips.
inline int UnstHeaderBytes(int strips) { return (2 * (strips + 1) + 15) / 16 * 16; }
// Segments (word starts less one) of a stage, and its header bytes, for either layout.
// (kBitmapFrag: no segments; its header is the tiles' bitmaps and counts.)
inline int UnstSegments(UnstLayout layout, int strips, int kks) {
  return layout == UnstLayout::kWg64                                                  ? strips / 4 * (kks / 64)
         : layout == UnstLayout::kBitmapFrag || layout == UnstLayout::kPairFrag ? 0
         : layout == UnstLayout::kRows                                          ? strips * 16
                                                                                : strips;
}
inline int UnstHeaderBytes(UnstLayout layout, int strips, int kks) {
  if (layout == UnstLayout::kBitmapFrag) return UnstBitmapFixedBytes(strips, kks);
  if (layout == UnstLayout::kPairFrag) return UnstPairFixedBytes(strips, kks);
  return (2 * (UnstSegments(layout, strips, kks) + 1) + 15) / 16 * 16;
}

// How well the word order spreads a warp's stores over the banks: stores is the number of
// 32-word store instructions the consumers issue, wavefronts the shared-memory passes they
// take (the most words of one instruction in one bank, summed; == stores when conflict-free).
struct UnstStats {
  long long nnz = 0;
  long long stores = 0;
  long long wavefronts = 0;
  int max_stage_words = 0;  // the densest stage's nonzeros (kPairFrag: stored registers)
  long long whole_tiles = 0;    // kPairFrag: tiles that are whole (whole_min's, and full ones that
                                // start at a multiple of 4 by chance): those read whole
  long long whole_padding = 0;  // kPairFrag: registers of padding that align the whole tiles
  // (kBitmapFrag: stores and wavefronts stay 0: nothing is scattered)
};

struct UnstStream {
  int m = 0, k = 0;
  int strips = 0, kks = 0;  // the layout: strips per row block, columns per stage
  UnstLayout layout = UnstLayout::kStrip16;
  int row_blocks = 0, kstages = 0;
  std::vector<uint8_t> data;       // the stages' runs
  std::vector<uint32_t> offsets;   // row_blocks kstages + 1, in 16-byte units
  UnstStats stats;
  size_t Bytes() const { return data.size() + 4 * offsets.size(); }
};

// Builds the stream from a host CSR matrix: row_offsets (m + 1), column_indices (nnz, each in
// [0, k), any order within a row, no repeats), values16 (nnz raw 16-bit words). `strips` and
// `kks` are the engine variant's row block (in strips) and stage width (a multiple of 16, at
// most 2048: offsets are 16 bits). `max_stage_words` (0: none) is the ring's capacity: a stage
// with more nonzeros is refused, naming the densest stage (a variant with room for it is
// needed). `layout`: which images the words address (kWg64: strips % 4 == 0, kks % 64 == 0;
// kBitmapFrag: strips kks <= 4096, and its capacity counts values). `whole_min` (kPairFrag only;
// 0: none, else 1..128): a tile with at least that many registers to store is stored whole (see
// kPairFrag above). `threads`: the rows' checks and the bitmap and pair layouts' row blocks run
// on that many threads (at most one a row or row block; 0: the hardware's, fewer on small
// matrices); the stream is the same whatever their number.
// Returns "" or the error: the first row (in row order) with a column out of range, else with a
// repeated column.
std::string BuildUnstStream(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                            int strips, int kks, int max_stage_words, UnstStream* out,
                            UnstLayout layout = UnstLayout::kStrip16, int whole_min = 0, int threads = 0);

// The stream back to a dense row-major M x K matrix of 16-bit words (the left-out zeros as +0).
// Returns "" or what is malformed.
std::string UnstStreamToDense(const UnstStream& s, std::vector<uint16_t>* dense);

}  // namespace sparse
#endif  // SPARSE_COMMON_UNSTRUCTURED_STREAM_H_
