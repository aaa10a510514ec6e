#ifndef SPARSE_BENCH_CONTEXT_H_
#define SPARSE_BENCH_CONTEXT_H_
// What every part of the CUDA harness shares: statuses turned into BenchErrors, and the
// process-wide context (one stream, the library handles, the L2 flush buffer, a pool of
// events). Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "bench/bench.h"
#include "bench/libs.h"
#include "cuda/common/device_buffer.h"

namespace sparse {
namespace bench {

// Throws a BenchError coded with the status's name when `e` / `s` is not success; `what`
// says which call failed. Check also clears a non-sticky CUDA error so that later cases run.
void Check(cudaError_t e, const char* what);
void CheckCublas(cublasStatus_t s, const char* what);
void CheckCusparse(cusparseStatus_t s, const char* what);
void CheckCusparseLt(cusparseStatus_t s, const char* what);

// Allocates `bytes` on the device into `buffer`, or throws. NOTE: a 0-byte request still
// gets a valid (16-byte) allocation, so library descriptors never see a null pointer.
void AllocateOrThrow(DeviceBuffer* buffer, size_t bytes);

// The library data type of `t` (CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF).
cudaDataType CudaType(DType t);

// A CUDA event (default flags), destroyed on scope exit.
class Event {
 public:
  Event() { Check(cudaEventCreate(&event_), "cudaEventCreate"); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// The process-wide context. A library that is missing leaves its handle null and says why
// in its `*_reason` (an implementation that needs it reports that reason as unavailable).
struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;  // every launch, copy and event of the harness runs here
  int64_t l2_bytes = 0;
  std::string pci;  // the device's PCI bus id, for NVML
  cublasHandle_t cublas = nullptr;
  std::string cublas_reason;
  cusparseHandle_t cusparse = nullptr;
  std::string cusparse_reason;
  // cuSPARSELt is made on first use (CusparseLt()), not with the others: the library is
  // large and only the `cusparselt` baseline needs it.
  LtOpaque* cusparselt = nullptr;  // the initialized cusparseLtHandle_t; null until made or when missing
  std::string cusparselt_reason;
  int cusparselt_version = 0;  // cusparseLtGetVersion: major * 1000 + minor * 100 + patch
  bool cusparselt_tried = false;
  DeviceBuffer flush;  // twice the L2 size: writing it evicts every operand line
  std::vector<cudaEvent_t> events;
  double clock_min = -1, clock_max = -1;  // SM clock (MHz) seen by SampleClock in this case

  // Grows the event pool to at least `n` events.
  void EnsureEvents(size_t n);
  // Records the current SM clock (NVML) into clock_min / clock_max.
  void SampleClock();
  // The cuSPARSELt handle, loading the library and calling cusparseLtInit on the first call;
  // null with `cusparselt_reason` set when the library is missing, older than 0.5.2 (its
  // enum values differ) or cusparseLtInit failed.
  const LtOpaque* CusparseLt();
};

// The context, created on the first call (throws when there is no usable device).
// NOTE: never destroyed: tearing down library handles at process exit races the CUDA
// runtime's own teardown. Callers hold BenchMutex() (one benchmark at a time).
Context& GetContext();
std::mutex& BenchMutex();

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_CONTEXT_H_
