// The CPU side of the benchmark harness: a case's host operands, made once, and each asked
// implementation from the registry (our CPU kernels, the dense fp32 product: impl/cpu_*.cc)
// timed with a steady clock; the CPU ceilings. Built in every configuration (no CUDA here).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "common/half_host.h"
#include "common/random_normal.h"
#include "bench/bench.h"
#include "bench/host_operands.h"
#include "bench/implementation.h"
#include "bench/registry.h"
#include "cpu/cpu_gemm.h"

namespace sparse {
namespace bench {

void DecodeToDouble(const void* src, DType dtype, size_t count, double* dst) {
  switch (dtype) {
    case DType::kF32: {
      const float* s = static_cast<const float*>(src);
      for (size_t i = 0; i < count; ++i) dst[i] = s[i];
      break;
    }
    case DType::kF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < count; ++i) dst[i] = F16BitsToFloat(s[i]);
      break;
    }
    case DType::kBF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (size_t i = 0; i < count; ++i) dst[i] = Bf16BitsToFloat(s[i]);
      break;
    }
  }
}

double RelativeError(const std::vector<double>& x, const std::vector<double>& ref) {
  if (x.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (std::isnan(num)) return NAN;
  if (den == 0) return num == 0 ? 0 : INFINITY;
  return std::sqrt(num / den);
}

void DenseProduct(const float* a, const float* b, float* c, int m, int k, int n, bool nt, int threads,
                  std::string* detail) {
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = std::max(k, 1);
  g.b = b, g.ldb = std::max(nt ? k : n, 1), g.b_transposed = nt;
  g.c = c, g.ldc = std::max(n, 1);
  DenseSgemm(g, threads, detail);
}

namespace {

using Clock = std::chrono::steady_clock;

// Standard normals from a counter-based hash (the device fill's recipe: common/random_normal.h).
float NormalAt(uint64_t seed, size_t i) {
  float u1, u2;
  UniformPairAt(seed, i, &u1, &u2);
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.283185307179586f * u2);
}

void FillNormalHost(std::vector<float>* f32, size_t count, uint64_t seed) {
  f32->resize(count);
  for (size_t i = 0; i < count; ++i) (*f32)[i] = NormalAt(seed, i);
}

// `count` values of `dtype` (raw bytes) from floats.
std::vector<uint8_t> Encode(const std::vector<float>& v, DType t) {
  std::vector<uint8_t> out(v.size() * DTypeBytes(t));
  if (t == DType::kF32) {
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  } else {
    uint16_t* o = reinterpret_cast<uint16_t*>(out.data());
    for (size_t i = 0; i < v.size(); ++i) o[i] = t == DType::kF16 ? FloatToF16Bits(v[i]) : FloatToBf16Bits(v[i]);
  }
  return out;
}

std::vector<float> DecodeToFloat(const void* src, DType t, size_t count) {
  std::vector<double> d(count);
  DecodeToDouble(src, t, count, d.data());
  return std::vector<float>(d.begin(), d.end());
}

// CPU timing: one warm-up run, then runs until both min_reps and min_ms are reached, or
// max_reps runs, or 5 s with at least 3 samples (CPU figures are coarse; see the README).
std::vector<double> TimeCpu(const BenchOptions& o, const std::function<void()>& fn) {
  fn();
  std::vector<double> samples;
  double total = 0;
  const auto start = Clock::now();
  for (;;) {
    const auto t0 = Clock::now();
    fn();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    samples.push_back(ms);
    total += ms;
    const int n = static_cast<int>(samples.size());
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (n >= std::max(1, o.min_reps) && total >= o.min_ms) break;
    if (n >= std::max(1, o.max_reps)) break;
    if (n >= 3 && wall > 5000) break;
  }
  return samples;
}

void CheckCase(const BenchCase& c, bool spmm) {
  const int cols = spmm ? c.k : c.n;
  if (c.csr.rows != c.m || c.csr.cols != cols)
    throw BenchError("usage", "csr shape does not match the problem");
  if (c.csr.row_offsets[0] != 0 || c.csr.row_offsets[c.m] != c.csr.nnz)
    throw BenchError("usage", "csr.rowOffsets must run from 0 to nnz");
}

// The case's operands on the host: the CSR's values as given (random normals for a
// pattern-only mask) and the dense operands as seeded random normals, all rounded to the
// case's dtype, so that the dense product sees the same numbers.
void MakeHostOperands(const BenchCase& c, Op op, HostOperands* h) {
  const size_t nnz = c.csr.nnz;
  if (c.csr.values) h->values_f = DecodeToFloat(c.csr.values, c.dtype, nnz);
  else FillNormalHost(&h->values_f, nnz, 0x5eed0000ull);
  h->values = Encode(h->values_f, c.dtype);
  h->values_f = DecodeToFloat(h->values.data(), c.dtype, nnz);
  if (op == Op::kSpmm) {
    FillNormalHost(&h->b_f, static_cast<size_t>(c.k) * c.n, 0x5eedB000ull);
    h->b = Encode(h->b_f, c.dtype);
    h->b_f = DecodeToFloat(h->b.data(), c.dtype, h->b_f.size());
    if (c.index_bits == 16) h->indices16.assign(c.csr.column_indices, c.csr.column_indices + nnz);
    h->output.resize(static_cast<size_t>(c.m) * c.n * DTypeBytes(c.dtype));
    SpmmProblem& p = h->spmm;
    p.m = c.m, p.k = c.k, p.n = c.n, p.nnz = static_cast<int>(nnz), p.dtype = c.dtype;
    p.values = h->values.data();
    p.column_indices = c.index_bits == 16 ? static_cast<const void*>(h->indices16.data()) : c.csr.column_indices;
    p.index_bits = c.index_bits;
    p.row_offsets = c.csr.row_offsets;
    p.row_indices = c.csr.row_indices;
    p.b = h->b.data();
    p.c = h->output.data();
  } else {
    FillNormalHost(&h->lhs_f, static_cast<size_t>(c.m) * c.k, 0x5eed1000ull);
    FillNormalHost(&h->rhs_f, static_cast<size_t>(c.n) * c.k, 0x5eed2000ull);
    h->lhs = Encode(h->lhs_f, c.dtype), h->rhs = Encode(h->rhs_f, c.dtype);
    h->lhs_f = DecodeToFloat(h->lhs.data(), c.dtype, h->lhs_f.size());
    h->rhs_f = DecodeToFloat(h->rhs.data(), c.dtype, h->rhs_f.size());
    h->output.resize(nnz * DTypeBytes(c.dtype));
    SddmmProblem& p = h->sddmm;
    p.m = c.m, p.k = c.k, p.n = c.n, p.nnz = static_cast<int>(nnz), p.dtype = c.dtype;
    p.row_offsets = c.csr.row_offsets;
    p.column_indices = c.csr.column_indices;
    p.row_indices = c.csr.row_indices;
    p.lhs = h->lhs.data();
    p.rhs = h->rhs.data();
    p.out = h->output.data();
  }
}

}  // namespace

BenchResult RunCaseCpu(Op op, const BenchCase& c, const BenchOptions& o) {
  CheckCase(c, op == Op::kSpmm);
  HostOperands host;
  MakeHostOperands(c, op, &host);
  BenchResult res;
  std::vector<double> reference, ours_out;
  for (const std::string& name : c.impls) {
    ImplResult ir;
    ir.name = name;
    std::unique_ptr<Implementation> impl = MakeCpuImplementation(op, CpuImplArgs{name, c, host, o}, &ir.reason);
    if (impl) {
      ir.l2_mode = "n/a";
      impl->Setup(1);
      ir.samples_ms = TimeCpu(o, [&] { impl->Launch(0); });
      ir.detail = impl->detail();
      ir.available = true;
      // The check: ours against the dense product.
      if (name == "ours") ours_out = impl->Output();
      if (name == "cpu_dense_f32") reference = impl->Output();
    }
    res.impls.push_back(std::move(ir));
  }
  if (o.check && !reference.empty() && !ours_out.empty())
    for (ImplResult& ir : res.impls)
      if (ir.name == "ours") ir.rel_err = RelativeError(ours_out, reference), ir.check_against = "cpu_dense_f32";
  return res;
}

Ceilings MeasureCeilingsCpu(int threads) {
  Ceilings out;
  BenchOptions o;
  o.min_reps = 5;
  o.min_ms = 50;
  o.max_reps = 20;
  {
    const size_t bytes = 64u << 20;
    std::vector<uint8_t> a(bytes, 1), b(bytes, 0);
    std::vector<double> t = TimeCpu(o, [&] { std::memcpy(b.data(), a.data(), bytes); });
    std::sort(t.begin(), t.end());
    out.copy_gbps = 2.0 * bytes / (t[t.size() / 2] * 1e-3) / 1e9;
  }
  {
    const int n = 768;
    std::vector<float> a, b, c(static_cast<size_t>(n) * n);
    FillNormalHost(&a, static_cast<size_t>(n) * n, 1);
    FillNormalHost(&b, static_cast<size_t>(n) * n, 2);
    std::string how;
    std::vector<double> t = TimeCpu(o, [&] { DenseProduct(a.data(), b.data(), c.data(), n, n, n, false, threads, &how); });
    out.note = "CPU: single-threaded memcpy bandwidth; dense rate of the CPU baseline's fp32 GEMM: " + how;
    std::sort(t.begin(), t.end());
    out.f32_tflops = 2.0 * n * n * n / (t[t.size() / 2] * 1e-3) / 1e12;
    out.gemm_size = n;
  }
  return out;
}

}  // namespace bench
}  // namespace sparse
