// The dense cuBLAS baselines' shared part (see cublas_gemm.h).
#if SPARSE_WITH_CUDA
#include "bench/impl/cublas_gemm.h"

namespace sparse {
namespace bench {

namespace {

// fp32 on CUDA cores, TF32 tensor cores, fp16 and bf16 tensor cores (fp32 accumulation).
const DenseGemmName kDenseGemms[] = {
    {"cublas_f32", DType::kF32, kCublasCompute32F},
    {"cublas_tf32", DType::kF32, kCublasCompute32FFastTF32},
    {"cublas_f16", DType::kF16, kCublasCompute32F},
    {"cublas_bf16", DType::kBF16, kCublasCompute32F},
};

const DenseGemmName* FindDenseGemm(const std::string& name) {
  for (const DenseGemmName& g : kDenseGemms)
    if (name == g.name) return &g;
  return nullptr;
}

}  // namespace

CublasGemm::CublasGemm(const ImplArgs& a, int64_t in0, int64_t in1, int64_t out)
    : m_(a.operands), s_(a.ctx.stream), name_(a.name), gemm_(FindDenseGemm(a.name)), ctx_(a.ctx), in0_(in0),
      in1_(in1), out_(out) {}

std::string CublasGemm::CanImplement() const {
  if (!gemm_) return "unknown implementation '" + name_ + "'";
  if (m_.dtype != gemm_->needs) {
    return name_ + " needs " + DTypeName(gemm_->needs) + " operands (this case is " + DTypeName(m_.dtype) + ")";
  }
  return ctx_.cublas ? "" : ctx_.cublas_reason;
}

size_t CublasGemm::Footprint() const { return Bytes(in0_, m_.dtype) + Bytes(in1_, m_.dtype) + Bytes(out_, m_.dtype); }

void CublasGemm::BuildSlab(int copies, const void* in0_source, const void* in1_source) {
  slab_.Build({{Bytes(in0_, m_.dtype), in0_source}, {Bytes(in1_, m_.dtype), in1_source}, {Bytes(out_, m_.dtype)}},
              copies, s_);
}

void CublasGemm::Gemm(int copy, int transa, int rows, int cols, int inner, int first, int ld_first, int second,
                      int ld_second, int ldc) {
  const float alpha = 1.f, beta = 0.f;
  const cudaDataType t = CudaType(m_.dtype);
  CheckCublas(GetCublas().GemmEx(ctx_.cublas, transa, kCublasOpN, rows, cols, inner, &alpha, slab_.at(copy, first), t,
                                 ld_first, slab_.at(copy, second), t, ld_second, &beta, slab_.at(copy, 2), t, ldc,
                                 compute(), kCublasGemmDefault),
              "cublasGemmEx");
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
