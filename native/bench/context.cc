// The CUDA harness's shared context and status checks (see context.h).
#if SPARSE_WITH_CUDA
#include "bench/context.h"

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

void CheckCusparseLt(cusparseStatus_t s, const char* what) {
  if (s != 0) throw BenchError(CusparseLtStatusName(s), std::string(what) + ": " + CusparseLtStatusName(s));
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

const LtOpaque* Context::CusparseLt() {
  if (cusparselt_tried) return cusparselt;
  cusparselt_tried = true;
  const bench::CusparseLt& lib = GetCusparseLt();
  if (!lib.loaded) {
    cusparselt_reason = lib.reason;
    return nullptr;
  }
  auto handle = std::make_unique<LtOpaque>();
  const cusparseStatus_t s = lib.Init(handle.get());
  if (s != 0) {
    cusparselt_reason = "cusparseLtInit failed: " + CusparseLtStatusName(s) + " (" + lib.path + ")";
    return nullptr;
  }
  int version = 0;
  if (lib.GetVersion(handle.get(), &version) != 0 || version < kLtMinVersion) {
    lib.Destroy(handle.get());
    cusparselt_reason = "cuSPARSELt " + std::to_string(version) + " at " + lib.path +
                        " is older than 0.5.2, whose enum values this harness declares";
    return nullptr;
  }
  cusparselt_version = version;
  cusparselt = handle.release();  // NOTE: never destroyed, like the other handles
  return cusparselt;
}

namespace {

// A library handle: null with `*reason` set when the library did not load (`label` names
// it) or its `create` call failed; else created and `configure`d (stream, math mode).
template <typename Library, typename Handle, typename Configure>
void CreateHandle(const Library& lib, const char* label, const char* create, Handle* handle, std::string* reason,
                  Configure configure) {
  if (!lib.loaded) {
    *reason = std::string(label) + " " + lib.reason;
  } else if (lib.Create(handle) != 0) {
    *handle = nullptr;
    *reason = std::string(create) + " failed";
  } else {
    configure(*handle);
  }
}

}  // namespace

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
  CreateHandle(cb, "cuBLAS", "cublasCreate", &c->cublas, &c->cublas_reason, [&](cublasHandle_t h) {
    cb.SetStream(h, c->stream);
    cb.SetMathMode(h, kCublasDefaultMath);
  });
  const Cusparse& cs = GetCusparse();
  CreateHandle(cs, "cuSPARSE", "cusparseCreate", &c->cusparse, &c->cusparse_reason,
               [&](cusparseHandle_t h) { cs.SetStream(h, c->stream); });
  ctx = c.release();
  return *ctx;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
