// The registry of the CUDA harness's implementations (see registry.h for how to add one).
#if SPARSE_WITH_CUDA
#include "bench/registry.h"

namespace sparse {
namespace bench {

// The factories, one file each under impl/.
std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeOursSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseLtSpmm(const ImplArgs& a);

namespace {

using Factory = std::unique_ptr<Implementation> (*)(const ImplArgs&);

// A name and its factory for each op (null: the op has no such implementation).
struct Entry {
  const char* name;
  Factory spmm;
  Factory sddmm;
};

// NOTE: the dense names take only their own dtype (cublas_gemm.cc), and serve as the check's
// reference by dtype (bench_cuda.cc).
const Entry kImplementations[] = {
    // name          SpMM                SDDMM
    {"ours",         MakeOursSpmm,       MakeOursSddmm},
    {"cublas_f32",   MakeCublasSpmm,     MakeCublasSddmm},
    {"cublas_tf32",  MakeCublasSpmm,     MakeCublasSddmm},
    {"cublas_f16",   MakeCublasSpmm,     MakeCublasSddmm},
    {"cublas_bf16",  MakeCublasSpmm,     MakeCublasSddmm},
    {"cusparse",     MakeCusparseSpmm,   MakeCusparseSddmm},
    {"cusparselt",   MakeCusparseLtSpmm, nullptr},  // 2:4 matrices only, f16/bf16
};

}  // namespace

std::unique_ptr<Implementation> MakeImplementation(Op op, const ImplArgs& args, std::string* reason) {
  for (const Entry& e : kImplementations) {
    if (args.name != e.name) continue;
    const Factory make = op == Op::kSpmm ? e.spmm : e.sddmm;
    if (!make) {
      *reason = args.name + (op == Op::kSpmm ? " does not do SpMM" : " does not do SDDMM");
      return nullptr;
    }
    std::unique_ptr<Implementation> impl = make(args);
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
