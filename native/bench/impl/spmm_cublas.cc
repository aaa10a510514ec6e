// The dense baseline of SpMM: the pruned matrix densified, C = A B with cublasGemmEx.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/device_util.h"
#include "bench/impl/cublas_gemm.h"

namespace sparse {
namespace bench {
namespace {

class CublasSpmm : public CublasGemm {
 public:
  explicit CublasSpmm(const ImplArgs& a)
      : CublasGemm(a, (int64_t)a.c.m * a.c.k, (int64_t)a.c.k * a.c.n, (int64_t)a.c.m * a.c.n) {
    detail_ = compute() == kCublasCompute32FFastTF32 ? "cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores)"
              : m_.dtype == DType::kF32         ? "cublasGemmEx CUBLAS_COMPUTE_32F, default math (fp32 FMA)"
                                                : std::string("cublasGemmEx ") + DTypeName(m_.dtype) +
                                                      " in/out, CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulate)";
  }
  void Setup(int copies) override {
    // Parts: A (m x k, densified here), B (k x n), C (m x n).
    BuildSlab(copies, nullptr, m_.dense_b.get());
    for (int c = 0; c < copies; ++c) {
      Check(Densify(m_.offsets.as<int>(), m_.indices.as<int>(), m_.values.get(), m_.m, m_.k, m_.dtype, slab_.at(c, 0),
                    s_),
            "densify");
    }
  }
  // Row-major C = A B is column-major C^T = B^T A^T: B (ld n) first, then A (ld k).
  void Launch(int c) override { Gemm(c, kCublasOpN, m_.n, m_.m, m_.k, 1, m_.n, 0, m_.k, m_.n); }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 2), (size_t)m_.m * m_.n, m_.dtype, s_); }
};

}  // namespace

std::unique_ptr<Implementation> MakeCublasSpmm(const ImplArgs& a) { return std::make_unique<CublasSpmm>(a); }

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
