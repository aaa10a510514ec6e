#ifndef SPARSE_CPU_PARALLEL_H_
#define SPARSE_CPU_PARALLEL_H_
// Minimal fork-join helpers over std::thread for the CPU kernels. Threads are started per
// call: the kernels are coarse (milliseconds and up), so a pool would buy little.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace sparse {

// The number of threads to use: `requested` when positive, else the hardware's; never more
// than `work_items / min_items_per_thread` (tiny problems run on the calling thread).
inline int ResolveThreads(int requested, int64_t work_items, int64_t min_items_per_thread = 1 << 15) {
  int t = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  t = std::max(t, 1);
  const int64_t cap = std::max<int64_t>(1, work_items / std::max<int64_t>(1, min_items_per_thread));
  return static_cast<int>(std::min<int64_t>(t, cap));
}

// Runs fn(begin, end) over `parts` contiguous slices of [0, count), one per thread; the
// calling thread takes the first slice.
template <typename Fn>
void ForkJoin(int parts, Fn&& fn) {
  if (parts <= 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(parts - 1));
  for (int t = 1; t < parts; ++t) pool.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (auto& th : pool) th.join();
}

template <typename Fn>
void ParallelForRange(int64_t count, int threads, Fn&& fn) {
  const int parts = ResolveThreads(threads, count);
  ForkJoin(parts, [&](int t) {
    const int64_t begin = count * t / parts;
    const int64_t end = count * (t + 1) / parts;
    if (begin < end) fn(begin, end);
  });
}

// Splits rows [0, m) into contiguous bands of about equal cost, where a row costs its
// nonzeros plus one (writing it), and runs fn(row_begin, row_end) for each band.
// NOTE: cost(r) = row_offsets[r] + r is non-decreasing, so each band boundary is one
// binary search: no per-row pass is needed to balance the split.
template <typename Fn>
void ParallelForRows(int m, const int* row_offsets, int threads, Fn&& fn) {
  const int64_t total = static_cast<int64_t>(row_offsets[m]) + m;
  const int parts = ResolveThreads(threads, total, 1 << 12);
  ForkJoin(parts, [&](int t) {
    auto boundary = [&](int part) -> int {
      if (part <= 0) return 0;
      if (part >= parts) return m;
      const int64_t target = total * part / parts;
      int lo = 0, hi = m;  // first row whose prefix cost reaches target
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (static_cast<int64_t>(row_offsets[mid]) + mid < target) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const int begin = boundary(t);
    const int end = boundary(t + 1);
    if (begin < end) fn(begin, end);
  });
}

}  // namespace sparse
#endif  // SPARSE_CPU_PARALLEL_H_
