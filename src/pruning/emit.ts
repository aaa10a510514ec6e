/**
 * The single pass that applies a cut and builds the CSR: entries with key < T are pruned,
 * the first `ties` entries with key == T (row-major) are pruned, every other nonzero entry
 * is stored, with its original bits (so values keep their dtype exactly). Zeros are never
 * stored, whatever the cut.
 */
import type {CsrMatrix} from '../types.js'
import type {MagnitudeMatrix} from './keys.js'

export interface Emitted {
  csr: CsrMatrix
  /** How many tied entries (key == T) were pruned; at most the `ties` asked for. */
  tiesUsed: number
}

/**
 * Applies the cut (threshold key `key`, `ties` tied entries to prune) to a matrix.
 * `capacity` must be an upper bound of the stored count (numel - pruned, or more); the
 * arrays are trimmed to the exact nnz when it is smaller (inputs with extra zeros).
 */
export function emitCsr(m: MagnitudeMatrix, key: number, ties: number, capacity: number): Emitted {
  return m.dtype === 'f32'
    ? emitF32(m, m.bits as Uint32Array, key, ties, capacity)
    : emit16(m, m.bits as Uint16Array, key, ties, capacity)
}

function emitF32(m: MagnitudeMatrix, bits: Uint32Array, key: number, ties: number, capacity: number): Emitted {
  const {rows, cols} = m
  const rowOffsets = new Int32Array(rows + 1)
  // One slot of slack: the branch-free loop writes one entry past the last kept one.
  const columnIndices = new Int32Array(capacity + 1)
  const values = new Float32Array(capacity + 1)
  const valueBits = new Uint32Array(values.buffer)
  let p = 0
  let i = 0
  let left = ties
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++, i++) {
      const x = bits[i]
      const k = x & 0x7fffffff
      if (k !== key) {
        // Branch-free: write, then advance only when k > key (see sampled.ts).
        columnIndices[p] = c
        valueBits[p] = x
        p += (key - k) >>> 31
      } else if (left > 0) left--
      else if (k !== 0) {
        columnIndices[p] = c
        valueBits[p] = x
        p++
      }
    }
    rowOffsets[r + 1] = p
  }
  checkCapacity(p, capacity)
  return {
    csr: {rows, cols, rowOffsets, columnIndices: trim(columnIndices, p), values: trim(values, p), dtype: 'f32'},
    tiesUsed: ties - left,
  }
}

function emit16(m: MagnitudeMatrix, bits: Uint16Array, key: number, ties: number, capacity: number): Emitted {
  const {rows, cols} = m
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices = new Int32Array(capacity + 1)
  const values = new Uint16Array(capacity + 1)
  let p = 0
  let i = 0
  let left = ties
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++, i++) {
      const x = bits[i]
      const k = x & 0x7fff
      if (k !== key) {
        // Branch-free: write, then advance only when k > key (see sampled.ts).
        columnIndices[p] = c
        values[p] = x
        p += (key - k) >>> 31
      } else if (left > 0) left--
      else if (k !== 0) {
        columnIndices[p] = c
        values[p] = x
        p++
      }
    }
    rowOffsets[r + 1] = p
  }
  checkCapacity(p, capacity)
  return {
    csr: {rows, cols, rowOffsets, columnIndices: trim(columnIndices, p), values: trim(values, p), dtype: m.dtype},
    tiesUsed: ties - left,
  }
}

/**
 * Counts entries with key < `key` and key == `key` (used to size the output under global
 * scope, where the per-tensor count is not known in advance).
 */
export function countAround(m: MagnitudeMatrix, key: number): {below: number; equal: number} {
  let below = 0
  let equal = 0
  const n = m.numel
  if (m.dtype === 'f32') {
    const b = m.bits as Uint32Array
    for (let i = 0; i < n; i++) {
      const k = b[i] & 0x7fffffff
      if (k < key) below++
      else if (k === key) equal++
    }
  } else {
    const b = m.bits as Uint16Array
    for (let i = 0; i < n; i++) {
      const k = b[i] & 0x7fff
      if (k < key) below++
      else if (k === key) equal++
    }
  }
  return {below, equal}
}

/** The first n entries: the array itself, a view when the slack is small, else a copy. */
export function trim<T extends Int32Array | Float32Array | Uint16Array>(a: T, n: number): T {
  if (n === a.length) return a
  // NOTE: a view keeps the whole buffer alive; copy only when that would waste much.
  return (a.length - n <= 64 + (n >>> 6) ? a.subarray(0, n) : a.slice(0, n)) as T
}

function checkCapacity(p: number, capacity: number): void {
  // Typed arrays drop out-of-bounds writes silently: an undersized buffer must not pass.
  if (p > capacity) throw new Error(`internal: CSR capacity ${capacity} < nnz ${p}`)
}
