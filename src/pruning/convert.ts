import {InputError} from '../errors.js'
import {convertValues} from '../sparse/dense-to-csr.js'
import type {CsrMatrix, ValueDType} from '../types.js'
import {trim} from './emit.js'

/**
 * Re-encodes a pruned CSR's values in another dtype (--dtype), after the selection: the
 * pattern is chosen from the input's values. Values that round to zero in the narrower
 * dtype are dropped (zeros are never stored); values beyond its range are refused.
 * Returns the CSR and how many values were dropped.
 */
export function convertCsrDtype(csr: CsrMatrix, dtype: ValueDType, name: string): {csr: CsrMatrix; flushed: number} {
  if (csr.dtype === dtype || csr.values === null) return {csr, flushed: 0}
  const values = convertValues(csr.values, csr.dtype, dtype)
  const nnz = values.length
  // Find overflow (inf) and underflow (0) in the target encoding.
  let overflow = 0
  let zeros = 0
  if (dtype === 'f32') {
    const v = values as Float32Array
    for (let i = 0; i < nnz; i++) if (v[i] === 0) zeros++
  } else {
    const v = values as Uint16Array
    const inf = dtype === 'f16' ? 0x7c00 : 0x7f80
    for (let i = 0; i < nnz; i++) {
      const k = v[i] & 0x7fff
      if (k === 0) zeros++
      else if (k >= inf) overflow++
    }
  }
  if (overflow > 0) {
    throw new InputError(
      'dtype-overflow',
      `tensor '${name}': ${overflow} kept weight${overflow === 1 ? '' : 's'} exceed the ${dtype} range`,
      dtype === 'f16' ? 'use --dtype bf16 or f32' : 'use --dtype f32',
    )
  }
  if (zeros === 0) return {csr: {...csr, values, dtype}, flushed: 0}
  // Compact: drop the entries that became zero.
  const rowOffsets = new Int32Array(csr.rows + 1)
  const columnIndices = new Int32Array(nnz - zeros)
  const out = dtype === 'f32' ? new Float32Array(nnz - zeros) : new Uint16Array(nnz - zeros)
  const isZero = dtype === 'f32' ? (i: number) => values[i] === 0 : (i: number) => (values[i] & 0x7fff) === 0
  let p = 0
  for (let r = 0; r < csr.rows; r++) {
    for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) {
      if (isZero(i)) continue
      columnIndices[p] = csr.columnIndices[i]
      out[p] = values[i]
      p++
    }
    rowOffsets[r + 1] = p
  }
  return {csr: {rows: csr.rows, cols: csr.cols, rowOffsets, columnIndices: trim(columnIndices, p), values: out, dtype}, flushed: zeros}
}
