// The CPU side of the benchmark harness: our CPU kernels against a dense fp32 product (a CPU
// BLAS when installed, else our blocked GEMM: cpu/cpu_gemm.h), timed with a steady clock.
// Built in every configuration (no CUDA here).
// NOTE: it lives beside the CUDA harness so that both share bench.h and one binding.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "common/half_host.h"
#include "cpu/cpu_gemm.h"
#include "cpu/cpu_kernels.h"
#include "cpu/parallel.h"
#include "bench/bench.h"

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

namespace {

using Clock = std::chrono::steady_clock;

// Standard normals from a counter-based hash (the same recipe as the device fill).
uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
float NormalAt(uint64_t seed, size_t i) {
  const uint64_t h = SplitMix64(seed ^ SplitMix64(i));
  const float u1 = ((h >> 40) + 1) * (1.0f / 16777217.0f);
  const float u2 = ((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
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

// C[m x n] = A[m x k] B[k x n] (or B[n x k]^T when `nt`), fp32, row-major, with the CPU BLAS
// when one is installed, else our blocked GEMM (cpu/cpu_gemm.h). It never skips zeros of A: a
// dense product does the full work.
void DenseProduct(const float* a, const float* b, float* c, int m, int k, int n, bool nt, int threads,
                  std::string* detail) {
  GemmArgs g;
  g.m = m, g.n = n, g.k = k;
  g.a = a, g.lda = std::max(k, 1);
  g.b = b, g.ldb = std::max(nt ? k : n, 1), g.b_transposed = nt;
  g.c = c, g.ldc = std::max(n, 1);
  DenseSgemm(g, threads, detail);
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

std::vector<float> DenseFromCsr(const HostCsr& csr, const std::vector<float>& values) {
  std::vector<float> dense(static_cast<size_t>(csr.rows) * csr.cols, 0.f);
  for (int r = 0; r < csr.rows; ++r)
    for (int i = csr.row_offsets[r]; i < csr.row_offsets[r + 1]; ++i)
      dense[static_cast<size_t>(r) * csr.cols + csr.column_indices[i]] = values[i];
  return dense;
}

ImplResult Unknown(const std::string& name) {
  ImplResult ir;
  ir.name = name;
  ir.reason = name.rfind("cu", 0) == 0 ? name + " is a CUDA baseline (not available in CPU mode)"
                                        : "unknown implementation '" + name + "'";
  return ir;
}

}  // namespace

BenchResult BenchSpmmCpu(const BenchCase& c, const BenchOptions& o) {
  CheckCase(c, true);
  const size_t nnz = c.csr.nnz;
  std::vector<float> values_f;
  if (c.csr.values) values_f = DecodeToFloat(c.csr.values, c.dtype, nnz);
  else FillNormalHost(&values_f, nnz, 0x5eed0000ull);
  std::vector<uint8_t> values = Encode(values_f, c.dtype);
  // Operands rounded to the case's dtype, so the dense product sees the same numbers.
  std::vector<float> b_f;
  FillNormalHost(&b_f, static_cast<size_t>(c.k) * c.n, 0x5eedB000ull);
  std::vector<uint8_t> b = Encode(b_f, c.dtype);
  b_f = DecodeToFloat(b.data(), c.dtype, b_f.size());
  values_f = DecodeToFloat(values.data(), c.dtype, nnz);

  std::vector<int16_t> idx16;
  if (c.index_bits == 16) idx16.assign(c.csr.column_indices, c.csr.column_indices + nnz);
  std::vector<uint8_t> out(static_cast<size_t>(c.m) * c.n * DTypeBytes(c.dtype));
  SpmmProblem p;
  p.m = c.m, p.k = c.k, p.n = c.n, p.nnz = static_cast<int>(nnz), p.dtype = c.dtype;
  p.values = values.data();
  p.column_indices = c.index_bits == 16 ? static_cast<const void*>(idx16.data()) : c.csr.column_indices;
  p.index_bits = c.index_bits;
  p.row_offsets = c.csr.row_offsets;
  p.row_indices = c.csr.row_indices;
  p.b = b.data();
  p.c = out.data();

  BenchResult res;
  std::vector<double> reference;
  std::vector<double> ours_out;
  for (const std::string& name : c.impls) {
    ImplResult ir;
    ir.name = name;
    ir.l2_mode = "n/a";
    if (name == "ours") {
      if (const char* why = CheckSpmmProblem(p)) throw BenchError("usage", why);
      ir.detail = "CpuSpmm, " + std::to_string(ResolveThreads(o.threads, 1 << 30)) + " threads";
      ir.samples_ms = TimeCpu(o, [&] { CpuSpmm(p, o.threads); });
      ir.available = true;
      ours_out.resize(static_cast<size_t>(c.m) * c.n);
      DecodeToDouble(out.data(), c.dtype, ours_out.size(), ours_out.data());
    } else if (name == "cpu_dense_f32") {
      std::vector<float> a = DenseFromCsr(c.csr, values_f);
      std::vector<float> cd(static_cast<size_t>(c.m) * c.n);
      ir.samples_ms =
          TimeCpu(o, [&] { DenseProduct(a.data(), b_f.data(), cd.data(), c.m, c.k, c.n, false, o.threads, &ir.detail); });
      ir.available = true;
      reference.assign(cd.begin(), cd.end());
    } else {
      ir = Unknown(name);
    }
    res.impls.push_back(std::move(ir));
  }
  if (o.check && !reference.empty() && !ours_out.empty())
    for (ImplResult& ir : res.impls)
      if (ir.name == "ours") ir.rel_err = RelativeError(ours_out, reference), ir.check_against = "cpu_dense_f32";
  return res;
}

BenchResult BenchSddmmCpu(const BenchCase& c, const BenchOptions& o) {
  CheckCase(c, false);
  const size_t nnz = c.csr.nnz;
  std::vector<float> l_f, r_f;
  FillNormalHost(&l_f, static_cast<size_t>(c.m) * c.k, 0x5eed1000ull);
  FillNormalHost(&r_f, static_cast<size_t>(c.n) * c.k, 0x5eed2000ull);
  std::vector<uint8_t> l = Encode(l_f, c.dtype), r = Encode(r_f, c.dtype);
  l_f = DecodeToFloat(l.data(), c.dtype, l_f.size());
  r_f = DecodeToFloat(r.data(), c.dtype, r_f.size());
  std::vector<uint8_t> out(nnz * DTypeBytes(c.dtype));
  SddmmProblem p;
  p.m = c.m, p.k = c.k, p.n = c.n, p.nnz = static_cast<int>(nnz), p.dtype = c.dtype;
  p.row_offsets = c.csr.row_offsets;
  p.column_indices = c.csr.column_indices;
  p.row_indices = c.csr.row_indices;
  p.lhs = l.data();
  p.rhs = r.data();
  p.out = out.data();

  BenchResult res;
  std::vector<double> reference, ours_out;
  for (const std::string& name : c.impls) {
    ImplResult ir;
    ir.name = name;
    ir.l2_mode = "n/a";
    if (name == "ours") {
      if (const char* why = CheckSddmmProblem(p)) throw BenchError("usage", why);
      ir.detail = "CpuSddmm, " + std::to_string(ResolveThreads(o.threads, 1 << 30)) + " threads";
      ir.samples_ms = TimeCpu(o, [&] { CpuSddmm(p, o.threads); });
      ir.available = true;
      ours_out.resize(nnz);
      DecodeToDouble(out.data(), c.dtype, nnz, ours_out.data());
    } else if (name == "cpu_dense_f32") {
      std::vector<float> full(static_cast<size_t>(c.m) * c.n);
      std::string how;
      ir.samples_ms =
          TimeCpu(o, [&] { DenseProduct(l_f.data(), r_f.data(), full.data(), c.m, c.k, c.n, true, o.threads, &how); });
      ir.detail = "full product L R^T: " + how;
      ir.available = true;
      reference.resize(nnz);
      for (int row = 0; row < c.m; ++row)
        for (int i = c.csr.row_offsets[row]; i < c.csr.row_offsets[row + 1]; ++i)
          reference[i] = full[static_cast<size_t>(row) * c.n + c.csr.column_indices[i]];
    } else {
      ir = Unknown(name);
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
