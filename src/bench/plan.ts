/**
 * Stage 1 of a run: the plan. Resolves the options' defaults, refuses bad usage, builds the
 * problems (files, folders, suites), loads the --compare table and checks the tune cache's
 * path, all before the device is touched, so a usage error costs nothing. Nothing here
 * times anything.
 */
import {UsageError} from '../errors.js'
import {forcedSpmmVariant} from '../kernels/variant.js'
import {parsePattern, patternName} from '../pruning/index.js'
import type {ValueDType} from '../types.js'
import {type CompareTable, loadCompare} from './compare.js'
import {denseBaselines} from './metrics.js'
import {attentionSuite, type BenchProblem, dlmcSuite, llmSuite, problemsFromInputs, problemsFromSuite} from './problems.js'
import {DEFAULT_SEED} from './suites.js'
import {checkTuneCache, defaultTuneCachePath} from './tune.js'
import type {BaselineKind, BenchDevice, BenchOp, BenchOptions, ImplName, NativeTimingOptions} from './types.js'

export {DEFAULT_SEED} from './suites.js'

/** N for INPUTs when --n is not given: verify's default, the paper's Transformer size. */
export const DEFAULT_BENCH_N = 256

/** The harness's timing settings when the options leave them out. */
export const TIMING_DEFAULTS = {warmup: 5, minReps: 50, minMs: 200, maxReps: 1000, graphBelowMs: 0.05}

export type PlanTiming = NativeTimingOptions & typeof TIMING_DEFAULTS

/** Everything a run does, decided before it starts. */
export interface BenchPlan {
  /** 'auto' until the run resolves it (resolveDevice: the GPU when usable, else the CPU). */
  device: BenchDevice | 'auto'
  ops: BenchOp[]
  dtypes: ValueDType[]
  baselineKinds: BaselineKind[]
  seed: number
  timing: PlanTiming
  /** The variant SPARSE_SPMM_VARIANT (or the option) forces on every SpMM; undefined for 'auto'. */
  forced: string | undefined
  /** SpMM on CUDA: keep A in a sparse form (options.keepSparse; nothing changes on the CPU). */
  keepSparse: boolean
  /** The report's name of the suite ('dlmc DIR', 'llm', 'llm 2:4', 'attention'), or null. */
  suite: string | null
  problems: BenchProblem[]
  compare: CompareTable | undefined
  /** Cases in all: problems' Ns x ops x dtypes. */
  total: number
}

/** Resolves and checks the options, then lists the problems. Throws UsageError before any device work. */
export async function planBench(options: BenchOptions): Promise<BenchPlan> {
  const device = options.device ?? 'auto'
  const suite = options.suite
  const pattern = parsePattern(options.pattern)
  const nm = pattern.kind === 'n:m'
  if (nm && (suite?.kind === 'dlmc' || suite?.kind === 'attention')) {
    throw new UsageError('pattern-suite', `--pattern ${patternName(pattern)} applies to --suite llm and dense inputs, not to --suite ${suite.kind}`, 'drop --pattern, or use --suite llm')
  }
  // The attention suite is there for issue #5's target: half-precision SDDMM (Q K^T at the mask).
  const ops: BenchOp[] = options.ops ?? (suite?.kind === 'dlmc' ? ['spmm', 'sddmm'] : suite?.kind === 'attention' ? ['sddmm'] : ['spmm'])
  // The llm suite pruned to N:M is there for the half-precision 2:4 kernels (and cuSPARSELt).
  const dtypes: ValueDType[] = options.dtypes ?? (suite?.kind === 'attention' || (suite?.kind === 'llm' && nm) ? ['f16', 'bf16'] : suite ? ['f32', 'f16'] : ['f32'])
  const baselineKinds = options.baselines ?? ['dense', 'cusparse']
  const seed = options.seed ?? DEFAULT_SEED
  const timing = {...TIMING_DEFAULTS, ...options.timing}
  validateNs(options.ns)
  const forced = forcedSpmmVariant(options.forcedVariant)
  if (!options.tune && options.tuneOnly !== undefined) throw new UsageError('tune-only-needs-tune', '--tune-only narrows --tune\'s candidates, but --tune is not given', 'add --tune, or drop --tune-only')
  if (options.tune) {
    if (device === 'cpu') throw new UsageError('tune-cpu', '--tune needs --device cuda: it times the CUDA SpMM kernel variants', 'drop --tune, or run on a GPU with --device cuda')
    if (!ops.includes('spmm')) throw new UsageError('tune-op', '--tune tunes SpMM, but --op has no spmm', 'add spmm to --op, or drop --tune')
    if (options.tuneOnly !== undefined) checkTuneOnly(options.tuneOnly)
    if (forced) throw new UsageError('tune-forced', `SPARSE_SPMM_VARIANT=${forced} forces one SpMM variant, so there is nothing to tune`, 'unset SPARSE_SPMM_VARIANT to tune')
  }

  let problems: BenchProblem[]
  if (suite?.kind === 'dlmc') problems = problemsFromSuite(await dlmcSuite(suite.dir, {batches: options.batches, ns: options.ns}))
  else if (suite?.kind === 'llm') problems = problemsFromSuite(llmSuite({sparsities: options.llmSparsities, ns: options.ns, seed, pattern}))
  else if (suite?.kind === 'attention') problems = problemsFromSuite(attentionSuite({sparsities: options.attentionSparsities, ns: options.ns, seed}))
  else problems = []
  if (options.inputs && options.inputs.length > 0) {
    problems.push(...(await problemsFromInputs(options.inputs, {ns: options.ns ?? [DEFAULT_BENCH_N], sparsity: options.sparsity, pattern, include: options.include, exclude: options.exclude, includeEmbeddings: options.includeEmbeddings})))
  }
  if (problems.length === 0) throw new UsageError('no-inputs', 'nothing to bench: give INPUT files or --suite', 'e.g. sparse bench layer.npz --n 16 or sparse bench --suite dlmc ../shared/dlmc')
  const compare = options.compare ? await loadCompare(options.compare) : undefined
  // The tune cache is read once the GPU is known (and written after --tune): a FIFO, a device
  // or a huge file at its path is refused now, before any device work, not at the end. A path
  // the user named is checked whatever the device; the default one only where it is used.
  if (options.tuneCache !== false && !forced) {
    if (typeof options.tuneCache === 'string') await checkTuneCache(options.tuneCache)
    else if (device === 'cuda') await checkTuneCache(defaultTuneCachePath())
  }

  return {
    device,
    ops,
    dtypes,
    baselineKinds,
    seed,
    timing,
    forced,
    keepSparse: options.keepSparse === true,
    suite: suite ? (suite.kind === 'dlmc' ? `dlmc ${suite.dir}` : suite.kind === 'llm' && nm ? `llm ${patternName(pattern)}` : suite.kind) : null,
    problems,
    compare,
    total: problems.reduce((acc, p) => acc + p.ns.length, 0) * ops.length * dtypes.length,
  }
}

function validateNs(ns: number[] | undefined): void {
  for (const n of ns ?? []) {
    if (!Number.isInteger(n) || n < 1) throw new UsageError('bad-n', `expected positive integers for --n, got ${n}`, 'e.g. --n 16,256')
  }
}

/** The implementations timed for a case: ours first, then the chosen baselines. */
export function implList(op: BenchOp, dtype: ValueDType, device: BenchDevice, kinds: BaselineKind[]): ImplName[] {
  const out: ImplName[] = ['ours']
  if (kinds.includes('dense')) out.push(...denseBaselines(dtype, device))
  if (kinds.includes('cusparse') && device === 'cuda') out.push('cusparse')
  // cuSPARSELt: 2:4 SpMM in f16/bf16 only (the harness explains a matrix that is not 2:4).
  if (kinds.includes('cusparselt') && device === 'cuda' && op === 'spmm' && dtype !== 'f32') out.push('cusparselt')
  return out
}

/** --tune-only's prefixes: at least one, each of the characters of a variant's name. */
function checkTuneOnly(prefixes: string[]): void {
  if (prefixes.length === 0 || prefixes.some((p) => !/^[a-z0-9_]+$/.test(p))) {
    throw new UsageError('bad-tune-only', `--tune-only: expected variant name prefixes (letters, digits, _), got ${JSON.stringify(prefixes.join(','))}`, 'e.g. --tune-only s24g_ or --tune-only und_,ung_')
  }
}
