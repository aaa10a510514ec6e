#include "common/unstructured_stream.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <utility>

#include "cpu/parallel.h"

namespace sparse {

namespace {

// One strip's nonzeros of one stage, as (image offset, value bits), put in store order:
// groups of 32 (one store instruction of the warp) drawing on as many distinct banks as
// remain, the fullest banks first so that none is left over for a long run of conflicted
// groups at the end. Counts the stores and their wavefronts.
void OrderByBank(std::vector<std::pair<int, uint16_t>>* entries, UnstStats* stats) {
  std::array<std::vector<std::pair<int, uint16_t>>, 32> bank;
  for (const auto& e : *entries) bank[UnstBank(e.first)].push_back(e);
  size_t left = entries->size();
  entries->clear();
  std::array<int, 32> order;
  for (int b = 0; b < 32; ++b) order[b] = b;
  while (left > 0) {
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return bank[x].size() > bank[y].size(); });
    const size_t take = std::min<size_t>(32, left);
    std::array<int, 32> used{};
    size_t got = 0;
    while (got < take) {
      for (int b : order) {
        if (got == take) break;
        if (bank[b].empty()) continue;
        entries->push_back(bank[b].back());
        bank[b].pop_back();
        ++used[b];
        ++got;
      }
    }
    left -= take;
    ++stats->stores;
    stats->wavefronts += *std::max_element(used.begin(), used.end());
  }
}

// The end of a build: "" or the refusal of a stream whose densest stage (row block rb, K stage
// ks) holds more than the ring's capacity (`max_stage_words`; 0: none).
std::string CapacityError(const UnstStream& s, int rb, int ks, int max_stage_words) {
  if (max_stage_words <= 0 || s.stats.max_stage_words <= max_stage_words) return "";
  return "stage (row block " + std::to_string(rb) + ", K stage " + std::to_string(ks) + ") holds " +
         std::to_string(s.stats.max_stage_words) + " nonzeros, over the ring's capacity of " +
         std::to_string(max_stage_words) + ": a variant with a larger capacity is needed";
}

// A matrix's rows for the builders: row r's entries are cols[i], vals[i] for i in [start[r],
// start[r + 1]), in non-decreasing column order; entries whose value is +0 or -0 are skipped
// (they are not nonzeros), and no column repeats among the others.
struct RowSource {
  const int* start;
  const int* cols;
  const uint16_t* vals;
};
inline bool IsNonzero(uint16_t v) { return (v & 0x7fff) != 0; }

// ForkJoin for the builders: false when a part ran out of host memory (an exception must not
// leave a worker thread: it would end the process).
constexpr const char* kNoHostMemory = "out of host memory building the stream";
template <typename Fn>
bool ForkJoinOrFail(int parts, Fn&& fn) {
  std::vector<char> failed(static_cast<size_t>(parts), 0);
  ForkJoin(parts, [&](int t) {
    try {
      fn(t);
    } catch (const std::bad_alloc&) {
      failed[t] = 1;
    }
  });
  return std::find(failed.begin(), failed.end(), 1) == failed.end();
}

// kBitmapFrag's and kPairFrag's stages (unstructured_stream.h): per strip and tile a record
// (kBitmapFrag: 48 bytes, the bitmap by lane and the counts by lane quad; kPairFrag: 32, a
// word per lane quad), then the values in strip, tile, lane, slot (register) order.
// src: each row's entries by column (zeros among them are skipped).
//
// FragPart builds the row blocks [rb0, rb1) into its own runs (offsets from its own start) and
// statistics; BuildFragStages runs the parts on threads and joins them in row-block order, so
// the stream is the same whatever the number of threads.
struct FragPart {
  std::vector<uint8_t> data;
  std::vector<uint32_t> offsets;  // one per stage, in 16-byte units from this part's start
  UnstStats stats;
  int densest_rb = 0, densest_ks = 0;  // the first stage with stats.max_stage_words
};
void BuildFragPart(const UnstStream& s, const RowSource& src, int whole_min, int rb0, int rb1, FragPart* part) {
  const bool pairs = s.layout == UnstLayout::kPairFrag;
  const int tiles = s.kks / 16;
  const int fixed = pairs ? UnstPairFixedBytes(s.strips, s.kks) : UnstBitmapFixedBytes(s.strips, s.kks);
  const int record = pairs ? kUnstPairTileBytes : kUnstBitmapTileBytes;
  const int row0 = std::min(s.m, rb0 * s.strips * 16), row1 = std::min(s.m, rb1 * s.strips * 16);
  std::vector<int> cursor(src.start + row0, src.start + row1);  // each row's next entry
  // One stage: per (strip, tile, lane) its slots' values (0: none; a kept value is never +0).
  std::vector<uint16_t> slot(static_cast<size_t>(s.strips) * tiles * 256);
  std::vector<uint8_t> run;
  std::vector<char> whole(static_cast<size_t>(s.strips) * tiles, 0);
  UnstStats& stats = part->stats;
  part->offsets.reserve(static_cast<size_t>(rb1 - rb0) * s.kstages);
  for (int rb = rb0; rb < rb1; ++rb) {
    for (int ks = 0; ks < s.kstages; ++ks) {
      std::fill(slot.begin(), slot.end(), 0);
      int values = 0;
      for (int q = 0; q < s.strips; ++q) {
        const int r0 = (rb * s.strips + q) * 16;
        for (int rr = 0; rr < 16 && r0 + rr < s.m; ++rr) {
          const int r = r0 + rr;
          for (int& i = cursor[r - row0]; i < src.start[r + 1] && src.cols[i] < (ks + 1) * s.kks; ++i) {
            if (!IsNonzero(src.vals[i])) continue;
            const int c = src.cols[i] - ks * s.kks;
            const int j = c >> 4, cc = c & 15;
            slot[((static_cast<size_t>(q) * tiles + j) * 32 + UnstBitmapLane(rr, cc)) * 8 + UnstBitmapSlot(rr, cc)] =
                src.vals[i];
            ++values;
          }
        }
      }
      stats.nnz += values;
      // The stage's stored units: values (kBitmapFrag) or registers (kPairFrag; a whole tile's
      // 128 and the padding that aligns it). whole[t]: tile t (strip q, tile j at q tiles + j)
      // is stored whole.
      int units = values;
      if (pairs) {
        units = 0;
        for (int t = 0; t < s.strips * tiles; ++t) {
          int regs = 0;
          for (size_t i = static_cast<size_t>(t) * 256; i < static_cast<size_t>(t + 1) * 256; i += 2)
            regs += (slot[i] | slot[i + 1]) != 0;
          whole[t] = whole_min > 0 && regs >= whole_min;
          if (whole[t]) {
            stats.whole_tiles += 1;
            stats.whole_padding += (4 - units % 4) % 4;
            units = (units + 3) / 4 * 4 + 128;
          } else {
            stats.whole_tiles += regs == 128 && units % 4 == 0;  // (full, and aligned by chance)
            units += regs;
          }
        }
      }
      if (units > stats.max_stage_words) stats.max_stage_words = units, part->densest_rb = rb, part->densest_ks = ks;
      const size_t unit_bytes = pairs ? 4 : 2;
      run.assign(fixed + (unit_bytes * static_cast<size_t>(units) + 15) / 16 * 16, 0);
      int before = 0;  // units of the stage so far
      for (int q = 0; q < s.strips; ++q)
        for (int j = 0; j < tiles; ++j) {
          uint8_t* rec = run.data() + (static_cast<size_t>(q) * tiles + j) * record;
          const bool whole_tile = pairs && whole[static_cast<size_t>(q) * tiles + j];
          if (whole_tile) before = (before + 3) / 4 * 4;  // (the run's zero fill pads)
          for (int lane = 0; lane < 32; ++lane) {
            const uint16_t* v = &slot[((static_cast<size_t>(q) * tiles + j) * 32 + lane) * 8];
            if (pairs) {
              uint32_t word;
              std::memcpy(&word, rec + 4 * (lane / 4), 4);
              if (lane % 4 == 0) word = static_cast<uint32_t>(before) << 16;
              for (int i = 0; i < 4; ++i) {
                if (!whole_tile && (v[2 * i] | v[2 * i + 1]) == 0) continue;
                word |= 1u << (4 * (lane % 4) + i);
                const uint32_t w = static_cast<uint32_t>(v[2 * i + 1]) << 16 | v[2 * i];
                std::memcpy(run.data() + fixed + 4 * static_cast<size_t>(before), &w, 4);
                ++before;
              }
              std::memcpy(rec + 4 * (lane / 4), &word, 4);
              continue;
            }
            if (lane % 4 == 0) {
              const uint16_t c = static_cast<uint16_t>(before);
              std::memcpy(rec + 32 + 2 * (lane / 4), &c, 2);
            }
            uint8_t bits = 0;
            for (int i = 0; i < 8; ++i) {
              if (v[i] == 0) continue;
              bits |= static_cast<uint8_t>(1u << i);
              std::memcpy(run.data() + fixed + 2 * static_cast<size_t>(before), &v[i], 2);
              ++before;
            }
            rec[lane] = bits;
          }
        }
      part->offsets.push_back(static_cast<uint32_t>(std::min<size_t>(part->data.size() / 16, 0xffffffffull)));
      part->data.insert(part->data.end(), run.begin(), run.end());
    }
  }
}

// Sets s.offsets, s.data, s.stats: the row blocks in parts of about equal nonzeros, one a thread
// (`threads`, or with 0 the hardware's, keeping at least 32 stages' work a part), joined in order.
std::string BuildFragStages(UnstStream& s, const RowSource& src, int max_stage_words, int whole_min, int threads) {
  const int64_t stage_cells = static_cast<int64_t>(s.strips) * s.kks * 16;  // a stage's slots
  const int64_t work = static_cast<int64_t>(s.row_blocks) * s.kstages * stage_cells + src.start[s.m];
  const int parts =
      std::min(threads > 0 ? threads : ResolveThreads(0, work, 32 * stage_cells), std::max(s.row_blocks, 1));
  // Part boundaries by the entries before each row block, plus its stages' fixed work.
  const int rows_per_block = s.strips * 16;
  auto cost = [&](int rb) -> int64_t {
    return static_cast<int64_t>(src.start[std::min(s.m, rb * rows_per_block)]) +
           static_cast<int64_t>(rb) * s.kstages * stage_cells / 8;
  };
  std::vector<int> bound(parts + 1, s.row_blocks);
  bound[0] = 0;
  for (int t = 1; t < parts; ++t) {
    const int64_t target = cost(s.row_blocks) * t / parts;
    int lo = bound[t - 1], hi = s.row_blocks;  // the first row block whose cost reaches target
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (cost(mid) < target) lo = mid + 1; else hi = mid;
    }
    bound[t] = lo;
  }
  std::vector<FragPart> part(parts);
  if (!ForkJoinOrFail(parts, [&](int t) { BuildFragPart(s, src, whole_min, bound[t], bound[t + 1], &part[t]); }))
    return kNoHostMemory;
  size_t bytes = 0, stages = 0;
  for (const FragPart& p : part) bytes += p.data.size(), stages += p.offsets.size();
  if (bytes / 16 > 0xffffffffull) return "the stream is over 64 GB";
  s.data.reserve(bytes);
  s.offsets.reserve(stages + 1);
  int densest_rb = 0, densest_ks = 0;
  for (const FragPart& p : part) {
    const uint32_t base = static_cast<uint32_t>(s.data.size() / 16);
    for (uint32_t o : p.offsets) s.offsets.push_back(base + o);
    s.data.insert(s.data.end(), p.data.begin(), p.data.end());
    s.stats.nnz += p.stats.nnz;
    s.stats.whole_tiles += p.stats.whole_tiles;
    s.stats.whole_padding += p.stats.whole_padding;
    if (p.stats.max_stage_words > s.stats.max_stage_words)
      s.stats.max_stage_words = p.stats.max_stage_words, densest_rb = p.densest_rb, densest_ks = p.densest_ks;
  }
  s.offsets.push_back(static_cast<uint32_t>(s.data.size() / 16));
  return CapacityError(s, densest_rb, densest_ks, max_stage_words);
}

}  // namespace

std::string BuildUnstStream(int m, int k, const int* row_offsets, const int* column_indices, const uint16_t* values16,
                            int strips, int kks, int max_stage_words, UnstStream* out, UnstLayout layout,
                            int whole_min, int threads) {
  if (m <= 0 || k <= 0) return "m and k must be positive";
  if (strips <= 0 || strips > 64) return "strips per row block must be in 1..64";
  if (kks <= 0 || kks % 16 != 0 || kks > 2048) return "the stage width must be a multiple of 16 in 16..2048";
  const bool wg = layout == UnstLayout::kWg64;
  if (wg && (strips % 4 != 0 || kks % 64 != 0))
    return "the warpgroup layout needs strips per row block a multiple of 4 and a stage width a multiple of 64";
  if ((layout == UnstLayout::kBitmapFrag || layout == UnstLayout::kPairFrag) && strips * kks > 4096)
    return "the bitmap and pair layouts need strips per row block times the stage width at most 4096 (16-bit counts)";
  if (whole_min < 0 || whole_min > 128) return "the whole-tile threshold must be in 0..128 registers";
  if (whole_min > 0 && layout != UnstLayout::kPairFrag) return "only the pair layout stores tiles whole";
  if (row_offsets[0] != 0) return "row_offsets[0] must be 0";
  for (int r = 0; r < m; ++r)
    if (row_offsets[r + 1] < row_offsets[r]) return "row_offsets must not decrease";
  UnstStream& s = *out;
  s = UnstStream{};
  s.m = m, s.k = k, s.strips = strips, s.kks = kks, s.layout = layout;
  const int nstrips = (m + 15) / 16;
  s.row_blocks = (nstrips + strips - 1) / strips;
  s.kstages = (k + kks - 1) / kks;

  // The rows as they are when each is in column order (as CSR usually is): no copy. Checked on
  // threads, in bands of rows of about equal entries: a column out of range, a column repeated
  // among a row's nonzeros (+0 and -0 are not nonzeros). A row out of column order is sorted in a
  // scratch copy to check it; if there is one, every row's nonzeros are copied in column order.
  // The error reported is the first row's (in row order): its column out of range, else its
  // smallest repeated column.
  const int parts = std::min(threads > 0 ? threads : ResolveThreads(0, row_offsets[m] + int64_t{m}, 1 << 16), m);
  std::vector<std::string> errors(parts);
  std::vector<int> error_row(parts, m);
  std::vector<char> unsorted(parts, 0);
  auto band = [&](int part) {  // the first row of band `part`: rows of about equal entries + 1
    if (part >= parts) return m;
    const int64_t target = (static_cast<int64_t>(row_offsets[m]) + m) * part / parts;
    int lo = 0, hi = m;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (static_cast<int64_t>(row_offsets[mid]) + mid < target) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  const bool checked = ForkJoinOrFail(parts, [&](int t) {
    std::vector<int> scratch;
    for (int r = band(t), r1 = band(t + 1); r < r1; ++r) {
      bool in_order = true;
      int previous = -1, last_nonzero = -1, repeated = -1;
      for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i) {
        const int c = column_indices[i];
        if (c < 0 || c >= k) {
          errors[t] = "column index " + std::to_string(c) + " of row " + std::to_string(r) + " out of range";
          error_row[t] = r;
          return;
        }
        in_order = in_order && c >= previous;
        previous = c;
        if (!IsNonzero(values16[i])) continue;
        if (c == last_nonzero && repeated < 0) repeated = c;
        last_nonzero = c;
      }
      if (!in_order) {
        unsorted[t] = 1;
        scratch.clear();
        for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i)
          if (IsNonzero(values16[i])) scratch.push_back(column_indices[i]);
        std::sort(scratch.begin(), scratch.end());
        const auto twin = std::adjacent_find(scratch.begin(), scratch.end());
        repeated = twin == scratch.end() ? -1 : *twin;
      }
      if (repeated >= 0) {
        errors[t] = "repeated column " + std::to_string(repeated) + " in row " + std::to_string(r);
        error_row[t] = r;
        return;
      }
    }
  });
  if (!checked) return kNoHostMemory;
  for (int t = 0; t < parts; ++t)
    if (error_row[t] < m) return errors[t];
  RowSource src{row_offsets, column_indices, values16};
  std::vector<int> start, cols;
  std::vector<uint16_t> vals;
  if (std::find(unsorted.begin(), unsorted.end(), 1) != unsorted.end()) {
    start.assign(m + 1, 0);
    for (int r = 0; r < m; ++r)
      start[r + 1] = start[r] + static_cast<int>(std::count_if(values16 + row_offsets[r], values16 + row_offsets[r + 1], IsNonzero));
    cols.resize(start[m]);
    vals.resize(start[m]);
    const bool copied = ForkJoinOrFail(parts, [&](int t) {
      std::vector<std::pair<int, uint16_t>> row;
      for (int r = band(t), r1 = band(t + 1); r < r1; ++r) {
        row.clear();
        for (int i = row_offsets[r]; i < row_offsets[r + 1]; ++i)
          if (IsNonzero(values16[i])) row.push_back({column_indices[i], values16[i]});
        std::sort(row.begin(), row.end(),
                  [](const std::pair<int, uint16_t>& x, const std::pair<int, uint16_t>& y) { return x.first < y.first; });
        for (size_t j = 0; j < row.size(); ++j) cols[start[r] + j] = row[j].first, vals[start[r] + j] = row[j].second;
      }
    });
    if (!copied) return kNoHostMemory;
    src = RowSource{start.data(), cols.data(), vals.data()};
  }
  if (layout == UnstLayout::kBitmapFrag || layout == UnstLayout::kPairFrag)
    return BuildFragStages(s, src, max_stage_words, whole_min, threads);

  const int header = UnstHeaderBytes(layout, strips, kks);
  const int segments = UnstSegments(layout, strips, kks), kblocks = kks / 64;
  const bool by_row = layout == UnstLayout::kRows;
  std::vector<int> cursor(src.start, src.start + m);  // each row's next entry
  std::vector<std::pair<int, uint16_t>> strip;
  std::vector<uint16_t> starts(segments + 1);
  std::vector<uint32_t> words;
  int densest_rb = 0, densest_ks = 0;
  s.offsets.reserve(static_cast<size_t>(s.row_blocks) * s.kstages + 1);
  for (int rb = 0; rb < s.row_blocks; ++rb) {
    for (int ks = 0; ks < s.kstages; ++ks) {
      words.clear();
      starts[0] = 0;
      // Segment q: a strip's stage (kStrip16), or unit q / kblocks's k-block q % kblocks (kWg64;
      // a row's k-blocks come in column order, so each row's cursor only moves forward), or a
      // row's stage (kRows: its nonzeros in column order, each word its column in the stage).
      for (int q = 0; q < segments; ++q) {
        if (by_row) {
          const int r = rb * strips * 16 + q;
          if (r < m) {
            const int c1 = std::min(k, (ks + 1) * kks);
            for (int& i = cursor[r]; i < src.start[r + 1] && src.cols[i] < c1; ++i) {
              if (!IsNonzero(src.vals[i])) continue;
              words.push_back(static_cast<uint32_t>(src.cols[i] - ks * kks) << 16 | src.vals[i]);
              ++s.stats.nnz;
            }
          }
          if (words.size() > 0xffff) return "a stage holds more than 65535 nonzeros: use fewer strips or a narrower stage";
          starts[q + 1] = static_cast<uint16_t>(words.size());
          continue;
        }
        const int kb = wg ? q % kblocks : 0;
        const int r0 = wg ? (rb * strips + q / kblocks * 4) * 16 : (rb * strips + q) * 16;
        const int c1 = std::min(k, wg ? ks * kks + (kb + 1) * 64 : (ks + 1) * kks);
        strip.clear();
        for (int rr = 0; rr < (wg ? 64 : 16); ++rr) {
          const int r = r0 + rr;
          if (r >= m) break;
          for (int& i = cursor[r]; i < src.start[r + 1] && src.cols[i] < c1; ++i) {
            if (!IsNonzero(src.vals[i])) continue;
            const int c = src.cols[i] - ks * kks;
            const int off = wg ? UnstWgOffset(rr, c - 64 * kb) : UnstImageOffset(c >> 4, rr, c & 15);
            strip.push_back({off, src.vals[i]});
          }
        }
        s.stats.nnz += static_cast<long long>(strip.size());
        OrderByBank(&strip, &s.stats);
        for (const auto& e : strip) words.push_back(static_cast<uint32_t>(e.first) << 16 | e.second);
        if (words.size() > 0xffff) return "a stage holds more than 65535 nonzeros: use fewer strips or a narrower stage";
        starts[q + 1] = static_cast<uint16_t>(words.size());
      }
      if (static_cast<int>(words.size()) > s.stats.max_stage_words) {
        s.stats.max_stage_words = static_cast<int>(words.size());
        densest_rb = rb, densest_ks = ks;
      }
      if (s.data.size() / 16 > 0xffffffffull) return "the stream is over 64 GB";
      s.offsets.push_back(static_cast<uint32_t>(s.data.size() / 16));
      const size_t at = s.data.size();
      const size_t bytes = (header + 4 * words.size() + 15) / 16 * 16;
      s.data.resize(at + bytes, 0);
      std::memcpy(s.data.data() + at, starts.data(), 2 * starts.size());
      std::memcpy(s.data.data() + at + header, words.data(), 4 * words.size());
    }
  }
  s.offsets.push_back(static_cast<uint32_t>(s.data.size() / 16));
  return CapacityError(s, densest_rb, densest_ks, max_stage_words);
}

namespace {

// kBitmapFrag's and kPairFrag's runs back to the dense matrix (`dense` zero, M x K).
std::string FragToDense(const UnstStream& s, std::vector<uint16_t>* dense) {
  const bool pairs = s.layout == UnstLayout::kPairFrag;
  const int tiles = s.kks / 16;
  const size_t fixed = pairs ? UnstPairFixedBytes(s.strips, s.kks) : UnstBitmapFixedBytes(s.strips, s.kks);
  const size_t record = pairs ? kUnstPairTileBytes : kUnstBitmapTileBytes, unit = pairs ? 4 : 2;
  for (int rb = 0; rb < s.row_blocks; ++rb) {
    for (int ks = 0; ks < s.kstages; ++ks) {
      const size_t i = static_cast<size_t>(rb) * s.kstages + ks;
      const std::string at = "stage " + std::to_string(i);
      if (s.offsets[i + 1] < s.offsets[i]) return "offsets must not decrease";
      const uint8_t* run = s.data.data() + static_cast<size_t>(s.offsets[i]) * 16;
      const size_t bytes = static_cast<size_t>(s.offsets[i + 1] - s.offsets[i]) * 16;
      if (bytes < fixed) return at + ": the run is shorter than its tiles' bitmaps";
      size_t before = 0;
      for (int q = 0; q < s.strips; ++q)
        for (int j = 0; j < tiles; ++j) {
          const uint8_t* rec = run + (static_cast<size_t>(q) * tiles + j) * record;
          // kPairFrag: a whole tile (every quad's 16 bits set, the first count a multiple of 4)
          // may start up to 3 registers after the ones before it and store zero registers.
          bool whole = pairs;
          for (int w = 0; w < 8 && pairs; ++w) {
            uint32_t word;
            std::memcpy(&word, rec + 4 * w, 4);
            whole = whole && (word & 0xffffu) == 0xffffu && (w > 0 || (word >> 16) % 4 == 0);
            if (w == 0 && whole && (word >> 16) >= before && (word >> 16) < before + 4) before = word >> 16;
          }
          for (int lane = 0; lane < 32; ++lane) {
            uint32_t bits;  // the lane's slots (kPairFrag: each register's bit for both its slots)
            if (pairs) {
              uint32_t word;
              std::memcpy(&word, rec + 4 * (lane / 4), 4);
              if (lane % 4 == 0 && (word >> 16) != before) return at + ": a lane quad's count is not the registers before it";
              const uint32_t regs = word >> (4 * (lane % 4)) & 15;
              bits = 0;
              for (int r = 0; r < 4; ++r)
                if (regs >> r & 1) bits |= 3u << (2 * r);
            } else {
              if (lane % 4 == 0) {
                uint16_t c;
                std::memcpy(&c, rec + 32 + 2 * (lane / 4), 2);
                if (c != before) return at + ": a lane quad's count is not the values before it";
              }
              bits = rec[lane];
            }
            for (int slot = 0; slot < 8; ++slot) {
              if (!(bits >> slot & 1)) continue;
              // The unit holding this slot: the next value, or the next register (both halves).
              if (fixed + unit * (before + 1) > bytes) return at + ": values past the run";
              // Row and column of (lane, slot): the inverse of UnstBitmapLane / UnstBitmapSlot.
              const int rr = (lane >> 2) + 8 * ((slot >> 1) & 1), cc = 2 * (lane & 3) + (slot & 1) + 8 * (slot >> 2);
              const int r = (rb * s.strips + q) * 16 + rr, col = ks * s.kks + 16 * j + cc;
              uint16_t v;
              std::memcpy(&v, run + fixed + unit * before + (pairs ? 2 * (slot & 1) : 0), 2);
              if (pairs && (slot & 1)) {
                uint16_t lo;
                std::memcpy(&lo, run + fixed + unit * before, 2);
                if (((lo | v) & 0x7fff) == 0 && !whole) return at + ": a zero register stored";
              }
              if (r >= s.m || col >= s.k) {
                if (!pairs || (v & 0x7fff) != 0) return at + ": a bit set outside the matrix";
              } else if (!pairs && (v & 0x7fff) == 0) {
                return at + ": a zero value stored";
              } else {
                (*dense)[static_cast<size_t>(r) * s.k + col] = v;
              }
              if (!pairs || (slot & 1)) ++before;
            }
          }
        }
    }
  }
  return "";
}

}  // namespace

std::string UnstStreamToDense(const UnstStream& s, std::vector<uint16_t>* dense) {
  const size_t stages = static_cast<size_t>(s.row_blocks) * s.kstages;
  if (s.offsets.size() != stages + 1) return "offsets must have row_blocks kstages + 1 entries";
  if (static_cast<size_t>(s.offsets.back()) * 16 != s.data.size()) return "the last offset must be the data's end";
  dense->assign(static_cast<size_t>(s.m) * s.k, 0);
  if (s.layout == UnstLayout::kBitmapFrag || s.layout == UnstLayout::kPairFrag) return FragToDense(s, dense);
  const bool wg = s.layout == UnstLayout::kWg64;
  const int header = UnstHeaderBytes(s.layout, s.strips, s.kks);
  const int segments = UnstSegments(s.layout, s.strips, s.kks), kblocks = s.kks / 64;
  for (int rb = 0; rb < s.row_blocks; ++rb) {
    for (int ks = 0; ks < s.kstages; ++ks) {
      const size_t i = static_cast<size_t>(rb) * s.kstages + ks;
      if (s.offsets[i + 1] < s.offsets[i]) return "offsets must not decrease";
      const uint8_t* run = s.data.data() + static_cast<size_t>(s.offsets[i]) * 16;
      const size_t bytes = static_cast<size_t>(s.offsets[i + 1] - s.offsets[i]) * 16;
      std::vector<uint16_t> starts(segments + 1);
      std::memcpy(starts.data(), run, 2 * starts.size());
      if (starts[0] != 0 || header + 4 * static_cast<size_t>(starts[segments]) > bytes)
        return "stage " + std::to_string(i) + ": header does not fit its run";
      for (int q = 0; q < segments; ++q) {
        if (starts[q + 1] < starts[q]) return "stage " + std::to_string(i) + ": word starts decrease";
        for (int w = starts[q]; w < starts[q + 1]; ++w) {
          uint32_t word;
          std::memcpy(&word, run + header + 4 * static_cast<size_t>(w), 4);
          const int off = static_cast<int>(word >> 16);
          int r, col;
          bool outside;
          if (s.layout == UnstLayout::kRows) {
            r = rb * s.strips * 16 + q, col = ks * s.kks + off;
            outside = off >= s.kks;
            if (!outside && w > starts[q] && off <= static_cast<int>(run[header + 4 * static_cast<size_t>(w - 1) + 2] |
                                                                      run[header + 4 * static_cast<size_t>(w - 1) + 3] << 8))
              return "stage " + std::to_string(i) + ": row " + std::to_string(r) + "'s columns are not increasing";
          } else if (wg) {
            const int rr = off >> 7, c = ((((off >> 4) & 7) ^ (rr & 7)) << 3) | ((off >> 1) & 7);
            r = (rb * s.strips + q / kblocks * 4) * 16 + rr, col = ks * s.kks + q % kblocks * 64 + c;
            outside = off >= 8192;
          } else {
            const int t = off >> 9, p = (off & 511) >> 1, blk = p >> 6;
            const int rr = (blk & 1) * 8 + ((p >> 3) & 7), c = (blk >> 1) * 8 + (p & 7);
            r = (rb * s.strips + q) * 16 + rr, col = ks * s.kks + t * 16 + c;
            outside = t >= s.kks / 16;
          }
          if (((off & 1) && s.layout != UnstLayout::kRows) || outside || r >= s.m || col >= s.k)
            return "stage " + std::to_string(i) + ": word " + std::to_string(w) + " points outside the matrix";
          uint16_t& d = (*dense)[static_cast<size_t>(r) * s.k + col];
          if (d != 0) return "stage " + std::to_string(i) + ": position written twice";
          d = static_cast<uint16_t>(word & 0xffff);
        }
      }
    }
  }
  return "";
}

}  // namespace sparse
