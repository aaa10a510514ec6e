// Our SpMM (native/cuda/spmm) in the harness: CSR with 16- or 32-bit column indices, or the
// tensor-core kernel's tiles, built once per matrix like the weights of a pruned layer.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "cuda/bench/device_util.h"
#include "cuda/bench/implementation.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_tc.h"

namespace sparse {
namespace bench {
namespace {

// `variant` empty: CudaSpmm (the kernel's own selection, or SPARSE_SPMM_VARIANT); else that
// variant through CudaSpmmVariant (`sparse bench --tune` candidates and cached winners).
class OursSpmm : public Implementation {
 public:
  OursSpmm(const Operands& mm, int index_bits, std::string variant, cudaStream_t s)
      : m_(mm), bits_(index_bits), variant_(std::move(variant)), s_(s) {
    detail_ = "CudaSpmm, " + std::to_string(bits_) + "-bit indices";
  }
  size_t Footprint() const override {
    if (!tc_.empty() && tc_[0]) {
      return tc_[0]->Bytes() + Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
    }
    return Bytes(m_.nnz, m_.dtype) + static_cast<size_t>(m_.nnz) * (bits_ / 8) + 4 * (m_.m + 1) +
           (m_.has_row_indices ? 4 * m_.m : 0) + Bytes((int64_t)m_.k * m_.n, m_.dtype) +
           Bytes((int64_t)m_.m * m_.n, m_.dtype);
  }
  void Setup(int copies) override {
    // Parts: values, column indices (narrowed below when 16-bit), row offsets, row order, B, C.
    slab_.Build({{Bytes(m_.nnz, m_.dtype), m_.values.get()},
                 {static_cast<size_t>(m_.nnz) * (bits_ / 8), bits_ == 16 ? nullptr : m_.indices.get()},
                 {4 * (size_t)(m_.m + 1), m_.offsets.get()},
                 {4 * (size_t)m_.m, m_.has_row_indices ? m_.row_indices.get() : nullptr},
                 {Bytes((int64_t)m_.k * m_.n, m_.dtype), m_.dense_b.get()},
                 {Bytes((int64_t)m_.m * m_.n, m_.dtype)}},
                copies, s_);
    if (bits_ == 16) {
      for (int c = 0; c < copies; ++c)
        Check(NarrowIndices(m_.indices.as<int>(), static_cast<int16_t*>(slab_.at(c, 1)), m_.nnz, s_), "narrow");
    }
    Check(CanImplementSpmm(Problem(0)), "CanImplementSpmm");
    // The tensor-core kernel reads its tiles (built once per matrix, like the weights of a
    // pruned layer: the build is not timed with the kernel; its host time is in `detail`).
    std::string tc_note;
    const std::string effective = SpmmEffectiveVariant(Problem(0), variant_.c_str());
    if (effective.rfind("tc_", 0) == 0) {
      tc_note = PrepareOncePerCopy(
          &tc_, copies, s_, [&](TcMatrix& t) { return t.Build(Problem(0), s_); }, "the tensor-core tiles", "tiles");
    }
    if (variant_.empty()) {
      detail_ = std::string("CudaSpmm ") + SpmmKernelName(Problem(0)) + ", " + std::to_string(bits_) + "-bit indices";
    } else {
      // The variant's own check (cudaErrorInvalidValue: unknown, or cannot run this problem).
      Check(CudaSpmmPrepared(Problem(0), variant_.c_str(), PreparedAt(tc_, 0), s_),
            ("CudaSpmmVariant '" + variant_ + "' (unknown, or it cannot run this problem)").c_str());
      detail_ = std::string("CudaSpmmVariant spmm_") + DTypeName(m_.dtype) + "_i" + std::to_string(bits_) + "_" +
                variant_ + " (variant chosen by the caller), " + std::to_string(bits_) + "-bit indices";
    }
    detail_ += tc_note;
  }
  void Launch(int copy) override {
    Check(CudaSpmmPrepared(Problem(copy), variant_.c_str(), PreparedAt(tc_, copy), s_), "CudaSpmm");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  SpmmProblem Problem(int c) const {
    SpmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.values = slab_.at(c, 0);
    p.column_indices = slab_.at(c, 1);
    p.index_bits = bits_;
    p.row_offsets = static_cast<const int*>(slab_.at(c, 2));
    p.row_indices = m_.has_row_indices ? static_cast<const int*>(slab_.at(c, 3)) : nullptr;
    p.b = slab_.at(c, 4);
    p.c = slab_.at(c, 5);
    return p;
  }
  const Operands& m_;
  int bits_;
  std::string variant_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<TcMatrix>> tc_;
};

}  // namespace

std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a) {
  return std::make_unique<OursSpmm>(a.operands, a.c.index_bits, a.c.variant, a.ctx.stream);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
