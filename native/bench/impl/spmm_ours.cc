// Our SpMM (native/cuda/spmm) in the harness: CSR with 16- or 32-bit column indices, or a
// prepared form (tensor-core tiles, bitmap tiles, 2:4 tiles) built once per matrix like the
// weights of a pruned layer.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/device_util.h"
#include "bench/implementation.h"
#include "cuda/spmm/spmm.h"
#include "common/sparse24.h"
#include "cuda/spmm/spmm_prepared.h"

namespace sparse {
namespace bench {
namespace {

// `variant` empty: CudaSpmm (the kernel's own selection, or SPARSE_SPMM_VARIANT); else that
// variant through CudaSpmmVariant (`sparse bench --tune` candidates and cached winners).
class OursSpmm : public Implementation {
 public:
  OursSpmm(const Operands& mm, const HostCsr& csr, int index_bits, std::string variant, cudaStream_t s)
      : m_(mm), bits_(index_bits), variant_(std::move(variant)), s_(s) {
    // The 2:4 kernel may run a 2:4 matrix (the selection and the variants look at this).
    two_four_ = mm.dtype != DType::kF32 && IsTwoFour(csr.rows, csr.row_offsets, csr.column_indices,
                                                      static_cast<const uint16_t*>(csr.values));
    detail_ = "CudaSpmm, " + std::to_string(bits_) + "-bit indices";
  }
  size_t Footprint() const override {
    if (!prep_.empty() && prep_[0]) {
      return prep_[0]->Bytes() + Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
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
    // The tensor-core, bitmap and 2:4 kernels read a prepared form (built once per matrix,
    // like the weights of a pruned layer: the build is not timed with the kernel; its host
    // time is in `detail`).
    std::string tc_note;
    const std::string effective = SpmmEffectiveVariant(Problem(0), variant_.c_str());
    const char* form = effective.rfind("tc_", 0) == 0    ? "tiles"
                       : effective.rfind("bm_", 0) == 0  ? "bitmap tiles"
                       : effective.rfind("s24_", 0) == 0 ? "2:4 tiles"
                                                         : nullptr;
    if (form) {
      tc_note = PrepareOncePerCopy(
          &prep_, copies, s_, [&](SpmmPrepared& t) { return t.Build(Problem(0), effective, s_); },
          std::string("the ") + form, form);
    }
    if (variant_.empty()) {
      detail_ = std::string("CudaSpmm ") + SpmmKernelName(Problem(0)) + ", " + std::to_string(bits_) + "-bit indices";
    } else {
      // The variant's own check (cudaErrorInvalidValue: unknown, or cannot run this problem).
      Check(CudaSpmmPrepared(Problem(0), variant_.c_str(), PreparedAt(prep_, 0), s_),
            ("CudaSpmmVariant '" + variant_ + "' (unknown, or it cannot run this problem)").c_str());
      detail_ = std::string("CudaSpmmVariant spmm_") + DTypeName(m_.dtype) + "_i" + std::to_string(bits_) + "_" +
                variant_ + " (variant chosen by the caller), " + std::to_string(bits_) + "-bit indices";
    }
    detail_ += tc_note;
  }
  void Launch(int copy) override {
    Check(CudaSpmmPrepared(Problem(copy), variant_.c_str(), PreparedAt(prep_, copy), s_), "CudaSpmm");
  }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), (size_t)m_.m * m_.n, m_.dtype, s_); }

 private:
  SpmmProblem Problem(int c) const {
    SpmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.structure = two_four_ ? SpmmProblem::k24 : SpmmProblem::kUnstructured;
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
  bool two_four_ = false;
  std::string variant_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<SpmmPrepared>> prep_;
};

}  // namespace

std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a) {
  return std::make_unique<OursSpmm>(a.operands, a.c.csr, a.c.index_bits, a.c.variant, a.ctx.stream);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
