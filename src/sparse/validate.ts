import {InputError} from '../errors.js'
import type {CsrMatrix} from '../types.js'

/**
 * The CSR validator: it stands between every file and every kernel. It checks, in O(nnz):
 * dimensions are non-negative integers; rowOffsets has rows + 1 entries, starts at 0, is
 * non-decreasing and ends at nnz = columnIndices.length; every column index is in [0, cols)
 * and strictly ascending within its row (sorted, no duplicates); values (when present)
 * has nnz entries; rowIndices (when present) is a permutation of 0..rows-1.
 * Throws InputError naming the field and the first offending position.
 */
export function validateCsr(csr: CsrMatrix, what = 'CSR matrix'): void {
  const {rows, cols, rowOffsets, columnIndices, values, rowIndices} = csr
  const bad = (msg: string): never => {
    throw new InputError('invalid-csr', `${what}: ${msg}`, 'the file is corrupt or not canonical CSR; re-create it with `sparse convert`')
  }
  if (!Number.isSafeInteger(rows) || rows < 0) bad(`rows must be a non-negative integer, got ${rows}`)
  if (!Number.isSafeInteger(cols) || cols < 0) bad(`cols must be a non-negative integer, got ${cols}`)
  if (rows > 0x7fffffff || cols > 0x7fffffff) bad(`shape ${rows}x${cols} exceeds the int32 index range`)
  if (!(rowOffsets instanceof Int32Array)) bad('rowOffsets must be an Int32Array')
  if (!(columnIndices instanceof Int32Array)) bad('columnIndices must be an Int32Array')
  if (rowOffsets.length !== rows + 1) bad(`rowOffsets has ${rowOffsets.length} entries, expected rows + 1 = ${rows + 1}`)
  const nnz = columnIndices.length
  if (rowOffsets[0] !== 0) bad(`rowOffsets[0] must be 0, got ${rowOffsets[0]}`)
  if (rowOffsets[rows] !== nnz) bad(`rowOffsets[${rows}] must equal nnz = ${nnz}, got ${rowOffsets[rows]}`)
  if (values !== null && values.length !== nnz) bad(`values has ${values.length} entries, expected nnz = ${nnz}`)
  for (let r = 0; r < rows; r++) {
    const start = rowOffsets[r]
    const end = rowOffsets[r + 1]
    if (end < start) bad(`rowOffsets must be non-decreasing, but rowOffsets[${r + 1}] = ${end} < rowOffsets[${r}] = ${start}`)
    if (end > nnz) bad(`rowOffsets[${r + 1}] = ${end} exceeds nnz = ${nnz}`)
    let prev = -1
    for (let i = start; i < end; i++) {
      const c = columnIndices[i]
      if (c < 0 || c >= cols) bad(`columnIndices[${i}] = ${c} is out of range [0, ${cols}) in row ${r}`)
      if (c <= prev) {
        bad(c === prev ? `duplicate column index ${c} in row ${r}` : `column indices of row ${r} are not sorted (columnIndices[${i}] = ${c} after ${prev})`)
      }
      prev = c
    }
  }
  if (rowIndices !== undefined) {
    if (!(rowIndices instanceof Int32Array)) bad('rowIndices must be an Int32Array')
    if (rowIndices.length !== rows) bad(`rowIndices has ${rowIndices.length} entries, expected rows = ${rows}`)
    const seen = new Uint8Array(rows)
    for (let i = 0; i < rows; i++) {
      const r = rowIndices[i]
      if (r < 0 || r >= rows) bad(`rowIndices[${i}] = ${r} is out of range [0, ${rows})`)
      if (seen[r]) bad(`rowIndices is not a permutation: row ${r} appears twice`)
      seen[r] = 1
    }
  }
}
