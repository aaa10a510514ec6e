/**
 * `.safetensors`: 8-byte little-endian header length N, N bytes of JSON
 * (`{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}`), then the
 * raw little-endian data; offsets are relative to the end of the header.
 *
 * Read tensor by tensor (each tensor's byte range is read at its offset, so memory holds one
 * tensor at a time). Strict checks: the header fits in the file, offsets are integers inside
 * the data area, `end - begin` equals numel × itemsize, tensors do not overlap.
 * Dense dtypes read: F32, F16, BF16, F64. Other dtypes (I64, BOOL, ...) are listed as
 * unsupported so commands can report them as skipped.
 */
import {InputError} from '../errors.js'
import type {DenseDType, DenseTensor, HostArray} from '../types.js'
import {BufferPool, FileSource, type ByteSource} from './byte-source.js'
import {jsonObjectMembers, JsonSplitError} from './json-split.js'
import {denseShapeProblem, MAX_NAME_CHARS, safeText} from './limits.js'
import {byteChunks} from './npy.js'
import {pace} from './pace.js'
import type {ByteSink} from './zip.js'

/** Item sizes of every dtype the format defines (so sizes of unsupported tensors are checked too). */
const ITEM_SIZE: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, F8_E8M0: 1,
  I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4,
  I64: 8, U64: 8, F64: 8,
}
const DENSE: Record<string, DenseDType> = {F32: 'f32', F16: 'f16', BF16: 'bf16', F64: 'f64'}
export const SAFETENSORS_DTYPE: Record<DenseDType, string> = {f32: 'F32', f16: 'F16', bf16: 'BF16', f64: 'F64'}

/** Headers larger than this are refused (the reference implementation's limit is 100 MB). */
const MAX_HEADER = 100_000_000

export interface SafetensorsEntry {
  name: string
  /** The file's dtype string (F32, BF16, I64, ...). */
  fileDtype: string
  /** Our dense dtype, or null when unsupported. */
  dtype: DenseDType | null
  /** Why the tensor cannot be read (an unsupported dtype, a shape beyond the limits), or null. */
  problem: string | null
  shape: number[]
  numel: number
  /** Absolute byte range in the file. */
  begin: number
  end: number
}

export class SafetensorsFile {
  private constructor(
    readonly src: ByteSource,
    /** In the file's header order (sorted by data offset). */
    readonly entries: SafetensorsEntry[],
    readonly metadata: Record<string, string> | undefined,
    private readonly byName: Map<string, SafetensorsEntry>,
  ) {}

  static async open(src: ByteSource): Promise<SafetensorsFile> {
    const label = src.label
    const bad = (msg: string, code = 'bad-safetensors'): never => {
      throw new InputError(code, `${label}: ${msg}`, 'the file is not a valid .safetensors; save it again with safetensors')
    }
    if (src.size < 8) throw new InputError('truncated', `${label} is too short to be a .safetensors file (${src.size} bytes)`, 'the file is incomplete; save it again')
    const lenBytes = await src.read(0, 8)
    const n64 = new DataView(lenBytes.buffer, lenBytes.byteOffset, 8).getBigUint64(0, true)
    if (n64 > BigInt(src.size - 8)) {
      throw new InputError('truncated', `${label}: header length ${n64} exceeds the file's ${src.size - 8} remaining bytes (truncated, or not a .safetensors file)`, 'check the file')
    }
    const n = Number(n64)
    if (n > MAX_HEADER) bad(`header of ${n} bytes is larger than the ${MAX_HEADER}-byte limit`)
    if (n < 2) bad('empty header')
    const text = new TextDecoder('utf-8', {fatal: false}).decode(await src.read(8, n))
    if (text[0] !== '{') bad('not a .safetensors file (the header does not start with a JSON object)', 'bad-magic')
    const dataStart = 8 + n
    const dataSize = src.size - dataStart
    const entries: SafetensorsEntry[] = []
    // The lookup by name, built as the header is read: it also finds duplicate names (one
    // hash table for both; a header may list a million tensors).
    const byName = new Map<string, SafetensorsEntry>()
    let metadata: Record<string, string> | undefined
    // NOTE: member by member (json-split.ts), not one JSON.parse: a header may list a million
    // tensors, and Ctrl-C must still act within ~100 ms; duplicate names are seen (and refused).
    try {
      for await (const batch of jsonObjectMembers(text)) {
        for (const [name, v] of batch) {
          if (name.length > MAX_NAME_CHARS) bad(`a tensor name of ${name.length} characters (${safeText(name, 40)}); names have at most ${MAX_NAME_CHARS}`)
          if (byName.has(name) || (name === '__metadata__' && metadata !== undefined)) bad(`tensor ${safeText(name)} appears twice in the header`)
          if (name === '__metadata__') {
            // The format defines it as a map of strings to strings.
            if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.values(v).every((x) => typeof x === 'string')) {
              bad('__metadata__ must be an object of strings')
            }
            metadata = v as Record<string, string>
            continue
          }
          const entry = checkEntry(name, v, dataStart, dataSize, bad, label)
          entries.push(entry)
          byName.set(name, entry)
        }
      }
    } catch (error) {
      if (error instanceof JsonSplitError) bad(`header is not valid JSON (${safeText(error.message, 120)})`)
      throw error
    }
    entries.sort((x, y) => x.begin - y.begin || x.end - y.end)
    for (let i = 1; i < entries.length; i++) {
      const cur = entries[i]
      if (cur.begin < entries[i - 1].end) bad(`tensors ${safeText(entries[i - 1].name)} and ${safeText(cur.name)} overlap in the data area`)
      if ((i & 4095) === 4095) await pace()
    }
    return new SafetensorsFile(src, entries, metadata, byName)
  }

  entry(name: string): SafetensorsEntry {
    const e = this.byName.get(name)
    if (!e) throw new InputError('missing-tensor', `${this.src.label}: no tensor named ${safeText(name)}`, 'run `sparse info` to list the tensors')
    return e
  }

  /** Buffers handed back by release(), reused by later reads. */
  private readonly pool = new BufferPool()
  /** Buffers this file allocated for tensors (only those may enter the pool). */
  private readonly owned = new WeakSet<ArrayBufferLike>()

  /**
   * Hand a tensor returned by read() back: its memory is reused by later reads, so the
   * tensor (and any view of its data) must not be used afterwards. Optional, and a no-op
   * for anything else; it makes streaming a large checkpoint much faster (see BufferPool).
   */
  release(tensor: DenseTensor): void {
    const buf = tensor.data.buffer
    if (this.owned.has(buf)) {
      this.owned.delete(buf)
      this.pool.give(buf as ArrayBuffer)
    }
  }

  /** Read one tensor (only its byte range). */
  async read(name: string): Promise<DenseTensor> {
    const e = this.entry(name)
    if (!e.dtype) {
      throw new InputError('unsupported-dtype', `${this.src.label}: tensor ${safeText(name)} has unsupported dtype ${e.fileDtype}; only F32, F16, BF16 and F64 are read`, 'exclude it or convert the model to a float dtype')
    }
    if (e.problem) throw new InputError('too-large', `${this.src.label}: tensor ${safeText(name)} cannot be read: ${e.problem}`, 'exclude it with --exclude')
    let data: HostArray
    if (e.end === e.begin) {
      // NOTE: no buffer, no bookkeeping: a checkpoint may hold a million empty tensors.
      data = viewAs(EMPTY, 0, 0, e.dtype)
    } else if (this.src instanceof FileSource) {
      // Straight into an ArrayBuffer of its own: tensors over 4 GiB (an LLM's embedding) too.
      const buffer = await this.src.readBuffer(e.begin, e.end - e.begin, this.pool)
      this.owned.add(buffer)
      data = viewAs(buffer, 0, e.end - e.begin, e.dtype)
    } else {
      const bytes = await this.src.read(e.begin, e.end - e.begin)
      const aligned = (bytes.byteOffset & 7) === 0 ? bytes : copy(bytes)
      data = viewAs(aligned.buffer as ArrayBuffer, aligned.byteOffset, aligned.byteLength, e.dtype)
    }
    return {name, shape: e.shape.slice(), dtype: e.dtype, data}
  }

  async close(): Promise<void> {
    this.pool.clear()
    await this.src.close()
  }
}

const EMPTY = new ArrayBuffer(0)

function copy(b: Uint8Array): Uint8Array {
  const c = new Uint8Array(new ArrayBuffer(b.byteLength))
  c.set(b)
  return c
}

function viewAs(buffer: ArrayBuffer, byteOffset: number, byteLength: number, dtype: DenseDType): HostArray {
  switch (dtype) {
    case 'f32':
      return new Float32Array(buffer, byteOffset, byteLength / 4)
    case 'f64':
      return new Float64Array(buffer, byteOffset, byteLength / 8)
    default:
      return new Uint16Array(buffer, byteOffset, byteLength / 2)
  }
}

/** One header entry, checked against the data area (see the module comment). */
function checkEntry(name: string, v: unknown, dataStart: number, dataSize: number, bad: (msg: string, code?: string) => never, label: string): SafetensorsEntry {
  // The escaped name is made only for a message (a header may list a million tensors).
  const shown = (): string => safeText(name)
  const e = v as {dtype?: unknown; shape?: unknown; data_offsets?: unknown}
  if (typeof e !== 'object' || e === null || Array.isArray(e)) bad(`tensor ${shown()}: entry is not an object`)
  if (typeof e.dtype !== 'string') bad(`tensor ${shown()}: missing dtype`)
  const fileDtype = e.dtype as string
  const size = Object.hasOwn(ITEM_SIZE, fileDtype) ? ITEM_SIZE[fileDtype] : undefined
  if (size === undefined) bad(`tensor ${shown()}: unknown dtype ${safeText(fileDtype, 20)}`)
  if (!Array.isArray(e.shape) || !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) bad(`tensor ${shown()}: shape must be a list of non-negative integers`)
  const shape = e.shape as number[]
  let numel = 1
  for (const d of shape) numel *= d
  if (!Number.isSafeInteger(numel) || !Number.isSafeInteger(numel * size!)) bad(`tensor ${shown()}: shape [${shape.join(', ')}] is too large`)
  const off = e.data_offsets
  if (!Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isSafeInteger(x) && x >= 0)) bad(`tensor ${shown()}: data_offsets must be two non-negative integers`)
  const [b, en] = off as number[]
  if (en < b) bad(`tensor ${shown()}: data_offsets [${b}, ${en}] end before they begin`)
  if (en > dataSize) {
    throw new InputError('truncated', `${label}: tensor ${shown()} ends at data byte ${en} but the file holds ${dataSize} data bytes (truncated file or lying header)`, 'the file is incomplete; save it again')
  }
  if (en - b !== numel * size!) bad(`tensor ${shown()}: data_offsets span ${en - b} bytes but shape [${shape.join(', ')}] of ${fileDtype} needs ${numel * size!}`)
  const dtype = Object.hasOwn(DENSE, fileDtype) ? DENSE[fileDtype] : null
  const problem = dtype === null ? `unsupported dtype ${fileDtype}` : denseShapeProblem(shape)
  return {name, fileDtype, dtype, problem, shape, numel, begin: dataStart + b, end: dataStart + en}
}

/**
 * Write tensors as `.safetensors` (for tests, fixtures and scripts). Tensors are laid out in
 * the given order; the header is padded with spaces to a multiple of 8 bytes.
 */
export async function writeSafetensorsTo(sink: ByteSink, tensors: DenseTensor[], metadata?: Record<string, string>): Promise<void> {
  await writeSafetensorsStreamTo(sink, tensors, async (i, s) => {
    for (const c of byteChunks(tensors[i].data)) await s.write(c)
  }, metadata)
}

/** A tensor's header entry for the streaming writer. */
export interface SafetensorsSpec {
  name: string
  shape: number[]
  dtype: DenseTensor['dtype']
}

const ITEM_BYTES: Record<DenseTensor['dtype'], number> = {f32: 4, f16: 2, bf16: 2, f64: 8}

/**
 * Write `.safetensors` without holding the tensors in memory (for scripts that make large
 * files): the header comes from `specs`, then `produce(i, sink)` writes tensor i's bytes,
 * exactly numel × itemsize of them (checked).
 */
export async function writeSafetensorsStreamTo(
  sink: ByteSink,
  specs: SafetensorsSpec[],
  produce: (index: number, sink: ByteSink) => Promise<void>,
  metadata?: Record<string, string>,
): Promise<void> {
  // NOTE: no prototype, so that a tensor named __proto__ is a key like any other (on a
  // plain object, assigning it would set the prototype and drop the tensor from the header).
  const header = Object.create(null) as Record<string, unknown>
  if (metadata) header.__metadata__ = metadata
  let offset = 0
  const sizes = specs.map((t) => t.shape.reduce((a, b) => a * b, 1) * ITEM_BYTES[t.dtype])
  for (const [i, t] of specs.entries()) {
    header[t.name] = {dtype: SAFETENSORS_DTYPE[t.dtype], shape: t.shape, data_offsets: [offset, offset + sizes[i]]}
    offset += sizes[i]
  }
  let json = JSON.stringify(header)
  json = json.padEnd(Math.ceil((json.length + 8) / 8) * 8 - 8, ' ')
  const hb = new TextEncoder().encode(json)
  const pad = (8 - ((8 + hb.length) % 8)) % 8
  const head = new Uint8Array(8 + hb.length + pad).fill(0x20)
  new DataView(head.buffer).setBigUint64(0, BigInt(hb.length + pad), true)
  head.set(hb, 8)
  await sink.write(head)
  for (let i = 0; i < specs.length; i++) {
    let written = 0
    await produce(i, {
      write: async (chunk) => {
        written += chunk.byteLength
        await sink.write(chunk)
      },
    })
    if (written !== sizes[i]) throw new Error(`safetensors writer: tensor ${specs[i].name} needs ${sizes[i]} bytes, got ${written}`)
  }
}
