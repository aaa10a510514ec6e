/**
 * Pruning patterns: unstructured (one magnitude cut per tensor or per model) and N:M
 * (in every group of M consecutive weights of a row, keep the N of largest magnitude).
 *
 * N:M uses the same ordering rule as unstructured pruning, applied inside each group:
 * the group's entries are ordered by |w| ascending, then by column ascending, and the
 * first M - N are pruned. So among equal magnitudes the later weights are kept (as
 * NVIDIA ASP's argsort-based 2:4 masks do). A row whose length is not a multiple of M
 * ends with a partial group of L < M weights, which keeps min(N, L) of them (prunes
 * max(0, L - N)). Zeros are never stored, so a group may keep fewer than N.
 */
import {UsageError} from '../errors.js'
import type {CsrMatrix} from '../types.js'
import {trim} from './emit.js'
import {KEY_MASK, type MagnitudeMatrix, NON_FINITE_KEY, throwNonFinite} from './keys.js'

export type PrunePattern = {kind: 'unstructured'} | {kind: 'n:m'; n: number; m: number}

/** Parses 'unstructured' or 'N:M' (1 <= N <= M, M <= 65536). Throws UsageError (exit 2). */
export function parsePattern(text: string | PrunePattern | undefined): PrunePattern {
  if (text === undefined) return {kind: 'unstructured'}
  if (typeof text !== 'string') return validatePattern(text)
  const s = text.trim().toLowerCase()
  if (s === 'unstructured') return {kind: 'unstructured'}
  const match = /^(\d+):(\d+)$/.exec(s)
  if (!match) {
    throw new UsageError('bad-pattern', `unknown pattern '${text}'`, "use 'unstructured' or N:M with integers, e.g. 2:4")
  }
  return validatePattern({kind: 'n:m', n: Number(match[1]), m: Number(match[2])})
}

function validatePattern(p: PrunePattern): PrunePattern {
  if (p.kind === 'unstructured') return p
  const {n, m} = p
  if (!Number.isInteger(n) || !Number.isInteger(m) || n < 1 || m < 1 || n > m || m > 65536) {
    throw new UsageError('bad-pattern', `pattern ${n}:${m} is invalid: need integers 1 <= N <= M <= 65536`, 'e.g. --pattern 2:4')
  }
  return p
}

export function patternName(p: PrunePattern): string {
  return p.kind === 'unstructured' ? 'unstructured' : `${p.n}:${p.m}`
}

/** The sparsity an N:M pattern implies: 1 - N/M. */
export function impliedSparsity(p: PrunePattern & {kind: 'n:m'}): number {
  return 1 - p.n / p.m
}

/** How many entries of a rows x cols matrix N:M prunes (partial groups included). */
export function nmPrunedCount(rows: number, cols: number, p: {n: number; m: number}): number {
  const full = Math.floor(cols / p.m)
  const rest = cols - full * p.m
  return rows * (full * (p.m - p.n) + Math.max(0, rest - p.n))
}

export interface NmResult {
  csr: CsrMatrix
  /** Entries pruned by the rule (zeros kept by the rule are not stored either). */
  pruned: number
  /** The largest pruned magnitude key (0 when nothing is pruned). */
  maxPrunedKey: number
}

/** N:M pruning of one matrix, in one pass. Throws InputError for NaN/Inf weights. */
export function pruneNM(mat: MagnitudeMatrix, p: {n: number; m: number}): NmResult {
  const {rows, cols, dtype} = mat
  const mask = KEY_MASK[dtype]
  const nonFinite = NON_FINITE_KEY[dtype]
  const bits = mat.bits
  const pruned = nmPrunedCount(rows, cols, p)
  const capacity = mat.numel - pruned
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices = new Int32Array(capacity)
  const outBits = dtype === 'f32' ? new Uint32Array(capacity) : new Uint16Array(capacity)
  const {n, m: groupSize} = p
  const keys = new Uint32Array(groupSize)
  const prune = new Uint8Array(groupSize)
  const order = new Int32Array(groupSize)
  let maxPrunedKey = 0
  let bad = 0
  let q = 0
  for (let r = 0; r < rows; r++) {
    const rowBase = r * cols
    for (let g = 0; g < cols; g += groupSize) {
      const len = Math.min(groupSize, cols - g)
      const drop = Math.max(0, len - n)
      for (let j = 0; j < len; j++) {
        const k = bits[rowBase + g + j] & mask
        if (k >= nonFinite) bad++
        keys[j] = k
        prune[j] = 0
      }
      if (drop > 0) markSmallest(keys, len, drop, prune, order)
      for (let j = 0; j < len; j++) {
        if (prune[j]) {
          if (keys[j] > maxPrunedKey) maxPrunedKey = keys[j]
        } else if (keys[j] !== 0) {
          columnIndices[q] = g + j
          outBits[q] = bits[rowBase + g + j]
          q++
        }
      }
    }
    rowOffsets[r + 1] = q
  }
  if (bad > 0) throwNonFinite(mat)
  const values = dtype === 'f32' ? new Float32Array(outBits.buffer, 0, capacity) : (outBits as Uint16Array)
  return {
    csr: {rows, cols, rowOffsets, columnIndices: trim(columnIndices, q), values: trim(values, q), dtype},
    pruned,
    maxPrunedKey,
  }
}

/**
 * Marks the first `drop` of keys[0..len) in the order (key ascending, index ascending).
 * Small groups (2:4, 4:8, ...) count ranks directly; larger ones sort an index array.
 */
function markSmallest(keys: Uint32Array, len: number, drop: number, prune: Uint8Array, order: Int32Array): void {
  if (len <= 16) {
    for (let i = 0; i < len; i++) {
      const ki = keys[i]
      let rank = 0
      for (let j = 0; j < len; j++) {
        const kj = keys[j]
        if (kj < ki || (kj === ki && j < i)) rank++
      }
      if (rank < drop) prune[i] = 1
    }
    return
  }
  for (let i = 0; i < len; i++) order[i] = i
  const view = order.subarray(0, len)
  view.sort((a, b) => keys[a] - keys[b] || a - b)
  for (let i = 0; i < drop; i++) prune[view[i]] = 1
}
