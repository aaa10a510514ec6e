/**
 * Raw file builders for the fuzzer, written independently of src/formats (so a bug shared by
 * our writer and our reader cannot hide): they write whatever they are told, including lies.
 * Each returns the bytes and, where useful, the byte offsets of its fields ("boundaries"
 * and integer fields that mutations aim at).
 */
import {deflateRawSync} from 'node:zlib'

/** An integer field in a built file: where it is and how wide (bytes, little-endian). */
export interface Field {
  offset: number
  width: 1 | 2 | 4 | 8
  what: string
}

export interface Built {
  bytes: Uint8Array
  /** Offsets where structure changes (for truncation classes). */
  boundaries: number[]
  /** Integer fields (for "lying header" mutations). */
  fields: Field[]
}

const enc = new TextEncoder()

export function concat(parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((a, p) => a + p.length, 0)
  const out = new Uint8Array(n)
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

/** Deterministic bytes from a seed (xorshift32), for tensor data. */
export function seededBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n)
  let s = (seed | 0) || 0x9e3779b9
  for (let i = 0; i < n; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    out[i] = s & 0xff
  }
  return out
}

/** Bytes of a typed array (a copy). */
export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice()
}

// ---------------------------------------------------------------------------------------
// .npy

export interface NpySpec {
  /** The header dict text; default made from descr/fortran/shape. */
  dict?: string
  descr?: string
  fortran?: boolean
  /** Dimensions as text (so lies like '-1', '1e3', '99999999999999999999' can be written). */
  shape?: (number | string)[]
  version?: number
  /** Added to the header-length field (a lying length). */
  headerLenDelta?: number
  /** Pad the header to a multiple of 64 like NumPy (default true). */
  pad?: boolean
  data: Uint8Array
}

export function npyDict(descr: string, fortran: boolean, shape: (number | string)[]): string {
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`
  return `{'descr': '${descr}', 'fortran_order': ${fortran ? 'True' : 'False'}, 'shape': ${dims}, }`
}

export function buildNpy(spec: NpySpec): Built {
  const version = spec.version ?? 1
  let dict = spec.dict ?? npyDict(spec.descr ?? '<f4', spec.fortran ?? false, spec.shape ?? [spec.data.length / 4])
  const prefix = version === 1 ? 10 : 12
  if (spec.pad ?? true) {
    const total = Math.ceil((prefix + dict.length + 1) / 64) * 64
    dict = dict.padEnd(total - prefix - 1, ' ') + '\n'
  }
  const text = version === 3 ? enc.encode(dict) : Uint8Array.from(dict, (c) => c.charCodeAt(0) & 0xff)
  const head = new Uint8Array(prefix)
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version & 0xff, 0])
  const dv = new DataView(head.buffer)
  const len = text.length + (spec.headerLenDelta ?? 0)
  if (version === 1) dv.setUint16(8, len & 0xffff, true)
  else dv.setUint32(8, len >>> 0, true)
  const bytes = concat([head, text, spec.data])
  return {
    bytes,
    boundaries: [0, 6, 7, 8, prefix, prefix + text.length - 1, prefix + text.length, bytes.length - 1, bytes.length],
    fields: [
      {offset: 6, width: 1, what: 'npy major version'},
      {offset: 8, width: version === 1 ? 2 : 4, what: 'npy header length'},
    ],
  }
}

// ---------------------------------------------------------------------------------------
// ZIP (.npz)

export interface ZipMemberSpec {
  name: string
  data: Uint8Array
  /** Deflate the member (node:zlib, raw deflate). */
  deflate?: boolean
  /** The stored bytes, instead of `data` (deflated or not): for streams that lie about `data`. */
  body?: Uint8Array
}

const crcTable = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

/** A table CRC-32 (independent of src/formats/zip.ts). */
export function crc32(d: Uint8Array): number {
  let c = ~0
  for (let i = 0; i < d.length; i++) c = crcTable[(c ^ d[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}

/**
 * A ZIP archive as NumPy writes it (local headers, central directory, end record; with
 * `zip64`, zip64 extra fields and the zip64 end records as NumPy does for every member).
 * The archive may hold 65,535 members or more only with `zip64` (the end record counts in 16 bits).
 */
export function buildZip(members: ZipMemberSpec[], opts: {zip64?: boolean; comment?: Uint8Array; lean?: boolean} = {}): Built {
  const parts: Uint8Array[] = []
  const fields: Field[] = []
  const boundaries: number[] = [0]
  // NOTE: `lean` leaves out the fields and boundaries (15 objects per member): an archive of
  // 10^5 members is built for its size, not mutated.
  const addFields = (...f: Field[]) => {
    if (!opts.lean) fields.push(...f)
  }
  const mark = (...b: number[]) => {
    if (!opts.lean) boundaries.push(...b)
  }
  let offset = 0
  const central: {name: Uint8Array; crc: number; size: number; csize: number; method: number; offset: number}[] = []
  const put = (b: Uint8Array) => {
    parts.push(b)
    offset += b.length
  }
  for (const m of members) {
    const name = enc.encode(m.name)
    const body = m.body ?? (m.deflate ? new Uint8Array(deflateRawSync(m.data)) : m.data)
    const method = m.deflate ? 8 : 0
    const crc = crc32(m.data)
    const extraLen = opts.zip64 ? 20 : 0
    const h = new Uint8Array(30 + name.length + extraLen)
    const dv = new DataView(h.buffer)
    dv.setUint32(0, 0x04034b50, true)
    dv.setUint16(4, opts.zip64 ? 45 : 20, true)
    dv.setUint16(8, method, true)
    dv.setUint32(14, crc, true)
    dv.setUint32(18, opts.zip64 ? 0xffffffff : body.length, true)
    dv.setUint32(22, opts.zip64 ? 0xffffffff : m.data.length, true)
    dv.setUint16(26, name.length, true)
    dv.setUint16(28, extraLen, true)
    h.set(name, 30)
    if (opts.zip64) {
      const x = 30 + name.length
      dv.setUint16(x, 1, true)
      dv.setUint16(x + 2, 16, true)
      dv.setBigUint64(x + 4, BigInt(m.data.length), true)
      dv.setBigUint64(x + 12, BigInt(body.length), true)
    }
    const at = offset
    addFields(
      {offset: at + 6, width: 2, what: `${m.name} local flags`},
      {offset: at + 8, width: 2, what: `${m.name} local method`},
      {offset: at + 18, width: 4, what: `${m.name} local compressed size`},
      {offset: at + 22, width: 4, what: `${m.name} local size`},
      {offset: at + 26, width: 2, what: `${m.name} local name length`},
      {offset: at + 28, width: 2, what: `${m.name} local extra length`},
    )
    mark(at, at + 30, at + h.length)
    put(h)
    put(body)
    mark(offset)
    central.push({name, crc, size: m.data.length, csize: body.length, method, offset: at})
  }
  const cdStart = offset
  for (const [i, e] of central.entries()) {
    const extraLen = opts.zip64 ? 28 : 0
    const h = new Uint8Array(46 + e.name.length + extraLen)
    const dv = new DataView(h.buffer)
    dv.setUint32(0, 0x02014b50, true)
    dv.setUint16(4, opts.zip64 ? 45 : 20, true)
    dv.setUint16(6, opts.zip64 ? 45 : 20, true)
    dv.setUint16(10, e.method, true)
    dv.setUint32(16, e.crc, true)
    dv.setUint32(20, opts.zip64 ? 0xffffffff : e.csize, true)
    dv.setUint32(24, opts.zip64 ? 0xffffffff : e.size, true)
    dv.setUint16(28, e.name.length, true)
    dv.setUint16(30, extraLen, true)
    dv.setUint32(42, opts.zip64 ? 0xffffffff : e.offset, true)
    h.set(e.name, 46)
    const at = offset
    const n = members[i].name
    addFields(
      {offset: at + 8, width: 2, what: `${n} flags`},
      {offset: at + 10, width: 2, what: `${n} method`},
      {offset: at + 16, width: 4, what: `${n} crc`},
      {offset: at + 20, width: 4, what: `${n} compressed size`},
      {offset: at + 24, width: 4, what: `${n} size`},
      {offset: at + 28, width: 2, what: `${n} name length`},
      {offset: at + 30, width: 2, what: `${n} extra length`},
      {offset: at + 32, width: 2, what: `${n} comment length`},
      {offset: at + 42, width: 4, what: `${n} local header offset`},
    )
    if (opts.zip64) {
      const x = 46 + e.name.length
      dv.setUint16(x, 1, true)
      dv.setUint16(x + 2, 24, true)
      dv.setBigUint64(x + 4, BigInt(e.size), true)
      dv.setBigUint64(x + 12, BigInt(e.csize), true)
      dv.setBigUint64(x + 20, BigInt(e.offset), true)
      addFields(
        {offset: at + x + 2, width: 2, what: `${n} zip64 extra length`},
        {offset: at + x + 4, width: 8, what: `${n} zip64 size`},
        {offset: at + x + 12, width: 8, what: `${n} zip64 compressed size`},
        {offset: at + x + 20, width: 8, what: `${n} zip64 local header offset`},
      )
    }
    mark(at)
    put(h)
  }
  const cdSize = offset - cdStart
  mark(offset)
  if (opts.zip64) {
    const r = new Uint8Array(76)
    const dv = new DataView(r.buffer)
    const at = offset
    dv.setUint32(0, 0x06064b50, true)
    dv.setBigUint64(4, 44n, true)
    dv.setUint16(12, 45, true)
    dv.setUint16(14, 45, true)
    dv.setBigUint64(24, BigInt(central.length), true)
    dv.setBigUint64(32, BigInt(central.length), true)
    dv.setBigUint64(40, BigInt(cdSize), true)
    dv.setBigUint64(48, BigInt(cdStart), true)
    dv.setUint32(56, 0x07064b50, true)
    dv.setBigUint64(64, BigInt(at), true)
    dv.setUint32(72, 1, true)
    addFields(
      {offset: at + 32, width: 8, what: 'zip64 entry count'},
      {offset: at + 40, width: 8, what: 'zip64 central directory size'},
      {offset: at + 48, width: 8, what: 'zip64 central directory offset'},
      {offset: at + 64, width: 8, what: 'zip64 end record offset'},
    )
    put(r)
    mark(offset)
  }
  const comment = opts.comment ?? new Uint8Array(0)
  const end = new Uint8Array(22 + comment.length)
  const dv = new DataView(end.buffer)
  dv.setUint32(0, 0x06054b50, true)
  dv.setUint16(8, opts.zip64 ? 0xffff : central.length, true)
  dv.setUint16(10, opts.zip64 ? 0xffff : central.length, true)
  dv.setUint32(12, opts.zip64 ? 0xffffffff : cdSize, true)
  dv.setUint32(16, opts.zip64 ? 0xffffffff : cdStart, true)
  dv.setUint16(20, comment.length, true)
  end.set(comment, 22)
  const at = offset
  addFields(
    {offset: at + 8, width: 2, what: 'entries on disk'},
    {offset: at + 10, width: 2, what: 'entry count'},
    {offset: at + 12, width: 4, what: 'central directory size'},
    {offset: at + 16, width: 4, what: 'central directory offset'},
    {offset: at + 20, width: 2, what: 'comment length'},
  )
  put(end)
  mark(at, at + 10, offset)
  return {bytes: concat(parts), boundaries, fields}
}

// ---------------------------------------------------------------------------------------
// .safetensors

export function buildSafetensors(headerText: string, data: Uint8Array, opts: {lenDelta?: number; lenOverride?: bigint; pad?: boolean} = {}): Built {
  let text = headerText
  if (opts.pad ?? true) text = text.padEnd(Math.ceil((text.length + 8) / 8) * 8 - 8, ' ')
  const hb = enc.encode(text)
  const head = new Uint8Array(8)
  const n = opts.lenOverride ?? BigInt(hb.length + (opts.lenDelta ?? 0))
  new DataView(head.buffer).setBigUint64(0, BigInt.asUintN(64, n), true)
  const bytes = concat([head, hb, data])
  return {
    bytes,
    boundaries: [0, 4, 8, 9, 8 + hb.length - 1, 8 + hb.length, bytes.length - 1, bytes.length],
    fields: [{offset: 0, width: 8, what: 'header length'}],
  }
}

/** A safetensors header JSON for tensors laid out back to back. */
export function safetensorsHeader(tensors: {name: string; dtype: string; shape: number[]; bytes: number}[], metadata?: Record<string, unknown>): string {
  const h: Record<string, unknown> = {}
  if (metadata) h.__metadata__ = metadata
  let o = 0
  for (const t of tensors) {
    h[t.name] = {dtype: t.dtype, shape: t.shape, data_offsets: [o, o + t.bytes]}
    o += t.bytes
  }
  return JSON.stringify(h)
}

// ---------------------------------------------------------------------------------------
// Many tensors (issue 12: 10^4 .. 10^5 per file)

/** One tensor of a many-tensor file: F32, empty ([0]) or one value ([1]: its index). */
export interface ManyTensor {
  name: string
  shape: number[]
  /** The data bytes (empty, or the index as float32). */
  bytes: Uint8Array
}

export interface ManySpec {
  n: number
  /** Every `every`-th tensor holds one value; the others are empty. */
  every: number
  /** The last tensor takes the first one's name (a file that must be refused). */
  duplicateLast?: boolean
  /** The last tensor's data offsets run 4 bytes past the data (safetensors: refused). */
  pastEnd?: boolean
}

/** The tensors of a many-tensor file, in file order. */
export function manyTensors(spec: ManySpec): ManyTensor[] {
  const out: ManyTensor[] = []
  for (let i = 0; i < spec.n; i++) {
    const full = i % spec.every === 0
    const name = spec.duplicateLast && i === spec.n - 1 && i > 0 ? 't.0' : `t.${i}`
    out.push({name, shape: full ? [1] : [0], bytes: full ? bytesOf(Float32Array.of(i)) : new Uint8Array(0)})
  }
  return out
}

/** A .safetensors of manyTensors(spec), its header written as one string (10^5 entries in ~0.1 s). */
export function buildManySafetensors(spec: ManySpec): {bytes: Uint8Array; tensors: ManyTensor[]} {
  const tensors = manyTensors(spec)
  const parts: string[] = []
  let o = 0
  for (const [i, t] of tensors.entries()) {
    const end = o + t.bytes.length + (spec.pastEnd && i === tensors.length - 1 ? 4 : 0)
    parts.push(`${JSON.stringify(t.name)}:{"dtype":"F32","shape":[${t.shape[0]}],"data_offsets":[${o},${end}]}`)
    o += t.bytes.length
  }
  const data = concat(tensors.map((t) => t.bytes))
  return {bytes: buildSafetensors(`{${parts.join(',')}}`, data).bytes, tensors}
}

/**
 * An .npz of manyTensors(spec), one stored `.npy` member per tensor (zip64, as NumPy writes
 * it, which an archive of more than 65,535 members needs).
 */
export function buildManyNpz(spec: ManySpec): {bytes: Uint8Array; tensors: ManyTensor[]} {
  const tensors = manyTensors(spec)
  const npy = (t: ManyTensor) => buildNpy({descr: '<f4', shape: t.shape, data: t.bytes}).bytes
  const empty = npy({name: '', shape: [0], bytes: new Uint8Array(0)})
  const members = tensors.map((t) => ({name: `${t.name}.npy`, data: t.bytes.length === 0 ? empty : npy(t)}))
  return {bytes: buildZip(members, {zip64: true, lean: true}).bytes, tensors}
}
