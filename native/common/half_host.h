#ifndef SPARSE_COMMON_HALF_HOST_H_
#define SPARSE_COMMON_HALF_HOST_H_
// Host-side conversions between float and the 16-bit formats (IEEE binary16 and bfloat16),
// round to nearest even, infinities and NaN kept. CUDA-free; used by the CPU kernels, the
// float64 references and the binding. The bit-exact twins of src/sparse/half.ts.
#include <cstdint>
#include <cstring>

namespace sparse {

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// IEEE binary16 bits -> float (exact).
inline float F16BitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exactly representable in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mant << 13));
  return BitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

// float -> IEEE binary16 bits, round to nearest even; overflow to infinity; NaN stays NaN.
inline uint16_t FloatToF16Bits(float value) {
  const uint32_t x = FloatToBits(value);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

inline float Bf16BitsToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

// float -> bfloat16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t FloatToBf16Bits(float value) {
  const uint32_t x = FloatToBits(value);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return static_cast<uint16_t>((x >> 16) | 0x40);
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

}  // namespace sparse
#endif  // SPARSE_COMMON_HALF_HOST_H_
