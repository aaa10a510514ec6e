#ifndef SPARSE_CUDA_COMMON_VECTOR_CUH_
#define SPARSE_CUDA_COMMON_VECTOR_CUH_
// Device helpers shared by the SpMM and SDDMM kernels: element types, vector memory
// instructions (one 16-, 8-, 4- or 2-byte access per vector), fp32 conversions, subwarp
// masks and reductions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/dtype.h"

namespace sparse {
namespace cuda {

// The device element type for each DType.
template <DType kType>
struct ElementOf;
template <>
struct ElementOf<DType::kF32> {
  using Type = float;
};
template <>
struct ElementOf<DType::kF16> {
  using Type = __half;
};
template <>
struct ElementOf<DType::kBF16> {
  using Type = __nv_bfloat16;
};

// ---------------------------------------------------------------------------------------
// Conversions to and from fp32 (the accumulation type).

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// ---------------------------------------------------------------------------------------
// Vector memory instructions: kN elements of T moved as one access of kN * sizeof(T)
// bytes (at most 16). The address must be aligned to that size.

template <int kBytes>
struct RawVector;
template <>
struct RawVector<16> {
  using Type = uint4;
};
template <>
struct RawVector<8> {
  using Type = uint2;
};
template <>
struct RawVector<4> {
  using Type = unsigned int;
};
template <>
struct RawVector<2> {
  using Type = unsigned short;
};

template <typename T, int kN>
struct alignas(sizeof(T) * kN) Vector {
  static_assert(sizeof(T) * kN <= 16, "one vector access moves at most 16 bytes");
  static_assert((kN & (kN - 1)) == 0, "vector widths are powers of two");
  T v[kN];
};

// Loads through the read-only (non-coherent) cache path: the kernels never write what
// they read.
template <typename T, int kN>
__device__ __forceinline__ Vector<T, kN> LoadVector(const T* p) {
  using Raw = typename RawVector<sizeof(T) * kN>::Type;
  const Raw raw = __ldg(reinterpret_cast<const Raw*>(p));
  Vector<T, kN> out;
  static_assert(sizeof(out) == sizeof(raw), "vector and raw access sizes agree");
  memcpy(&out, &raw, sizeof(raw));
  return out;
}

template <typename T, int kN>
__device__ __forceinline__ void StoreVector(T* p, const Vector<T, kN>& v) {
  using Raw = typename RawVector<sizeof(T) * kN>::Type;
  Raw raw;
  memcpy(&raw, &v, sizeof(raw));
  *reinterpret_cast<Raw*>(p) = raw;
}

// kN elements as fp32. Pairs of 16-bit values convert with one instruction each.
template <int kN>
__device__ __forceinline__ void ToFloats(const Vector<float, kN>& v, float (&out)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) out[i] = v.v[i];
}
template <int kN>
__device__ __forceinline__ void ToFloats(const Vector<__half, kN>& v, float (&out)[kN]) {
  if constexpr (kN >= 2) {
#pragma unroll
    for (int i = 0; i < kN; i += 2) {
      const float2 f = __half22float2(__halves2half2(v.v[i], v.v[i + 1]));
      out[i] = f.x;
      out[i + 1] = f.y;
    }
  } else {
    out[0] = __half2float(v.v[0]);
  }
}
template <int kN>
__device__ __forceinline__ void ToFloats(const Vector<__nv_bfloat16, kN>& v, float (&out)[kN]) {
  if constexpr (kN >= 2) {
#pragma unroll
    for (int i = 0; i < kN; i += 2) {
      const float2 f = __bfloat1622float2(__halves2bfloat162(v.v[i], v.v[i + 1]));
      out[i] = f.x;
      out[i + 1] = f.y;
    }
  } else {
    out[0] = __bfloat162float(v.v[0]);
  }
}

template <typename T, int kN>
__device__ __forceinline__ Vector<T, kN> FromFloats(const float (&in)[kN]) {
  Vector<T, kN> v;
#pragma unroll
  for (int i = 0; i < kN; ++i) v.v[i] = FromFloat<T>(in[i]);
  return v;
}

// kN consecutive elements (any count whose bytes are a multiple of 16, or one vector of at
// most 16 bytes) loaded with as few aligned vector accesses as possible.
template <typename T, int kN>
__device__ __forceinline__ void LoadElements(const T* p, T (&out)[kN]) {
  constexpr int kPerAccess = (sizeof(T) * kN >= 16) ? 16 / static_cast<int>(sizeof(T)) : kN;
  static_assert(kN % kPerAccess == 0, "whole vector accesses");
#pragma unroll
  for (int i = 0; i < kN; i += kPerAccess) {
    const Vector<T, kPerAccess> v = LoadVector<T, kPerAccess>(p + i);
#pragma unroll
    for (int j = 0; j < kPerAccess; ++j) out[i + j] = v.v[j];
  }
}

// ---------------------------------------------------------------------------------------
// Subwarps: kWidth consecutive lanes of one warp (kWidth divides 32) acting as a unit.

// The lanes of the calling thread's subwarp, for __syncwarp and shuffles. The block's
// x dimension is the subwarp (blockDim.x == kWidth).
template <int kWidth>
__device__ __forceinline__ unsigned SubwarpMask() {
  static_assert(kWidth >= 1 && kWidth <= 32 && (32 % kWidth) == 0, "a subwarp is a power-of-two slice of a warp");
  if constexpr (kWidth == 32) {
    return 0xffffffffu;
  } else {
    const unsigned linear = threadIdx.y * kWidth + threadIdx.x;
    const unsigned base = (linear & 31u) & ~static_cast<unsigned>(kWidth - 1);
    return ((1u << kWidth) - 1u) << base;
  }
}

// Sum over the subwarp (butterfly): every lane gets the total.
template <int kWidth>
__device__ __forceinline__ float SubwarpSum(float v, unsigned mask) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(mask, v, offset, kWidth);
  return v;
}

}  // namespace cuda
}  // namespace sparse
#endif  // SPARSE_CUDA_COMMON_VECTOR_CUH_
