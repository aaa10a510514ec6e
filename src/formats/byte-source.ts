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

  /** Returns a fresh, 8-byte aligned buffer (safe to view as any typed array). */
  async read(position: number, length: number): Promise<Uint8Array> {
    if (position < 0 || length < 0 || position + length > this.size) throw truncated(this.label, position + length, this.size)
    const out = new Uint8Array(new ArrayBuffer(length))
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
  return error instanceof Error ? error : new Error(String(error))
}

/** A copy of `bytes` in its own 8-byte aligned ArrayBuffer (for typed-array views). */
export function aligned(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset % 8 === 0) return bytes
  const out = new Uint8Array(new ArrayBuffer(bytes.byteLength))
  out.set(bytes)
  return out
}

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
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  })()
  return stdinBytes
}

/** For tests: make the next readStdin() call use these bytes. */
export function setStdinForTesting(bytes: Uint8Array | undefined): void {
  stdinBytes = bytes === undefined ? undefined : Promise.resolve(Buffer.from(bytes))
}
