/**
 * NumPy `.npy` (format versions 1.0, 2.0 and 3.0).
 *
 * Reading: our own strict parser validates the header (magic, version, the Python dict
 * literal, dtype, order, shape) and checks the data length against the shape *before*
 * anything is allocated; npyjs then gives typed-array views of the data. Dense tensors may
 * be float32, float16 or float64, little-endian, C order; anything else is an InputError
 * naming the dtype. Lower-level `parseNpy` also exposes integer/string arrays for the
 * members of a SciPy CSR `.npz`.
 *
 * Writing: float32 / float16 (and the integer and string arrays a CSR `.npz` needs),
 * header padded to a multiple of 64 bytes as NumPy does.
 */
import {parse as npyjsParse} from 'npyjs'

import {InputError} from '../errors.js'
import type {DenseDType, DenseTensor, HostArray} from '../types.js'
import {safeText} from './limits.js'

export const NPY_MAGIC = Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]) // \x93NUMPY

/** A parsed `.npy`: the header fields plus the raw little-endian data bytes (exact length). */
export interface NpyRaw {
  /** NumPy's descr string, e.g. '<f4', '|S3', '<U3'. */
  descr: string
  shape: number[]
  fortranOrder: boolean
  /** Bytes of one element. */
  itemSize: number
  /** Product of the shape. */
  numel: number
  /** Offset of the data from the start of the file. */
  dataOffset: number
  /** The whole file; data is bytes.subarray(dataOffset). */
  bytes: Uint8Array
}

const FLOAT_DESCR: Record<string, DenseDType> = {f4: 'f32', f2: 'f16', f8: 'f64'}

/** A human name for a NumPy descr: '<i8' -> 'int64', '|O' -> 'object', ... */
export function describeDescr(descr: string): string {
  const m = /^([<>|=]?)([a-zA-Z])(\d*)$/.exec(descr)
  if (!m) return `'${safeText(descr, 40)}'`
  const [, , kind, n] = m
  const bits = Number(n) * 8
  switch (kind) {
    case 'f':
      return `float${bits}`
    case 'i':
      return `int${bits}`
    case 'u':
      return `uint${bits}`
    case 'b':
      return 'bool'
    case 'c':
      return `complex${bits}`
    case 'O':
      return 'object'
    case 'U':
      return `unicode string (${descr})`
    case 'S':
      return `byte string (${descr})`
    case 'V':
      return `void/structured (${descr})`
    case 'M':
      return `datetime64 (${descr})`
    case 'm':
      return `timedelta64 (${descr})`
    default:
      return `'${safeText(descr, 40)}'`
  }
}

function npyError(label: string, msg: string, suggestion = 'the file is not a valid .npy; re-export it with numpy.save'): InputError {
  return new InputError('bad-npy', `${label}: ${msg}`, suggestion)
}

/**
 * Parse and validate an `.npy` image. `bytes` must be the whole file (or `.npz` member).
 * Throws InputError on wrong magic, a malformed header, big-endian data, a shape that does
 * not match the byte length (truncation or trailing garbage).
 */
export function parseNpy(bytes: Uint8Array, label: string): NpyRaw {
  const h = parseNpyHeader(bytes, label)
  const expected = h.numel * h.itemSize
  const available = bytes.length - h.dataOffset
  if (available < expected) {
    throw new InputError(
      'truncated',
      `${label} is truncated: shape (${h.shape.join(', ')}) of ${describeDescr(h.descr)} needs ${expected} data bytes but the file has ${available}`,
      'the file is incomplete; save it again',
    )
  }
  if (available > expected) {
    throw npyError(label, `${available - expected} unexpected bytes after the data (shape (${h.shape.join(', ')}) needs ${expected})`)
  }
  return {...h, bytes}
}

/** The header alone (from a prefix of the file): everything in NpyRaw but the bytes. */
export type NpyHeader = Omit<NpyRaw, 'bytes'>

/**
 * Parse and validate an `.npy` header from the first bytes of the file (at least the
 * whole header). Does not check the data length; parseNpy does.
 */
export function parseNpyHeader(bytes: Uint8Array, label: string): NpyHeader {
  if (bytes.length < 10 || !NPY_MAGIC.every((b, i) => bytes[i] === b)) {
    throw npyError(label, 'not an .npy file (wrong magic bytes; expected \\x93NUMPY)', 'pass a file written by numpy.save')
  }
  const major = bytes[6]
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let headerLen: number
  let headerStart: number
  if (major === 1) {
    headerLen = dv.getUint16(8, true)
    headerStart = 10
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new InputError('truncated', `${label} is truncated inside its header`, 'the file is incomplete; save it again')
    headerLen = dv.getUint32(8, true)
    headerStart = 12
  } else {
    throw npyError(label, `unsupported .npy format version ${major}.${bytes[7]}`)
  }
  const dataOffset = headerStart + headerLen
  if (dataOffset > bytes.length) {
    throw new InputError('truncated', `${label} is truncated: its header claims ${headerLen} bytes but only ${bytes.length - headerStart} follow`, 'the file is incomplete; save it again')
  }
  const headerText = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(headerStart, dataOffset))
  const header = parseHeaderDict(headerText, label)
  const descr = header.descr
  const m = /^([<>|=])([a-zA-Z])(\d+)$/.exec(descr)
  let itemSize: number
  if (m) {
    itemSize = Number(m[3])
    if (m[2] === 'U') itemSize *= 4
    if (m[1] === '>' && itemSize > 1) {
      throw new InputError('unsupported-dtype', `${label}: big-endian data (${descr}, ${describeDescr(descr)}) is not supported`, "convert it with numpy: a.astype('<f4') then numpy.save")
    }
    if (itemSize === 0) throw new InputError('unsupported-dtype', `${label}: dtype ${describeDescr(descr)} has zero-byte elements`, 'save a numeric float32/float16/float64 array')
  } else if (descr === '|O' || descr === 'O') {
    throw new InputError('unsupported-dtype', `${label}: object arrays are not supported (dtype object)`, 'save a numeric float32/float16/float64 array')
  } else {
    throw new InputError('unsupported-dtype', `${label}: unsupported dtype ${describeDescr(descr)}`, 'save a numeric float32/float16/float64 array')
  }
  let numel = 1
  for (const d of header.shape) {
    numel *= d
    if (!Number.isSafeInteger(numel)) throw npyError(label, `shape (${header.shape.join(', ')}) is too large`)
  }
  if (!Number.isSafeInteger(numel * itemSize)) throw npyError(label, `shape (${header.shape.join(', ')}) of ${describeDescr(descr)} is too large`)
  return {descr, shape: header.shape, fortranOrder: header.fortranOrder, itemSize, numel, dataOffset}
}

/**
 * Headers longer than this are refused. NumPy itself refuses headers over 10,000 bytes
 * unless told otherwise (`max_header_size`); a longer one can only be padding or a huge
 * shape, and is read whole only up to this size.
 */
export const MAX_NPY_HEADER = 16 << 20

/**
 * Where the data of an `.npy` starts, from its first 12 bytes (fewer if the file is
 * shorter): the header's exact length, so that exactly the header is read next, however
 * long it is (up to MAX_NPY_HEADER). Throws like parseNpyHeader on a wrong magic or version.
 */
export function npyDataOffset(first: Uint8Array, label: string): number {
  if (first.length < 10 || !NPY_MAGIC.every((b, i) => first[i] === b)) {
    throw npyError(label, 'not an .npy file (wrong magic bytes; expected \\x93NUMPY)', 'pass a file written by numpy.save')
  }
  const major = first[6]
  const dv = new DataView(first.buffer, first.byteOffset, first.byteLength)
  let offset: number
  if (major === 1) offset = 10 + dv.getUint16(8, true)
  else if (major === 2 || major === 3) {
    if (first.length < 12) throw new InputError('truncated', `${label} is truncated inside its header`, 'the file is incomplete; save it again')
    offset = 12 + dv.getUint32(8, true)
  } else throw npyError(label, `unsupported .npy format version ${major}.${first[7]}`)
  if (offset > MAX_NPY_HEADER) {
    throw npyError(label, `its header claims ${offset} bytes, more than the ${MAX_NPY_HEADER} bytes sparse reads (NumPy itself refuses more than 10000 by default)`)
  }
  return offset
}

/** The dense dtype of a descr, or null when it is not one we read as a dense tensor. */
export function denseDtypeOfDescr(descr: string): DenseDType | null {
  const m = /^([<=|])f(\d)$/.exec(descr)
  return m ? (FLOAT_DESCR[`f${m[2]}`] ?? null) : null
}

interface HeaderDict {
  descr: string
  fortranOrder: boolean
  shape: number[]
}

/**
 * Parse NumPy's header, a Python dict literal such as
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`. Strict: exactly the three
 * keys, string / bool / tuple-of-ints values. A structured dtype (a list) is rejected.
 */
export function parseHeaderDict(text: string, label: string): HeaderDict {
  let i = 0
  const s = text
  const fail = (what: string): never => {
    throw npyError(label, `malformed header (${what}): ${JSON.stringify(s.trim().slice(0, 120))}`)
  }
  const ws = () => {
    while (i < s.length && /\s/.test(s[i])) i++
  }
  const expect = (c: string) => {
    ws()
    if (s[i] !== c) fail(`expected '${c}' at ${i}`)
    i++
  }
  const str = (): string => {
    ws()
    const q = s[i]
    if (q !== "'" && q !== '"') fail(`expected a string at ${i}`)
    const end = s.indexOf(q, i + 1)
    if (end < 0) fail('unterminated string')
    const out = s.slice(i + 1, end)
    i = end + 1
    return out
  }
  const value = (key: string): unknown => {
    ws()
    if (s[i] === "'" || s[i] === '"') return str()
    if (s.startsWith('True', i)) {
      i += 4
      return true
    }
    if (s.startsWith('False', i)) {
      i += 5
      return false
    }
    if (s[i] === '(') {
      i++
      const dims: number[] = []
      for (;;) {
        ws()
        if (s[i] === ')') {
          i++
          return dims
        }
        const m = /^\d+L?/.exec(s.slice(i, i + 32))
        if (!m) fail(`expected a dimension at ${i}`)
        const d = Number(m![0].replace('L', ''))
        if (!Number.isSafeInteger(d)) fail(`dimension ${m![0]} out of range`)
        dims.push(d)
        i += m![0].length
        ws()
        if (s[i] === ',') i++
        else if (s[i] !== ')') fail(`expected ',' or ')' at ${i}`)
      }
    }
    if (s[i] === '[') {
      // NumPy writes a structured dtype's descr as a list; a list anywhere else is malformed.
      if (key === 'descr') throw new InputError('unsupported-dtype', `${label}: structured (record) dtypes are not supported`, 'save a plain float32/float16/float64 array')
      fail(`${safeText(key, 20)} is a list; NumPy writes ${key === 'shape' ? 'the shape as a tuple, e.g. (2, 2)' : 'a string, a bool or a tuple here'}`)
    }
    return fail(`unexpected value at ${i}`)
  }
  expect('{')
  const dict: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (;;) {
    ws()
    if (s[i] === '}') {
      i++
      break
    }
    const key = str()
    expect(':')
    if (key in dict) fail(`key ${safeText(key, 20)} appears twice`)
    dict[key] = value(key)
    ws()
    if (s[i] === ',') i++
    else if (s[i] !== '}') fail(`expected ',' or '}' at ${i}`)
  }
  ws()
  if (i !== s.length) fail('text after the dict')
  const keys = Object.keys(dict).sort().join(',')
  if (keys !== 'descr,fortran_order,shape') fail(`expected keys descr, fortran_order, shape; got ${safeText(Object.keys(dict).join(', '))}`)
  if (typeof dict.descr !== 'string') fail('descr is not a string')
  if (typeof dict.fortran_order !== 'boolean') fail('fortran_order is not a bool')
  if (!Array.isArray(dict.shape)) fail('shape is not a tuple')
  return {descr: dict.descr as string, fortranOrder: dict.fortran_order as boolean, shape: dict.shape as number[]}
}

/** The raw data bytes of a parsed .npy, copied into an aligned buffer if needed. */
export function npyDataBytes(raw: NpyRaw): Uint8Array {
  const data = raw.bytes.subarray(raw.dataOffset)
  if ((data.byteOffset & 7) === 0) return data
  const copy = new Uint8Array(new ArrayBuffer(data.byteLength))
  copy.set(data)
  return copy
}

/**
 * Decode a parsed `.npy` as a dense tensor: float32, float16 (kept as bits) or float64,
 * little-endian, C order. Everything else is an InputError naming the dtype.
 */
export function npyToDenseTensor(raw: NpyRaw, name: string, label: string): DenseTensor {
  const dtype = denseDtypeOfDescr(raw.descr)
  if (!dtype) {
    throw new InputError(
      'unsupported-dtype',
      `${label}: unsupported dtype ${describeDescr(raw.descr)}; only float32, float16 and float64 are read`,
      "convert it with numpy: a.astype('float32') then numpy.save",
    )
  }
  if (raw.fortranOrder && raw.shape.length > 1) {
    throw new InputError('fortran-order', `${label}: Fortran-ordered arrays are not supported`, 'save it in C order: numpy.save(f, numpy.ascontiguousarray(a))')
  }
  return {name, shape: raw.shape, dtype, data: decodeFloatData(raw, dtype)}
}

function decodeFloatData(raw: NpyRaw, dtype: DenseDType): HostArray {
  const whole = raw.bytes.byteOffset === 0 && raw.bytes.byteLength === raw.bytes.buffer.byteLength
  if (whole && raw.dataOffset % 8 === 0 && raw.descr[0] === '<') {
    // NOTE: npyjs views the data from the header's end to the buffer's end, so it must get
    // the whole, exactly sized file; parseNpy has already checked the length. Its header
    // reading is a set of regular expressions, laxer than ours: when it fails or disagrees
    // with the header we validated, our own view of the same bytes is used.
    try {
      const data = npyjsParse(raw.bytes.buffer as ArrayBuffer, {convertFloat16: false}).data as HostArray
      if (data.length === raw.numel && data.constructor === view(new Uint8Array(0), dtype).constructor && data.byteOffset === raw.dataOffset) return data
    } catch {
      // fall through
    }
  }
  const result = view(npyDataBytes(raw), dtype)
  if (result.length !== raw.numel) throw npyError('npy', `decoded ${result.length} elements, expected ${raw.numel}`)
  return result
}

function view(data: Uint8Array, dtype: DenseDType): HostArray {
  switch (dtype) {
    case 'f32':
      return new Float32Array(data.buffer, data.byteOffset, data.byteLength / 4)
    case 'f64':
      return new Float64Array(data.buffer, data.byteOffset, data.byteLength / 8)
    default:
      return new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2)
  }
}

/** Parse a whole `.npy` file image into a dense tensor. */
export function readNpyBytes(bytes: Uint8Array, name: string, label: string): DenseTensor {
  return npyToDenseTensor(parseNpy(bytes, label), name, label)
}

// ---------------------------------------------------------------------------------------
// Writing

/** The header (magic, version, dict, padding) of an .npy with this descr and shape. */
export function npyHeader(descr: string, shape: readonly number[]): Uint8Array {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`
  // NumPy pads the header with spaces and a final newline so the data starts on a
  // multiple of 64 bytes.
  let major = 1
  let prefix = 10
  if ((dict.length + 1 + prefix + 63) > 0xffff) {
    major = 2
    prefix = 12
  }
  const total = Math.ceil((prefix + dict.length + 1) / 64) * 64
  dict = dict.padEnd(total - prefix - 1, ' ') + '\n'
  const out = new Uint8Array(total)
  out.set(NPY_MAGIC, 0)
  out[6] = major
  out[7] = 0
  const dv = new DataView(out.buffer)
  if (major === 1) dv.setUint16(8, dict.length, true)
  else dv.setUint32(8, dict.length, true)
  for (let i = 0; i < dict.length; i++) out[prefix + i] = dict.charCodeAt(i)
  return out
}

/** The byte view of a typed array (no copy). */
export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

/** The largest piece byteChunks makes: well under the 4 GiB a Uint8Array can span. */
const CHUNK_BYTES = 1 << 30

/**
 * The bytes of a typed array as views of at most 1 GiB (no copy). A Float32Array may hold
 * more than 4 GiB, but one Uint8Array over it cannot (V8's limit on Node 20).
 */
export function byteChunks(a: ArrayBufferView): Uint8Array[] {
  if (a.byteLength <= CHUNK_BYTES) return [bytesOf(a)]
  const out: Uint8Array[] = []
  for (let o = 0; o < a.byteLength; o += CHUNK_BYTES) out.push(new Uint8Array(a.buffer, a.byteOffset + o, Math.min(CHUNK_BYTES, a.byteLength - o)))
  return out
}

/** A whole `.npy` as chunks (header, data), for streaming writers. No copy of the data. */
export function npyChunks(descr: string, shape: readonly number[], data: ArrayBufferView): Uint8Array[] {
  return [npyHeader(descr, shape), ...byteChunks(data)]
}

/** A NumPy descr for a dense dtype. bf16 has none (NumPy lacks bfloat16). */
export function descrFor(dtype: DenseDType): string {
  switch (dtype) {
    case 'f32':
      return '<f4'
    case 'f16':
      return '<f2'
    case 'f64':
      return '<f8'
    default:
      throw new InputError('unsupported-dtype', 'bfloat16 cannot be stored in .npy (NumPy has no bfloat16)', 'use --dtype f32 or f16')
  }
}

/** Encode a fixed-width NumPy unicode string array ('<U<n>') of one element. */
export function npyUnicodeScalar(text: string): Uint8Array[] {
  const n = Math.max(1, text.length)
  const data = new Uint32Array(n)
  for (let i = 0; i < text.length; i++) data[i] = text.codePointAt(i)!
  return npyChunks(`<U${n}`, [], data)
}
