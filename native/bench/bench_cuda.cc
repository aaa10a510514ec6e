// The CUDA side of the benchmark harness: runs a case (its operands uploaded once, each asked
// implementation timed, each output checked against the dense reference) and describes the
// device. See bench.h for the contract (bench.cc dispatches here or to bench_cpu.cc); the
// pieces are:
//   context.h         the process-wide context (stream, library handles, L2 flush buffer)
//   timing.h          the timing loop (L2 policy, spacer, events, CUDA graph) and warm trials
//   implementation.h  what an implementation is, and the helpers they share
//   registry.h        the implementations by op and name (and how to add one)
//   impl/             one file per implementation: ours, cuBLAS and cuSPARSE, per op
//   ceilings.cc       the device's copy bandwidth and dense GEMM peaks
#include "bench/bench.h"

#if !SPARSE_WITH_CUDA

namespace sparse {
namespace bench {
bool CudaBuilt() { return false; }
static BenchError NotBuilt() {
  return BenchError("cudaNotBuilt", "CUDA not built: this addon was compiled without the CUDA toolkit");
}
DeviceInfo QueryDevice() {
  DeviceInfo d;
  d.reason = "CUDA not built: this addon was compiled without the CUDA toolkit";
  return d;
}
BenchResult RunCaseCuda(Op, const BenchCase&, const BenchOptions&) { throw NotBuilt(); }
Ceilings MeasureCeilingsCuda() { throw NotBuilt(); }
}  // namespace bench
}  // namespace sparse

#else  // SPARSE_WITH_CUDA

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bench/context.h"
#include "bench/device_util.h"
#include "bench/implementation.h"
#include "bench/libs.h"
#include "bench/registry.h"
#include "bench/timing.h"

namespace sparse {
namespace bench {
namespace {

// Dense baselines whose output serves as the reference for the check, by dtype.
std::string ReferenceFor(DType t) {
  return t == DType::kF32 ? "cublas_f32" : (t == DType::kF16 ? "cublas_f16" : "cublas_bf16");
}

// Uploads `count` bytes from host `src` into `dst` (asynchronous on `s`).
void UploadBytes(const DeviceBuffer& dst, const void* src, size_t count, cudaStream_t s) {
  Check(cudaMemcpyAsync(dst.get(), src, count, cudaMemcpyHostToDevice, s), "cudaMemcpy H2D");
}

// The case's operands on the device: the CSR as given (random values for a pattern-only
// mask) and the dense operands as seeded random normals, made on the device.
void UploadOperands(const BenchCase& c, Op op, Operands* mm, cudaStream_t s) {
  mm->dtype = c.dtype;
  mm->m = c.m, mm->k = c.k, mm->n = c.n, mm->nnz = c.csr.nnz;
  const int rows = c.csr.rows;
  AllocateOrThrow(&mm->offsets, 4 * (size_t)(rows + 1));
  AllocateOrThrow(&mm->indices, 4 * (size_t)c.csr.nnz);
  AllocateOrThrow(&mm->values, Bytes(c.csr.nnz, c.dtype));
  AllocateOrThrow(&mm->row_indices, 4 * (size_t)rows);
  UploadBytes(mm->offsets, c.csr.row_offsets, 4 * (size_t)(rows + 1), s);
  if (c.csr.nnz) UploadBytes(mm->indices, c.csr.column_indices, 4 * (size_t)c.csr.nnz, s);
  if (c.csr.values && c.csr.nnz) {
    UploadBytes(mm->values, c.csr.values, Bytes(c.csr.nnz, c.dtype), s);
  } else if (c.csr.nnz) {
    // Pattern-only mask (SDDMM): values are unused by the kernels, but kept defined.
    Check(FillNormal(mm->values.get(), c.csr.nnz, c.dtype, 0x5eed0000ull, s), "fill");
  }
  mm->has_row_indices = c.csr.row_indices != nullptr;
  if (mm->has_row_indices) UploadBytes(mm->row_indices, c.csr.row_indices, 4 * (size_t)rows, s);
  if (op == Op::kSpmm) {
    AllocateOrThrow(&mm->dense_b, Bytes((int64_t)c.k * c.n, c.dtype));
    Check(FillNormal(mm->dense_b.get(), (size_t)c.k * c.n, c.dtype, 0x5eedB000ull, s), "fill");
  } else {
    AllocateOrThrow(&mm->lhs, Bytes((int64_t)c.m * c.k, c.dtype));
    AllocateOrThrow(&mm->rhs, Bytes((int64_t)c.n * c.k, c.dtype));
    Check(FillNormal(mm->lhs.get(), (size_t)c.m * c.k, c.dtype, 0x5eed1000ull, s), "fill");
    Check(FillNormal(mm->rhs.get(), (size_t)c.n * c.k, c.dtype, 0x5eed2000ull, s), "fill");
  }
  Check(cudaStreamSynchronize(s), "upload");
}

void ValidateCase(const BenchCase& c, Op op) {
  const int rows = c.m, cols = op == Op::kSpmm ? c.k : c.n;
  if (c.m < 0 || c.k < 0 || c.n < 0) throw BenchError("usage", "m, k and n must be non-negative");
  if (c.csr.rows != rows || c.csr.cols != cols)
    throw BenchError("usage", "csr shape " + std::to_string(c.csr.rows) + "x" + std::to_string(c.csr.cols) +
                                  " does not match the problem (" + std::to_string(rows) + "x" + std::to_string(cols) +
                                  ")");
  if (c.csr.row_offsets[0] != 0 || c.csr.row_offsets[rows] != c.csr.nnz)
    throw BenchError("usage", "csr.rowOffsets must run from 0 to nnz");
}

BenchResult RunCase(const BenchCase& c, const BenchOptions& o, Op op) {
  std::lock_guard<std::mutex> lock(BenchMutex());
  ValidateCase(c, op);
  Context& ctx = GetContext();
  ctx.clock_min = ctx.clock_max = -1;
  Operands mm;
  UploadOperands(c, op, &mm, ctx.stream);

  // The reference runs first so that every later output can be checked against it.
  std::vector<std::string> order = c.impls;
  const std::string ref_name = ReferenceFor(c.dtype);
  auto it = std::find(order.begin(), order.end(), ref_name);
  if (it != order.end()) std::rotate(order.begin(), it, it + 1);

  BenchResult res;
  res.l2_bytes = ctx.l2_bytes;
  std::vector<double> reference;
  bool have_reference = false;
  for (const std::string& name : order) {
    ImplResult ir;
    ir.name = name;
    std::string reason;
    try {
      std::unique_ptr<Implementation> r = MakeImplementation(op, ImplArgs{name, c, mm, ctx}, &reason);
      if (!r) {
        ir.reason = reason;
      } else {
        TimeImplementation(*r, o, ctx, &ir);
        ir.available = true;
        if (o.check) {
          std::vector<double> outv = r->Output();
          if (name == ref_name) {
            reference = std::move(outv);
            have_reference = true;
          } else if (have_reference) {
            ir.rel_err = RelativeError(outv, reference);
            ir.check_against = ref_name;
          }
        }
      }
    } catch (const BenchError& e) {
      cudaStreamSynchronize(ctx.stream);
      cudaGetLastError();
      if (name == "ours") throw;  // the case fails when our kernel does
      ir.available = false;
      ir.reason = e.what();
      ir.samples_ms.clear();
    }
    res.impls.push_back(std::move(ir));
  }
  // Report in the order asked.
  std::vector<ImplResult> ordered;
  for (const std::string& name : c.impls)
    for (size_t i = 0; i < res.impls.size(); ++i)
      if (res.impls[i].name == name) {
        ordered.push_back(std::move(res.impls[i]));
        res.impls.erase(res.impls.begin() + i);
        break;
      }
  res.impls = std::move(ordered);
  res.sm_clock_mhz_min = ctx.clock_min;
  res.sm_clock_mhz_max = ctx.clock_max;
  return res;
}

}  // namespace

bool CudaBuilt() { return true; }

DeviceInfo QueryDevice() {
  DeviceInfo d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    d.reason = e != cudaSuccess ? std::string("no usable CUDA device: ") + cudaGetErrorName(e) : "no CUDA device";
    return d;
  }
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp p;
  if ((e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess) {
    d.reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorName(e);
    return d;
  }
  d.available = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
  d.l2_bytes = p.l2CacheSize;
  d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) d.max_sm_clock_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess) d.max_mem_clock_mhz = khz / 1000.0;
  int drv = 0;
  if (cudaDriverGetVersion(&drv) == cudaSuccess) d.driver = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) {
    const Nvml& nvml = GetNvml(bus);
    unsigned int mhz = 0;
    if (nvml.loaded && nvml.GetClockInfo(nvml.device, kNvmlClockSm, &mhz) == 0) d.sm_clock_mhz = mhz;
    if (nvml.loaded && nvml.GetClockInfo(nvml.device, kNvmlClockMem, &mhz) == 0) d.mem_clock_mhz = mhz;
  }
  const Cublas& cb = GetCublas();
  d.cublas = cb.loaded ? cb.soname : "unavailable: " + cb.reason;
  const Cusparse& cs = GetCusparse();
  d.cusparse = cs.loaded ? cs.soname : "unavailable: " + cs.reason;
  return d;
}

BenchResult RunCaseCuda(Op op, const BenchCase& c, const BenchOptions& o) { return RunCase(c, o, op); }

}  // namespace bench
}  // namespace sparse

#endif  // SPARSE_WITH_CUDA
