/**
 * SciPy-compatible CSR `.npz` (what `scipy.sparse.save_npz` writes and `load_npz` opens):
 *
 *   data      values, nnz: '<f4' (f32) or '<f2' (f16); bf16 as '<u2' bit patterns (see `dtype`)
 *   indices   column indices, nnz, '<i4' (read: '<i4' or '<i8')
 *   indptr    row offsets, rows + 1, '<i4' (read: '<i4' or '<i8')
 *   shape     (rows, cols), '<i8'
 *   format    'csr', written as '<U3' (SciPy writes '|S3'; both are read)
 * and our optional extras, which SciPy ignores:
 *   row_indices   the row order (Sputnik's row swizzle), rows, '<i4'
 *   dtype         'bfloat16' when `data` holds bf16 bits as '<u2' (NumPy has no bfloat16;
 *                 SciPy then sees uint16 values: view them with ml_dtypes or `<< 16` to f32)
 *   tensor_shape  the original tensor's shape when it is not (rows, cols) ('<i8'),
 *                 e.g. a 4-D convolution weight stored as its [out, in*kh*kw] GEMM operand
 *
 * Reading always runs validateCsr. Float64 `data` is read as f32.
 */
import {InputError, UsageError} from '../errors.js'
import type {CsrMatrix, NamedCsr, ValueDType} from '../types.js'
import {matrixShape} from '../sparse/dense-to-csr.js'
import {validateCsr} from '../sparse/validate.js'
import type {ByteSource} from './byte-source.js'
import {MAX_INDEX, safeText} from './limits.js'
import {describeDescr, npyDataBytes, type NpyRaw} from './npy.js'
import {NpzArchive, type NpzArray, writeNpzTo} from './npz.js'
import type {ByteSink} from './zip.js'

/** Members that mark an `.npz` as a SciPy sparse matrix. */
export const CSR_MEMBERS = ['data', 'indices', 'indptr', 'shape'] as const

export interface CsrNpzWriteOptions {
  /** Deflate the members (like save_npz's default); off by default for speed. */
  compress?: boolean
}

function bad(label: string, msg: string, suggestion = 'the file is not a valid SciPy CSR .npz; re-create it with scipy.sparse.save_npz or `sparse convert`'): InputError {
  return new InputError('bad-csr-npz', `${label}: ${msg}`, suggestion)
}

/** Is this archive a SciPy sparse matrix (has data, indices, indptr, shape)? */
export function isCsrArchive(npz: NpzArchive): boolean {
  const names = new Set(npz.members.map((m) => m.name))
  return CSR_MEMBERS.every((n) => names.has(n))
}

/**
 * Integers of an integer array (int8 … int64, uint8 … uint64) as an Int32Array. Values of
 * wider types are range-checked against [0, max]; int32 data is returned as a view, and its
 * range is left to validateCsr (or checked here when `checkInt32` is set).
 */
function toInt32(raw: NpyRaw, label: string, what: string, checkInt32 = false, max = MAX_INDEX, fail: BadFn = bad): Int32Array {
  const m = /^(?:[<=]([iu])([248])|\|([iu])(1))$/.exec(raw.descr)
  if (!m) throw fail(label, `${what} has dtype ${describeDescr(raw.descr)}, expected int32 or int64`)
  const bytes = npyDataBytes(raw)
  const n = raw.numel
  const kind = m[1] ?? m[3]
  const size = Number(m[2] ?? m[4])
  const outOfRange = (i: number, v: number | bigint) =>
    fail(
      label,
      v > max
        ? `${what}[${i}] = ${v} is beyond the int32 range sparse uses for CSR (rows, columns and nnz must be at most ${max})`
        : `${what}[${i}] = ${v} is negative`,
    )
  let out: Int32Array
  if (kind === 'i' && size === 4) {
    out = new Int32Array(bytes.buffer, bytes.byteOffset, n)
    if (checkInt32) for (let i = 0; i < n; i++) if (out[i] < 0 || out[i] > max) throw outOfRange(i, out[i])
  } else {
    out = new Int32Array(n)
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let i = 0; i < n; i++) {
      let v: number | bigint
      if (size === 8) v = kind === 'i' ? dv.getBigInt64(i * 8, true) : dv.getBigUint64(i * 8, true)
      else if (size === 4) v = dv.getUint32(i * 4, true)
      else if (size === 2) v = kind === 'i' ? dv.getInt16(i * 2, true) : dv.getUint16(i * 2, true)
      else v = kind === 'i' ? dv.getInt8(i) : dv.getUint8(i)
      if (v < 0 || v > max) throw outOfRange(i, v)
      out[i] = Number(v)
    }
  }
  return out
}

/** Makes the InputError of a malformed member: (file label, message). */
export type BadFn = (label: string, msg: string) => InputError

/**
 * Non-negative integers of an integer member (int8 … int64, uint8 … uint64) as an
 * Int32Array, each checked against [0, MAX_INDEX]. For other `.npz` layouts (the 2:4 file).
 */
export function readNpyInts(raw: NpyRaw, label: string, what: string, fail: BadFn = bad): Int32Array {
  return toInt32(raw, label, what, true, MAX_INDEX, fail)
}

/** The string of a one-element string member ('|S…' or '<U…'). */
export function readNpyString(raw: NpyRaw, label: string, what: string, fail: BadFn = bad): string {
  return readString(raw, label, what, fail)
}

/** A one-element string array ('|S…' or '<U…'). */
function readString(raw: NpyRaw, label: string, what: string, fail: BadFn = bad): string {
  const bytes = npyDataBytes(raw)
  if (raw.numel !== 1) throw fail(label, `${what} must hold one string`)
  if (/^\|S\d+$/.test(raw.descr)) return new TextDecoder('latin1').decode(bytes).replace(/\0+$/, '')
  if (/^[<=]U\d+$/.test(raw.descr)) {
    const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
    let s = ''
    for (const c of u32) {
      if (c > 0x10ffff) throw fail(label, `${what} holds an invalid character code ${c}`)
      if (c !== 0) s += String.fromCodePoint(c)
    }
    return s
  }
  throw fail(label, `${what} has dtype ${describeDescr(raw.descr)}, expected a string`)
}

/** Read a CSR `.npz` from a byte source (the archive must already be known to be CSR). */
export async function readCsrNpz(src: ByteSource, name: string): Promise<NamedCsr> {
  const npz = await NpzArchive.open(src)
  try {
    return await readCsrArchive(npz, name)
  } finally {
    await npz.close()
  }
}

export async function readCsrArchive(npz: NpzArchive, name: string): Promise<NamedCsr> {
  const label = npz.src.label
  if (!isCsrArchive(npz)) {
    throw bad(label, `not a SciPy sparse .npz (members: ${safeText(npz.members.map((m) => m.name).join(', '), 120)}; expected data, indices, indptr, shape)`)
  }
  const has = (n: string) => npz.members.some((m) => m.name === n)
  if (has('format')) {
    const format = readString(await npz.readRaw('format'), label, 'format')
    if (format !== 'csr') {
      throw bad(label, `holds a SciPy '${safeText(format, 20)}' matrix; only CSR is supported`, "convert it in SciPy with m.tocsr() before save_npz")
    }
  }
  const shapeArr = toInt32(await npz.readRaw('shape'), label, 'shape', true)
  if (shapeArr.length !== 2) throw bad(label, `shape has ${shapeArr.length} entries, expected 2`)
  const rows = shapeArr[0]
  const cols = shapeArr[1]
  // Each array must be 1-D: say so, rather than compare counts that may even agree.
  for (const n of ['data', 'indices', 'indptr'] as const) {
    const h = npz.member(n).header
    if (h.shape.length !== 1) throw bad(label, `${n} must be a 1-D array, got shape (${h.shape.join(', ')})`)
  }
  const indptrRaw = npz.member('indptr').header
  if (indptrRaw.numel !== rows + 1) throw bad(label, `indptr has ${indptrRaw.numel} entries, expected rows + 1 = ${rows + 1}`)
  const rowOffsets = toInt32(await npz.readRaw('indptr'), label, 'indptr')
  const columnIndices = toInt32(await npz.readRaw('indices'), label, 'indices')
  const dataRaw = await npz.readRaw('data')
  let dtype: ValueDType
  let values: Float32Array | Uint16Array
  const tag = has('dtype') ? readString(await npz.readRaw('dtype'), label, 'dtype') : undefined
  const bytes = npyDataBytes(dataRaw)
  if (tag !== undefined && tag !== 'bfloat16') throw bad(label, `unknown dtype tag '${safeText(tag, 20)}' (only 'bfloat16' is defined)`)
  if (tag === 'bfloat16') {
    if (dataRaw.descr !== '<u2') throw bad(label, `dtype is 'bfloat16' but data is ${describeDescr(dataRaw.descr)}, expected uint16 bits`)
    dtype = 'bf16'
    values = new Uint16Array(bytes.buffer, bytes.byteOffset, dataRaw.numel)
  } else if (dataRaw.descr === '<f4') {
    dtype = 'f32'
    values = new Float32Array(bytes.buffer, bytes.byteOffset, dataRaw.numel)
  } else if (dataRaw.descr === '<f2') {
    dtype = 'f16'
    values = new Uint16Array(bytes.buffer, bytes.byteOffset, dataRaw.numel)
  } else if (dataRaw.descr === '<f8') {
    dtype = 'f32'
    values = Float32Array.from(new Float64Array(bytes.buffer, bytes.byteOffset, dataRaw.numel))
  } else {
    throw new InputError('unsupported-dtype', `${label}: CSR values of dtype ${describeDescr(dataRaw.descr)} are not supported; expected float32, float16 or float64`, "convert in SciPy with m.astype('float32')")
  }
  if (dataRaw.shape.length !== 1 || columnIndices.length !== dataRaw.numel) {
    throw bad(label, `data has ${dataRaw.numel} entries but indices has ${columnIndices.length}`)
  }
  const csr: CsrMatrix = {rows, cols, rowOffsets, columnIndices, values, dtype}
  if (has('row_indices')) csr.rowIndices = toInt32(await npz.readRaw('row_indices'), label, 'row_indices')
  let shape = [rows, cols]
  if (has('tensor_shape')) {
    const raw = await npz.readRaw('tensor_shape')
    if (raw.shape.length !== 1) throw bad(label, 'tensor_shape must be a list of dimensions')
    const ts = Array.from(toInt32(raw, label, 'tensor_shape', true))
    // The CSR must be the tensor's 2-D view: [shape[0], product of the rest].
    const [r, c] = matrixShape(ts)
    if (r !== rows || c !== cols) {
      throw bad(label, `tensor_shape (${ts.join(', ')}) is a ${r}x${c} matrix, but the CSR shape is ${rows}x${cols}`)
    }
    shape = ts
  }
  try {
    validateCsr(csr, label)
  } catch (error) {
    if (error instanceof InputError && /not sorted|duplicate/.test(error.message)) {
      throw new InputError(error.code, error.message, 'in SciPy, call m.sum_duplicates() (it also sorts the indices) before save_npz')
    }
    throw error
  }
  return {name, shape, csr}
}

// ---------------------------------------------------------------------------------------
// Writing

/** The arrays of a CSR `.npz` for a matrix (no copies of the big arrays). */
export function csrNpzArrays(named: NamedCsr): NpzArray[] {
  const {csr, shape} = named
  if (csr.values === null) {
    throw new UsageError('pattern-only', `${named.name}: a pattern-only matrix has no values to store in a CSR .npz`, 'fill its values first (randomValues from the seeded generator, or `sparse convert --seed`)')
  }
  const arrays: NpzArray[] = [
    {name: 'data', descr: csr.dtype === 'f32' ? '<f4' : csr.dtype === 'f16' ? '<f2' : '<u2', shape: [csr.values.length], data: csr.values},
    {name: 'indices', descr: '<i4', shape: [csr.columnIndices.length], data: csr.columnIndices},
    {name: 'indptr', descr: '<i4', shape: [csr.rowOffsets.length], data: csr.rowOffsets},
    {name: 'format', descr: '<U3', shape: [], data: Uint32Array.from([0x63, 0x73, 0x72])},
    {name: 'shape', descr: '<i8', shape: [2], data: BigInt64Array.from([BigInt(csr.rows), BigInt(csr.cols)])},
  ]
  if (csr.rowIndices) arrays.push({name: 'row_indices', descr: '<i4', shape: [csr.rowIndices.length], data: csr.rowIndices})
  if (csr.dtype === 'bf16') {
    const tag = 'bfloat16'
    arrays.push({name: 'dtype', descr: `<U${tag.length}`, shape: [], data: Uint32Array.from(tag, (c) => c.codePointAt(0)!)})
  }
  const is2d = shape.length === 2 && shape[0] === csr.rows && shape[1] === csr.cols
  if (!is2d) arrays.push({name: 'tensor_shape', descr: '<i8', shape: [shape.length], data: BigInt64Array.from(shape, (d) => BigInt(d))})
  return arrays
}

/** Write a CSR `.npz` to a sink (validates first). */
export async function writeCsrNpzTo(sink: ByteSink, named: NamedCsr, opts: CsrNpzWriteOptions = {}): Promise<void> {
  validateCsr(named.csr, named.name)
  await writeNpzTo(sink, csrNpzArrays(named), opts.compress ?? false)
}
