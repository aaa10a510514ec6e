/**
 * Awkward-shape fixtures for the kernel tests (seeded, generated in memory): they reach
 * the residue paths of the kernels (odd N, N = 1, empty rows, nnz = 0, one dense row,
 * row starts at every alignment, K beyond the 16-bit index limit).
 */
import {createRng} from '../../src/sparse/random.js'
import type {CsrMatrix} from '../../src/types.js'

/** A random CSR pattern (values null) with exactly `nnz` nonzeros spread over the allowed rows. */
export function randomPattern(rows: number, cols: number, nnz: number, seed: number, opts: {emptyRows?: number[]} = {}): CsrMatrix {
  const rng = createRng(seed)
  const empty = new Set(opts.emptyRows ?? [])
  const allowed = [...Array(rows).keys()].filter((r) => !empty.has(r))
  const capacity = allowed.length * cols
  if (nnz > capacity) throw new Error(`nnz ${nnz} exceeds ${capacity} positions`)
  // Choose nnz distinct positions among the allowed rows (Floyd's algorithm).
  const chosen = new Set<number>()
  for (let j = capacity - nnz; j < capacity; j++) {
    const t = rng.nextUint32() % (j + 1)
    chosen.add(chosen.has(t) ? j : t)
  }
  const positions = [...chosen].sort((a, b) => a - b)
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices = new Int32Array(nnz)
  for (const [i, p] of positions.entries()) {
    const row = allowed[Math.floor(p / cols)]
    columnIndices[i] = p % cols
    rowOffsets[row + 1]++
  }
  for (let r = 0; r < rows; r++) rowOffsets[r + 1] += rowOffsets[r]
  return {rows, cols, rowOffsets, columnIndices, values: null, dtype: 'f32'}
}

/**
 * An m x k 2:4 pattern (values null): in row r, `keep(r, g)` of the four columns of group g
 * (fewer in a ragged last group), chosen by a shuffle drawing from `next` (a uint32 source, so
 * that each caller keeps its own random sequence); columns ascending.
 */
export function twoFourPattern(
  m: number,
  k: number,
  next: () => number,
  keep: (row: number, group: number) => number,
): CsrMatrix {
  const offsets = [0]
  const cols: number[] = []
  for (let r = 0; r < m; r++) {
    for (let g = 0; g * 4 < k; g++) {
      const pick = [0, 1, 2, 3].filter((c) => g * 4 + c < k)
      for (let i = pick.length - 1; i > 0; i--) {
        const j = next() % (i + 1)
        ;[pick[i], pick[j]] = [pick[j], pick[i]]
      }
      for (const c of pick.slice(0, keep(r, g)).sort((a, b) => a - b)) cols.push(g * 4 + c)
    }
    offsets.push(cols.length)
  }
  return {rows: m, cols: k, rowOffsets: Int32Array.from(offsets), columnIndices: Int32Array.from(cols), values: null, dtype: 'f32'}
}

/** A pattern whose only nonzeros form one dense row, `row`, among empty ones. */
export function denseRowPattern(rows: number, cols: number, row: number): CsrMatrix {
  const rowOffsets = new Int32Array(rows + 1)
  for (let r = 0; r < rows; r++) rowOffsets[r + 1] = rowOffsets[r] + (r === row ? cols : 0)
  const columnIndices = Int32Array.from({length: cols}, (_, i) => i)
  return {rows, cols, rowOffsets, columnIndices, values: null, dtype: 'f32'}
}

/** Rows ordered by length, longest first (Sputnik's row swizzle). */
export function swizzle(csr: CsrMatrix): CsrMatrix {
  const order = [...Array(csr.rows).keys()]
  const len = (r: number) => csr.rowOffsets[r + 1] - csr.rowOffsets[r]
  order.sort((a, b) => len(b) - len(a) || a - b)
  return {...csr, rowIndices: Int32Array.from(order)}
}

export interface Shape {
  name: string
  csr: CsrMatrix
  /** N: columns of B (SpMM) and the inner dimension (SDDMM). */
  n: number
}

/** The awkward shapes every backend must get right. */
export function awkwardShapes(): Shape[] {
  return [
    {name: 'M=7 K=96 N=40 nnz=333', csr: randomPattern(7, 96, 333, 1), n: 40},
    {name: 'odd N=17', csr: randomPattern(33, 50, 400, 2), n: 17},
    {name: 'N=1', csr: randomPattern(25, 31, 200, 3), n: 1},
    {name: 'empty rows', csr: randomPattern(20, 30, 150, 4, {emptyRows: [0, 5, 6, 7, 8, 9, 19]}), n: 24},
    {name: 'nnz=0', csr: randomPattern(5, 8, 0, 5), n: 12},
    {name: 'one dense row among empty ones', csr: denseRowPattern(9, 300, 4), n: 8},
    {name: 'row swizzle, wide N=130 (strip residue)', csr: swizzle(randomPattern(40, 64, 700, 6)), n: 130},
    {name: 'N=2', csr: randomPattern(12, 9, 50, 8), n: 2},
    {name: 'long rows, N=520', csr: randomPattern(10, 700, 3000, 9), n: 520},
  ]
}

/** K beyond the 16-bit index range: f16/bf16 fall back to 32-bit indices. */
export function wideShape(): Shape {
  return {name: 'K=40000 (beyond 16-bit indices)', csr: randomPattern(6, 40000, 900, 7), n: 16}
}

/**
 * A CSR whose rows start at every alignment (lengths 1..9) and where only a few rows
 * reference column 0: SpMM with Inf/NaN in row 0 of B must leave every other row finite.
 */
export function infRowZeroCase(): {csr: CsrMatrix; n: number; referencing: Set<number>} {
  const rows = 24
  const cols = 64
  const referencing = new Set([3, 10, 17])
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices: number[] = []
  for (let r = 0; r < rows; r++) {
    const len = 1 + ((r * 5) % 9)
    const row = new Set<number>()
    if (referencing.has(r)) row.add(0)
    for (let j = 0; row.size < len; j++) row.add(1 + ((r * 7 + j * 3) % (cols - 1)))
    columnIndices.push(...[...row].sort((x, y) => x - y)) // sorted, distinct
    rowOffsets[r + 1] = columnIndices.length
  }
  return {csr: {rows, cols, rowOffsets, columnIndices: Int32Array.from(columnIndices), values: null, dtype: 'f32'}, n: 40, referencing}
}
