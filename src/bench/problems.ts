/**
 * What to bench: matrices from the user's inputs (CSR files, dense files pruned with -s,
 * whole model files: every selected 2-D weight) or from a suite, each with its N values.
 */
import {readdir, stat} from 'node:fs/promises'
import {extname, join} from 'node:path'

import {UsageError} from '../errors.js'
import {detectFormat, isDenseFormat, openTensorSource, readCsrInput} from '../formats/index.js'
import {impliedSparsity, type PrunePattern, pruneTensors, type TensorEntry} from '../pruning/index.js'
import {rowSwizzle} from '../reorder/swizzle.js'
import type {CsrMatrix} from '../types.js'
import {attentionSuite, dlmcSuite, llmSuite, type SuiteEntry} from './suites.js'

/** One matrix to bench. `load()` may be called once; the matrix is dropped after its cases. */
export interface BenchProblem {
  /** Key shown and matched by --compare: the path relative to the suite folder, or the input path (+ `:tensor` for multi-tensor files). */
  file: string
  /** Tensor name ('' for single-matrix files). */
  name: string
  /** 'rn50', 'transformer', 'llm', 'llm-2:4', 'attention', or 'input'. */
  group: string
  /** The model file it belongs to, for model totals (whole-model inputs only). */
  model?: string
  /** Nominal sparsity (suite level or -s); the measured one is reported per case. */
  sparsity: number
  ns: number[]
  load(): Promise<CsrMatrix>
}

export interface ProblemOptions {
  /** N values for inputs (required unless a suite gives them). */
  ns?: number[]
  /** -s: sparsity for dense inputs. */
  sparsity?: number
  /** --pattern: dense inputs are pruned to this N:M pattern instead (then -s may be left out). */
  pattern?: PrunePattern
  /** Tensor filter for model files (a RegExp source). */
  include?: string
  exclude?: string
}

const INPUT_EXTS = new Set(['.smtx', '.npz', '.npy', '.safetensors'])

/** Files under `dir` that bench can read (recursive, sorted); a CSR directory counts as one input. */
async function findInputs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, {withFileTypes: true})
  if (entries.some((e) => e.isFile() && e.name === 'manifest.json')) return [dir]
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const out: string[] = []
  for (const e of entries) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await findInputs(p)))
    else if (INPUT_EXTS.has(extname(e.name).toLowerCase())) out.push(p)
  }
  return out
}

/** The problems of the user's INPUT arguments (files or folders). */
export async function problemsFromInputs(inputs: string[], opts: ProblemOptions): Promise<BenchProblem[]> {
  const ns = opts.ns ?? []
  if (ns.length === 0) throw new UsageError('no-n', 'bench needs --n for its inputs (the dense operand has N columns)', 'e.g. --n 16,256 or use --suite dlmc DIR')
  const files: string[] = []
  for (const input of inputs) {
    let isDir = false
    try {
      isDir = (await stat(input)).isDirectory()
    } catch {
      throw new UsageError('missing-input', `${input} does not exist`, 'check the path')
    }
    if (isDir) {
      const found = await findInputs(input)
      if (found.length === 0) throw new UsageError('empty-input-dir', `no .smtx, .npz, .npy or .safetensors files under ${input}`, 'pass files or a folder holding them')
      files.push(...found)
    } else files.push(input)
  }
  const out: BenchProblem[] = []
  for (const path of files) out.push(...(await problemsFromFile(path, ns, opts)))
  return out
}

async function problemsFromFile(path: string, ns: number[], opts: ProblemOptions): Promise<BenchProblem[]> {
  const format = await detectFormat(path)
  if (!isDenseFormat(format)) {
    const named = await readCsrInput(path)
    const multi = named.length > 1
    return named.map((t) => {
      const csr = t.csr
      const nnz = csr.rowOffsets[csr.rows]
      return {
        file: multi ? `${path}:${t.name}` : path,
        name: multi ? t.name : '',
        group: 'input',
        model: multi ? path : undefined,
        sparsity: csr.rows * csr.cols === 0 ? 0 : 1 - nnz / (csr.rows * csr.cols),
        ns,
        load: async () => csr,
      }
    })
  }
  const nm = opts.pattern?.kind === 'n:m' ? opts.pattern : undefined
  if (opts.sparsity === undefined && !nm) {
    throw new UsageError('no-sparsity', `${path} is dense: bench prunes it first and needs -s (or --pattern N:M)`, 'e.g. -s 0.9 or --pattern 2:4, or give a CSR file made by `sparse prune`')
  }
  const sparsity = opts.sparsity ?? impliedSparsity(nm!)
  // Every selected 2-D (or higher, viewed as 2-D) weight, magnitude-pruned to -s, one at a time.
  const src = await openTensorSource(path)
  // A .npy is one matrix; an .npz/.safetensors is a model: its tensors are named and totalled.
  const multi = format !== 'npy'
  const entries: TensorEntry[] = src.tensors.map((t) => ({name: t.name, shape: t.shape, dtype: t.dtype, load: () => src.read(t.name)}))
  const out: BenchProblem[] = []
  try {
    const pruned: {name: string; csr: CsrMatrix}[] = []
    await pruneTensors(entries, {sparsity: opts.sparsity, pattern: opts.pattern, include: opts.include, exclude: opts.exclude, reorder: true}, (t) => {
      pruned.push({name: t.name, csr: t.csr})
    })
    for (const t of pruned) {
      out.push({
        file: multi ? `${path}:${t.name}` : path,
        name: multi ? t.name : '',
        group: 'input',
        model: multi ? path : undefined,
        sparsity,
        ns,
        load: async () => t.csr,
      })
    }
  } finally {
    await src.close()
  }
  if (out.length === 0) throw new UsageError('no-tensors', `${path}: no 2-D weight to bench (1-D tensors are skipped)`, 'check --include/--exclude')
  return out
}

/** The problems of a suite entry list (matrices read or generated on demand). */
export function problemsFromSuite(entries: SuiteEntry[]): BenchProblem[] {
  return entries.map((e) => ({
    file: e.file,
    name: '',
    group: e.group,
    sparsity: e.sparsity,
    ns: e.ns,
    load: async () => {
      if (e.generate) return e.generate()
      const [named] = await readCsrInput(e.path!)
      const csr = named.csr
      // DLMC rows are benched in Sputnik's order (row lengths descending), as the anchors were.
      return csr.rowIndices ? csr : {...csr, rowIndices: rowSwizzle(csr.rowOffsets, csr.rows)}
    },
  }))
}

export {attentionSuite, dlmcSuite, llmSuite}
