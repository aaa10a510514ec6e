/**
 * A stand-in for the native harness (no GPU here): deterministic "timings" from the problem
 * size, so the TypeScript side (statistics, metrics, summaries, writers) can be tested with
 * known answers. ours = nnz * n * 1e-9 ms; dense = m * k * n * 2e-10 ms (x0.5 for TF32/f16);
 * cuSPARSE = 2 x ours. With `variants`, the fake lists SpMM kernel variants (`spmmVariants`)
 * and ours = nnz * n * 1e-9 * factor[variant] (the variant passed, else the selected one).
 * CUDA SpMM with `variants` or `kernel`: ours's detail names the kernel as the harness does
 * ('CudaSpmm spmm_f16_i16_s24e_w8_k256, 16-bit indices'; 'CudaSpmmVariant ...' for a variant
 * passed); else it is 'fake ours'. The variants in `variants.dense` store every weight: a query
 * with keepSparse lists them not, and selects `variants.sparseSelected`. `variants.structure`
 * is what the plan reports it found ('2:4').
 */
import type {BenchNative, BenchVariantQuery, NativeBenchArgs, NativeBenchResult, NativeImplResult} from '../../src/bench/types.js'

export interface FakeOptions {
  /** Names that report unavailable. */
  unavailable?: string[]
  /** Reject every case with this error. */
  fail?: {message: string; code: string}
  calls?: NativeBenchArgs[]
  /** SpMM kernel variants: the selection's pick, and a time factor per variant (its keys are the list). */
  variants?: {selected: string; factors: Record<string, number>; dense?: string[]; sparseSelected?: string; structure?: '2:4'}
  /** The queries `spmmVariants` was asked. */
  queries?: BenchVariantQuery[]
  /** Variants whose launch fails (as a variant that cannot run the problem would). */
  failingVariants?: string[]
  /** Without `variants`: the variant our CUDA SpMM runs (named in its detail). */
  kernel?: string
}

export function samplesAround(ms: number, count = 11): Float64Array {
  // ms x (0.95, 0.96, ..., 1.05): median exactly ms.
  return Float64Array.from({length: count}, (_, i) => ms * (0.95 + (0.1 * i) / (count - 1)))
}

export function fakeNative(opts: FakeOptions = {}): BenchNative {
  const run = async (args: NativeBenchArgs, spmm: boolean): Promise<NativeBenchResult> => {
    opts.calls?.push(args)
    if (opts.fail) throw Object.assign(new Error(opts.fail.message), {code: opts.fail.code})
    const nnz = args.csr.rowOffsets[args.csr.rows]
    const width = spmm ? args.n : args.k // the dense operand's width
    const denseFlops = args.csr.rows * args.csr.cols * width
    let ours = nnz * width * 1e-9
    let oursDetail = 'fake ours'
    if (spmm && (opts.variants || opts.kernel) && args.device === 'cuda') {
      const v = args.variant ?? opts.variants?.selected ?? opts.kernel!
      if (opts.failingVariants?.includes(v)) throw Object.assign(new Error(`CudaSpmmVariant '${v}': cudaErrorInvalidValue`), {code: 'cudaErrorInvalidValue'})
      ours *= opts.variants?.factors[v] ?? 1
      const bits = args.indexBits ?? 32
      const name = `spmm_${args.dtype}_i${bits}_${v}`
      oursDetail = args.variant ? `CudaSpmmVariant ${name} (variant chosen by the caller), ${bits}-bit indices` : `CudaSpmm ${name}, ${bits}-bit indices`
    }
    const impls: NativeImplResult[] = args.impls.map((name) => {
      if (opts.unavailable?.includes(name)) return {name, available: false, reason: `${name} missing in this test`}
      let ms: number
      if (name === 'ours') ms = ours
      else if (name === 'cusparse') ms = 2 * ours
      else if (name === 'cublas_f32' || name === 'cpu_dense_f32') ms = denseFlops * 2e-10
      else ms = denseFlops * 1e-10
      return {name, available: true, l2Mode: args.device === 'cpu' ? 'n/a' : 'rotate', copies: 3, samples: samplesAround(ms), detail: name === 'ours' ? oursDetail : `fake ${name}`, ...(name === 'ours' ? {relErr: 1e-7, checkAgainst: 'cublas_f32'} : {})}
    })
    return {impls, l2Bytes: 60 * 2 ** 20, smClockMhz: args.device === 'cpu' ? null : {min: 1900, max: 1980}}
  }
  const variants = opts.variants
  return {
    ...(variants
      ? {
          spmmVariants: (q: BenchVariantQuery) => {
            opts.queries?.push(q)
            const keep = q.keepSparse === true
            const names = Object.keys(variants.factors).filter((v) => !(keep && variants.dense?.includes(v)))
            return {selected: keep && variants.sparseSelected ? variants.sparseSelected : variants.selected, variants: names, ...(variants.structure ? {structure: variants.structure} : {})}
          },
        }
      : {}),
    benchCudaBuilt: true,
    benchDeviceInfo: () => ({available: true, name: 'Fake GPU', smCount: 132, computeCapability: '9.0', l2Bytes: 60 * 2 ** 20, memoryBytes: 2 ** 37, maxSmClockMhz: 1980, maxMemClockMhz: 3201, smClockMhz: 1980, memClockMhz: 3201, driver: '13.0', cublas: 'libcublas.so.13', cusparse: 'libcusparse.so.12'}),
    benchCeilings: async () => ({copyGBps: 4000, f32Tflops: 50, tf32Tflops: 400, f16Tflops: 700, bf16Tflops: 750, gemmSize: 8192}),
    benchSpmm: (a) => run(a, true),
    benchSddmm: (a) => run(a, false),
  }
}

/** A device-less harness: what the addon reports on a machine without a GPU. */
export function noGpuNative(): BenchNative {
  const base = fakeNative()
  return {...base, benchDeviceInfo: () => ({available: false, reason: 'no usable CUDA device: cudaErrorInsufficientDriver'})}
}
