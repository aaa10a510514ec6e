// The 2:4 format's builder and decoder (see sparse24.h).
#include "common/sparse24.h"

#include <algorithm>
#include <cstring>

namespace sparse {
namespace {

inline bool IsZero16(uint16_t v) { return (v & 0x7fffu) == 0; }

// Where compressed element (r, cc) of a tile (r in 0..15, cc in 0..15) sits in the tile's
// 256 values: lane (r % 8) * 4 + (cc % 8) / 2, register 2 (cc / 8) + r / 8, half cc % 2.
inline int ValueSlot(int r, int cc) {
  const int lane = (r & 7) * 4 + ((cc & 7) >> 1);
  const int reg = (cc >> 3) * 2 + (r >> 3);
  return lane * 8 + reg * 2 + (cc & 1);
}

// The metadata word and bit of group `grp` (0..7) of row r of a tile.
inline int MetaWord(int r, int grp) { return (r & 7) * 2 + (grp >> 2); }
inline int MetaShift(int r, int grp) { return (r >> 3) * 16 + (grp & 3) * 4; }

}  // namespace

std::string BuildSp24Tiles(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                           Sp24Tiles* out) {
  if (m < 0 || k < 0) return "bad dimensions";
  Sp24Tiles& t = *out;
  t = Sp24Tiles();
  t.m = m, t.k = k;
  t.strips = (m + kSp24TileRows - 1) / kSp24TileRows;
  t.ksteps = (k + kSp24TileCols - 1) / kSp24TileCols;
  const size_t tiles = static_cast<size_t>(t.strips) * t.ksteps;
  t.values.assign(tiles * 256, 0);
  t.meta.assign(tiles * 16, 0);
  const int groups = t.ksteps * 8;
  std::vector<int> count(groups);
  std::vector<int> cols(static_cast<size_t>(groups) * 2);
  std::vector<uint16_t> vals(static_cast<size_t>(groups) * 2);
  for (int row = 0; row < m; ++row) {
    std::fill(count.begin(), count.end(), 0);
    int first_bad = -1;
    for (int i = row_offsets[row]; i < row_offsets[row + 1]; ++i) {
      const int col = column_indices[i];
      if (col < 0 || col >= k) return "column index " + std::to_string(col) + " out of range in row " + std::to_string(row);
      if (IsZero16(values16[i])) continue;
      const int grp = col >> 2;
      if (count[grp] >= 2) {
        if (first_bad < 0 || grp < first_bad) first_bad = grp;
        ++count[grp];
        continue;
      }
      cols[grp * 2 + count[grp]] = col & 3;
      vals[grp * 2 + count[grp]] = values16[i];
      ++count[grp];
    }
    if (first_bad >= 0)
      return "not 2:4: row " + std::to_string(row) + ", columns " + std::to_string(first_bad * 4) + ".." +
             std::to_string(first_bad * 4 + 3) + " hold " + std::to_string(count[first_bad]) + " nonzeros (at most 2)";
    const int s = row / kSp24TileRows, r = row % kSp24TileRows;
    for (int grp = 0; grp < groups; ++grp) {
      // Two distinct ascending indices (mma.sp rejects repeated ones); a missing element
      // takes a free index and the value 0.
      int i0, i1;
      uint16_t v0 = 0, v1 = 0;
      const int n = count[grp];
      if (n == 2) {
        int a = cols[grp * 2], b = cols[grp * 2 + 1];
        v0 = vals[grp * 2], v1 = vals[grp * 2 + 1];
        if (a > b) std::swap(a, b), std::swap(v0, v1);
        if (a == b) return "repeated column " + std::to_string(grp * 4 + a) + " in row " + std::to_string(row);
        i0 = a, i1 = b;
      } else if (n == 1) {
        const int a = cols[grp * 2];
        if (a < 3) i0 = a, i1 = 3, v0 = vals[grp * 2];
        else i0 = 2, i1 = 3, v1 = vals[grp * 2];
      } else {
        i0 = 0, i1 = 1;
      }
      const int j = grp >> 3, g8 = grp & 7;
      const size_t tile = static_cast<size_t>(s) * t.ksteps + j;
      t.values[tile * 256 + ValueSlot(r, 2 * g8)] = v0;
      t.values[tile * 256 + ValueSlot(r, 2 * g8 + 1)] = v1;
      t.meta[tile * 16 + MetaWord(r, g8)] |= static_cast<uint32_t>(i0 | i1 << 2) << MetaShift(r, g8);
    }
  }
  // Rows past m: groups of zeros with indices (0, 1).
  for (int row = m; row < t.strips * kSp24TileRows; ++row) {
    const int s = row / kSp24TileRows, r = row % kSp24TileRows;
    for (int grp = 0; grp < groups; ++grp) {
      const size_t tile = static_cast<size_t>(s) * t.ksteps + (grp >> 3);
      t.meta[tile * 16 + MetaWord(r, grp & 7)] |= 4u << MetaShift(r, grp & 7);
    }
  }
  return "";
}

bool IsTwoFour(int m, const int* row_offsets, const int* column_indices, const uint16_t* values16) {
  for (int row = 0; row < m; ++row) {
    // Columns ascend in a valid CSR, but do not rely on it: count per group in a small map
    // of the current run of entries.
    int last_group = -1, count = 0;
    bool sorted = true;
    for (int i = row_offsets[row]; i < row_offsets[row + 1]; ++i) {
      if (values16 && IsZero16(values16[i])) continue;
      const int grp = column_indices[i] >> 2;
      if (grp < last_group) sorted = false;
      count = grp == last_group ? count + 1 : 1;
      last_group = grp;
      if (count > 2) return false;
    }
    if (!sorted) {
      std::vector<int> groups;
      for (int i = row_offsets[row]; i < row_offsets[row + 1]; ++i)
        if (!values16 || !IsZero16(values16[i])) groups.push_back(column_indices[i] >> 2);
      std::sort(groups.begin(), groups.end());
      for (size_t j = 2; j < groups.size(); ++j)
        if (groups[j] == groups[j - 2]) return false;
    }
  }
  return true;
}

void Sp24TilesToCsr(const Sp24Tiles& t, std::vector<int>* row_offsets, std::vector<int>* column_indices,
                    std::vector<uint16_t>* values16) {
  row_offsets->assign(static_cast<size_t>(t.m) + 1, 0);
  column_indices->clear();
  values16->clear();
  for (int row = 0; row < t.m; ++row) {
    const int s = row / kSp24TileRows, r = row % kSp24TileRows;
    for (int grp = 0; grp < t.ksteps * 8; ++grp) {
      const size_t tile = static_cast<size_t>(s) * t.ksteps + (grp >> 3);
      const int g8 = grp & 7;
      const uint32_t nib = t.meta[tile * 16 + MetaWord(r, g8)] >> MetaShift(r, g8) & 15u;
      const uint16_t v0 = t.values[tile * 256 + ValueSlot(r, 2 * g8)];
      const uint16_t v1 = t.values[tile * 256 + ValueSlot(r, 2 * g8 + 1)];
      if (!IsZero16(v0)) column_indices->push_back(grp * 4 + static_cast<int>(nib & 3)), values16->push_back(v0);
      if (!IsZero16(v1)) column_indices->push_back(grp * 4 + static_cast<int>(nib >> 2)), values16->push_back(v1);
    }
    (*row_offsets)[row + 1] = static_cast<int>(column_indices->size());
  }
}

std::vector<uint8_t> StageSp24Tiles(const Sp24Tiles& t, int strips, int steps) {
  const int64_t rbs = (t.strips + strips - 1) / strips, kst = (t.ksteps + steps - 1) / steps;
  std::vector<uint8_t> out(static_cast<size_t>(rbs * kst * strips * steps) * kSp24StagedTileBytes, 0);
  for (int64_t rb = 0; rb < rbs; ++rb)
    for (int64_t ks = 0; ks < kst; ++ks)
      for (int q = 0; q < strips; ++q)
        for (int kt = 0; kt < steps; ++kt) {
          uint8_t* d = out.data() + (((rb * kst + ks) * strips + q) * steps + kt) * kSp24StagedTileBytes;
          const int64_t strip = rb * strips + q, step = ks * steps + kt;
          if (strip < t.strips && step < t.ksteps) {
            const size_t tile = static_cast<size_t>(strip * t.ksteps + step);
            std::memcpy(d, t.values.data() + tile * 256, 512);
            std::memcpy(d + 512, t.meta.data() + tile * 16, 64);
          } else {
            const uint32_t pad = 0x44444444u;
            for (int w = 0; w < 16; ++w) std::memcpy(d + 512 + 4 * w, &pad, 4);
          }
        }
  return out;
}

std::vector<uint16_t> Sp24CompressedRows(const Sp24Tiles& t) {
  const int64_t cols = static_cast<int64_t>(t.ksteps) * 16;
  std::vector<uint16_t> out(static_cast<size_t>(t.m * cols), 0);
  for (int64_t s = 0; s < t.strips; ++s)
    for (int64_t j = 0; j < t.ksteps; ++j) {
      const uint16_t* v = t.values.data() + (s * t.ksteps + j) * 256;
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, q = lane & 3;
        // The lane's 8 words: compressed (row, column) in the A fragment's register order.
        const int rows[8] = {g, g, g + 8, g + 8, g, g, g + 8, g + 8};
        const int cs[8] = {2 * q, 2 * q + 1, 2 * q, 2 * q + 1, 2 * q + 8, 2 * q + 9, 2 * q + 8, 2 * q + 9};
        for (int i = 0; i < 8; ++i) {
          const int64_t row = 16 * s + rows[i];
          if (row < t.m) out[static_cast<size_t>(row * cols + 16 * j + cs[i])] = v[8 * lane + i];
        }
      }
    }
  return out;
}

std::vector<uint32_t> StageSp24Meta(const Sp24Tiles& t, int strip_multiple, int steps) {
  const int64_t strips = (t.strips + strip_multiple - 1) / strip_multiple * strip_multiple;
  const int64_t kst = (t.ksteps + steps - 1) / steps;
  std::vector<uint32_t> out(static_cast<size_t>(kst * strips * steps * 16), 0x44444444u);
  for (int64_t ks = 0; ks < kst; ++ks)
    for (int64_t s = 0; s < t.strips; ++s)
      for (int kt = 0; kt < steps && ks * steps + kt < t.ksteps; ++kt)
        std::memcpy(out.data() + ((ks * strips + s) * steps + kt) * 16,
                    t.meta.data() + (s * t.ksteps + ks * steps + kt) * 16, 64);
  return out;
}

std::vector<uint8_t> StageSp24Runs(const Sp24Tiles& t, int unit_multiple) {
  if (unit_multiple < 1) return {};
  const int strip_multiple = 8 * unit_multiple;
  const std::vector<uint16_t> rows = Sp24CompressedRows(t);
  const std::vector<uint32_t> meta = StageSp24Meta(t, strip_multiple, 2);
  const int64_t cols = static_cast<int64_t>(t.ksteps) * 16, kst = (t.ksteps + 1) / 2;
  const int64_t strips = (t.strips + strip_multiple - 1) / strip_multiple * strip_multiple, units = strips / 8;
  std::vector<uint8_t> out(static_cast<size_t>(units * kst * kSp24RunBytes), 0);
  for (int64_t u = 0; u < units; ++u)
    for (int64_t ks = 0; ks < kst; ++ks) {
      uint8_t* run = out.data() + (u * kst + ks) * kSp24RunBytes;
      for (int r = 0; r < kSp24RunRows && u * kSp24RunRows + r < t.m; ++r)
        for (int col = 0; col < 32 && ks * 32 + col < cols; ++col)
          std::memcpy(run + r * 64 + 16 * ((col / 8) ^ ((r >> 1) & 3)) + 2 * (col % 8),
                      &rows[static_cast<size_t>((u * kSp24RunRows + r) * cols + ks * 32 + col)], 2);
      // The unit's 8 strips are contiguous in StageSp24Meta's K stage ks (8 x 2 x 16 words).
      std::memcpy(run + kSp24RunRows * 64, meta.data() + (ks * strips + 8 * u) * 32, kSp24RunRows * 8);
    }
  return out;
}

}  // namespace sparse
