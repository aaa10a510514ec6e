/**
 * Conversions between dense tensors and CSR, with no pruning: every nonzero is kept
 * (zeros, including -0, are dropped; NaN is nonzero and kept). A tensor with more than two
 * dimensions is the 2-D matrix [shape[0], product of the rest] (the im2col GEMM operand,
 * PyTorch layout); a 1-D tensor is one row; a scalar is 1×1.
 */
import {InputError} from '../errors.js'
import type {CsrMatrix, DenseDType, DenseTensor, NamedCsr, ValueDType} from '../types.js'
import {bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits} from './half.js'

/** The 2-D matrix shape [rows, cols] a tensor of this shape is treated as. */
export function matrixShape(shape: readonly number[]): [number, number] {
  if (shape.length === 0) return [1, 1]
  if (shape.length === 1) return [1, shape[0]]
  return [shape[0], shape.slice(1).reduce((a, b) => a * b, 1)]
}

/** A function reading element i of a dense tensor as a number. */
export function elementReader(t: {dtype: DenseDType; data: ArrayLike<number>}): (i: number) => number {
  const d = t.data
  if (t.dtype === 'f16') return (i) => f16BitsToF32(d[i])
  if (t.dtype === 'bf16') return (i) => bf16BitsToF32(d[i])
  return (i) => d[i]
}

/** Whether element i is zero (±0), reading raw bits for 16-bit dtypes. */
function zeroTest(t: DenseTensor): (i: number) => boolean {
  const d = t.data
  if (t.dtype === 'f16' || t.dtype === 'bf16') return (i) => (d[i] & 0x7fff) === 0
  return (i) => d[i] === 0
}

/** Convert values of one dtype to another (copying bits when they match). */
export function convertValues(
  src: ArrayLike<number>,
  from: DenseDType,
  to: ValueDType,
): Float32Array | Uint16Array {
  if (from === to) return to === 'f32' ? Float32Array.from(src) : Uint16Array.from(src)
  const read = elementReader({dtype: from, data: src})
  if (to === 'f32') {
    const out = new Float32Array(src.length)
    for (let i = 0; i < out.length; i++) out[i] = read(i)
    return out
  }
  const enc = to === 'f16' ? f32ToF16Bits : f32ToBf16Bits
  const out = new Uint16Array(src.length)
  for (let i = 0; i < out.length; i++) out[i] = enc(read(i))
  return out
}

/** Default CSR value dtype for a dense dtype: f64 becomes f32, the rest stay. */
export function defaultValueDtype(dtype: DenseDType): ValueDType {
  return dtype === 'f64' ? 'f32' : dtype
}

/** Dense -> CSR keeping every nonzero. Values are converted to `dtype` (default: see above). */
export function denseToCsr(t: DenseTensor, dtype: ValueDType = defaultValueDtype(t.dtype)): NamedCsr {
  const [rows, cols] = matrixShape(t.shape)
  const isZero = zeroTest(t)
  const rowOffsets = new Int32Array(rows + 1)
  let nnz = 0
  for (let r = 0; r < rows; r++) {
    const base = r * cols
    for (let c = 0; c < cols; c++) if (!isZero(base + c)) nnz++
    rowOffsets[r + 1] = nnz
  }
  if (nnz > 0x7fffffff) {
    throw new InputError('too-large', `${t.name}: ${nnz} nonzeros exceed the int32 range of CSR offsets (at most 2^31 - 1)`, 'split the tensor, or prune it first')
  }
  const columnIndices = new Int32Array(nnz)
  const read = elementReader(t)
  const sameBits = t.dtype === dtype
  const values: Float32Array | Uint16Array = dtype === 'f32' ? new Float32Array(nnz) : new Uint16Array(nnz)
  const enc = dtype === 'f16' ? f32ToF16Bits : dtype === 'bf16' ? f32ToBf16Bits : (x: number) => x
  let k = 0
  for (let r = 0; r < rows; r++) {
    const base = r * cols
    for (let c = 0; c < cols; c++) {
      const i = base + c
      if (isZero(i)) continue
      columnIndices[k] = c
      values[k] = sameBits ? t.data[i] : enc(read(i))
      k++
    }
  }
  const csr: CsrMatrix = {rows, cols, rowOffsets, columnIndices, values, dtype}
  return {name: t.name, shape: t.shape.slice(), csr}
}

/**
 * CSR -> dense in `dtype` (default: the CSR's value dtype), with the original tensor shape.
 * Pattern-only matrices need values first.
 */
export function csrToDense(named: NamedCsr, dtype: ValueDType = named.csr.dtype): DenseTensor {
  const {csr} = named
  if (csr.values === null) throw new TypeError(`${named.name}: pattern-only matrix has no values`)
  const numel = csr.rows * csr.cols
  const values = convertValues(csr.values, csr.dtype, dtype)
  const data = dtype === 'f32' ? new Float32Array(numel) : new Uint16Array(numel)
  for (let r = 0; r < csr.rows; r++) {
    const base = r * csr.cols
    for (let k = csr.rowOffsets[r]; k < csr.rowOffsets[r + 1]; k++) data[base + csr.columnIndices[k]] = values[k]
  }
  const shape = named.shape.reduce((a, b) => a * b, 1) === numel ? named.shape.slice() : [csr.rows, csr.cols]
  return {name: named.name, shape, dtype, data}
}
