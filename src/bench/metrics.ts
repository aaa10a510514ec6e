/**
 * What each case costs at least (FLOPs, bytes that must move), the rates reached, memory,
 * and the sparse-or-dense advice.
 *
 * Conventions (the paper's, and ../shared/anchors): the weight matrix is m x k with nnz
 * nonzeros and the dense operand has n columns.
 *   SpMM  C[m x n] = A[m x k] B[k x n]: 2 nnz n FLOPs.
 *   SDDMM the m x k pattern is the output mask and n the inner dimension:
 *         out = (L[m x n] R[k x n]^T) at the mask: 2 nnz n FLOPs.
 */
import {spmmKernelVariant, type SpmmForm, spmmVariantForm} from '../kernels/variant.js'
import {csrBytes, MAX_COLS_16BIT_INDEX} from '../sparse/csr.js'
import {memorySaving, type TileStats, twoFourBytes} from '../sparse/memory.js'
import type {ValueDType} from '../types.js'
import type {BenchOp, CaseShape, ImplName, MemoryFigures, Recommendation} from './types.js'

export function valueBytes(dtype: ValueDType): number {
  return dtype === 'f32' ? 4 : 2
}

/** Our SpMM's index width: Sputnik's 16-bit indices for half precision when the columns fit. */
export function indexBitsFor(op: BenchOp, dtype: ValueDType, cols: number): 16 | 32 {
  return op === 'spmm' && dtype !== 'f32' && cols <= MAX_COLS_16BIT_INDEX ? 16 : 32
}

/** Useful FLOPs: 2 nnz n for both ops. */
export function flopCount(s: CaseShape): number {
  return 2 * s.nnz * s.n
}

/**
 * The fewest bytes a kernel must move through device memory: every operand read once,
 * the output written once.
 *   SpMM:  the weight matrix in the form the kernel reads + B (k x n) + C (m x n). The form's
 *          bytes are `weightBytes` (the 2:4, bitmap or tc tiles: see streamedWeights); without
 *          it, CSR's values + column indices + row offsets.
 *   SDDMM: column indices + row offsets + L (m x n) + R (k x n) + the nnz outputs.
 */
export function bytesMoved(s: CaseShape, weightBytes?: number): number {
  const vb = valueBytes(s.dtype)
  const offsets = 4 * (s.m + 1)
  if (s.op === 'spmm') return (weightBytes ?? s.nnz * (vb + s.indexBits / 8) + offsets) + s.k * s.n * vb + s.m * s.n * vb
  return s.nnz * 4 + offsets + s.m * s.n * vb + s.k * s.n * vb + s.nnz * vb
}

/** The weight matrix in the form our kernel read: the form, its bytes (null for CSR: bytesMoved counts them) and its memory saving. */
export interface StreamedWeights {
  form: SpmmForm
  bytes: number | null
  saving: number
}

/**
 * The form of the weight matrix our kernel read, and its figures. SpMM on CUDA: the form of
 * the variant named in `ours`'s detail (the harness's kernel name, e.g. 'CudaSpmm
 * spmm_f16_i16_s24e_w8_k256, ...': the 2:4 tiles), else of `variant` (the case's choice,
 * when known); CSR otherwise (SDDMM reads the CSR mask, the CPU kernels the CSR).
 * NOTE: the forms exist for f16/bf16 only and the kernels test 2:4 as csrTileStats does, so
 * the form a kernel ran has its figure in `memory`; where it has none, CSR's figures stand.
 */
export function streamedWeights(op: BenchOp, device: 'cuda' | 'cpu', detail: string | undefined, variant: string | undefined, memory: MemoryFigures): StreamedWeights {
  const csr: StreamedWeights = {form: 'csr', bytes: null, saving: memory.saving}
  if (op !== 'spmm' || device !== 'cuda') return csr
  const ran = spmmKernelVariant(detail) ?? variant
  const form = ran ? spmmVariantForm(ran) : 'csr'
  const bytes = form === '2:4' ? memory.twoFourBytes : form === 'bitmap' ? memory.bitmapBytes : form === 'tc' ? memory.tcBytes : form === 'bitmap stream' ? streamBytes(ran!, memory) : form === 'pair stream' ? pairBytes(ran!, memory) : form === 'dense' ? memory.denseBytes : null
  return bytes === null ? csr : {form, bytes, saving: memorySaving(memory.denseBytes, bytes)}
}

/** The bitmap stream's bytes for an ube_* variant: its row-block height is the name's warps (ube_w4: 64 rows). */
function streamBytes(variant: string, memory: MemoryFigures): number | null {
  const s = memory.bitmapStreamBytes
  return s ? (variant.startsWith('ube_w4') ? s.w4 : s.w8) : null
}

/**
 * The pair stream's bytes for a variant: cut in the GEMM engine's 64-column stages for the
 * family ung, in 128-column ones for ube_p*.
 */
function pairBytes(variant: string, memory: MemoryFigures): number | null {
  return (variant.split('_', 1)[0] === 'ung' ? memory.pairStreamGemmBytes : memory.pairStreamBytes) ?? null
}

/**
 * The weight matrix's memory in the case's dtype: dense, CSR, and for f16/bf16 the tensor-core
 * forms (`tiles`: csrTileStats of the matrix; without it they are left null). Savings against
 * the dense matrix of the same dtype, as in `prune` and `info`.
 */
export function memoryFigures(rows: number, cols: number, nnz: number, dtype: ValueDType, tiles?: TileStats): MemoryFigures {
  const dense = rows * cols * valueBytes(dtype)
  const sparse = csrBytes(rows, cols, nnz, dtype === 'f32' ? 'f32' : 'f16')
  const bitmap = dtype !== 'f32' && tiles ? tiles.bitmapBytes : null
  const twoFour = dtype !== 'f32' && tiles?.twoFour ? twoFourBytes(rows, cols) : null
  const tc = dtype !== 'f32' && tiles ? tiles.tcBytes : null
  return {
    denseBytes: dense,
    csrBytes: sparse,
    saving: memorySaving(dense, sparse),
    bitmapBytes: bitmap,
    twoFourBytes: twoFour,
    tcBytes: tc,
    bitmapSaving: bitmap === null ? null : memorySaving(dense, bitmap),
    twoFourSaving: twoFour === null ? null : memorySaving(dense, twoFour),
    tcSaving: tc === null ? null : memorySaving(dense, tc),
    ...(dtype !== 'f32' && tiles?.bitmapStream ? {bitmapStreamBytes: tiles.bitmapStream} : {}),
    ...(dtype !== 'f32' && tiles?.pairStream !== undefined ? {pairStreamBytes: tiles.pairStream} : {}),
    ...(dtype !== 'f32' && tiles?.pairStreamGemm !== undefined ? {pairStreamGemmBytes: tiles.pairStreamGemm} : {}),
  }
}

/** The dense baseline of the same precision, against which the advice is given. */
export function denseReference(dtype: ValueDType, device: 'cuda' | 'cpu'): ImplName {
  if (device === 'cpu') return 'cpu_dense_f32'
  return dtype === 'f32' ? 'cublas_f32' : dtype === 'f16' ? 'cublas_f16' : 'cublas_bf16'
}

/** The dense cuBLAS baselines timed for a dtype. */
export function denseBaselines(dtype: ValueDType, device: 'cuda' | 'cpu'): ImplName[] {
  if (device === 'cpu') return ['cpu_dense_f32']
  return dtype === 'f32' ? ['cublas_f32', 'cublas_tf32'] : dtype === 'f16' ? ['cublas_f16'] : ['cublas_bf16']
}

/**
 * Sparse or dense, and by how much, against the dense baseline of the same precision
 * (`reference`). For fp32, dense TF32 is mentioned when it beats the sparse kernel: faster,
 * but with 10-bit mantissas.
 */
export function recommend(oursMs: number, baselines: Record<string, number>, reference: string): Recommendation | null {
  const dense = baselines[reference]
  if (!(dense > 0) || !(oursMs > 0)) return null
  const sparseWins = oursMs < dense
  const factor = sparseWins ? dense / oursMs : oursMs / dense
  const rec: Recommendation = {
    use: sparseWins ? 'sparse' : 'dense',
    against: reference,
    factor,
    text: sparseWins ? `sparse: ${factor.toFixed(2)}x faster than dense ${reference}` : `dense: ${reference} is ${factor.toFixed(2)}x faster than sparse`,
  }
  const tf32 = baselines.cublas_tf32
  if (reference === 'cublas_f32' && tf32 > 0 && tf32 < oursMs) {
    rec.note = `dense TF32 (cublas_tf32) is ${(oursMs / tf32).toFixed(2)}x faster than sparse, if its 10-bit mantissa is acceptable`
  }
  return rec
}
