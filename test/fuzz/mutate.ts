/**
 * Byte-level mutations of valid seed files, as fast-check values (so a failing case shrinks
 * to few, small mutations). Positions are raw naturals reduced modulo the file length when
 * applied, or picked from the seed's boundaries/fields (truncation "at every offset class":
 * inside the magic, the length field, the header, at the header's end, inside the data, the
 * last byte).
 */
import fc from 'fast-check'

import type {Built} from './builders.js'

/** Integers that break naive arithmetic: zero, signs, int32/uint32/2^53/uint64 edges, 10^12. */
export const INTERESTING: bigint[] = [
  0n, 1n, 2n, 7n, 8n, 0x7fn, 0x80n, 0xffn, 0x7fffn, 0x8000n, 0xffffn, 0x10000n,
  0x7fffffffn, 0x80000000n, 0xfffffffen, 0xffffffffn, 0x100000000n,
  10n ** 12n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n,
]

export type Mutation =
  | {op: 'truncate'; at: number; boundary: boolean; delta: number}
  | {op: 'flip'; pos: number; bit: number}
  | {op: 'setByte'; pos: number; value: number}
  | {op: 'lie'; field: number; value: number; delta: number}
  | {op: 'insert'; pos: number; bytes: number[]}
  | {op: 'delete'; pos: number; len: number}
  | {op: 'append'; bytes: number[]}
  | {op: 'duplicate'; pos: number; len: number}

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  {weight: 4, arbitrary: fc.record({op: fc.constant('truncate' as const), at: fc.nat(), boundary: fc.boolean(), delta: fc.integer({min: -2, max: 2})})},
  {weight: 4, arbitrary: fc.record({op: fc.constant('flip' as const), pos: fc.nat(), bit: fc.integer({min: 0, max: 7})})},
  {weight: 2, arbitrary: fc.record({op: fc.constant('setByte' as const), pos: fc.nat(), value: fc.constantFrom(0, 1, 0x20, 0x2c, 0x30, 0x39, 0x7f, 0x80, 0xff, 0x0a, 0x22, 0x7b, 0x2d)})},
  {weight: 5, arbitrary: fc.record({op: fc.constant('lie' as const), field: fc.nat(), value: fc.nat({max: INTERESTING.length - 1}), delta: fc.integer({min: -2, max: 2})})},
  {weight: 1, arbitrary: fc.record({op: fc.constant('insert' as const), pos: fc.nat(), bytes: fc.array(fc.integer({min: 0, max: 255}), {minLength: 1, maxLength: 8})})},
  {weight: 1, arbitrary: fc.record({op: fc.constant('delete' as const), pos: fc.nat(), len: fc.integer({min: 1, max: 16})})},
  {weight: 1, arbitrary: fc.record({op: fc.constant('append' as const), bytes: fc.array(fc.integer({min: 0, max: 255}), {minLength: 1, maxLength: 16})})},
  {weight: 1, arbitrary: fc.record({op: fc.constant('duplicate' as const), pos: fc.nat(), len: fc.integer({min: 1, max: 64})})},
)

export const mutationsArb = fc.array(mutationArb, {minLength: 1, maxLength: 3})

/** Apply mutations in order. Fields/boundaries refer to the seed; later ones may land anywhere. */
export function applyMutations(seed: Built, muts: Mutation[]): Uint8Array {
  let b = seed.bytes.slice()
  for (const m of muts) {
    const len = b.length
    switch (m.op) {
      case 'truncate': {
        const at = m.boundary && seed.boundaries.length > 0 ? seed.boundaries[m.at % seed.boundaries.length] + m.delta : m.at % (len + 1)
        b = b.slice(0, Math.max(0, Math.min(len, at)))
        break
      }
      case 'flip':
        if (len > 0) b[m.pos % len] ^= 1 << m.bit
        break
      case 'setByte':
        if (len > 0) b[m.pos % len] = m.value
        break
      case 'lie': {
        if (seed.fields.length === 0) break
        const f = seed.fields[m.field % seed.fields.length]
        if (f.offset + f.width > len) break
        let v = INTERESTING[m.value] + BigInt(m.delta)
        v = BigInt.asUintN(f.width * 8, v)
        for (let i = 0; i < f.width; i++) b[f.offset + i] = Number((v >> BigInt(8 * i)) & 0xffn)
        break
      }
      case 'insert': {
        const p = m.pos % (len + 1)
        const out = new Uint8Array(len + m.bytes.length)
        out.set(b.subarray(0, p))
        out.set(m.bytes, p)
        out.set(b.subarray(p), p + m.bytes.length)
        b = out
        break
      }
      case 'delete': {
        if (len === 0) break
        const p = m.pos % len
        const out = new Uint8Array(len - Math.min(m.len, len - p))
        out.set(b.subarray(0, p))
        out.set(b.subarray(p + m.len), p)
        b = out
        break
      }
      case 'append': {
        const out = new Uint8Array(len + m.bytes.length)
        out.set(b)
        out.set(m.bytes, len)
        b = out
        break
      }
      case 'duplicate': {
        if (len === 0) break
        const p = m.pos % len
        const piece = b.slice(p, Math.min(len, p + m.len))
        const out = new Uint8Array(len + piece.length)
        out.set(b.subarray(0, p + piece.length))
        out.set(piece, p + piece.length)
        out.set(b.subarray(p + piece.length), p + 2 * piece.length)
        b = out
        break
      }
    }
  }
  return b
}
