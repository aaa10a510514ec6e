#ifndef SPARSE_COMMON_DIVISOR_H_
#define SPARSE_COMMON_DIVISOR_H_
// Division by a run-time divisor fixed for a launch, without a division instruction sequence:
// the host turns d into a multiplier and a shift once (MakeDivisor), and a kernel divides with
// a multiply-high and two shifts (DivideBy: three dependent instructions, where the compiler's
// division by a register is about 20 with a reciprocal and a float conversion on the chain).
// Exact for every 0 <= n < 2^31 and 1 <= d < 2^31: with l = ceil(log2 d) and
// mul = ceil(2^(31 + l) / d), mul d - 2^(31 + l) < d <= 2^l, so n mul / 2^(31 + l) exceeds n / d
// by less than n 2^l / (d 2^(31 + l)) < 1 / d, which never reaches the next integer. mul < 2^32
// (d > 2^(l - 1)), and n < 2^31 lets 2 n fit in 32 bits: umulhi(2 n, mul) = floor(n mul / 2^31).
// Pure C++ on the host; the same header compiles in CUDA device code.
#include <cstdint>

#if defined(__CUDACC__)
#define SPARSE_DIVISOR_FN __host__ __device__ __forceinline__
#else
#define SPARSE_DIVISOR_FN inline
#endif

namespace sparse {

struct Divisor {
  uint32_t mul = 0;    // ceil(2^(31 + shift) / d); 0: not set (MakeDivisor never gives 0)
  uint32_t shift = 0;  // ceil(log2 d)
};

// d's multiplier and shift; d outside [1, 2^31) gives the unset Divisor{} (a caller then divides
// the slow way).
SPARSE_DIVISOR_FN Divisor MakeDivisor(long long d) {
  Divisor r;
  if (d < 1 || d >= (1LL << 31)) return r;
  uint32_t l = 0;
  while ((1LL << l) < d) ++l;
  const unsigned long long p = 1ULL << (31 + l);
  r.mul = static_cast<uint32_t>((p + static_cast<unsigned long long>(d) - 1) / static_cast<unsigned long long>(d));
  r.shift = l;
  return r;
}

// n / d for 0 <= n < 2^31 (d as MakeDivisor made it).
SPARSE_DIVISOR_FN uint32_t DivideBy(uint32_t n, Divisor d) {
#if defined(__CUDA_ARCH__)
  return __umulhi(n << 1, d.mul) >> d.shift;
#else
  return static_cast<uint32_t>((static_cast<unsigned long long>(n << 1) * d.mul) >> 32) >> d.shift;
#endif
}

}  // namespace sparse

#undef SPARSE_DIVISOR_FN
#endif  // SPARSE_COMMON_DIVISOR_H_
