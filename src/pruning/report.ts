/** What `sparse prune` reports, per tensor and for the whole model (the --json shape). */
import {memorySaving, memorySizes, type MemorySizes, type TileStats} from '../sparse/memory.js'
import type {ValueDType} from '../types.js'

export interface ByEncoding {
  /** fp32 values + int32 column indices. */
  f32: number
  /** fp16/bf16 values + 16-bit column indices when cols <= 32768 (else int32). */
  f16: number
}

/**
 * Sizes in each form and the memory saving, each against the dense matrix of the same value
 * dtype (src/sparse/memory.ts): `denseBytes {f32, f16}`, `csrBytes {f32, f16}`, `bitmapBytes`,
 * `twoFourBytes` (null unless 2:4), `tcBytes`, `memorySaving {f32, f16, bitmap, twoFour, tc}`.
 */
export interface TensorReport extends MemorySizes {
  name: string
  /** The tensor's original shape. */
  shape: number[]
  /** The 2-D matrix it was pruned as: [shape[0], product of the rest]. */
  rows: number
  cols: number
  numel: number
  /** Value dtype of the CSR (the input's; f64 becomes f32). */
  dtype: ValueDType
  /** Stored entries. */
  nnz: number
  /** Achieved sparsity: 1 - nnz / numel. */
  sparsity: number
  /** The fraction the rule prunes: round(S x numel) / numel for tensor scope, this tensor's share of the global cut for global scope, (pruned by N:M) / numel for N:M. */
  targetSparsity: number
  /** Entries pruned by the rule. */
  pruned: number
  /** Zero weights beyond the target: the rule kept them, but zeros are never stored. */
  extraZeros: number
  /** Kept weights that became zero when re-encoded with --dtype (dropped: zeros are never stored). */
  flushedToZero: number
  /** True when the input already had more zeros than the target (sparsity > targetSparsity). */
  overSparse: boolean
  /** The magnitude at the cut: the largest pruned |w| (0 when nothing is pruned). Under global scope, the global one. For N:M, the largest pruned |w| (smaller ones may be kept in other groups). */
  threshold: number
  /** Whether Sputnik's row order is stored. */
  reordered: boolean
  /** The output file this tensor went to, when one was written. */
  file?: string
  /** The --sparsity-map pattern that gave this tensor its target, when one did. */
  rule?: string
  /** Global scope with --min-density: the tensor kept its floor instead of the global cut. */
  floored?: boolean
}

export interface SkippedTensor {
  name: string
  shape: number[]
  reason: string
}

export interface PruneTotals extends MemorySizes {
  tensors: number
  numel: number
  nnz: number
  sparsity: number
  targetSparsity: number
  /** Under global scope, the one threshold; otherwise null. */
  threshold: number | null
}

export interface PruneReport {
  scope: 'tensor' | 'global'
  pattern: string
  /** The requested sparsity (for N:M, the implied 1 - N/M); null with a sparsity map and no -s. */
  sparsity: number | null
  tensors: TensorReport[]
  skipped: SkippedTensor[]
  totals: PruneTotals
  /** Human notes: over-sparse tensors, skipped tensors, nothing selected, ... */
  notes: string[]
  /** Problems with the result that the user should see: layer collapse under global scope. */
  warnings: string[]
}

export function tensorReport(args: {
  name: string
  shape: number[]
  rows: number
  cols: number
  dtype: ValueDType
  nnz: number
  pruned: number
  flushed?: number
  threshold: number
  reordered: boolean
  /** The stored matrix's tile statistics (csrTileStats), for the tensor-core forms. */
  tiles: TileStats
}): TensorReport {
  const {rows, cols, nnz, pruned} = args
  const numel = rows * cols
  const sparsity = numel === 0 ? 0 : 1 - nnz / numel
  const targetSparsity = numel === 0 ? 0 : pruned / numel
  const flushed = args.flushed ?? 0
  const extraZeros = numel - pruned - nnz - flushed
  return {
    name: args.name,
    shape: args.shape,
    rows,
    cols,
    numel,
    dtype: args.dtype,
    nnz,
    sparsity,
    targetSparsity,
    pruned,
    extraZeros,
    flushedToZero: flushed,
    overSparse: extraZeros > 0,
    threshold: args.threshold,
    ...memorySizes(rows, cols, nnz, args.tiles, args.reordered),
    reordered: args.reordered,
  }
}

export function totalsOf(tensors: TensorReport[], threshold: number | null): PruneTotals {
  let numel = 0
  let nnz = 0
  let pruned = 0
  const dense = {f32: 0, f16: 0}
  const csr = {f32: 0, f16: 0}
  let bitmap = 0
  let twoFour: number | null = 0
  let tc = 0
  for (const t of tensors) {
    numel += t.numel
    nnz += t.nnz
    pruned += t.pruned
    dense.f32 += t.denseBytes.f32
    dense.f16 += t.denseBytes.f16
    csr.f32 += t.csrBytes.f32
    csr.f16 += t.csrBytes.f16
    bitmap += t.bitmapBytes
    // The model has a 2:4 form only when every tensor has one.
    twoFour = twoFour === null || t.twoFourBytes === null ? null : twoFour + t.twoFourBytes
    tc += t.tcBytes
  }
  return {
    tensors: tensors.length,
    numel,
    nnz,
    sparsity: numel === 0 ? 0 : 1 - nnz / numel,
    targetSparsity: numel === 0 ? 0 : pruned / numel,
    threshold,
    denseBytes: dense,
    csrBytes: csr,
    bitmapBytes: bitmap,
    twoFourBytes: tensors.length === 0 ? null : twoFour,
    tcBytes: tc,
    memorySaving: {
      f32: memorySaving(dense.f32, csr.f32),
      f16: memorySaving(dense.f16, csr.f16),
      bitmap: memorySaving(dense.f16, bitmap),
      twoFour: twoFour === null || tensors.length === 0 ? null : memorySaving(dense.f16, twoFour),
      tc: memorySaving(dense.f16, tc),
    },
  }
}
