#ifndef SPARSE_CUDA_BENCH_IMPL_CUBLAS_GEMM_H_
#define SPARSE_CUDA_BENCH_IMPL_CUBLAS_GEMM_H_
// What the dense cuBLAS baselines (spmm_cublas.cc, sddmm_cublas.cc) share: the dtype a name
// needs and the cuBLAS handle (CanImplement), three dense operands per operand set (parts 0
// and 1 the inputs, part 2 the output), and one cublasGemmEx call with fp32 alpha = 1,
// beta = 0. Host code; exists only when SPARSE_WITH_CUDA is set.
#if SPARSE_WITH_CUDA
#include <cstdint>
#include <string>

#include "cuda/bench/implementation.h"

namespace sparse {
namespace bench {

class CublasGemm : public Implementation {
 public:
  // `needs`: the only dtype this name takes (cublas_f32 and cublas_tf32: f32, cublas_f16:
  // f16, cublas_bf16: bf16). `compute`: a cublasComputeType_t. `in0`, `in1`, `out`: the
  // element counts of the three dense operands.
  CublasGemm(const ImplArgs& a, DType needs, int compute, int64_t in0, int64_t in1, int64_t out);
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

  const Operands& m_;
  const int compute_;
  const cudaStream_t s_;
  Slab slab_;

 private:
  const std::string name_;
  const DType needs_;
  const Context& ctx_;
  const int64_t in0_, in1_, out_;
};

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
#endif  // SPARSE_CUDA_BENCH_IMPL_CUBLAS_GEMM_H_
