/**
 * The types of the benchmark library, in one module that imports nothing else from
 * src/bench/, so every stage (plan, device, case, report) and every writer can depend on
 * them without depending on each other:
 * - the native harness's surface (native/binding/bench_binding.cc as the addon exports it;
 *   the addon is loaded only by src/kernels/binding.ts, and native.ts casts it to BenchNative),
 * - the options of a run, and the report it produces (case records, device, tune, summary).
 */
import type {SpmmShape, SpmmVariantList} from '../kernels/binding.js'
import type {PdlMode, SpmmForm, SpmmVariantSource} from '../kernels/variant.js'
import type {ValueDType} from '../types.js'

// ---------------------------------------------------------------------------------------
// The native harness

export type BenchDevice = 'cuda' | 'cpu'

/**
 * Implementations the harness can time. CUDA: our kernels, dense cuBLAS (fp32 on CUDA cores,
 * TF32, fp16/bf16 on tensor cores with fp32 accumulation) and cuSPARSE CSR. CPU: our CPU
 * kernels and a dense fp32 product (a CPU BLAS when installed, else our blocked GEMM).
 */
export type ImplName = 'ours' | 'cublas_f32' | 'cublas_tf32' | 'cublas_f16' | 'cublas_bf16' | 'cusparse' | 'cusparselt' | 'cpu_dense_f32'

export interface NativeTimingOptions {
  /** Untimed launches first (default 5). */
  warmup?: number
  /** At least this many timed launches (default 50)... */
  minReps?: number
  /** ...and more until the samples add up to this many ms (default 200)... */
  minMs?: number
  /** ...but at most this many (default 1000). */
  maxReps?: number
  /** Time a CUDA graph of `graphLaunches` launches when the median is below this (ms, default 0.05). */
  graphBelowMs?: number
  graphLaunches?: number
  /** Compare each output with the dense reference (default true). */
  check?: boolean
  /** CPU threads (0 = all cores). */
  threads?: number
  seed?: number
}

/**
 * One case. SpMM: C[m x n] = A[m x k] B[k x n] with A = csr (m x k).
 * SDDMM: out = (L[m x k] R[n x k]^T) at the nonzeros of csr (m x n); here k is the inner
 * dimension.
 */
export interface NativeBenchArgs {
  device: BenchDevice
  dtype: ValueDType
  m: number
  k: number
  n: number
  /** Our SpMM's column-index width (16 needs cols <= 32768). Baselines use int32. */
  indexBits?: 16 | 32
  csr: {
    rows: number
    cols: number
    rowOffsets: Int32Array
    columnIndices: Int32Array
    /** Float32Array for f32, Uint16Array bit patterns for f16/bf16; omitted = random normals. */
    values?: Float32Array | Uint16Array
    rowIndices?: Int32Array
  }
  impls: ImplName[]
  options?: NativeTimingOptions
  /**
   * SpMM on CUDA: our kernel's variant (a name from `spmmVariants`, launched through
   * CudaSpmmVariant); absent or 'auto': the kernel's own selection (or SPARSE_SPMM_VARIANT).
   * A variant that cannot run the problem fails `ours` (and so the case).
   */
  variant?: string
}

export interface NativeImplResult {
  name: ImplName
  available: boolean
  /** Why it is unavailable (library missing, unsupported dtype, its error). */
  reason?: string
  /** How it was called (algorithm, compute type, index width). */
  detail?: string
  /** 'rotate' (copies of the operands rotated), 'flush' (L2 flushed before each launch), 'none' (operands >= 2 x L2), 'n/a' (CPU). */
  l2Mode?: 'rotate' | 'flush' | 'none' | 'n/a'
  copies?: number
  /** Per-launch times in ms (CUDA events; CPU: steady clock). */
  samples?: Float64Array
  /** Time per launch inside a CUDA graph of many launches (tiny problems only). */
  graphMsPerLaunch?: number
  /** GPU-side spacer before each timed launch, so the host never starves the stream (us). */
  spacerUs?: number
  /** ||out - ref|| / ||ref|| against `checkAgainst`'s output. */
  relErr?: number
  checkAgainst?: string
}

export interface NativeBenchResult {
  impls: NativeImplResult[]
  l2Bytes: number
  /** SM clock seen (NVML) while the launches ran; null when NVML is absent or on the CPU. */
  smClockMhz: {min: number; max: number} | null
}

export interface NativeCeilings {
  /** Device-to-device (CPU: memcpy) copy bandwidth, bytes read + written, GB/s. */
  copyGBps: number
  /** Dense GEMM rates at gemmSize^3, TFLOP/s; null when unavailable. */
  f32Tflops: number | null
  tf32Tflops: number | null
  f16Tflops: number | null
  bf16Tflops: number | null
  gemmSize: number
  note?: string
}

export type NativeDeviceInfo =
  | {available: false; reason: string}
  | {
      available: true
      name: string
      smCount: number
      computeCapability: string
      l2Bytes: number
      memoryBytes: number
      maxSmClockMhz: number | null
      maxMemClockMhz: number | null
      smClockMhz: number | null
      memClockMhz: number | null
      driver: string
      /** The loaded soname, or 'unavailable: why'. */
      cublas: string
      cusparse: string
    }

/** Errors from the harness carry the CUDA error name (or 'cudaNotBuilt') in `code`. */
export interface NativeBenchError extends Error {
  code?: string
}

/** The SpMM variants of a shape (the kernels' `spmmVariants`; see src/kernels/binding.ts). */
export type BenchVariantList = SpmmVariantList

/** What `spmmVariants` is asked: the shape, and the matrix, whose structure the plan checks. */
export type BenchVariantQuery = Omit<SpmmShape, 'structure'> & Required<Pick<SpmmShape, 'rowOffsets' | 'columnIndices' | 'values'>>

export interface BenchNative {
  benchCudaBuilt: boolean
  /** The kernels' SpMM variant list (the addon's `spmmVariants`); absent in older addons. */
  spmmVariants?(query: BenchVariantQuery): BenchVariantList
  benchDeviceInfo(): NativeDeviceInfo
  benchCeilings(device: BenchDevice, threads?: number): Promise<NativeCeilings>
  benchSpmm(args: NativeBenchArgs): Promise<NativeBenchResult>
  benchSddmm(args: NativeBenchArgs): Promise<NativeBenchResult>
}

// ---------------------------------------------------------------------------------------
// Cases and their figures (see metrics.ts)

export type BenchOp = 'spmm' | 'sddmm'

export interface CaseShape {
  op: BenchOp
  dtype: ValueDType
  m: number
  k: number
  n: number
  nnz: number
  /** Column-index width of our encoding (16 for f16/bf16 when k allows). */
  indexBits: 16 | 32
}

/**
 * Memory of the weight matrix. As everywhere (src/sparse/memory.ts), a saving is the dense
 * matrix in the same value dtype over the form's bytes.
 */
export interface MemoryFigures {
  /** The weight matrix dense, in the case's dtype. */
  denseBytes: number
  /** Its CSR (values + indices + row offsets + row order) in the case's encoding. */
  csrBytes: number
  /** denseBytes / csrBytes. */
  saving: number
  /** f16/bf16 cases: the bitmap tensor-core form; null for f32 (the form holds 16-bit values). */
  bitmapBytes: number | null
  /** f16/bf16 cases of a 2:4 matrix: the 2:4 form; else null. */
  twoFourBytes: number | null
  /** f16/bf16 cases: the tensor-core kernel's CSR tiles (tc_*); null for f32, like bitmapBytes. */
  tcBytes: number | null
  /** denseBytes / bitmapBytes, denseBytes / twoFourBytes and denseBytes / tcBytes (null where the form is). */
  bitmapSaving: number | null
  twoFourSaving: number | null
  tcSaving: number | null
  /**
   * f16/bf16 cases: the Hopper unstructured kernel's bitmap stream (ube_*) at 128-row blocks
   * (w8, N <= 32) and 64-row ones (w4, N 33-64); absent for f32 or without tile statistics.
   */
  bitmapStreamBytes?: {w8: number; w4: number}
  /** f16/bf16 cases: its pair stream (ube_p8, 128-row blocks); absent for f32 or without tile statistics. */
  pairStreamBytes?: number
  /**
   * f16/bf16 cases: the same pair stream in the GEMM engine's cut (ung_*: 128-row blocks,
   * 64-column stages); absent for f32 or without tile statistics.
   */
  pairStreamGemmBytes?: number
}

export interface Recommendation {
  /** Which to run. */
  use: 'sparse' | 'dense'
  /** The dense baseline compared against (same precision). */
  against: string
  /** How many times faster the chosen one is (>= 1). */
  factor: number
  /** One line for people. */
  text: string
  /** A caveat, e.g. that TF32 dense is faster still if its precision is acceptable. */
  note?: string
}

// ---------------------------------------------------------------------------------------
// A run's options and report

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
  /** 'auto' (the default): the GPU when usable, else the CPU. */
  device?: BenchDevice | 'auto'
  /** -s for dense inputs: one sparsity, or several to sweep (each level a set of cases labelled by it). */
  sparsity?: number | number[]
  /**
   * 'unstructured' (default) or an N:M pattern such as '2:4': the llm suite's layers and
   * dense inputs are magnitude-pruned to it (the pruner's N:M rule) instead of to a sparsity.
   */
  pattern?: string
  include?: string
  exclude?: string
  /** Dense models: bench embeddings and lm_head too (left dense by prune's default, so skipped here too). */
  includeEmbeddings?: boolean
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
  /**
   * With `tune`: time only the variants whose names start with one of these prefixes (and the
   * selection's pick, to compare with). The winners are not saved to the tune cache: they were
   * not weighed against every variant.
   */
  tuneOnly?: string[]
  /**
   * SpMM on CUDA: keep A in a sparse form (`spmm`'s keepSparse): the selection, --tune's
   * candidates and the tune cache's winners leave out the kernels that store every weight (und_*).
   */
  keepSparse?: boolean
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

/** Where the SpMM kernel variant of a CUDA case came from (the kernels' 'forced' or 'heuristic', or the tuner's). */
export type VariantSource = 'tuned' | 'cache' | SpmmVariantSource

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
  /**
   * The form of the weight matrix our kernel read: the 2:4 tiles (the s24* kernels), the
   * bitmap tiles (bm_*), the tensor-core CSR tiles (tc_*) or CSR (every other kernel, SDDMM,
   * the CPU); see spmmVariantForm.
   */
  form: SpmmForm
  /** Bytes that must move, the weight matrix in `form` (see metrics.ts), and the rate at which they did. */
  bytes: number
  gbps: number
  fractionOfBandwidth: number | null
  fractionOfCompute: number | null
  /** The weight matrix in every form (`memory.saving` is CSR's). */
  memory: MemoryFigures
  /** The memory saving of `form`: memory.saving, tcSaving, bitmapSaving or twoFourSaving. */
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
  /** --keep-sparse: the kernels that store every weight (und_*) were left out. */
  keepSparse: boolean
  /** --tune-only: the name prefixes of the variants timed (besides the selection's); null: every variant. */
  only: string[] | null
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
    /** --keep-sparse (the library's keepSparse) as asked; it changes SpMM on CUDA only. */
    keepSparse: boolean
    /**
     * How the streaming engine's kernels launched (SPARSE_PDL): 'graph' with programmatic
     * dependent launch in the CUDA graph whose time per launch is reported, not in the
     * event-timed launches (the default); 'on' in both; 'off' in neither.
     */
    pdl: PdlMode
  }
  cases: BenchCaseRecord[]
  summary: BenchSummary
  tune: TuneSummary | null
  /** Warnings on the figures as a whole (CPU: a dense baseline far below the machine's GEMM ceiling). */
  warnings: string[]
  durationMs: number
}

// ---------------------------------------------------------------------------------------
// Summaries (see summary.ts)

export interface LevelSummary {
  op: BenchOp
  dtype: ValueDType
  /** 'rn50', 'transformer', 'llm', 'attention', 'input'. */
  group: string
  /** Sparsity level (nominal, 2 decimals). */
  sparsity: number
  cases: number
  /** Geometric mean of (baseline time / our time) per baseline. */
  geomeanSpeedup: Record<string, number>
  /** Cases where the dense baseline of the same precision was faster. */
  denseFaster: number
  medianTflops: number
}

export interface OverallSummary {
  op: BenchOp
  dtype: ValueDType
  cases: number
  geomeanSpeedup: Record<string, number>
  denseFaster: number
  medianTflops: number
  medianFractionOfBandwidth: number | null
}

export interface ModelTotal {
  model: string
  op: BenchOp
  dtype: ValueDType
  n: number
  layers: number
  /** Sum of our layer times (ms). */
  sparseMs: number
  /** Sum of each baseline's layer times (ms), over layers where it ran. */
  baselineMs: Record<string, number>
  speedup: Record<string, number>
  denseBytes: number
  csrBytes: number
  memorySaving: number
  /** Sums over the layers (null unless every layer has the form: f16/bf16, and 2:4 for twoFourBytes). */
  bitmapBytes: number | null
  twoFourBytes: number | null
  tcBytes: number | null
}

export interface AgreementSummary {
  op: BenchOp
  dtype: ValueDType
  /** This run's baseline vs the reference table's figure for the same library. */
  baseline: string
  reference: string
  cases: number
  /** Geometric mean of (this run's time / reference time). */
  geomeanRatio: number
  /** Share of cases within +-15% of the reference. */
  within15: number
}

export interface BenchSummary {
  total: number
  ok: number
  failed: number
  levels: LevelSummary[]
  overall: OverallSummary[]
  models: ModelTotal[]
  agreement: AgreementSummary[]
}
