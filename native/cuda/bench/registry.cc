// The registry of the CUDA harness's implementations (see registry.h for how to add one).
#if SPARSE_WITH_CUDA
#include "cuda/bench/registry.h"

namespace sparse {
namespace bench {

// The factories, one file each under impl/.
std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSpmm(const ImplArgs& a, DType needs, int compute);
std::unique_ptr<Implementation> MakeCusparseSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeOursSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSddmm(const ImplArgs& a, DType needs, int compute);
std::unique_ptr<Implementation> MakeCusparseSddmm(const ImplArgs& a);

namespace {

using Factory = std::unique_ptr<Implementation> (*)(const ImplArgs&);

struct Entry {
  Op op;
  const char* name;
  Factory make;
};

// NOTE: the dense names are the check's reference (cublas_f32, cublas_f16, cublas_bf16 by
// dtype: bench_cuda.cc); a name takes only its own dtype (CublasGemm::CanImplement).
const Entry kImplementations[] = {
    {Op::kSpmm, "ours", MakeOursSpmm},
    {Op::kSpmm, "cublas_f32", [](const ImplArgs& a) { return MakeCublasSpmm(a, DType::kF32, kCublasCompute32F); }},
    {Op::kSpmm, "cublas_tf32", [](const ImplArgs& a) { return MakeCublasSpmm(a, DType::kF32, kCublasCompute32FFastTF32); }},
    {Op::kSpmm, "cublas_f16", [](const ImplArgs& a) { return MakeCublasSpmm(a, DType::kF16, kCublasCompute32F); }},
    {Op::kSpmm, "cublas_bf16", [](const ImplArgs& a) { return MakeCublasSpmm(a, DType::kBF16, kCublasCompute32F); }},
    {Op::kSpmm, "cusparse", MakeCusparseSpmm},
    {Op::kSddmm, "ours", MakeOursSddmm},
    {Op::kSddmm, "cublas_f32", [](const ImplArgs& a) { return MakeCublasSddmm(a, DType::kF32, kCublasCompute32F); }},
    {Op::kSddmm, "cublas_tf32", [](const ImplArgs& a) { return MakeCublasSddmm(a, DType::kF32, kCublasCompute32FFastTF32); }},
    {Op::kSddmm, "cublas_f16", [](const ImplArgs& a) { return MakeCublasSddmm(a, DType::kF16, kCublasCompute32F); }},
    {Op::kSddmm, "cublas_bf16", [](const ImplArgs& a) { return MakeCublasSddmm(a, DType::kBF16, kCublasCompute32F); }},
    {Op::kSddmm, "cusparse", MakeCusparseSddmm},
};

}  // namespace

std::unique_ptr<Implementation> MakeImplementation(Op op, const ImplArgs& args, std::string* reason) {
  for (const Entry& e : kImplementations) {
    if (e.op != op || args.name != e.name) continue;
    std::unique_ptr<Implementation> impl = e.make(args);
    *reason = impl->CanImplement();
    if (!reason->empty()) return nullptr;
    return impl;
  }
  *reason = "unknown implementation '" + args.name + "'";
  return nullptr;
}

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_WITH_CUDA
