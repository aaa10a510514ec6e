#ifndef SPARSE_CUDA_BENCH_LIBS_H_
#define SPARSE_CUDA_BENCH_LIBS_H_
// cuBLAS, cuSPARSE and NVML, loaded at run time with dlopen. Neither the build machines nor
// CI have their headers, so the few prototypes, opaque handles and enum values used here
// are declared below. NOTE: the enum values were checked against the CUDA 13.0 headers on
// the H200 machine (scripts/gpu/check-enums.cc prints them next to ours).
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
// NVML for the CUDA device `pci_bus_id` (as cudaDeviceGetPCIBusId prints it).
const Nvml& GetNvml(const std::string& pci_bus_id);

std::string CublasStatusName(cublasStatus_t s);
std::string CusparseStatusName(cusparseStatus_t s);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_CUDA_BENCH_LIBS_H_
