// The CPU baseline `cpu_dense_f32`: the dense fp32 product (a CPU BLAS when installed, else
// cpu/cpu_gemm.h) on the densified sparse operand. SpMM: A B; SDDMM: the full L R^T, of
// which the nonzeros' entries are the output (it serves as the CPU check's reference).
#include <memory>
#include <string>
#include <vector>

#include "bench/host_operands.h"
#include "bench/implementation.h"

namespace sparse {
namespace bench {
namespace {

class DenseCpu : public Implementation {
 public:
  DenseCpu(Op op, const BenchCase& c, const HostOperands& h, int threads) : op_(op), c_(c), h_(h), threads_(threads) {}
  size_t Footprint() const override { return 0; }
  void Setup(int) override {
    out_.assign(static_cast<size_t>(c_.m) * c_.n, 0.f);
    if (op_ == Op::kSpmm) {
      const HostCsr& csr = c_.csr;
      a_.assign(static_cast<size_t>(csr.rows) * csr.cols, 0.f);
      for (int r = 0; r < csr.rows; ++r)
        for (int i = csr.row_offsets[r]; i < csr.row_offsets[r + 1]; ++i)
          a_[static_cast<size_t>(r) * csr.cols + csr.column_indices[i]] = h_.values_f[i];
    }
  }
  // Each launch also says which GEMM ran (detail).
  void Launch(int) override {
    std::string how;
    if (op_ == Op::kSpmm) {
      DenseProduct(a_.data(), h_.b_f.data(), out_.data(), c_.m, c_.k, c_.n, false, threads_, &how);
      detail_ = how;
    } else {
      DenseProduct(h_.lhs_f.data(), h_.rhs_f.data(), out_.data(), c_.m, c_.k, c_.n, true, threads_, &how);
      detail_ = "full product L R^T: " + how;
    }
  }
  std::vector<double> Output() override {
    if (op_ == Op::kSpmm) return std::vector<double>(out_.begin(), out_.end());
    std::vector<double> ref(static_cast<size_t>(c_.csr.nnz));
    for (int row = 0; row < c_.m; ++row)
      for (int i = c_.csr.row_offsets[row]; i < c_.csr.row_offsets[row + 1]; ++i)
        ref[i] = out_[static_cast<size_t>(row) * c_.n + c_.csr.column_indices[i]];
    return ref;
  }

 private:
  Op op_;
  const BenchCase& c_;
  const HostOperands& h_;
  int threads_;
  std::vector<float> a_, out_;
};

}  // namespace

std::unique_ptr<Implementation> MakeDenseCpuSpmm(const CpuImplArgs& a) {
  return std::make_unique<DenseCpu>(Op::kSpmm, a.c, a.host, a.options.threads);
}
std::unique_ptr<Implementation> MakeDenseCpuSddmm(const CpuImplArgs& a) {
  return std::make_unique<DenseCpu>(Op::kSddmm, a.c, a.host, a.options.threads);
}

}  // namespace bench
}  // namespace sparse
