#ifndef SPARSE_BENCH_IMPL_CUBLAS_GEMM_H_
#define SPARSE_BENCH_IMPL_CUBLAS_GEMM_H_
// What the dense cuBLAS baselines (spmm_cublas.cc, sddmm_cublas.cc) share: the dtype a name
// needs and the cuBLAS handle (CanImplement), three dense operands per operand set (parts 0
// and 1 the inputs, part 2 the output), and one cublasGemmEx call with fp32 alpha = 1,
// beta = 0. Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cstdint>
#include <string>

#include "bench/implementation.h"

namespace sparse {
namespace bench {

// A dense cuBLAS name: the only dtype it takes and its compute type (cublasComputeType_t).
struct DenseGemmName {
  const char* name;
  DType needs;
  int compute;
};

class CublasGemm : public Implementation {
 public:
  // The dense name `a.name` (cublas_f32, cublas_tf32, cublas_f16, cublas_bf16); `in0`, `in1`,
  // `out`: the element counts of the three dense operands.
  CublasGemm(const ImplArgs& a, int64_t in0, int64_t in1, int64_t out);
  std::string CanImplement() const override;
  size_t Footprint() const override;

 protected:
  // Allocates the operand sets; the inputs are copied from `in0_source` / `in1_source`
  // (device, null: filled by the caller).
  void BuildSlab(int copies, const void* in0_source, const void* in1_source);
  // Column-major C (rows x cols, ld `ldc`, part 2) = op(first) * second, op = `transa`, on
  // operand set `copy`; `first` and `second` are part numbers (0 or 1).
  void Gemm(int copy, int transa, int rows, int cols, int inner, int first, int ld_first, int second, int ld_second,
            int ldc);

  // The name's compute type (a cublasComputeType_t).
  int compute() const { return gemm_ ? gemm_->compute : kCublasCompute32F; }

  const Operands& m_;
  const cudaStream_t s_;
  Slab slab_;

 private:
  const std::string name_;
  const DenseGemmName* gemm_;  // null: not a dense name
  const Context& ctx_;
  const int64_t in0_, in1_, out_;
};

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_BENCH_IMPL_CUBLAS_GEMM_H_
