// The timing loop of the CUDA harness (see timing.h).
#if SPARSE_WITH_CUDA
#include "bench/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "bench/device_util.h"

namespace sparse {
namespace bench {

namespace {
constexpr int kMaxCopies = 64;
}  // namespace

void TimeImplementation(Implementation& r, const BenchOptions& o, Context& ctx, ImplResult* out) {
  const size_t fp = std::max<size_t>(r.Footprint(), 1);
  const size_t l2 = static_cast<size_t>(ctx.l2_bytes);
  int copies = 1;
  std::string mode = "none";
  if (fp < 2 * l2) {
    const size_t want = (3 * l2 + fp - 1) / fp;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (want <= kMaxCopies && want * fp < free_b / 2) {
      copies = static_cast<int>(want);
      mode = "rotate";
    } else {
      mode = "flush";
    }
  }
  r.Setup(copies);
  Check(cudaStreamSynchronize(ctx.stream), "setup");
  out->l2_mode = mode;
  out->copies = copies;
  out->detail = r.detail();

  // NOTE: each sample brackets one launch with events. If the host enqueued more slowly than
  // the GPU ran (tiny kernels, libraries with a few microseconds of host work per call), the
  // stream would run dry after the start event and the sample would include the host's
  // launch latency. So a spacer kernel (no memory traffic) runs before each start event,
  // longer than the host needs per iteration: the host stays ahead and the events time the
  // device alone. The flush, when used, runs before the spacer.
  double spacer_us = 20;
  auto timed_batch = [&](int reps, int first, std::vector<double>* samples, std::vector<double>* host_us) {
    ctx.EnsureEvents(2 * static_cast<size_t>(reps));
    for (int i = 0; i < reps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (mode == "flush")
        Check(cudaMemsetAsync(ctx.flush.get(), (first + i) & 0xff, ctx.flush.bytes(), ctx.stream), "flush");
      Check(Spin(static_cast<uint64_t>(spacer_us * 1000), ctx.stream), "spacer");
      Check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "cudaEventRecord");
      r.Launch((first + i) % copies);
      Check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "cudaEventRecord");
      if (host_us) host_us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    ctx.SampleClock();  // the GPU is still busy with the queued launches
    Check(cudaStreamSynchronize(ctx.stream), "timed launches");
    for (int i = 0; i < reps; ++i) {
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, ctx.events[2 * i], ctx.events[2 * i + 1]), "cudaEventElapsedTime");
      samples->push_back(ms);
    }
  };

  // Warm-up (module load, library heuristics, clocks), timed only to size the run and the
  // spacer (twice the host's median time per iteration, 10 to 200 us).
  std::vector<double> warm, host;
  timed_batch(std::max(o.warmup, 3), 0, &warm, &host);
  std::sort(warm.begin(), warm.end());
  std::sort(host.begin(), host.end());
  spacer_us = std::min(200.0, std::max(10.0, 2 * host[host.size() / 2]));
  const double estimate = std::max(warm[warm.size() / 2], 1e-4);
  int reps = static_cast<int>(std::ceil(o.min_ms / estimate));
  reps = std::max(o.min_reps, std::min(o.max_reps, reps));
  reps = std::max(reps, 1);
  out->samples_ms.reserve(reps);
  timed_batch(reps, 0, &out->samples_ms, nullptr);
  out->spacer_us = spacer_us;

  std::vector<double> sorted = out->samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median < o.graph_below_ms && o.graph_launches > 0) {
    // Launch overhead shown apart: a graph of many launches, time per launch.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    try {
      Check(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
      try {
        for (int i = 0; i < o.graph_launches; ++i) r.Launch(i % copies);
      } catch (...) {
        cudaStreamEndCapture(ctx.stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        graph = nullptr;
        throw;
      }
      Check(cudaStreamEndCapture(ctx.stream, &graph), "cudaStreamEndCapture");
      Check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
      r.PoisonOutput();  // the output check after the timing then reads what the graph wrote
      Check(cudaGraphLaunch(exec, ctx.stream), "cudaGraphLaunch");  // warm-up
      ctx.EnsureEvents(10);
      std::vector<double> g;
      for (int i = 0; i < 5; ++i) {
        if (mode == "flush") Check(cudaMemsetAsync(ctx.flush.get(), i, ctx.flush.bytes(), ctx.stream), "flush");
        Check(cudaEventRecord(ctx.events[2 * i], ctx.stream), "cudaEventRecord");
        Check(cudaGraphLaunch(exec, ctx.stream), "cudaGraphLaunch");
        Check(cudaEventRecord(ctx.events[2 * i + 1], ctx.stream), "cudaEventRecord");
      }
      Check(cudaStreamSynchronize(ctx.stream), "graph launches");
      for (int i = 0; i < 5; ++i) {
        float ms = 0;
        Check(cudaEventElapsedTime(&ms, ctx.events[2 * i], ctx.events[2 * i + 1]), "cudaEventElapsedTime");
        g.push_back(ms);
      }
      std::sort(g.begin(), g.end());
      out->graph_ms_per_launch = g[g.size() / 2] / o.graph_launches;
    } catch (const BenchError&) {
      // Not capturable (a library may allocate inside): no graph figure.
      cudaStreamSynchronize(ctx.stream);
      cudaGetLastError();
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
}

TrialOutcome PickFastest(const std::vector<TrialCandidate>& candidates, int launches, cudaStream_t stream,
                         const std::function<TrialLauncher(int candidate)>& prepare) {
  TrialOutcome out;
  Event a, b;
  float best_ms = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    try {
      const TrialLauncher launch = prepare(static_cast<int>(i));
      launch(0);  // warm-up (heuristics, kernel load)
      Check(cudaEventRecord(a.get(), stream), "cudaEventRecord");
      for (int j = 1; j <= launches; ++j) launch(j);
      Check(cudaEventRecord(b.get(), stream), "cudaEventRecord");
      Check(cudaEventSynchronize(b.get()), "cudaEventSynchronize");
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, a.get(), b.get()), "cudaEventElapsedTime");
      if (best_ms < 0 || ms < best_ms) best_ms = ms, out.best = static_cast<int>(i);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.1f us", out.trials.empty() ? "" : ", ", candidates[i].label.c_str(),
                    ms * 1000 / launches);
      out.trials += buf;
    } catch (const BenchError& e) {
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      if (!out.errors.empty()) out.errors += "; ";
      out.errors += candidates[i].error_label + ": " + e.what();
    }
  }
  return out;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
