#ifndef SPARSE_COMMON_RANDOM_NORMAL_H_
#define SPARSE_COMMON_RANDOM_NORMAL_H_
// The benchmark's seeded operands: a counter-based hash (SplitMix64) and the two 24-bit
// uniforms of element i, which Box-Muller turns into a standard normal. One recipe for the
// device fill (bench/device_util.cu) and the host one (bench/bench_cpu.cc), so that both
// devices time the same numbers. Host and device code.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define SPARSE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SPARSE_HOST_DEVICE inline
#endif

namespace sparse {

SPARSE_HOST_DEVICE uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The uniforms of element i for `seed`: u1 in (0, 1] (its log is finite), u2 in [0, 1).
SPARSE_HOST_DEVICE void UniformPairAt(uint64_t seed, size_t i, float* u1, float* u2) {
  const uint64_t h = SplitMix64(seed ^ SplitMix64(i));
  *u1 = ((h >> 40) + 1) * (1.0f / 16777217.0f);
  *u2 = ((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
}

}  // namespace sparse

#undef SPARSE_HOST_DEVICE
#endif  // SPARSE_COMMON_RANDOM_NORMAL_H_
