/**
 * Sizes of a sparse matrix in each of our forms, and "memory saving", defined once for every
 * command (`prune`, `info`, `bench`):
 *
 *   memory saving = bytes of the dense matrix in the same value dtype / bytes of the form.
 *
 * So CSR with fp32 values is compared with dense fp32, and CSR with fp16/bf16 values (and the
 * tensor-core forms, which hold 16-bit values) with dense fp16/bf16. The saving then measures
 * what sparsity buys, not what halving the precision buys.
 *
 * Forms:
 * - CSR (`csrBytes` in ./csr.ts): values + column indices + int32 row offsets (+ the row order).
 * - Bitmap (native/common/bitmap_tiles.h, the bitmap tensor-core SpMM): per 16 x 16 tile a
 *   40-byte header (four 64-bit bitmaps and eight starts) and its stored values as 16-bit
 *   words, padded to 16 bytes; plus a 4-byte offset per tile and one more (the total). Every
 *   tile is stored, empty ones too (48 bytes).
 * - 2:4 (native/common/sparse24.h, the sparse-tensor-core SpMM), only for a 2:4 matrix (at most
 *   two nonzeros in every group of four columns of a row): the matrix padded to 16-row strips
 *   and 32-column steps, each 16 x 32 tile 256 16-bit values + 16 32-bit metadata words
 *   (576 bytes: 1.125 bytes per padded element).
 * - Tensor-core CSR tiles (native/common/tc_tiles.h, the tensor-core SpMM tc_*): per 16 x 32
 *   tile its stored entries as 32-bit words (16-bit value, 16-bit position), padded to a
 *   multiple of 4 (an empty tile holds none); plus a 4-byte offset per tile and one more (the
 *   total). Every tile has its offset, empty ones too.
 * - Bitmap stream (native/common/unstructured_stream.h, kBitmapFrag: the Hopper SpMM ube_*): the
 *   matrix in row blocks of 16 x warps rows (warps 8: 128 rows, for N <= 32; 4: 64 rows, N 33-64)
 *   and K stages of 128 columns; per stage a 48-byte record per 16 x 16 tile (every tile, past M
 *   and K too) and its nonzeros' values (+0 and -0 left out) as 16-bit words, padded to 16 bytes;
 *   plus a 4-byte offset per stage and one more. About 2 bytes per nonzero + 0.1875 per weight.
 *   (The kernel's prepared operand adds its fixup workspace and counters: the harness's detail.)
 * - Pair stream (the same file, kPairFrag: ube_p8, and the GEMM engine's ung_*): row blocks of
 *   128 rows; per stage a 32-byte record per 16 x 16 tile (every tile, past M and K too) and the
 *   stored registers, 4 bytes each (a register is two adjacent columns of a row, stored where
 *   either is nonzero), padded to 16 bytes; plus a 4-byte offset per stage and one more. ube_p8
 *   cuts K in stages of 128 columns (`pairStream`), ung_* in the GEMM engine's stages of 64
 *   (`pairStreamGemm`: more stages, so more offsets and more padding).
 */
import {csrBytes, memorySaving} from './csr.js'

export {memorySaving}

/** The definition as the reports print it. */
export const SAVING_NOTE = 'memory saving = bytes of the dense matrix in the same value dtype / bytes of the form'

export const BITMAP_TILE = 16
export const BITMAP_HEADER_BYTES = 40
export const TWO_FOUR_TILE_ROWS = 16
export const TWO_FOUR_TILE_COLS = 32
/** 256 16-bit values + 16 32-bit metadata words per 16 x 32 tile. */
export const TWO_FOUR_TILE_BYTES = 2 * 256 + 4 * 16
/** Columns of a tc tile; its 16 rows are the bitmap tiles' strips (tileStats relies on both). */
export const TC_TILE_COLS = 32

export interface MemorySizes {
  /** The dense matrix with fp32 values (4 bytes each) and with fp16/bf16 values (2 bytes each). */
  denseBytes: {f32: number; f16: number}
  /** CSR with fp32 values + int32 indices, and with 16-bit values + 16-bit indices (int32 beyond 32768 columns). */
  csrBytes: {f32: number; f16: number}
  /** The bitmap tensor-core form (16-bit values). */
  bitmapBytes: number
  /** The 2:4 form (16-bit values); null when the matrix is not 2:4. */
  twoFourBytes: number | null
  /** The tensor-core CSR tiles (tc_*, 16-bit values). */
  tcBytes: number
  /** Dense of the same value dtype over each form: f32 = CSR f32, f16 = CSR f16, bitmap, twoFour and tc against dense f16. */
  memorySaving: {f32: number; f16: number; bitmap: number; twoFour: number | null; tc: number}
}

/** The sparsity structure the tensor-core forms need: per-tile counts (bitmap, tc) and whether the matrix is 2:4. */
export interface TileStats {
  bitmapBytes: number
  /** Bytes of the tensor-core CSR tiles (tc_*), every stored entry counted. */
  tcBytes: number
  twoFour: boolean
  /** Bytes of the bitmap stream (ube_w*) at 8 and 4 consumer warps (128- and 64-row blocks), nonzeros counted. */
  bitmapStream?: BitmapStreamBytes
  /** Bytes of the pair stream (ube_p8: 128-row blocks), stored registers counted (two adjacent columns of a row, either nonzero). */
  pairStream?: number
  /** Bytes of the same pair stream cut in the GEMM engine's 64-column stages (ung_*: 128-row blocks). */
  pairStreamGemm?: number
}

export interface BitmapStreamBytes {
  w8: number
  w4: number
}

/** Columns of a bitmap-stream stage, and the bytes of its record per 16 x 16 tile. */
export const STREAM_STAGE_COLS = 128
export const STREAM_TILE_RECORD_BYTES = 48
/** The pair stream's record per 16 x 16 tile (a word per lane quad), and its bytes per stored register. */
export const PAIR_TILE_RECORD_BYTES = 32
export const PAIR_REGISTER_BYTES = 4
/**
 * Columns of the GEMM engine's K stage (native/cuda/gemm/gemm_engine.cuh, kKTile; its family
 * ung_* cuts the pair stream so: common/gemm_plan.h, kUnGemmKStage).
 */
export const GEMM_STAGE_COLS = 64

/**
 * Bytes of a stream's fixed part: per stage (row blocks of 16 x `warps` rows by `stageCols`
 * columns) a record per tile, past M and K too, as the encoder writes them; and the offsets.
 */
function streamFixedBytes(rows: number, cols: number, warps: 4 | 8, stageCols: number, recordBytes: number): number {
  const stages = Math.ceil(rows / (BITMAP_TILE * warps)) * Math.ceil(cols / stageCols)
  const tiles = warps * (stageCols / BITMAP_TILE)
  return stages * tiles * recordBytes + 4 * (stages + 1)
}

/** Bytes of the bitmap stream's fixed part (tile records, offsets) for row blocks of 16 x `warps` rows. */
export function bitmapStreamFixedBytes(rows: number, cols: number, warps: 4 | 8, recordBytes = STREAM_TILE_RECORD_BYTES): number {
  return streamFixedBytes(rows, cols, warps, STREAM_STAGE_COLS, recordBytes)
}

/** Bytes of the pair stream's fixed part (tile records, offsets): row blocks of 128 rows. */
export function pairStreamFixedBytes(rows: number, cols: number): number {
  return bitmapStreamFixedBytes(rows, cols, 8, PAIR_TILE_RECORD_BYTES)
}

/** Bytes of the fixed part of the pair stream in the GEMM engine's cut (ung_*): 128-row blocks, 64-column stages. */
export function pairStreamGemmFixedBytes(rows: number, cols: number): number {
  return streamFixedBytes(rows, cols, 8, GEMM_STAGE_COLS, PAIR_TILE_RECORD_BYTES)
}

/**
 * Nonzeros (or the pair stream's stored registers) per K stage of the current row block (only the
 * stages touched are kept and visited), summed into the values' bytes of the stream, `unitBytes`
 * each, each stage padded to 16 bytes, at flush.
 */
class StageCounts {
  values = 0
  private readonly counts: Uint32Array | null
  private readonly map: Map<number, number> | null
  private readonly touched: number[] = []
  constructor(kstages: number, inArray: boolean, private readonly unitBytes = 2) {
    this.counts = inArray ? new Uint32Array(kstages) : null
    this.map = inArray ? null : new Map()
  }
  add(ks: number, count = 1): void {
    if (this.counts) {
      if (this.counts[ks] === 0) this.touched.push(ks)
      this.counts[ks] += count
      return
    }
    const c = this.map!.get(ks) ?? 0
    if (c === 0) this.touched.push(ks)
    this.map!.set(ks, c + count)
  }
  /** Ends a row block: its stages' values counted, and passed on to `into` (the taller row block's). */
  flush(into?: StageCounts): void {
    for (const ks of this.touched) {
      const c = this.counts ? this.counts[ks] : this.map!.get(ks)!
      this.values += (this.unitBytes * c + 15) & ~15
      into?.add(ks, c)
      if (this.counts) this.counts[ks] = 0
    }
    this.touched.length = 0
    this.map?.clear()
  }
}

/** Bytes of the 2:4 form of a rows x cols matrix. */
export function twoFourBytes(rows: number, cols: number): number {
  return Math.ceil(rows / TWO_FOUR_TILE_ROWS) * Math.ceil(cols / TWO_FOUR_TILE_COLS) * TWO_FOUR_TILE_BYTES
}

/** Bytes of one bitmap tile holding `count` values. */
export function bitmapTileBytes(count: number): number {
  return (BITMAP_HEADER_BYTES + 2 * count + 15) & ~15
}

/** Bytes of one tensor-core CSR tile's entries: 4 per entry, padded to 4 entries (one 16-byte load). */
export function tcTileBytes(count: number): number {
  return 4 * (Math.ceil(count / 4) * 4)
}

/**
 * Walks a matrix's entries row by row (rows in natural order) and sizes its tensor-core forms.
 * `entries(row, visit)` calls visit(col, isNonzero) for each stored entry of the row: the bitmap
 * and tc forms store every entry, while the 2:4 test counts nonzeros only (as the kernels do).
 * `maxEntries` bounds how many entries `entries` visits in all (a CSR matrix's nnz): the
 * scratch arrays never outgrow it, so a 1 x 6,000,000 matrix with one entry costs kilobytes.
 */
export function tileStats(
  rows: number,
  cols: number,
  entries: (row: number, visit: (col: number, nonzero: boolean) => void) => void,
  maxEntries = rows * cols,
): TileStats {
  const ktiles = Math.ceil(cols / BITMAP_TILE)
  const strips = Math.ceil(rows / BITMAP_TILE)
  // Linear in rows + entries, never in rows x cols / 256: a tile with no entry holds its
  // header only, so the empty tiles are counted in one product and only the touched ones are
  // visited (a 2^20 x 2^20 matrix has 2^32 tiles). The tile counts live in an array when a
  // strip has at most 2^22 tiles and no more than 2^16 or the entries, in a map otherwise: the
  // memory follows the entries, not the columns.
  const arrayCap = Math.max(1 << 16, maxEntries)
  const empty = bitmapTileBytes(0)
  const dense = ktiles <= Math.min(1 << 22, arrayCap)
  // Made at the first entry (the maps too): a file may hold a million empty tensors.
  let counts = null as Uint32Array | null
  let sparseCounts = null as Map<number, number> | null
  const touchedTiles: number[] = []
  // The 2:4 test's per-row group counts: an array up to 2^24 groups (16 MB) within the same
  // cap, a map beyond.
  const groupsInArray = Math.ceil(cols / 4) <= Math.min(1 << 24, arrayCap)
  let groupArray = null as Uint8Array | null
  let groupMap = null as Map<number, number> | null
  const touchedGroups: number[] = []
  let bytes = 4 * (strips * ktiles + 1) + strips * ktiles * empty
  // The tc tiles (16 x 32) share the bitmap tiles' strips and each is the bitmap tiles 2j and
  // 2j + 1 of its strip, so they are sized from the same counts; an empty one is its offset only.
  let tcBytes = 4 * (strips * Math.ceil(cols / TC_TILE_COLS) + 1)
  const count = (t: number): number => (t >= ktiles ? 0 : counts ? counts[t] : (sparseCounts!.get(t) ?? 0))
  // The bitmap stream's nonzeros per stage, in 64-row blocks, each passed on to its 128-row block
  // at the block's end. Arrays while a row block's stages are few against the entries.
  const kstages = Math.ceil(cols / STREAM_STAGE_COLS)
  const stagesInArray = kstages <= Math.min(1 << 22, Math.max(1 << 12, maxEntries))
  let rows64 = null as StageCounts | null
  let rows128 = null as StageCounts | null
  // The pair stream's stored registers per stage in 128-row blocks: a row's distinct column
  // pairs (col >> 1) holding a nonzero, marked per row as the 2:4 test's groups are. Counted
  // twice, by 128-column stages (ube_p8) and by the GEMM engine's 64-column ones (ung_*); a
  // pair never straddles a stage of either.
  let pairs128 = null as StageCounts | null
  const gemmStages = Math.ceil(cols / GEMM_STAGE_COLS)
  const gemmStagesInArray = gemmStages <= Math.min(1 << 22, Math.max(1 << 12, maxEntries))
  let pairsGemm = null as StageCounts | null
  const pairsInArray = Math.ceil(cols / 2) <= Math.min(1 << 24, arrayCap)
  let pairArray = null as Uint8Array | null
  let pairSet = null as Set<number> | null
  const touchedPairs: number[] = []
  let twoFour = true
  for (let s = 0; s < strips; s++) {
    for (let row = s * BITMAP_TILE; row < Math.min(rows, (s + 1) * BITMAP_TILE); row++) {
      entries(row, (col, nonzero) => {
        if (nonzero) {
          rows64 ??= new StageCounts(kstages, stagesInArray)
          rows64.add(Math.floor(col / STREAM_STAGE_COLS))
          const p = col >> 1
          let first: boolean
          if (pairsInArray) {
            pairArray ??= new Uint8Array(Math.ceil(cols / 2))
            first = pairArray[p] === 0
            if (first) {
              pairArray[p] = 1
              touchedPairs.push(p)
            }
          } else {
            pairSet ??= new Set()
            first = !pairSet.has(p)
            if (first) pairSet.add(p)
          }
          if (first) {
            pairs128 ??= new StageCounts(kstages, stagesInArray, PAIR_REGISTER_BYTES)
            pairs128.add(Math.floor(col / STREAM_STAGE_COLS))
            pairsGemm ??= new StageCounts(gemmStages, gemmStagesInArray, PAIR_REGISTER_BYTES)
            pairsGemm.add(Math.floor(col / GEMM_STAGE_COLS))
          }
        }
        const t = col >> 4
        if (dense) {
          counts ??= new Uint32Array(ktiles)
          if (counts[t]++ === 0) touchedTiles.push(t)
        } else {
          sparseCounts ??= new Map()
          const c = sparseCounts.get(t) ?? 0
          if (c === 0) touchedTiles.push(t)
          sparseCounts.set(t, c + 1)
        }
        if (nonzero && twoFour) {
          const g = col >> 2
          let n: number
          if (groupsInArray) {
            groupArray ??= new Uint8Array(Math.ceil(cols / 4))
            if (groupArray[g] === 0) touchedGroups.push(g)
            n = ++groupArray[g]
          } else {
            groupMap ??= new Map()
            n = (groupMap.get(g) ?? 0) + 1
            groupMap.set(g, n)
          }
          if (n > 2) twoFour = false
        }
      })
      if (groupArray) for (const g of touchedGroups) groupArray[g] = 0
      touchedGroups.length = 0
      groupMap?.clear()
      if (pairArray) for (const p of touchedPairs) pairArray[p] = 0
      touchedPairs.length = 0
      pairSet?.clear()
    }
    for (const t of touchedTiles) {
      const c = count(t)
      bytes += bitmapTileBytes(c) - empty
      // Each tc tile once: at its even half, or at its odd half when the even one is empty.
      const other = count(t ^ 1)
      if ((t & 1) === 0 || other === 0) tcBytes += tcTileBytes(c + other)
    }
    if (counts) for (const t of touchedTiles) counts[t] = 0
    touchedTiles.length = 0
    sparseCounts?.clear()
    if (rows64 && (s % 4 === 3 || s === strips - 1)) {
      rows128 ??= new StageCounts(kstages, stagesInArray)
      rows64.flush(rows128)
      if (s % 8 === 7 || s === strips - 1) rows128.flush()
    }
    if (s % 8 === 7 || s === strips - 1) {
      pairs128?.flush()
      pairsGemm?.flush()
    }
  }
  const bitmapStream = {
    w8: bitmapStreamFixedBytes(rows, cols, 8) + (rows128?.values ?? 0),
    w4: bitmapStreamFixedBytes(rows, cols, 4) + (rows64?.values ?? 0),
  }
  const pairStream = pairStreamFixedBytes(rows, cols) + (pairs128?.values ?? 0)
  const pairStreamGemm = pairStreamGemmFixedBytes(rows, cols) + (pairsGemm?.values ?? 0)
  return {bitmapBytes: bytes, tcBytes, twoFour, bitmapStream, pairStream, pairStreamGemm}
}

/** Tile statistics of a CSR matrix; stored entries whose 16-bit or fp32 value is +-0 are not nonzeros for the 2:4 test. */
export function csrTileStats(csr: {rows: number; cols: number; rowOffsets: Int32Array; columnIndices: Int32Array; values: Float32Array | Uint16Array | null}): TileStats {
  const {rowOffsets, columnIndices, values} = csr
  const half = values instanceof Uint16Array
  return tileStats(
    csr.rows,
    csr.cols,
    (row, visit) => {
      for (let i = rowOffsets[row]; i < rowOffsets[row + 1]; i++) {
        const nonzero = values === null ? true : half ? (values[i] & 0x7fff) !== 0 : values[i] !== 0
        visit(columnIndices[i], nonzero)
      }
    },
    rowOffsets[csr.rows],
  )
}

/** Sizes in every form and the savings, from the shape, nnz and the tile statistics. */
export function memorySizes(rows: number, cols: number, nnz: number, tiles: TileStats, withRowOrder = true): MemorySizes {
  const dense = {f32: rows * cols * 4, f16: rows * cols * 2}
  const csr = {f32: csrBytes(rows, cols, nnz, 'f32', withRowOrder), f16: csrBytes(rows, cols, nnz, 'f16', withRowOrder)}
  const tf = tiles.twoFour ? twoFourBytes(rows, cols) : null
  return {
    denseBytes: dense,
    csrBytes: csr,
    bitmapBytes: tiles.bitmapBytes,
    twoFourBytes: tf,
    tcBytes: tiles.tcBytes,
    memorySaving: {
      f32: memorySaving(dense.f32, csr.f32),
      f16: memorySaving(dense.f16, csr.f16),
      bitmap: memorySaving(dense.f16, tiles.bitmapBytes),
      twoFour: tf === null ? null : memorySaving(dense.f16, tf),
      tc: memorySaving(dense.f16, tiles.tcBytes),
    },
  }
}
