/**
 * The part of ZIP that `.npz` needs, done by hand so that large archives are read member by
 * member with bounded memory:
 * - reading: the end-of-central-directory record (and its zip64 variant, which NumPy
 *   writes), the central directory, then one member at a time from its local header
 *   (stored, or deflated and inflated with fflate into a buffer of the declared size),
 *   with the CRC-32 checked;
 * - writing: a sequential writer (stored members by default, deflate optional) with zip64
 *   records when a size or offset needs them, so it can stream to stdout.
 */
import * as zlib from 'node:zlib'

import {Deflate, Inflate, inflateSync} from 'fflate'

import {InputError} from '../errors.js'
import {FileSource, type ByteSource} from './byte-source.js'
import {safeText} from './limits.js'
import {pace, paceDue} from './pace.js'

export const ZIP_MAGIC = Uint8Array.from([0x50, 0x4b, 0x03, 0x04]) // PK\x03\x04
/** An archive with no members starts with its end record (zip64 or not). */
const EMPTY_ZIP_MAGICS = [Uint8Array.from([0x50, 0x4b, 0x05, 0x06]), Uint8Array.from([0x50, 0x4b, 0x06, 0x06])]

const SIG_LOCAL = 0x04034b50
const SIG_CENTRAL = 0x02014b50
const SIG_EOCD = 0x06054b50
const SIG_EOCD64 = 0x06064b50
const SIG_EOCD64_LOCATOR = 0x07064b50
const U32_MAX = 0xffffffff
const U16_MAX = 0xffff
/** DEFLATE cannot expand more than about 1032:1; a larger claim is a lie. */
const MAX_DEFLATE_RATIO = 1032
/** Uncompressed bytes handed to the deflater at a time. */
const DEFLATE_PIECE = 8 << 20

export function isZipMagic(head: Uint8Array): boolean {
  if (head.length < 4) return false
  return [ZIP_MAGIC, ...EMPTY_ZIP_MAGICS].some((magic) => magic.every((b, i) => head[i] === b))
}

export interface ZipEntry {
  name: string
  method: number
  crc32: number
  compressedSize: number
  size: number
  localHeaderOffset: number
}

function zipError(label: string, msg: string): InputError {
  return new InputError('bad-zip', `${label}: ${msg}`, 'the archive is corrupt or not a .npz; save it again with numpy.savez')
}

/** A zip64 field; sizes and offsets beyond 2^53 cannot be real (and are not exact as numbers). */
function u64(dv: DataView, off: number, label: string): number {
  const v = dv.getBigUint64(off, true)
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw zipError(label, `zip64 field value ${v} is out of range`)
  return Number(v)
}

/** Read the central directory of a ZIP archive. */
export async function readZipDirectory(src: ByteSource): Promise<ZipEntry[]> {
  const label = src.label
  if (src.size < 22) throw new InputError('truncated', `${label} is too short to be a .npz archive (${src.size} bytes)`, 'the file is incomplete; save it again')
  const head = await src.read(0, 4)
  if (!isZipMagic(head)) throw zipError(label, 'not a ZIP/.npz archive (wrong magic bytes)')
  const tailLen = Math.min(src.size, 22 + 0xffff)
  const tailStart = src.size - tailLen
  const tail = await src.read(tailStart, tailLen)
  const tdv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength)
  let eocd = -1
  for (let i = tailLen - 22; i >= 0; i--) {
    if (tdv.getUint32(i, true) === SIG_EOCD && i + 22 + tdv.getUint16(i + 20, true) <= tailLen) {
      eocd = i
      break
    }
  }
  if (eocd < 0) throw new InputError('truncated', `${label}: no end-of-central-directory record (the archive is truncated or corrupt)`, 'the file is incomplete; save it again')
  let count = tdv.getUint16(eocd + 10, true)
  let cdSize = tdv.getUint32(eocd + 12, true)
  let cdOffset = tdv.getUint32(eocd + 16, true)
  if (count === U16_MAX || cdSize === U32_MAX || cdOffset === U32_MAX) {
    const loc = eocd - 20
    if (loc < 0 || tdv.getUint32(loc, true) !== SIG_EOCD64_LOCATOR) throw zipError(label, 'zip64 end-of-central-directory locator missing')
    const e64Offset = u64(tdv, loc + 8, label)
    if (e64Offset + 56 > src.size) throw zipError(label, 'zip64 end-of-central-directory record out of bounds')
    const e64 = await src.read(e64Offset, 56)
    const edv = new DataView(e64.buffer, e64.byteOffset, 56)
    if (edv.getUint32(0, true) !== SIG_EOCD64) throw zipError(label, 'bad zip64 end-of-central-directory record')
    count = u64(edv, 32, label)
    cdSize = u64(edv, 40, label)
    cdOffset = u64(edv, 48, label)
  }
  if (cdOffset + cdSize > src.size) {
    throw new InputError('truncated', `${label} is truncated: its central directory ends at byte ${cdOffset + cdSize} but the file has ${src.size}`, 'the file is incomplete; save it again')
  }
  if (count * 46 > cdSize) throw zipError(label, `central directory of ${cdSize} bytes cannot hold ${count} entries`)
  const cd = await src.read(cdOffset, cdSize)
  const dv = new DataView(cd.buffer, cd.byteOffset, cd.byteLength)
  const utf8 = new TextDecoder('utf-8')
  const latin1 = new TextDecoder('latin1')
  const entries: ZipEntry[] = []
  // NOTE: Python's zipfile reads the last of two members of one name, and we would read the
  // first: an archive that holds one twice means different things to different readers.
  const names = new Set<string>()
  let p = 0
  for (let n = 0; n < count; n++) {
    // NOTE: 10^5 entries take ~0.5 s on a loaded machine: yield, so that Ctrl-C acts.
    if ((n & 255) === 255 && paceDue()) await pace()
    if (p + 46 > cdSize || dv.getUint32(p, true) !== SIG_CENTRAL) throw zipError(label, `bad central directory entry ${n}`)
    const flags = dv.getUint16(p + 8, true)
    const method = dv.getUint16(p + 10, true)
    const crc32 = dv.getUint32(p + 16, true)
    let compressedSize = dv.getUint32(p + 20, true)
    let size = dv.getUint32(p + 24, true)
    const nameLen = dv.getUint16(p + 28, true)
    const extraLen = dv.getUint16(p + 30, true)
    const commentLen = dv.getUint16(p + 32, true)
    let localHeaderOffset = dv.getUint32(p + 42, true)
    if (p + 46 + nameLen + extraLen + commentLen > cdSize) throw zipError(label, `central directory entry ${n} overruns the directory`)
    const name = (flags & 0x800 ? utf8 : latin1).decode(cd.subarray(p + 46, p + 46 + nameLen))
    const shown = safeText(name)
    // zip64 extended information: only the fields whose 32-bit value is saturated, in order.
    let e = p + 46 + nameLen
    const eEnd = e + extraLen
    while (e + 4 <= eEnd) {
      const id = dv.getUint16(e, true)
      const len = dv.getUint16(e + 2, true)
      if (e + 4 + len > eEnd) throw zipError(label, `extra field of entry ${shown} overruns its ${extraLen} bytes`)
      if (id === 0x0001) {
        let q = e + 4
        const take = () => {
          if (q + 8 > e + 4 + len) throw zipError(label, `short zip64 field in entry ${shown}`)
          const v = u64(dv, q, label)
          q += 8
          return v
        }
        if (size === U32_MAX) size = take()
        if (compressedSize === U32_MAX) compressedSize = take()
        if (localHeaderOffset === U32_MAX) localHeaderOffset = take()
      }
      e += 4 + len
    }
    if (flags & 0x1) throw new InputError('unsupported-zip', `${label}: member ${shown} is encrypted`, 'save the archive without encryption')
    if (method !== 0 && method !== 8) throw new InputError('unsupported-zip', `${label}: member ${shown} uses compression method ${method}; only stored and deflate are supported`, 'save it with numpy.savez or numpy.savez_compressed')
    if (localHeaderOffset + 30 > cdOffset || localHeaderOffset + 30 + compressedSize > cdOffset) {
      throw zipError(label, `member ${shown} lies outside the archive's data area`)
    }
    if (names.has(name)) throw new InputError('bad-zip', `${label}: member ${shown} appears twice (ZIP readers disagree on which one is meant)`, 'save the archive again')
    names.add(name)
    entries.push({name, method, crc32, compressedSize, size, localHeaderOffset})
    p += 46 + nameLen + extraLen + commentLen
  }
  return entries
}

/** Where a member's data start (after its local header), checked against the file. */
async function memberDataStart(src: ByteSource, entry: ZipEntry): Promise<number> {
  const name = safeText(entry.name)
  const lh = await src.read(entry.localHeaderOffset, 30)
  const ldv = new DataView(lh.buffer, lh.byteOffset, 30)
  if (ldv.getUint32(0, true) !== SIG_LOCAL) throw zipError(src.label, `bad local header for member ${name}`)
  const dataStart = entry.localHeaderOffset + 30 + ldv.getUint16(26, true) + ldv.getUint16(28, true)
  if (dataStart + entry.compressedSize > src.size) {
    throw new InputError('truncated', `${src.label}:${name} is truncated`, 'the file is incomplete; save it again')
  }
  return dataStart
}

/** Members with at most this many compressed bytes are inflated in one call. */
const SMALL_COMPRESSED = 64 << 10

/** Compressed bytes handed to the inflater at a time: at most ~1032 x this comes out of one push. */
const INFLATE_STEP = 64 << 10

/**
 * Inflate a deflated member, handing each piece of output to `onData(piece, position)`.
 * Stops as soon as the stream produces more than the declared size (a stream that runs past
 * its size is refused without inflating the rest), and refuses one that ends short.
 */
async function inflateMember(src: ByteSource, entry: ZipEntry, dataStart: number, onData: (piece: Uint8Array, position: number) => void): Promise<void> {
  const name = safeText(entry.name)
  if (entry.size > entry.compressedSize * MAX_DEFLATE_RATIO + 1024) {
    throw zipError(src.label, `member ${name} claims ${entry.size} bytes from ${entry.compressedSize} compressed bytes, more than DEFLATE can produce`)
  }
  if (entry.compressedSize <= SMALL_COMPRESSED) {
    // Small members in one call (fewer, smaller allocations than streaming): one byte of
    // room past the declared size shows a stream that runs past it; the work beyond is
    // bounded by DEFLATE's ratio on at most SMALL_COMPRESSED bytes.
    const compressed = await src.read(dataStart, entry.compressedSize)
    let out: Uint8Array
    try {
      out = inflateSync(compressed, {out: new Uint8Array(entry.size + 1)})
    } catch (error) {
      throw zipError(src.label, `member ${name} does not inflate (${safeText((error as Error).message, 80)})`)
    }
    if (out.length > entry.size) throw zipError(src.label, `member ${name} inflates to more than its declared ${entry.size} bytes`)
    if (out.length !== entry.size) throw zipError(src.label, `member ${name} inflates to ${out.length} bytes, expected ${entry.size}`)
    onData(out, 0)
    return
  }
  let produced = 0
  let overrun = false
  const inflater = new Inflate((piece) => {
    if (overrun) return
    if (produced + piece.length > entry.size) {
      overrun = true
      return
    }
    onData(piece, produced)
    produced += piece.length
  })
  let pos = 0
  try {
    do {
      const len = Math.min(INFLATE_STEP, entry.compressedSize - pos)
      const chunk = await src.read(dataStart + pos, len)
      pos += len
      inflater.push(chunk, pos >= entry.compressedSize)
      if (overrun) throw zipError(src.label, `member ${name} inflates to more than its declared ${entry.size} bytes`)
      if ((pos & (16 * INFLATE_STEP - 1)) === 0) await pace()
    } while (pos < entry.compressedSize)
  } catch (error) {
    if (error instanceof InputError) throw error
    throw zipError(src.label, `member ${name} does not inflate (${safeText((error as Error).message, 80)})`)
  }
  if (produced !== entry.size) throw zipError(src.label, `member ${name} inflates to ${produced} bytes, expected ${entry.size}`)
}

/** CRC-32 of a buffer of any size (in pieces of at most 1 GiB). */
function crc32Of(buffer: ArrayBuffer, byteOffset: number, byteLength: number, prev = 0): number {
  let crc = prev
  for (let o = 0; o < byteLength; o += 1 << 30) crc = crc32(new Uint8Array(buffer, byteOffset + o, Math.min(1 << 30, byteLength - o)), crc)
  return crc
}

/** The uncompressed bytes of one member (in a fresh, aligned buffer), CRC-checked. At most 4 GiB. */
export async function readZipMember(src: ByteSource, entry: ZipEntry): Promise<Uint8Array> {
  const name = safeText(entry.name)
  if (entry.size > 2 ** 32) {
    throw new InputError('too-large', `${src.label}:${name} is ${entry.size} bytes, more than the 4 GiB sparse reads for this kind of member`, 'store large arrays as .npy or .safetensors')
  }
  const dataStart = await memberDataStart(src, entry)
  let out: Uint8Array
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.size) throw zipError(src.label, `stored member ${name} has mismatched sizes`)
    out = await src.read(dataStart, entry.size)
    if ((out.byteOffset & 7) !== 0) out = copyAligned(out)
  } else {
    let buf: Uint8Array | undefined
    await inflateMember(src, entry, dataStart, (piece, position) => {
      // The one-call path hands over its whole, exactly sized output: no copy.
      if (position === 0 && piece.length === entry.size && piece.byteOffset === 0) buf = piece
      else (buf ??= new Uint8Array(new ArrayBuffer(entry.size))).set(piece, position)
    })
    out = buf ?? new Uint8Array(new ArrayBuffer(0))
  }
  if (crc32(out) !== entry.crc32) throw zipError(src.label, `member ${name} fails its CRC-32 check (corrupt data)`)
  return out
}

/**
 * The bytes [skip, size) of one member (its data after an `.npy` header of `skip` bytes) in
 * an ArrayBuffer of their own, of any size (over 4 GiB too), CRC-checked over the whole
 * member. A stored member in a file is read straight into place.
 */
export async function readZipMemberData(src: ByteSource, entry: ZipEntry, skip: number): Promise<{buffer: ArrayBuffer; byteOffset: number}> {
  const name = safeText(entry.name)
  // Small members, and members of an archive already in memory: the whole member, then a
  // view past its header (no second copy).
  if (entry.size <= 2 ** 32 && ((entry.method === 0 && !(src instanceof FileSource)) || (entry.method === 8 && entry.compressedSize <= SMALL_COMPRESSED))) {
    const whole = await readZipMember(src, entry)
    return {buffer: whole.buffer as ArrayBuffer, byteOffset: whole.byteOffset + skip}
  }
  const dataStart = await memberDataStart(src, entry)
  const length = entry.size - skip
  let buffer: ArrayBuffer
  let crc: number
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.size) throw zipError(src.label, `stored member ${name} has mismatched sizes`)
    crc = crc32(await src.read(dataStart, skip))
    if (src instanceof FileSource) buffer = await src.readBuffer(dataStart + skip, length)
    else {
      const view = await src.read(dataStart + skip, length)
      buffer = copyAligned(view).buffer as ArrayBuffer
    }
    crc = crc32Of(buffer, 0, length, crc)
  } else {
    buffer = new ArrayBuffer(length)
    crc = 0
    await inflateMember(src, entry, dataStart, (piece, position) => {
      crc = crc32(piece, crc)
      const end = position + piece.length
      if (end <= skip) return
      const from = Math.max(0, skip - position)
      new Uint8Array(buffer, position + from - skip, piece.length - from).set(from === 0 ? piece : piece.subarray(from))
    })
  }
  if (crc !== entry.crc32) throw zipError(src.label, `member ${name} fails its CRC-32 check (corrupt data)`)
  return {buffer, byteOffset: 0}
}

function copyAligned(b: Uint8Array): Uint8Array {
  const c = new Uint8Array(new ArrayBuffer(b.byteLength))
  c.set(b)
  return c
}

// ---------------------------------------------------------------------------------------
// CRC-32 (native zlib.crc32 on Node >= 20.15, else a table)

let table: Uint32Array | undefined
export function crc32(data: Uint8Array, prev = 0): number {
  // NOTE: Node 20's zlib.crc32 returns 0 for an empty view of an empty ArrayBuffer.
  if (data.length === 0) return prev >>> 0
  const native = (zlib as unknown as {crc32?: (d: Uint8Array, v?: number) => number}).crc32
  if (native) return native(data, prev) >>> 0
  if (!table) {
    table = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c >>> 0
    }
  }
  let c = ~prev
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}

// ---------------------------------------------------------------------------------------
// Writing

/** Where bytes go: a file or stdout (see output.ts). */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>
}

interface WrittenEntry {
  name: Uint8Array
  crc: number
  size: number
  compressedSize: number
  method: number
  offset: number
}

/**
 * A sequential ZIP writer. Each member is given whole (as chunks) so its CRC and sizes go
 * in the local header; no seeking, so it can write to a pipe.
 */
export class ZipWriter {
  private offset = 0
  private readonly entries: WrittenEntry[] = []

  /** `forceZip64` writes zip64 records even when not needed (to test readers). */
  constructor(
    private readonly sink: ByteSink,
    private readonly opts: {forceZip64?: boolean} = {},
  ) {}

  private async put(chunk: Uint8Array): Promise<void> {
    if (chunk.byteLength === 0) return
    await this.sink.write(chunk)
    this.offset += chunk.byteLength
  }

  /** Add a member; `compress` deflates it (in memory) with fflate. */
  async add(name: string, chunks: Uint8Array[], compress = false): Promise<void> {
    let crc = 0
    let size = 0
    for (const c of chunks) {
      crc = crc32(c, crc)
      size += c.byteLength
    }
    let body = chunks
    let compressedSize = size
    let method = 0
    if (compress) {
      // Streamed in 8 MiB pieces: no copy of the whole member (which may exceed the 4 GiB
      // one byte array can hold), and the event loop gets control between pieces (Ctrl-C).
      const parts: Uint8Array[] = []
      compressedSize = 0
      const deflater = new Deflate({level: 6}, (out) => {
        parts.push(out)
        compressedSize += out.byteLength
      })
      const pieces: Uint8Array[] = []
      for (const c of chunks) for (let o = 0; o < c.byteLength; o += DEFLATE_PIECE) pieces.push(c.subarray(o, Math.min(c.byteLength, o + DEFLATE_PIECE)))
      if (pieces.length === 0) pieces.push(new Uint8Array(0))
      for (let k = 0; k < pieces.length; k++) {
        deflater.push(pieces[k], k === pieces.length - 1)
        await pace()
      }
      body = parts
      method = 8
    }
    const nameBytes = new TextEncoder().encode(name)
    const zip64 = size >= U32_MAX || compressedSize >= U32_MAX || !!this.opts.forceZip64
    const extra = zip64 ? 20 : 0
    const h = new Uint8Array(30 + nameBytes.length + extra)
    const dv = new DataView(h.buffer)
    dv.setUint32(0, SIG_LOCAL, true)
    dv.setUint16(4, zip64 ? 45 : 20, true)
    dv.setUint16(6, 0x800, true) // UTF-8 names
    dv.setUint16(8, method, true)
    dv.setUint16(10, 0, true) // time 00:00
    dv.setUint16(12, 0x21, true) // date 1980-01-01: reproducible output
    dv.setUint32(14, crc, true)
    dv.setUint32(18, zip64 ? U32_MAX : compressedSize, true)
    dv.setUint32(22, zip64 ? U32_MAX : size, true)
    dv.setUint16(26, nameBytes.length, true)
    dv.setUint16(28, extra, true)
    h.set(nameBytes, 30)
    if (zip64) {
      const x = 30 + nameBytes.length
      dv.setUint16(x, 0x0001, true)
      dv.setUint16(x + 2, 16, true)
      dv.setBigUint64(x + 4, BigInt(size), true)
      dv.setBigUint64(x + 12, BigInt(compressedSize), true)
    }
    const offset = this.offset
    await this.put(h)
    for (const c of body) await this.put(c)
    this.entries.push({name: nameBytes, crc, size, compressedSize, method, offset})
  }

  /** Write the central directory and end records. */
  async finish(): Promise<void> {
    const cdStart = this.offset
    for (const e of this.entries) {
      const fields: bigint[] = []
      const force = !!this.opts.forceZip64
      const bigSize = force || e.size >= U32_MAX
      const bigComp = force || e.compressedSize >= U32_MAX
      const bigOff = force || e.offset >= U32_MAX
      if (bigSize) fields.push(BigInt(e.size))
      if (bigComp) fields.push(BigInt(e.compressedSize))
      if (bigOff) fields.push(BigInt(e.offset))
      const extra = fields.length ? 4 + 8 * fields.length : 0
      const h = new Uint8Array(46 + e.name.length + extra)
      const dv = new DataView(h.buffer)
      dv.setUint32(0, SIG_CENTRAL, true)
      dv.setUint16(4, fields.length ? 45 : 20, true)
      dv.setUint16(6, fields.length ? 45 : 20, true)
      dv.setUint16(8, 0x800, true)
      dv.setUint16(10, e.method, true)
      dv.setUint16(12, 0, true)
      dv.setUint16(14, 0x21, true)
      dv.setUint32(16, e.crc, true)
      dv.setUint32(20, bigComp ? U32_MAX : e.compressedSize, true)
      dv.setUint32(24, bigSize ? U32_MAX : e.size, true)
      dv.setUint16(28, e.name.length, true)
      dv.setUint16(30, extra, true)
      dv.setUint32(38, 0o100644 << 16, true) // external attributes: a regular file, rw-r--r--
      dv.setUint32(42, bigOff ? U32_MAX : e.offset, true)
      h.set(e.name, 46)
      if (extra) {
        const x = 46 + e.name.length
        dv.setUint16(x, 0x0001, true)
        dv.setUint16(x + 2, 8 * fields.length, true)
        fields.forEach((f, i) => dv.setBigUint64(x + 4 + 8 * i, f, true))
      }
      await this.put(h)
    }
    const cdSize = this.offset - cdStart
    const count = this.entries.length
    const need64 = count >= U16_MAX || cdSize >= U32_MAX || cdStart >= U32_MAX || !!this.opts.forceZip64
    if (need64) {
      const e64Offset = this.offset
      const r = new Uint8Array(56 + 20)
      const dv = new DataView(r.buffer)
      dv.setUint32(0, SIG_EOCD64, true)
      dv.setBigUint64(4, 44n, true)
      dv.setUint16(12, 45, true)
      dv.setUint16(14, 45, true)
      dv.setBigUint64(24, BigInt(count), true)
      dv.setBigUint64(32, BigInt(count), true)
      dv.setBigUint64(40, BigInt(cdSize), true)
      dv.setBigUint64(48, BigInt(cdStart), true)
      dv.setUint32(56, SIG_EOCD64_LOCATOR, true)
      dv.setBigUint64(64, BigInt(e64Offset), true)
      dv.setUint32(72, 1, true)
      await this.put(r)
    }
    const end = new Uint8Array(22)
    const dv = new DataView(end.buffer)
    dv.setUint32(0, SIG_EOCD, true)
    dv.setUint16(8, need64 ? U16_MAX : count, true)
    dv.setUint16(10, need64 ? U16_MAX : count, true)
    dv.setUint32(12, need64 ? U32_MAX : cdSize, true)
    dv.setUint32(16, need64 ? U32_MAX : cdStart, true)
    await this.put(end)
  }
}
