import {UsageError} from '../errors.js'

/**
 * Round half to even, as Python's `round` (and so PyTorch's pruning `amount`) does.
 * JavaScript's `Math.round` rounds halves up, which would prune one weight too many in
 * half of the tie cases (S = 0.5 with an odd element count, for example).
 */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x)
  const d = x - f
  if (d < 0.5) return f
  if (d > 0.5) return f + 1
  return f % 2 === 0 ? f : f + 1
}

/** Checks a target sparsity: a finite number in [0, 1). Throws UsageError (exit 2). */
export function validateSparsity(sparsity: number): void {
  if (typeof sparsity !== 'number' || !Number.isFinite(sparsity) || sparsity < 0 || sparsity >= 1) {
    throw new UsageError(
      'bad-sparsity',
      `sparsity must be a number in [0, 1), got ${String(sparsity)}`,
      'pass for example -s 0.9 to prune 90% of the weights',
    )
  }
}

/**
 * How many of `numel` entries are pruned at sparsity S: round(S × numel), ties to even.
 * The product is the same double Python computes, so the count matches `round(S * n)`.
 */
export function prunedCount(sparsity: number, numel: number): number {
  validateSparsity(sparsity)
  return Math.min(numel, roundHalfEven(sparsity * numel))
}
