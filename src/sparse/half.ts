/**
 * Conversions between float32 and the 16-bit formats, round-to-nearest-even, with
 * infinities and NaN kept. Scalar functions plus whole-array helpers.
 */
const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)

/** float32 -> IEEE binary16 bits, round to nearest even. */
export function f32ToF16Bits(value: number): number {
  f32[0] = value
  const x = u32[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  let mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0) // inf / NaN (quiet)
  let e = exp - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00 // overflow -> inf
  if (e <= 0) {
    // Subnormal half (or zero).
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let h = mant >>> shift
    const rem = mant & ((1 << shift) - 1)
    const half = 1 << (shift - 1)
    if (rem > half || (rem === half && (h & 1))) h++
    return sign | h
  }
  let h = (e << 10) | (mant >>> 13)
  const rem = mant & 0x1fff
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++ // may carry into the exponent: correct
  return sign | h
}

/** IEEE binary16 bits -> number. */
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >>> 10) & 0x1f
  const mant = h & 0x3ff
  if (exp === 0) return sign * mant * 2 ** -24
  if (exp === 0x1f) return mant ? NaN : sign * Infinity
  return sign * (1 + mant / 1024) * 2 ** (exp - 15)
}

/** float32 -> bfloat16 bits, round to nearest even. */
export function f32ToBf16Bits(value: number): number {
  f32[0] = value
  const x = u32[0]
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff)) return ((x >>> 16) | 0x40) & 0xffff // quiet NaN
  const rounded = x + 0x7fff + ((x >>> 16) & 1)
  return (rounded >>> 16) & 0xffff
}

/** bfloat16 bits -> number. */
export function bf16BitsToF32(b: number): number {
  u32[0] = (b & 0xffff) << 16
  return f32[0]
}

/** Decode a whole array of 16-bit patterns to float32. */
export function halfToFloat32(bits: Uint16Array, dtype: 'f16' | 'bf16'): Float32Array {
  const out = new Float32Array(bits.length)
  if (dtype === 'bf16') {
    const o32 = new Uint32Array(out.buffer)
    for (let i = 0; i < bits.length; i++) o32[i] = bits[i] << 16
  } else {
    for (let i = 0; i < bits.length; i++) out[i] = f16BitsToF32(bits[i])
  }
  return out
}

/** Encode a whole float array to 16-bit patterns. */
export function float32ToHalf(values: ArrayLike<number>, dtype: 'f16' | 'bf16'): Uint16Array {
  const out = new Uint16Array(values.length)
  const enc = dtype === 'bf16' ? f32ToBf16Bits : f32ToF16Bits
  for (let i = 0; i < values.length; i++) out[i] = enc(values[i])
  return out
}
