/**
 * DLMC `.smtx` (the Deep Learning Matrix Collection, Gale et al.): three ASCII lines,
 *   1. `nrows, ncols, nnz`
 *   2. nrows + 1 row offsets, space separated, 0 … nnz
 *   3. nnz column indices, space separated, 0-based, ascending within a row
 * Lines 2 and 3 may end with a trailing space; line 3 is empty (or absent) when nnz = 0.
 * No values: matrices read from .smtx are pattern-only (`values: null`).
 * Counts are checked against the line lengths before anything is allocated.
 */
import {InputError} from '../errors.js'
import type {CsrMatrix} from '../types.js'
import {validateCsr} from '../sparse/validate.js'
import type {ByteSink} from './zip.js'

function bad(label: string, msg: string): InputError {
  return new InputError('bad-smtx', `${label}: ${msg}`, 'the file is not a valid DLMC .smtx (three lines: "rows, cols, nnz", row offsets, column indices)')
}

/** Parse a `.smtx` image into a pattern-only CSR matrix (validated). */
export function parseSmtx(bytes: Uint8Array, label: string): CsrMatrix {
  // Split into lines by '\n' (tolerating '\r\n'); at most three non-empty content lines.
  const lineStarts: number[] = []
  const lineEnds: number[] = []
  let start = 0
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      let end = i
      if (end > start && bytes[end - 1] === 0x0d) end--
      lineStarts.push(start)
      lineEnds.push(end)
      start = i + 1
    }
  }
  // Drop trailing blank lines.
  const isBlank = (k: number) => {
    for (let i = lineStarts[k]; i < lineEnds[k]; i++) if (bytes[i] !== 0x20 && bytes[i] !== 0x09) return false
    return true
  }
  let nLines = lineStarts.length
  while (nLines > 0 && isBlank(nLines - 1)) nLines--
  if (nLines === 0) throw bad(label, 'empty file')
  const head = new TextDecoder('latin1').decode(bytes.subarray(lineStarts[0], lineEnds[0]))
  const m = /^\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*$/.exec(head)
  if (!m) throw bad(label, `first line must be "nrows, ncols, nnz", got ${JSON.stringify(head.slice(0, 80))}`)
  const rows = Number(m[1])
  const cols = Number(m[2])
  const nnz = Number(m[3])
  for (const [what, v] of [['nrows', rows], ['ncols', cols], ['nnz', nnz]] as const) {
    if (!Number.isSafeInteger(v) || v > 0x7fffffff) throw bad(label, `${what} = ${v} exceeds the int32 range`)
  }
  if (nLines < 2) throw new InputError('truncated', `${label} is truncated: the row-offsets line is missing`, 'the file is incomplete; copy it again')
  if (nnz > 0 && nLines < 3) throw new InputError('truncated', `${label} is truncated: the column-indices line is missing (nnz = ${nnz})`, 'the file is incomplete; copy it again')
  if (nLines > 3) throw bad(label, `expected 3 lines, found ${nLines}`)
  if (cols > 0 && nnz > rows * cols) throw bad(label, `nnz = ${nnz} exceeds nrows × ncols = ${rows * cols}`)
  const rowOffsets = parseInts(bytes, lineStarts[1], lineEnds[1], rows + 1, label, 'row offsets (line 2)')
  const columnIndices = nnz === 0 && nLines < 3 ? new Int32Array(0) : parseInts(bytes, lineStarts[2], lineEnds[2], nnz, label, 'column indices (line 3)')
  const csr: CsrMatrix = {rows, cols, rowOffsets, columnIndices, values: null, dtype: 'f32'}
  validateCsr(csr, label)
  return csr
}

/** Exactly `count` non-negative integers separated by spaces/tabs in bytes[start, end). */
function parseInts(bytes: Uint8Array, start: number, end: number, count: number, label: string, what: string): Int32Array {
  // Every number takes at least one digit and one separator: a count the line cannot hold
  // is a lie, caught before allocating.
  if (count > Math.ceil((end - start + 1) / 2)) {
    throw new InputError('truncated', `${label}: ${what} should hold ${count} numbers but the line has only ${end - start} characters (truncated file or wrong header)`, 'the file is incomplete or its first line is wrong')
  }
  const out = new Int32Array(count)
  let n = 0
  let i = start
  while (i < end) {
    const c = bytes[i]
    if (c === 0x20 || c === 0x09) {
      i++
      continue
    }
    if (c < 0x30 || c > 0x39) throw bad(label, `${what}: unexpected character ${JSON.stringify(String.fromCharCode(c))} at column ${i - start + 1}`)
    let v = 0
    while (i < end && bytes[i] >= 0x30 && bytes[i] <= 0x39) {
      v = v * 10 + (bytes[i] - 0x30)
      i++
    }
    if (v > 0x7fffffff) throw bad(label, `${what}: ${v} exceeds the int32 range`)
    if (n >= count) throw bad(label, `${what}: more than the ${count} numbers the header declares`)
    out[n++] = v
    if (i < end && bytes[i] !== 0x20 && bytes[i] !== 0x09) throw bad(label, `${what}: unexpected character ${JSON.stringify(String.fromCharCode(bytes[i]))} at column ${i - start + 1}`)
  }
  if (n !== count) throw new InputError('truncated', `${label}: ${what} has ${n} numbers, expected ${count} (truncated file or wrong header)`, 'the file is incomplete or its first line is wrong')
  return out
}

/**
 * Write a CSR matrix's pattern as `.smtx` (values and row order are not stored).
 * Lines end without trailing spaces.
 */
export async function writeSmtxTo(sink: ByteSink, csr: CsrMatrix): Promise<void> {
  validateCsr(csr, 'smtx output')
  const enc = new TextEncoder()
  const nnz = csr.rowOffsets[csr.rows]
  await sink.write(enc.encode(`${csr.rows}, ${csr.cols}, ${nnz}\n`))
  await writeIntLine(sink, csr.rowOffsets)
  await writeIntLine(sink, csr.columnIndices)
}

async function writeIntLine(sink: ByteSink, a: Int32Array): Promise<void> {
  const enc = new TextEncoder()
  const chunk = 1 << 16
  for (let i = 0; i < a.length; i += chunk) {
    const part = Array.from(a.subarray(i, Math.min(a.length, i + chunk))).join(' ')
    await sink.write(enc.encode(i === 0 ? part : ' ' + part))
  }
  await sink.write(enc.encode('\n'))
}
