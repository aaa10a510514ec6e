/**
 * Command output gathered in UTF-8 pieces of about a megabyte and written when the command
 * is done. The report of a file of a million tensors is hundreds of megabytes: built as one
 * string it took most of the run (every join copies), and as JSON it is longer than V8's
 * longest string (2^29 - 24 characters). Nothing is written before the end, so an error or
 * an interrupt midway still leaves stdout empty.
 */
import {once} from 'node:events'

import {pace} from '../formats/pace.js'

const CHUNK_BYTES = 1 << 20
const PENDING_CHARS = 1 << 16

export class TextChunks {
  private readonly full: Buffer[] = []
  private buf = Buffer.allocUnsafe(CHUNK_BYTES)
  private used = 0
  /** Strings not yet encoded (one native write per ~64 K characters, not per piece). */
  private pending: string[] = []
  private pendingChars = 0

  push(s: string): void {
    this.pending.push(s)
    this.pendingChars += s.length
    if (this.pendingChars >= PENDING_CHARS) this.encode()
  }

  private encode(): void {
    if (this.pendingChars === 0) return
    const s = this.pending.length === 1 ? this.pending[0] : this.pending.join('')
    this.pending = []
    this.pendingChars = 0
    // A UTF-16 unit takes at most 3 bytes of UTF-8.
    if (s.length * 3 > CHUNK_BYTES - this.used) {
      this.seal()
      if (s.length * 3 > CHUNK_BYTES) {
        this.full.push(Buffer.from(s, 'utf8'))
        return
      }
    }
    this.used += this.buf.write(s, this.used, 'utf8')
  }

  /** A place in the text, for insertAt() once what goes there is known. */
  mark(): number {
    this.seal()
    return this.full.length
  }

  /** Put `s` at a place mark() gave (places marked later move along). */
  insertAt(mark: number, s: string): void {
    this.seal()
    this.full.splice(mark, 0, Buffer.from(s, 'utf8'))
  }

  /** The pieces in order; the text is their concatenation. */
  done(): Buffer[] {
    this.seal()
    return this.full
  }

  private seal(): void {
    this.encode()
    if (this.used === 0) return
    if (this.used < CHUNK_BYTES / 2) {
      // A short piece (a file's head, between inputs) is copied out and the buffer reused:
      // a view would keep the whole megabyte alive for each of a thousand inputs.
      this.full.push(Buffer.from(this.buf.subarray(0, this.used)))
    } else {
      this.full.push(this.buf.subarray(0, this.used))
      this.buf = Buffer.allocUnsafe(CHUNK_BYTES)
    }
    this.used = 0
  }
}

/**
 * Write the pieces in order, waiting when the stream asks (a pipe to a slow reader); a
 * stream error rejects. Writes to a file or a pipe are synchronous on Linux: the event loop
 * gets a turn between pieces (pace.ts), so Ctrl-C still acts during a long write.
 */
export async function writeChunks(stream: NodeJS.WritableStream, chunks: readonly Buffer[]): Promise<void> {
  for (const c of chunks) {
    if (!stream.write(c)) await once(stream, 'drain')
    await pace()
  }
}
