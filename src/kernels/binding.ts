/**
 * The one place that loads the native addon (build/Release/sparse.node) and the
 * TypeScript declaration of its kernel surface. Everything else goes through
 * `loadAddon()`. If loading fails, a DeviceError (exit 3) says what failed and how to
 * rebuild.
 *
 * Conventions of the native surface (Sputnik's names; no host copies: the native side
 * reads and writes these typed arrays in place):
 * - CSR: `rowOffsets` Int32Array(m + 1), `columnIndices` Int32Array(nnz), `values`
 *   Float32Array (f32) or Uint16Array bit patterns (f16/bf16) of nnz, optional
 *   `rowIndices` Int32Array(m) (the order in which the GPU takes rows; results are the same).
 * - Dense operands are row-major, of the same element type as `dtype`.
 * - Arguments are re-checked natively (TypeError/RangeError naming the field), but the
 *   library validates everything first (src/kernels/index.ts).
 * - GPU and CPU work runs off the JavaScript thread; the promise settles when the output
 *   array is filled. CUDA failures reject with an Error whose `code` is the CUDA error
 *   name (e.g. 'cudaErrorMemoryAllocation'); device memory is always freed.
 */
import {existsSync} from 'node:fs'
import {createRequire} from 'node:module'
import {fileURLToPath} from 'node:url'

import {DeviceError} from '../errors.js'
import type {ValueDType} from '../types.js'
import type {Device} from './types.js'

/** What `cudaInfo()` reports. Numbers are 0 and strings '' when no GPU is available. */
export interface CudaInfo {
  /** True when the addon was compiled with the CUDA kernels (nvcc was found at install). */
  built: boolean
  /** True when a CUDA device can run the kernels. */
  available: boolean
  /** Why not, when `available` is false (one line). */
  reason?: string
  /** The CUDA error name behind `reason` (e.g. 'cudaErrorInsufficientDriver'), or 'ERR_NO_CUDA'. */
  code?: string
  /** Compiled targets, e.g. 'sm_80 sm_90 compute_90' ('' in a CPU-only build). */
  targets: string
  deviceCount: number
  name: string
  smCount: number
  /** e.g. '9.0'. */
  computeCapability: string
  major?: number
  minor?: number
  /** Bytes of device memory. */
  totalMemory: number
  l2Bytes: number
  sharedMemPerBlockOptin?: number
  sharedMemPerSm?: number
  maxThreadsPerSm?: number
  clockKhz?: number
  memoryClockKhz?: number
  memoryBusWidth?: number
  /** CUDA runtime and driver versions (e.g. 13000); the driver's is 0 when none is installed. */
  runtimeVersion?: number
  driverVersion?: number
}

export type HostValues = Float32Array | Uint16Array

/** How the 2:4 streaming engine reads B at N narrower than its box (SPARSE_S24E_PAD). */
export type Stream24PadMode = 'auto' | 'all' | 'off'

/** SpMM: C[m x n] = A[m x k, CSR] * B[k x n]. */
export interface NativeSpmmArgs {
  m: number
  k: number
  n: number
  rowOffsets: Int32Array
  columnIndices: Int32Array
  values: HostValues
  rowIndices?: Int32Array
  /** k * n elements. */
  b: HostValues
  /** m * n elements, filled in place (every element written). */
  c: HostValues
  dtype: ValueDType
  device: Device
  /** CPU threads (0 or absent: all cores). */
  threads?: number
  /**
   * CUDA only: column index width on the device. Absent: 16-bit for f16/bf16 when
   * k <= 32768 (Sputnik's mixed precision), else 32-bit. 16 or 32 forces one.
   */
  indexBits?: 16 | 32
  /**
   * CUDA only: force an SpMM kernel variant (a name from `spmmVariants`, e.g.
   * 'split_v8_t2_w2', 'tile_v4_t32_x2', f32 only the deep 'tile_v4_t8_x2_u16', or, f16/bf16 only, the tensor-core 'tc_w8_s4_p4', the
   * bitmap 'bm_w4_m1_s4' and, for 2:4 matrices, 's24_w4_m1_s4'); absent or 'auto': the built-in selection.
   * A name that cannot run the problem rejects with code 'cudaErrorInvalidValue'.
   */
  variant?: string
  /**
   * CUDA only: the built-in selection leaves out the kernels that store every weight, zeros
   * included (und_*: A stored dense on the GEMM engine), so that A keeps a sparse form's memory
   * saving. A forced `variant` runs as asked.
   */
  keepSparse?: boolean
}

/** The SpMM kernel variants that can run a problem (see native/cuda/spmm/spmm.h). */
export interface SpmmVariantList {
  /** What the built-in selection picks ('' in a build without CUDA). */
  selected: string
  /** Every variant that can run the problem ([] without CUDA). */
  variants: string[]
  /** '2:4' when the plan found (or was told) that the matrix is 2:4 (with CUDA only). */
  structure?: '2:4'
}

/** The problem shape `spmmVariants` needs. */
export interface SpmmShape {
  m: number
  k: number
  n: number
  nnz: number
  dtype: ValueDType
  /** As in NativeSpmmArgs (absent: 16-bit for f16/bf16 when k <= 32768). */
  indexBits?: 16 | 32
  /** '2:4' when the caller knows the matrix is 2:4 (the 2:4 kernel's variants are listed then). */
  structure?: '2:4'
  /** As in NativeSpmmArgs: neither select nor list the kernels that store every weight (und_*). */
  keepSparse?: boolean
  /**
   * The matrix itself (its values in `dtype`: f16/bf16 bit patterns), for the plan to check
   * its structure (the 2:4 test): the result's `structure` says what it found.
   */
  rowOffsets?: Int32Array
  columnIndices?: Int32Array
  values?: Float32Array | Uint16Array
}

/** SDDMM: out[nnz] = (L[m x k] * R[n x k]^T) at the nonzeros of the mask A[m x n]. */
export interface NativeSddmmArgs {
  /** Mask rows (rows of L). */
  m: number
  /** Inner dimension (columns of L and R). */
  k: number
  /** Mask columns (rows of R). */
  n: number
  rowOffsets: Int32Array
  columnIndices: Int32Array
  rowIndices?: Int32Array
  /** m * k elements. */
  lhs: HostValues
  /** n * k elements. */
  rhs: HostValues
  /** nnz elements, filled in place. */
  out: HostValues
  dtype: ValueDType
  device: Device
  threads?: number
}

/**
 * The 2:4 GEMM family's launch model (Gemm24Model, native/common/gemm_plan.h), as
 * scripts/gpu/s24g-fit.py prints it: stage cycles of the 128- and 256-row tiles, the fixup's and
 * store's bytes a cycle (F), the fixed cost (T0) and a split's (FX0; FX3 for the cooperative one,
 * absent: not a candidate), us, and the operands' L2 bytes a cycle.
 */
export interface Gemm24ModelParams {
  S_m128_n128: number
  S_m256_n128: number
  F: number
  T0: number
  FX0: number
  L2: number
  FX3?: number
  /** The stage cycles of 64-column tiles (v53): with both, those tiles are candidates too. */
  S_m128_n64?: number
  S_m256_n64?: number
  /** The stage cycles of the 128 x 256 tile with A read by wgmma from shared memory (`_ss1`, v55): given, it is a candidate too. */
  S_m128_n256?: number
  /** The stage cycles of the 256 x 192 tile with A read by wgmma from shared memory (`_ss1`, v56): given, it is a candidate too. */
  S_m256_n192?: number
}

/** The kernel functions of the addon (src: native/binding/kernels_binding.cc and its per-op files). */
export interface NativeKernels {
  /** Never throws; `available: false` with a reason when there is no usable GPU. */
  cudaInfo(): CudaInfo
  spmm(args: NativeSpmmArgs): Promise<void>
  /** SpMM kernel variants for a shape (synchronous; no GPU work). */
  spmmVariants(shape: SpmmShape): SpmmVariantList
  /**
   * The variant-name grammar: one regular expression (the whole name, unanchored) per SpMM
   * kernel family, from the families' table entries ([] in a build without CUDA).
   */
  spmmVariantGrammar(): string[]
  /**
   * The variant a kernel family parses from `name`, written back by that family: `name` itself
   * when it is well formed, '' when no family parses it ('' always in a build without CUDA).
   * No GPU needed.
   */
  spmmVariantParse(name: string): string
  /**
   * Runs the SpMM once on CUDA (filling `c`), then times each of `variants`: `reps`
   * launches (default 20) between two events after 3 warm-up launches, operands hot in L2.
   * Resolves to ms per launch, one per variant. For ranking variants (tuning), not reports.
   */
  spmmTime(args: Omit<NativeSpmmArgs, 'device' | 'threads' | 'variant'> & {variants: string[]; reps?: number}): Promise<Float64Array>
  sddmm(args: NativeSddmmArgs): Promise<void>
  /** Float64 reference of spmm (multithreaded C++, double accumulation, inputs decoded exactly). m * n values. */
  spmmReference(args: Omit<NativeSpmmArgs, 'c' | 'device' | 'indexBits'>): Promise<Float64Array>
  /** Float64 reference of sddmm. nnz values. */
  sddmmReference(args: Omit<NativeSddmmArgs, 'out' | 'device'>): Promise<Float64Array>
  /**
   * The tensor-core SpMM's tiles of a CSR matrix with 16-bit values (native/common/tc_tiles.h),
   * as the kernels build them on the host; for tests and inspection. Throws a RangeError on
   * a repeated or out-of-range column.
   */
  tcFormat(args: {m: number; k: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Uint16Array}): {offsets: Uint32Array; entries: Uint32Array}
  /** The tensor-core SDDMM's chunk starts of a CSR mask (m x (ceil(n / 256) + 1)); for tests. */
  sddmmChunkStarts(args: {m: number; n: number; rowOffsets: Int32Array; columnIndices: Int32Array}): Int32Array
  /**
   * The bitmap SpMM's tiles of a CSR matrix with 16-bit values (native/common/bitmap_tiles.h):
   * per 16 x 16 tile, four 64-bit bitmaps in mma-fragment order, the half-block starts and the
   * packed values, from a 16-byte boundary; `offsets` in 16-byte units. Throws a RangeError on
   * a repeated or out-of-range column.
   */
  bitmapFormat(args: {m: number; k: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Uint16Array}): {
    offsets: Uint32Array
    data: Uint32Array
    strips: number
    ktiles: number
  }
  /**
   * The 2:4 SpMM's tiles (native/common/sparse24.h): values in mma.sp fragment order (256 per
   * 16 x 32 tile) and metadata (16 words per tile). Throws a RangeError naming the first group
   * of four columns with more than two nonzeros ("not 2:4: row R, columns C..C+3 ...").
   */
  sp24Format(args: {m: number; k: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Uint16Array}): {
    values: Uint16Array
    meta: Uint32Array
    strips: number
    ksteps: number
  }
  /**
   * The 2:4 tiles staged for the streaming engine (native/common/sparse24.h, StageSp24Tiles): row
   * blocks of `strips` strips, K stages of `steps` k-steps, each stage one contiguous run of
   * 576-byte tiles (values, then metadata); tiles past the matrix zero with metadata 0x44444444.
   */
  sp24Staged(args: {
    m: number
    k: number
    rowOffsets: Int32Array
    columnIndices: Int32Array
    values: Uint16Array
    strips: number
    steps: number
  }): Uint8Array
  /**
   * The 2:4 runs the GEMM engine's `_ss` kernels read (native/common/sparse24.h, StageSp24Runs):
   * one run of 9216 bytes per 128 rows and K stage of 64 columns, run (u, ks) at
   * (u * ceil(ksteps / 2) + ks) * 9216; in it row r's 32 compressed values at 64 r, 16-byte chunk
   * c at 16 (c ^ ((r >> 1) & 3)), then the 8 strips' metadata (2 k-steps of 16 words each). The
   * units, ceil(m / 128), are padded to a multiple of unitMultiple (1-8; the addon pads to its
   * tile's 1 or 2). Throws a RangeError as sp24Format does, or for unitMultiple out of range.
   */
  sp24Runs(args: {
    m: number
    k: number
    rowOffsets: Int32Array
    columnIndices: Int32Array
    values: Uint16Array
    unitMultiple: number
  }): Uint8Array
  /**
   * The streaming engine's launch plan (native/common/stream_plan.h) for a list of rowBlocks x
   * kstages on a device holding resident[c - 1] clusters of c blocks at once (c = 1..8):
   * cluster > 1 split-K in clusters (grid = rowBlocks x cluster), else stream-K over grid
   * blocks (grid = rowBlocks: one block per row block).
   */
  streamPlan(args: {rowBlocks: number; kstages: number; resident: Int32Array}): {grid: number; cluster: number}
  /**
   * Whether the selection prefers the streaming engine's 2:4 kernel (s24e) to the mma.sp one
   * (s24) for an m x k 2:4 matrix at N = n, where both can run (native/common/stream_plan.h).
   */
  stream24Wins(args: {m: number; k: number; n: number}): boolean
  /**
   * The row-block height (64 or 128 rows: s24e_w4_k256 or s24e_w8_k256) the selection runs the
   * streaming engine's 2:4 kernel at for an m x k matrix at N = n, from the 64-row kernel's plan
   * on a device holding resident[c - 1] clusters of c of its blocks at once, with B padded as
   * SPARSE_S24E_PAD's mode `pad` says (default 'auto', as the addon's; a padded launch is its box's N)
   * (native/common/stream_plan.h, Stream24Rows64At).
   */
  stream24Rows(args: {m: number; k: number; n: number; resident: Int32Array; pad?: Stream24PadMode}): 64 | 128
  /**
   * The columns (16, 32 or 64) the streaming engine's 2:4 kernel of `rows` rows a block (64:
   * s24e_w4_k256; 128, the default: s24e_w8_k256) copies B (K x N) into first at N = n under
   * SPARSE_S24E_PAD's mode `pad` ('auto', the default: N 33-63 not a multiple of 8, and N 17-31
   * not a multiple of 8 on the 64-row kernel; 'all': every N 9-63 narrower than its box; 'off':
   * never), or 0 where it reads B as it is (native/common/stream_plan.h, Stream24PadColumns).
   */
  stream24Pad(args: {n: number; pad?: Stream24PadMode; rows?: 64 | 128}): 0 | 16 | 32 | 64
  /**
   * The stages past the ring whose weights the streaming engine's 2:4 kernel asks into L2 ahead of
   * its shared-memory copies on a launch of plan {grid, cluster} (streamPlan's) over rowBlocks row
   * blocks of kstages K stages at N = n, on a GPU whose DRAM streams dramGBps (memory clock x bus
   * width; 0 or absent: unknown): 0 from 4000 GB/s (the H200: 4917), else 1, except 0 on stream-K
   * plans (cluster 0, grid below rowBlocks) with more than 25 stages a block (rowBlocks x kstages /
   * grid) at N > 16 (native/common/stream_plan.h, Stream24L2Ahead; the addon's launches read the
   * device's bandwidth; SPARSE_S24E_L2_AHEAD forces a count in the launches).
   */
  stream24L2Ahead(args: {grid: number; cluster: number; rowBlocks: number; kstages: number; n: number; dramGBps?: number}): 0 | 1
  /**
   * Whether the selection runs an unstructured f16/bf16 m x k matrix with nnz nonzeros at N = n
   * on the family ube (compute capability 9.0; N <= 64 and density at least 15 % at N < 8, 7.5 %
   * at N 8-16, 5 % above), on which form (`pairs`: the pair stream, where sparsity is at least 60 %; else the
   * bitmap stream), and the consumer warps of that form's kernel at N (the pair stream: 8; the
   * bitmap stream: 8 for N <= 32, else 4; 16 x warps rows a row block):
   * native/common/stream_plan.h, UnstStreamWins, UnstPairsWins and UnstStreamWarps.
   */
  unstStream(args: {m: number; k: number; nnz: number; n: number}): {wins: boolean; pairs: boolean; warps: 4 | 8}
  /**
   * The bitmap stream the family ube prepares (native/common/unstructured_stream.h, kBitmapFrag;
   * row blocks of `warps` strips, stages of 128 columns): its bytes (the stages' runs and the
   * offset table), its densest stage's values and the ring capacity prepare picks for it (16,
   * 32, 88, 144 or 256 values per 16 x 16 tile). Throws a RangeError on a repeated or
   * out-of-range column.
   */
  unstBitmapStream(args: {m: number; k: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Uint16Array; warps: 4 | 8}): {
    bytes: number
    maxStageWords: number
    capacity: number
  }
  /**
   * The pair stream the family ube prepares for ube_p8 (native/common/unstructured_stream.h,
   * kPairFrag; row blocks of 8 strips, stages of 128 columns): its bytes, its densest stage's
   * stored registers and the ring capacity prepare picks for it (16, 32, 72, 100 or 128 stored
   * registers per 16 x 16 tile). With kstage 64: the one the GEMM engine's family ung prepares
   * (stages of 64 columns; capacity 120 or 128, 0 where none holds it: common/gemm_plan.h,
   * UnGemmCapacity). Throws a RangeError on a repeated or out-of-range column.
   */
  unstPairStream(args: {m: number; k: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Uint16Array; kstage?: 64 | 128}): {
    bytes: number
    maxStageWords: number
    capacity: number
  }
  /**
   * The 2:4 tile height (128 or 256 rows) and width (64 or 128 columns) the selection runs on
   * the Hopper GEMM engine (s24g, N >= 128) on a GPU of `sms` SMs, and the pieces by K its
   * ragged last wave's tiles are cut into (below 2: whole tiles); native/common/gemm_plan.h. Gemm24Pick's height and
   * decomposition by the launch model, with the library's constants (what the selection runs
   * unless SPARSE_S24G_MODEL is set) or `model`'s (the constants scripts/gpu/s24g-fit.py fits);
   * with model 'off', v12's Gemm24Rows and the owner's split.
   */
  gemm24Rows(args: {m: number; k: number; n: number; sms: number; nnz?: number; model?: Gemm24ModelParams | 'off'}): {
    rows: number
    /** 64 only where the model has the 64-column tiles' stage cycles, 256 or 192 where it has those `_ss1` tiles'. */
    cols: number
    split: number
    /** 0 whole tiles, 2 the split with the owner adding, 3 the split reduced together; 2 with model 'off'. */
    streamK: number
    denseEnough: boolean
    /** With the model on: Gemm24Us of each shape weighed (m256_n128, m256_n128_sk2, ...), us. */
    estimates?: Record<string, number>
    /** The model's constants used; null with model 'off'. */
    model: Gemm24ModelParams | null
  }
  /**
   * The models the selection weighs unstructured A with at N >= 128 (native/common/gemm_plan.h):
   * the pair stream's (ung) and A stored dense's (und) tile width, ragged-wave split and modelled
   * cycles on a GPU of `sms` SMs, UnstGemmWins' estimates (ung's and the CSR kernels', us) and
   * both rules. und's rule below 2^31 multiply-adds runs with the library's fitted constants (what
   * the selection runs unless SPARSE_UND_SMALL is set), with undSmall's, or not at all with 'off';
   * the result's undSmall gives the constants used (null: off). scripts/gpu/und-dlmc.py mirrors it.
   */
  unstGemmPlan(args: {m: number; k: number; n: number; nnz: number; sms: number; undSmall?: {fixedUs: number; usPerCycle: number} | 'off'}): {
    ung: {nTile: 128 | 256; split: boolean; cycles: number}
    und: {nTile: 128 | 256; split: boolean; cycles: number}
    ungUs: number
    csrUs: number
    unstGemmWins: boolean
    undGemmWins: boolean
    undSmall: {fixedUs: number; usPerCycle: number} | null
  }
  /** The nonzeros of 2:4 tiles as CSR (zeros left out); a RangeError on metadata mma.sp rejects. */
  sp24ToCsr(args: {m: number; k: number; values: Uint16Array; meta: Uint32Array}): {
    rowOffsets: Int32Array
    columnIndices: Int32Array
    values: Uint16Array
  }
}

/** Where the addon is: $SPARSE_ADDON when set (tests of other builds), else build/Release. */
export function addonPath(): string {
  return process.env.SPARSE_ADDON || fileURLToPath(new URL('../../build/Release/sparse.node', import.meta.url))
}

let cached: unknown
let failure: DeviceError | undefined

/**
 * Loads the addon once. `Extra` lets other parts (the bench harness) declare the functions
 * they add to the same module. Throws DeviceError (exit 3) when it cannot be loaded.
 */
export function loadAddon<Extra extends object = object>(): NativeKernels & Extra {
  if (cached) return cached as NativeKernels & Extra
  if (failure) throw failure
  const path = addonPath()
  const rebuild = 'rebuild it with `npm rebuild` (or `npx node-gyp rebuild` in the package folder); the build needs a C++ compiler, and nvcc for the GPU kernels'
  if (!existsSync(path)) {
    failure = new DeviceError('addon-missing', `the native addon is not built (${path} does not exist)`, rebuild)
    throw failure
  }
  try {
    cached = createRequire(import.meta.url)(path)
  } catch (error) {
    const why = (error as Error).message.split('\n')[0]
    failure = new DeviceError('addon-load-failed', `the native addon ${path} failed to load: ${why}`, rebuild)
    throw failure
  }
  return cached as NativeKernels & Extra
}

/** cudaInfo() through the addon; a missing addon reads as "no GPU" with its reason. */
export function cudaInfo(): CudaInfo {
  let addon: NativeKernels
  try {
    addon = loadAddon()
  } catch (error) {
    const e = error as DeviceError
    return {built: false, available: false, reason: e.message, code: e.code, targets: '', deviceCount: 0, name: '', smCount: 0, computeCapability: '', totalMemory: 0, l2Bytes: 0}
  }
  return addon.cudaInfo()
}
