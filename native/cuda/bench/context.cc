// The CUDA harness's shared context and status checks (see context.h).
#if SPARSE_WITH_CUDA
#include "cuda/bench/context.h"

#include <algorithm>
#include <memory>

namespace sparse {
namespace bench {

void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later cases can run
  throw BenchError(cudaGetErrorName(e), std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                                            cudaGetErrorString(e) + ")");
}

void CheckCublas(cublasStatus_t s, const char* what) {
  if (s != 0) throw BenchError(CublasStatusName(s), std::string(what) + ": " + CublasStatusName(s));
}

void CheckCusparse(cusparseStatus_t s, const char* what) {
  if (s != 0) throw BenchError(CusparseStatusName(s), std::string(what) + ": " + CusparseStatusName(s));
}

void AllocateOrThrow(DeviceBuffer* buffer, size_t bytes) {
  Check(buffer->Allocate(bytes ? bytes : 16), "cudaMalloc");
}

cudaDataType CudaType(DType t) {
  return t == DType::kF32 ? CUDA_R_32F : (t == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF);
}

void Context::EnsureEvents(size_t n) {
  while (events.size() < n) {
    cudaEvent_t e;
    Check(cudaEventCreate(&e), "cudaEventCreate");
    events.push_back(e);
  }
}

void Context::SampleClock() {
  const Nvml& nvml = GetNvml(pci);
  if (!nvml.loaded) return;
  unsigned int mhz = 0;
  if (nvml.GetClockInfo(nvml.device, kNvmlClockSm, &mhz) != 0) return;
  if (clock_min < 0 || mhz < clock_min) clock_min = mhz;
  if (mhz > clock_max) clock_max = mhz;
}

std::mutex& BenchMutex() {
  static std::mutex mutex;
  return mutex;
}

Context& GetContext() {
  static Context* ctx = nullptr;
  if (ctx) return *ctx;
  int count = 0;
  Check(cudaGetDeviceCount(&count), "no CUDA device");
  if (count == 0) throw BenchError("cudaErrorNoDevice", "no CUDA device: cudaErrorNoDevice");
  auto c = std::make_unique<Context>();
  Check(cudaGetDevice(&c->device), "cudaGetDevice");
  int l2 = 0;
  Check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c->device), "cudaDeviceGetAttribute");
  c->l2_bytes = l2;
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, c->device) == cudaSuccess) c->pci = bus;
  Check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  AllocateOrThrow(&c->flush, static_cast<size_t>(std::max<int64_t>(c->l2_bytes, 1 << 20)) * 2);
  const Cublas& cb = GetCublas();
  if (!cb.loaded) {
    c->cublas_reason = "cuBLAS " + cb.reason;
  } else if (cb.Create(&c->cublas) != 0) {
    c->cublas = nullptr;
    c->cublas_reason = "cublasCreate failed";
  } else {
    cb.SetStream(c->cublas, c->stream);
    cb.SetMathMode(c->cublas, kCublasDefaultMath);
  }
  const Cusparse& cs = GetCusparse();
  if (!cs.loaded) {
    c->cusparse_reason = "cuSPARSE " + cs.reason;
  } else if (cs.Create(&c->cusparse) != 0) {
    c->cusparse = nullptr;
    c->cusparse_reason = "cusparseCreate failed";
  } else {
    cs.SetStream(c->cusparse, c->stream);
  }
  ctx = c.release();
  return *ctx;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
