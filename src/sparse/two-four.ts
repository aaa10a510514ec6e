/**
 * The 2:4 structure of a CSR matrix: at most two nonzeros in every group of four columns
 * (4g .. 4g + 3) of every row, the pattern of NVIDIA's sparse tensor cores (`mma.sp`).
 *
 * Stored zeros (+0 and -0) do not count, as in the native check (native/common/sparse24.cc,
 * IsTwoFour and BuildSp24Tiles): a 2:4 matrix may store explicit zeros anywhere. A
 * pattern-only matrix (values null) counts every stored entry.
 */
import type {CsrMatrix} from '../types.js'

/** The first group that breaks 2:4: the first such row, its leftmost such group. */
export interface Not24 {
  row: number
  /** The group's first column (a multiple of 4). */
  column: number
  /** Nonzeros in the group (more than 2). */
  count: number
}

function isZero(values: Float32Array | Uint16Array | null, i: number): boolean {
  if (values === null) return false
  return values instanceof Uint16Array ? (values[i] & 0x7fff) === 0 : values[i] === 0
}

/**
 * The first group of four columns holding more than two nonzeros, or null when the matrix
 * is 2:4. `values` overrides the matrix's own (e.g. the values of a bench case's dtype).
 * Column indices need not be sorted. Linear in nnz.
 */
export function firstNot24(csr: CsrMatrix, values: Float32Array | Uint16Array | null = csr.values): Not24 | null {
  const {rows, rowOffsets, columnIndices} = csr
  const counts = new Map<number, number>()
  for (let r = 0; r < rows; r++) {
    const start = rowOffsets[r]
    const end = rowOffsets[r + 1]
    // Fast path: columns ascending (every valid CSR), so a group's entries are adjacent.
    let last = -1
    let run = 0
    let sorted = true
    let bad = -1
    for (let i = start; i < end; i++) {
      if (isZero(values, i)) continue
      const g = columnIndices[i] >> 2
      if (g < last) sorted = false
      run = g === last ? run + 1 : 1
      last = g
      if (run > 2 && bad < 0) bad = g
    }
    if (bad < 0 && sorted) continue
    // Slow path (a bad row, or unsorted columns): count every group of the row.
    counts.clear()
    for (let i = start; i < end; i++) {
      if (isZero(values, i)) continue
      const g = columnIndices[i] >> 2
      counts.set(g, (counts.get(g) ?? 0) + 1)
    }
    let first = -1
    for (const [g, n] of counts) if (n > 2 && (first < 0 || g < first)) first = g
    if (first >= 0) return {row: r, column: first * 4, count: counts.get(first)!}
  }
  return null
}

/** Whether the matrix is 2:4 (see firstNot24). */
export function isTwoFour(csr: CsrMatrix, values: Float32Array | Uint16Array | null = csr.values): boolean {
  return firstNot24(csr, values) === null
}

/** The addon's words for a group that breaks 2:4 (BuildSp24Tiles): "not 2:4: row R, columns C..C+3 hold N nonzeros (at most 2)". */
export function not24Message(g: Not24): string {
  return `not 2:4: row ${g.row}, columns ${g.column}..${g.column + 3} hold ${g.count} nonzeros (at most 2)`
}
