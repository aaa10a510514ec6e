// Our SpMM (native/cuda/spmm) in the harness: an SpmmPlan per operand set, reading the CSR
// with 16- or 32-bit column indices, or a prepared operand (tensor-core tiles, bitmap tiles,
// 2:4 tiles) built once per matrix like the weights of a pruned layer.
#if SPARSE_WITH_CUDA
#include <memory>
#include <string>
#include <vector>

#include "bench/device_util.h"
#include "bench/implementation.h"
#include "cuda/spmm/spmm.h"
#include "cuda/spmm/spmm_plan.h"

namespace sparse {
namespace bench {
namespace {

// `variant` empty: the plan's own choice (the selection, or SPARSE_SPMM_VARIANT); else that
// variant (`sparse bench --tune` candidates and cached winners). One plan per operand set:
// set 0's is made (and its prepared operand built) once, the others are device copies.
class OursSpmm : public Implementation {
 public:
  OursSpmm(const Operands& mm, const HostCsr& csr, int index_bits, std::string variant, cudaStream_t s)
      : m_(mm), bits_(index_bits), variant_(std::move(variant)), s_(s) {
    // The 2:4 kernel may run a 2:4 matrix (the selection and the variants look at this).
    structure_ = SpmmPlan::Structure(mm.dtype, csr.rows, csr.row_offsets, csr.column_indices, csr.values);
    detail_ = "CudaSpmm, " + std::to_string(bits_) + "-bit indices";
  }
  size_t Footprint() const override {
    if (!plans_.empty() && plans_[0]->prepared()) {
      return plans_[0]->Bytes() + Bytes((int64_t)m_.k * m_.n, m_.dtype) + Bytes((int64_t)m_.m * m_.n, m_.dtype);
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
    const std::string what = variant_.empty()
                                 ? std::string("CanImplementSpmm")
                                 : "CudaSpmmVariant '" + variant_ + "' (unknown, or it cannot run this problem)";
    auto plan = [&](SpmmPlan& t) {
      const cudaError_t e = t.Init(Problem(0), variant_.c_str());
      return e != cudaSuccess ? e : t.Prepare(Problem(0), s_);
    };
    // The tensor-core, bitmap and 2:4 kernels read a prepared operand (built once per matrix,
    // like the weights of a pruned layer: the build is not timed with the kernel; its host
    // time is in `detail`).
    SpmmPlan probe;
    Check(probe.Init(Problem(0), variant_.c_str()), what.c_str());
    std::string note;
    if (const char* form = probe.form()) {
      note = PrepareOncePerCopy(&plans_, copies, s_, plan, std::string("the ") + form, form);
    } else {
      plans_.clear();
      for (int c = 0; c < copies; ++c) {
        plans_.push_back(std::make_unique<SpmmPlan>());
        Check(plans_.back()->CopyFrom(probe, s_), "planning");
      }
    }
    if (variant_.empty()) {
      detail_ = "CudaSpmm " + plans_[0]->KernelName() + ", " + std::to_string(bits_) + "-bit indices";
    } else {
      detail_ = std::string("CudaSpmmVariant spmm_") + DTypeName(m_.dtype) + "_i" + std::to_string(bits_) + "_" +
                variant_ + " (variant chosen by the caller), " + std::to_string(bits_) + "-bit indices";
    }
    detail_ += note;
  }
  void Launch(int copy) override { Check(plans_[copy]->Run(Problem(copy), s_), "CudaSpmm"); }
  std::vector<double> Output() override { return ReadDense(slab_.at(0, 5), (size_t)m_.m * m_.n, m_.dtype, s_); }
  // All bits set: NaN in f32, f16 and bf16.
  void PoisonOutput() override {
    Check(cudaMemsetAsync(slab_.at(0, 5), 0xff, Bytes((int64_t)m_.m * m_.n, m_.dtype), s_), "poison C");
  }

 private:
  SpmmProblem Problem(int c) const {
    SpmmProblem p;
    p.m = m_.m, p.k = m_.k, p.n = m_.n, p.nnz = m_.nnz, p.dtype = m_.dtype;
    p.structure = structure_;
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
  int structure_ = SpmmProblem::kUnstructured;
  std::string variant_;
  cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<SpmmPlan>> plans_;  // one per operand set
};

}  // namespace

std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a) {
  return std::make_unique<OursSpmm>(a.operands, a.c.csr, a.c.index_bits, a.c.variant, a.ctx.stream);
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
