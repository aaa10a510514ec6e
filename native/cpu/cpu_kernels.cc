// Multithreaded CPU SpMM/SDDMM (fp32 accumulation) and their float64 references.
// The CPU backend is the fallback where no GPU is present, and the reference that the
// tests and `sparse verify` compare every kernel against.
#include "cpu/cpu_kernels.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "common/half_host.h"
#include "cpu/parallel.h"

namespace sparse {
namespace {

// ---------------------------------------------------------------------------------------
// Element decoding and encoding.

// A 65536-entry table makes f16 decoding one load (built once, thread-safe static init).
const float* F16Table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = F16BitsToFloat(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

inline float Decode(const void* data, int64_t i, DType t, const float* f16_table) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kF16:
      return f16_table[static_cast<const uint16_t*>(data)[i]];
    default:
      return Bf16BitsToFloat(static_cast<const uint16_t*>(data)[i]);
  }
}

inline void Encode(void* data, int64_t i, float v, DType t) {
  switch (t) {
    case DType::kF32:
      static_cast<float*>(data)[i] = v;
      break;
    case DType::kF16:
      static_cast<uint16_t*>(data)[i] = FloatToF16Bits(v);
      break;
    default:
      static_cast<uint16_t*>(data)[i] = FloatToBf16Bits(v);
      break;
  }
}

inline int ColumnIndex(const void* indices, int64_t i, int index_bits) {
  return index_bits == 16 ? static_cast<int>(static_cast<const int16_t*>(indices)[i])
                          : static_cast<const int*>(indices)[i];
}

// A dense operand as fp32: the caller's array itself for f32, else a decoded copy (made in
// parallel). NOTE: decoding once costs one pass over the operand; decoding per use would
// cost one conversion per multiply-add, nnz * n of them for SpMM.
class FloatView {
 public:
  FloatView(const void* data, int64_t count, DType t, int threads) {
    if (t == DType::kF32) {
      ptr_ = static_cast<const float*>(data);
      return;
    }
    copy_.resize(static_cast<size_t>(count));
    const float* table = F16Table();
    float* dst = copy_.data();
    ParallelForRange(count, threads, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = Decode(data, i, t, table);
    });
    ptr_ = copy_.data();
  }
  const float* get() const { return ptr_; }

 private:
  const float* ptr_ = nullptr;
  std::vector<float> copy_;
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Structural checks (cheap, O(m + nnz)): the binding's second line of defence behind the
// TypeScript validator.

const char* CheckSpmmProblem(const SpmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return "m, k, n and nnz must be non-negative";
  if (p.index_bits != 16 && p.index_bits != 32) return "index_bits must be 16 or 32";
  if (p.index_bits == 16 && p.k > 32768) return "16-bit column indices need k <= 32768";
  if (!p.row_offsets) return "csr.rowOffsets is missing";
  if (p.row_offsets[0] != 0) return "csr.rowOffsets[0] must be 0";
  if (p.row_offsets[p.m] != p.nnz) return "csr.rowOffsets[m] must equal nnz";
  for (int r = 0; r < p.m; ++r) {
    if (p.row_offsets[r + 1] < p.row_offsets[r]) return "csr.rowOffsets must be non-decreasing";
  }
  if (p.nnz > 0 && (!p.values || !p.column_indices)) return "csr.values and csr.columnIndices are required when nnz > 0";
  for (int64_t i = 0; i < p.nnz; ++i) {
    const int c = ColumnIndex(p.column_indices, i, p.index_bits);
    if (c < 0 || c >= p.k) return "csr.columnIndices must be in [0, k)";
  }
  if (p.row_indices) {
    std::vector<char> seen(static_cast<size_t>(p.m), 0);
    for (int i = 0; i < p.m; ++i) {
      const int r = p.row_indices[i];
      if (r < 0 || r >= p.m || seen[r]) return "csr.rowIndices must be a permutation of 0..m-1";
      seen[r] = 1;
    }
  }
  if (static_cast<int64_t>(p.k) * p.n > 0 && !p.b) return "b is missing";
  return nullptr;
}

const char* CheckSddmmProblem(const SddmmProblem& p) {
  if (p.m < 0 || p.k < 0 || p.n < 0 || p.nnz < 0) return "m, k, n and nnz must be non-negative";
  if (!p.row_offsets) return "csr.rowOffsets is missing";
  if (p.row_offsets[0] != 0) return "csr.rowOffsets[0] must be 0";
  if (p.row_offsets[p.m] != p.nnz) return "csr.rowOffsets[m] must equal nnz";
  for (int r = 0; r < p.m; ++r) {
    if (p.row_offsets[r + 1] < p.row_offsets[r]) return "csr.rowOffsets must be non-decreasing";
  }
  if (p.nnz > 0 && !p.column_indices) return "csr.columnIndices is required when nnz > 0";
  for (int64_t i = 0; i < p.nnz; ++i) {
    const int c = p.column_indices[i];
    if (c < 0 || c >= p.n) return "csr.columnIndices must be in [0, n)";
  }
  if (p.row_indices) {
    std::vector<char> seen(static_cast<size_t>(p.m), 0);
    for (int i = 0; i < p.m; ++i) {
      const int r = p.row_indices[i];
      if (r < 0 || r >= p.m || seen[r]) return "csr.rowIndices must be a permutation of 0..m-1";
      seen[r] = 1;
    }
  }
  if (p.nnz > 0 && p.k > 0 && (!p.lhs || !p.rhs)) return "lhs and rhs are required";
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// SpMM: each thread owns a contiguous band of rows holding about the same number of
// nonzeros (plus one unit per row for the write), and accumulates one row of C at a time
// in an fp32 buffer: C[r, :] = sum_j A[r, j] * B[j, :].

void CpuSpmm(const SpmmProblem& p, int threads) {
  if (p.m == 0 || p.n == 0) return;
  const float* table = F16Table();
  FloatView b(p.b, static_cast<int64_t>(p.k) * p.n, p.dtype, threads);
  ParallelForRows(p.m, p.row_offsets, threads, [&](int row_begin, int row_end) {
    std::vector<float> acc(static_cast<size_t>(p.n));
    const float* bf = b.get();
    const int64_t n = p.n;
    for (int r = row_begin; r < row_end; ++r) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int i = p.row_offsets[r]; i < p.row_offsets[r + 1]; ++i) {
        const float v = Decode(p.values, i, p.dtype, table);
        const float* brow = bf + static_cast<int64_t>(ColumnIndex(p.column_indices, i, p.index_bits)) * n;
        float* a = acc.data();
        for (int64_t j = 0; j < n; ++j) a[j] += v * brow[j];
      }
      const int64_t base = static_cast<int64_t>(r) * n;
      if (p.dtype == DType::kF32) {
        std::memcpy(static_cast<float*>(p.c) + base, acc.data(), sizeof(float) * n);
      } else {
        for (int64_t j = 0; j < n; ++j) Encode(p.c, base + j, acc[j], p.dtype);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------
// SDDMM: out[i] = dot(L[row(i), :], R[col(i), :]) for each nonzero i, rows split by nnz.

namespace {

// NOTE: 8 independent partial sums both let the compiler vectorise and cut the rounding
// error of long dot products (k in the tens of thousands) by about sqrt(8) over one sum.
inline float Dot(const float* a, const float* b, int64_t k) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= k; j += 8) {
    for (int u = 0; u < 8; ++u) s[u] += a[j + u] * b[j + u];
  }
  for (; j < k; ++j) s[j & 7] += a[j] * b[j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace

void CpuSddmm(const SddmmProblem& p, int threads) {
  if (p.m == 0 || p.nnz == 0) return;
  FloatView lhs(p.lhs, static_cast<int64_t>(p.m) * p.k, p.dtype, threads);
  FloatView rhs(p.rhs, static_cast<int64_t>(p.n) * p.k, p.dtype, threads);
  ParallelForRows(p.m, p.row_offsets, threads, [&](int row_begin, int row_end) {
    const int64_t k = p.k;
    for (int r = row_begin; r < row_end; ++r) {
      const float* lrow = lhs.get() + static_cast<int64_t>(r) * k;
      for (int i = p.row_offsets[r]; i < p.row_offsets[r + 1]; ++i) {
        const float* rrow = rhs.get() + static_cast<int64_t>(p.column_indices[i]) * k;
        Encode(p.out, i, k == 0 ? 0.0f : Dot(lrow, rrow, k), p.dtype);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------
// Float64 references: the same loops, accumulating in double, inputs decoded exactly.

void ReferenceSpmm(const SpmmProblem& p, double* c, int threads) {
  if (p.m == 0 || p.n == 0) return;
  const float* table = F16Table();
  FloatView b(p.b, static_cast<int64_t>(p.k) * p.n, p.dtype, threads);  // exact: f16/bf16 -> f32
  ParallelForRows(p.m, p.row_offsets, threads, [&](int row_begin, int row_end) {
    const int64_t n = p.n;
    for (int r = row_begin; r < row_end; ++r) {
      double* acc = c + static_cast<int64_t>(r) * n;
      std::fill(acc, acc + n, 0.0);
      for (int i = p.row_offsets[r]; i < p.row_offsets[r + 1]; ++i) {
        const double v = Decode(p.values, i, p.dtype, table);
        const float* brow = b.get() + static_cast<int64_t>(ColumnIndex(p.column_indices, i, p.index_bits)) * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += v * static_cast<double>(brow[j]);
      }
    }
  });
}

void ReferenceSddmm(const SddmmProblem& p, double* out, int threads) {
  if (p.m == 0 || p.nnz == 0) return;
  FloatView lhs(p.lhs, static_cast<int64_t>(p.m) * p.k, p.dtype, threads);
  FloatView rhs(p.rhs, static_cast<int64_t>(p.n) * p.k, p.dtype, threads);
  ParallelForRows(p.m, p.row_offsets, threads, [&](int row_begin, int row_end) {
    const int64_t k = p.k;
    for (int r = row_begin; r < row_end; ++r) {
      const float* lrow = lhs.get() + static_cast<int64_t>(r) * k;
      for (int i = p.row_offsets[r]; i < p.row_offsets[r + 1]; ++i) {
        const float* rrow = rhs.get() + static_cast<int64_t>(p.column_indices[i]) * k;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t j = 0;
        for (; j + 4 <= k; j += 4) {
          s0 += static_cast<double>(lrow[j]) * rrow[j];
          s1 += static_cast<double>(lrow[j + 1]) * rrow[j + 1];
          s2 += static_cast<double>(lrow[j + 2]) * rrow[j + 2];
          s3 += static_cast<double>(lrow[j + 3]) * rrow[j + 3];
        }
        for (; j < k; ++j) s0 += static_cast<double>(lrow[j]) * rrow[j];
        out[i] = (s0 + s1) + (s2 + s3);
      }
    }
  });
}

}  // namespace sparse
