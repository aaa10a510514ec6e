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
import type {ByteSource} from './byte-source.js'
import {safeText} from './limits.js'
import {pace} from './pace.js'
import type {ByteSink} from './zip.js'

function bad(label: string, msg: string): InputError {
  return new InputError('bad-smtx', `${label}: ${msg}`, 'the file is not a valid DLMC .smtx (three lines: "rows, cols, nnz", row offsets, column indices)')
}

/** The first line is short ("2147483647, 2147483647, 2147483647"); more than this is not .smtx. */
const MAX_FIRST_LINE = 64 << 10
/** Bytes read (and parsed) at a time. */
const CHUNK = 4 << 20

interface Header {
  rows: number
  cols: number
  nnz: number
  /** Bytes of line 1 including its '\n'. */
  length: number
}

/** Line 1 from the first bytes of the file; null when they hold no complete line yet. */
function parseHeader(first: Uint8Array, size: number, label: string): Header {
  let nl = first.indexOf(0x0a)
  if (nl < 0 && first.length < size) {
    throw bad(label, `first line must be "nrows, ncols, nnz", but the first ${first.length} bytes hold no line break`)
  }
  if (nl < 0) nl = first.length
  let lineEnd = nl
  if (lineEnd > 0 && first[lineEnd - 1] === 0x0d) lineEnd--
  const head = new TextDecoder('latin1').decode(first.subarray(0, lineEnd))
  if (size === 0 || (nl >= size && /^[ \t]*$/.test(head))) throw bad(label, 'empty file')
  const m = /^\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*$/.exec(head)
  if (!m) throw bad(label, `first line must be "nrows, ncols, nnz", got ${JSON.stringify(safeText(head, 80))}`)
  const rows = Number(m[1])
  const cols = Number(m[2])
  const nnz = Number(m[3])
  for (const [what, v] of [['nrows', rows], ['ncols', cols], ['nnz', nnz]] as const) {
    if (!Number.isSafeInteger(v) || v > 0x7fffffff) throw bad(label, `${what} = ${v} exceeds the int32 range`)
  }
  if (cols > 0 && nnz > rows * cols) throw bad(label, `nnz = ${nnz} exceeds nrows × ncols = ${rows * cols}`)
  return {rows, cols, nnz, length: Math.min(nl + 1, size)}
}

/**
 * The rest of the file (lines 2 and 3) as a state machine fed chunk by chunk: memory is the
 * two index arrays, whatever the size of the file (over 4 GiB too).
 */
class SmtxBody {
  private line = 0 // 0: row offsets, 1: column indices, 2+: extra lines
  private column = 0
  private value = 0
  private inNumber = false
  private count = 0
  private lineHasContent = false
  private pendingCr = false
  private lastContentLine = -1
  readonly rowOffsets: Int32Array
  readonly columnIndices: Int32Array

  constructor(
    private readonly h: Header,
    private readonly label: string,
  ) {
    this.rowOffsets = new Int32Array(h.rows + 1)
    this.columnIndices = new Int32Array(h.nnz)
  }

  private what(): string {
    return this.line === 0 ? 'row offsets (line 2)' : 'column indices (line 3)'
  }

  private target(): Int32Array {
    return this.line === 0 ? this.rowOffsets : this.columnIndices
  }

  private endNumber(): void {
    if (!this.inNumber) return
    this.inNumber = false
    if (this.line >= 2) return
    if (this.value > 0x7fffffff) throw bad(this.label, `${this.what()}: ${this.value} exceeds the int32 range`)
    const out = this.target()
    if (this.count >= out.length) throw bad(this.label, `${this.what()}: more than the ${out.length} numbers the header declares`)
    out[this.count++] = this.value
  }

  private endLine(): void {
    this.endNumber()
    if (this.lineHasContent) this.lastContentLine = this.line
    // A blank line 3 is checked at the end (it may be a trailing blank line when nnz = 0).
    if (this.line < 2 && (this.line === 0 || this.lineHasContent) && this.count !== this.target().length) {
      throw new InputError('truncated', `${this.label}: ${this.what()} has ${this.count} numbers, expected ${this.target().length} (truncated file or wrong header)`, 'the file is incomplete or its first line is wrong')
    }
    this.line++
    this.count = 0
    this.column = 0
    this.lineHasContent = false
  }

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i]
      if (this.pendingCr) {
        this.pendingCr = false
        if (c !== 0x0a) throw this.unexpected(0x0d)
      }
      if (c === 0x0a) {
        this.endLine()
        continue
      }
      this.column++
      if (c >= 0x30 && c <= 0x39) {
        if (this.line >= 2) this.contentLine()
        if (!this.inNumber) {
          this.inNumber = true
          this.value = 0
        }
        this.value = this.value * 10 + (c - 0x30)
        this.lineHasContent = true
        continue
      }
      if (c === 0x20 || c === 0x09) {
        this.endNumber()
        continue
      }
      if (c === 0x0d) {
        this.pendingCr = true
        continue
      }
      if (this.line >= 2) this.contentLine()
      throw this.unexpected(c)
    }
  }

  /** Content on a 4th line (or later): too many lines. */
  private contentLine(): never {
    throw bad(this.label, `expected 3 lines, found at least ${this.line + 2}`)
  }

  private unexpected(c: number): InputError {
    return bad(this.label, `${this.what()}: unexpected character ${JSON.stringify(safeText(String.fromCharCode(c)))} at column ${this.column}`)
  }

  end(): CsrMatrix {
    if (this.pendingCr) this.pendingCr = false
    if (this.column > 0 || this.inNumber || this.lineHasContent) this.endLine()
    const {rows, cols, nnz} = this.h
    // Lines that were never reached: the row offsets are required, the indices when nnz > 0.
    if (this.line === 0) throw new InputError('truncated', `${this.label} is truncated: the row-offsets line is missing`, 'the file is incomplete; copy it again')
    if (this.line === 1 && nnz > 0) throw new InputError('truncated', `${this.label} is truncated: the column-indices line is missing (nnz = ${nnz})`, 'the file is incomplete; copy it again')
    if (this.line >= 2 && nnz > 0 && this.count === 0 && this.lastContentLine < 1) {
      throw new InputError('truncated', `${this.label} is truncated: the column-indices line is missing (nnz = ${nnz})`, 'the file is incomplete; copy it again')
    }
    const csr: CsrMatrix = {rows, cols, rowOffsets: this.rowOffsets, columnIndices: this.columnIndices, values: null, dtype: 'f32'}
    validateCsr(csr, this.label)
    return csr
  }
}

/**
 * Check the counts of line 1 against the bytes that follow, before allocating: every
 * number takes at least one digit and one separator.
 */
function checkRoom(h: Header, remaining: number, label: string): void {
  const offsets = h.rows + 1
  if (remaining === 0) throw new InputError('truncated', `${label} is truncated: the row-offsets line is missing`, 'the file is incomplete; copy it again')
  if (2 * offsets - 1 > remaining) {
    throw new InputError('truncated', `${label}: row offsets (line 2) should hold ${offsets} numbers but only ${remaining} bytes follow line 1 (truncated file or wrong header)`, 'the file is incomplete or its first line is wrong')
  }
  if (h.nnz > 0 && 2 * offsets + 1 > remaining) {
    throw new InputError('truncated', `${label} is truncated: the column-indices line is missing (nnz = ${h.nnz})`, 'the file is incomplete; copy it again')
  }
  if (h.nnz > 0 && 2 * offsets + 2 * h.nnz - 1 > remaining) {
    throw new InputError('truncated', `${label}: column indices (line 3) should hold ${h.nnz} numbers but only ${Math.max(0, remaining - 2 * offsets)} bytes follow line 2 (truncated file or wrong header)`, 'the file is incomplete or its first line is wrong')
  }
}

/** Parse a `.smtx` image into a pattern-only CSR matrix (validated). */
export function parseSmtx(bytes: Uint8Array, label: string): CsrMatrix {
  const h = parseHeader(bytes.subarray(0, Math.min(bytes.length, MAX_FIRST_LINE)), bytes.length, label)
  checkRoom(h, bytes.length - h.length, label)
  const body = new SmtxBody(h, label)
  body.push(bytes.subarray(h.length))
  return body.end()
}

/**
 * Read a `.smtx` from a byte source in chunks: line 1 is checked from the first bytes (a
 * 3 GB file that is not .smtx is refused at once), the counts against the file size, and
 * the rest is parsed as it streams in, yielding to the event loop between chunks.
 */
export async function readSmtxSource(src: ByteSource): Promise<CsrMatrix> {
  const label = src.label
  const first = await src.read(0, Math.min(src.size, MAX_FIRST_LINE))
  const h = parseHeader(first, src.size, label)
  checkRoom(h, src.size - h.length, label)
  const body = new SmtxBody(h, label)
  for (let pos = h.length; pos < src.size; ) {
    const len = Math.min(CHUNK, src.size - pos)
    body.push(await src.read(pos, len))
    pos += len
    await pace()
  }
  return body.end()
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
