#ifndef SPARSE_BENCH_TIMING_H_
#define SPARSE_BENCH_TIMING_H_
// The timing loop of the CUDA harness: the L2 policy (rotated operand sets or a flush), the
// spacer that keeps the host ahead of the GPU, CUDA-event samples and the CUDA-graph figure;
// and the short warm trial with which a baseline picks its fastest configuration.
// Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/context.h"
#include "bench/implementation.h"

namespace sparse {
namespace bench {

// Sets `impl` up and times it into `out` (l2_mode, copies, detail, samples_ms, spacer_us,
// graph_ms_per_launch). L2 policy: operands of 2 x L2 or more are cold anyway ("none");
// smaller ones are rotated through enough copies to span 3 x L2 when that takes at most 64
// copies ("rotate"), else the L2 is flushed by a 2 x L2 memset before each launch, outside
// the timed region ("flush"). Throws BenchError.
void TimeImplementation(Implementation& impl, const BenchOptions& o, Context& ctx, ImplResult* out);

// One candidate of a warm trial: `label` in the list of times ("CSR_ALG2 12.3 us"),
// `error_label` before its error when it fails ("CUSPARSE_SPMM_CSR_ALG2: ...").
struct TrialCandidate {
  std::string label;
  std::string error_label;
};

struct TrialOutcome {
  int best = -1;       // the fastest candidate's index; -1 when none ran
  std::string trials;  // "label 12.3 us, label 14.0 us": mean time per launch of each that ran
  std::string errors;  // "error_label: message; ...": each that threw a BenchError
};

// Launches candidate-specific work: launch 0 is the untimed warm-up, 1..launches are timed.
using TrialLauncher = std::function<void(int launch)>;

// A short warm trial on `stream` (which must be idle): for each candidate, `prepare(i)` makes
// it ready and returns its launcher; the warm-up runs, then `launches` launches between two
// events. A candidate that throws a BenchError is skipped (its error noted, the stream
// drained). The launcher is destroyed before the next candidate is prepared.
TrialOutcome PickFastest(const std::vector<TrialCandidate>& candidates, int launches, cudaStream_t stream,
                         const std::function<TrialLauncher(int candidate)>& prepare);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_TIMING_H_
