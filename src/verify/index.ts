/**
 * `sparse verify`'s core: run the kernels on a matrix's sparsity pattern against seeded
 * random dense operands and compare each output with the float64 reference.
 *
 *   verifyInput(path, opts) -> VerifyResult     reads a CSR .npz / .smtx / CSR directory / dense file
 *   verifyMatrices(named[], opts) -> VerifyResult
 *
 * Per case (matrix x N x dtype x op): the output is poisoned with NaN first (so an element
 * the kernel does not write fails), the reference is computed from the same rounded inputs
 * (f16/bf16 values and operands decoded exactly, accumulated in double), and
 *   relativeError = ||out - ref||_2 / ||ref||_2   (0 when both are zero)
 *   maxAbsError   = max |out - ref|
 * must satisfy relativeError <= tolerance (f32 1e-5; f16 and bf16 1e-2: bf16's own output
 * rounding is about 4e-3 relative) with every output finite.
 *
 * Operands: A's values are the file's (converted to the case's dtype) or, for a
 * pattern-only matrix, seeded standard normals; B (k x N) and L (m x N) are seeded
 * uniform in [-1, 1). SDDMM uses A as the output mask with inner dimension N (DLMC's
 * convention): out = (L[m x N] * R[k x N]^T) at A's nonzeros, with R = B.
 *
 * Each case says which kernel ran it (`kernel`: CudaSpmm, CudaSddmm, CpuSpmm, CpuSddmm, the
 * names that begin bench's `impls.ours.detail`) and, for SpMM on CUDA, which variant and why
 * (`variant`, `variantSource`: 'forced' by SPARSE_SPMM_VARIANT or 'heuristic', the built-in
 * selection, as bench reports them). A forced variant that cannot run a case, a variable the
 * CPU ignores, and an SDDMM kernel the addon does not name are said per case (`variantNote`)
 * and in the result's `warnings`, never passed over.
 *
 * Self-test hook: SPARSE_VERIFY_FAULT=unwritten (the first output element stays NaN) or
 * =perturb (it is changed) simulates a broken kernel, so that tests can check that
 * verify fails when it should.
 */
import {cpus, totalmem} from 'node:os'

import {InputError, UsageError} from '../errors.js'
import {detectFormat, expandInputs, isDenseFormat, openTensorSource, readCsrInput, tensorNameFromPath} from '../formats/index.js'
import {denseToCsr} from '../sparse/dense-to-csr.js'
import {float32ToHalf, halfToFloat32} from '../sparse/half.js'
import {createRng, fillNormal} from '../sparse/random.js'
import {validateCsr} from '../sparse/validate.js'
import type {CsrMatrix, NamedCsr, ValueDType} from '../types.js'
import {resolveDevice, sddmm, sddmmReference, spmm, spmmReference, spmmVariants, type HostValues} from '../kernels/index.js'
import {checkKeepSparse} from '../kernels/variant.js'
import type {DenseMatrix, DeviceChoice, Device} from '../kernels/types.js'
import {spmmVariantName} from '../kernels/variant-name.js'
import {forcedSddmmVariant, forcedSpmmVariant, SDDMM_VARIANTS, type SpmmVariantSource} from '../kernels/variant.js'

export type VerifyOp = 'spmm' | 'sddmm'

export const VERIFY_OPS: readonly VerifyOp[] = ['spmm', 'sddmm']
export const VERIFY_DTYPES: readonly ValueDType[] = ['f32', 'f16', 'bf16']
/** Default N (columns of B; SDDMM's inner dimension): the Transformer size of the paper. */
export const DEFAULT_N = 256
/** The largest N accepted (the dense operands are k x N and m x N). */
export const MAX_N = 1 << 20
/** Relative-error tolerance per dtype. */
export const TOLERANCE: Readonly<Record<ValueDType, number>> = {f32: 1e-5, f16: 1e-2, bf16: 1e-2}

export interface VerifyOptions {
  ops?: readonly VerifyOp[]
  dtypes?: readonly ValueDType[]
  /** N: columns of B and C (SpMM), inner dimension (SDDMM). Default DEFAULT_N. */
  n?: number
  /**
   * Several N instead of `n` (not both): every case runs at each, in this order (duplicates
   * dropped). A case at some N gets the same operands as a run with `n` set to it.
   */
  ns?: readonly number[]
  device?: DeviceChoice
  /** Seed of the random operands (default 0). */
  seed?: number
  /** CPU threads for the CPU kernels and the reference (default: all cores). */
  threads?: number
  /**
   * SpMM on CUDA: check the kernels the selection picks with `spmm`'s keepSparse (none that
   * stores every weight: `bench --keep-sparse`'s). Default false. Ignored on the CPU.
   */
  keepSparse?: boolean
  /** Called after each case (progress). */
  onCase?: (c: VerifyCase, done: number, total: number) => void
}

export interface VerifyCase {
  /** The matrix (tensor) name. */
  matrix: string
  op: VerifyOp
  dtype: ValueDType
  device: Device
  /** Rows and columns of A, its nonzeros, and N. */
  m: number
  k: number
  nnz: number
  n: number
  /** The kernel entry point that ran: 'CudaSpmm', 'CudaSddmm', 'CpuSpmm' or 'CpuSddmm' (as bench's `impls.ours.detail` begins). */
  kernel: VerifyKernel
  /**
   * SpMM on CUDA: the kernel variant that ran (e.g. 's24e_w8_k256'; bench's `variant`).
   * Absent on the CPU (its kernels have no variants) and for SDDMM (the addon does not say
   * which SDDMM kernel ran).
   */
  variant?: string
  /** With `variant`: 'forced' (the variant SPARSE_SPMM_VARIANT names ran) or 'heuristic' (the built-in selection's). */
  variantSource?: SpmmVariantSource
  /**
   * The variant SPARSE_SPMM_VARIANT (SpMM) or SPARSE_SDDMM_VARIANT (SDDMM) asks for, when set;
   * unless `variantSource` is 'forced' it did not run here, or (SDDMM) may not have: see `variantNote`.
   */
  forcedVariant?: string
  /** With `forcedVariant`, when it did not run (or may not have): why, and what ran instead (one line). */
  variantNote?: string
  /** ||out - ref|| / ||ref||; null when an output is NaN or infinite. */
  relativeError: number | null
  /** max |out - ref|; null when an output is NaN or infinite. */
  maxAbsError: number | null
  tolerance: number
  /** Outputs that are NaN or infinite (an unwritten, still poisoned element counts here). */
  nonFinite: number
  passed: boolean
  /** Wall time of the kernel call in ms, transfers included (a smoke figure, not a benchmark). */
  ms: number
}

export interface VerifyResult {
  /** The input as given (several: joined with ', '). */
  input: string
  /** Every input read (folders expanded); a case's `matrix` is `file:tensor` when there are several. */
  inputs?: string[]
  device: Device
  /** The GPU's name, or "CPU (N threads)". */
  deviceName: string
  /** N, when one N was checked (`n`, or `ns` of one); absent with several: see `ns`. */
  n?: number
  /** Every N checked, in order (one N: `[n]`); each case has its own `n`. */
  ns: number[]
  seed: number
  cases: VerifyCase[]
  passed: number
  failed: number
  /** True when every case passed. */
  ok: boolean
  /**
   * What the cases do not show at a glance (one line each): a forced variant that did not run
   * some cases, a SPARSE_SPMM_VARIANT or SPARSE_SDDMM_VARIANT the CPU ignores, a forced SDDMM
   * kernel the addon cannot confirm. Empty when there is nothing to say.
   */
  warnings: string[]
}

export type VerifyKernel = 'CudaSpmm' | 'CudaSddmm' | 'CpuSpmm' | 'CpuSddmm'

/** What a case says of the kernel that ran it. */
type KernelFields = Pick<VerifyCase, 'kernel' | 'variant' | 'variantSource' | 'forcedVariant' | 'variantNote'>

/** Reads INPUT as CSR matrices: CSR formats as they are, dense tensors converted (zeros dropped). */
export async function readVerifyInput(path: string): Promise<NamedCsr[]> {
  const format = await detectFormat(path)
  let mats: NamedCsr[]
  if (isDenseFormat(format)) {
    const src = await openTensorSource(path)
    try {
      mats = []
      for (const t of src.tensors) mats.push(denseToCsr(await src.read(t.name)))
    } finally {
      await src.close()
    }
  } else {
    mats = await readCsrInput(path)
  }
  if (mats.length === 0) throw new InputError('no-matrices', `${path} holds no matrix to verify`, 'pass a file with at least one 2-D tensor')
  return mats
}

/** Validates the options (UsageError naming the flag) and fills the defaults (`n` becomes `ns`). */
export function checkVerifyOptions(opts: VerifyOptions): Required<Omit<VerifyOptions, 'onCase' | 'threads' | 'n'>> & {threads?: number} {
  if (opts.n !== undefined && opts.ns !== undefined) throw new UsageError('bad-n', 'give n or ns, not both')
  const given = opts.ns ?? [opts.n ?? DEFAULT_N]
  if (given.length === 0) throw new UsageError('bad-n', 'expected at least one N for --n, got none')
  for (const n of given) {
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_N) throw new UsageError('bad-n', `expected a positive integer up to ${MAX_N} for --n, got ${n}`)
  }
  const ns = [...new Set(given)]
  const seed = opts.seed ?? 0
  if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError('bad-seed', `expected a non-negative integer for --seed, got ${seed}`)
  const ops = opts.ops ?? VERIFY_OPS
  for (const op of ops) if (!VERIFY_OPS.includes(op)) throw new UsageError('bad-op', `--op must be spmm, sddmm or all, got ${op}`)
  const dtypes = opts.dtypes ?? VERIFY_DTYPES
  for (const d of dtypes) if (!VERIFY_DTYPES.includes(d)) throw new UsageError('bad-dtype', `--dtype must be f32, f16, bf16 or all, got ${d}`)
  if (opts.threads !== undefined && (!Number.isSafeInteger(opts.threads) || opts.threads < 1)) {
    throw new UsageError('bad-threads', `expected a positive integer for --threads, got ${opts.threads}`)
  }
  return {ns, seed, ops, dtypes, device: opts.device ?? 'auto', threads: opts.threads, keepSparse: checkKeepSparse(opts.keepSparse)}
}

/** The variants the environment forces, read once per run (the kernels read them at every launch). */
export interface ForcedVariants {
  spmm?: string
  sddmm?: string
}

/** verify on every matrix of a file. */
export async function verifyInput(path: string, opts: VerifyOptions = {}): Promise<VerifyResult> {
  checkVerifyOptions(opts) // usage errors before reading anything
  const mats = await readVerifyInput(path)
  return verifyMatrices(mats, opts, path)
}

/**
 * verify on every matrix of several inputs (files, CSR directories, model folders, plain
 * folders searched recursively; see expandInputs). With one input it is verifyInput.
 */
export async function verifyInputs(paths: readonly string[], opts: VerifyOptions = {}): Promise<VerifyResult> {
  checkVerifyOptions(opts)
  const files = await expandInputs(paths)
  if (files.length === 1 && paths.length === 1 && files[0] === paths[0]) return verifyInput(files[0], opts)
  const mats: NamedCsr[] = []
  for (const f of files) {
    const read = await readVerifyInput(f)
    for (const m of read) mats.push({...m, name: read.length === 1 && m.name === tensorNameFromPath(f) ? f : `${f}:${m.name}`})
  }
  const result = await verifyMatrices(mats, opts, paths.join(', '))
  return {...result, inputs: files}
}

/** verify on in-memory matrices. Every CSR is validated before any kernel runs. */
export async function verifyMatrices(mats: readonly NamedCsr[], opts: VerifyOptions = {}, input = '(memory)'): Promise<VerifyResult> {
  const o = checkVerifyOptions(opts)
  for (const {name, csr} of mats) validateCsr(csr, name || 'CSR matrix')
  const {device, info} = resolveDevice(o.device)
  const deviceName = device === 'cuda' ? info?.name ?? 'CUDA GPU' : `CPU (${o.threads ?? cpus().length} threads)`
  const forced: ForcedVariants = {spmm: forcedSpmmVariant(), sddmm: forcedSddmmVariant()}
  const total = mats.length * o.ns.length * o.dtypes.length * o.ops.length
  const cases: VerifyCase[] = []
  for (const [mi, {name, csr}] of mats.entries()) {
    await verifyOne(name, csr, o, device, forced, mi, (c) => {
      cases.push(c)
      opts.onCase?.(c, cases.length, total)
    })
  }
  const passed = cases.filter((c) => c.passed).length
  const warnings = variantWarnings(cases, forced)
  const ns = [...o.ns]
  return {input, device, deviceName, ...(ns.length === 1 ? {n: ns[0]} : {}), ns, seed: o.seed, cases, passed, failed: cases.length - passed, ok: passed === cases.length, warnings}
}

/**
 * The result's warnings on forced variants, one line per op and device that has something
 * to say: the notes of the CPU and SDDMM cases (the same for every case), and for CUDA SpMM
 * how many cases the forced variant did not run.
 */
export function variantWarnings(cases: readonly VerifyCase[], forced: ForcedVariants): string[] {
  const out: string[] = []
  const spmmCuda = cases.filter((c) => c.op === 'spmm' && c.device === 'cuda')
  const missed = spmmCuda.filter((c) => c.variantSource !== 'forced').length
  if (forced.spmm && missed > 0) {
    const why = spmmVariantName().test(forced.spmm) ? 'it cannot run them' : 'it is not the name of an SpMM variant'
    out.push(`SPARSE_SPMM_VARIANT=${forced.spmm} did not run ${missed} of ${spmmCuda.length} CUDA SpMM cases (${why}): the built-in selection's variant ran there instead; each case's variant says which`)
  }
  for (const op of VERIFY_OPS) {
    for (const device of ['cpu', 'cuda'] as const) {
      const note = cases.some((c) => c.op === op && c.device === device) ? sharedNote(op, device, forced[op]) : undefined
      if (note) out.push(note)
    }
  }
  return out
}

/**
 * The note of every case of an op on a device where a forced variant cannot be reported per
 * case: the CPU ignores it, and the addon does not say which SDDMM kernel ran. Undefined for
 * CUDA SpMM (its cases say what ran) and when nothing is forced.
 */
function sharedNote(op: VerifyOp, device: Device, forced: string | undefined): string | undefined {
  if (!forced) return undefined
  const name = op === 'spmm' ? 'SPARSE_SPMM_VARIANT' : 'SPARSE_SDDMM_VARIANT'
  if (device === 'cpu') return `${name}=${forced} is ignored on the CPU: its ${op === 'spmm' ? 'SpMM' : 'SDDMM'} kernel has no variants`
  if (op === 'spmm') return undefined
  return SDDMM_VARIANTS.includes(forced)
    ? `${name}=${forced}: the addon does not say which SDDMM kernel ran, so whether ${forced} did is not known (it runs where it can, the built-in selection elsewhere)`
    : `${name}=${forced} is not an SDDMM kernel (${SDDMM_VARIANTS.join(', ')}): the built-in selection ran`
}

// ---------------------------------------------------------------------------------------

/**
 * Refuse, before allocating anything, a problem whose host buffers (dense operands, the
 * poisoned output and the float64 reference) would not fit in this machine's memory.
 */
function checkHostMemory(name: string, m: number, k: number, n: number, nnz: number, ops: readonly VerifyOp[]): void {
  const spmmBytes = ops.includes('spmm') ? 4 * k * n + 4 * m * n + 8 * m * n : 0
  const sddmmBytes = ops.includes('sddmm') ? 4 * k * n + 4 * m * n + 12 * nnz : 0
  const bytes = Math.max(spmmBytes, sddmmBytes) + 8 * nnz
  const limit = totalmem() * 0.75
  if (bytes > limit || m * n > 2 ** 32 || k * n > 2 ** 32) {
    const gb = (x: number) => (x / 1e9).toFixed(1)
    throw new UsageError(
      'too-large',
      `${name}: checking ${m}x${k} at N = ${n} needs about ${gb(bytes)} GB of host memory (dense operands and the float64 reference), more than this machine's ${gb(limit)} GB budget`,
      'choose a smaller --n',
    )
  }
}

async function verifyOne(
  name: string,
  csr: CsrMatrix,
  o: ReturnType<typeof checkVerifyOptions>,
  device: Device,
  forced: ForcedVariants,
  index: number,
  emit: (c: VerifyCase) => void,
): Promise<void> {
  const m = csr.rows
  const k = csr.cols
  const nnz = csr.columnIndices.length
  // The largest N decides the host memory, so a list is refused before its first case runs.
  checkHostMemory(name, m, k, Math.max(...o.ns), nnz, o.ops)
  // One draw per operand and N, shared by the dtypes (each rounds it its own way). Seeds
  // differ per matrix and per operand, not per N: a case in a list of N is the very case a
  // run at that N alone checks.
  const base = o.seed * 1000 + index * 10
  const values32 = csr.values === null ? fillNormal(new Float32Array(nnz), base + 1) : decode(csr.values, csr.dtype)
  const threads = o.threads
  for (const n of o.ns) {
    const b32 = uniform(k * n, base + 2)
    const l32 = o.ops.includes('sddmm') ? uniform(m * n, base + 3) : new Float32Array(0)
    for (const dtype of o.dtypes) {
      const values = csr.values !== null && csr.dtype === dtype ? csr.values : encode(values32, dtype)
      const a: CsrMatrix = {...csr, values, dtype}
      const b = encode(b32, dtype)
      const shape = {matrix: name, dtype, device, m, k, nnz, n, tolerance: TOLERANCE[dtype]}
      if (o.ops.includes('spmm')) {
        const out = poisoned(dtype, m * n)
        const dense = {rows: k, cols: n, dtype, data: b}
        const {kernel, ms} = await runSpmm(a, dense, out, device, threads, forced.spmm, o.keepSparse)
        injectFault(out, dtype)
        const ref = await spmmReference(a, dense, {threads})
        emit({op: 'spmm', ...shape, ...kernel, ...compare(out, dtype, ref), ms})
      }
      if (o.ops.includes('sddmm')) {
        const out = poisoned(dtype, nnz)
        const lhs = {rows: m, cols: n, dtype, data: encode(l32, dtype)}
        const rhs = {rows: k, cols: n, dtype, data: b}
        const t0 = performance.now()
        await sddmm(a, lhs, rhs, {device, threads, out})
        const ms = performance.now() - t0
        injectFault(out, dtype)
        const ref = await sddmmReference(a, lhs, rhs, {threads})
        emit({op: 'sddmm', ...shape, ...sddmmKernel(device, forced.sddmm), ...compare(out, dtype, ref), ms})
      }
    }
  }
}

/**
 * Runs one SpMM and says which kernel ran it; `ms` times the call that filled `out`. On
 * CUDA: the forced one where it can run, else the selection's pick, from the plan's list as
 * bench asks for it (with the matrix, so that a 2:4 one is planned as 2:4). A forced variant
 * is passed by name, so the kernel runs exactly it or refuses it (cudaErrorInvalidValue, the
 * output left as it was); then the call is made again without it and the selection runs, as
 * it does for any caller with the variable set.
 * NOTE: the name is tried even where the list leaves it out (where bench's
 * spmmVariantChoice would answer 'heuristic'): the list holds each CSR kernel at its widest
 * vector only, and a narrower width still runs when asked for by name.
 */
async function runSpmm(
  a: CsrMatrix,
  b: DenseMatrix,
  out: HostValues,
  device: Device,
  threads: number | undefined,
  forced: string | undefined,
  keepSparse: boolean,
): Promise<{kernel: KernelFields; ms: number}> {
  const asked = forced ? {forcedVariant: forced} : {}
  const keep = keepSparse && device === 'cuda' ? {keepSparse} : {}
  const timed = async (variant?: string): Promise<number> => {
    const t0 = performance.now()
    await spmm(a, b, {device, threads, out, ...(variant ? {variant} : {}), ...keep})
    return performance.now() - t0
  }
  if (device === 'cpu') {
    const ms = await timed()
    const variantNote = sharedNote('spmm', device, forced)
    return {kernel: {kernel: 'CpuSpmm', ...asked, ...(variantNote ? {variantNote} : {})}, ms}
  }
  const {selected} = spmmVariants({m: a.rows, k: a.cols, n: b.cols, nnz: a.columnIndices.length, dtype: b.dtype, rowOffsets: a.rowOffsets, columnIndices: a.columnIndices, values: a.values ?? undefined, ...keep})
  const known = forced !== undefined && spmmVariantName().test(forced)
  if (forced && known) {
    try {
      const ms = await timed(forced)
      return {kernel: {kernel: 'CudaSpmm', variant: forced, variantSource: 'forced', ...asked}, ms}
    } catch (error) {
      if ((error as {code?: unknown}).code !== 'cudaErrorInvalidValue') throw error
    }
  }
  const ms = await timed()
  const kernel: KernelFields = {kernel: 'CudaSpmm', ...(selected ? {variant: selected} : {}), variantSource: 'heuristic', ...asked}
  if (forced) {
    const why = known ? 'cannot run this case' : 'is not the name of an SpMM variant'
    kernel.variantNote = `SPARSE_SPMM_VARIANT=${forced} ${why}: the built-in selection's ${selected || 'variant'} ran instead`
  }
  return {kernel, ms}
}

/** What an SDDMM case says of its kernel: the addon names no SDDMM variant, so a forced one is reported as asked for, with a note. */
function sddmmKernel(device: Device, forced: string | undefined): KernelFields {
  const variantNote = sharedNote('sddmm', device, forced)
  return {kernel: device === 'cpu' ? 'CpuSddmm' : 'CudaSddmm', ...(forced ? {forcedVariant: forced} : {}), ...(variantNote ? {variantNote} : {})}
}

/** The SPARSE_VERIFY_FAULT self-test hook (see the top of this file). */
function injectFault(out: HostValues, dtype: ValueDType): void {
  const fault = process.env.SPARSE_VERIFY_FAULT
  if (!fault || out.length === 0) return
  if (fault === 'unwritten') out.set(poisoned(dtype, 1))
  else if (fault === 'perturb') out[0] = dtype === 'f32' ? out[0] + 1 : out[0] ^ 0x4000
}

/** Uniform in [-1, 1), 24 random bits each (exact in fp32), from a seed. */
export function uniform(count: number, seed: number): Float32Array {
  const rng = createRng(seed)
  const out = new Float32Array(count)
  for (let i = 0; i < count; i++) out[i] = (rng.nextUint32() >>> 8) / 8388608 - 1
  return out
}

function encode(x: Float32Array, dtype: ValueDType): HostValues {
  return dtype === 'f32' ? x : float32ToHalf(x, dtype)
}

function decode(x: HostValues, dtype: ValueDType): Float32Array {
  return dtype === 'f32' ? (x as Float32Array) : halfToFloat32(x as Uint16Array, dtype)
}

/** An output array filled with NaN in its dtype's encoding. */
export function poisoned(dtype: ValueDType, count: number): HostValues {
  if (dtype === 'f32') return new Float32Array(count).fill(NaN)
  return new Uint16Array(count).fill(dtype === 'f16' ? 0x7e00 : 0x7fc0)
}

/** Errors of `out` against the float64 reference. */
export function compare(
  out: HostValues,
  dtype: ValueDType,
  ref: Float64Array,
): {relativeError: number | null; maxAbsError: number | null; nonFinite: number; passed: boolean} {
  const got = decode(out, dtype)
  let diffSq = 0
  let refSq = 0
  let maxAbs = 0
  let nonFinite = 0
  for (let i = 0; i < ref.length; i++) {
    const g = got[i]
    if (!Number.isFinite(g)) {
      nonFinite++
      continue
    }
    const d = g - ref[i]
    diffSq += d * d
    refSq += ref[i] * ref[i]
    const a = Math.abs(d)
    if (a > maxAbs) maxAbs = a
  }
  if (got.length !== ref.length) nonFinite += Math.abs(got.length - ref.length)
  if (nonFinite > 0) return {relativeError: null, maxAbsError: null, nonFinite, passed: false}
  const relativeError = refSq === 0 ? (diffSq === 0 ? 0 : Infinity) : Math.sqrt(diffSq / refSq)
  return {relativeError, maxAbsError: maxAbs, nonFinite, passed: relativeError <= TOLERANCE[dtype]}
}
