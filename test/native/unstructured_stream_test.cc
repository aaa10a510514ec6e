// CPU test of the unstructured stream's encoder (native/common/unstructured_stream.h): random
// matrices at several sparsities and layouts, with empty and fully dense tiles, empty rows,
// M and K off the tile grid, unsorted CSR rows and explicit zeros; each stream decoded back must
// give the matrix (zeros as +0), every stage must fit its run, and bad input must be refused.
// Run: bash scripts/test-unstructured-stream.sh
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/unstructured_stream.h"

using sparse::UnstStream;

namespace {

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL %s\n", what.c_str());
    ++failures;
  }
}

// A dense m x k matrix of nonzero 16-bit words with density 1 - sparsity; `special`: some
// 16 x 16 tiles empty, some fully dense, some rows empty, some -0 / +0 entries kept in the CSR.
std::vector<uint16_t> RandomMatrix(int m, int k, double sparsity, bool special, std::mt19937_64& rng) {
  std::vector<uint16_t> a(static_cast<size_t>(m) * k, 0);
  std::uniform_real_distribution<double> u(0, 1);
  const int ts = (m + 15) / 16, tk = (k + 15) / 16;
  for (int s = 0; s < ts; ++s)
    for (int t = 0; t < tk; ++t) {
      const double kind = special ? u(rng) : 1.0;
      const double density = kind < 0.15 ? 0.0 : kind < 0.25 ? 1.0 : 1.0 - sparsity;
      for (int r = s * 16; r < std::min(m, s * 16 + 16); ++r)
        for (int c = t * 16; c < std::min(k, t * 16 + 16); ++c)
          if (u(rng) < density) a[static_cast<size_t>(r) * k + c] = static_cast<uint16_t>(1 + rng() % 0xfffe) | 1;
    }
  if (special)
    for (int r = 0; r < m; r += 5) std::fill(a.begin() + static_cast<size_t>(r) * k, a.begin() + static_cast<size_t>(r + 1) * k, 0);
  return a;
}

struct Csr {
  std::vector<int> off, col;
  std::vector<uint16_t> val;
};

// The CSR of a dense matrix, each row's entries reversed (the encoder must not rely on order)
// or, `in_order`, in column order (the encoder reads such rows in place); `zeros`: a +0 and a -0
// entry added in rows that have room (the encoder leaves them out).
Csr ToCsr(const std::vector<uint16_t>& a, int m, int k, bool zeros, bool in_order = false) {
  Csr c;
  c.off.push_back(0);
  for (int r = 0; r < m; ++r) {
    for (int i = 0; i < k; ++i) {
      const int j = in_order ? i : k - 1 - i;
      const uint16_t v = a[static_cast<size_t>(r) * k + j];
      if (v != 0) c.col.push_back(j), c.val.push_back(v);
      else if (zeros && (j == 0 || j == k - 1)) c.col.push_back(j), c.val.push_back(j == 0 ? 0x8000 : 0);
    }
    c.off.push_back(static_cast<int>(c.col.size()));
  }
  return c;
}

void RoundTrip(int m, int k, double sparsity, bool special, int strips, int kks, std::mt19937_64& rng,
               sparse::UnstLayout layout = sparse::UnstLayout::kStrip16, int whole_min = 0) {
  const std::string name = std::to_string(m) + "x" + std::to_string(k) + " s=" + std::to_string(sparsity) +
                           (whole_min ? " whole>=" + std::to_string(whole_min) : std::string()) +
                           (special ? " special" : "") + " strips=" + std::to_string(strips) + " kks=" + std::to_string(kks) +
                           (layout == sparse::UnstLayout::kWg64        ? " wg64"
                            : layout == sparse::UnstLayout::kBitmapFrag ? " bitmap"
                            : layout == sparse::UnstLayout::kPairFrag   ? " pairs"
                            : layout == sparse::UnstLayout::kRows       ? " rows"
                                                                        : "");
  const std::vector<uint16_t> a = RandomMatrix(m, k, sparsity, special, rng);
  const Csr c = ToCsr(a, m, k, special);
  UnstStream s;
  std::string err =
      sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks, 0, &s, layout, whole_min, 1);
  Expect(err.empty(), name + ": build: " + err);
  if (!err.empty()) return;
  // The same matrix with its rows in column order (read in place, no copy) on 3 threads and on
  // the hardware's, and unsorted on 2: the same stream, byte for byte, and the same statistics.
  const Csr sorted = ToCsr(a, m, k, special, true);
  for (int threads : {3, 0, -2}) {
    const Csr& from = threads < 0 ? c : sorted;
    UnstStream t;
    const std::string e = sparse::BuildUnstStream(m, k, from.off.data(), from.col.data(), from.val.data(), strips, kks, 0, &t,
                                                  layout, whole_min, threads < 0 ? -threads : threads);
    Expect(e.empty() && t.data == s.data && t.offsets == s.offsets && t.stats.nnz == s.stats.nnz &&
               t.stats.stores == s.stats.stores && t.stats.wavefronts == s.stats.wavefronts &&
               t.stats.max_stage_words == s.stats.max_stage_words && t.stats.whole_tiles == s.stats.whole_tiles &&
               t.stats.whole_padding == s.stats.whole_padding,
           name + (threads < 0 ? ": unsorted rows on 2 threads" : ": rows in column order on " + std::to_string(threads) + " threads") +
               ": the same stream");
  }
  std::vector<uint16_t> back;
  err = sparse::UnstStreamToDense(s, &back);
  Expect(err.empty(), name + ": decode: " + err);
  Expect(back == a, name + ": the decoded matrix differs");
  long long nnz = 0;
  for (uint16_t v : a) nnz += v != 0;
  Expect(s.stats.nnz == nnz, name + ": nonzero count");
  Expect(s.stats.wavefronts >= s.stats.stores, name + ": wavefronts");
  for (size_t i = 0; i + 1 < s.offsets.size(); ++i)
    Expect(s.offsets[i + 1] > s.offsets[i], name + ": every stage has at least its header");
  // The capacity: the densest stage just fits, one word less is refused.
  if (s.stats.max_stage_words > 1) {  // (a capacity of 0 means none)
    UnstStream t;
    Expect(sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks, s.stats.max_stage_words, &t, layout,
                                   whole_min).empty(),
           name + ": capacity = densest stage must fit");
    const std::string refused = sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks,
                                                        s.stats.max_stage_words - 1, &t, layout, whole_min, 1);
    Expect(!refused.empty(), name + ": capacity below the densest stage must be refused");
    // ... naming the same (first) densest stage on 3 threads.
    Expect(sparse::BuildUnstStream(m, k, sorted.off.data(), sorted.col.data(), sorted.val.data(), strips, kks,
                                   s.stats.max_stage_words - 1, &t, layout, whole_min, 3) == refused,
           name + ": the refusal on 3 threads names the same stage");
  }
  std::printf("ok %-48s bytes/weight %.4f  wavefronts/store %.3f\n", name.c_str(),
              static_cast<double>(s.Bytes()) / (static_cast<double>(m) * k),
              s.stats.stores ? static_cast<double>(s.stats.wavefronts) / s.stats.stores : 0.0);
}

void Refusals() {
  const int off[3] = {0, 2, 3};
  const int dup[3] = {4, 4, 1};
  const int far[3] = {1, 40, 2};
  const uint16_t val[3] = {0x3c00, 0x4000, 0x4200};
  UnstStream s;
  Expect(!sparse::BuildUnstStream(2, 32, off, dup, val, 8, 128, 0, &s).empty(), "a repeated column is refused");
  // Many rows on several threads: the first row with an error (in row order) is the one named; a
  // column out of range before a repeat in the same row; a repeated column where one of the two
  // is a zero (+0 or -0) is no repeat; an unsorted row's smallest repeated column.
  {
    const int m = 4000, k = 64;
    std::vector<int> o{0}, cc;
    std::vector<uint16_t> vv;
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < 8; ++c) cc.push_back(8 * c + r % 8), vv.push_back(0x3c00);
      if (r == 100) cc[cc.size() - 1] = cc[cc.size() - 2], vv[vv.size() - 1] = 0x8000;  // repeat with a -0: fine
      if (r == 2500) cc[cc.size() - 3] = cc[cc.size() - 2];                             // a repeat, in order
      if (r == 3000) cc[cc.size() - 1] = k;                                              // out of range
      if (r == 1700) {  // unsorted, columns 9 and 25 repeated: 25 first in the row, 9 reported
        const size_t f = cc.size() - 8;
        const int cols[8] = {25, 9, 57, 9, 41, 25, 1, 17};
        for (int i = 0; i < 8; ++i) cc[f + i] = cols[i];
      }
      o.push_back(static_cast<int>(cc.size()));
    }
    for (int threads : {1, 4, 0}) {
      UnstStream t;
      const std::string e = sparse::BuildUnstStream(m, k, o.data(), cc.data(), vv.data(), 8, 64, 0, &t,
                                                    sparse::UnstLayout::kPairFrag, 0, threads);
      Expect(e == "repeated column 9 in row 1700", "the first row's error on " + std::to_string(threads) + " threads: " + e);
    }
    cc[o[1700]] = 3, cc[o[1700] + 3] = 11, cc[o[1700] + 5] = 33;  // row 1700 mended
    for (int threads : {1, 4}) {
      UnstStream t;
      const std::string e = sparse::BuildUnstStream(m, k, o.data(), cc.data(), vv.data(), 8, 64, 0, &t,
                                                    sparse::UnstLayout::kPairFrag, 0, threads);
      Expect(e == "repeated column " + std::to_string(cc[o[2500] + 5]) + " in row 2500",
             "then row 2500's repeat on " + std::to_string(threads) + " threads: " + e);
    }
    // Row 2500 mended: the column out of range of row 3000, which also repeats a column, is named.
    cc[o[2500] + 5] = cc[o[2500] + 6] - 8;
    cc[o[3000] + 2] = cc[o[3000] + 1];
    {
      UnstStream t;
      const std::string e = sparse::BuildUnstStream(m, k, o.data(), cc.data(), vv.data(), 8, 64, 0, &t,
                                                    sparse::UnstLayout::kPairFrag, 0, 4);
      Expect(e == "column index 64 of row 3000 out of range", "a column out of range before a repeat: " + e);
    }
    // Row 3000 mended too: the repeat with a -0 in row 100 is no repeat; the stream builds.
    cc[o[3000] + 2] = cc[o[3000] + 1] + 8, cc[o[3000] + 7] = cc[o[3000] + 6] + 8;
    {
      UnstStream t;
      const std::string e = sparse::BuildUnstStream(m, k, o.data(), cc.data(), vv.data(), 8, 64, 0, &t,
                                                    sparse::UnstLayout::kPairFrag, 0, 4);
      Expect(e.empty() && t.stats.nnz == 8LL * m - 1, "the mended matrix builds, row 100's -0 left out: " + e);
    }
  }
  Expect(!sparse::BuildUnstStream(2, 32, off, far, val, 8, 128, 0, &s).empty(), "a column past k is refused");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 8, 100, 0, &s).empty(), "a stage width off 16 is refused");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 8, 96, 0, &s, sparse::UnstLayout::kWg64).empty(),
         "the warpgroup layout refuses a stage width off 64");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 6, 128, 0, &s, sparse::UnstLayout::kWg64).empty(),
         "the warpgroup layout refuses strips off 4");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 16, 512, 0, &s, sparse::UnstLayout::kBitmapFrag).empty(),
         "the bitmap layout refuses strips x stage width over 4096");
  Expect(sparse::BuildUnstStream(2, 32, off, off, val, 8, 512, 0, &s, sparse::UnstLayout::kBitmapFrag).empty(),
         "the bitmap layout takes strips x stage width of 4096");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 16, 512, 0, &s, sparse::UnstLayout::kPairFrag).empty(),
         "the pair layout refuses strips x stage width over 4096");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 8, 128, 0, &s, sparse::UnstLayout::kPairFrag, 129).empty(),
         "a whole-tile threshold over 128 registers is refused");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 8, 128, 0, &s, sparse::UnstLayout::kPairFrag, -1).empty(),
         "a negative whole-tile threshold is refused");
  Expect(!sparse::BuildUnstStream(2, 32, off, off, val, 8, 128, 0, &s, sparse::UnstLayout::kBitmapFrag, 64).empty(),
         "only the pair layout stores tiles whole");
  // A whole tile's record altered: a first count off its multiple of 4, or past the padding a
  // multiple of 4 allows, or a zero register in a tile that is not whole, is refused.
  {
    std::vector<int> o{0}, cc;
    std::vector<uint16_t> vv;
    for (int r = 0; r < 16; ++r) {
      for (int c = 0; c < 32; ++c)
        if (c < 16 ? (r + c) % 3 == 0 : true) cc.push_back(c), vv.push_back(0x3c00);
      o.push_back(static_cast<int>(cc.size()));
    }
    // Tile 0 about a third full (not whole at 100), tile 1 full (whole): its start padded.
    UnstStream w;
    Expect(sparse::BuildUnstStream(16, 32, o.data(), cc.data(), vv.data(), 1, 32, 0, &w, sparse::UnstLayout::kPairFrag, 100).empty(),
           "whole tiles: build");
    Expect(w.stats.whole_tiles == 1, "whole tiles: one of two tiles is whole");
    std::vector<uint16_t> back;
    Expect(sparse::UnstStreamToDense(w, &back).empty(), "whole tiles: the stream decodes");
    uint32_t word;
    std::memcpy(&word, w.data.data() + sparse::kUnstPairTileBytes, 4);
    int regs0 = 0;  // the first tile's stored registers
    for (int q = 0; q < 8; ++q) {
      uint32_t x;
      std::memcpy(&x, w.data.data() + 4 * q, 4);
      regs0 += __builtin_popcount(x & 0xffff);
    }
    Expect((word & 0xffff) == 0xffff && (word >> 16) % 4 == 0 && regs0 % 4 != 0 &&
               static_cast<int>(word >> 16) == regs0 + w.stats.whole_padding && w.stats.max_stage_words == static_cast<int>(word >> 16) + 128,
           "whole tiles: the second tile's record is whole, aligned after the first's registers");
    for (int delta : {-1, 1, 4}) {
      UnstStream bad = w;
      for (int q = 0; q < 8; ++q) {
        uint32_t x;
        std::memcpy(&x, bad.data.data() + sparse::kUnstPairTileBytes + 4 * q, 4);
        x += static_cast<uint32_t>(delta) << 16;
        std::memcpy(bad.data.data() + sparse::kUnstPairTileBytes + 4 * q, &x, 4);
      }
      Expect(!sparse::UnstStreamToDense(bad, &back).empty(), "whole tiles: a count moved by " + std::to_string(delta) + " is refused");
    }
    // The first tile's first stored register zeroed: a tile that is not whole stores no zeros.
    UnstStream zero = w;
    std::memset(zero.data.data() + sparse::UnstPairFixedBytes(1, 32), 0, 4);
    Expect(!sparse::UnstStreamToDense(zero, &back).empty(), "whole tiles: a zero register outside a whole tile is refused");
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(24);
  const struct {
    int m, k;
  } shapes[] = {{1, 1}, {7, 96}, {16, 16}, {33, 37}, {100, 320}, {129, 1000}, {300, 2048}, {257, 999}};
  for (auto sh : shapes)
    for (double sp : {0.0, 0.5, 0.7, 0.9, 0.95, 1.0})
      for (bool special : {false, true}) RoundTrip(sh.m, sh.k, sp, special, 8, 128, rng);
  for (int strips : {1, 4, 8})
    for (int kks : {16, 64, 256}) RoundTrip(200, 777, 0.7, true, strips, kks, rng);
  // The warpgroup layout (64-row units, 64-column k-blocks, 128-byte swizzle).
  for (auto sh : shapes)
    for (double sp : {0.0, 0.7, 0.95})
      for (bool special : {false, true}) RoundTrip(sh.m, sh.k, sp, special, 8, 128, rng, sparse::UnstLayout::kWg64);
  for (int strips : {4, 8, 16})
    for (int kks : {64, 128, 256}) RoundTrip(300, 777, 0.7, true, strips, kks, rng, sparse::UnstLayout::kWg64);
  // The bitmap layout (per tile a bitmap in A-fragment order, values lane by lane).
  for (auto sh : shapes)
    for (double sp : {0.0, 0.5, 0.7, 0.95, 1.0})
      for (bool special : {false, true}) RoundTrip(sh.m, sh.k, sp, special, 8, 128, rng, sparse::UnstLayout::kBitmapFrag);
  for (int strips : {1, 4, 8})
    for (int kks : {16, 128, 256}) RoundTrip(300, 777, 0.7, true, strips, kks, rng, sparse::UnstLayout::kBitmapFrag);
  // Its (lane, slot) of each tile position is distinct and is the m16n8k16 A fragment's: lane
  // 4 g + t holds a0 = (g, 2 t | 2 t + 1), a1 = (g + 8, ..), a2 = (g, 2 t + 8 | ..), a3 = (g + 8, ..).
  {
    std::vector<int> seen(256, 0);
    bool ok = true;
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) {
        const int lane = sparse::UnstBitmapLane(r, c), slot = sparse::UnstBitmapSlot(r, c);
        const int g = lane >> 2, t = lane & 3, reg = slot >> 1;
        ok &= lane >= 0 && lane < 32 && slot >= 0 && slot < 8 && !seen[lane * 8 + slot]++;
        ok &= r == g + 8 * (reg & 1) && c == 2 * t + (slot & 1) + 8 * (reg >> 1);
      }
    Expect(ok, "bitmap lanes and slots are the A fragment's, each once");
  }
  // UnstructuredBitmap's decode, emulated lane by lane as the device does it (the quad's word and
  // count, the popcount of the bits before the lane, one load per slot kept where its bit is set,
  // the next value read and dropped where it is not), gives each lane its A fragment.
  for (const int kks : {128, 256}) {
    const int m = 200, k = 300, strips = kks == 128 ? 4 : 8, tiles = kks / 16;
    const std::vector<uint16_t> a = RandomMatrix(m, k, 0.6, true, rng);
    const Csr c = ToCsr(a, m, k, false);
    UnstStream s;
    Expect(sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks, 0, &s,
                                   sparse::UnstLayout::kBitmapFrag).empty(), "bitmap decode: build");
    bool ok = true;
    const int fixed = sparse::UnstBitmapFixedBytes(strips, kks);
    for (int rb = 0; rb < s.row_blocks; ++rb)
      for (int ks = 0; ks < s.kstages; ++ks) {
        const uint8_t* run = s.data.data() + 16 * static_cast<size_t>(s.offsets[rb * s.kstages + ks]);
        // The slot the device reads past a lane's last value stays inside the run's padding or
        // the ring slot's 16 spare bytes (StageABytes); here: a copy with 16 zero bytes more.
        std::vector<uint8_t> st(run, run + 16 * (s.offsets[rb * s.kstages + ks + 1] - s.offsets[rb * s.kstages + ks]));
        st.resize(st.size() + 16, 0);
        auto ld16 = [&](size_t at) { return static_cast<uint32_t>(st[at] | st[at + 1] << 8); };
        for (int warp = 0; warp < strips; ++warp)
          for (int j = 0; j < tiles; ++j)
            for (int lane = 0; lane < 32; ++lane) {
              const size_t rec = (static_cast<size_t>(warp) * tiles + j) * sparse::kUnstBitmapTileBytes + 4 * (lane >> 2);
              const uint32_t word = st[rec] | st[rec + 1] << 8 | st[rec + 2] << 16 | static_cast<uint32_t>(st[rec + 3]) << 24;
              const uint32_t sh = 8 * (lane & 3), before = (1u << sh) - 1;
              const uint32_t first = ld16(rec + 32 - 2 * (lane >> 2)) + __builtin_popcount(word & before);
              const uint32_t bits = (word >> sh) & 0xff;
              // Slot by slot (UnstructuredBitmap) and pair by pair (kPairs: the pattern's byte
              // permutation, __byte_perm's selector nibbles 0-3 from v0, 4-7 from v1).
              uint32_t got[8], pair[8];
              size_t at = fixed + 2 * first;
              for (int i = 0; i < 8; ++i) {
                const uint32_t set = (bits >> i) & 1;
                got[i] = ld16(at) * set;
                at += 2 * set;
              }
              at = fixed + 2 * first;
              for (int q = 0; q < 4; ++q) {
                const uint32_t p = (bits >> (2 * q)) & 3;
                const uint64_t v = ld16(at) | static_cast<uint64_t>(ld16(at + 2)) << 32;
                const uint32_t sel = static_cast<uint32_t>(0x5410102222102222ull >> (16 * p)) & 0xffff;
                uint32_t reg = 0;
                for (int b = 0; b < 4; ++b) reg |= static_cast<uint32_t>(v >> (8 * ((sel >> (4 * b)) & 7)) & 0xff) << (8 * b);
                pair[2 * q] = reg & 0xffff, pair[2 * q + 1] = reg >> 16;
                at += 2 * ((p & 1) + (p >> 1));
              }
              for (int i = 0; i < 8; ++i) {
                const int reg = i >> 1, g = lane >> 2, t = lane & 3;
                const int r = (rb * strips + warp) * 16 + g + 8 * (reg & 1), col = ks * kks + 16 * j + 2 * t + (i & 1) + 8 * (reg >> 1);
                const uint32_t want = r < m && col < k ? a[static_cast<size_t>(r) * k + col] : 0;
                ok &= got[i] == want && pair[i] == want;
              }
            }
      }
    Expect(ok, "bitmap decode, emulated: every lane's fragment is the matrix's");
  }
  // The pair layout (a bit per A register, both halves stored where either is nonzero).
  for (auto sh : shapes)
    for (double sp : {0.0, 0.5, 0.7, 0.95, 1.0})
      for (bool special : {false, true}) RoundTrip(sh.m, sh.k, sp, special, 8, 128, rng, sparse::UnstLayout::kPairFrag);
  for (int strips : {1, 4, 8})
    for (int kks : {16, 128, 256}) RoundTrip(300, 777, 0.7, true, strips, kks, rng, sparse::UnstLayout::kPairFrag);
  // ... with tiles stored whole (every tile, none but full ones, and a threshold that splits
  // 50 % tiles).
  for (auto sh : shapes)
    for (double sp : {0.0, 0.5, 0.9})
      for (int whole_min : {1, 90, 128})
        RoundTrip(sh.m, sh.k, sp, true, 8, 64, rng, sparse::UnstLayout::kPairFrag, whole_min);
  // UnstructuredPairs's decode, emulated lane by lane as the device does it (the quad's word,
  // the popcount of the quad's register bits before the lane plus the word's count, one 32-bit
  // load per register whose bit is set, zero where it is not), gives each lane its A fragment;
  // and the stream's registers are the pairs with a nonzero, each once. With whole tiles
  // (whole_min > 0) also the GEMM engine's two whole-tile decodes (gemm_engine.cuh, kUnWhole):
  // 1, a tile the whole warp finds whole (every quad's 16 bits, the first count a multiple of 4)
  // read with one 16-byte load a lane; 2, a lane whose four bits are set and whose first register
  // is a multiple of 4 reads its four with one 16-byte load; each load 16-byte aligned.
  for (const double sp : {0.5, 0.9})
    for (const int whole_min : {0, 1, 90}) {
    const int m = 200, k = 301, strips = 4, kks = 128, tiles = kks / 16;
    const std::vector<uint16_t> a = RandomMatrix(m, k, sp, true, rng);
    const Csr c = ToCsr(a, m, k, false);
    UnstStream s;
    Expect(sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks, 0, &s,
                                   sparse::UnstLayout::kPairFrag, whole_min).empty(), "pair decode: build");
    Expect(whole_min == 0 || s.stats.whole_tiles > 0, "pair decode: whole tiles where asked");
    bool ok = true, aligned = true;
    long long stored = 0, nonempty = 0, wide[3] = {0, 0, 0};
    const int fixed = sparse::UnstPairFixedBytes(strips, kks);
    for (int rb = 0; rb < s.row_blocks; ++rb)
      for (int ks = 0; ks < s.kstages; ++ks) {
        const uint8_t* st = s.data.data() + 16 * static_cast<size_t>(s.offsets[rb * s.kstages + ks]);
        const size_t bytes = 16 * static_cast<size_t>(s.offsets[rb * s.kstages + ks + 1] - s.offsets[rb * s.kstages + ks]);
        auto ld32 = [&](size_t at) {
          ok &= at + 4 <= bytes;  // no load past the run
          return at + 4 <= bytes ? st[at] | st[at + 1] << 8 | st[at + 2] << 16 | static_cast<uint32_t>(st[at + 3]) << 24 : 0u;
        };
        for (int warp = 0; warp < strips; ++warp)
          for (int j = 0; j < tiles; ++j) {
            const size_t rec = (static_cast<size_t>(warp) * tiles + j) * sparse::kUnstPairTileBytes;
            bool warp_whole = true;  // decode 1's vote over the warp's 32 lanes (8 quads)
            for (int quad = 0; quad < 8; ++quad) {
              const uint32_t word = ld32(rec + 4 * quad);
              warp_whole = warp_whole && (word & 0xffff) == 0xffff && ((word >> 16) & 3) == 0;
            }
            for (int lane = 0; lane < 32; ++lane) {
              const uint32_t word = ld32(rec + 4 * (lane >> 2));
              const uint32_t sh = 4 * (lane & 3), before = (1u << sh) - 1;
              const uint32_t first = (word >> 16) + __builtin_popcount(word & before);
              const uint32_t bits = (word >> sh) & 15;
              const bool lane_full = bits == 15 && (first & 3) == 0;
              for (int form = 0; form < 3; ++form) {
                // form 0: the scalar decode; 1: the warp's vote; 2: the lane's own test.
                const bool v4 = (form == 1 && warp_whole) || (form == 2 && lane_full);
                size_t at = fixed + 4 * static_cast<size_t>(first);
                if (v4) aligned &= at % 16 == 0, ++wide[form];
                for (int q = 0; q < 4; ++q) {
                  uint32_t reg = 0;
                  if (v4) {
                    reg = ld32(at + 4 * q);
                  } else if (bits >> q & 1) {
                    reg = ld32(at), at += 4;
                    stored += form == 0;
                  }
                  if (v4 && form == 1) stored += (reg & 0x7fff7fff) != 0;
                  const int g = lane >> 2, t = lane & 3;
                  const int r = (rb * strips + warp) * 16 + g + 8 * (q & 1), col = ks * kks + 16 * j + 2 * t + 8 * (q >> 1);
                  auto w = [&](int cc) -> uint32_t { return r < m && cc < k ? a[static_cast<size_t>(r) * k + cc] : 0; };
                  ok &= (reg & 0xffff) == w(col) && reg >> 16 == w(col + 1);
                  if (form == 0) nonempty += (w(col) | w(col + 1)) != 0;
                }
              }
            }
          }
      }
    const std::string name = " (" + std::to_string(sp) + ", whole >= " + std::to_string(whole_min) + ")";
    Expect(ok, "pair decode, emulated: every lane's fragment is the matrix's, in each form" + name);
    Expect(aligned, "pair decode: every 16-byte load aligned" + name);
    // The tiles stored whole are what decode 1 reads whole (32 lanes a tile), and decode 2 reads
    // at least those lanes whole.
    Expect(wide[1] == 32 * s.stats.whole_tiles && wide[2] >= wide[1], "pair decode: whole tiles read whole" + name);
    if (whole_min == 0)
      Expect(stored == nonempty && s.stats.max_stage_words > 0, "pair decode: the registers stored are the nonempty pairs" + name);
  }
  // The rows layout (per row its nonzeros in column order, column << 16 | value).
  for (auto sh : shapes)
    for (double sp : {0.0, 0.5, 0.9, 1.0})
      for (bool special : {false, true}) RoundTrip(sh.m, sh.k, sp, special, 8, 128, rng, sparse::UnstLayout::kRows);
  for (int strips : {1, 4, 8})
    for (int kks : {16, 128, 256}) RoundTrip(300, 777, 0.7, true, strips, kks, rng, sparse::UnstLayout::kRows);
  // UnstructuredRows's product, emulated lane by lane as the device does it: lane l of warp w
  // walks row l % 16 of strip w and adds value x B[column][8 j + 4 (l / 16) + q] into its
  // register (j, q); Fix's eight shuffles an n-tile then give lane 4 g + t the m16n8 fragment
  // (rows g, g + 8; columns 2 t, 2 t + 1). Checked against the dense product, N = 8 and 16; and
  // kParity's order (the row's two lanes take its nonzeros in turn, every column, then fold into
  // the column halves at each stage's end) gives the same registers.
  for (const int n : {8, 16}) {
    const int m = 70, k = 300, strips = 4, kks = 128, nt8 = n / 8;
    const std::vector<uint16_t> a = RandomMatrix(m, k, 0.8, true, rng);
    const Csr c = ToCsr(a, m, k, false);
    UnstStream s;
    Expect(sparse::BuildUnstStream(m, k, c.off.data(), c.col.data(), c.val.data(), strips, kks, 0, &s,
                                   sparse::UnstLayout::kRows).empty(), "rows decode: build");
    std::vector<double> b(static_cast<size_t>(k) * n);
    for (auto& x : b) x = static_cast<int>(rng() % 7) - 3;
    auto half = [](uint16_t h) {  // f16 bits to double (the test's values are normal or zero)
      const int e = (h >> 10) & 31, f = h & 1023;
      const double v = e == 0 ? f * std::ldexp(1.0, -24) : (1024 + f) * std::ldexp(1.0, e - 25);
      return (h & 0x8000) ? -v : v;
    };
    bool ok = true;
    const int header = sparse::UnstHeaderBytes(sparse::UnstLayout::kRows, strips, kks);
    for (int rb = 0; rb < s.row_blocks; ++rb)
      for (int w = 0; w < strips; ++w) {
        double acc[32][2][4] = {}, accp[32][2][4] = {};  // [lane][j][q], the rows' order
        for (int ks = 0; ks < s.kstages; ++ks) {
          const uint8_t* st = s.data.data() + 16 * static_cast<size_t>(s.offsets[rb * s.kstages + ks]);
          double sum[32][2][8] = {};  // kParity: the stage's sums of every column, by parity
          for (int lane = 0; lane < 32; ++lane) {
            const int row = w * 16 + (lane & 15), h = lane >> 4;
            const int w0 = st[2 * row] | st[2 * row + 1] << 8, w1 = st[2 * row + 2] | st[2 * row + 3] << 8;
            for (int i = w0; i < w1; ++i) {
              const uint8_t* p = st + header + 4 * static_cast<size_t>(i);
              const int col = ks * kks + (p[2] | p[3] << 8);
              const double v = half(static_cast<uint16_t>(p[0] | p[1] << 8));
              for (int j = 0; j < nt8; ++j)
                for (int q = 0; q < 4; ++q) acc[lane][j][q] += v * b[static_cast<size_t>(col) * n + 8 * j + 4 * h + q];
              if ((i - w0) % 2 == h)
                for (int j = 0; j < nt8; ++j)
                  for (int q = 0; q < 8; ++q) sum[lane][j][q] += v * b[static_cast<size_t>(col) * n + 8 * j + q];
            }
          }
          // The fold: lane l keeps columns 4 h .. 4 h + 3 and adds its partner's (l ^ 16).
          for (int lane = 0; lane < 32; ++lane) {
            const int h = lane >> 4, partner = lane ^ 16;
            for (int j = 0; j < nt8; ++j)
              for (int q = 0; q < 4; ++q) accp[lane][j][q] += sum[lane][j][4 * h + q] + sum[partner][j][4 * h + q];
          }
        }
        for (int lane = 0; lane < 32; ++lane)
          for (int j = 0; j < nt8; ++j)
            for (int q = 0; q < 4; ++q) ok &= accp[lane][j][q] == acc[lane][j][q];
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3, lo = g + 16 * (t >> 1), hi = lo + 8;
          const bool odd = t & 1;
          for (int j = 0; j < nt8; ++j) {
            const double f[4] = {odd ? acc[lo][j][2] : acc[lo][j][0], odd ? acc[lo][j][3] : acc[lo][j][1],
                                 odd ? acc[hi][j][2] : acc[hi][j][0], odd ? acc[hi][j][3] : acc[hi][j][1]};
            for (int q = 0; q < 4; ++q) {
              const int r = (rb * strips + w) * 16 + g + 8 * (q >> 1), col = 8 * j + 2 * t + (q & 1);
              double want = 0;
              if (r < m)
                for (int x = 0; x < k; ++x) want += half(a[static_cast<size_t>(r) * k + x]) * b[static_cast<size_t>(x) * n + col];
              ok &= f[q] == want;
            }
          }
        }
      }
    Expect(ok, "rows decode, emulated with Fix's shuffles: every lane's fragment is the dense product's (N = " +
                   std::to_string(n) + ")");
  }
  // Every offset of the swizzled image is distinct and decodes to its row and column.
  {
    std::vector<int> seen(8192, 0);
    bool ok = true;
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) {
        const int o = sparse::UnstWgOffset(r, c);
        ok &= o >= 0 && o < 8192 && !(o & 1) && !seen[o];
        if (o >= 0 && o < 8192) seen[o] = 1;
        ok &= (o >> 4 & 7) == ((c >> 3) ^ (r & 7)) && o >> 7 == r;
      }
    Expect(ok, "the swizzled offsets are a permutation of the image");
  }
  Refusals();
  std::printf("unstructured stream: %d failures\n", failures);
  return failures ? 1 : 0;
}
