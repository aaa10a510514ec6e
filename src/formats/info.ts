/**
 * `sparse info` core: per-tensor statistics of a dense or CSR input, computed tensor by
 * tensor (memory: one tensor at a time).
 */
import {MAX_COLS_16BIT_INDEX, rowLengths, type RowLengthStats} from '../sparse/csr.js'
import {csrTileStats, memorySaving, memorySizes, type MemorySizes, tileStats, type TileStats} from '../sparse/memory.js'
import {matrixShape} from '../sparse/dense-to-csr.js'
import type {DenseTensor, NamedCsr} from '../types.js'
import {expandInputs} from './inputs.js'
import {pace} from './pace.js'
import {detectFormat, isDenseFormat, openTensorSource, readCsrInput, readSp24Input, type FormatName, type UnsupportedTensor} from './sources.js'
import {type Sp24Matrix, sp24Size, sp24ToNamedCsr} from './sp24-npz.js'

export interface HistogramBin {
  /** Smallest row length in the bin (inclusive). */
  lo: number
  /** Largest row length in the bin (inclusive). */
  hi: number
  /** Number of rows whose length is in [lo, hi]. */
  count: number
}

/**
 * One tensor's statistics. Sizes (MemorySizes, src/sparse/memory.ts): the dense matrix in fp32
 * and fp16, CSR in both encodings (int32 row offsets, and the row order when one is stored),
 * the bitmap, (when 2:4) the 2:4 and the tc (16 x 32 CSR tiles) tensor-core forms; each saving
 * is against the dense matrix of the same value dtype.
 */
export interface InfoTensor extends MemorySizes {
  name: string
  /** The tensor's shape as stored. */
  shape: number[]
  /** The 2-D matrix it is treated as: [shape[0], product of the rest]. */
  rows: number
  cols: number
  /** 'dense' for .npy/.npz/.safetensors tensors, 'csr' for CSR inputs, '2:4' for a 2:4 .npz. */
  storage: 'dense' | 'csr' | '2:4'
  /** Value dtype: f32, f16, bf16, f64, or 'pattern' (.smtx: no values). */
  dtype: string
  numel: number
  /** Stored entries for CSR; nonzero entries for dense. */
  nnz: number
  /** 1 - nnz / numel (0 for an empty tensor). */
  sparsity: number
  /** Row-length statistics over the rows of the 2-D matrix (cv = std / mean). */
  rowLengths: RowLengthStats
  /** Row-length histogram: equal-width integer bins from 0 to the longest row. */
  histogram: HistogramBin[]
  /** Whether 16-bit column indices fit (cols <= 32768). */
  indices16: boolean
  /** Whether a row order (`row_indices`) is stored. */
  rowOrder: boolean
  /** A 2:4 .npz only: the tiles it holds. */
  sp24?: Sp24Info
}

/** What a 2:4 .npz holds, against dense f16. */
export interface Sp24Info {
  /** Tiles of 16 rows x 32 columns: ceil(rows / 16) x ceil(cols / 32). */
  strips: number
  ksteps: number
  /** Bytes of the values and metadata: 576 per tile. */
  bytes: number
  /** bytes / (rows x cols): 1.125 when rows and cols are multiples of 16 and 32 (padding adds to it). */
  bytesPerElement: number
  /** Dense f16 (and bf16): 2. */
  denseF16BytesPerElement: number
  /** Dense f16 bytes / bytes. */
  savingVsF16: number
}

/** One input file. */
export interface InfoResult {
  /** The input path ('-' for stdin). */
  file: string
  format: FormatName
  tensors: InfoTensor[]
  /** Tensors of unsupported dtypes (e.g. int64 buffers), not analysed. */
  skipped: UnsupportedTensor[]
  /** Over `tensors` (the total row of the text summary). */
  totals: InfoTotals
}

/**
 * What `sparse info --json` prints: one entry per input file whatever their number (a
 * consumer reads `.files[0]` for one input), and the totals over every file.
 */
export interface InfoReport {
  files: InfoResult[]
  totals: InfoTotals
}

/** Totals over described tensors (skipped ones are not counted). */
export interface InfoTotals {
  tensors: number
  numel: number
  nnz: number
  /** 1 - nnz / numel (0 when numel is 0). */
  sparsity: number
}

export interface InfoOptions {
  /** Force the input format (a --from value). */
  from?: string
  /** Histogram bins (default 10). */
  bins?: number
}

/** Equal-width integer histogram of row lengths, from 0 to the maximum. */
export function rowLengthHistogram(lengths: ArrayLike<number>, bins = 10): HistogramBin[] {
  let max = 0
  for (let i = 0; i < lengths.length; i++) if (lengths[i] > max) max = lengths[i]
  if (lengths.length === 0) return []
  const n = Math.max(1, Math.min(bins, max + 1))
  const width = Math.ceil((max + 1) / n)
  const out: HistogramBin[] = []
  for (let b = 0; b * width <= max; b++) out.push({lo: b * width, hi: Math.min(max, (b + 1) * width - 1), count: 0})
  for (let i = 0; i < lengths.length; i++) out[Math.floor(lengths[i] / width)].count++
  return out
}

function summarize(
  base: {name: string; shape: number[]; rows: number; cols: number; storage: 'dense' | 'csr' | '2:4'; dtype: string; rowOrder: boolean},
  lengths: Int32Array,
  tiles: TileStats,
  bins: number,
): InfoTensor {
  const {rows, cols, rowOrder} = base
  // The statistics straight from the lengths (rowLengthStats' formulas), with no offsets
  // array: a file may hold a million tiny tensors.
  let nnz = 0
  let sumSq = 0
  let min = Infinity
  let max = -Infinity
  for (let r = 0; r < lengths.length; r++) {
    const l = lengths[r]
    nnz += l
    sumSq += l * l
    if (l < min) min = l
    if (l > max) max = l
  }
  const numel = rows * cols
  const mean = rows === 0 ? 0 : nnz / rows
  const stats: RowLengthStats = rows === 0 ? {min: 0, max: 0, mean: 0, cv: 0} : {min, max, mean, cv: mean === 0 ? 0 : Math.sqrt(Math.max(0, sumSq / rows - mean * mean)) / mean}
  const sizes = memorySizes(rows, cols, nnz, tiles, rowOrder)
  // NOTE: fields spelled out, not `...base`: the spread was the slowest step for tiny tensors.
  return {
    name: base.name,
    shape: base.shape,
    rows,
    cols,
    storage: base.storage,
    dtype: base.dtype,
    numel,
    nnz,
    sparsity: numel === 0 ? 0 : 1 - nnz / numel,
    rowLengths: stats,
    histogram: rowLengthHistogram(lengths, bins),
    denseBytes: sizes.denseBytes,
    csrBytes: sizes.csrBytes,
    bitmapBytes: sizes.bitmapBytes,
    twoFourBytes: sizes.twoFourBytes,
    tcBytes: sizes.tcBytes,
    memorySaving: sizes.memorySaving,
    indices16: cols <= MAX_COLS_16BIT_INDEX,
    rowOrder,
  }
}

/** Statistics of a dense tensor (nonzeros per row of its 2-D view). */
export function inspectDense(t: DenseTensor, bins = 10): InfoTensor {
  const [rows, cols] = matrixShape(t.shape)
  const lengths = new Int32Array(rows)
  const d = t.data
  const half = t.dtype === 'f16' || t.dtype === 'bf16'
  for (let r = 0; r < rows; r++) {
    let n = 0
    const base = r * cols
    if (half) {
      for (let c = 0; c < cols; c++) if ((d[base + c] & 0x7fff) !== 0) n++
    } else {
      for (let c = 0; c < cols; c++) if (d[base + c] !== 0) n++
    }
    lengths[r] = n
  }
  // The forms a pruned copy would take: its nonzeros are its stored entries.
  const tiles = tileStats(rows, cols, (r, visit) => {
    const base = r * cols
    if (half) {
      for (let c = 0; c < cols; c++) if ((d[base + c] & 0x7fff) !== 0) visit(c, true)
    } else {
      for (let c = 0; c < cols; c++) if (d[base + c] !== 0) visit(c, true)
    }
  })
  return summarize({name: t.name, shape: t.shape.slice(), rows, cols, storage: 'dense', dtype: t.dtype, rowOrder: false}, lengths, tiles, bins)
}

/** Statistics of a CSR matrix. */
export function inspectCsr(named: NamedCsr, bins = 10): InfoTensor {
  const {csr} = named
  return summarize(
    {name: named.name, shape: named.shape.slice(), rows: csr.rows, cols: csr.cols, storage: 'csr', dtype: csr.values === null ? 'pattern' : csr.dtype, rowOrder: csr.rowIndices !== undefined},
    rowLengths(csr),
    csrTileStats(csr),
    bins,
  )
}

/** Statistics of a 2:4 matrix (its nonzeros, decoded) and of its tiles. */
export function inspectSp24(m: Sp24Matrix, bins = 10, label = m.name): InfoTensor {
  const named = sp24ToNamedCsr(m, label)
  const t = inspectCsr(named, bins)
  const {bytes} = sp24Size(m.rows, m.cols)
  const numel = m.rows * m.cols
  return {
    ...t,
    storage: '2:4',
    sp24: {
      strips: m.strips,
      ksteps: m.ksteps,
      bytes,
      bytesPerElement: numel === 0 ? 0 : bytes / numel,
      denseF16BytesPerElement: 2,
      // The one definition (src/sparse/memory.ts): dense of the same (16-bit) dtype over the form.
      savingVsF16: memorySaving(t.denseBytes.f16, bytes),
    },
  }
}

/** The totals of `tensors` tensors holding `numel` elements of which `nnz` are nonzero. */
export function infoTotals(tensors: number, numel: number, nnz: number): InfoTotals {
  return {tensors, numel, nnz, sparsity: numel === 0 ? 0 : 1 - nnz / numel}
}

/**
 * One or more inputs (folders expanded, see expandInputs) as `sparse info --json` prints them:
 * one InfoResult per input read, and the totals over all of them.
 */
export async function inspectInputs(paths: readonly string[], opts: InfoOptions = {}): Promise<InfoReport> {
  const files: InfoResult[] = []
  for (const p of await expandInputs(paths)) files.push(await inspectInput(p, opts))
  const sum = (k: 'tensors' | 'numel' | 'nnz') => files.reduce((a, f) => a + f.totals[k], 0)
  return {files, totals: infoTotals(sum('tensors'), sum('numel'), sum('nnz'))}
}

/** Inspect every tensor of an input file (dense or CSR). */
export async function inspectInput(path: string, opts: InfoOptions = {}): Promise<InfoResult> {
  const tensors: InfoTensor[] = []
  let numel = 0
  let nnz = 0
  const {format, skipped} = await inspectEach(path, opts, (t) => {
    tensors.push(t)
    numel += t.numel
    nnz += t.nnz
  })
  return {file: path, format, tensors, skipped, totals: infoTotals(tensors.length, numel, nnz)}
}

/**
 * Inspect an input tensor by tensor: `each` gets every tensor's statistics as soon as they
 * are computed, in file order, and nothing is kept, so a file of a million tensors is
 * described in the memory of one (what `each` keeps aside). Returns the format and the
 * tensors of unsupported dtypes. inspectInput() is this, collected into an InfoResult.
 */
export async function inspectEach(path: string, opts: InfoOptions, each: (t: InfoTensor) => void): Promise<{format: FormatName; skipped: UnsupportedTensor[]}> {
  const bins = opts.bins ?? 10
  const format = await detectFormat(path, opts.from)
  if (isDenseFormat(format)) {
    const src = await openTensorSource(path, format)
    try {
      for (const t of src.tensors) {
        const dense = await src.read(t.name)
        each(inspectDense(dense, bins))
        src.release(dense)
        await pace()
      }
      return {format, skipped: src.unsupported}
    } finally {
      await src.close()
    }
  }
  if (format === 'sp24-npz') {
    each(inspectSp24(await readSp24Input(path), bins, path === '-' ? 'stdin' : path))
    return {format, skipped: []}
  }
  for (const m of await readCsrInput(path, format)) {
    each(inspectCsr(m, bins))
    await pace()
  }
  return {format, skipped: []}
}
