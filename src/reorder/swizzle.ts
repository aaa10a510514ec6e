/**
 * Sputnik's row swizzle (Gale et al., SC20, section 5.3): process rows in order of length,
 * longest first, so that rows of similar cost run side by side and the long ones start
 * early. `rowIndices` = the row numbers ordered by row length descending, ties by row
 * number ascending. Kernels process rows in that order and write each result to its own
 * row, so the stored matrix itself is unchanged.
 *
 * A stable counting sort on the lengths: O(rows + max row length), no comparison sort.
 */
import {InputError} from '../errors.js'
import type {CsrMatrix} from '../types.js'

/** The row order: lengths descending, ties by row number ascending. */
export function rowSwizzle(rowOffsets: Int32Array, rows = rowOffsets.length - 1): Int32Array {
  let maxLen = 0
  for (let r = 0; r < rows; r++) {
    const len = rowOffsets[r + 1] - rowOffsets[r]
    if (len < 0) throw new InputError('invalid-csr', `rowOffsets decreases at row ${r}`, 'the CSR is corrupt')
    if (len > maxLen) maxLen = len
  }
  // start[len] = first output slot of rows with that length (longer lengths come first).
  const start = new Int32Array(maxLen + 2)
  for (let r = 0; r < rows; r++) start[rowOffsets[r + 1] - rowOffsets[r]]++
  let acc = 0
  for (let len = maxLen; len >= 0; len--) {
    const count = start[len]
    start[len] = acc
    acc += count
  }
  const order = new Int32Array(rows)
  for (let r = 0; r < rows; r++) order[start[rowOffsets[r + 1] - rowOffsets[r]]++] = r
  return order
}

/** The same CSR with Sputnik's row order stored (arrays shared, not copied). */
export function reorderRows(csr: CsrMatrix): CsrMatrix {
  return {...csr, rowIndices: rowSwizzle(csr.rowOffsets, csr.rows)}
}

/** True when `order` is the identity (rows already in swizzle order, or no order stored). */
export function isIdentityOrder(order: Int32Array | undefined): boolean {
  if (!order) return true
  for (let i = 0; i < order.length; i++) if (order[i] !== i) return false
  return true
}
