/**
 * One call of the native harness for one case: our kernel and the case's baselines timed
 * on the same data. Both stages that time (the variant tuner and the case runner) go
 * through here, so a case is always passed to the harness the same way.
 */
import type {CsrMatrix, ValueDType} from '../types.js'
import {indexBitsFor} from './metrics.js'
import type {BenchDevice, BenchNative, BenchOp, ImplName, NativeBenchResult, NativeTimingOptions} from './types.js'

export interface MeasureArgs {
  op: BenchOp
  dtype: ValueDType
  device: BenchDevice
  csr: CsrMatrix
  /** The matrix's values in the case's dtype (f16/bf16 as bit patterns). */
  values: Float32Array | Uint16Array
  n: number
  impls: ImplName[]
  timing: NativeTimingOptions
  seed: number
  /** SpMM on CUDA: our kernel's variant (absent: the kernel's choice). */
  variant?: string
}

export type Measurement = NativeBenchResult & {indexBits: 16 | 32}

export async function measure(native: BenchNative, a: MeasureArgs): Promise<Measurement> {
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
