/**
 * Statistics for timing samples: order statistics (median, p10, p90) with linear
 * interpolation between closest ranks (NumPy's default), and the geometric mean that
 * summarises ratios such as speedups.
 */

/** The q-quantile (0 <= q <= 1) of `values`, linear interpolation; NaN when empty. */
export function quantile(values: ArrayLike<number>, q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile must be in [0, 1], got ${q}`)
  const n = values.length
  if (n === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const pos = q * (n - 1)
  const lo = Math.floor(pos)
  const hi = Math.min(lo + 1, n - 1)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
}

export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5)
}

export interface SampleSummary {
  median: number
  p10: number
  p90: number
  min: number
  mean: number
  count: number
}

/** Median, p10, p90, min and mean of timing samples (ms). */
export function summarize(samples: ArrayLike<number>): SampleSummary {
  const n = samples.length
  if (n === 0) return {median: Number.NaN, p10: Number.NaN, p90: Number.NaN, min: Number.NaN, mean: Number.NaN, count: 0}
  let sum = 0
  let min = Infinity
  for (let i = 0; i < n; i++) {
    sum += samples[i]
    if (samples[i] < min) min = samples[i]
  }
  return {median: median(samples), p10: quantile(samples, 0.1), p90: quantile(samples, 0.9), min, mean: sum / n, count: n}
}

/**
 * Geometric mean of the positive finite values (others are skipped: a missing baseline
 * must not zero the summary); NaN when none remain.
 */
export function geomean(values: Iterable<number>): number {
  let logSum = 0
  let count = 0
  for (const v of values) {
    if (v > 0 && Number.isFinite(v)) {
      logSum += Math.log(v)
      count++
    }
  }
  return count === 0 ? Number.NaN : Math.exp(logSum / count)
}
