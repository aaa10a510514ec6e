/**
 * Magnitude keys: the bit pattern of |w| as an unsigned integer. For IEEE formats the
 * bits of a non-negative number order the same way as its value, so |w| can be compared,
 * histogrammed and radix-selected as integers without decoding a single float:
 *   f32:  key = bits & 0x7fffffff (31 bits)      non-finite when key >= 0x7f800000
 *   f16:  key = bits & 0x7fff (15 bits)          non-finite when key >= 0x7c00
 *   bf16: key = bits & 0x7fff (15 bits)          non-finite when key >= 0x7f80
 * -0 and +0 both have key 0. f64 tensors are converted to f32 before pruning (see
 * prepareTensor), so keys are never wider than 32 bits.
 */
import {InputError} from '../errors.js'
import {matrixShape} from '../sparse/dense-to-csr.js'
import {bf16BitsToF32, f16BitsToF32} from '../sparse/half.js'
import type {DenseTensor, ValueDType} from '../types.js'

export const KEY_MASK: Record<ValueDType, number> = {f32: 0x7fffffff, f16: 0x7fff, bf16: 0x7fff}

/** The smallest non-finite key (the key of +Inf); NaNs are above it. */
export const NON_FINITE_KEY: Record<ValueDType, number> = {f32: 0x7f800000, f16: 0x7c00, bf16: 0x7f80}

/** A tensor ready for pruning: its values as raw bits, and the 2-D matrix it stands for. */
export interface MagnitudeMatrix {
  name: string
  /** The original tensor's shape. */
  shape: number[]
  rows: number
  cols: number
  numel: number
  /** Value dtype of the output (f64 inputs become f32). */
  dtype: ValueDType
  /** The values' bit patterns: Uint32Array for f32, Uint16Array for f16/bf16. Row-major. */
  bits: Uint32Array | Uint16Array
  /** The f64 tensor an f32 matrix was converted from (kept only for error messages). */
  f64Source?: DenseTensor
}

/** The magnitude a key stands for, as a JavaScript number. */
export function keyToMagnitude(key: number, dtype: ValueDType): number {
  if (dtype === 'f16') return f16BitsToF32(key)
  if (dtype === 'bf16') return bf16BitsToF32(key)
  F32_U[0] = key
  return F32_F[0]
}

const F32_F = new Float32Array(1)
const F32_U = new Uint32Array(F32_F.buffer)

let f16ToF32KeyLut: Uint32Array | undefined

/**
 * 16-bit magnitude keys mapped to float32 magnitude keys (exact: every f16 and bf16 value
 * is a float32 value). Used to compare magnitudes across dtypes under global scope.
 */
export function f32KeyTable(dtype: 'f16' | 'bf16'): Uint32Array {
  if (dtype === 'bf16') {
    const lut = new Uint32Array(0x8000)
    for (let k = 0; k < 0x8000; k++) lut[k] = k << 16
    return lut
  }
  if (!f16ToF32KeyLut) {
    f16ToF32KeyLut = new Uint32Array(0x8000)
    for (let k = 0; k < 0x8000; k++) {
      F32_F[0] = f16BitsToF32(k)
      f16ToF32KeyLut[k] = F32_U[0] & 0x7fffffff
    }
  }
  return f16ToF32KeyLut
}

/**
 * Views a dense tensor as a MagnitudeMatrix without copying (f32, f16, bf16). f64 is
 * converted to f32 first (round to nearest): the order of magnitudes is then the order of
 * the float32 values, which are what the CSR stores. A finite f64 beyond the float32
 * range is refused like an infinite weight; one below the smallest float32 subnormal
 * becomes 0 and, like every zero, is not stored.
 */
export function prepareTensor(t: DenseTensor): MagnitudeMatrix {
  const [rows, cols] = matrixShape(t.shape)
  const numel = rows * cols
  if (t.data.length !== numel) {
    throw new InputError('bad-tensor', `tensor '${t.name}': ${t.data.length} values for shape [${t.shape.join(', ')}]`)
  }
  let dtype: ValueDType
  let bits: Uint32Array | Uint16Array
  if (t.dtype === 'f64') {
    const src = t.data as Float64Array
    const f = new Float32Array(src)
    bits = new Uint32Array(f.buffer, f.byteOffset, f.length)
    dtype = 'f32'
  } else if (t.dtype === 'f32') {
    const f = t.data as Float32Array
    bits = new Uint32Array(f.buffer, f.byteOffset, f.length)
    dtype = 'f32'
  } else {
    bits = t.data as Uint16Array
    dtype = t.dtype
  }
  return {name: t.name, shape: [...t.shape], rows, cols, numel, dtype, bits, ...(t.dtype === 'f64' ? {f64Source: t} : {})}
}

/**
 * Throws InputError naming the tensor and the number of NaN / infinite weights. Called
 * only once a histogram has shown that there are some (so the slow count is off the hot path).
 */
export function throwNonFinite(m: MagnitudeMatrix): never {
  const original = m.f64Source
  let nan = 0
  let inf = 0
  let overflow = 0
  if (original && original.dtype === 'f64') {
    const d = original.data as Float64Array
    for (let i = 0; i < d.length; i++) {
      const v = d[i]
      if (Number.isNaN(v)) nan++
      else if (!Number.isFinite(v)) inf++
      else if (Math.abs(v) > 3.4028234663852886e38) overflow++
    }
  } else {
    const mask = KEY_MASK[m.dtype]
    const lim = NON_FINITE_KEY[m.dtype]
    const b = m.bits
    for (let i = 0; i < b.length; i++) {
      const k = b[i] & mask
      if (k > lim) nan++
      else if (k === lim) inf++
    }
  }
  const parts: string[] = []
  if (nan) parts.push(`${nan} NaN`)
  if (inf) parts.push(`${inf} infinite`)
  if (overflow) parts.push(`${overflow} beyond the float32 range`)
  const total = nan + inf + overflow
  throw new InputError(
    'non-finite-weights',
    `tensor '${m.name}' has ${parts.join(' and ')} weight${total === 1 ? '' : 's'} (${total} of ${m.numel}); magnitude pruning needs finite weights`,
    'fix or exclude the tensor (--exclude), e.g. replace NaN/Inf in the checkpoint first',
  )
}
