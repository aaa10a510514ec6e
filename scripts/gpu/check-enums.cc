// Checks the enum values that native/bench/libs.h declares by hand (the build machines
// have no cuBLAS/cuSPARSE headers) against the real headers of the GPU machine:
//   g++ -std=c++17 -DSPARSE_WITH_CUDA=1 -Inative -I/usr/local/cuda/include scripts/gpu/check-enums.cc -o /tmp/check-enums && /tmp/check-enums
// Prints one line per value and exits 1 on any mismatch.
#include <cublas_v2.h>
#include <cusparse.h>
#include <library_types.h>

#include <cstdio>

#include "bench/libs.h"

namespace b = sparse::bench;
static int bad = 0;
static void Eq(const char* name, long ours, long real) {
  std::printf("%-34s ours %6ld  header %6ld  %s\n", name, ours, real, ours == real ? "ok" : "MISMATCH");
  if (ours != real) bad++;
}
#define EQ(ours, real) Eq(#real, (long)(ours), (long)(real))

int main() {
  EQ(b::kCublasOpN, CUBLAS_OP_N);
  EQ(b::kCublasOpT, CUBLAS_OP_T);
  EQ(b::kCublasCompute16F, CUBLAS_COMPUTE_16F);
  EQ(b::kCublasCompute32F, CUBLAS_COMPUTE_32F);
  EQ(b::kCublasCompute32FPedantic, CUBLAS_COMPUTE_32F_PEDANTIC);
  EQ(b::kCublasCompute32FFastTF32, CUBLAS_COMPUTE_32F_FAST_TF32);
  EQ(b::kCublasGemmDefault, CUBLAS_GEMM_DEFAULT);
  EQ(b::kCublasDefaultMath, CUBLAS_DEFAULT_MATH);
  EQ(b::kCublasPedanticMath, CUBLAS_PEDANTIC_MATH);
  EQ(b::kCusparseOpN, CUSPARSE_OPERATION_NON_TRANSPOSE);
  EQ(b::kCusparseOpT, CUSPARSE_OPERATION_TRANSPOSE);
  EQ(b::kCusparseIndex32I, CUSPARSE_INDEX_32I);
  EQ(b::kCusparseIndexBaseZero, CUSPARSE_INDEX_BASE_ZERO);
  EQ(b::kCusparseOrderCol, CUSPARSE_ORDER_COL);
  EQ(b::kCusparseOrderRow, CUSPARSE_ORDER_ROW);
  EQ(b::kCusparseSpmmAlgDefault, CUSPARSE_SPMM_ALG_DEFAULT);
  EQ(b::kCusparseSpmmCsrAlg1, CUSPARSE_SPMM_CSR_ALG1);
  EQ(b::kCusparseSpmmCsrAlg2, CUSPARSE_SPMM_CSR_ALG2);
  EQ(b::kCusparseSpmmCsrAlg3, CUSPARSE_SPMM_CSR_ALG3);
  EQ(b::kCusparseSddmmAlgDefault, CUSPARSE_SDDMM_ALG_DEFAULT);
  EQ(CUDA_R_32F, 0);
  EQ(CUDA_R_16F, 2);
  EQ(CUDA_R_16BF, 14);
  std::printf("sizeof(cublasComputeType_t)=%zu sizeof(cusparseOrder_t)=%zu\n", sizeof(cublasComputeType_t), sizeof(cusparseOrder_t));
  std::printf("%s\n", bad ? "ENUM CHECK FAILED" : "enum check: all values match");
  return bad ? 1 : 0;
}
