// The registry of the harness's implementations, both devices (see registry.h for how to add
// one).
#include "bench/registry.h"

namespace sparse {
namespace bench {

struct Operands;
struct Context;
struct ImplArgs;

// The factories, one file each under impl/.
std::unique_ptr<Implementation> MakeOursCpuSpmm(const CpuImplArgs& a);
std::unique_ptr<Implementation> MakeOursCpuSddmm(const CpuImplArgs& a);
std::unique_ptr<Implementation> MakeDenseCpuSpmm(const CpuImplArgs& a);
std::unique_ptr<Implementation> MakeDenseCpuSddmm(const CpuImplArgs& a);
#if SPARSE_WITH_CUDA
std::unique_ptr<Implementation> MakeOursSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeOursSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCublasSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseSpmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseSddmm(const ImplArgs& a);
std::unique_ptr<Implementation> MakeCusparseLtSpmm(const ImplArgs& a);
#define SPARSE_CUDA_FACTORY(f) f
#else
#define SPARSE_CUDA_FACTORY(f) nullptr
#endif

namespace {

using Factory = std::unique_ptr<Implementation> (*)(const ImplArgs&);
using CpuFactory = std::unique_ptr<Implementation> (*)(const CpuImplArgs&);

// A name and its factory for each device and op (null: no such implementation there).
struct Entry {
  const char* name;
  Factory spmm;
  Factory sddmm;
  CpuFactory cpu_spmm;
  CpuFactory cpu_sddmm;
};

#define C SPARSE_CUDA_FACTORY
// NOTE: the dense names take only their own dtype (cublas_gemm.cc), and serve as the check's
// reference by dtype (bench_cuda.cc); on the CPU, cpu_dense_f32 is the reference.
const Entry kImplementations[] = {
    // name          CUDA SpMM              CUDA SDDMM             CPU SpMM          CPU SDDMM
    {"ours",         C(MakeOursSpmm),       C(MakeOursSddmm),      MakeOursCpuSpmm,  MakeOursCpuSddmm},
    {"cublas_f32",   C(MakeCublasSpmm),     C(MakeCublasSddmm),    nullptr,          nullptr},
    {"cublas_tf32",  C(MakeCublasSpmm),     C(MakeCublasSddmm),    nullptr,          nullptr},
    {"cublas_f16",   C(MakeCublasSpmm),     C(MakeCublasSddmm),    nullptr,          nullptr},
    {"cublas_bf16",  C(MakeCublasSpmm),     C(MakeCublasSddmm),    nullptr,          nullptr},
    {"cusparse",     C(MakeCusparseSpmm),   C(MakeCusparseSddmm),  nullptr,          nullptr},
    {"cusparselt",   C(MakeCusparseLtSpmm), nullptr,               nullptr,          nullptr},  // 2:4 only, f16/bf16
    {"cpu_dense_f32", nullptr,              nullptr,               MakeDenseCpuSpmm, MakeDenseCpuSddmm},
};
#undef C

// The entry `name` runs on `device`, or null with *reason set.
const Entry* Find(const std::string& name, Device device, std::string* reason) {
  for (const Entry& e : kImplementations) {
    if (name != e.name) continue;
    const bool here = device == Device::kCpu ? (e.cpu_spmm || e.cpu_sddmm) : (e.spmm || e.sddmm);
    if (here) return &e;
    // NOTE: the CUDA baselines are named in CPU mode (a run that asked for them by habit);
    // a CPU name in a CUDA case reads as unknown there, as before both shared one table.
    *reason = device == Device::kCpu ? name + " is a CUDA baseline (not available in CPU mode)"
                                     : "unknown implementation '" + name + "'";
    return nullptr;
  }
  *reason = "unknown implementation '" + name + "'";
  return nullptr;
}

template <typename Make, typename Args>
std::unique_ptr<Implementation> MakeWith(Make make, Op op, const Args& args, std::string* reason) {
  if (!make) {
    *reason = args.name + (op == Op::kSpmm ? " does not do SpMM" : " does not do SDDMM");
    return nullptr;
  }
  std::unique_ptr<Implementation> impl = make(args);
  *reason = impl->CanImplement();
  if (!reason->empty()) return nullptr;
  return impl;
}

}  // namespace

std::unique_ptr<Implementation> MakeCpuImplementation(Op op, const CpuImplArgs& args, std::string* reason) {
  const Entry* e = Find(args.name, Device::kCpu, reason);
  if (!e) return nullptr;
  return MakeWith(op == Op::kSpmm ? e->cpu_spmm : e->cpu_sddmm, op, args, reason);
}

#if SPARSE_WITH_CUDA
std::unique_ptr<Implementation> MakeImplementation(Op op, const ImplArgs& args, std::string* reason) {
  const Entry* e = Find(args.name, Device::kCuda, reason);
  if (!e) return nullptr;
  return MakeWith(op == Op::kSpmm ? e->spmm : e->sddmm, op, args, reason);
}
#endif

}  // namespace bench
}  // namespace sparse
