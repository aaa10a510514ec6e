// BuildTcTiles: CSR -> the tensor-core SpMM's tiles (see tc_tiles.h). Two passes over the
// nonzeros: count per tile, then place each entry at its tile's cursor.
#include "common/tc_tiles.h"

#include <cstring>

namespace sparse {

std::string BuildTcTiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                         TcTiles* out) {
  if (m < 0 || k < 0) return "negative dimensions";
  TcTiles t;
  t.m = m, t.k = k;
  t.strips = (m + kTcTileRows - 1) / kTcTileRows;
  t.ktiles = (k + kTcTileCols - 1) / kTcTileCols;
  const size_t tiles = static_cast<size_t>(t.strips) * t.ktiles;
  std::vector<uint64_t> count(tiles + 1, 0);
  // Pass 1: count, and check the columns (each row's columns in range and not repeated; the
  // kernel's tile image holds one value per position).
  for (int r = 0; r < m; ++r) {
    const size_t base = static_cast<size_t>(r / kTcTileRows) * t.ktiles;
    for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i) {
      const int c = column_indices[i];
      if (c < 0 || c >= k) return "column index " + std::to_string(c) + " out of range in row " + std::to_string(r);
      ++count[base + c / kTcTileCols];
    }
  }
  uint64_t total = 0;
  for (size_t i = 0; i < tiles; ++i) {
    const uint64_t n = (count[i] + 3) & ~uint64_t{3};
    count[i] = total;
    total += n;
  }
  count[tiles] = total;
  if (total > 0xFFFFFFF0ull) return "too many nonzeros for the tensor-core tiles (32-bit offsets)";
  t.offsets.resize(tiles + 1);
  for (size_t i = 0; i <= tiles; ++i) t.offsets[i] = static_cast<uint32_t>(count[i]);
  t.entries.assign(total, kTcDummyEntry);
  // Pass 2: place. `count` becomes each tile's cursor. A repeated column would land twice
  // on one position: detect it with a per-row marker over the row's tiles.
  std::vector<int> seen(k > 0 ? k : 1, -1);
  for (int r = 0; r < m; ++r) {
    const size_t base = static_cast<size_t>(r / kTcTileRows) * t.ktiles;
    const int rr = r % kTcTileRows;
    for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i) {
      const int c = column_indices[i];
      if (seen[c] == r) return "repeated column " + std::to_string(c) + " in row " + std::to_string(r);
      seen[c] = r;
      const size_t tile = base + c / kTcTileCols;
      const uint32_t pos = static_cast<uint32_t>(TcPosition(rr, c % kTcTileCols));
      t.entries[count[tile]++] = (static_cast<uint32_t>(values16[i]) << 16) | pos;
    }
  }
  *out = std::move(t);
  return "";
}

std::string BuildSddmmChunkStarts(int m, int n, const int* row_offsets, const int* column_indices,
                                  std::vector<int>* starts) {
  if (m < 0 || n < 0) return "negative dimensions";
  const int chunks = (n + kTcSddmmChunk - 1) / kTcSddmmChunk;
  std::vector<int> out(static_cast<size_t>(m) * (chunks + 1));
  for (int r = 0; r < m; ++r) {
    int* row = out.data() + static_cast<size_t>(r) * (chunks + 1);
    int j = 0, prev = -1;
    for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i) {
      const int c = column_indices[i];
      if (c < 0 || c >= n) return "column index " + std::to_string(c) + " out of range in row " + std::to_string(r);
      if (c <= prev) return "columns not ascending in row " + std::to_string(r);
      prev = c;
      while (j <= c / kTcSddmmChunk) row[j++] = i;
    }
    while (j <= chunks) row[j++] = row_offsets[r + 1];
  }
  *starts = std::move(out);
  return "";
}

}  // namespace sparse
