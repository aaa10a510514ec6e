// Run-time loading of cuBLAS, cuSPARSE and NVML (see libs.h for why there are no headers).
#if SPARSE_WITH_CUDA
#include "cuda/bench/libs.h"

#include <dlfcn.h>

#include <mutex>

namespace sparse {
namespace bench {
namespace {

void* OpenFirst(std::initializer_list<const char*> names, std::string* soname, std::string* reason) {
  std::string errors;
  for (const char* n : names) {
    void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (h) {
      *soname = n;
      return h;
    }
    const char* e = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += e ? e : n;
  }
  *reason = "not found (" + errors + ")";
  return nullptr;
}

template <typename F>
bool Sym(void* lib, const char* name, F* out, std::string* reason) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out && reason->empty()) *reason = std::string("symbol ") + name + " missing";
  return *out != nullptr;
}

}  // namespace

const Cublas& GetCublas() {
  static Cublas lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = OpenFirst({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, &lib.soname, &lib.reason);
    if (!h) return;
    std::string r;
    bool ok = Sym(h, "cublasCreate_v2", &lib.Create, &r) & Sym(h, "cublasDestroy_v2", &lib.Destroy, &r) &
              Sym(h, "cublasSetStream_v2", &lib.SetStream, &r) & Sym(h, "cublasSetMathMode", &lib.SetMathMode, &r) &
              Sym(h, "cublasGemmEx", &lib.GemmEx, &r);
    std::string ignored;
    Sym(h, "cublasGetStatusName", &lib.GetStatusName, &ignored);
    lib.loaded = ok;
    if (!ok) lib.reason = lib.soname + ": " + r;
  });
  return lib;
}

const Cusparse& GetCusparse() {
  static Cusparse lib;
  static std::once_flag once;
  std::call_once(once, [] {
    // NOTE: CUDA 13.0 still ships cuSPARSE as soname 12.
    void* h = OpenFirst({"libcusparse.so.12", "libcusparse.so.13", "libcusparse.so"}, &lib.soname, &lib.reason);
    if (!h) return;
    std::string r;
    bool ok = Sym(h, "cusparseCreate", &lib.Create, &r) & Sym(h, "cusparseDestroy", &lib.Destroy, &r) &
              Sym(h, "cusparseSetStream", &lib.SetStream, &r) & Sym(h, "cusparseCreateCsr", &lib.CreateCsr, &r) &
              Sym(h, "cusparseCreateDnMat", &lib.CreateDnMat, &r) &
              Sym(h, "cusparseDestroySpMat", &lib.DestroySpMat, &r) &
              Sym(h, "cusparseDestroyDnMat", &lib.DestroyDnMat, &r) &
              Sym(h, "cusparseSpMM_bufferSize", &lib.SpMMBufferSize, &r) &
              Sym(h, "cusparseSpMM_preprocess", &lib.SpMMPreprocess, &r) & Sym(h, "cusparseSpMM", &lib.SpMM, &r) &
              Sym(h, "cusparseSDDMM_bufferSize", &lib.SDDMMBufferSize, &r) &
              Sym(h, "cusparseSDDMM_preprocess", &lib.SDDMMPreprocess, &r) & Sym(h, "cusparseSDDMM", &lib.SDDMM, &r);
    std::string ignored;
    Sym(h, "cusparseGetErrorName", &lib.GetErrorName, &ignored);
    lib.loaded = ok;
    if (!ok) lib.reason = lib.soname + ": " + r;
  });
  return lib;
}

const Nvml& GetNvml(const std::string& pci_bus_id) {
  static Nvml lib;
  static std::once_flag once;
  std::call_once(once, [&] {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    int (*init)() = reinterpret_cast<int (*)()>(dlsym(h, "nvmlInit_v2"));
    int (*by_bus)(const char*, nvmlDevice_t*) =
        reinterpret_cast<int (*)(const char*, nvmlDevice_t*)>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    lib.GetClockInfo = reinterpret_cast<int (*)(nvmlDevice_t, int, unsigned int*)>(dlsym(h, "nvmlDeviceGetClockInfo"));
    if (!init || !by_bus || !lib.GetClockInfo || init() != 0) return;
    if (by_bus(pci_bus_id.c_str(), &lib.device) != 0) return;
    lib.loaded = true;
  });
  return lib;
}

std::string CublasStatusName(cublasStatus_t s) {
  const Cublas& lib = GetCublas();
  if (lib.GetStatusName) return lib.GetStatusName(s);
  return "cublas status " + std::to_string(s);
}

std::string CusparseStatusName(cusparseStatus_t s) {
  const Cusparse& lib = GetCusparse();
  if (lib.GetErrorName) return lib.GetErrorName(s);
  return "cusparse status " + std::to_string(s);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
