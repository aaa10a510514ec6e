/**
 * The fast path of unstructured f32 pruning: one pass over the tensor instead of three.
 *
 * A seeded random sample of the magnitude keys gives a key `lo` safely below the cut
 * (several standard deviations of the sample quantile). One pass then stores every entry
 * with key >= lo (all others have key < lo, are all among the first k in the order, and
 * are pruned). The remaining k - below entries to prune are the first ones among the
 * stored entries in the same order (|w| asc, index asc; storage order is row-major), which
 * an exact radix select over the stored values finds; a compaction pass drops them.
 *
 * The result is exactly the definition's whatever the sample says: when the guess is off
 * (lo above the cut, or more entries above lo than the buffer holds) it returns null and
 * the caller runs the exact path. The sample only decides the speed. NaN/Inf keys are
 * above any finite `lo`, so they are all stored and caught by the select over the stored.
 */
import type {CsrMatrix} from '../types.js'
import {InputError} from '../errors.js'
import {type MagnitudeMatrix, throwNonFinite} from './keys.js'
import {selectCut} from './select.js'

const SAMPLE = 1 << 16
/** Below this many entries the exact path is as fast. */
export const SAMPLED_MIN_NUMEL = 1 << 20

export interface SampledResult {
  csr: CsrMatrix
  /** The threshold key (f32 magnitude bits). */
  key: number
}

/**
 * Prunes k entries of an f32 matrix in one pass, or returns null (use the exact path).
 * `testing` forces the guess (lo key, buffer capacity) to exercise the fallbacks.
 */
export function pruneSampledF32(m: MagnitudeMatrix, k: number, testing?: {lo: number; capacity: number}): SampledResult | null {
  const bits = m.bits as Uint32Array
  const n = m.numel
  if ((n < SAMPLED_MIN_NUMEL && !testing) || k === 0 || k >= n) return null
  const lo = testing ? testing.lo : sampleLowKey(bits, k)
  if (lo <= 0) return null
  const q = k / n
  const sigma = Math.sqrt((q * (1 - q)) / SAMPLE)
  // The stored count is about (1 - quantile(lo)) n; give it a wide margin.
  const capacity = testing ? testing.capacity : Math.min(n, Math.ceil(n * (1 - q + 12 * sigma + 4 / SAMPLE)) + 1024)
  const {rows, cols} = m
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices = new Int32Array(capacity)
  const values = new Float32Array(capacity)
  const valueBits = new Uint32Array(values.buffer)
  let p = 0
  let i = 0
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++, i++) {
      // NOTE: branch-free (always write, advance when key >= lo): the kept entries are
      // scattered at random, and a branch would mispredict often (about 20% faster).
      // Writes past `capacity` are dropped (typed arrays ignore them); the count then tells
      // us to fall back.
      const x = bits[i]
      columnIndices[p] = c
      valueBits[p] = x
      p += (((x & 0x7fffffff) - lo) >>> 31) ^ 1
    }
    rowOffsets[r + 1] = p
  }
  const below = n - p
  if (p > capacity || below > k) return null
  // Select the remaining k - below among the stored entries, in storage order.
  const stored: MagnitudeMatrix = {name: m.name, shape: [p], rows: 1, cols: p, numel: p, dtype: 'f32', bits: valueBits.subarray(0, p)}
  // Every NaN/Inf key is above `lo`, so this select's histogram sees them all; the error
  // is re-raised with the whole tensor's figures.
  let cut
  try {
    cut = selectCut(stored, k - below)
  } catch (error) {
    if (error instanceof InputError && error.code === 'non-finite-weights') throwNonFinite(m)
    throw error
  }
  const key = cut.key
  let ties = cut.ties
  // Compact in place, dropping keys < key and the first `ties` keys == key.
  let w = 0
  let start = 0
  for (let r = 0; r < rows; r++) {
    const end = rowOffsets[r + 1]
    for (let j = start; j < end; j++) {
      const x = valueBits[j]
      const kx = x & 0x7fffffff
      if (kx < key) continue
      if (kx === key && ties > 0) {
        ties--
        continue
      }
      columnIndices[w] = columnIndices[j]
      valueBits[w] = x
      w++
    }
    start = end
    rowOffsets[r + 1] = w
  }
  // NOTE: views, not copies: the slack (a few % of the tensor) is cheaper than a copy.
  return {
    csr: {rows, cols, rowOffsets, columnIndices: columnIndices.subarray(0, w), values: values.subarray(0, w), dtype: 'f32'},
    key,
  }
}

/** A key below the k-th smallest with high probability, from a seeded sample. */
function sampleLowKey(bits: Uint32Array, k: number): number {
  const n = bits.length
  const sample = new Uint32Array(SAMPLE)
  let s = 0x9e3779b9
  for (let j = 0; j < SAMPLE; j++) {
    // xorshift32: deterministic positions, so runs are reproducible.
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    sample[j] = bits[Math.floor(((s >>> 0) / 4294967296) * n)] & 0x7fffffff
  }
  sample.sort()
  const q = k / n
  const sigma = Math.sqrt((q * (1 - q)) / SAMPLE)
  const idx = Math.floor((q - 6 * sigma) * SAMPLE) - 2
  return idx <= 0 ? 0 : sample[idx]
}
