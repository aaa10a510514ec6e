/**
 * The kernels library: SpMM and SDDMM on the GPU (CUDA) or the CPU, validated in
 * TypeScript before any native call.
 *
 *   spmm(csr, b, {device: 'auto'})         -> {c: DenseMatrix, device}   C = A * B
 *   sddmm(csr, lhs, rhs, {device: 'cpu'})  -> {values, dtype, device}    (L * R^T) at A's nonzeros
 *   resolveDevice('auto')                  -> {device, info}
 *   cudaInfo()                             -> CudaInfo (never throws)
 *
 * Shapes: SpMM A is m x k (CSR), B is k x n, C is m x n. SDDMM's mask A is m x n, L is
 * m x k and R is n x k (row-major, so R's rows are indexed by A's columns).
 * A pattern-only CSR (values null, e.g. DLMC .smtx) gets seeded random normal values
 * (`seed`, default 0). All operands of one call share one dtype (f32, f16 or bf16);
 * accumulation is fp32.
 */
import {DeviceError, UsageError} from '../errors.js'
import {randomValues} from '../sparse/random.js'
import {validateCsr} from '../sparse/validate.js'
import type {CsrMatrix, ValueDType} from '../types.js'
import {cudaInfo, loadAddon, type CudaInfo, type HostValues, type SpmmShape, type SpmmVariantList} from './binding.js'
import type {DenseMatrix, Device, DeviceChoice} from './types.js'
import {spmmVariantName} from './variant-name.js'
import {checkKeepSparse} from './variant.js'

export {cudaInfo, type CudaInfo, type HostValues, type SpmmShape, type SpmmVariantList} from './binding.js'
export type {DenseMatrix, Device, DeviceChoice} from './types.js'
export {
  forcedSddmmVariant,
  forcedSpmmLine,
  forcedSpmmVariant,
  pdlMode,
  type PdlMode,
  SDDMM_VARIANTS,
  spmmKernelVariant,
  spmmVariantChoice,
  spmmVariantForm,
  type SpmmForm,
  type SpmmVariantSource,
} from './variant.js'

export interface KernelOptions {
  /** 'cuda', 'cpu' or 'auto' (default: the GPU when usable, else the CPU). */
  device?: DeviceChoice
  /** CPU threads (default: all cores). */
  threads?: number
  /** Seed of the random values given to a pattern-only CSR (default 0). */
  seed?: number
  /**
   * Output array to fill in place instead of allocating one (SpMM: m * n elements; SDDMM:
   * nnz). `sparse verify` poisons it with NaN first so that an unwritten element fails.
   */
  out?: HostValues
  /**
   * SpMM on CUDA only: force a kernel variant (a name from `spmmVariants`); absent or
   * 'auto': the built-in selection. Ignored on the CPU.
   */
  variant?: string
  /**
   * SpMM on CUDA only: keep A in a sparse form on the GPU. The built-in selection then leaves
   * out the kernels that store every weight, zeros included (und_*, which on H100/H200 runs
   * unstructured f16/bf16 layers of at least 2^31 multiply-adds at N >= 184 as a dense GEMM:
   * faster there, with no memory saving). Default false. A forced `variant` runs as asked.
   * Ignored on the CPU.
   */
  keepSparse?: boolean
}

export interface SpmmResult {
  c: DenseMatrix
  device: Device
}

export interface SddmmResult {
  /** nnz outputs in CSR order, of `dtype`. */
  values: HostValues
  dtype: ValueDType
  device: Device
}

export const DTYPES: readonly ValueDType[] = ['f32', 'f16', 'bf16']

/**
 * Picks the backend (with the GPU's description unless 'cpu' was asked for). 'cuda' without a usable GPU is a DeviceError (exit 3) naming the
 * reason; 'auto' falls back to the CPU. Loading the addon may throw DeviceError too.
 */
export function resolveDevice(choice: DeviceChoice = 'auto'): {device: Device; info?: CudaInfo} {
  if (choice !== 'cuda' && choice !== 'cpu' && choice !== 'auto') {
    throw new UsageError('bad-device', `device must be cuda, cpu or auto, got ${JSON.stringify(choice)}`)
  }
  loadAddon() // the CPU kernels live in the addon too
  // NOTE: 'cpu' never asks CUDA: initialising it costs time on GPU machines.
  if (choice === 'cpu') return {device: 'cpu'}
  const info = cudaInfo()
  if (info.available) return {device: 'cuda', info}
  if (choice === 'auto') return {device: 'cpu', info}
  throw new DeviceError(
    'no-gpu',
    `--device cuda needs a CUDA GPU, but none is usable: ${info.reason ?? 'unknown reason'}`,
    info.built ? 'run on a machine with an NVIDIA GPU and driver, or use --device cpu (or auto)' : 'reinstall with the CUDA toolkit (nvcc) on the PATH, or use --device cpu (or auto)',
  )
}

// ---------------------------------------------------------------------------------------
// Validation (everything the native side would reject, with clear messages, first).

function checkThreads(threads: number | undefined): number {
  if (threads === undefined) return 0
  if (!Number.isSafeInteger(threads) || threads < 1 || threads > 4096) {
    throw new UsageError('bad-threads', `expected a positive integer for threads, got ${threads}`)
  }
  return threads
}

function checkDType(dtype: unknown, what: string): ValueDType {
  if (dtype !== 'f32' && dtype !== 'f16' && dtype !== 'bf16') {
    throw new UsageError('bad-dtype', `${what}: dtype must be f32, f16 or bf16, got ${JSON.stringify(dtype)}`)
  }
  return dtype
}

function checkHostArray(data: unknown, dtype: ValueDType, length: number, what: string): HostValues {
  const ok = dtype === 'f32' ? data instanceof Float32Array : data instanceof Uint16Array
  if (!ok) {
    throw new UsageError('bad-array', `${what} must be a ${dtype === 'f32' ? 'Float32Array' : 'Uint16Array of ' + dtype + ' bit patterns'} for dtype ${dtype}`)
  }
  const arr = data as HostValues
  if (arr.length !== length) throw new UsageError('bad-shape', `${what} has ${arr.length} elements, expected ${length}`)
  return arr
}

function checkDense(m: DenseMatrix, what: string, rows: number | undefined, cols: number | undefined): void {
  if (m === null || typeof m !== 'object') throw new UsageError('bad-array', `${what} must be a DenseMatrix {rows, cols, dtype, data}`)
  for (const [name, v] of [['rows', m.rows], ['cols', m.cols]] as const) {
    if (!Number.isSafeInteger(v) || v < 0 || v > 0x7fffffff) {
      throw new UsageError('bad-shape', `${what}.${name} must be a non-negative integer below 2^31, got ${v}`)
    }
  }
  if (rows !== undefined && m.rows !== rows) throw new UsageError('bad-shape', `${what} has ${m.rows} rows, expected ${rows}`)
  if (cols !== undefined && m.cols !== cols) throw new UsageError('bad-shape', `${what} has ${m.cols} columns, expected ${cols}`)
  checkDType(m.dtype, what)
  checkHostArray(m.data, m.dtype, m.rows * m.cols, `${what}.data`)
}

/** The CSR's values in `dtype`: its own (same dtype required) or seeded random ones. */
function csrValues(csr: CsrMatrix, dtype: ValueDType, seed: number): HostValues {
  const nnz = csr.columnIndices.length
  if (csr.values === null) return randomValues(nnz, dtype, seed)
  if (csr.dtype !== dtype) {
    throw new UsageError('dtype-mismatch', `the CSR values are ${csr.dtype} but the dense operand is ${dtype}; convert one of them`)
  }
  return checkHostArray(csr.values, dtype, nnz, 'csr.values')
}

function nativeFailure(op: string, device: Device, error: unknown): Error {
  const e = error as Error & {code?: string}
  if (typeof e?.code === 'string' && (e.code.startsWith('cuda') || e.code === 'ERR_NO_CUDA')) {
    const oom = e.code === 'cudaErrorMemoryAllocation'
    return new DeviceError(
      e.code,
      `${op} on ${device} failed: ${e.message}`,
      oom ? 'the problem does not fit in GPU memory; use a smaller N or --device cpu' : 'check the GPU with nvidia-smi, or use --device cpu',
    )
  }
  return e instanceof Error ? e : new Error(String(e))
}

// ---------------------------------------------------------------------------------------
// The kernels.

/** C = A * B. A: m x k CSR; B: k x n dense of the same dtype as A's values. */
export async function spmm(csr: CsrMatrix, b: DenseMatrix, opts: KernelOptions = {}): Promise<SpmmResult> {
  validateCsr(csr, 'SpMM sparse operand')
  checkDense(b, 'SpMM dense operand B', csr.cols, undefined)
  const threads = checkThreads(opts.threads)
  const dtype = b.dtype
  const values = csrValues(csr, dtype, opts.seed ?? 0)
  const m = csr.rows
  const n = b.cols
  const c = opts.out !== undefined ? checkHostArray(opts.out, dtype, m * n, 'out') : dtype === 'f32' ? new Float32Array(m * n) : new Uint16Array(m * n)
  const {device} = resolveDevice(opts.device ?? 'auto')
  if (opts.variant !== undefined && (typeof opts.variant !== 'string' || (opts.variant !== 'auto' && !spmmVariantName().test(opts.variant)))) {
    throw new UsageError('bad-variant', `variant must be 'auto' or a name like 'split_v4_t8_w1', 'tile_v4_t8_x2_u16', 'tc_w8_s4_p4' or 'bm_w4_m1_s8' (see spmmVariants), got ${JSON.stringify(opts.variant)}`)
  }
  const variant = device === 'cuda' ? opts.variant : undefined
  const keepSparse = checkKeepSparse(opts.keepSparse) && device === 'cuda'
  const args = {m, k: csr.cols, n, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values, rowIndices: csr.rowIndices, b: b.data, c, dtype, device, threads, variant, ...(keepSparse ? {keepSparse} : {})}
  try {
    await loadAddon().spmm(args)
  } catch (error) {
    throw nativeFailure('SpMM', device, error)
  }
  return {c: {rows: m, cols: n, dtype, data: c}, device}
}

/**
 * SDDMM: values[i] = dot(L[row(i)], R[col(i)]) for each nonzero i of the mask `csr`
 * (m x n; its values are ignored). L: m x k, R: n x k, same dtype.
 */
export async function sddmm(csr: CsrMatrix, lhs: DenseMatrix, rhs: DenseMatrix, opts: KernelOptions = {}): Promise<SddmmResult> {
  validateCsr(csr, 'SDDMM mask')
  checkDense(lhs, 'SDDMM left operand L', csr.rows, undefined)
  checkDense(rhs, 'SDDMM right operand R', csr.cols, lhs.cols)
  if (rhs.dtype !== lhs.dtype) throw new UsageError('dtype-mismatch', `SDDMM operands differ in dtype: L is ${lhs.dtype}, R is ${rhs.dtype}`)
  const threads = checkThreads(opts.threads)
  const dtype = lhs.dtype
  const nnz = csr.columnIndices.length
  const out = opts.out !== undefined ? checkHostArray(opts.out, dtype, nnz, 'out') : dtype === 'f32' ? new Float32Array(nnz) : new Uint16Array(nnz)
  const {device} = resolveDevice(opts.device ?? 'auto')
  const args = {m: csr.rows, k: lhs.cols, n: csr.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, rowIndices: csr.rowIndices, lhs: lhs.data, rhs: rhs.data, out, dtype, device, threads}
  try {
    await loadAddon().sddmm(args)
  } catch (error) {
    throw nativeFailure('SDDMM', device, error)
  }
  return {values: out, dtype, device}
}

/**
 * The CUDA SpMM kernel variants that can run a problem of this shape, and the one the
 * built-in selection picks (for `sparse bench --tune`). Empty in a build without CUDA.
 */
export function spmmVariants(shape: SpmmShape): SpmmVariantList {
  for (const key of ['m', 'k', 'n', 'nnz'] as const) {
    const v = shape[key]
    if (!Number.isSafeInteger(v) || v < 0 || v > 0x7fffffff) throw new UsageError('bad-shape', `${key} must be a non-negative integer below 2^31, got ${v}`)
  }
  checkDType(shape.dtype, 'spmmVariants')
  checkKeepSparse(shape.keepSparse)
  return loadAddon().spmmVariants(shape)
}

/**
 * Times CUDA SpMM variants on one problem (hot L2; for ranking candidates, not for
 * reports): ms per launch for each name in `variants`, in order. Needs a GPU.
 */
export async function timeSpmmVariants(csr: CsrMatrix, b: DenseMatrix, variants: string[], opts: {reps?: number; seed?: number; indexBits?: 16 | 32} = {}): Promise<Array<{variant: string; ms: number}>> {
  validateCsr(csr, 'SpMM sparse operand')
  checkDense(b, 'SpMM dense operand B', csr.cols, undefined)
  resolveDevice('cuda')
  const dtype = b.dtype
  const values = csrValues(csr, dtype, opts.seed ?? 0)
  const c = dtype === 'f32' ? new Float32Array(csr.rows * b.cols) : new Uint16Array(csr.rows * b.cols)
  let ms: Float64Array
  try {
    ms = await loadAddon().spmmTime({
      m: csr.rows, k: csr.cols, n: b.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values,
      rowIndices: csr.rowIndices, b: b.data, c, dtype, indexBits: opts.indexBits, variants, reps: opts.reps,
    })
  } catch (error) {
    throw nativeFailure('SpMM timing', 'cuda', error)
  }
  return variants.map((variant, i) => ({variant, ms: ms[i]}))
}

/** Float64 reference of spmm (same operands; values of a pattern-only CSR from `seed`). */
export async function spmmReference(csr: CsrMatrix, b: DenseMatrix, opts: Pick<KernelOptions, 'threads' | 'seed'> = {}): Promise<Float64Array> {
  validateCsr(csr, 'SpMM sparse operand')
  checkDense(b, 'SpMM dense operand B', csr.cols, undefined)
  const values = csrValues(csr, b.dtype, opts.seed ?? 0)
  return loadAddon().spmmReference({
    m: csr.rows, k: csr.cols, n: b.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values,
    rowIndices: csr.rowIndices, b: b.data, dtype: b.dtype, threads: checkThreads(opts.threads),
  })
}

/** Float64 reference of sddmm. */
export async function sddmmReference(csr: CsrMatrix, lhs: DenseMatrix, rhs: DenseMatrix, opts: Pick<KernelOptions, 'threads'> = {}): Promise<Float64Array> {
  validateCsr(csr, 'SDDMM mask')
  checkDense(lhs, 'SDDMM left operand L', csr.rows, undefined)
  checkDense(rhs, 'SDDMM right operand R', csr.cols, lhs.cols)
  if (rhs.dtype !== lhs.dtype) throw new UsageError('dtype-mismatch', `SDDMM operands differ in dtype: L is ${lhs.dtype}, R is ${rhs.dtype}`)
  return loadAddon().sddmmReference({
    m: csr.rows, k: lhs.cols, n: csr.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices,
    rowIndices: csr.rowIndices, lhs: lhs.data, rhs: rhs.data, dtype: lhs.dtype, threads: checkThreads(opts.threads),
  })
}
