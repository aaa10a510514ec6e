/**
 * `sparse reorder` core: read a CSR input (CSR .npz, .smtx, CSR directory, '-'), store
 * Sputnik's row order in each matrix, and report how the processing order changes the
 * row lengths that run side by side.
 */
import {stat} from 'node:fs/promises'

import {UsageError} from '../errors.js'
import {CsrDirectoryWriter, readCsrInput, writeCsrNpz} from '../formats/index.js'
import {checkOutputPath, isDirectoryPath} from '../formats/output.js'
import {rowLengthStats, type RowLengthStats} from '../sparse/csr.js'
import {randomValues} from '../sparse/random.js'
import type {CsrMatrix, NamedCsr} from '../types.js'
import {rowSwizzle} from './swizzle.js'

export interface ReorderFileOptions {
  /** Output: a CSR .npz for a single matrix ('-' = stdout), a directory for a CSR directory. */
  output?: string
  force?: boolean
  /** Force the input format (csr-npz, smtx, csr-dir). */
  from?: string
  /** Rows that run side by side, for the spread figure (default 4). */
  groupSize?: number
  /** Seed of the values filled into pattern-only (.smtx) matrices when writing (default 0). */
  seed?: number
}

export interface RowLength {
  row: number
  length: number
}

export interface OrderFigures {
  /** The first rows in processing order, with their lengths. */
  firstRows: RowLength[]
  /** Mean over consecutive groups of `groupSize` rows in processing order of (longest - shortest). */
  groupSpread: number
}

export interface ReorderedTensor {
  name: string
  shape: number[]
  rows: number
  cols: number
  nnz: number
  /** Row-length statistics (unchanged by the order). */
  rowLengths: RowLengthStats
  /** Whether the input already stored a row order. */
  hadRowOrder: boolean
  /** Processing order before (the stored order, else natural) and after the swizzle. */
  before: OrderFigures
  after: OrderFigures
  /** True when values were filled from the seeded generator (pattern-only input). */
  valuesFilled: boolean
  file?: string
}

export interface ReorderFileResult {
  input: string
  output: string | null
  outputKind: 'npz' | 'dir' | null
  groupSize: number
  tensors: ReorderedTensor[]
  notes: string[]
}

const FIRST_ROWS = 8

/** Figures of one processing order (`order` undefined = natural order). */
export function orderFigures(csr: CsrMatrix, order: Int32Array | undefined, groupSize: number): OrderFigures {
  const len = (i: number) => {
    const r = order ? order[i] : i
    return csr.rowOffsets[r + 1] - csr.rowOffsets[r]
  }
  const firstRows: RowLength[] = []
  for (let i = 0; i < Math.min(FIRST_ROWS, csr.rows); i++) firstRows.push({row: order ? order[i] : i, length: len(i)})
  let spreadSum = 0
  let groups = 0
  for (let g = 0; g < csr.rows; g += groupSize) {
    let lo = Infinity
    let hi = -Infinity
    for (let i = g; i < Math.min(csr.rows, g + groupSize); i++) {
      const l = len(i)
      if (l < lo) lo = l
      if (l > hi) hi = l
    }
    spreadSum += hi - lo
    groups++
  }
  return {firstRows, groupSpread: groups === 0 ? 0 : spreadSum / groups}
}

export async function reorderFile(input: string, options: ReorderFileOptions = {}): Promise<ReorderFileResult> {
  const groupSize = options.groupSize ?? 4
  if (!Number.isInteger(groupSize) || groupSize < 1) {
    throw new UsageError('bad-group-size', `group size must be a positive integer, got ${groupSize}`)
  }
  const output = options.output
  await checkOutputPath(output, options.force)
  const inputIsDir = input !== '-' && (await stat(input).then((s) => s.isDirectory(), () => false))
  const matrices = await readCsrInput(input, options.from)
  const tensors: ReorderedTensor[] = []
  const out: NamedCsr[] = []
  const notes: string[] = []
  for (const m of matrices) {
    const {csr} = m
    const order = rowSwizzle(csr.rowOffsets, csr.rows)
    let values = csr.values
    const valuesFilled = values === null
    if (values === null && output !== undefined) values = randomValues(csr.rowOffsets[csr.rows], csr.dtype, options.seed ?? 0)
    out.push({name: m.name, shape: m.shape, csr: {...csr, values, rowIndices: order}})
    tensors.push({
      name: m.name,
      shape: m.shape,
      rows: csr.rows,
      cols: csr.cols,
      nnz: csr.rowOffsets[csr.rows],
      rowLengths: rowLengthStats(csr),
      hadRowOrder: csr.rowIndices !== undefined,
      before: orderFigures(csr, csr.rowIndices, groupSize),
      after: orderFigures(csr, order, groupSize),
      valuesFilled: valuesFilled && output !== undefined,
    })
  }
  if (tensors.some((t) => t.valuesFilled)) {
    notes.push(`pattern-only input: values filled with seeded normal values (seed ${options.seed ?? 0}), as a CSR .npz needs values`)
  }
  let outputKind: ReorderFileResult['outputKind'] = null
  if (output !== undefined) {
    const writeOpts = {force: options.force, inputs: [input]}
    // A CSR directory makes a directory; so does any -o ending in '/'.
    if (inputIsDir || isDirectoryPath(output)) {
      if (output === '-') throw new UsageError('dir-to-stdout', 'a CSR directory cannot go to stdout', 'give a directory with -o')
      const dir = await CsrDirectoryWriter.open(output, writeOpts)
      try {
        for (const [i, named] of out.entries()) tensors[i].file = (await dir.add(named)).file
        await dir.commit({source: input, reordered: true})
      } catch (error) {
        await dir.abort()
        throw error
      }
      outputKind = 'dir'
    } else {
      await writeCsrNpz(out[0], output, writeOpts)
      tensors[0].file = output
      outputKind = 'npz'
    }
  } else {
    notes.push('no -o given: nothing written (report only)')
  }
  return {input, output: outputKind ? output! : null, outputKind, groupSize, tensors, notes}
}

