/**
 * What to bench: matrices from the user's inputs (CSR files, dense files pruned with -s,
 * whole model files: every selected 2-D weight) or from a suite, each with its N values.
 */
import {existsSync} from 'node:fs'

import {UsageError} from '../errors.js'
import {detectFormat, isDenseFormat, openTensorSource, readCsrInput} from '../formats/index.js'
import {expandInputs} from '../formats/inputs.js'
import {impliedSparsity, type PrunePattern, patternName, pruneTensors, type TensorEntry} from '../pruning/index.js'
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
  /** Nominal sparsity (suite level or -s, one of a sweep); the measured one is reported per case. */
  sparsity: number
  ns: number[]
  load(): Promise<CsrMatrix>
}

export interface ProblemOptions {
  /** N values for inputs (required unless a suite gives them). */
  ns?: number[]
  /** -s: the sparsity (or sparsities: a sweep) dense inputs are pruned to. */
  sparsity?: number | number[]
  /** --pattern: dense inputs are pruned to this N:M pattern instead (then -s may be left out). */
  pattern?: PrunePattern
  /** Tensor filter for model files (a RegExp source). */
  include?: string
  exclude?: string
  /** Prune (and bench) embeddings and lm_head of dense models too (skipped by default, as in prune). */
  includeEmbeddings?: boolean
}

/**
 * The problems of the user's INPUT arguments: files, CSR directories, Hugging Face model
 * folders (or their `*.index.json`: one model over all its shards), and folders of these
 * (searched recursively, as `info` and `verify` do).
 */
export async function problemsFromInputs(inputs: string[], opts: ProblemOptions): Promise<BenchProblem[]> {
  const ns = opts.ns ?? []
  if (ns.length === 0) throw new UsageError('no-n', 'bench needs --n for its inputs (the dense operand has N columns)', 'e.g. --n 16,256 or use --suite dlmc DIR')
  for (const input of inputs) {
    if (input !== '-' && !existsSync(input)) throw new UsageError('missing-input', `${input} does not exist`, 'check the path')
  }
  const files = await expandInputs(inputs)
  const out: BenchProblem[] = []
  for (const path of files) out.push(...(await problemsFromFile(path, ns, opts)))
  return out
}

/** --include/--exclude as a RegExp (as the pruner reads them), or undefined. */
function compileFilter(source: string | undefined, which: string): RegExp | undefined {
  if (source === undefined) return undefined
  try {
    return new RegExp(source)
  } catch (error) {
    throw new UsageError('bad-regex', `--${which} '${source}' is not a valid regular expression: ${(error as Error).message}`)
  }
}

async function problemsFromFile(path: string, ns: number[], opts: ProblemOptions): Promise<BenchProblem[]> {
  const format = await detectFormat(path)
  if (!isDenseFormat(format)) {
    const all = await readCsrInput(path)
    const multi = all.length > 1
    // --include/--exclude select the tensors of a CSR folder as they do a dense model's.
    const include = compileFilter(opts.include, 'include')
    const exclude = compileFilter(opts.exclude, 'exclude')
    const named = multi ? all.filter((t) => (!include || include.test(t.name)) && !(exclude && exclude.test(t.name))) : all
    if (named.length === 0) throw new UsageError('no-tensors', `${path}: no tensor matches --include/--exclude (it has ${all.length})`, "check the patterns against the names 'sparse info' lists")
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
  const given = opts.sparsity === undefined ? [] : Array.isArray(opts.sparsity) ? opts.sparsity : [opts.sparsity]
  // An N:M pattern fixes the sparsity (1 - N/M): -s may repeat it (the pruner checks that) but not sweep.
  if (nm && new Set(given).size > 1) {
    throw new UsageError('sweep-pattern-conflict', `-s ${given.join(',')} sweeps sparsities, but --pattern ${patternName(nm)} fixes it at ${impliedSparsity(nm)}`, 'leave out -s with --pattern N:M, or leave out --pattern to sweep')
  }
  const sparsities = nm ? [given[0] ?? impliedSparsity(nm)] : given
  if (sparsities.length === 0) {
    throw new UsageError('no-sparsity', `${path} is dense: bench prunes it first and needs -s (or --pattern N:M)`, 'e.g. -s 0.9 (or -s 0.5,0.7,0.9 to sweep) or --pattern 2:4, or give a CSR file made by `sparse prune`')
  }
  // A .npy is one matrix; any other dense input is a model: its tensors are named and totalled.
  const multi = format !== 'npy'
  const sweep = sparsities.length > 1
  const pruner = new SweepPruner(path, opts)
  // The first level is pruned now (it names the tensors and refuses a model with none); the
  // others when their first case runs, one level in memory at a time.
  const names = await pruner.names(sparsities[0])
  const out: BenchProblem[] = []
  for (const sparsity of sparsities) {
    const at = sweep ? ` @ s=${sparsity}` : ''
    for (const name of names) {
      out.push({
        file: (multi ? `${path}:${name}` : path) + at,
        name: multi ? name : '',
        group: 'input',
        model: multi ? path + at : undefined,
        sparsity,
        ns,
        load: async () => pruner.get(sparsity, name),
      })
    }
  }
  return out
}

/**
 * Magnitude-prunes every selected 2-D weight of a dense input (a file or a sharded model, read
 * shard by shard) to one sparsity at a time, keeping only the latest level's matrices.
 */
class SweepPruner {
  private level: number | undefined
  private pruned = new Map<string, CsrMatrix>()
  constructor(
    private readonly path: string,
    private readonly opts: ProblemOptions,
  ) {}

  async names(sparsity: number): Promise<string[]> {
    await this.prune(sparsity)
    if (this.pruned.size === 0) throw new UsageError('no-tensors', `${this.path}: no 2-D weight to bench (1-D tensors are skipped)`, 'check --include/--exclude')
    return [...this.pruned.keys()]
  }

  async get(sparsity: number, name: string): Promise<CsrMatrix> {
    await this.prune(sparsity)
    const csr = this.pruned.get(name)
    if (!csr) throw new Error(`${this.path}: tensor ${name} was not pruned at sparsity ${sparsity}`)
    return csr
  }

  private async prune(sparsity: number): Promise<void> {
    if (this.level === sparsity) return
    this.pruned = new Map()
    this.level = sparsity
    const src = await openTensorSource(this.path)
    try {
      const entries: TensorEntry[] = src.tensors.map((t) => ({name: t.name, shape: t.shape, dtype: t.dtype, load: () => src.read(t.name)}))
      await pruneTensors(entries, {sparsity, pattern: this.opts.pattern, include: this.opts.include, exclude: this.opts.exclude, includeEmbeddings: this.opts.includeEmbeddings, reorder: true}, (t) => {
        this.pruned.set(t.name, t.csr)
      })
    } finally {
      await src.close()
    }
  }
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
