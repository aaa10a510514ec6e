/**
 * Which CUDA kernel variant runs a problem, and where the choice came from: the variables
 * that force one (SPARSE_SPMM_VARIANT, SPARSE_SDDMM_VARIANT), the choice between a forced
 * variant and the built-in selection, and the report's line on it. One definition for
 * `sparse bench` (src/bench/variant.ts) and `sparse verify` (src/verify).
 *
 *   forcedSpmmVariant()               -> 's24e_w8_k256' | undefined   (SPARSE_SPMM_VARIANT)
 *   spmmVariantChoice(list, forced)   -> {variant, source: 'forced' | 'heuristic'}
 *   forcedSpmmLine(forced, ran, of)   -> 'SpMM variant: ... forced by SPARSE_SPMM_VARIANT (...)'
 *   spmmKernelVariant(detail)         -> 's24e_w8_k256' | undefined   (from 'spmm_f16_i16_s24e_w8_k256')
 *   spmmVariantForm(variant)          -> 'csr' | 'tc' | 'bitmap' | 'bitmap stream' | 'pair stream' | '2:4' | 'dense'
 *   checkKeepSparse(value)            -> boolean (spmm's and verify's keepSparse, checked)
 *   pdlMode()                         -> 'graph' | 'on' | 'off'         (SPARSE_PDL)
 */
import {UsageError} from '../errors.js'
import type {SpmmVariantList} from './binding.js'

/**
 * Where a CUDA SpMM's variant came from, as far as the kernels go: 'forced' (the variant
 * SPARSE_SPMM_VARIANT names ran) or 'heuristic' (the built-in selection's pick). `sparse
 * bench` adds 'tuned' and 'cache'.
 */
export type SpmmVariantSource = 'forced' | 'heuristic'

/**
 * How the streaming engine's kernels (`s24e_*`, `ube_*`) launch, from SPARSE_PDL, read as the
 * addon reads it (native/cuda/spmm/stream_engine_host.h, LaunchWithPdl): 'graph' with
 * programmatic dependent launch where the launch is captured into a CUDA graph (bench's CUDA-graph
 * time per launch), so that the first stages' weights are fetched while the kernel before
 * finishes (the default, and what any value but the other two gives); 'on' always; 'off' never.
 */
export type PdlMode = 'graph' | 'on' | 'off'
export function pdlMode(value: string | undefined = process.env.SPARSE_PDL): PdlMode {
  return value === 'on' || value === 'off' ? value : 'graph'
}

/** The SDDMM kernels SPARSE_SDDMM_VARIANT can force (native/cuda/sddmm/sddmm.cu). */
export const SDDMM_VARIANTS: readonly string[] = ['simt', 'tc', 'dense']

/** A variable's value when it forces something: unset, '' and 'auto' leave the selection. */
function forcing(value: string | undefined): string | undefined {
  return value && value !== 'auto' ? value : undefined
}

/**
 * The SpMM variant SPARSE_SPMM_VARIANT forces (or `value`, given in its place), or
 * undefined. The kernel reads the variable at every launch and runs that variant wherever it
 * can, the selection elsewhere.
 */
export function forcedSpmmVariant(value: string | undefined = process.env.SPARSE_SPMM_VARIANT): string | undefined {
  return forcing(value)
}

/** The SDDMM kernel SPARSE_SDDMM_VARIANT forces ('simt', 'tc' or 'dense'), read like the SpMM's, or undefined. */
export function forcedSddmmVariant(value: string | undefined = process.env.SPARSE_SDDMM_VARIANT): string | undefined {
  return forcing(value)
}

/**
 * The variant a CUDA SpMM runs, from the plan's list for the problem (`spmmVariants`, asked
 * with the matrix so that a 2:4 matrix lists the 2:4 variants): the forced one where the list
 * has it, else the selection's pick. `variant` is absent when the list is empty (a build
 * without CUDA).
 * NOTE: the list holds each CSR kernel at its widest vector only, and a narrower width still
 * runs when forced by name; a 'heuristic' answer for such a name is corrected by what ran
 * (bench reads the harness's kernel name; verify passes the name and sees whether the kernel
 * refuses it).
 */
export function spmmVariantChoice(list: Pick<SpmmVariantList, 'selected' | 'variants'>, forced: string | undefined): {variant?: string; source: SpmmVariantSource} {
  if (forced && list.variants.includes(forced)) return {variant: forced, source: 'forced'}
  return {...(list.selected ? {variant: list.selected} : {}), source: 'heuristic'}
}

/**
 * The report's line on a forced SpMM variant: how many of the CUDA SpMM cases ran it, e.g.
 * 'SpMM variant: s24e_w8_k256 forced by SPARSE_SPMM_VARIANT (20 of 24 cases; the other 4
 * cannot run it and ran the built-in selection's variant)'.
 */
export function forcedSpmmLine(forced: string, ran: number, cases: number): string {
  const rest = cases - ran
  const tail = rest > 0 ? `; the other ${rest} cannot run it and ran the built-in selection's variant` : ''
  return `SpMM variant: ${forced} forced by SPARSE_SPMM_VARIANT (${ran} of ${cases} cases${tail})`
}

/**
 * The form of the weight matrix an SpMM kernel reads (each family's `form`,
 * native/cuda/spmm/spmm_family.h; the sizes in src/sparse/memory.ts):
 * - '2:4': the 2:4 tiles of the 2:4 kernels (s24_*, the streaming engine's s24e_*, the GEMM
 *   engine's s24g_*), 1.125 bytes per element in f16/bf16;
 * - 'bitmap': the bitmap tiles of the bitmap kernel (bm_*);
 * - 'bitmap stream': the bitmap stream of the Hopper unstructured kernel (ube_*), about 2 bytes
 *   per nonzero + 0.1875 per weight in f16/bf16 (ube_w*);
 * - 'pair stream': the pair stream (native/common/unstructured_stream.h, kPairFrag), 4 bytes per
 *   stored register (two adjacent weights of a row, stored where either is nonzero) + 0.125 per
 *   weight in f16/bf16, in row blocks of 128 rows; read by the Hopper unstructured kernel's ube_p*
 *   in stages of 128 columns and by the GEMM engine's ung_* in its stages of 64 (more stages:
 *   more offsets and padding);
 * - 'tc': the 16 x 32 CSR tiles of the tensor-core kernel (tc_*, native/common/tc_tiles.h),
 *   4 bytes per nonzero padded to 4 per tile, plus 4 bytes of offset per tile;
 * - 'dense': the matrix dense, zeros stored (the GEMM engine's und_*, which runs it as a dense
 *   GEMM), 2 bytes per weight in f16/bf16;
 * - 'csr': the CSR (tile_*, split_*, and every kernel on the CPU).
 */
export type SpmmForm = 'csr' | 'tc' | 'bitmap' | 'bitmap stream' | 'pair stream' | '2:4' | 'dense'

/** The form a variant's kernel reads, from its family (the name's first part): see SpmmForm. */
export function spmmVariantForm(variant: string): SpmmForm {
  const family = variant.split('_', 1)[0]
  if (/^s24[a-z]*$/.test(family)) return '2:4'
  if (family === 'bm') return 'bitmap'
  if (family === 'ube') return variant.startsWith('ube_p') ? 'pair stream' : 'bitmap stream'
  if (family === 'ung') return 'pair stream'
  if (family === 'und') return 'dense'
  if (family === 'tc') return 'tc'
  return 'csr'
}

/**
 * The variant in a CUDA SpMM kernel name, 'spmm_<dtype>_i<bits>_<variant>' (SpmmPlan's
 * KernelName, which the bench harness's `detail` of `ours` holds, e.g. 'CudaSpmm
 * spmm_f16_i16_s24e_w8_k256, 16-bit indices; 2:4 tiles, staged built once ...' ->
 * 's24e_w8_k256'), or undefined where the text names none (the CPU, an older addon).
 */
export function spmmKernelVariant(text: string | undefined): string | undefined {
  return /\bspmm_(?:f32|f16|bf16)_i(?:16|32)_([a-z][a-z0-9]*(?:_[a-z]+\d+)*)/.exec(text ?? '')?.[1]
}

/** keepSparse (spmm, spmmVariants, verify's options): absent (false) or a boolean. */
export function checkKeepSparse(v: unknown): boolean {
  if (v !== undefined && typeof v !== 'boolean') throw new UsageError('bad-option', `keepSparse must be true or false, got ${JSON.stringify(v)}`)
  return v === true
}
