// The bitmap format's builder and decoder (see bitmap_tiles.h).
#include "common/bitmap_tiles.h"

#include <algorithm>
#include <cstring>

namespace sparse {
namespace {

// Block q of a tile and the bit of element (r, c) of the 16 x 16 tile.
inline int BlockOf(int r, int c) { return (c >> 3) * 2 + (r >> 3); }
inline int BitOf(int r, int c) { return (r & 7) * 8 + (c & 7); }

}  // namespace

std::string BuildBitmapTiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                             BitmapTiles* out) {
  if (m < 0 || k < 0) return "bad dimensions";
  BitmapTiles& t = *out;
  t = BitmapTiles();
  t.m = m, t.k = k;
  t.strips = (m + kBitmapTileRows - 1) / kBitmapTileRows;
  t.ktiles = (k + kBitmapTileCols - 1) / kBitmapTileCols;
  const size_t tiles = static_cast<size_t>(t.strips) * t.ktiles;
  t.offsets.assign(tiles + 1, 0);
  std::vector<uint64_t> bits(static_cast<size_t>(t.ktiles) * 4);
  std::vector<uint16_t> vals(static_cast<size_t>(t.ktiles) * 256);
  uint64_t units = 0;
  for (int s = 0; s < t.strips; ++s) {
    std::fill(bits.begin(), bits.end(), 0);
    // The strip's elements: bits first (columns may come in any order within a row).
    for (int r = 0; r < kBitmapTileRows; ++r) {
      const int row = s * kBitmapTileRows + r;
      if (row >= m) break;
      for (int i = row_offsets[row]; i < row_offsets[row + 1]; ++i) {
        const int col = column_indices[i];
        if (col < 0 || col >= k) return "column index " + std::to_string(col) + " out of range in row " + std::to_string(row);
        const int kt = col >> 4, c = col & 15;
        uint64_t& b = bits[static_cast<size_t>(kt) * 4 + BlockOf(r, c)];
        const uint64_t bit = 1ull << BitOf(r, c);
        if (b & bit) return "repeated column " + std::to_string(col) + " in row " + std::to_string(row);
        b |= bit;
        vals[static_cast<size_t>(kt) * 256 + BlockOf(r, c) * 64 + BitOf(r, c)] = values16[i];
      }
    }
    for (int kt = 0; kt < t.ktiles; ++kt) {
      const size_t tile = static_cast<size_t>(s) * t.ktiles + kt;
      t.offsets[tile] = static_cast<uint32_t>(units);
      const size_t base = t.data.size();
      int count = 0;
      for (int q = 0; q < 4; ++q) count += __builtin_popcountll(bits[kt * 4 + q]);
      const int bytes = (kBitmapHeaderBytes + 2 * count + 15) & ~15;
      t.data.resize(base + bytes / 4, 0);
      uint32_t* w = t.data.data() + base;
      uint8_t* starts = reinterpret_cast<uint8_t*>(w + 8);
      uint16_t* v = reinterpret_cast<uint16_t*>(w + 10);
      int at = 0;
      for (int q = 0; q < 4; ++q) {
        const uint64_t b = bits[kt * 4 + q];
        w[q] = static_cast<uint32_t>(b);
        w[4 + q] = static_cast<uint32_t>(b >> 32);
        starts[q] = static_cast<uint8_t>(at);
        starts[4 + q] = static_cast<uint8_t>(at + __builtin_popcount(static_cast<uint32_t>(b)));
        for (int bit = 0; bit < 64; ++bit)
          if (b >> bit & 1) v[at++] = vals[static_cast<size_t>(kt) * 256 + q * 64 + bit];
      }
      units += bytes / 16;
      if (units > 0xffffffffull) return "matrix too large for the bitmap format (32-bit offsets)";
    }
  }
  t.offsets[tiles] = static_cast<uint32_t>(units);
  return "";
}

void BitmapTilesToCsr(const BitmapTiles& t, std::vector<int>* row_offsets, std::vector<int>* column_indices,
                      std::vector<uint16_t>* values16) {
  row_offsets->assign(static_cast<size_t>(t.m) + 1, 0);
  column_indices->clear();
  values16->clear();
  for (int row = 0; row < t.m; ++row) {
    const int s = row / kBitmapTileRows, r = row % kBitmapTileRows;
    for (int kt = 0; kt < t.ktiles; ++kt) {
      const uint32_t* w = t.data.data() + 4 * static_cast<size_t>(t.offsets[static_cast<size_t>(s) * t.ktiles + kt]);
      const uint16_t* v = reinterpret_cast<const uint16_t*>(w + 10);
      for (int c = 0; c < kBitmapTileCols; ++c) {
        const int q = BlockOf(r, c), bit = BitOf(r, c);
        const uint64_t b = static_cast<uint64_t>(w[q]) | static_cast<uint64_t>(w[4 + q]) << 32;
        if (!(b >> bit & 1)) continue;
        int at = 0;
        for (int p = 0; p < q; ++p) at += __builtin_popcount(w[p]) + __builtin_popcount(w[4 + p]);
        at += __builtin_popcountll(b & ((1ull << bit) - 1));
        column_indices->push_back(kt * kBitmapTileCols + c);
        values16->push_back(v[at]);
      }
    }
    (*row_offsets)[row + 1] = static_cast<int>(column_indices->size());
  }
}

}  // namespace sparse
