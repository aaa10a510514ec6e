// The dense baseline of SDDMM: the full product L R^T (m x n, inner k) with cublasGemmEx,
// sampled at the mask on the host for the check.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/impl/cublas_gemm.h"
#include "bench/timing.h"

namespace sparse {
namespace bench {
namespace {

// The faster of two operand orders. Both are one cublasGemmEx(T, N) reading the same L and R
// and writing the same m x n values (same FLOPs and bytes); they differ in which operand
// cuBLAS tiles as "A" (its M dimension), and its kernel heuristics treat M and N
// differently, which shows on tall-skinny shapes:
//   order "RL": column-major C^T (n x m) = R L^T, i.e. out row-major m x n (what
//               PyTorch's L @ R.T calls): GemmEx(T, N, n, m, k, R, ld k, L, ld k, C, ld n);
//   order "LR": column-major C (m x n) = L R^T, i.e. out stored transposed (row-major
//               n x m): GemmEx(T, N, m, n, k, L, ld k, R, ld k, C, ld m).
// As for cuSPARSE's SpMM algorithm, a short trial in Setup (one warm-up and 5 launches of
// each order, rotating through the operand copies) picks the order; `detail` names it and
// the trial's times.
class CublasSddmm : public CublasGemm {
 public:
  explicit CublasSddmm(const ImplArgs& a)
      : CublasGemm(a, (int64_t)a.c.m * a.c.k, (int64_t)a.c.n * a.c.k, (int64_t)a.c.m * a.c.n),
        csr_(a.c.csr) {
    how_ = compute() == kCublasCompute32FFastTF32 ? "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32"
           : m_.dtype == DType::kF32         ? "cublasGemmEx CUBLAS_COMPUTE_32F, default math"
                                             : std::string("cublasGemmEx ") + DTypeName(m_.dtype) +
                                                   " in/out, CUBLAS_COMPUTE_32F (tensor cores)";
    detail_ = "full product L R^T, " + how_;
  }
  void Setup(int copies) override {
    // Parts: L (m x k), R (n x k), the product (m x n).
    BuildSlab(copies, m_.lhs.get(), m_.rhs.get());
    Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
    // The order trial. An order cuBLAS rejects is skipped; none running is this
    // baseline's error.
    constexpr int kTrialLaunches = 5;
    const TrialOutcome t = PickFastest({{"RL", "order RL"}, {"LR", "order LR"}}, kTrialLaunches, s_, [&](int i) {
      const bool lr = i == 1;
      return TrialLauncher([this, lr, copies](int launch) { Run(launch % copies, lr); });
    });
    if (t.best < 0) throw BenchError("cublas", "no cuBLAS operand order ran: " + t.errors);
    lr_ = t.best == 1;
    detail_ = "full product L R^T, " + how_ + ", order " +
              (lr_ ? std::string("LR (C = L R^T column-major: GemmEx(T, N, m, n, k, L, R), out stored transposed)")
                   : std::string("RL (C^T = R L^T column-major: GemmEx(T, N, n, m, k, R, L), out row-major)")) +
              ", the faster in a trial: " + t.trials;
  }
  void Launch(int c) override { Run(c, lr_); }
  std::vector<double> Output() override {
    std::vector<double> full = ReadDense(slab_.at(0, 2), (size_t)m_.m * m_.n, m_.dtype, s_);
    std::vector<double> out(m_.nnz);
    for (int r = 0; r < m_.m; ++r)
      for (int i = csr_.row_offsets[r]; i < csr_.row_offsets[r + 1]; ++i) {
        const size_t col = static_cast<size_t>(csr_.column_indices[i]);
        out[i] = lr_ ? full[col * m_.m + r] : full[(size_t)r * m_.n + col];
      }
    return out;
  }

 private:
  void Run(int c, bool lr) {
    if (lr) {
      // Column-major C (m x n, ld m) = L R^T: L is k x m column-major (ld k), transposed;
      // R is k x n column-major (ld k).
      Gemm(c, kCublasOpT, m_.m, m_.n, m_.k, 0, m_.k, 1, m_.k, m_.m);
    } else {
      // Row-major out = L R^T is column-major out^T = R L^T: R (k x n col-major, ld k)
      // transposed, times L (k x m col-major, ld k).
      Gemm(c, kCublasOpT, m_.n, m_.m, m_.k, 1, m_.k, 0, m_.k, m_.n);
    }
  }
  const HostCsr& csr_;
  std::string how_;
  bool lr_ = false;
};

}  // namespace

std::unique_ptr<Implementation> MakeCublasSddmm(const ImplArgs& a) { return std::make_unique<CublasSddmm>(a); }

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
