// Our SDDMM (native/cuda/sddmm) in the harness; the tensor-core kernel's chunk starts are
// built once per mask.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/implementation.h"
#include "cuda/sddmm/sddmm.h"
#include "cuda/sddmm/sddmm_tc.h"

namespace sparse {
namespace bench {
namespace {

class OursSddmm : public Implementation {
 public:
  OursSddmm(const Operands& mm, cudaStream_t s) : m_(mm), s_(s) { detail_ = "CudaSddmm"; }
  size_t Footprint() const override {
    return 8 * (size_t)m_.nnz + 4 * (size_t)(m_.m + 1) + (m_.has_row_indices ? 4 * m_.m : 0) +
           Bytes((int64_t)m_.m * m_.k, m_.dtype) + Bytes((int64_t)m_.n * m_.k, m_.dtype) + Bytes(m_.nnz, m_.dtype);
  }
  void Setup(int copies) override {
    // Parts: row offsets, column indices, row order, L, R, out.
    slab_.Build({{4 * (size_t)(m_.m + 1), m_.offsets.get()},
                 {4 * (size_t)m_.nnz, m_.indices.get()},
                 {4 * (size_t)m_.m, m_.has_row_indices ? m_.row_indices.get() : nullptr},
                 {Bytes((int64_t)m_.m * m_.k, m_.dtype), m_.lhs.get()},
                 {Bytes((int64_t)m_.n * m_.k, m_.dtype), m_.rhs.get()},
                 {Bytes(m_.nnz, m_.dtype)}},
                copies, s_);
    Check(CanImplementSddmm(Problem(0)), "CanImplementSddmm");
    detail_ = std::string("CudaSddmm ") + SddmmKernelName(Problem(0));
    masks_.clear();
    if (SddmmUsesChunkStarts(Problem(0))) {
      // The tensor-core or dense-tile kernel's chunk starts, built once per mask (not timed with it).
      detail_ += PrepareOncePerCopy(
          &masks_, copies, s_, [&](SddmmTcMask& m) { return m.Build(Problem(0), s_); }, "the SDDMM chunk starts",
          "chunk starts");
    }
  }
  void Launch(int c) override { Check(CudaSddmmPrepared(Problem(c), PreparedAt(masks_, c), s_), "CudaSddmm"); }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), m_.nnz, m_.dtype, s_); }

 private:
  SddmmProblem Problem(int c) const {
    SddmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.row_offsets = static_cast<const int*>(slab_.at(c, 0));
    p.column_indices = static_cast<const int*>(slab_.at(c, 1));
    p.row_indices = m_.has_row_indices ? static_cast<const int*>(slab_.at(c, 2)) : nullptr;
    p.lhs = slab_.at(c, 3);
    p.rhs = slab_.at(c, 4);
    p.out = slab_.at(c, 5);
    return p;
  }
  const Operands& m_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<SddmmTcMask>> masks_;
};

}  // namespace

std::unique_ptr<Implementation> MakeOursSddmm(const ImplArgs& a) {
  return std::make_unique<OursSddmm>(a.operands, a.ctx.stream);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
