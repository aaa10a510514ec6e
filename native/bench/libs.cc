// Run-time loading of cuBLAS, cuSPARSE, cuSPARSELt and NVML (see libs.h for why there are no
// headers).
#if SPARSE_WITH_CUDA
#include "bench/libs.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/site_packages.h"

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

// The file the dynamic loader resolved `h` to (`fallback` when it cannot say).
std::string LoadedPath(void* h, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
  return fallback;
}

// The cuSPARSELt wheel's library under the usual site-packages folders, in the order of
// GetCusparseLt's comment (libs.h); within a pattern the newest Python first.
std::vector<std::string> CusparseLtWheelCandidates() {
  return GlobUnderRoots(SitePackagesRoots(), {"/nvidia/cusparselt/lib/libcusparseLt.so.0"});
}

// Opens cuSPARSELt (see GetCusparseLt in libs.h for the search order); null with `*reason`.
void* OpenCusparseLt(std::string* path, std::string* reason) {
  auto open = [&](const std::string& name, std::string* error) -> void* {
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      *path = LoadedPath(h, name);
      return h;
    }
    const char* e = dlerror();
    *error = e ? e : name;
    return nullptr;
  };
  std::string error;
  if (const char* override_path = std::getenv("SPARSE_CUSPARSELT_PATH"); override_path && override_path[0]) {
    std::string p = override_path;
    glob_t g;  // a folder: the library inside it
    if (glob((p + "/libcusparseLt.so.0").c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0) p = g.gl_pathv[0];
    globfree(&g);
    if (void* h = open(p, &error)) return h;
    *reason = "cuSPARSELt not found: SPARSE_CUSPARSELT_PATH=" + std::string(override_path) + " does not load (" +
              error + ")";
    return nullptr;
  }
  std::string first_error;
  for (const char* soname : {"libcusparseLt.so.0", "libcusparseLt.so"}) {
    if (void* h = open(soname, &error)) return h;
    if (first_error.empty()) first_error = error;
  }
  const std::vector<std::string> wheels = CusparseLtWheelCandidates();
  std::string wheel_errors;
  for (const std::string& w : wheels) {
    if (void* h = open(w, &error)) return h;
    wheel_errors += "; " + error;
  }
  *reason = "cuSPARSELt not found: " + first_error +
            (wheels.empty() ? "; no nvidia/cusparselt/lib/libcusparseLt.so.0 in the site-packages folders searched"
                            : wheel_errors) +
            " (pip install nvidia-cusparselt-cu13, or set SPARSE_CUSPARSELT_PATH to libcusparseLt.so.0)";
  return nullptr;
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

const CusparseLt& GetCusparseLt() {
  static CusparseLt lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = OpenCusparseLt(&lib.path, &lib.reason);
    if (!h) return;
    std::string r;
    bool ok = Sym(h, "cusparseLtInit", &lib.Init, &r) & Sym(h, "cusparseLtDestroy", &lib.Destroy, &r) &
              Sym(h, "cusparseLtGetVersion", &lib.GetVersion, &r) &
              Sym(h, "cusparseLtDenseDescriptorInit", &lib.DenseDescriptorInit, &r) &
              Sym(h, "cusparseLtStructuredDescriptorInit", &lib.StructuredDescriptorInit, &r) &
              Sym(h, "cusparseLtMatDescriptorDestroy", &lib.MatDescriptorDestroy, &r) &
              Sym(h, "cusparseLtMatmulDescriptorInit", &lib.MatmulDescriptorInit, &r) &
              Sym(h, "cusparseLtMatmulAlgSelectionInit", &lib.MatmulAlgSelectionInit, &r) &
              Sym(h, "cusparseLtMatmulAlgSetAttribute", &lib.MatmulAlgSetAttribute, &r) &
              Sym(h, "cusparseLtMatmulAlgGetAttribute", &lib.MatmulAlgGetAttribute, &r) &
              Sym(h, "cusparseLtMatmulGetWorkspace", &lib.MatmulGetWorkspace, &r) &
              Sym(h, "cusparseLtMatmulPlanInit", &lib.MatmulPlanInit, &r) &
              Sym(h, "cusparseLtMatmulPlanDestroy", &lib.MatmulPlanDestroy, &r) &
              Sym(h, "cusparseLtMatmul", &lib.Matmul, &r) & Sym(h, "cusparseLtMatmulSearch", &lib.MatmulSearch, &r) &
              Sym(h, "cusparseLtSpMMAPruneCheck", &lib.SpMMAPruneCheck, &r) &
              Sym(h, "cusparseLtSpMMACompressedSize", &lib.SpMMACompressedSize, &r) &
              Sym(h, "cusparseLtSpMMACompress", &lib.SpMMACompress, &r);
    std::string ignored;
    Sym(h, "cusparseLtMatmulAlgSelectionDestroy", &lib.MatmulAlgSelectionDestroy, &ignored);
    Sym(h, "cusparseLtGetErrorName", &lib.GetErrorName, &ignored);
    lib.loaded = ok;
    if (!ok) lib.reason = "cuSPARSELt at " + lib.path + " is unusable: " + r;
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

std::string CusparseLtStatusName(cusparseStatus_t s) {
  const CusparseLt& lib = GetCusparseLt();
  if (lib.GetErrorName) return lib.GetErrorName(s);
  return "cusparseLt status " + std::to_string(s);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
