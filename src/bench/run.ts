/**
 * `sparse bench`'s core: builds the problems, times every case through the native harness
 * (our kernel and the baselines on the same data), and turns samples into the report:
 * statistics, rates, bytes, fractions of the measured ceilings, memory, speedups, advice,
 * per-sparsity and per-model summaries, and the optional --compare columns.
 */
import {DeviceError, UsageError} from '../errors.js'
import {convertValues} from '../sparse/dense-to-csr.js'
import {randomValues} from '../sparse/random.js'
import type {CsrMatrix, ValueDType} from '../types.js'
import {type CompareTable, loadCompare} from './compare.js'
import {
  type BenchOp,
  bytesMoved,
  type CaseShape,
  denseBaselines,
  denseReference,
  flopCount,
  indexBitsFor,
  memoryFigures,
  type MemoryFigures,
  type Recommendation,
  recommend,
} from './metrics.js'
import {getBenchNative} from './native.js'
import type {BenchDevice, BenchNative, ImplName, NativeBenchResult, NativeCeilings, NativeTimingOptions} from './native-types.js'
import {attentionSuite, type BenchProblem, dlmcSuite, llmSuite, problemsFromInputs, problemsFromSuite} from './problems.js'
import {geomean, type SampleSummary, summarize} from './stats.js'
import {summarizeCases, type BenchSummary} from './summary.js'
import {
  candidateTiming,
  defaultTuneCachePath,
  pickFastest,
  readTuneCache,
  saveTuneEntries,
  type TuneCache,
  type TuneCacheEntry,
  tuneKey,
  rowClass,
} from './tune.js'

export type BaselineKind = 'dense' | 'cusparse' | 'cusparselt'

export interface BenchOptions {
  inputs?: string[]
  suite?: {kind: 'dlmc'; dir: string} | {kind: 'llm'} | {kind: 'attention'}
  ops?: BenchOp[]
  dtypes?: ValueDType[]
  /** N values (inputs: required; suites: override the suite's). */
  ns?: number[]
  /** ResNet-50 batch sizes of the dlmc suite (default 1 and 8). */
  batches?: number[]
  baselines?: BaselineKind[]
  device?: BenchDevice
  /** -s for dense inputs. */
  sparsity?: number
  include?: string
  exclude?: string
  /** llm suite sparsity levels (default 0.5 ... 0.95). */
  llmSparsities?: number[]
  /** attention suite sparsity levels (default 0.9). */
  attentionSparsities?: number[]
  timing?: NativeTimingOptions
  compare?: string
  seed?: number
  /**
   * SpMM on CUDA: time every kernel variant of each case (candidate timing, see
   * tune.ts), use the fastest as `ours`, and save the winners to the tune cache.
   */
  tune?: boolean
  /**
   * The tune cache: a file, `false` to neither read nor write one, or undefined for
   * `defaultTuneCachePath()` ($XDG_CACHE_HOME/sparse/tune.json or ~/.cache/sparse/tune.json).
   * Without `tune`, a cached winner whose key matches a CUDA SpMM case is used for it.
   */
  tuneCache?: string | false
  /** minMs of each tuning candidate's timing (default 20). */
  tuneMinMs?: number
  /** The variant SPARSE_SPMM_VARIANT forces on every SpMM (default: read from process.env). */
  forcedVariant?: string
  /** Injected harness (tests); default: the addon's. */
  native?: BenchNative
  onProgress?: (p: BenchProgress) => void
}

export interface BenchProgress {
  done: number
  total: number
  label: string
}

export interface ImplFigures {
  ms: {median: number; p10: number; p90: number}
  samples: number
  detail?: string
  l2Mode?: string
  copies?: number
  graphMsPerLaunch?: number
  spacerUs?: number
  relErr?: number
  checkAgainst?: string
}

/** Where the SpMM kernel variant of a CUDA case came from. */
export type VariantSource = 'tuned' | 'cache' | 'heuristic' | 'forced'

/** The --tune measurement of a case (candidate timing: see tune.ts's candidateTiming). */
export interface TunedFigures {
  /** The fastest variant (then timed again with the full settings as `ours`). */
  variant: string
  ms: number
  /** The built-in selection's pick and its time in the same round. */
  defaultVariant: string
  defaultMs: number
  /** Median ms of every candidate that ran. */
  candidates: Record<string, number>
  /** Candidates that failed, with the error. */
  failed?: Record<string, string>
}

export interface BenchCaseResult {
  status: 'ok'
  file: string
  name: string
  group: string
  /** The model file a layer belongs to (whole-model inputs), for model totals. */
  model?: string
  /** Nominal sparsity level (suite folder, -s), else the measured sparsity. */
  level: number
  op: BenchOp
  dtype: ValueDType
  device: BenchDevice
  /** The weight matrix is m x k; n is the dense operand's width (SDDMM: the inner dimension). */
  m: number
  k: number
  n: number
  nnz: number
  sparsity: number
  indexBits: 16 | 32
  /** Our kernel's time per launch (ms). */
  ms: {median: number; p10: number; p90: number}
  samples: number
  /** Median ms of each available baseline (and --compare peers). */
  baselines: Record<string, number>
  /** Baseline time / our time: above 1, sparse is faster. */
  speedup: Record<string, number>
  /** Baselines that could not run, with the reason. */
  unavailable: Record<string, string>
  /** Details of every implementation timed (ours included). */
  impls: Record<string, ImplFigures>
  /** --compare columns (ms). */
  compare?: Record<string, number>
  /** Effective rate: 2 nnz n / time. */
  tflops: number
  /** Bytes that must move (see metrics.ts) and the rate at which they did. */
  bytes: number
  gbps: number
  fractionOfBandwidth: number | null
  fractionOfCompute: number | null
  memory: MemoryFigures
  memorySaving: number
  recommendation: Recommendation | null
  l2Mode: string
  graphMsPerLaunch?: number
  /** ||ours - dense reference|| / ||reference||. */
  check?: {relErr: number; against: string}
  /** SpMM on CUDA: the kernel variant `ours` ran (when known), and where the choice came from. */
  variant?: string
  variantSource?: VariantSource
  /** With --tune: the candidates' times and the winner. */
  tuned?: TunedFigures
}

export interface FailedCase {
  status: 'failed'
  file: string
  name: string
  group: string
  model?: string
  level: number
  op: BenchOp
  dtype: ValueDType
  device: BenchDevice
  m?: number
  k?: number
  n: number
  nnz?: number
  sparsity: number
  error: string
  code?: string
}

export type BenchCaseRecord = BenchCaseResult | FailedCase

export interface DeviceSummary {
  kind: BenchDevice
  /** 'CUDA' or 'CPU figures' (CPU results are labelled as such everywhere). */
  label: string
  name: string
  smCount: number | null
  computeCapability: string | null
  l2Bytes: number | null
  memoryBytes: number | null
  driver: string | null
  clocks: {maxSmMhz: number | null; smMhzAtStart: number | null; memMhz: number | null; smMhzSeen: {min: number; max: number} | null}
  ceilings: NativeCeilings
  libraries: {cublas: string | null; cusparse: string | null}
}

/** Kernel-variant choice of the run (CUDA only; null on the CPU). */
export interface TuneSummary {
  /** --tune was given. */
  tune: boolean
  /** The cache file read (and, with --tune, written); null when disabled. */
  cache: string | null
  /** SPARSE_SPMM_VARIANT, when it forces a variant. */
  forced: string | null
  /** Entries in the cache file when the run started (not read with --tune). */
  cacheEntries: number
  /** Cases that used a cached winner. */
  hits: number
  /** Cases tuned, of which `changed` picked another variant than the selection. */
  tuned: number
  changed: number
  /** Geometric mean of defaultMs / ms over the tuned cases (candidate timing). */
  geomeanGain: number | null
  /** Entries saved to the cache by this run. */
  saved: number
  /** Cache problems (corrupt file, not writable, ...): the run goes on without it. */
  warnings: string[]
}

export interface BenchReport {
  device: DeviceSummary
  settings: {
    ops: BenchOp[]
    dtypes: ValueDType[]
    baselines: string[]
    timing: Required<Pick<NativeTimingOptions, 'warmup' | 'minReps' | 'minMs' | 'maxReps' | 'graphBelowMs'>>
    suite: string | null
    compare: {path: string; kind: 'anchors' | 'run'; matched: number} | null
    seed: number
  }
  cases: BenchCaseRecord[]
  summary: BenchSummary
  tune: TuneSummary | null
  durationMs: number
}

const TIMING_DEFAULTS = {warmup: 5, minReps: 50, minMs: 200, maxReps: 1000, graphBelowMs: 0.05}

/** Runs the benchmark. Throws UsageError/DeviceError before any case runs; case failures are recorded. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const started = Date.now()
  const device = options.device ?? 'cuda'
  const suite = options.suite
  // The attention suite is there for issue #5's target: half-precision SDDMM (Q K^T at the mask).
  const ops: BenchOp[] = options.ops ?? (suite?.kind === 'dlmc' ? ['spmm', 'sddmm'] : suite?.kind === 'attention' ? ['sddmm'] : ['spmm'])
  const dtypes: ValueDType[] = options.dtypes ?? (suite?.kind === 'attention' ? ['f16', 'bf16'] : suite ? ['f32', 'f16'] : ['f32'])
  const baselineKinds = options.baselines ?? ['dense', 'cusparse']
  const seed = options.seed ?? 42
  const timing = {...TIMING_DEFAULTS, ...options.timing}
  validateNs(options.ns)
  const forcedRaw = options.forcedVariant ?? process.env.SPARSE_SPMM_VARIANT
  const forced = forcedRaw && forcedRaw !== 'auto' ? forcedRaw : undefined
  if (options.tune) {
    if (device !== 'cuda') throw new UsageError('tune-cpu', '--tune needs --device cuda: it times the CUDA SpMM kernel variants', 'drop --tune, or run on a GPU with --device cuda')
    if (!ops.includes('spmm')) throw new UsageError('tune-op', '--tune tunes SpMM, but --op has no spmm', 'add spmm to --op, or drop --tune')
    if (forced) throw new UsageError('tune-forced', `SPARSE_SPMM_VARIANT=${forced} forces one SpMM variant, so there is nothing to tune`, 'unset SPARSE_SPMM_VARIANT to tune')
  }

  // Problems first (usage errors before touching the device).
  let problems: BenchProblem[]
  if (suite?.kind === 'dlmc') problems = problemsFromSuite(await dlmcSuite(suite.dir, {batches: options.batches, ns: options.ns}))
  else if (suite?.kind === 'llm') problems = problemsFromSuite(llmSuite({sparsities: options.llmSparsities, ns: options.ns, seed}))
  else if (suite?.kind === 'attention') problems = problemsFromSuite(attentionSuite({sparsities: options.attentionSparsities, ns: options.ns, seed}))
  else problems = []
  if (options.inputs && options.inputs.length > 0) {
    problems.push(...(await problemsFromInputs(options.inputs, {ns: options.ns, sparsity: options.sparsity, include: options.include, exclude: options.exclude})))
  }
  if (problems.length === 0) throw new UsageError('no-inputs', 'nothing to bench: give INPUT files or --suite', 'e.g. sparse bench layer.npz --n 16 or sparse bench --suite dlmc ../shared/dlmc')
  const compare: CompareTable | undefined = options.compare ? await loadCompare(options.compare) : undefined

  const native = options.native ?? getBenchNative()
  const deviceSummary = await describeDevice(native, device, timing.threads)
  const tuner = device === 'cuda' ? await Tuner.create(options, timing, deviceSummary.name, forced) : undefined

  const total = problems.reduce((acc, p) => acc + p.ns.length, 0) * ops.length * dtypes.length
  let done = 0
  const cases: BenchCaseRecord[] = []
  let matched = 0
  let clockMin = Infinity
  let clockMax = -Infinity
  for (const problem of problems) {
    let csr: CsrMatrix | undefined
    let loadError: unknown
    try {
      csr = await problem.load()
    } catch (error) {
      loadError = error
    }
    for (const dtype of dtypes) {
      const values = csr ? valuesFor(csr, dtype, seed, problem.file) : undefined
      for (const op of ops) {
        for (const n of problem.ns) {
          options.onProgress?.({done, total, label: `${problem.file} ${op} ${dtype} n=${n}`})
          const level = Number.isFinite(problem.sparsity) ? problem.sparsity : csr ? sparsityOf(csr) : Number.NaN
          const base: CaseBase = {file: problem.file, name: problem.name, group: problem.group, ...(problem.model ? {model: problem.model} : {}), level, op, dtype, device, n}
          if (!csr || !values) {
            cases.push({...base, status: 'failed', sparsity: problem.sparsity, error: errorMessage(loadError), code: errorCode(loadError)})
            done++
            continue
          }
          const impls = implList(op, dtype, device, baselineKinds)
          try {
            const args: RunArgs = {op, dtype, device, csr, values, n, impls, timing, seed}
            const label = `${problem.file} ${op} ${dtype} n=${n}`
            const choice = op === 'spmm' && tuner ? await tuner.choose(native, args, (i, count) => options.onProgress?.({done, total, label: `${label} tuning ${i}/${count}`})) : undefined
            const res = await runOne(native, {...args, variant: choice?.pass})
            if (res.smClockMhz) {
              clockMin = Math.min(clockMin, res.smClockMhz.min)
              clockMax = Math.max(clockMax, res.smClockMhz.max)
            }
            const record = buildCase(base, csr, res, deviceSummary.ceilings)
            if (choice && tuner) tuner.record(record, choice, problem.file)
            const hit = compare?.lookup(problem.file, op, dtype, n)
            if (hit) {
              matched++
              addCompare(record, hit.columns, hit.peers)
            }
            cases.push(record)
          } catch (error) {
            if (error instanceof DeviceError) throw error
            const nnz = csr.rowOffsets[csr.rows]
            cases.push({...base, status: 'failed', m: csr.rows, k: csr.cols, nnz, sparsity: sparsityOf(csr), error: errorMessage(error), code: errorCode(error)})
          }
          done++
        }
      }
    }
  }
  options.onProgress?.({done, total, label: 'done'})
  if (clockMin <= clockMax) deviceSummary.clocks.smMhzSeen = {min: clockMin, max: clockMax}

  const tune = tuner ? await tuner.finish() : null
  const baselineNames = [...new Set(dtypes.flatMap((d) => ops.flatMap((op) => implList(op, d, device, baselineKinds).filter((i) => i !== 'ours'))))]
  return {
    device: deviceSummary,
    settings: {
      ops,
      dtypes,
      baselines: baselineNames,
      timing: {warmup: timing.warmup, minReps: timing.minReps, minMs: timing.minMs, maxReps: timing.maxReps, graphBelowMs: timing.graphBelowMs},
      suite: suite ? (suite.kind === 'dlmc' ? `dlmc ${suite.dir}` : suite.kind) : null,
      compare: compare ? {path: compare.path, kind: compare.kind, matched} : null,
      seed,
    },
    cases,
    summary: summarizeCases(cases),
    tune,
    durationMs: Date.now() - started,
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

function sparsityOf(csr: CsrMatrix): number {
  const total = csr.rows * csr.cols
  return total === 0 ? 0 : 1 - csr.rowOffsets[csr.rows] / total
}

/** The matrix's values in the case's dtype; pattern-only matrices get seeded normals. */
function valuesFor(csr: CsrMatrix, dtype: ValueDType, seed: number, file: string): Float32Array | Uint16Array {
  const nnz = csr.rowOffsets[csr.rows]
  if (csr.values === null) return randomValues(nnz, dtype, `${seed}:${file}`)
  if (csr.dtype === dtype) return csr.values
  return convertValues(csr.values, csr.dtype, dtype) as Float32Array | Uint16Array
}

interface RunArgs {
  op: BenchOp
  dtype: ValueDType
  device: BenchDevice
  csr: CsrMatrix
  values: Float32Array | Uint16Array
  n: number
  impls: ImplName[]
  timing: NativeTimingOptions
  seed: number
  /** SpMM on CUDA: our kernel's variant (absent: the kernel's choice). */
  variant?: string
}

async function runOne(native: BenchNative, a: RunArgs): Promise<NativeBenchResult & {indexBits: 16 | 32}> {
  const {csr} = a
  const indexBits = indexBitsFor(a.op, a.dtype, csr.cols)
  const common = {
    device: a.device,
    dtype: a.dtype,
    indexBits,
    impls: a.impls,
    options: {...a.timing, seed: a.seed},
  }
  const csrArg = {
    rows: csr.rows,
    cols: csr.cols,
    rowOffsets: csr.rowOffsets,
    columnIndices: csr.columnIndices,
    values: a.values,
    rowIndices: csr.rowIndices,
  }
  // SpMM: A (m x k) times B (k x n). SDDMM: the m x k pattern is the mask, n the inner
  // dimension: the harness's (m, k = inner, n = mask columns).
  const res =
    a.op === 'spmm'
      ? await native.benchSpmm({...common, m: csr.rows, k: csr.cols, n: a.n, csr: csrArg, ...(a.variant ? {variant: a.variant} : {})})
      : await native.benchSddmm({...common, m: csr.rows, k: a.n, n: csr.cols, csr: csrArg})
  return {...res, indexBits}
}

function figures(samples: Float64Array | undefined): SampleSummary {
  return summarize(samples ?? new Float64Array(0))
}

type CaseBase = Pick<BenchCaseResult, 'file' | 'name' | 'group' | 'model' | 'level' | 'op' | 'dtype' | 'device' | 'n'>

function buildCase(
  base: CaseBase,
  csr: CsrMatrix,
  res: NativeBenchResult & {indexBits: 16 | 32},
  ceilings: NativeCeilings,
): BenchCaseResult {
  const nnz = csr.rowOffsets[csr.rows]
  const ours = res.impls.find((i) => i.name === 'ours')
  if (!ours || !ours.available) throw new Error(ours?.reason ?? 'our kernel did not run')
  const impls: Record<string, ImplFigures> = {}
  const baselines: Record<string, number> = {}
  const unavailable: Record<string, string> = {}
  for (const r of res.impls) {
    if (!r.available) {
      unavailable[r.name] = r.reason ?? 'unavailable'
      continue
    }
    const s = figures(r.samples)
    impls[r.name] = {
      ms: {median: s.median, p10: s.p10, p90: s.p90},
      samples: s.count,
      detail: r.detail,
      l2Mode: r.l2Mode,
      copies: r.copies,
      ...(r.graphMsPerLaunch !== undefined ? {graphMsPerLaunch: r.graphMsPerLaunch} : {}),
      ...(r.spacerUs !== undefined ? {spacerUs: r.spacerUs} : {}),
      ...(r.relErr !== undefined ? {relErr: r.relErr, checkAgainst: r.checkAgainst} : {}),
    }
    if (r.name !== 'ours') baselines[r.name] = s.median
  }
  const o = impls.ours
  const speedup: Record<string, number> = {}
  for (const [name, ms] of Object.entries(baselines)) speedup[name] = ms / o.ms.median
  const shape: CaseShape = {op: base.op, dtype: base.dtype, m: csr.rows, k: csr.cols, n: base.n, nnz, indexBits: res.indexBits}
  const seconds = o.ms.median * 1e-3
  const tflops = flopCount(shape) / seconds / 1e12
  const bytes = bytesMoved(shape)
  const gbps = bytes / seconds / 1e9
  const peak = base.dtype === 'f32' ? ceilings.f32Tflops : base.dtype === 'f16' ? ceilings.f16Tflops : ceilings.bf16Tflops
  const memory = memoryFigures(csr.rows, csr.cols, nnz, base.dtype)
  const record: BenchCaseResult = {
    status: 'ok',
    ...base,
    m: csr.rows,
    k: csr.cols,
    nnz,
    sparsity: sparsityOf(csr),
    indexBits: res.indexBits,
    ms: o.ms,
    samples: o.samples,
    baselines,
    speedup,
    unavailable,
    impls,
    tflops,
    bytes,
    gbps,
    fractionOfBandwidth: ceilings.copyGBps > 0 ? gbps / ceilings.copyGBps : null,
    fractionOfCompute: peak && peak > 0 ? tflops / peak : null,
    memory,
    memorySaving: memory.saving,
    recommendation: recommend(o.ms.median, baselines, denseReference(base.dtype, base.device)),
    l2Mode: o.l2Mode ?? 'n/a',
  }
  if (o.graphMsPerLaunch !== undefined) record.graphMsPerLaunch = o.graphMsPerLaunch
  if (o.relErr !== undefined) record.check = {relErr: o.relErr, against: o.checkAgainst ?? ''}
  return record
}

function addCompare(record: BenchCaseResult, columns: Record<string, number>, peers: string[]): void {
  record.compare = {...columns}
  for (const p of peers) {
    const ms = columns[p]
    if (ms > 0) {
      record.baselines[p] = ms
      record.speedup[p] = ms / record.ms.median
    }
  }
}

// ---------------------------------------------------------------------------------------
// Kernel-variant choice for CUDA SpMM cases: forced (SPARSE_SPMM_VARIANT), tuned (--tune),
// a cached winner, or the kernel's built-in selection ('heuristic').

interface VariantChoice {
  /** The variant passed to the harness (absent: the kernel chooses). */
  pass?: string
  /** The variant that runs, when known. */
  name?: string
  source: VariantSource
  tuned?: TunedFigures
  key: string
}

class Tuner {
  private readonly warnings: string[] = []
  private readonly fresh: Record<string, TuneCacheEntry> = {}
  private hits = 0
  private tunedCases: TunedFigures[] = []
  private noVariantsWarned = false

  private constructor(
    private readonly options: BenchOptions,
    private readonly timing: NativeTimingOptions,
    private readonly gpu: string,
    private readonly forced: string | undefined,
    private readonly path: string | null,
    private readonly cache: TuneCache | undefined,
    warning: string | undefined,
  ) {
    if (warning) this.warnings.push(warning)
  }

  /** Reads the cache (unless --tune, a forced variant, or the cache is off). */
  static async create(options: BenchOptions, timing: NativeTimingOptions, gpu: string, forced: string | undefined): Promise<Tuner> {
    const path = options.tuneCache === false ? null : (options.tuneCache ?? defaultTuneCachePath())
    if (!path || options.tune || forced) return new Tuner(options, timing, gpu, forced, path, undefined, undefined)
    const {cache, warning} = await readTuneCache(path)
    return new Tuner(options, timing, gpu, forced, path, cache, warning)
  }

  async choose(native: BenchNative, a: RunArgs, progress: (i: number, count: number) => void): Promise<VariantChoice> {
    const {csr} = a
    const nnz = csr.rowOffsets[csr.rows]
    const indexBits = indexBitsFor(a.op, a.dtype, csr.cols)
    const shape = {m: csr.rows, k: csr.cols, n: a.n, nnz, dtype: a.dtype, indexBits}
    const key = tuneKey({gpu: this.gpu, ...shape})
    const list = native.spmmVariants ? native.spmmVariants(shape) : {selected: '', variants: []}
    const selected = list.selected || undefined
    if (this.forced) {
      // The kernel runs the forced variant where it can, else its selection (record() checks
      // the kernel name the harness reports, for names outside the list).
      const runs = list.variants.includes(this.forced)
      return {name: runs ? this.forced : selected, source: runs ? 'forced' : 'heuristic', key}
    }
    if (this.options.tune) {
      const names = [...list.variants]
      if (selected && !names.includes(selected)) names.unshift(selected)
      if (names.length === 0) {
        if (!this.noVariantsWarned) this.warnings.push('cannot tune: the addon lists no SpMM variants (rebuild it: npx node-gyp rebuild)')
        this.noVariantsWarned = true
        return {name: selected, source: 'heuristic', key}
      }
      const cand = candidateTiming(this.timing, this.options.tuneMinMs)
      const candidates: Record<string, number> = {}
      const failed: Record<string, string> = {}
      for (const [i, name] of names.entries()) {
        progress(i + 1, names.length)
        try {
          const res = await runOne(native, {...a, impls: ['ours'], timing: cand, variant: name})
          const ours = res.impls.find((r) => r.name === 'ours')
          if (!ours?.available) throw new Error(ours?.reason ?? 'did not run')
          candidates[name] = summarize(ours.samples ?? new Float64Array(0)).median
        } catch (error) {
          if (error instanceof DeviceError) throw error
          failed[name] = errorMessage(error)
        }
      }
      const defaultVariant = selected ?? names[0]
      const best = pickFastest(candidates, defaultVariant)
      if (!best) return {name: selected, source: 'heuristic', key}
      const tuned: TunedFigures = {variant: best.variant, ms: best.ms, defaultVariant, defaultMs: candidates[defaultVariant] ?? Number.NaN, candidates}
      if (Object.keys(failed).length > 0) tuned.failed = failed
      return {pass: best.variant, name: best.variant, source: 'tuned', tuned, key}
    }
    const hit = this.cache?.entries[key]
    if (hit && list.variants.includes(hit.variant)) {
      this.hits++
      return {pass: hit.variant, name: hit.variant, source: 'cache', key}
    }
    return {name: selected, source: 'heuristic', key}
  }

  /** Notes the choice in the case; keeps a tuned winner for the cache (when its output checked out). */
  record(record: BenchCaseResult, choice: VariantChoice, file: string): void {
    if (this.forced && record.impls.ours?.detail?.includes(`_${this.forced},`)) choice = {...choice, name: this.forced, source: 'forced'}
    if (choice.name) record.variant = choice.name
    record.variantSource = choice.source
    if (!choice.tuned) return
    record.tuned = choice.tuned
    this.tunedCases.push(choice.tuned)
    const limit = record.dtype === 'f32' ? 1e-3 : 5e-2
    if (record.check && !(record.check.relErr <= limit)) {
      this.warnings.push(`not caching ${choice.tuned.variant} for ${file} n=${record.n} ${record.dtype}: its output differs from ${record.check.against} (relErr ${record.check.relErr.toExponential(2)})`)
      return
    }
    const t = choice.tuned
    this.fresh[choice.key] = {
      variant: t.variant,
      ms: t.ms,
      defaultVariant: t.defaultVariant,
      defaultMs: t.defaultMs,
      gpu: this.gpu,
      dtype: record.dtype,
      indexBits: record.indexBits,
      m: record.m,
      k: record.k,
      n: record.n,
      nnz: record.nnz,
      rowClass: rowClass(record.m, record.nnz),
      file,
      tunedAt: new Date().toISOString(),
    }
  }

  /** Saves the winners (--tune) and returns the run's summary. */
  async finish(): Promise<TuneSummary> {
    let saved = 0
    if (this.options.tune && this.path && Object.keys(this.fresh).length > 0) {
      try {
        const r = await saveTuneEntries(this.path, this.fresh)
        if (r.warning) this.warnings.push(`${r.warning}; it was replaced`)
        saved = Object.keys(this.fresh).length
      } catch (error) {
        this.warnings.push(`could not save the tune cache ${this.path}: ${errorMessage(error)}`)
      }
    }
    const gains = this.tunedCases.filter((t) => t.defaultMs > 0 && t.ms > 0).map((t) => t.defaultMs / t.ms)
    return {
      tune: this.options.tune ?? false,
      cache: this.path,
      forced: this.forced ?? null,
      cacheEntries: this.cache ? Object.keys(this.cache.entries).length : 0,
      hits: this.hits,
      tuned: this.tunedCases.length,
      changed: this.tunedCases.filter((t) => t.variant !== t.defaultVariant).length,
      geomeanGain: gains.length > 0 ? geomean(gains) : null,
      saved,
      warnings: this.warnings,
    }
  }
}

async function describeDevice(native: BenchNative, device: BenchDevice, threads: number | undefined): Promise<DeviceSummary> {
  if (device === 'cpu') {
    const ceilings = await native.benchCeilings('cpu', threads ?? 0)
    const {cpus} = await import('node:os')
    const list = cpus()
    return {
      kind: 'cpu',
      label: 'CPU figures',
      name: `${list[0]?.model?.trim() ?? 'CPU'} (${list.length} threads)`,
      smCount: null,
      computeCapability: null,
      l2Bytes: null,
      memoryBytes: null,
      driver: null,
      clocks: {maxSmMhz: null, smMhzAtStart: null, memMhz: null, smMhzSeen: null},
      ceilings,
      libraries: {cublas: null, cusparse: null},
    }
  }
  if (!native.benchCudaBuilt) {
    throw new DeviceError('cuda-not-built', 'CUDA not built: this addon was compiled without the CUDA toolkit', 'use --device cpu, or rebuild on a machine with nvcc: npx node-gyp rebuild')
  }
  const info = native.benchDeviceInfo()
  if (!info.available) {
    throw new DeviceError('no-gpu', `no usable GPU (${info.reason})`, 'run on a machine with an NVIDIA GPU and driver, or use --device cpu')
  }
  const ceilings = await native.benchCeilings('cuda').catch((error: unknown) => {
    throw new DeviceError('ceilings-failed', `measuring the device's ceilings failed: ${errorMessage(error)}`, 'check the GPU with nvidia-smi')
  })
  return {
    kind: 'cuda',
    label: 'CUDA',
    name: info.name,
    smCount: info.smCount,
    computeCapability: info.computeCapability,
    l2Bytes: info.l2Bytes,
    memoryBytes: info.memoryBytes,
    driver: info.driver,
    clocks: {maxSmMhz: info.maxSmClockMhz, smMhzAtStart: info.smClockMhz, memMhz: info.memClockMhz, smMhzSeen: null},
    ceilings,
    libraries: {cublas: info.cublas, cusparse: info.cusparse},
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0]
  return String(error)
}

function errorCode(error: unknown): string | undefined {
  const code = (error as {code?: unknown} | undefined)?.code
  return typeof code === 'string' ? code : undefined
}
