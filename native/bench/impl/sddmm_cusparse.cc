// cuSPARSE SDDMM (CUSPARSE_SDDMM_ALG_DEFAULT): descriptors, workspace and
// cusparseSDDMM_preprocess made before timing. R (n x k, row-major) is described as the
// k x n column-major matrix R^T, so no transpose flag is needed; when a cuSPARSE version
// rejects that layout, R is described row-major with opB = transpose instead.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/impl/cusparse_common.h"

namespace sparse {
namespace bench {
namespace {

class CusparseSddmm : public CusparseImpl {
 public:
  explicit CusparseSddmm(const ImplArgs& a) : CusparseImpl(a) {}
  size_t Footprint() const override {
    return 8 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) + Bytes((int64_t)m_.m * m_.k, m_.dtype) +
           Bytes((int64_t)m_.n * m_.k, m_.dtype) + Bytes(m_.nnz, m_.dtype);
  }
  void Setup(int copies) override {
    // Parts: row offsets, column indices, L, R, out.
    slab_.Build({{4 * (size_t)(m_.m + 1), m_.offsets.get()},
                 {4 * (size_t)m_.nnz, m_.indices.get()},
                 {Bytes((int64_t)m_.m * m_.k, m_.dtype), m_.lhs.get()},
                 {Bytes((int64_t)m_.n * m_.k, m_.dtype), m_.rhs.get()},
                 {Bytes(m_.nnz, m_.dtype)}},
                copies, s_);
    std::string first_error;
    for (int layout = 0; layout < 2; ++layout) {
      try {
        sets_.clear();
        for (int c = 0; c < copies; ++c) {
          sets_.push_back(std::make_unique<CusparseSet>());
          MakeSet(c, layout, sets_.back().get());
        }
        Launch(0);
        Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
        detail_ = std::string("cusparseSDDMM CUSPARSE_SDDMM_ALG_DEFAULT, compute fp32, ") +
                  (layout == 0 ? "R described as column-major R^T" : "R row-major with opB = transpose") +
                  ", descriptors, workspace and preprocess made before timing";
        return;
      } catch (const BenchError& e) {
        cudaStreamSynchronize(s_);
        cudaGetLastError();
        sets_.clear();
        if (first_error.empty()) first_error = e.what();
      }
    }
    throw BenchError("cusparse", first_error);
  }
  void Launch(int c) override {
    const float alpha = 1.f, beta = 0.f;
    CusparseSet& s = *sets_[c];
    CheckCusparse(GetCusparse().SDDMM(h_, kCusparseOpN, s.op_b, &alpha, s.dense[0], s.dense[1], &beta, s.sparse,
                                      CUDA_R_32F, kCusparseSddmmAlgDefault, s.work.get()),
                  "cusparseSDDMM");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 4), m_.nnz, m_.dtype, s_); }

 private:
  // dense[0] = L, dense[1] = R in `layout` (0: column-major R^T, 1: row-major R with
  // opB = transpose), sparse = the mask holding out; workspace sized and preprocessed.
  void MakeSet(int c, int layout, CusparseSet* s) {
    const Cusparse& cs = GetCusparse();
    const cudaDataType t = CudaType(m_.dtype);
    s->CreateDense(0, m_.m, m_.k, m_.k, slab_.at(c, 2), t, kCusparseOrderRow);
    if (layout == 0) {
      s->CreateDense(1, m_.k, m_.n, m_.k, slab_.at(c, 3), t, kCusparseOrderCol);
      s->op_b = kCusparseOpN;
    } else {
      s->CreateDense(1, m_.n, m_.k, m_.k, slab_.at(c, 3), t, kCusparseOrderRow);
      s->op_b = kCusparseOpT;
    }
    s->CreateCsr(m_.m, m_.n, m_.nnz, slab_.at(c, 0), slab_.at(c, 1), slab_.at(c, 4), t);
    const float alpha = 1.f, beta = 0.f;
    size_t bytes = 0;
    CheckCusparse(cs.SDDMMBufferSize(h_, kCusparseOpN, s->op_b, &alpha, s->dense[0], s->dense[1], &beta, s->sparse,
                                     CUDA_R_32F, kCusparseSddmmAlgDefault, &bytes),
                  "cusparseSDDMM_bufferSize");
    AllocateOrThrow(&s->work, bytes);
    CheckCusparse(cs.SDDMMPreprocess(h_, kCusparseOpN, s->op_b, &alpha, s->dense[0], s->dense[1], &beta, s->sparse,
                                     CUDA_R_32F, kCusparseSddmmAlgDefault, s->work.get()),
                  "cusparseSDDMM_preprocess");
  }
};

}  // namespace

std::unique_ptr<Implementation> MakeCusparseSddmm(const ImplArgs& a) { return std::make_unique<CusparseSddmm>(a); }

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
