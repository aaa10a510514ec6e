/**
 * Magnitude pruning of dense tensors to CSR (the definition is in the README):
 * - a tensor with more than two dimensions is the matrix [shape[0], product of the rest];
 * - round(S x numel) entries are pruned (half to even, like Python's round);
 * - entries are ordered by |w| ascending, then row-major index ascending, and the first
 *   ones are pruned; zeros are never stored; NaN/Inf weights are refused;
 * - scope 'global' applies the same order across all selected tensors (by tensor order,
 *   then row-major index); pattern N:M keeps the N largest of every M in a row.
 * Linear time (radix select, see select.ts); memory is one tensor plus its output.
 */
import {UsageError} from '../errors.js'
import {pace} from '../formats/pace.js'
import {reorderRows} from '../reorder/swizzle.js'
import {csrTileStats} from '../sparse/memory.js'
import type {CsrMatrix, DenseDType, DenseTensor, ValueDType} from '../types.js'
import {convertCsrDtype} from './convert.js'
import {prunedCount, validateSparsity} from './amount.js'
import {countAround, emitCsr} from './emit.js'
import {keyToMagnitude, type MagnitudeMatrix, prepareTensor} from './keys.js'
import {impliedSparsity, parsePattern, patternName, type PrunePattern, pruneNM} from './pattern.js'
import {type PruneReport, type SkippedTensor, type TensorReport, tensorReport, totalsOf} from './report.js'
import {pruneSampledF32} from './sampled.js'
import {regexMatcher, type NameTest} from './name-match.js'
import {matchRule, type SparsityRule} from './sparsity-map.js'
import {GlobalCut, localCut, selectCut} from './select.js'

export type PruneScope = 'tensor' | 'global'

export interface PruneOptions {
  /** Target sparsity S in [0, 1). Required for unstructured pruning; implied by N:M. */
  sparsity?: number
  /** 'tensor' (default): each tensor pruned to S. 'global': one cut across all selected tensors. */
  scope?: PruneScope
  /** 'unstructured' (default) or 'N:M' (e.g. '2:4'). */
  pattern?: string | PrunePattern
  /** Only tensors whose name matches (a RegExp or its source). */
  include?: string | RegExp
  /** Skip tensors whose name matches. */
  exclude?: string | RegExp
  /** Prune 1-D tensors too, as 1 x n matrices (default: skip them, they are biases and norms). */
  include1d?: boolean
  /**
   * Prune embeddings and the output head too (default: skip them, as Hugging Face and
   * llm-compressor recipes do, whose targets are the Linear layers; see isEmbeddingName).
   */
  includeEmbeddings?: boolean
  /** Store Sputnik's row order (default true). */
  reorder?: boolean
  /** Value dtype of the output (default: the input's; f64 becomes f32). Applied after the selection. */
  dtype?: ValueDType
  /**
   * Per-tensor sparsities (a recipe, see sparsity-map.ts): the first matching rule gives a
   * tensor's target; unmatched tensors get `sparsity` when given, else are skipped. Tensor
   * scope and unstructured pruning only.
   */
  sparsityMap?: readonly SparsityRule[]
  /**
   * Global scope only: every selected tensor keeps at least ceil(minDensity x numel) of its
   * weights (a floor against layer collapse); a tensor the global cut would take below it is
   * pruned on its own to exactly that density instead. In [0, 1].
   */
  minDensity?: number
}

/** A pruned tensor: the CSR and its report line. */
export interface PrunedTensor {
  name: string
  shape: number[]
  csr: CsrMatrix
  report: TensorReport
}

/** A tensor to prune, loaded on demand (so a file is read one tensor at a time). */
export interface TensorEntry {
  name: string
  shape: number[]
  dtype?: DenseDType
  load(): Promise<DenseTensor> | DenseTensor
  /**
   * Optional: called with a loaded tensor once pruning no longer needs it, so its memory can
   * be reused by the next load (TensorSource.release). Nothing may keep a view of it after.
   */
  release?(tensor: DenseTensor): void
}

/** Load an entry, run `use` on it, then hand the tensor back to its source. */
async function withTensor<R>(entry: TensorEntry, use: (t: DenseTensor) => Promise<R> | R): Promise<R> {
  const t = await entry.load()
  const r = await use(t)
  entry.release?.(t)
  return r
}

/**
 * Receives each pruned tensor in file order, with the dense tensor it was pruned from (valid
 * only during the call); may write it and fill `report.file`.
 */
export type PrunedSink = (t: PrunedTensor, dense: DenseTensor) => Promise<void> | void

export interface ResolvedOptions {
  /** -s (for N:M, 1 - N/M); null with a sparsity map and no -s. */
  sparsity: number | null
  scope: PruneScope
  pattern: PrunePattern
  include?: NameTest
  exclude?: NameTest
  include1d: boolean
  includeEmbeddings: boolean
  reorder: boolean
  dtype?: ValueDType
  sparsityMap?: readonly SparsityRule[]
  minDensity?: number
}

/** Validates options before any data is read. Throws UsageError (exit 2). */
export function resolveOptions(o: PruneOptions): ResolvedOptions {
  const pattern = parsePattern(o.pattern)
  const scope = o.scope ?? 'tensor'
  if (scope !== 'tensor' && scope !== 'global') {
    throw new UsageError('bad-scope', `scope must be 'tensor' or 'global', got '${String(scope)}'`)
  }
  let sparsity: number | null
  const map = o.sparsityMap
  if (map && map.length > 0) {
    if (pattern.kind === 'n:m') throw new UsageError('map-pattern-conflict', '--sparsity-map applies to unstructured pruning only', 'leave out --pattern, or the map')
    if (scope === 'global') throw new UsageError('map-scope-conflict', '--sparsity-map gives each tensor its own target, which --scope global would replace by one cut', 'leave out --scope global, or the map')
  }
  if (o.minDensity !== undefined) {
    if (!(typeof o.minDensity === 'number' && o.minDensity >= 0 && o.minDensity <= 1)) {
      throw new UsageError('bad-min-density', `--min-density must be a number in [0, 1], got ${String(o.minDensity)}`, 'e.g. --min-density 0.02 keeps at least 2% of every tensor')
    }
    if (scope !== 'global') throw new UsageError('min-density-scope', '--min-density applies to --scope global only (with tensor scope every tensor keeps 1 - S)', 'add --scope global, or leave out --min-density')
  }
  // The one range check of -s on its way down (prunedCount re-checks only for direct callers).
  if (o.sparsity !== undefined) validateSparsity(o.sparsity)
  if (map && map.length > 0 && o.sparsity === undefined) {
    sparsity = null
  } else if (pattern.kind === 'n:m') {
    const implied = impliedSparsity(pattern)
    if (o.sparsity !== undefined) {
      if (Math.abs(o.sparsity - implied) > 1e-9) {
        throw new UsageError(
          'sparsity-pattern-conflict',
          `--sparsity ${o.sparsity} contradicts --pattern ${pattern.n}:${pattern.m}, which implies ${implied}`,
          'leave out --sparsity with an N:M pattern',
        )
      }
    }
    if (scope === 'global') {
      throw new UsageError('scope-pattern-conflict', '--scope global applies to unstructured pruning only', 'leave out --scope with an N:M pattern')
    }
    sparsity = implied
  } else {
    if (o.sparsity === undefined) {
      throw new UsageError('missing-sparsity', 'a target sparsity is required for unstructured pruning', 'pass -s/--sparsity, e.g. -s 0.9')
    }
    sparsity = o.sparsity
  }
  return {
    sparsity,
    scope,
    pattern,
    include: toRegExp(o.include, 'include'),
    exclude: toRegExp(o.exclude, 'exclude'),
    include1d: o.include1d ?? false,
    includeEmbeddings: o.includeEmbeddings ?? false,
    reorder: o.reorder ?? true,
    dtype: checkDtype(o.dtype),
    sparsityMap: map && map.length > 0 ? map : undefined,
    minDensity: o.minDensity,
  }
}

/** A tensor's target sparsity: its first matching map rule, else -s (undefined: not pruned). */
export function targetSparsity(name: string, o: ResolvedOptions): {sparsity: number; rule?: string} | undefined {
  const rule = o.sparsityMap ? matchRule(o.sparsityMap, name) : undefined
  if (rule) return {sparsity: rule.sparsity, rule: rule.pattern}
  return o.sparsity === null ? undefined : {sparsity: o.sparsity}
}

function checkDtype(d: string | undefined): ValueDType | undefined {
  if (d === undefined || d === 'f32' || d === 'f16' || d === 'bf16') return d
  throw new UsageError('bad-dtype', `dtype must be f32, f16 or bf16, got '${d}'`)
}

/**
 * A --include/--exclude pattern as a linear-time matcher (name-match.ts: a name from a file
 * must not be able to make a backtracking RegExp run for minutes). A RegExp object a library
 * caller passes is used as it is.
 */
function toRegExp(re: string | RegExp | undefined, which: string): NameTest | undefined {
  if (re === undefined || re instanceof RegExp) return re
  try {
    void new RegExp(re)
  } catch (error) {
    throw new UsageError('bad-regex', `--${which} '${re}' is not a valid regular expression: ${(error as Error).message}`)
  }
  return regexMatcher(re, `--${which}`)
}

/**
 * Embeddings and output heads by their usual names in Hugging Face and PyTorch checkpoints:
 * a name part `lm_head`, `embed_out` (GPT-NeoX), `wte`/`wpe` (GPT-2), `shared` (T5's tied
 * embedding), or any part containing `embed` (embed_tokens, word_embeddings,
 * position_embeddings, tok_embeddings, embed_positions, patch_embed).
 */
export function isEmbeddingName(name: string): boolean {
  return name.split('.').some((part) => /^(lm_head|embed_out|wte|wpe|shared)$/.test(part) || /embed/i.test(part))
}

/** Why a tensor is not pruned, or undefined when it is selected. */
export function skipReason(name: string, shape: readonly number[], o: ResolvedOptions): string | undefined {
  if (o.include && !o.include.test(name)) return 'not matched by --include'
  if (o.exclude && o.exclude.test(name)) return 'matched by --exclude'
  if (shape.length === 0) return 'scalar'
  if (shape.length === 1 && !o.include1d) return '1-D tensor (bias or norm); --include-1d prunes it'
  if (!o.includeEmbeddings && isEmbeddingName(name)) return 'embedding or output head; --include-embeddings prunes it'
  if (!targetSparsity(name, o)) return 'matched by no --sparsity-map pattern (and no -s)'
  return undefined
}

/**
 * Prunes one in-memory tensor (tensor scope). Throws UsageError for bad options and
 * InputError for NaN/Inf weights.
 */
export function pruneMagnitude(tensor: DenseTensor, options: PruneOptions): PrunedTensor {
  const o = resolveOptions({...options, scope: 'tensor', minDensity: undefined})
  return pruneOne(prepareTensor(tensor), o)
}

function pruneOne(m: MagnitudeMatrix, o: ResolvedOptions): PrunedTensor {
  const target = targetSparsity(m.name, o)
  if (!target) throw new UsageError('no-target', `tensor ${m.name} matches no --sparsity-map pattern and no -s is given`, 'add a pattern for it (e.g. "*": 0.5) or pass -s')
  const r = pruneCount(m, o.pattern.kind === 'n:m' ? 0 : prunedCount(target.sparsity, m.numel), o)
  if (target?.rule !== undefined) r.report.rule = target.rule
  return r
}

/** Prunes exactly k entries (unstructured), or by the N:M pattern. */
function pruneCount(m: MagnitudeMatrix, k: number, o: ResolvedOptions): PrunedTensor {
  let csr: CsrMatrix
  let pruned: number
  let threshold: number
  if (o.pattern.kind === 'n:m') {
    const r = pruneNM(m, o.pattern)
    csr = r.csr
    pruned = r.pruned
    threshold = keyToMagnitude(r.maxPrunedKey, m.dtype)
  } else {
    const fast = m.dtype === 'f32' ? pruneSampledF32(m, k) : null
    if (fast) {
      csr = fast.csr
      threshold = keyToMagnitude(fast.key, m.dtype)
    } else {
      const cut = selectCut(m, k)
      csr = emitCsr(m, cut.key, cut.ties, m.numel - k).csr
      threshold = k === 0 ? 0 : keyToMagnitude(cut.key, m.dtype)
    }
    pruned = k
  }
  return finish(m, csr, pruned, threshold, o)
}

function finish(m: MagnitudeMatrix, selected: CsrMatrix, pruned: number, threshold: number, o: ResolvedOptions): PrunedTensor {
  const {csr, flushed} = o.dtype ? convertCsrDtype(selected, o.dtype, m.name) : {csr: selected, flushed: 0}
  const out = o.reorder ? reorderRows(csr) : csr
  const report = tensorReport({
    name: m.name,
    shape: m.shape,
    rows: m.rows,
    cols: m.cols,
    dtype: csr.dtype,
    nnz: csr.rowOffsets[csr.rows],
    pruned,
    flushed,
    threshold,
    reordered: o.reorder,
    tiles: csrTileStats(csr),
  })
  return {name: m.name, shape: m.shape, csr: out, report}
}

export interface PruneProgress {
  /** 'prune' for the final pass; 'scan' / 'refine' for the global histogram passes. */
  phase: 'scan' | 'refine' | 'prune'
  name: string
  index: number
  count: number
}

/**
 * Prunes a sequence of tensors, loading one at a time and handing each result to `sink`
 * before the next is loaded, so memory stays bounded by the largest tensor and its CSR.
 * Global scope reads each selected tensor three times (histogram of the high key bits,
 * histogram of the low bits in the cut's bucket, then the pruning pass).
 */
export async function pruneTensors(
  entries: Iterable<TensorEntry> | TensorEntry[],
  options: PruneOptions,
  sink: PrunedSink,
  onProgress?: (p: PruneProgress) => void,
): Promise<PruneReport> {
  const o = resolveOptions(options)
  const all = [...entries]
  const skipped: SkippedTensor[] = []
  const selected: TensorEntry[] = []
  for (const [n, e] of all.entries()) {
    if ((n & 4095) === 4095) await pace()
    const reason = skipReason(e.name, e.shape, o)
    if (reason) skipped.push({name: e.name, shape: [...e.shape], reason})
    else selected.push(e)
  }
  const reports: TensorReport[] = []
  let globalThreshold: number | null = null
  const progress = (phase: PruneProgress['phase'], i: number) =>
    onProgress?.({phase, name: selected[i].name, index: i, count: selected.length})

  if (o.scope === 'global' && o.pattern.kind === 'unstructured') {
    const global = new GlobalCut()
    for (let i = 0; i < selected.length; i++) {
      progress('scan', i)
      await pace()
      await withTensor(selected[i], (t) => global.addHigh(prepareTensor(t)))
    }
    const k = prunedCount(o.sparsity!, global.total)
    if (global.planLow(k)) {
      for (let i = 0; i < selected.length; i++) {
        progress('refine', i)
        await pace()
        await withTensor(selected[i], (t) => global.addLow(prepareTensor(t)))
      }
    }
    const cut = global.finish()
    const floored: string[] = []
    globalThreshold = k === 0 ? 0 : keyToMagnitude(cut.key, 'f32')
    let remainingTies = cut.ties
    for (let i = 0; i < selected.length; i++) {
      progress('prune', i)
      await pace()
      const t = await selected[i].load()
      const m = prepareTensor(t)
      const local = localCut(m, cut, remainingTies)
      let result: PrunedTensor
      if (k === 0) {
        result = finish(m, emitCsr(m, 0, 0, m.numel).csr, 0, globalThreshold, o)
      } else {
        const {below, equal} = countAround(m, local.key)
        const ties = Math.min(equal, local.ties)
        const floor = o.minDensity === undefined ? 0 : Math.ceil(o.minDensity * m.numel)
        if (m.numel - below - ties < floor) {
          // The global cut would leave this tensor below the floor: it keeps exactly `floor`
          // weights, chosen on its own. The ties it would have taken still count as taken,
          // so the other tensors get exactly what they would get without the floor.
          remainingTies -= ties
          result = pruneCount(m, m.numel - floor, o)
          result.report.floored = true
          floored.push(result.report.name)
        } else {
          const emitted = emitCsr(m, local.key, ties, m.numel - below - ties)
          remainingTies -= emitted.tiesUsed
          result = finish(m, emitted.csr, below + emitted.tiesUsed, globalThreshold, o)
        }
      }
      await sink(result, t)
      selected[i].release?.(t)
      reports.push(result.report)
    }
  } else {
    for (let i = 0; i < selected.length; i++) {
      progress('prune', i)
      await pace()
      const result = await withTensor(selected[i], async (t) => {
        const r = pruneOne(prepareTensor(t), o)
        await sink(r, t)
        return r
      })
      reports.push(result.report)
    }
  }
  return {
    scope: o.scope,
    pattern: patternName(o.pattern),
    sparsity: o.sparsity,
    tensors: reports,
    skipped,
    totals: totalsOf(reports, globalThreshold),
    notes: notesFor(reports, skipped, o),
    warnings: [...unusedRuleWarnings(all, o), ...collapseWarnings(reports, o)],
  }
}

/**
 * --sparsity-map rules that give no tensor its target: a pattern that matches no name (a typo
 * lets its tensors fall through to a later pattern such as "*", or to -s), or only names an
 * earlier pattern takes. One warning each.
 */
function unusedRuleWarnings(all: readonly TensorEntry[], o: ResolvedOptions): string[] {
  if (!o.sparsityMap) return []
  const used = new Set<SparsityRule>()
  for (const e of all) {
    const rule = matchRule(o.sparsityMap, e.name)
    if (rule) used.add(rule)
  }
  return o.sparsityMap
    .filter((r) => !used.has(r))
    .map((r) => `--sparsity-map pattern ${JSON.stringify(r.pattern)} gives no tensor its target: it matches no tensor name, or only names an earlier pattern takes (check it against the names 'sparse info' lists)`)
}

/**
 * Layer collapse under global scope: a tensor the one cut prunes away entirely, or nearly
 * (keeping less than a tenth of the model's kept fraction 1 - S), breaks the network (every
 * signal through it is cut). Each gets a warning naming the floor that prevents it.
 */
function collapseWarnings(reports: TensorReport[], o: ResolvedOptions): string[] {
  if (o.scope !== 'global' || o.sparsity === null || reports.length < 2) return []
  const kept = 1 - o.sparsity
  const out: string[] = []
  for (const t of reports) {
    if (t.numel === 0 || t.floored) continue
    const density = t.nnz / t.numel
    if (t.nnz === 0 || density < kept / 10) {
      const how = t.nnz === 0 ? 'prunes it away entirely' : `keeps only ${t.nnz} of its ${t.numel} weights (${(100 * density).toFixed(2)}%, against ${(100 * kept).toFixed(1)}% overall)`
      out.push(`layer collapse in ${t.name}: the global cut ${how}; --min-density ${suggestFloor(kept)} keeps at least ${(100 * suggestFloor(kept)).toFixed(1)}% of every tensor, or --exclude it`)
    }
  }
  return out
}

/** A floor to suggest: a quarter of the kept fraction, rounded to one significant digit. */
function suggestFloor(kept: number): number {
  const x = kept / 4
  const p = Math.pow(10, Math.floor(Math.log10(x)))
  return Math.max(p, Math.floor(x / p) * p)
}

/** In-memory convenience: prune several tensors (any scope) and return them all. */
export async function pruneModel(tensors: DenseTensor[], options: PruneOptions): Promise<{tensors: PrunedTensor[]; report: PruneReport}> {
  const out: PrunedTensor[] = []
  const report = await pruneTensors(
    tensors.map((t) => ({name: t.name, shape: t.shape, dtype: t.dtype, load: () => t})),
    options,
    (p) => {
      out.push(p)
    },
  )
  return {tensors: out, report}
}

function notesFor(reports: TensorReport[], skipped: SkippedTensor[], o: ResolvedOptions): string[] {
  const notes: string[] = []
  for (const t of reports) {
    if (t.overSparse) {
      notes.push(
        `${t.name}: the input already has more zeros than the target; achieved sparsity ${fmt(t.sparsity)} > target ${fmt(t.targetSparsity)} (${t.extraZeros} extra zeros, never stored)`,
      )
    }
  }
  for (const t of reports) {
    if (t.flushedToZero > 0) notes.push(`${t.name}: ${t.flushedToZero} kept weights round to zero in ${t.dtype} and are not stored`)
  }
  if (skipped.length > 0) notes.push(`skipped ${skipped.length} tensor${skipped.length === 1 ? '' : 's'}: ${skipped.map((s) => `${s.name} (${s.reason})`).join(', ')}`)
  if (reports.length === 0) notes.push('no tensor was selected for pruning')
  if (o.scope === 'global' && reports.length > 0) notes.push('global scope: one magnitude threshold across all selected tensors')
  const floored = reports.filter((t) => t.floored)
  if (floored.length > 0) {
    notes.push(`--min-density ${o.minDensity}: ${floored.map((t) => t.name).join(', ')} kept ${floored.length === 1 ? 'its' : 'their'} floor of ceil(${o.minDensity} x numel) weights instead of the global cut, so the total sparsity is below the target`)
  }
  return notes
}

function fmt(x: number): string {
  return x.toFixed(4)
}
