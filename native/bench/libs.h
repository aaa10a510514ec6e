#ifndef SPARSE_BENCH_LIBS_H_
#define SPARSE_BENCH_LIBS_H_
// cuBLAS, cuSPARSE, cuSPARSELt and NVML, loaded at run time with dlopen. Neither the build
// machines nor CI have their headers, so the few prototypes, opaque handles and enum values
// used here are declared below. NOTE: the cuBLAS/cuSPARSE enum values were checked against
// the CUDA 13.0 headers on the H200 machine (scripts/gpu/check-enums.cc prints them next to
// ours); the cuSPARSELt ones are checked by scripts/gpu/cusparselt-check.cc.
#if SPARSE_WITH_CUDA
#include <cuda_runtime_api.h>
#include <library_types.h>  // cudaDataType (part of the CUDA runtime headers)

#include <cstddef>
#include <cstdint>
#include <string>

namespace sparse {
namespace bench {

// ---- cuBLAS -------------------------------------------------------------------------
typedef struct cublasContext* cublasHandle_t;
typedef int cublasStatus_t;  // CUBLAS_STATUS_SUCCESS = 0
enum : int { kCublasOpN = 0, kCublasOpT = 1 };
enum : int {
  kCublasCompute16F = 64,
  kCublasCompute32F = 68,
  kCublasCompute32FPedantic = 69,
  kCublasCompute32FFastTF32 = 77,
};
enum : int { kCublasGemmDefault = -1 };
enum : int { kCublasDefaultMath = 0, kCublasPedanticMath = 2 };

struct Cublas {
  bool loaded = false;
  std::string reason;  // why not loaded
  std::string soname;
  cublasStatus_t (*Create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*Destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*SetStream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*SetMathMode)(cublasHandle_t, int) = nullptr;
  cublasStatus_t (*GemmEx)(cublasHandle_t, int transa, int transb, int m, int n, int k, const void* alpha,
                           const void* a, cudaDataType atype, int lda, const void* b, cudaDataType btype, int ldb,
                           const void* beta, void* c, cudaDataType ctype, int ldc, int compute_type,
                           int algo) = nullptr;
  const char* (*GetStatusName)(cublasStatus_t) = nullptr;  // optional
};

// ---- cuSPARSE -----------------------------------------------------------------------
typedef struct cusparseContext* cusparseHandle_t;
typedef struct cusparseSpMatDescr* cusparseSpMatDescr_t;
typedef struct cusparseDnMatDescr* cusparseDnMatDescr_t;
typedef int cusparseStatus_t;  // CUSPARSE_STATUS_SUCCESS = 0
enum : int { kCusparseOpN = 0, kCusparseOpT = 1 };
enum : int { kCusparseIndex32I = 2 };
enum : int { kCusparseIndexBaseZero = 0 };
enum : int { kCusparseOrderCol = 1, kCusparseOrderRow = 2 };
enum : int {
  kCusparseSpmmAlgDefault = 0,
  kCusparseSpmmCsrAlg1 = 4,
  kCusparseSpmmCsrAlg2 = 6,
  kCusparseSpmmCsrAlg3 = 12,
};
enum : int { kCusparseSddmmAlgDefault = 0 };

struct Cusparse {
  bool loaded = false;
  std::string reason;
  std::string soname;
  cusparseStatus_t (*Create)(cusparseHandle_t*) = nullptr;
  cusparseStatus_t (*Destroy)(cusparseHandle_t) = nullptr;
  cusparseStatus_t (*SetStream)(cusparseHandle_t, cudaStream_t) = nullptr;
  cusparseStatus_t (*CreateCsr)(cusparseSpMatDescr_t*, int64_t rows, int64_t cols, int64_t nnz, void* offsets,
                                void* columns, void* values, int offsets_type, int columns_type, int base,
                                cudaDataType value_type) = nullptr;
  cusparseStatus_t (*CreateDnMat)(cusparseDnMatDescr_t*, int64_t rows, int64_t cols, int64_t ld, void* values,
                                  cudaDataType value_type, int order) = nullptr;
  cusparseStatus_t (*DestroySpMat)(cusparseSpMatDescr_t) = nullptr;
  cusparseStatus_t (*DestroyDnMat)(cusparseDnMatDescr_t) = nullptr;
  cusparseStatus_t (*SpMMBufferSize)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseSpMatDescr_t a,
                                     cusparseDnMatDescr_t b, const void* beta, cusparseDnMatDescr_t c,
                                     cudaDataType compute, int alg, size_t* size) = nullptr;
  cusparseStatus_t (*SpMMPreprocess)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseSpMatDescr_t a,
                                     cusparseDnMatDescr_t b, const void* beta, cusparseDnMatDescr_t c,
                                     cudaDataType compute, int alg, void* buffer) = nullptr;
  cusparseStatus_t (*SpMM)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseSpMatDescr_t a,
                           cusparseDnMatDescr_t b, const void* beta, cusparseDnMatDescr_t c, cudaDataType compute,
                           int alg, void* buffer) = nullptr;
  cusparseStatus_t (*SDDMMBufferSize)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseDnMatDescr_t a,
                                      cusparseDnMatDescr_t b, const void* beta, cusparseSpMatDescr_t c,
                                      cudaDataType compute, int alg, size_t* size) = nullptr;
  cusparseStatus_t (*SDDMMPreprocess)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseDnMatDescr_t a,
                                      cusparseDnMatDescr_t b, const void* beta, cusparseSpMatDescr_t c,
                                      cudaDataType compute, int alg, void* buffer) = nullptr;
  cusparseStatus_t (*SDDMM)(cusparseHandle_t, int op_a, int op_b, const void* alpha, cusparseDnMatDescr_t a,
                            cusparseDnMatDescr_t b, const void* beta, cusparseSpMatDescr_t c, cudaDataType compute,
                            int alg, void* buffer) = nullptr;
  const char* (*GetErrorName)(cusparseStatus_t) = nullptr;  // optional
};

// ---- cuSPARSELt (2:4 structured sparsity on sparse tensor cores) ----------------------
// Not part of the CUDA toolkit: on the H200 machine it ships in the Python wheel
// nvidia-cusparselt-cu13 (nvidia/cusparselt/lib/libcusparseLt.so.0). GetCusparseLt looks for
// it as described there. Loaded on first use only (the library is about 230 MB), not in
// GetContext.
//
// NOTE: the opaque types (cusparseLtHandle_t, cusparseLtMatDescriptor_t,
// cusparseLtMatmulDescriptor_t, cusparseLtMatmulAlgSelection_t, cusparseLtMatmulPlan_t) are
// structs the caller allocates and the library fills. Their size has changed between versions:
// `uint8_t data[1024]` in 0.1's cusparseLt.h, `alignas(16) uint8_t data[512]` in 0.8.1's
// (the header of the nvidia-cusparselt-cu13 0.8.1 wheel). We over-allocate 16 KiB, aligned to
// 64, so that a version with larger structs still fits; the library never writes past its own
// size. The library may keep pointers between them (a plan points at its descriptors and
// algorithm selection), so they must not move once initialized.
struct alignas(64) LtOpaque {
  uint8_t data[16384];
};
// Enum values. Sources: cusparseLt.h of cuSPARSELt 0.8.1 (nvidia-cusparselt-cu13 0.8.1), the
// types page of the cuSPARSELt documentation (docs.nvidia.com/cuda/cusparselt/types.html),
// and nvmath-python's cuSPARSELt bindings (nvmath.bindings.cusparseLt.ComputeType,
// .Sparsity, .MatmulAlgAttribute). cusparseOrder_t and cusparseOperation_t are cuSPARSE's
// (kCusparseOrderRow / kCusparseOrderCol, kCusparseOpN above).
enum : int { kLtSparsity50Percent = 0 };  // cusparseLtSparsity_t CUSPARSELT_SPARSITY_50_PERCENT
// cusparseComputeType: CUSPARSE_COMPUTE_32I = 0, _16F = 1, _32F = 2 since cuSPARSELt 0.5.2.
// NOTE: before 0.5.2 the same enum was {16F, 32I, TF32, TF32_FAST} (PyTorch's
// cuSPARSELtOps.cpp keeps both), so 2 meant TF32 there: GetCusparseLt refuses versions
// older than kLtMinVersion.
enum : int { kLtCompute32F = 2 };
enum : int { kLtMatmulAlgDefault = 0 };  // cusparseLtMatmulAlg_t CUSPARSELT_MATMUL_ALG_DEFAULT
enum : int {                             // cusparseLtMatmulAlgAttribute_t
  kLtAlgConfigId = 0,                    // CUSPARSELT_MATMUL_ALG_CONFIG_ID (int, read/write)
  kLtAlgConfigMaxId = 1,                 // CUSPARSELT_MATMUL_ALG_CONFIG_MAX_ID (int, read-only)
  kLtSearchIterations = 2,               // CUSPARSELT_MATMUL_SEARCH_ITERATIONS (int)
  kLtSplitK = 3,                         // CUSPARSELT_MATMUL_SPLIT_K (int)
  kLtSplitKMode = 4,                     // CUSPARSELT_MATMUL_SPLIT_K_MODE (cusparseLtSplitKMode_t)
  kLtSplitKBuffers = 5,                  // CUSPARSELT_MATMUL_SPLIT_K_BUFFERS (int)
};
// cusparseLtGetVersion's encoding: major * 1000 + minor * 100 + patch.
constexpr int kLtMinVersion = 502;

struct CusparseLt {
  bool loaded = false;
  std::string reason;  // why not loaded: "cuSPARSELt not found: ..." or a missing symbol
  std::string path;    // the file that was loaded (the dynamic loader's resolved path)
  using S = cusparseStatus_t;
  using H = const LtOpaque*;
  S (*Init)(LtOpaque* handle) = nullptr;
  S (*Destroy)(H handle) = nullptr;
  S (*GetVersion)(H handle, int* version) = nullptr;
  S (*DenseDescriptorInit)(H handle, LtOpaque* mat, int64_t rows, int64_t cols, int64_t ld, uint32_t alignment,
                           cudaDataType type, int order) = nullptr;
  S (*StructuredDescriptorInit)(H handle, LtOpaque* mat, int64_t rows, int64_t cols, int64_t ld, uint32_t alignment,
                                cudaDataType type, int order, int sparsity) = nullptr;
  S (*MatDescriptorDestroy)(const LtOpaque* mat) = nullptr;
  S (*MatmulDescriptorInit)(H handle, LtOpaque* matmul, int op_a, int op_b, const LtOpaque* a, const LtOpaque* b,
                            const LtOpaque* c, const LtOpaque* d, int compute) = nullptr;
  S (*MatmulAlgSelectionInit)(H handle, LtOpaque* alg, const LtOpaque* matmul, int alg_kind) = nullptr;
  S (*MatmulAlgSetAttribute)(H handle, LtOpaque* alg, int attribute, const void* data, size_t size) = nullptr;
  S (*MatmulAlgGetAttribute)(H handle, const LtOpaque* alg, int attribute, void* data, size_t size) = nullptr;
  S (*MatmulGetWorkspace)(H handle, const LtOpaque* plan, size_t* bytes) = nullptr;
  S (*MatmulPlanInit)(H handle, LtOpaque* plan, const LtOpaque* matmul, const LtOpaque* alg) = nullptr;
  S (*MatmulPlanDestroy)(const LtOpaque* plan) = nullptr;
  S (*Matmul)(H handle, const LtOpaque* plan, const void* alpha, const void* a, const void* b, const void* beta,
              const void* c, void* d, void* workspace, cudaStream_t* streams, int32_t num_streams) = nullptr;
  S (*MatmulSearch)(H handle, LtOpaque* plan, const void* alpha, const void* a, const void* b, const void* beta,
                    const void* c, void* d, void* workspace, cudaStream_t* streams, int32_t num_streams) = nullptr;
  // `valid`: one int in device memory, 0 when the matrix is 2:4 (as the library's samples read it).
  S (*SpMMAPruneCheck)(H handle, const LtOpaque* matmul, const void* dense, int* valid, cudaStream_t stream) = nullptr;
  S (*SpMMACompressedSize)(H handle, const LtOpaque* plan, size_t* compressed_bytes,
                           size_t* compress_buffer_bytes) = nullptr;
  S (*SpMMACompress)(H handle, const LtOpaque* plan, const void* dense, void* compressed, void* compress_buffer,
                     cudaStream_t stream) = nullptr;
  // Optional (newer versions): null when absent.
  S (*MatmulAlgSelectionDestroy)(const LtOpaque* alg) = nullptr;  // 0.8
  const char* (*GetErrorName)(cusparseStatus_t) = nullptr;
};

// ---- NVML (clocks seen while timing) ------------------------------------------------
typedef struct nvmlDevice_st* nvmlDevice_t;
struct Nvml {
  bool loaded = false;
  nvmlDevice_t device = nullptr;
  int (*GetClockInfo)(nvmlDevice_t, int type, unsigned int* mhz) = nullptr;
};
enum : int { kNvmlClockSm = 1, kNvmlClockMem = 2 };

// Loaded once per process (thread-safe); never unloaded.
const Cublas& GetCublas();
const Cusparse& GetCusparse();
// cuSPARSELt, searched in this order (the first that loads wins):
//   1. $SPARSE_CUSPARSELT_PATH, a file or a folder holding libcusparseLt.so.0; when set,
//      nothing else is tried (an override that silently fell through would mislead);
//   2. the sonames libcusparseLt.so.0 and libcusparseLt.so (LD_LIBRARY_PATH, ld.so.cache,
//      e.g. Debian's libcusparselt0);
//   3. the wheel's nvidia/cusparselt/lib/libcusparseLt.so.0 under the site-packages folders
//      of SitePackagesRoots() (common/site_packages.h: $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local,
//      pyenv, the system's, /opt/conda, virtual environments under /opt); within a folder
//      pattern the newest Python first.
// Not found: `loaded` false and `reason` "cuSPARSELt not found: ..." (what was tried).
const CusparseLt& GetCusparseLt();
// NVML for the CUDA device `pci_bus_id` (as cudaDeviceGetPCIBusId prints it).
const Nvml& GetNvml(const std::string& pci_bus_id);

std::string CublasStatusName(cublasStatus_t s);
std::string CusparseStatusName(cusparseStatus_t s);
std::string CusparseLtStatusName(cusparseStatus_t s);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_LIBS_H_
