// Our CPU kernels in the harness (cpu/cpu_kernels.h): CpuSpmm and CpuSddmm on the case's host
// operands, on `options.threads` threads.
#include <memory>
#include <string>
#include <vector>

#include "bench/host_operands.h"
#include "bench/implementation.h"
#include "cpu/cpu_kernels.h"
#include "cpu/parallel.h"

namespace sparse {
namespace bench {
namespace {

class OursCpu : public Implementation {
 public:
  OursCpu(Op op, const HostOperands& h, int threads) : op_(op), h_(h), threads_(threads) {}
  size_t Footprint() const override { return 0; }
  void Setup(int) override {
    const char* why = op_ == Op::kSpmm ? CheckSpmmProblem(h_.spmm) : CheckSddmmProblem(h_.sddmm);
    if (why) throw BenchError("usage", why);
    detail_ = std::string(op_ == Op::kSpmm ? "CpuSpmm, " : "CpuSddmm, ") +
              std::to_string(ResolveThreads(threads_, 1 << 30)) + " threads";
  }
  void Launch(int) override {
    if (op_ == Op::kSpmm) CpuSpmm(h_.spmm, threads_);
    else CpuSddmm(h_.sddmm, threads_);
  }
  std::vector<double> Output() override {
    const DType t = op_ == Op::kSpmm ? h_.spmm.dtype : h_.sddmm.dtype;
    const size_t count = op_ == Op::kSpmm ? static_cast<size_t>(h_.spmm.m) * h_.spmm.n : h_.sddmm.nnz;
    std::vector<double> out(count);
    DecodeToDouble(h_.output.data(), t, count, out.data());
    return out;
  }

 private:
  Op op_;
  const HostOperands& h_;
  int threads_;
};

}  // namespace

std::unique_ptr<Implementation> MakeOursCpuSpmm(const CpuImplArgs& a) {
  return std::make_unique<OursCpu>(Op::kSpmm, a.host, a.options.threads);
}
std::unique_ptr<Implementation> MakeOursCpuSddmm(const CpuImplArgs& a) {
  return std::make_unique<OursCpu>(Op::kSddmm, a.host, a.options.threads);
}

}  // namespace bench
}  // namespace sparse
