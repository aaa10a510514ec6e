/**
 * The native surface of the benchmark harness (native/binding/bench_binding.cc), as the
 * addon exports it. The addon is loaded by src/kernels/binding.ts (the only loader of the
 * `.node` file); src/bench/native.ts casts it to this interface.
 */
import type {ValueDType} from '../types.js'

export type BenchDevice = 'cuda' | 'cpu'

/**
 * Implementations the harness can time. CUDA: our kernels, dense cuBLAS (fp32 on CUDA cores,
 * TF32, fp16/bf16 on tensor cores with fp32 accumulation), cuSPARSE CSR and cuSPARSELt
 * (SpMM of a 2:4 matrix, f16/bf16; loaded at run time, unavailable with its reason when the
 * library is missing or the matrix is not 2:4). CPU: our CPU kernels and a plain
 * multithreaded fp32 dense product.
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
export interface BenchVariantList {
  /** The built-in selection's pick ('' without CUDA). */
  selected: string
  variants: string[]
}

export interface BenchNative {
  benchCudaBuilt: boolean
  /** The kernels' SpMM variant list (the addon's `spmmVariants`); absent in older addons. */
  spmmVariants?(shape: {m: number; k: number; n: number; nnz: number; dtype: ValueDType; indexBits?: 16 | 32}): BenchVariantList
  benchDeviceInfo(): NativeDeviceInfo
  benchCeilings(device: BenchDevice, threads?: number): Promise<NativeCeilings>
  benchSpmm(args: NativeBenchArgs): Promise<NativeBenchResult>
  benchSddmm(args: NativeBenchArgs): Promise<NativeBenchResult>
}
