/**
 * Linear-time magnitude selection: which entries are the first k in the order
 * (|w| ascending, row-major index ascending)?
 *
 * The answer is a cut: a threshold key T, the count `below` of entries with key < T (all
 * pruned) and the count `ties` = k - below of entries with key == T that are pruned too,
 * the first ones in row-major order. It is found with a radix select over the integer
 * magnitude keys (see keys.ts), no sort:
 * - 16-bit dtypes: one histogram of the 2^15 keys, then a prefix sum.
 * - f32: a histogram of the high 16 bits finds the bucket holding the k-th entry; a second
 *   pass histograms the low 16 bits of the entries in that bucket only.
 * Both passes read the tensor sequentially and touch a 128-256 KiB histogram; memory is
 * O(1) beyond the tensor. The same first histogram counts NaN/Inf (keys in the top bins),
 * so the finiteness check costs nothing extra.
 *
 * GlobalCut does the same over several tensors (read one at a time) in the float32 key
 * domain, with ties broken by tensor order and then row-major index.
 */
import {f32KeyTable, KEY_MASK, type MagnitudeMatrix, NON_FINITE_KEY, throwNonFinite} from './keys.js'

export interface Cut {
  /** Threshold key (in the tensor's own key domain). Keys below it are all pruned. */
  key: number
  /** Entries with key == `key` that are pruned: the first `ties` of them in row-major order. */
  ties: number
  /** Entries with key < `key`. `below + ties` = the number pruned by the rule. */
  below: number
}

const HIGH_BINS = 0x8000 // top bit of the 32-bit key is the (masked) sign: 15 bits remain
const LOW_BINS = 0x10000
/**
 * Tensors of at most this many entries are cut by sorting their keys, and add to a global
 * histogram entry by entry: a histogram pass costs about a megabyte of zeroed counters and
 * 2^15 bins whatever the tensor's size, which made 10,000 tiny tensors take 30 s.
 */
export const SMALL_TENSOR = 4096

/**
 * Histogram of the high 16 bits of f32 magnitude keys (adds into `hist`, 2^15 bins).
 * NOTE: four interleaved sub-histograms: weights cluster in a few hundred bins, and
 * back-to-back increments of one counter would serialise on the store-to-load dependency
 * (about 1.5x slower on 64M Gaussian weights).
 */
export function histogramHighF32(bits: Uint32Array, hist: Uint32Array): void {
  const n = bits.length
  const sub = new Uint32Array(4 * HIGH_BINS)
  const n4 = n - (n & 3)
  let i = 0
  for (; i < n4; i += 4) {
    sub[(bits[i] >>> 16) & 0x7fff]++
    sub[HIGH_BINS + ((bits[i + 1] >>> 16) & 0x7fff)]++
    sub[2 * HIGH_BINS + ((bits[i + 2] >>> 16) & 0x7fff)]++
    sub[3 * HIGH_BINS + ((bits[i + 3] >>> 16) & 0x7fff)]++
  }
  for (; i < n; i++) sub[(bits[i] >>> 16) & 0x7fff]++
  for (let j = 0; j < HIGH_BINS; j++) hist[j] += sub[j] + sub[HIGH_BINS + j] + sub[2 * HIGH_BINS + j] + sub[3 * HIGH_BINS + j]
}

/** Histogram of the low 16 bits of the f32 keys whose high 16 bits equal `high`. */
export function histogramLowF32(bits: Uint32Array, high: number, hist: Uint32Array): void {
  const n = bits.length
  const base = high << 16
  for (let i = 0; i < n; i++) {
    // NOTE: one unsigned compare tests base <= key < base + 2^16.
    const d = ((bits[i] & 0x7fffffff) - base) >>> 0
    if (d < LOW_BINS) hist[d]++
  }
}

/** Histogram of 16-bit magnitude keys (adds into `hist`, 2^15 bins; interleaved as above). */
export function histogram16(bits: Uint16Array, hist: Uint32Array): void {
  const n = bits.length
  const sub = new Uint32Array(4 * HIGH_BINS)
  const n4 = n - (n & 3)
  let i = 0
  for (; i < n4; i += 4) {
    sub[bits[i] & 0x7fff]++
    sub[HIGH_BINS + (bits[i + 1] & 0x7fff)]++
    sub[2 * HIGH_BINS + (bits[i + 2] & 0x7fff)]++
    sub[3 * HIGH_BINS + (bits[i + 3] & 0x7fff)]++
  }
  for (; i < n; i++) sub[bits[i] & 0x7fff]++
  for (let j = 0; j < HIGH_BINS; j++) hist[j] += sub[j] + sub[HIGH_BINS + j] + sub[2 * HIGH_BINS + j] + sub[3 * HIGH_BINS + j]
}

function sumFrom(hist: ArrayLike<number>, from: number): number {
  let s = 0
  for (let i = from; i < hist.length; i++) s += hist[i]
  return s
}

/**
 * The cut that prunes k entries of a tensor (0 <= k <= numel). Throws InputError when the
 * tensor holds NaN or infinite weights (checked even when k = 0).
 */
export function selectCut(m: MagnitudeMatrix, k: number): Cut {
  if (!(k >= 0 && k <= m.numel)) throw new RangeError(`k = ${k} is outside [0, ${m.numel}]`)
  if (m.numel <= SMALL_TENSOR) return selectCutSmall(m, k)
  if (m.dtype === 'f32') return selectCutF32(m, m.bits as Uint32Array, k)
  const hist = new Uint32Array(HIGH_BINS)
  histogram16(m.bits as Uint16Array, hist)
  if (sumFrom(hist, NON_FINITE_KEY[m.dtype]) > 0) throwNonFinite(m)
  if (k === 0) return {key: 0, ties: 0, below: 0}
  let below = 0
  let key = 0
  while (below + hist[key] < k) below += hist[key++]
  return {key, ties: k - below, below}
}

/** The cut of a small tensor: its keys sorted (the same cut as the histograms find). */
export function selectCutSmall(m: MagnitudeMatrix, k: number): Cut {
  const mask = KEY_MASK[m.dtype]
  const limit = NON_FINITE_KEY[m.dtype]
  const bits = m.bits
  const keys = new Uint32Array(bits.length)
  let nonFinite = false
  for (let i = 0; i < bits.length; i++) {
    const key = (bits[i] & mask) >>> 0
    if (key >= limit) nonFinite = true
    keys[i] = key
  }
  if (nonFinite) throwNonFinite(m)
  if (k === 0) return {key: 0, ties: 0, below: 0}
  keys.sort()
  const key = keys[k - 1]
  let below = k - 1
  while (below > 0 && keys[below - 1] === key) below--
  return {key, ties: k - below, below}
}

function selectCutF32(m: MagnitudeMatrix, bits: Uint32Array, k: number): Cut {
  const high = new Uint32Array(HIGH_BINS)
  histogramHighF32(bits, high)
  if (sumFrom(high, NON_FINITE_KEY.f32 >>> 16) > 0) throwNonFinite(m)
  if (k === 0) return {key: 0, ties: 0, below: 0}
  let below = 0
  let h = 0
  while (below + high[h] < k) below += high[h++]
  const low = new Uint32Array(LOW_BINS)
  histogramLowF32(bits, h, low)
  let l = 0
  while (below + low[l] < k) below += low[l++]
  return {key: (h << 16) | l, ties: k - below, below}
}

/**
 * One magnitude cut across several tensors (global scope), in the float32 key domain so
 * that f32, f16 and bf16 tensors compare by value. Usage, with the tensors always visited
 * in the same order:
 *   1. addHigh(m) for every tensor;      2. const need = planLow(k);
 *   3. addLow(m) for every tensor;       4. const cut = finish();
 *   5. per tensor, in order: localCut(m, cut, remainingTies), then prune with it and
 *      subtract the ties it used from remainingTies.
 * Counts are kept in float64 so that models beyond 2^32 weights are fine.
 */
export class GlobalCut {
  private readonly high = new Float64Array(HIGH_BINS)
  private readonly low = new Float64Array(LOW_BINS)
  private highBucket = -1
  private belowBucket = 0
  private k = 0
  total = 0

  /** Pass 1 over one tensor: high-bits histogram (and the NaN/Inf check). */
  addHigh(m: MagnitudeMatrix): void {
    if (m.numel <= SMALL_TENSOR) {
      // Entry by entry (see SMALL_TENSOR), in the float32 key domain.
      const mask = KEY_MASK[m.dtype]
      const limit = NON_FINITE_KEY[m.dtype]
      const lut = m.dtype === 'f32' ? undefined : f32KeyTable(m.dtype)
      const bits = m.bits
      for (let i = 0; i < bits.length; i++) if ((bits[i] & mask) >>> 0 >= limit) throwNonFinite(m)
      for (let i = 0; i < bits.length; i++) {
        const key = lut ? lut[bits[i] & mask] : (bits[i] & mask) >>> 0
        this.high[key >>> 16]++
      }
    } else if (m.dtype === 'f32') {
      const h = new Uint32Array(HIGH_BINS)
      histogramHighF32(m.bits as Uint32Array, h)
      if (sumFrom(h, NON_FINITE_KEY.f32 >>> 16) > 0) throwNonFinite(m)
      for (let i = 0; i < HIGH_BINS; i++) this.high[i] += h[i]
    } else {
      const h = new Uint32Array(HIGH_BINS)
      histogram16(m.bits as Uint16Array, h)
      if (sumFrom(h, NON_FINITE_KEY[m.dtype]) > 0) throwNonFinite(m)
      const lut = f32KeyTable(m.dtype)
      for (let i = 0; i < HIGH_BINS; i++) if (h[i]) this.high[lut[i] >>> 16] += h[i]
    }
    this.total += m.numel
  }

  /**
   * After pass 1: fixes k and finds the high bucket. Returns false when no second pass is
   * needed (k = 0).
   */
  planLow(k: number): boolean {
    if (!(k >= 0 && k <= this.total)) throw new RangeError(`k = ${k} is outside [0, ${this.total}]`)
    this.k = k
    if (k === 0) return false
    let below = 0
    let h = 0
    while (below + this.high[h] < k) below += this.high[h++]
    this.highBucket = h
    this.belowBucket = below
    return true
  }

  /** Pass 2 over one tensor: low-bits histogram of the entries in the high bucket. */
  addLow(m: MagnitudeMatrix): void {
    if (this.highBucket < 0) return
    if (m.numel <= SMALL_TENSOR) {
      const mask = KEY_MASK[m.dtype]
      const lut = m.dtype === 'f32' ? undefined : f32KeyTable(m.dtype)
      const bits = m.bits
      for (let i = 0; i < bits.length; i++) {
        const key = lut ? lut[bits[i] & mask] : (bits[i] & mask) >>> 0
        if (key >>> 16 === this.highBucket) this.low[key & 0xffff]++
      }
    } else if (m.dtype === 'f32') {
      const h = new Uint32Array(LOW_BINS)
      histogramLowF32(m.bits as Uint32Array, this.highBucket, h)
      for (let i = 0; i < LOW_BINS; i++) this.low[i] += h[i]
    } else {
      const h = new Uint32Array(HIGH_BINS)
      histogram16(m.bits as Uint16Array, h)
      const lut = f32KeyTable(m.dtype)
      for (let i = 0; i < HIGH_BINS; i++) if (h[i] && lut[i] >>> 16 === this.highBucket) this.low[lut[i] & 0xffff] += h[i]
    }
  }

  /** The global cut in the float32 key domain (`ties` is the global number of tied entries pruned). */
  finish(): Cut {
    if (this.k === 0) return {key: 0, ties: 0, below: 0}
    let below = this.belowBucket
    let l = 0
    while (below + this.low[l] < this.k) below += this.low[l++]
    return {key: (this.highBucket << 16) | l, ties: this.k - below, below}
  }
}

/**
 * The global cut (float32 key domain) seen from one tensor: its native threshold key and
 * how many of the remaining global ties it may prune. For f16/bf16, the threshold is the
 * smallest native key whose value is >= the global one; when no native key equals it,
 * this tensor has no tied entries (all below are pruned, all from it up are kept).
 */
export function localCut(m: MagnitudeMatrix, global: Cut, remainingTies: number): {key: number; ties: number} {
  if (m.dtype === 'f32') return {key: global.key, ties: remainingTies}
  const lut = f32KeyTable(m.dtype)
  // Binary search the monotone table for the first native key >= the global key.
  let lo = 0
  let hi = NON_FINITE_KEY[m.dtype]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (lut[mid] < global.key) lo = mid + 1
    else hi = mid
  }
  const tied = lo < NON_FINITE_KEY[m.dtype] && lut[lo] === global.key
  return {key: lo, ties: tied ? remainingTies : 0}
}
