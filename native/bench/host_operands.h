#ifndef SPARSE_BENCH_HOST_OPERANDS_H_
#define SPARSE_BENCH_HOST_OPERANDS_H_
// The CPU side of the harness: a case's operands in host memory, made once per case
// (bench_cpu.cc) and read by every CPU implementation (impl/cpu_*.cc), and the dense fp32
// product the CPU baseline times. Plain C++, built in every configuration.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "common/problems.h"

namespace sparse {
namespace bench {

struct HostOperands {
  // The sparse operand's values in the case's dtype (raw bytes) and decoded to float (the
  // dense product sees the same numbers). Random normals for a pattern-only mask.
  std::vector<uint8_t> values;
  std::vector<float> values_f;
  // SpMM: B (k x n); SDDMM: L (m x k) and R (n x k); raw and decoded, row-major.
  std::vector<uint8_t> b, lhs, rhs;
  std::vector<float> b_f, lhs_f, rhs_f;
  std::vector<int16_t> indices16;  // SpMM with 16-bit indices
  // The problems with host pointers into the vectors above; `c` / `out` point at `output`.
  SpmmProblem spmm;
  SddmmProblem sddmm;
  std::vector<uint8_t> output;
};

// C[m x n] = A[m x k] B[k x n] (or B[n x k]^T when `nt`), fp32, row-major, with the CPU BLAS
// when one is installed, else our blocked GEMM (cpu/cpu_gemm.h). It never skips zeros of A: a
// dense product does the full work. `detail` says which ran.
void DenseProduct(const float* a, const float* b, float* c, int m, int k, int n, bool nt, int threads,
                  std::string* detail);

}  // namespace bench
}  // namespace sparse
#endif  // SPARSE_BENCH_HOST_OPERANDS_H_
