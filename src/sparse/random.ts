/**
 * A small, fast, seeded pseudo-random generator (xoshiro128**, seeded through splitmix32),
 * identical on every platform, for the values of pattern-only matrices (DLMC `.smtx`) and
 * for dense test/benchmark operands.
 *
 *   const rng = createRng(42)
 *   rng.nextUint32()  // uniform integer in [0, 2^32)
 *   rng.nextFloat()   // uniform in [0, 1), 24 random bits (exactly representable in fp32)
 *   rng.normal()      // standard normal (Box–Muller), mean 0, standard deviation 1
 *   fillNormal(new Float32Array(n), 42)       // same seed => same numbers
 *   randomValues(nnz, 'f16', 42)              // standard normals encoded as f32 / f16 / bf16 bits
 *
 * Not cryptographic. The stream for a seed is part of the file-format contract only in the
 * sense that `sparse convert --seed S` is reproducible across runs and machines.
 */
import type {ValueDType} from '../types.js'
import {f32ToBf16Bits, f32ToF16Bits} from './half.js'

export interface Rng {
  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number
  /** Uniform in [0, 1) with 24 bits of precision. */
  nextFloat(): number
  /** Standard normal deviate. */
  normal(): number
  /** Fill an array with normal deviates `mean + std * N(0, 1)`; returns the array. */
  fillNormal<T extends Float32Array | Float64Array>(array: T, mean?: number, std?: number): T
}

function splitmix32(state: number): () => number {
  let s = state >>> 0
  return () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
}

/** A generator from an integer seed (any safe integer; the high bits matter too) or a string. */
export function createRng(seed: number | string = 0): Rng {
  let lo: number
  let hi: number
  if (typeof seed === 'string') {
    // FNV-1a over the UTF-16 code units, twice with different bases.
    lo = 0x811c9dc5
    hi = 0x01000193
    for (let i = 0; i < seed.length; i++) {
      lo = Math.imul(lo ^ seed.charCodeAt(i), 0x01000193) >>> 0
      hi = Math.imul(hi ^ seed.charCodeAt(i), 0x811c9dc5) >>> 0
    }
  } else {
    if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`)
    const s = Math.trunc(seed)
    lo = s >>> 0
    hi = Math.floor(s / 2 ** 32) >>> 0
  }
  const sm = splitmix32(lo ^ Math.imul(hi, 0x9e3779b1))
  let a = sm()
  let b = sm()
  let c = sm() ^ hi
  let d = sm()
  if ((a | b | c | d) === 0) a = 1
  let spare: number | undefined

  const nextUint32 = (): number => {
    // xoshiro128**
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0
    const t = b << 9
    c ^= a
    d ^= b
    b ^= c
    a ^= d
    c ^= t
    d = rotl(d, 11)
    return result
  }
  const nextFloat = (): number => (nextUint32() >>> 8) / 16777216
  const normal = (): number => {
    if (spare !== undefined) {
      const v = spare
      spare = undefined
      return v
    }
    // Box–Muller; 1 - u is in (0, 1], so the log is finite.
    const u = 1 - nextFloat()
    const v = nextFloat()
    const r = Math.sqrt(-2 * Math.log(u))
    spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }
  return {
    nextUint32,
    nextFloat,
    normal,
    fillNormal<T extends Float32Array | Float64Array>(array: T, mean = 0, std = 1): T {
      for (let i = 0; i < array.length; i++) array[i] = mean + std * normal()
      return array
    },
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k))
}

/** Fill `array` with standard normal deviates from `seed`; returns the array. */
export function fillNormal<T extends Float32Array | Float64Array>(array: T, seed: number | string): T {
  return createRng(seed).fillNormal(array)
}

/**
 * `n` standard normal values for a value dtype: a Float32Array for f32, else 16-bit patterns
 * (the same normals, rounded to f16 / bf16).
 */
export function randomValues(n: number, dtype: ValueDType, seed: number | string): Float32Array | Uint16Array {
  const f = fillNormal(new Float32Array(n), seed)
  if (dtype === 'f32') return f
  const enc = dtype === 'f16' ? f32ToF16Bits : f32ToBf16Bits
  const out = new Uint16Array(n)
  for (let i = 0; i < n; i++) out[i] = enc(f[i])
  return out
}
