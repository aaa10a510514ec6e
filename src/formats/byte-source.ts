import {constants as bufferConstants} from 'node:buffer'
import {constants as fsConstants, type Stats} from 'node:fs'
import {open, stat, type FileHandle} from 'node:fs/promises'

import {fromSystemError, InputError, UsageError} from '../errors.js'
import {pace} from './pace.js'

/**
 * Random-access bytes: a file read at offsets (so large files are never loaded whole) or a
 * buffer already in memory (stdin). Readers of .npz and .safetensors take one of these.
 */
export interface ByteSource {
  /** What to call it in messages (the path, or 'stdin'). */
  readonly label: string
  readonly size: number
  /** Exactly `length` bytes at `position`; throws InputError if the source is shorter. */
  read(position: number, length: number): Promise<Uint8Array>
  close(): Promise<void>
}

export class BufferSource implements ByteSource {
  readonly size: number
  constructor(
    readonly bytes: Uint8Array,
    readonly label: string,
  ) {
    this.size = bytes.byteLength
  }

  async read(position: number, length: number): Promise<Uint8Array> {
    if (position < 0 || length < 0 || position + length > this.size) throw truncated(this.label, position + length, this.size)
    // NOTE: a read from memory resolves at once, so a loop of them (10^5 .npz members from
    // stdin) never gives the event loop a turn, and Ctrl-C would wait for it: see pace.ts.
    await pace()
    return this.bytes.subarray(position, position + length)
  }

  async close(): Promise<void> {}
}

/**
 * Read buffers handed back by a consumer that is done with a tensor
 * (`TensorSource.release`), reused by later reads of the same source.
 *
 * NOTE: fresh memory is not free. On the virtual machines these tools run on, the first
 * touch of a page costs ~12 µs (memory backed lazily by the hypervisor): filling a fresh
 * 256 MiB buffer runs at ~250 MB/s, while reading the same bytes from the page cache into
 * a buffer already touched runs at ~14 GB/s. Reusing buffers is what lets a checkpoint
 * stream through at disk/page-cache speed. Only large buffers are kept, at most `maxBuffers`.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[] = []
  constructor(
    readonly maxBuffers = 2,
    readonly minBytes = 1 << 20,
  ) {}

  /** The smallest pooled buffer of at least `bytes` bytes (removed from the pool), if any. */
  take(bytes: number): ArrayBuffer | undefined {
    if (bytes < this.minBytes) return undefined
    let best = -1
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i].byteLength
      if (b >= bytes && (best < 0 || b < this.free[best].byteLength)) best = i
    }
    return best < 0 ? undefined : this.free.splice(best, 1)[0]
  }

  /** Keep `buffer` for reuse (the caller must not use it any more). */
  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength < this.minBytes || this.free.includes(buffer)) return
    this.free.push(buffer)
    if (this.free.length > this.maxBuffers) {
      // Drop the smallest: the large ones are the expensive ones to touch again.
      let min = 0
      for (let i = 1; i < this.free.length; i++) if (this.free[i].byteLength < this.free[min].byteLength) min = i
      this.free.splice(min, 1)
    }
  }

  /** Bytes held for reuse. */
  get bytes(): number {
    return this.free.reduce((a, b) => a + b.byteLength, 0)
  }

  clear(): void {
    this.free.length = 0
  }
}

/** The most bytes one read() call asks the system for (a single read is capped near 2 GiB). */
const READ_CHUNK = 1 << 30
/** Reads up to this size are served from a read-ahead block of READ_AHEAD bytes. */
const SMALL_READ = 1 << 12
const READ_AHEAD = 1 << 18
/** The longest Uint8Array Node 20 can make (V8's typed-array length limit): 2^32 bytes. */
export const MAX_BYTE_VIEW = 2 ** 32

export class FileSource implements ByteSource {
  private constructor(
    private readonly fh: FileHandle,
    readonly label: string,
    readonly size: number,
  ) {}

  /** Open a regular file for reading (see openForReading: FIFOs and devices are refused). */
  static async open(path: string): Promise<FileSource> {
    const {fh, stats} = await openRegularFile(path)
    return new FileSource(fh, path, stats.size)
  }

  /**
   * Returns an 8-byte aligned buffer of its own (safe to view as any typed array): fresh,
   * or taken from `pool` (then it may be longer than `length`; the view is exact).
   * At most 4 GiB (one Uint8Array); readBuffer() reads larger ranges.
   */
  async read(position: number, length: number, pool?: BufferPool): Promise<Uint8Array> {
    if (length > MAX_BYTE_VIEW) throw new InputError('too-large', `${this.label}: cannot read ${length} bytes into one byte array (the limit is ${MAX_BYTE_VIEW})`, 'this part of the file is read in pieces elsewhere; please report this')
    const buffer = await this.readBuffer(position, length, pool)
    return new Uint8Array(buffer, 0, length)
  }

  /**
   * `length` bytes at `position` in an ArrayBuffer of their own (fresh, or from `pool`, then
   * possibly longer), filled through views of at most 1 GiB: unlike one Uint8Array, an
   * ArrayBuffer (and a Float32Array over it) may exceed 4 GiB, so tensors larger than 4 GiB
   * are read with no extra copy. Yields to the event loop between pieces (see pace.ts).
   */
  async readBuffer(position: number, length: number, pool?: BufferPool): Promise<ArrayBuffer> {
    if (position < 0 || length < 0 || position + length > this.size) throw truncated(this.label, position + length, this.size)
    const buffer = pool?.take(length) ?? new ArrayBuffer(length)
    if (length <= SMALL_READ) {
      // Small reads (ZIP headers, one-value tensors) come from a read-ahead block: an .npz
      // of 100,000 members is a few hundred thousand of them, each a system call otherwise.
      const {block, at} = await this.blockFor(position, length)
      new Uint8Array(buffer, 0, length).set(block.subarray(position - at, position - at + length))
      // NOTE: most come from the block already read, at once (65,536 four-byte tensors a
      // block): like reads from memory they must yield now and then (see BufferSource.read).
      await pace()
      return buffer
    }
    await this.fill(buffer, position, length)
    return buffer
  }

  /** The read-ahead block holding [position, position + length), read anew when it does not. */
  private async blockFor(position: number, length: number): Promise<{block: Uint8Array; at: number}> {
    if (this.block && position >= this.blockAt && position + length <= this.blockAt + this.block.length) return {block: this.block, at: this.blockAt}
    // At most READ_AHEAD bytes, never past the end: no more memory than the file holds.
    const n = Math.min(READ_AHEAD, this.size - position)
    const block = new Uint8Array(n)
    await this.fill(block.buffer, position, n)
    this.block = block
    this.blockAt = position
    return {block, at: position}
  }

  private block: Uint8Array | null = null
  private blockAt = 0

  /** Fill `buffer[0, length)` from the file at `position`, through views of at most READ_CHUNK. */
  private async fill(buffer: ArrayBufferLike, position: number, length: number): Promise<void> {
    let done = 0
    while (done < length) {
      const chunk = Math.min(length - done, READ_CHUNK)
      const view = new Uint8Array(buffer, done, chunk)
      let got = 0
      while (got < chunk) {
        const {bytesRead} = await this.fh.read(view, got, chunk - got, position + done + got).catch((error) => {
          throw fromSystemError(error, 'read', this.label)
        })
        if (bytesRead === 0) throw truncated(this.label, position + length, position + done + got)
        got += bytesRead
      }
      done += chunk
      await pace()
    }
  }

  async close(): Promise<void> {
    await this.fh.close()
  }
}

function truncated(label: string, needed: number, size: number): InputError {
  return new InputError(
    'truncated',
    `${label} is truncated: needs at least ${needed} bytes but has ${size}`,
    'the file is incomplete; copy or export it again',
  )
}

/**
 * Open a regular file for reading. The open is non-blocking (O_NONBLOCK), so a FIFO whose
 * other end nobody opens cannot hang the process (a blocked open() would also keep a
 * Ctrl-C'd process alive: its thread cannot be stopped); then anything but a regular file
 * (a FIFO, a character or block device, a socket, a directory) is refused, before any byte
 * is read. Turns ENOENT/EACCES/EISDIR/... into one-line errors.
 */
export async function openRegularFile(path: string): Promise<{fh: FileHandle; stats: Stats}> {
  let fh: FileHandle
  try {
    fh = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK)
  } catch (error) {
    throw fileError(error, path)
  }
  let stats: Stats
  try {
    stats = await fh.stat()
  } catch (error) {
    await fh.close().catch(() => {})
    throw fileError(error, path)
  }
  if (!stats.isFile()) {
    await fh.close().catch(() => {})
    throw notRegular(path, stats)
  }
  return {fh, stats}
}

/** The one-line refusal of a path that is not a regular file. */
export function notRegular(path: string, stats: Stats): UsageError {
  if (stats.isDirectory()) return new UsageError('is-directory', `${path} is a directory, not a file`, 'pass a file path')
  const what = stats.isFIFO() ? 'a named pipe (FIFO)' : stats.isCharacterDevice() ? 'a character device' : stats.isBlockDevice() ? 'a block device' : stats.isSocket() ? 'a socket' : 'not a regular file'
  return new UsageError('not-a-file', `${path} is ${what}, not a regular file`, "pass a regular file, or stream it through stdin: sparse ... - < file")
}

/** Open a file for reading (a regular file only; see openRegularFile). */
export async function openForReading(path: string): Promise<FileHandle> {
  return (await openRegularFile(path)).fh
}

/**
 * A whole small text file (UTF-8), at most `maxBytes`: a regular file only, its size
 * checked before reading (a 600 MB manifest.json, or one linked to /dev/zero, is refused
 * with one line instead of filling memory; a FIFO is refused without waiting on it).
 */
export async function readTextFile(path: string, maxBytes: number, what = 'file'): Promise<string> {
  const src = await openTextFile(path, maxBytes, what)
  try {
    return new TextDecoder('utf-8').decode(await src.read(0, src.size))
  } finally {
    await src.close()
  }
}

/**
 * The checks of readTextFile without the read: throws what readTextFile would throw before
 * reading (missing, not a regular file, over `maxBytes`). For a file read later, checked
 * before long work starts.
 */
export async function checkTextFile(path: string, maxBytes: number, what = 'file'): Promise<void> {
  await (await openTextFile(path, maxBytes, what)).close()
}

async function openTextFile(path: string, maxBytes: number, what: string): Promise<FileSource> {
  const src = await FileSource.open(path)
  if (src.size > maxBytes) {
    await src.close()
    throw new InputError('too-large', `${path}: this ${what} is ${src.size} bytes, more than the ${maxBytes} sparse reads`, `check that ${path} is the right file`)
  }
  return src
}

/** stat() with one-line errors for a missing or unreadable input. */
export async function statInput(path: string) {
  try {
    return await stat(path)
  } catch (error) {
    throw fileError(error, path)
  }
}

export function fileError(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') return new UsageError('missing-file', `no such file: ${path}`, 'check the path')
  if (code === 'EACCES' || code === 'EPERM') return new UsageError('unreadable', `cannot read ${path}: permission denied`, 'check the file permissions')
  if (code === 'EISDIR') return new UsageError('is-directory', `${path} is a directory, not a file`, 'pass a file path')
  if (code === 'ERR_FS_FILE_TOO_LARGE') return new InputError('too-large', `${path} is too large to read whole`, 'check that it is the file you meant')
  if (code === 'ENOTDIR') return new UsageError('missing-file', `no such file: ${path} (a part of the path is not a folder)`, 'check the path')
  if (code === 'ELOOP' || code === 'ENAMETOOLONG') return new UsageError('bad-path', `cannot open ${path} (${code})`, 'check the path')
  const mapped = fromSystemError(error, 'read', path)
  return mapped instanceof Error ? mapped : new Error(String(mapped))
}

/** A copy of `bytes` in its own 8-byte aligned ArrayBuffer (for typed-array views). */
export function aligned(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset % 8 === 0) return bytes
  const out = new Uint8Array(new ArrayBuffer(bytes.byteLength))
  out.set(bytes)
  return out
}

const MAX_LENGTH = bufferConstants.MAX_LENGTH
let stdinBytes: Promise<Buffer> | undefined

/**
 * All of stdin, read once and memoised: format detection sniffs it and the reader then
 * parses the same bytes. (A pipe cannot be read twice.)
 */
export function readStdin(): Promise<Buffer> {
  stdinBytes ??= (async () => {
    if (process.stdin.isTTY) {
      throw new UsageError('stdin-tty', "input '-' reads from stdin, but stdin is a terminal", 'pipe a file in: sparse info - < weights.npy')
    }
    const chunks: Buffer[] = []
    let total = 0
    for await (const chunk of process.stdin) {
      chunks.push(chunk as Buffer)
      total += (chunk as Buffer).length
      // NOTE: one Buffer holds at most buffer.constants.MAX_LENGTH bytes (4 GiB on Node 20).
      if (total > MAX_LENGTH) throw new UsageError('stdin-too-large', `stdin holds more than ${MAX_LENGTH} bytes, more than sparse can buffer`, 'pass the file by its path instead of through a pipe')
    }
    return Buffer.concat(chunks, total)
  })()
  return stdinBytes
}

/** For tests: make the next readStdin() call use these bytes. */
export function setStdinForTesting(bytes: Uint8Array | undefined): void {
  stdinBytes = bytes === undefined ? undefined : Promise.resolve(Buffer.from(bytes))
}
