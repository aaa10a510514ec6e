#ifndef SPARSE_BENCH_IMPL_CUSPARSE_COMMON_H_
#define SPARSE_BENCH_IMPL_CUSPARSE_COMMON_H_
// What the cuSPARSE baselines (spmm_cusparse.cc, sddmm_cusparse.cc) share: the handle
// (CanImplement), operand sets in a Slab, and per set the generic-API descriptors (one
// sparse CSR matrix, two dense matrices) and workspace, made before timing as an expert
// would. Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/implementation.h"

namespace sparse {
namespace bench {

// One operand set's descriptors and workspace, destroyed with it.
struct CusparseSet {
  cusparseSpMatDescr_t sparse = nullptr;
  cusparseDnMatDescr_t dense[2] = {nullptr, nullptr};
  int op_b = kCusparseOpN;  // SDDMM: how R is described
  DeviceBuffer work;
  CusparseSet() = default;
  CusparseSet(const CusparseSet&) = delete;
  CusparseSet& operator=(const CusparseSet&) = delete;
  ~CusparseSet();
  // sparse = the CSR matrix (rows x cols, nnz) at `offsets`, `indices` (int32, base 0) and
  // `values` (`t`).
  void CreateCsr(int64_t rows, int64_t cols, int64_t nnz, void* offsets, void* indices, void* values, cudaDataType t);
  // dense[i] = rows x cols at `values`, leading dimension `ld`, `order` (kCusparseOrderRow/Col).
  void CreateDense(int i, int64_t rows, int64_t cols, int64_t ld, void* values, cudaDataType t, int order);
};

class CusparseImpl : public Implementation {
 public:
  explicit CusparseImpl(const ImplArgs& a)
      : m_(a.operands), h_(a.ctx.cusparse), s_(a.ctx.stream), reason_(a.ctx.cusparse_reason) {}
  std::string CanImplement() const override { return h_ ? "" : reason_; }

 protected:
  const Operands& m_;
  const cusparseHandle_t h_;
  const cudaStream_t s_;
  Slab slab_;
  std::vector<std::unique_ptr<CusparseSet>> sets_;

 private:
  const std::string reason_;
};

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_IMPL_CUSPARSE_COMMON_H_
