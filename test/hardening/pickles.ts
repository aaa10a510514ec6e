/**
 * Hand-made pickles and torch.save ZIP files for the hostile-input tests (no PyTorch here):
 * the opcodes are written out as torch.save writes them (protocol 2), so a test can build
 * exactly the hostile structure it needs.
 */
import {zipSync} from 'fflate'

const enc = new TextEncoder()

/** Bytes from numbers, strings (latin1, one byte a character) and byte arrays. */
export function bytes(...parts: (number | string | Uint8Array | number[])[]): Uint8Array {
  const pieces = parts.map((p) => (typeof p === 'number' ? Uint8Array.of(p) : typeof p === 'string' ? Uint8Array.from(p, (c) => c.charCodeAt(0) & 0xff) : p instanceof Uint8Array ? p : Uint8Array.from(p)))
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of pieces) {
    out.set(p, at)
    at += p.length
  }
  return out
}

function u32le(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
}

export const PROTO = bytes(0x80, 2)
export const STOP = bytes('.')
/** BINUNICODE: a str. */
export function str(s: string): Uint8Array {
  const b = enc.encode(s)
  return bytes('X', u32le(b.length), b)
}
/** BININT: a 32-bit int. */
export function int(n: number): Uint8Array {
  return bytes('J', u32le(n))
}
/** A tuple of already-pickled items (MARK ... TUPLE). */
export function tuple(...items: (number | string | Uint8Array)[]): Uint8Array {
  return bytes('(', ...items, 't')
}
/** GLOBAL module.name */
export function global(module: string, name: string): Uint8Array {
  return bytes(`c${module}\n${name}\n`)
}

/** A tensor as torch.save pickles it: _rebuild_tensor_v2(storage pid, offset, size, stride, False, OrderedDict()). */
export function tensor(opts: {key: string; type?: string; numel: number; offset?: number; size: number[]; stride?: number[]}): Uint8Array {
  const stride = opts.stride ?? opts.size.map((_, i) => opts.size.slice(i + 1).reduce((a, b) => a * b, 1))
  const pid = bytes(tuple(str('storage'), global('torch', opts.type ?? 'FloatStorage'), str(opts.key), str('cpu'), int(opts.numel)), 'Q')
  return bytes(
    global('torch._utils', '_rebuild_tensor_v2'),
    tuple(pid, int(opts.offset ?? 0), tuple(...opts.size.map(int)), tuple(...stride.map(int)), 0x89, global('collections', 'OrderedDict'), ')', 'R'),
    'R',
  )
}

/** A dict of already-pickled values: EMPTY_DICT MARK key value ... SETITEMS. */
export function dict(entries: [string, Uint8Array][]): Uint8Array {
  return bytes('}', '(', ...entries.flatMap(([k, v]) => [str(k), v]), 'u')
}

/**
 * A torch.save ZIP: `<folder>/data.pkl`, `<folder>/data/<key>` for each storage and
 * `<folder>/version`. `level` deflates data.pkl (torch stores it; the reader takes both).
 */
export function torchZip(pickle: Uint8Array, storages: Record<string, Uint8Array> = {}, opts: {folder?: string; level?: 0 | 1 | 9} = {}): Uint8Array {
  const folder = opts.folder ?? 'archive/'
  const files: Record<string, [Uint8Array, {level: 0 | 1 | 9}]> = {}
  files[`${folder}data.pkl`] = [pickle, {level: opts.level ?? 0}]
  for (const [k, v] of Object.entries(storages)) files[`${folder}data/${k}`] = [v, {level: 0}]
  files[`${folder}version`] = [enc.encode('3\n'), {level: 0}]
  return zipSync(files)
}

/** float32 values as bytes. */
export function f32(values: number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer)
}
