#ifndef SPARSE_CPU_CPU_GEMM_H_
#define SPARSE_CPU_CPU_GEMM_H_
// The dense fp32 GEMM behind the CPU benchmark's baseline (`cpu_dense_f32`): a CPU BLAS
// loaded at run time when the machine has one, else our own blocked, packed, threaded GEMM.
// No headers of any BLAS are needed: cblas_sgemm's prototype is declared in cpu_gemm.cc.
#include <string>

namespace sparse {

// C[m x n] = A[m x k] * op(B), all row-major host fp32 arrays. op(B) = B[k x n] (ldb >= n) when
// `b_transposed` is false, B[n x k]^T (ldb >= k) when true. C is overwritten (beta = 0).
struct GemmArgs {
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int lda = 0;
  const float* b = nullptr;
  int ldb = 0;
  bool b_transposed = false;
  float* c = nullptr;
  int ldc = 0;
};

// Our own GEMM: panels of A (6 rows) and B (16 columns) packed per 256-deep slice, a 6 x 16
// register-blocked micro-kernel (AVX2/FMA when the CPU has them, chosen at load time; plain
// vector code otherwise), rows or columns split among `threads` (<= 0: all cores).
void BlockedSgemm(const GemmArgs& g, int threads);

// The CPU baseline's GEMM, chosen once per process (issue 22: the first library found could be
// the reference BLAS, 15x slower than an optimised one):
//   1. every CPU BLAS that loads with an sgemm is a candidate: the sonames libopenblas.so.0,
//      libopenblas.so, libblis.so.4, libblis.so, libmkl_rt.so.2, libmkl_rt.so, libcblas.so.3,
//      libblas.so.3 (cblas_sgemm), and the OpenBLAS that NumPy and SciPy wheels bundle
//      (numpy.libs/libscipy_openblas64_*.so, scipy.libs/libscipy_openblas*.so, with their
//      scipy_/64_ symbol names) under the site-packages folders of $VIRTUAL_ENV, $CONDA_PREFIX,
//      ~/.local, pyenv and the system; one file once, however many names lead to it;
//   2. a library that is not OpenBLAS, BLIS or MKL is the Netlib reference BLAS: set aside;
//   3. each candidate and our BlockedSgemm run one 512^3 product with all cores; the fastest
//      is used. The best rate is the machine's GEMM ceiling (`ceiling_gflops`);
//   4. $SPARSE_CPU_BLAS forces a library file, or `builtin` for our BlockedSgemm (the others
//      are still timed for the ceiling).
struct CpuBlas {
  bool loaded = false;
  std::string path;     // the file loaded
  std::string name;     // e.g. "OpenBLAS 0.3.31" (from the library's config string when it has one)
  std::string symbol;   // the sgemm entry point used, e.g. "cblas_sgemm" or "scipy_cblas_sgemm64_"
  std::string reason;   // when not loaded (our GEMM is used): why
  double gflops = 0;          // the chosen GEMM's rate at 512^3
  double ceiling_gflops = 0;  // the best rate of all candidates
  std::string choice;   // how it was chosen, with every candidate's rate, e.g. "the fastest; ceiling 61.2
                        // GFLOP/s at 512^3 (measured: OpenBLAS 0.3.31 61.2, our GEMM 48.0 GFLOP/s)"
};
const CpuBlas& GetCpuBlas();

// C = A op(B) with the chosen GEMM (a CPU BLAS or BlockedSgemm). `threads` > 0 sets the
// BLAS's thread count where the library lets us (OpenBLAS, BLIS, MKL). Fills `*detail` (when
// not null) with what ran and why, e.g. "OpenBLAS 0.3.31 cblas_sgemm (/usr/lib/.../libopenblas.so.0),
// 2 threads; the fastest; ceiling 61.2 GFLOP/s at 512^3 (measured: ...)".
void DenseSgemm(const GemmArgs& g, int threads, std::string* detail);

}  // namespace sparse
#endif  // SPARSE_CPU_CPU_GEMM_H_
