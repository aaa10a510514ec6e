#ifndef SPARSE_BENCH_BENCH_H_
#define SPARSE_BENCH_BENCH_H_
// Host interface of the benchmark harness, for both devices: times our SpMM/SDDMM and the
// baselines (CUDA: dense cuBLAS, cuSPARSE, cuSPARSELt; CPU: the dense fp32 product) on the
// same data, and measures the device's ceilings. Every implementation, CPU or CUDA, is an
// Implementation in one registry (registry.h); Run times a case on either device.
// Plain C++: no CUDA or N-API headers, so the binding and the CPU-only build include it.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dtype.h"

namespace sparse {
namespace bench {

// A failure the binding turns into a JavaScript Error. `code` is the CUDA error name
// (e.g. "cudaErrorMemoryAllocation") or a short tag ("usage", "cpu").
class BenchError : public std::runtime_error {
 public:
  BenchError(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

enum class Op { kSpmm, kSddmm };
enum class Device { kCuda, kCpu };

struct BenchOptions {
  int warmup = 5;            // untimed launches before the samples (and before the estimate).
  int min_reps = 50;         // at least this many timed launches...
  double min_ms = 200.0;     // ...and more, until the samples add up to this much...
  int max_reps = 1000;       // ...but never more than this many.
  double graph_below_ms = 0.05;  // also time a CUDA graph of launches when the median is below this.
  int graph_launches = 100;  // launches captured in that graph.
  bool check = true;         // compare each implementation's output with the reference.
  uint64_t seed = 42;        // dense operands are generated from this seed.
  int threads = 0;           // CPU mode: worker threads (0 = all cores).
};

// The sparse operand, in host memory (owned by the caller; alive for the whole call).
struct HostCsr {
  int rows = 0, cols = 0, nnz = 0;
  const int32_t* row_offsets = nullptr;     // rows + 1
  const int32_t* column_indices = nullptr;  // nnz
  const void* values = nullptr;             // nnz of `dtype` (f16/bf16 as 16-bit patterns); may be null (SDDMM)
  const int32_t* row_indices = nullptr;     // rows, or null (0..rows-1)
};

// One benchmark case. SpMM: C[m x n] = A[m x k] * B[k x n], A = csr (m x k).
// SDDMM: out = (L[m x k] * R[n x k]^T) at the nonzeros of csr (m x n).
struct BenchCase {
  int m = 0, k = 0, n = 0;
  DType dtype = DType::kF32;
  int index_bits = 32;  // our SpMM's column-index width (16 or 32); baselines use int32.
  // Our SpMM's kernel variant (a name from SpmmVariants, e.g. "split_v4_t8_w1"), launched
  // through CudaSpmmVariant; empty = CudaSpmm's own choice (the selection, or
  // SPARSE_SPMM_VARIANT). Used by `sparse bench --tune` and its cache. SDDMM and CPU: unused.
  std::string variant;
  HostCsr csr;
  // Implementations to time, by name (registry.cc): "ours", "cublas_f32", "cublas_tf32",
  // "cublas_f16", "cublas_bf16", "cusparse", "cusparselt" (CUDA; the last SpMM only, 2:4
  // f16/bf16); "ours", "cpu_dense_f32" (CPU).
  std::vector<std::string> impls;
};

struct ImplResult {
  std::string name;
  bool available = false;
  std::string reason;          // why unavailable
  std::string detail;          // e.g. "CUSPARSE_SPMM_CSR_ALG2", "COMPUTE_32F (fp32 accumulate)"
  std::string l2_mode;         // "rotate", "flush" or "none" (CPU: "n/a")
  int copies = 1;              // input copies rotated through
  std::vector<double> samples_ms;
  double graph_ms_per_launch = -1;  // < 0: not measured
  double spacer_us = 0;             // GPU-side spacer before each timed launch (see timing.h)
  double rel_err = -1;              // ||out - ref|| / ||ref||; < 0: not checked
  std::string check_against;        // the reference implementation's name
};

struct BenchResult {
  std::vector<ImplResult> impls;
  int64_t l2_bytes = 0;
  double sm_clock_mhz_min = -1, sm_clock_mhz_max = -1;  // SM clock seen while timing (NVML)
};

struct Ceilings {
  double copy_gbps = 0;  // device-to-device copy, bytes read + written, GB/s
  // Dense GEMM rates (TFLOP/s), measured at `gemm_size`^3; < 0 when unavailable.
  double f32_tflops = -1, tf32_tflops = -1, f16_tflops = -1, bf16_tflops = -1;
  int gemm_size = 0;
  std::string note;
};

struct DeviceInfo {
  bool available = false;
  std::string reason;
  std::string name;
  int sm_count = 0;
  std::string compute_capability;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  double max_sm_clock_mhz = -1, max_mem_clock_mhz = -1;  // from the device attributes
  double sm_clock_mhz = -1, mem_clock_mhz = -1;          // current, from NVML (< 0 if absent)
  std::string driver;                                   // e.g. "13.0"
  std::string cublas, cusparse;                         // library status: "libcublas.so.13" or why missing
};

// Times case `c` of `op` on `device`: each implementation it asks for (by name, from the
// registry), each output checked against the device's reference (CUDA: the dense cuBLAS
// product of the case's dtype; CPU: cpu_dense_f32), reported in the order asked. A CUDA case
// in a build without CUDA throws BenchError "cudaNotBuilt" (check CudaBuilt() first).
BenchResult Run(Device device, Op op, const BenchCase& c, const BenchOptions& o);
// The device's copy bandwidth and dense GEMM rates (CPU: on `threads` threads).
Ceilings MeasureCeilings(Device device, int threads);

// CUDA (bench_cuda.cc). Without SPARSE_WITH_CUDA, CudaBuilt() is false and QueryDevice()
// says why.
bool CudaBuilt();
DeviceInfo QueryDevice();

// The per-device halves of Run and MeasureCeilings (bench_cuda.cc / ceilings.cc, bench_cpu.cc).
BenchResult RunCaseCuda(Op op, const BenchCase& c, const BenchOptions& o);
BenchResult RunCaseCpu(Op op, const BenchCase& c, const BenchOptions& o);
Ceilings MeasureCeilingsCuda();
Ceilings MeasureCeilingsCpu(int threads);

// Host helpers shared by both paths (bench_cpu.cc).
// Decodes `count` elements of `dtype` at `src` into doubles.
void DecodeToDouble(const void* src, DType dtype, size_t count, double* dst);
// ||x - ref|| / ||ref|| (0 when both are zero).
double RelativeError(const std::vector<double>& x, const std::vector<double>& ref);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_BENCH_BENCH_H_
