// The streaming engine's per-stage trace, taken and reported (the workbenches' `stages` modes:
// engine_probe.cu, unst_probe.cu).
#ifndef SPARSE_SCRIPTS_STAGE_REPORT_H_
#define SPARSE_SCRIPTS_STAGE_REPORT_H_
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda/spmm/stream_engine.cuh"
#include "scripts/gpu/probe/probe_util.h"

namespace sparse {
namespace probe {

// One launch's stamps: t per block kTraceWords (Trace), u per block and stage index four
// (StageTrace: 0 the first consumer warp begins to wait, 1 the stage is there, 2 computed and
// released, 3 the producer issued it), SM clocks; us microseconds a cycle (the device's nominal
// clock); events the median event time of the timed launches.
struct StageTrace {
  int grid = 0;
  std::vector<unsigned long long> t, u;
  double us = 0, events = 0;
};

// Runs timed() (event-timed launches of a kernel with `args` and `grid` blocks, returning their
// median) with the engine's trace buffers attached to args, and keeps the last launch's stamps.
template <class Timed>
StageTrace TraceStages(cuda::engine::Args& args, int grid, Timed timed) {
  namespace en = cuda::engine;
  StageTrace r;
  r.grid = grid;
  DevBuf tr(static_cast<size_t>(grid) * en::kTraceWords * 8);
  DevBuf st(static_cast<size_t>(grid) * en::kStageTraceMax * 4 * 8);
  CK(cudaMemset(tr.p, 0, tr.bytes));
  CK(cudaMemset(st.p, 0, st.bytes));
  args.trace = static_cast<unsigned long long*>(tr.p);
  args.stage_trace = static_cast<unsigned long long*>(st.p);
  r.events = timed();
  r.t.resize(static_cast<size_t>(grid) * en::kTraceWords);
  r.u.resize(static_cast<size_t>(grid) * en::kStageTraceMax * 4);
  CK(cudaMemcpy(r.t.data(), tr.p, r.t.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.u.data(), st.p, r.u.size() * 8, cudaMemcpyDeviceToHost));
  args.trace = nullptr, args.stage_trace = nullptr;
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  r.us = 1e3 / clock_khz;
  return r;
}

// Per stage index the median over the blocks that have it, in us from the block's entry; then
// per block the sums of the consumers' busy time (there -> released) and of their waits.
inline void PrintStages(const StageTrace& r) {
  const int grid = r.grid, trace_words = cuda::engine::kTraceWords, stage_max = cuda::engine::kStageTraceMax;
  const std::vector<unsigned long long>&t = r.t, &u = r.u;
  const double us = r.us;
  auto med = [](std::vector<double> x) {
    if (x.empty()) return 0.0;
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  std::printf("  %5s %6s | %8s %8s %8s %8s | %8s %8s\n", "stage", "blocks", "issued", "waiting", "there", "done", "busy",
              "waited");
  std::vector<double> busy_sum(grid, 0), wait_sum(grid, 0);
  std::vector<int> count(grid, 0);
  for (int q = 0; q < stage_max; ++q) {
    std::vector<double> is, w0, w1, w2, busy, waited;
    for (int b = 0; b < grid; ++b) {
      const unsigned long long* x = &u[(static_cast<size_t>(b) * stage_max + q) * 4];
      const unsigned long long e = t[static_cast<size_t>(b) * trace_words + 0];
      if (x[2] == 0 || x[2] < e) continue;
      is.push_back((static_cast<double>(x[3]) - e) * us);
      w0.push_back((static_cast<double>(x[0]) - e) * us);
      w1.push_back((static_cast<double>(x[1]) - e) * us);
      w2.push_back((static_cast<double>(x[2]) - e) * us);
      busy.push_back((static_cast<double>(x[2]) - x[1]) * us);
      waited.push_back((static_cast<double>(x[1]) - x[0]) * us);
      busy_sum[b] += busy.back(), wait_sum[b] += waited.back(), ++count[b];
    }
    if (is.empty()) break;
    std::printf("  %5d %6zu | %8.2f %8.2f %8.2f %8.2f | %8.3f %8.3f\n", q, is.size(), med(is), med(w0), med(w1), med(w2),
                med(busy), med(waited));
  }
  std::vector<double> bs, ws, ns;
  for (int b = 0; b < grid; ++b)
    if (count[b]) bs.push_back(busy_sum[b]), ws.push_back(wait_sum[b]), ns.push_back(count[b]);
  std::printf("  per block (median): %.0f stages traced, consumers busy %.2f us, waiting %.2f us\n", med(ns), med(bs),
              med(ws));
  // The blocks' own stamps (Trace): entry and end on the global timer (ns, across SMs), the
  // first stage, the last stage's end, the partners' sums and the end on the SM clock.
  unsigned long long g0 = ~0ull, g1 = 0;
  for (int b = 0; b < grid; ++b) {
    const unsigned long long* x = &t[static_cast<size_t>(b) * trace_words];
    if (x[4] && x[5]) g0 = std::min(g0, x[4]), g1 = std::max(g1, x[5]);
  }
  std::vector<double> entry, first, last, sums, end;
  for (int b = 0; b < grid; ++b) {
    const unsigned long long* x = &t[static_cast<size_t>(b) * trace_words];
    if (!x[4] || !x[5]) continue;
    entry.push_back((x[4] - g0) * 1e-3);
    if (x[1] >= x[0]) first.push_back((static_cast<double>(x[1]) - x[0]) * us);
    if (x[2] >= x[0]) last.push_back((static_cast<double>(x[2]) - x[0]) * us);
    if (x[6] >= x[0]) sums.push_back((static_cast<double>(x[6]) - x[0]) * us);
    if (x[3] >= x[0]) end.push_back((static_cast<double>(x[3]) - x[0]) * us);
  }
  // STAGES_CSV=FILE: every block's stamps (its Trace words, then per stage issued / waiting /
  // there / done), SM clock cycles and global-timer ns as taken.
  if (const char* path = std::getenv("STAGES_CSV")) {
    if (FILE* f = std::fopen(path, "w")) {
      for (int b = 0; b < grid; ++b) {
        std::fprintf(f, "%d", b);
        for (int i = 0; i < trace_words; ++i) std::fprintf(f, ",%llu", t[static_cast<size_t>(b) * trace_words + i]);
        for (int q = 0; q < stage_max; ++q)
          for (int i = 0; i < 4; ++i) std::fprintf(f, ",%llu", u[(static_cast<size_t>(b) * stage_max + q) * 4 + i]);
        std::fprintf(f, "\n");
      }
      std::fclose(f);
    }
  }
  auto mx = [](const std::vector<double>& x) { return x.empty() ? 0.0 : *std::max_element(x.begin(), x.end()); };
  std::printf(
      "  blocks: entry after the first block's median %.2f max %.2f us; from entry (median / max): first stage %.2f / "
      "%.2f, last stage done %.2f / %.2f, sums ready %.2f / %.2f, end %.2f / %.2f us; grid span %.2f us, events %.2f us\n",
      med(entry), mx(entry), med(first), mx(first), med(last), mx(last), med(sums), mx(sums), med(end), mx(end),
      g1 > g0 ? (g1 - g0) * 1e-3 : 0.0, r.events);
}

}  // namespace probe
}  // namespace sparse
#endif
