#ifndef SPARSE_BENCH_IMPLEMENTATION_H_
#define SPARSE_BENCH_IMPLEMENTATION_H_
// What the harness times, on either device: an Implementation of one op (ours, a library
// baseline, the CPU's dense product), built by its factory in the registry from the case and
// the case's operands. Then, for the CUDA implementations, the helpers they share (the case's
// device operands, slabs, byte counts, reading an output back, prepared inputs); the CPU
// ones read HostOperands (host_operands.h). See registry.h for how to add one.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "common/dtype.h"

namespace sparse {
namespace bench {

// One timed implementation. The harness calls, in this order: CanImplement (may it run this
// case at all? no device work); Footprint (CUDA: for the L2 policy, how many operand sets);
// Setup(copies); Launch(copy), many times (CUDA: each on ctx.stream; CPU: synchronous, timed
// with a steady clock); then Output (for the check). Errors are thrown as BenchError: from
// "ours" they fail the case, from a baseline they make it unavailable with the error as its
// reason.
class Implementation {
 public:
  virtual ~Implementation() = default;
  // Empty when the implementation can run the case, else why not (a library that is not
  // loaded, a dtype it does not take): reported as `reason`, and nothing else is called.
  virtual std::string CanImplement() const { return ""; }
  // Bytes of operands one launch touches (inputs and output), for the L2 decision (CUDA).
  virtual size_t Footprint() const = 0;
  // Allocates `copies` independent operand sets and fills them from the case's operands;
  // builds anything prepared once per matrix (not timed); sets detail(). Untimed. (CPU: one
  // set, the case's host operands.)
  virtual void Setup(int copies) = 0;
  // One launch on operand set `copy` (CUDA: enqueued, asynchronous, on the context's stream).
  virtual void Launch(int copy) = 0;
  // The output of operand set 0 as doubles: SpMM C (m x n, row-major); SDDMM the nnz
  // sampled values in CSR order.
  virtual std::vector<double> Output() = 0;
  // Fills operand set 0's output with NaN (enqueued on the context's stream), so that Output()
  // after later launches checks what they wrote: the harness calls it before the CUDA graph's
  // launches (so the check covers the graph's, launched as a graph launches them). The default
  // does nothing (those implementations' graph launches are checked only by their earlier ones).
  virtual void PoisonOutput() {}
  // How it was called (kernel, algorithm, compute type), reported as `detail`.
  const std::string& detail() const { return detail_; }

 protected:
  std::string detail_;
};

// Bytes of `count` elements of `t`.
inline size_t Bytes(int64_t count, DType t) { return static_cast<size_t>(count) * DTypeBytes(t); }

// What a CPU factory in the registry gets: the name asked for, the case, its host operands
// (made once per case) and the options (threads). All outlive the implementation.
struct HostOperands;
struct CpuImplArgs {
  const std::string& name;
  const BenchCase& c;
  const HostOperands& host;
  const BenchOptions& options;
};

}  // namespace bench
}  // namespace sparse

// ---------------------------------------------------------------------------------------
// The CUDA implementations' helpers. Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>

#include "bench/context.h"
#include "cuda/common/device_buffer.h"

namespace sparse {
namespace bench {

// The case's operands on the device, made once per case (bench_cuda.cc) and read by every
// implementation, which copies what it needs into its own operand sets.
struct Operands {
  DType dtype = DType::kF32;
  int m = 0, k = 0, n = 0, nnz = 0;
  DeviceBuffer offsets;      // m + 1 int32
  DeviceBuffer indices;      // nnz int32 column indices
  DeviceBuffer values;       // nnz of `dtype` (random normals for a pattern-only mask)
  DeviceBuffer row_indices;  // m int32 (the row order), meaningful when has_row_indices
  bool has_row_indices = false;
  DeviceBuffer dense_b;   // SpMM: B, k x n of `dtype`, row-major
  DeviceBuffer lhs, rhs;  // SDDMM: L (m x k) and R (n x k) of `dtype`, row-major
};

// What a factory in the registry gets: the name asked for, the case (host data), its
// device operands and the context (stream, library handles). All outlive the implementation.
struct ImplArgs {
  const std::string& name;
  const BenchCase& c;
  const Operands& operands;
  Context& ctx;
};

// Copies `count` elements of `t` from the device and decodes them (synchronizes `stream`).
std::vector<double> ReadDense(const void* src, size_t count, DType t, cudaStream_t stream);

// One part of an operand set: `bytes` long; when `source` (device memory, `bytes` long) is
// set, Slab::Build copies it into every set, else the implementation fills the part itself.
struct SlabPart {
  size_t bytes = 0;
  const void* source = nullptr;
};

// `copies` operand sets in one allocation, each a list of parts, each part 256-byte aligned.
class Slab {
 public:
  // Allocates the sets and copies every part's source into each (asynchronous on `stream`).
  void Build(const std::vector<SlabPart>& parts, int copies, cudaStream_t stream);
  void* at(int copy, int part) const {
    return static_cast<char*>(buffer_.get()) + per_copy_ * copy + offsets_[part];
  }

 private:
  DeviceBuffer buffer_;
  std::vector<size_t> offsets_;
  size_t per_copy_ = 0;
};

// A kernel's prepared input (the tensor-core tiles TcMatrix, the SDDMM chunk starts
// SddmmTcMask, any weight format built once per matrix): built once, for operand set 0, by
// `build(T&)` (host work, not timed with the kernel), then copied on the device to each of
// the other `copies` sets with T::CopyFrom(const T&, stream). T also has Bytes(). `what`
// names it in errors ("the tensor-core tiles"). Returns the note the implementation appends
// to its detail: "; <noun> <how> in <ms> ms, <MB> MB" (`how`: "built once on the host", or
// what a library does once, e.g. "made once by cusparseLtSpMMACompress").
template <typename T, typename BuildFn>
std::string PrepareOncePerCopy(std::vector<std::unique_ptr<T>>* out, int copies, cudaStream_t s, BuildFn build,
                               const std::string& what, const char* noun, const char* how = "built once on the host") {
  out->clear();
  const auto t0 = std::chrono::steady_clock::now();
  out->push_back(std::make_unique<T>());
  Check(build(*out->back()), ("building " + what).c_str());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (int c = 1; c < copies; ++c) {
    out->push_back(std::make_unique<T>());
    Check(out->back()->CopyFrom(*out->front(), s), ("copying " + what).c_str());
  }
  char buf[192];
  std::snprintf(buf, sizeof(buf), "; %s %s in %.1f ms, %.2f MB", noun, how, ms, out->front()->Bytes() / 1e6);
  return buf;
}

// The prepared input of operand set `copy`, or null when there is none.
template <typename T>
const T* PreparedAt(const std::vector<std::unique_ptr<T>>& prepared, int copy) {
  return copy < static_cast<int>(prepared.size()) ? prepared[copy].get() : nullptr;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_IMPLEMENTATION_H_
