import type {CsrMatrix, ValueDType} from '../types.js'

/** Largest column count whose indices fit Sputnik's signed 16-bit index encoding. */
export const MAX_COLS_16BIT_INDEX = 32768

export function csrNnz(csr: CsrMatrix): number {
  return csr.rowOffsets[csr.rows]
}

/** Row lengths (nnz per row), in row order. */
export function rowLengths(csr: CsrMatrix): Int32Array {
  const out = new Int32Array(csr.rows)
  for (let r = 0; r < csr.rows; r++) out[r] = csr.rowOffsets[r + 1] - csr.rowOffsets[r]
  return out
}

/** Bytes of a dense matrix of the given shape at the given bytes per element. */
export function denseBytes(rows: number, cols: number, bytesPerElement = 4): number {
  return rows * cols * bytesPerElement
}

/**
 * Bytes of a CSR encoding: values + column indices + row offsets (+ the row order when
 * stored). `f32`: fp32 values, int32 indices. `f16`: fp16/bf16 values with 16-bit indices
 * (Sputnik's mixed-precision encoding) when the column count allows, else int32 indices.
 * Row offsets stay int32 in both.
 */
export function csrBytes(
  rows: number,
  cols: number,
  nnz: number,
  encoding: 'f32' | 'f16',
  withRowOrder = true,
): number {
  const offsets = 4 * (rows + 1)
  const order = withRowOrder ? 4 * rows : 0
  if (encoding === 'f32') return nnz * (4 + 4) + offsets + order
  const indexBytes = cols <= MAX_COLS_16BIT_INDEX ? 2 : 4
  return nnz * (2 + indexBytes) + offsets + order
}

/**
 * Memory saving, the one definition (see ./memory.ts): bytes of the dense matrix in the same
 * value dtype as the form's values, over the form's bytes; Infinity for a form of 0 bytes.
 */
export function memorySaving(denseSameDtype: number, formBytes: number): number {
  return formBytes === 0 ? Infinity : denseSameDtype / formBytes
}

export interface RowLengthStats {
  min: number
  max: number
  mean: number
  /** Coefficient of variation: standard deviation / mean (0 when the mean is 0). */
  cv: number
}

export function rowLengthStats(csr: CsrMatrix): RowLengthStats {
  if (csr.rows === 0) return {min: 0, max: 0, mean: 0, cv: 0}
  let min = Infinity
  let max = -Infinity
  let sum = 0
  let sumSq = 0
  for (let r = 0; r < csr.rows; r++) {
    const len = csr.rowOffsets[r + 1] - csr.rowOffsets[r]
    if (len < min) min = len
    if (len > max) max = len
    sum += len
    sumSq += len * len
  }
  const mean = sum / csr.rows
  const variance = Math.max(0, sumSq / csr.rows - mean * mean)
  return {min, max, mean, cv: mean === 0 ? 0 : Math.sqrt(variance) / mean}
}

/** An empty values array of the host type for a dtype. */
export function allocValues(dtype: ValueDType, n: number): Float32Array | Uint16Array {
  return dtype === 'f32' ? new Float32Array(n) : new Uint16Array(n)
}
