// cuSPARSE SpMM, as an expert calls it: descriptors and workspace made once per operand
// set, cusparseSpMM_preprocess before timing, the fastest CSR algorithm picked by a short
// trial (CSR_ALG2, the row-major algorithm, usually; ALG1 and ALG3 are tried too).
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/impl/cusparse_common.h"
#include "bench/timing.h"

namespace sparse {
namespace bench {
namespace {

class CusparseSpmm : public CusparseImpl {
 public:
  explicit CusparseSpmm(const ImplArgs& a) : CusparseImpl(a) {}
  size_t Footprint() const override {
    return Bytes(m_.nnz, m_.dtype) + 4 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) +
           Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    // Parts: values, column indices, row offsets, B, C.
    slab_.Build({{Bytes(m_.nnz, m_.dtype), m_.values.get()},
                 {4 * (size_t)m_.nnz, m_.indices.get()},
                 {4 * (size_t)(m_.m + 1), m_.offsets.get()},
                 {Bytes((int64_t)m_.k * m_.n, m_.dtype), m_.dense_b.get()},
                 {Bytes((int64_t)m_.m * m_.n, m_.dtype)}},
                copies, s_);
    Check(cudaStreamSynchronize(s_), "cudaStreamSynchronize");
    // Pick the algorithm on operand set 0: a warm-up and three launches each.
    const int algs[] = {kCusparseSpmmCsrAlg2, kCusparseSpmmCsrAlg1, kCusparseSpmmCsrAlg3};
    std::vector<TrialCandidate> candidates;
    for (int alg : algs) candidates.push_back({AlgName(alg).substr(14), AlgName(alg)});
    const TrialOutcome t = PickFastest(candidates, 3, s_, [&](int i) {
      auto set = std::make_shared<CusparseSet>();
      MakeSet(0, algs[i], set.get());
      return TrialLauncher([this, set, alg = algs[i]](int) { Run(*set, alg); });
    });
    if (t.best < 0) throw BenchError("cusparse", "no cuSPARSE CSR SpMM algorithm ran: " + t.errors);
    alg_ = algs[t.best];
    detail_ = "cusparseSpMM " + AlgName(alg_) + " (the fastest in a warm trial: " + t.trials +
              "), compute fp32, descriptors, workspace and preprocess made before timing";
    sets_.clear();
    for (int c = 0; c < copies; ++c) {
      sets_.push_back(std::make_unique<CusparseSet>());
      MakeSet(c, alg_, sets_.back().get());
    }
  }
  void Launch(int c) override { Run(*sets_[c], alg_); }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 4), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  static std::string AlgName(int alg) {
    return alg == kCusparseSpmmCsrAlg1 ? "CUSPARSE_SPMM_CSR_ALG1"
           : alg == kCusparseSpmmCsrAlg2 ? "CUSPARSE_SPMM_CSR_ALG2"
                                         : "CUSPARSE_SPMM_CSR_ALG3";
  }
  // A = the CSR matrix (dense[0] = B, dense[1] = C), workspace sized and preprocessed for `alg`.
  void MakeSet(int c, int alg, CusparseSet* s) {
    const Cusparse& cs = GetCusparse();
    const cudaDataType t = CudaType(m_.dtype);
    s->CreateCsr(m_.m, m_.k, m_.nnz, slab_.at(c, 2), slab_.at(c, 1), slab_.at(c, 0), t);
    s->CreateDense(0, m_.k, m_.n, m_.n, slab_.at(c, 3), t, kCusparseOrderRow);
    s->CreateDense(1, m_.m, m_.n, m_.n, slab_.at(c, 4), t, kCusparseOrderRow);
    const float alpha = 1.f, beta = 0.f;
    size_t bytes = 0;
    CheckCusparse(cs.SpMMBufferSize(h_, kCusparseOpN, kCusparseOpN, &alpha, s->sparse, s->dense[0], &beta, s->dense[1],
                                    CUDA_R_32F, alg, &bytes),
                  "cusparseSpMM_bufferSize");
    AllocateOrThrow(&s->work, bytes);
    CheckCusparse(cs.SpMMPreprocess(h_, kCusparseOpN, kCusparseOpN, &alpha, s->sparse, s->dense[0], &beta, s->dense[1],
                                    CUDA_R_32F, alg, s->work.get()),
                  "cusparseSpMM_preprocess");
  }
  void Run(CusparseSet& s, int alg) {
    const float alpha = 1.f, beta = 0.f;
    CheckCusparse(GetCusparse().SpMM(h_, kCusparseOpN, kCusparseOpN, &alpha, s.sparse, s.dense[0], &beta, s.dense[1],
                                     CUDA_R_32F, alg, s.work.get()),
                  "cusparseSpMM");
  }
  int alg_ = kCusparseSpmmCsrAlg2;
};

}  // namespace

std::unique_ptr<Implementation> MakeCusparseSpmm(const ImplArgs& a) { return std::make_unique<CusparseSpmm>(a); }

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
