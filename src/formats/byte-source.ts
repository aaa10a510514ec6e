import {constants as bufferConstants} from 'node:buffer'
import {open, stat, type FileHandle} from 'node:fs/promises'

import {InputError, UsageError} from '../errors.js'

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

export class FileSource implements ByteSource {
  private constructor(
    private readonly fh: FileHandle,
    readonly label: string,
    readonly size: number,
  ) {}

  static async open(path: string): Promise<FileSource> {
    const fh = await openForReading(path)
    const st = await fh.stat()
    if (!st.isFile()) {
      await fh.close()
      throw new UsageError('not-a-file', `${path} is not a regular file`, 'pass a file path')
    }
    return new FileSource(fh, path, st.size)
  }

  /**
   * Returns an 8-byte aligned buffer of its own (safe to view as any typed array): fresh,
   * or taken from `pool` (then it may be longer than `length`; the view is exact).
   */
  async read(position: number, length: number, pool?: BufferPool): Promise<Uint8Array> {
    if (position < 0 || length < 0 || position + length > this.size) throw truncated(this.label, position + length, this.size)
    const reused = pool?.take(length)
    const out = new Uint8Array(reused ?? new ArrayBuffer(length), 0, length)
    let done = 0
    while (done < length) {
      // NOTE: a single read() is capped near 2 GiB; loop for larger ranges.
      const chunk = Math.min(length - done, 1 << 30)
      const {bytesRead} = await this.fh.read(out, done, chunk, position + done)
      if (bytesRead === 0) throw truncated(this.label, position + length, position + done)
      done += bytesRead
    }
    return out
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

/** Open a file for reading, turning ENOENT/EACCES/EISDIR into one-line errors. */
export async function openForReading(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r')
  } catch (error) {
    throw fileError(error, path)
  }
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
  return error instanceof Error ? error : new Error(String(error))
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
