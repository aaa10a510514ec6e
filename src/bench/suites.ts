/**
 * Benchmark suites.
 *
 * `dlmc`: a DLMC tree at the paper's sizes (../shared/dlmc/SUBSET.md, ANCHORS.md):
 *   Transformer N in {256, 2048}; ResNet-50 N = the layer's output spatial size
 *   (rn50_batchsizes.txt) x each batch size (default 1 and 8), rounded up to a multiple of 8
 *   (so 196 -> 200, 49 -> 56, 1 -> 8), duplicates dropped. These are exactly the n values of
 *   ../shared/anchors/dlmc_dev_h200.jsonl, so `--compare` matches every problem.
 * `llm`: seeded, magnitude-pruned random layers with the shapes of a 7B LLM; with an N:M
 *   pattern (`--pattern 2:4`), the same shapes magnitude-pruned to N:M by the pruner.
 * `attention`: seeded random seq x seq attention masks at head dimensions 64 and 128
 *   (issue #5: fp16/bf16 SDDMM against dense fp16 cuBLAS at 90% sparsity).
 */
import {readdir} from 'node:fs/promises'
import {basename, join, relative, sep} from 'node:path'

import {errorAbout, InputError, SparseError, UsageError} from '../errors.js'
import {readTextFile} from '../formats/byte-source.js'
import {MAX_BATCH_SIZES_BYTES} from '../formats/limits.js'
import {impliedSparsity, parsePattern, patternName, type PrunePattern, pruneMagnitude} from '../pruning/index.js'
import {createRng} from '../sparse/random.js'
import {rowSwizzle} from '../reorder/swizzle.js'
import type {CsrMatrix} from '../types.js'

/** One matrix of a suite and the N values it is benched at. */
export interface SuiteEntry {
  /** The matrix's key: path relative to the suite folder (dlmc) or a synthetic name (llm). */
  file: string
  /** Absolute or cwd-relative path to read it from (dlmc). */
  path?: string
  /** 'rn50', 'transformer', 'llm', 'llm-2:4' (the llm suite pruned to a pattern), 'attention'. */
  group: string
  /** The nominal sparsity (the DLMC folder name, or the llm / attention level). */
  sparsity: number
  ns: number[]
  /** Shape, when known without reading the file (llm, attention). */
  rows?: number
  cols?: number
  /** Builds the matrix (llm, attention); dlmc entries are read from `path`. */
  generate?: () => CsrMatrix
}

/** The seed of every command's random values (verify, convert, reorder and bench agree). */
export const DEFAULT_SEED = 0

export const DLMC_TRANSFORMER_N = [256, 2048] as const
export const DEFAULT_BATCHES = [1, 8] as const

/** Rounds up to a multiple of `m` (the paper rounds N to a multiple of 8). */
export function roundUp(x: number, m = 8): number {
  return Math.ceil(x / m) * m
}

/** Parses rn50_batchsizes.txt: `layer_name,spatial_size` per line. */
export function parseBatchSizes(text: string, label = 'rn50_batchsizes.txt'): Map<string, number> {
  const out = new Map<string, number>()
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = /^([^,\s]+)\s*,\s*(\d+)$/.exec(line)
    if (!m) throw new InputError('bad-batch-sizes', `${label}:${i + 1}: expected "layer,spatial_size", got ${JSON.stringify(line)}`, 'restore the file from the DLMC collection')
    out.set(m[1], Number(m[2]))
  }
  return out
}

/** The N values of one rn50 layer: spatial size x each batch, rounded up to 8, unique, ascending. */
export function rn50Ns(spatial: number, batches: readonly number[]): number[] {
  return [...new Set(batches.map((b) => roundUp(spatial * b, 8)))].sort((a, b) => a - b)
}

async function walkSmtx(dir: string): Promise<string[]> {
  const out: string[] = []
  const entries = await readdir(dir, {withFileTypes: true})
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const e of entries) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await walkSmtx(p)))
    else if (e.name.endsWith('.smtx')) out.push(p)
  }
  return out
}

/**
 * The DLMC suite of a folder laid out like the collection (`rn50/<method>/<sparsity>/*.smtx`,
 * `transformer/<method>/<sparsity>/*.smtx`, `rn50_batchsizes.txt`). `batches` are the
 * ResNet-50 batch sizes; `ns` overrides every N when given.
 */
export async function dlmcSuite(dir: string, opts: {batches?: readonly number[]; ns?: readonly number[]} = {}): Promise<SuiteEntry[]> {
  const batches = opts.batches ?? DEFAULT_BATCHES
  let files: string[]
  try {
    files = await walkSmtx(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UsageError('no-suite-dir', `--suite dlmc: ${dir} is not a folder`, 'pass the DLMC folder, e.g. --suite dlmc ../shared/dlmc')
    throw error
  }
  if (files.length === 0) throw new UsageError('empty-suite', `--suite dlmc: no .smtx files under ${dir}`, 'pass the DLMC folder, e.g. --suite dlmc ../shared/dlmc')
  let sizes: Map<string, number> | undefined
  const entries: SuiteEntry[] = []
  for (const path of files) {
    const file = relative(dir, path).split(sep).join('/')
    const parts = file.split('/')
    const group = parts[0]
    const level = Number(parts.at(-2))
    const sparsity = Number.isFinite(level) && level >= 0 && level < 1 ? level : Number.NaN
    let ns: number[]
    if (opts.ns && opts.ns.length > 0) {
      ns = [...opts.ns]
    } else if (group === 'rn50') {
      if (!sizes) {
        const bsPath = join(dir, 'rn50_batchsizes.txt')
        let text: string
        try {
          text = await readTextFile(bsPath, MAX_BATCH_SIZES_BYTES)
        } catch (error) {
          if (error instanceof SparseError && error.code === 'missing-file') {
            throw new InputError('no-batch-sizes', `--suite dlmc: ${bsPath} is missing (ResNet-50 N comes from it)`, 'restore it from the DLMC collection, or pass --n')
          }
          throw errorAbout(error, '--suite dlmc', 'restore it from the DLMC collection, or pass --n')
        }
        sizes = parseBatchSizes(text, bsPath)
      }
      const layer = basename(path, '.smtx')
      const spatial = sizes.get(layer)
      if (spatial === undefined) throw new InputError('no-batch-size', `--suite dlmc: ${layer} is not in rn50_batchsizes.txt`, 'add its output spatial size there, or pass --n')
      ns = rn50Ns(spatial, batches)
    } else {
      ns = [...DLMC_TRANSFORMER_N]
    }
    entries.push({file, path, group, sparsity, ns})
  }
  return entries
}

export const LLM_SHAPES: ReadonlyArray<readonly [number, number]> = [
  [4096, 4096],
  [11008, 4096],
  [4096, 11008],
]
export const LLM_SPARSITIES = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95] as const
export const LLM_NS = [1, 8, 16, 32, 64, 256, 2048] as const
/** N of the llm suite pruned to an N:M pattern (the 2:4 kernels' range: decode to prefill). */
export const LLM_NM_NS = [1, 8, 16, 32, 64, 256, 1024, 2048] as const

/** Options of the generated suites (llm, attention). */
export interface SyntheticSuiteOptions {
  sparsities?: readonly number[]
  ns?: readonly number[]
  seed?: number
}

/**
 * A generated suite: every shape x sparsity, each at every N, named `group/ROWSxCOLS/s`, its
 * matrix made on demand by `make` from a seed derived from the suite seed and that name.
 */
function syntheticSuite(
  group: string,
  shapes: ReadonlyArray<readonly [number, number]>,
  defaults: {sparsities: readonly number[]; ns: readonly number[]},
  opts: SyntheticSuiteOptions,
  make: (rows: number, cols: number, sparsity: number, seed: string) => CsrMatrix,
): SuiteEntry[] {
  const sparsities = opts.sparsities ?? defaults.sparsities
  const ns = opts.ns && opts.ns.length > 0 ? [...opts.ns] : [...defaults.ns]
  const seed = opts.seed ?? DEFAULT_SEED
  const out: SuiteEntry[] = []
  for (const [rows, cols] of shapes) {
    for (const s of sparsities) {
      const file = `${group}/${rows}x${cols}/${s}`
      out.push({file, group, sparsity: s, ns, rows, cols, generate: () => make(rows, cols, s, `${seed}:${file}`)})
    }
  }
  return out
}

/**
 * The LLM suite: every shape x sparsity, each at every N. Matrices are made on demand.
 * With an N:M `pattern` (e.g. '2:4'): every shape once, magnitude-pruned to the pattern
 * (randomNMPrunedCsr), named `llm/ROWSxCOLS/N:M` in group `llm-N:M`, at LLM_NM_NS (or `ns`);
 * `sparsities` must then be left out (the pattern implies 1 - N/M).
 */
export function llmSuite(opts: SyntheticSuiteOptions & {pattern?: string | PrunePattern} = {}): SuiteEntry[] {
  const pattern = parsePattern(opts.pattern)
  if (pattern.kind === 'unstructured') return syntheticSuite('llm', LLM_SHAPES, {sparsities: LLM_SPARSITIES, ns: LLM_NS}, opts, randomPrunedCsr)
  const name = patternName(pattern)
  if (opts.sparsities && opts.sparsities.length > 0) {
    throw new UsageError('sparsity-pattern-conflict', `--llm-sparsity contradicts --pattern ${name}, which implies sparsity ${impliedSparsity(pattern)}`, 'leave out --llm-sparsity with a pattern')
  }
  const ns = opts.ns && opts.ns.length > 0 ? [...opts.ns] : [...LLM_NM_NS]
  const seed = opts.seed ?? DEFAULT_SEED
  return LLM_SHAPES.map(([rows, cols]) => {
    const file = `llm/${rows}x${cols}/${name}`
    return {file, group: `llm-${name}`, sparsity: impliedSparsity(pattern), ns, rows, cols, generate: () => randomNMPrunedCsr(rows, cols, pattern, `${seed}:${file}`)}
  })
}

/**
 * A random layer magnitude-pruned to an N:M pattern by the pruner itself (pruneMagnitude
 * with the pattern): i.i.d. standard-normal weights, made and pruned a block of rows at a
 * time (N:M is decided inside each row, so blocks prune exactly as the whole matrix would),
 * so memory stays the output plus one block. Rows are stored with Sputnik's row order.
 * Values f32.
 */
export function randomNMPrunedCsr(rows: number, cols: number, pattern: string | PrunePattern, seed: number | string): CsrMatrix {
  const p = parsePattern(pattern)
  if (p.kind !== 'n:m') throw new UsageError('bad-pattern', `randomNMPrunedCsr needs an N:M pattern, got ${patternName(p)}`)
  const rng = createRng(seed)
  const blockRows = Math.max(1, Math.min(rows, Math.floor(2 ** 22 / Math.max(1, cols))))
  const buffer = new Float32Array(blockRows * cols)
  const blocks: CsrMatrix[] = []
  let nnz = 0
  for (let r0 = 0; r0 < rows; r0 += blockRows) {
    const h = Math.min(blockRows, rows - r0)
    const data = rng.fillNormal(buffer.subarray(0, h * cols))
    const {csr} = pruneMagnitude({name: 'llm', shape: [h, cols], dtype: 'f32', data}, {pattern: p, reorder: false})
    blocks.push(csr)
    nnz += csr.rowOffsets[h]
  }
  const rowOffsets = new Int32Array(rows + 1)
  const columnIndices = new Int32Array(nnz)
  const values = new Float32Array(nnz)
  let r = 0
  let q = 0
  for (const b of blocks) {
    for (let i = 1; i <= b.rows; i++) rowOffsets[r + i] = q + b.rowOffsets[i]
    columnIndices.set(b.columnIndices, q)
    values.set(b.values as Float32Array, q)
    r += b.rows
    q += b.rowOffsets[b.rows]
  }
  return {rows, cols, rowOffsets, columnIndices, values, dtype: 'f32', rowIndices: rowSwizzle(rowOffsets, rows)}
}

/**
 * A magnitude-pruned random layer, sampled directly: pruning i.i.d. standard-normal weights
 * to sparsity s keeps the entries with |w| above the (1 - s) two-sided quantile t, so the
 * kept pattern is uniformly random with density 1 - s and the kept values follow the
 * normal's tails beyond t. Sampling that distribution directly (Bernoulli pattern, values by
 * the inverse normal CDF) gives the same matrices in distribution without materialising the
 * dense layer, which keeps the 45M-entry LLM layers fast to make. Rows are stored with
 * Sputnik's row order. Values f32.
 */
export function randomPrunedCsr(rows: number, cols: number, sparsity: number, seed: number | string): CsrMatrix {
  if (!(sparsity >= 0 && sparsity < 1)) throw new UsageError('bad-sparsity', `sparsity must be in [0, 1), got ${sparsity}`)
  const density = 1 - sparsity
  const rng = createRng(seed)
  const threshold = Math.floor(density * 2 ** 32)
  const expected = Math.ceil(rows * cols * density * 1.01 + 64)
  let columnIndices = new Int32Array(expected)
  const rowOffsets = new Int32Array(rows + 1)
  let nnz = 0
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (rng.nextUint32() < threshold) {
        if (nnz === columnIndices.length) {
          const grown = new Int32Array(Math.ceil(columnIndices.length * 1.25) + 1024)
          grown.set(columnIndices)
          columnIndices = grown
        }
        columnIndices[nnz++] = c
      }
    }
    rowOffsets[r + 1] = nnz
  }
  columnIndices = columnIndices.slice(0, nnz)
  const values = new Float32Array(nnz)
  for (let i = 0; i < nnz; i++) {
    // |w| = Phi^-1(1 - density * u / 2) with u in (0, 1]: the tail beyond t.
    const u = (rng.nextFloat() + 2 ** -25) * density
    const mag = -inverseNormalCdf(u / 2)
    values[i] = rng.nextUint32() & 1 ? mag : -mag
  }
  return {rows, cols, rowOffsets, columnIndices, values, dtype: 'f32', rowIndices: rowSwizzle(rowOffsets, rows)}
}

export const ATTENTION_SEQS = [2048, 4096, 8192] as const
export const ATTENTION_SPARSITIES = [0.9] as const
/** Head dimensions: SDDMM's inner dimension (Q K^T), SpMM's N (P V). */
export const ATTENTION_NS = [64, 128] as const

/**
 * The attention suite: a seq x seq mask per sequence length and sparsity, each at every head
 * dimension. SDDMM computes Q K^T at the mask; SpMM multiplies the probabilities by V.
 */
export function attentionSuite(opts: SyntheticSuiteOptions = {}): SuiteEntry[] {
  const shapes = ATTENTION_SEQS.map((seq) => [seq, seq] as const)
  return syntheticSuite('attention', shapes, {sparsities: ATTENTION_SPARSITIES, ns: ATTENTION_NS}, opts, (seq, _cols, s, seed) =>
    randomAttentionMask(seq, s, seed),
  )
}

/**
 * A seq x seq attention mask with exactly round((1 - s) seq) distinct, uniformly random
 * columns per row, ascending. Every row the same length keeps the work per row equal, as
 * fixed-budget sparse attention (top-k, random blocks) does, so the timing measures the
 * kernel and not load balance. Rows are sampled with Floyd's algorithm into a per-row bitmap
 * (k random draws, then one scan in column order: sorted without a sort), which makes the
 * 33M entries of 8192 x 8192 at s = 0.5 in about two seconds. Values are uniform in [0, 1),
 * like attention probabilities. rowIndices holds Sputnik's row order as for the other
 * suites; with equal row lengths it is the identity.
 */
export function randomAttentionMask(seq: number, sparsity: number, seed: number | string): CsrMatrix {
  if (!Number.isInteger(seq) || seq < 1) throw new UsageError('bad-seq', `sequence length must be a positive integer, got ${seq}`)
  if (!(sparsity >= 0 && sparsity < 1)) throw new UsageError('bad-sparsity', `sparsity must be in [0, 1), got ${sparsity}`)
  const k = Math.round((1 - sparsity) * seq)
  const rng = createRng(seed)
  const rowOffsets = new Int32Array(seq + 1)
  const columnIndices = new Int32Array(seq * k)
  const picked = new Uint8Array(seq)
  let nnz = 0
  for (let r = 0; r < seq; r++) {
    // Floyd: for j = seq - k ... seq - 1 take t uniform in [0, j], or j itself if t is taken.
    for (let j = seq - k; j < seq; j++) {
      // NOTE: uint32 * (j + 1) < 2^53 is exact; the bias is below (j + 1) / 2^32.
      const t = Math.floor((rng.nextUint32() * (j + 1)) / 2 ** 32)
      if (picked[t]) picked[j] = 1
      else picked[t] = 1
    }
    for (let c = 0; c < seq; c++) {
      if (picked[c]) {
        columnIndices[nnz++] = c
        picked[c] = 0
      }
    }
    rowOffsets[r + 1] = nnz
  }
  const values = new Float32Array(nnz)
  for (let i = 0; i < nnz; i++) values[i] = rng.nextFloat()
  return {rows: seq, cols: seq, rowOffsets, columnIndices, values, dtype: 'f32', rowIndices: rowSwizzle(rowOffsets, seq)}
}

/**
 * Inverse of the standard normal CDF (Acklam's rational approximation, relative error
 * below 1.2e-9), for p in (0, 1).
 */
export function inverseNormalCdf(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`)
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239]
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1]
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783]
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416]
  const lo = 0.02425
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p))
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
  }
  if (p > 1 - lo) {
    const q = Math.sqrt(-2 * Math.log(1 - p))
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
  }
  const q = p - 0.5
  const r = q * q
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
}
