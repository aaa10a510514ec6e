/**
 * NumPy `.npz` archives: a ZIP of `.npy` members (numpy.savez stores them,
 * numpy.savez_compressed deflates them; NumPy writes zip64 headers). Read member by member:
 * listing only inflates the first bytes of each member to parse its `.npy` header, and
 * reading inflates one member into a buffer of its declared size.
 */
import {Inflate} from 'fflate'

import {InputError} from '../errors.js'
import type {DenseDType, DenseTensor} from '../types.js'
import type {ByteSource} from './byte-source.js'
import {safeText} from './limits.js'
import {describeDescr, denseDtypeOfDescr, type NpyHeader, type NpyRaw, npyChunks, npyDataOffset, parseNpy, parseNpyHeader} from './npy.js'
import {pace} from './pace.js'
import {type ByteSink, readZipDirectory, readZipMember, readZipMemberData, ZipWriter, type ZipEntry} from './zip.js'

export interface NpzMember {
  /** The array's name (the member name without `.npy`). */
  name: string
  entry: ZipEntry
  header: NpyHeader
}

/** An open `.npz`: its members' headers, and a reader for one member at a time. */
export class NpzArchive {
  private constructor(
    readonly src: ByteSource,
    readonly members: NpzMember[],
    private readonly byName: Map<string, NpzMember>,
  ) {}

  static async open(src: ByteSource): Promise<NpzArchive> {
    const entries = await readZipDirectory(src)
    const members: NpzMember[] = []
    const byName = new Map<string, NpzMember>()
    for (const entry of entries) {
      if (entry.name.endsWith('/')) continue // a directory entry
      const name = entry.name.endsWith('.npy') ? entry.name.slice(0, -4) : entry.name
      if (byName.has(name)) throw new InputError('bad-npz', `${src.label}: member ${safeText(name)} appears twice`, 'save the archive again with numpy.savez')
      const label = `${src.label}:${safeText(entry.name)}`
      let head = await peekMember(src, entry, 4096)
      // A header longer than the peek (huge shapes, padding): read exactly its length.
      const need = head.length >= 12 || head.length === entry.size ? npyDataOffset(head, label) : 0
      if (need > head.length && head.length < entry.size) head = await peekMember(src, entry, need)
      const header: NpyHeader = parseNpyHeader(head, label)
      const expected = header.dataOffset + header.numel * header.itemSize
      if (expected !== entry.size) {
        throw new InputError(
          expected > entry.size ? 'truncated' : 'bad-npz',
          `${label}: its .npy header declares ${expected} bytes (shape (${header.shape.join(', ')}) of ${describeDescr(header.descr)}) but the member holds ${entry.size}`,
          'the archive is corrupt; save it again with numpy.savez',
        )
      }
      const member = {name, entry, header}
      members.push(member)
      byName.set(name, member)
      await pace()
    }
    return new NpzArchive(src, members, byName)
  }

  member(name: string): NpzMember {
    const m = this.byName.get(name)
    if (!m) {
      const names = this.members.slice(0, 20).map((x) => safeText(x.name, 40))
      throw new InputError('missing-member', `${this.src.label}: no array named ${safeText(name)}`, `members are: ${names.join(', ')}${this.members.length > 20 ? ', ...' : ''}`)
    }
    return m
  }

  /** The whole `.npy` of one member, parsed and length-checked. */
  async readRaw(name: string): Promise<NpyRaw> {
    const m = this.member(name)
    const bytes = await readZipMember(this.src, m.entry)
    return parseNpy(bytes, `${this.src.label}:${safeText(m.entry.name)}`)
  }

  /**
   * The data of one member (after its `.npy` header) in an ArrayBuffer of its own, of any
   * size (a dense tensor over 4 GiB too), CRC-checked; the header is the one read at open.
   */
  async readData(name: string): Promise<{header: NpyHeader; buffer: ArrayBuffer; byteOffset: number}> {
    const m = this.member(name)
    const {buffer, byteOffset} = await readZipMemberData(this.src, m.entry, m.header.dataOffset)
    return {header: m.header, buffer, byteOffset}
  }

  async close(): Promise<void> {
    await this.src.close()
  }
}

/** The first `n` uncompressed bytes of a member (or all of it, if shorter). */
async function peekMember(src: ByteSource, entry: ZipEntry, n: number): Promise<Uint8Array> {
  const want = Math.min(n, entry.size)
  if (entry.method === 0) {
    const full = await readZipMemberPrefix(src, entry, want)
    return full
  }
  const dataStart = await memberDataStart(src, entry)
  const out = new Uint8Array(want)
  let got = 0
  const inflater = new Inflate((chunk) => {
    const take = Math.min(chunk.length, want - got)
    if (take > 0) out.set(chunk.subarray(0, take), got)
    got += take
  })
  let pos = 0
  const step = 16384
  try {
    while (got < want && pos < entry.compressedSize) {
      const len = Math.min(step, entry.compressedSize - pos)
      const chunk = await src.read(dataStart + pos, len)
      pos += len
      inflater.push(chunk, pos >= entry.compressedSize)
    }
  } catch (error) {
    if (error instanceof InputError) throw error
    throw new InputError('bad-zip', `${src.label}: member ${safeText(entry.name)} does not inflate (${(error as Error).message})`, 'the archive is corrupt; save it again')
  }
  return out.subarray(0, got)
}

async function memberDataStart(src: ByteSource, entry: ZipEntry): Promise<number> {
  const lh = await src.read(entry.localHeaderOffset, 30)
  const dv = new DataView(lh.buffer, lh.byteOffset, 30)
  if (dv.getUint32(0, true) !== 0x04034b50) throw new InputError('bad-zip', `${src.label}: bad local header for member ${safeText(entry.name)}`, 'the archive is corrupt; save it again')
  return entry.localHeaderOffset + 30 + dv.getUint16(26, true) + dv.getUint16(28, true)
}

async function readZipMemberPrefix(src: ByteSource, entry: ZipEntry, n: number): Promise<Uint8Array> {
  const start = await memberDataStart(src, entry)
  return src.read(start, Math.min(n, entry.size, Math.max(0, src.size - start)))
}

/** A float member's dense dtype, or null (integer, bool, string, ... arrays). */
export function npzMemberDtype(m: NpzMember): DenseDType | null {
  return denseDtypeOfDescr(m.header.descr)
}

export {describeDescr}

// ---------------------------------------------------------------------------------------
// Writing

/** One array to put in an `.npz`: its NumPy descr, shape and little-endian data. */
export interface NpzArray {
  name: string
  descr: string
  shape: readonly number[]
  data: ArrayBufferView
}

/** Write an `.npz` (stored members unless `compress`) to a sink. */
export async function writeNpzTo(sink: ByteSink, arrays: NpzArray[], compress = false, forceZip64 = false): Promise<void> {
  const zip = new ZipWriter(sink, {forceZip64})
  for (const a of arrays) await zip.add(`${a.name}.npy`, npyChunks(a.descr, a.shape, a.data), compress)
  await zip.finish()
}

/** Dense tensors as NpzArray entries (f32/f16/f64; bf16 has no NumPy dtype). */
export function denseToNpzArray(t: DenseTensor, descr: string): NpzArray {
  return {name: t.name, descr, shape: t.shape, data: t.data}
}
