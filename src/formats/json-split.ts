/**
 * Reading a large JSON object or array piece by piece: the text is split into its
 * top-level members (or items) by a scanner that only tracks strings and bracket depth, and
 * each piece is parsed by JSON.parse on its own. Compared with one JSON.parse of the whole
 * text, this
 * - yields to the event loop between pieces (pace.ts), so Ctrl-C acts within ~100 ms even
 *   on a 100 MB safetensors header or a manifest of a million tensors;
 * - sees duplicate keys (JSON.parse silently keeps the last one), which callers refuse;
 * - is no laxer: every piece goes through JSON.parse, and the scanner accepts only JSON's
 *   own whitespace and separators between pieces.
 */
import {pace, paceDue} from './pace.js'

export class JsonSplitError extends Error {}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d])
/** The next quote, bracket or brace. */
const STRUCT = /["{}[\]]/g
/** The end of a number or literal. */
const PRIMITIVE_END = /[,}\]\s]/g

function skipWs(s: string, i: number): number {
  while (i < s.length && WS.has(s.charCodeAt(i))) i++
  return i
}

/** Index after the string whose opening quote is at i. */
function stringEnd(s: string, i: number): number {
  let j = i + 1
  for (;;) {
    const q = s.indexOf('"', j)
    if (q < 0) throw new JsonSplitError(`unterminated string at ${i}`)
    let k = q - 1
    while (k > i && s.charCodeAt(k) === 0x5c) k--
    // An even number of backslashes before the quote: it closes the string.
    if ((q - 1 - k) % 2 === 0) return q + 1
    j = q + 1
  }
}

/** Index after the JSON value starting at i (its content is checked later by JSON.parse). */
function valueEnd(s: string, i: number): number {
  const c = s[i]
  if (c === '"') return stringEnd(s, i)
  if (c === '{' || c === '[') {
    let depth = 0
    let j = i
    for (;;) {
      // NOTE: test() and lastIndex, not exec(): exec() allocates a match array for every
      // bracket and quote (a kilobyte per safetensors entry, and scavenges on a large header).
      STRUCT.lastIndex = j
      if (!STRUCT.test(s)) throw new JsonSplitError(`unterminated ${c === '{' ? 'object' : 'array'} at ${i}`)
      const k = STRUCT.lastIndex - 1
      const ch = s[k]
      if (ch === '"') {
        j = stringEnd(s, k)
        continue
      }
      depth += ch === '{' || ch === '[' ? 1 : -1
      j = k + 1
      if (depth === 0) return j
    }
  }
  PRIMITIVE_END.lastIndex = i
  const end = PRIMITIVE_END.test(s) ? PRIMITIVE_END.lastIndex - 1 : s.length
  if (end === i) throw new JsonSplitError(`expected a value at ${i}`)
  return end
}

function parsePiece(s: string, start: number, end: number): unknown {
  try {
    return JSON.parse(s.slice(start, end))
  } catch (error) {
    throw new JsonSplitError(`${(error as Error).message.replace(/ in JSON at position \d+.*$/, '')} (in the value at ${start})`)
  }
}

/** A key's string without JSON.parse when it holds no escape and no control character (JSON.parse refuses those raw). */
const KEY_NEEDS_PARSE = /[\\\u0000-\u001f]/

function parseKey(s: string, start: number, end: number): string {
  const raw = s.slice(start + 1, end - 1)
  return KEY_NEEDS_PARSE.test(raw) ? (parsePiece(s, start, end) as string) : raw
}

/** Members per batch of jsonObjectMembers (one await per batch, not per member). */
const BATCH = 256

/**
 * The members of the JSON object in `s[start, end)` (which must be exactly one object,
 * with only whitespace around it), in order, as [key, value] pairs, in batches of up to 256
 * (a header of a million members costs a million awaits otherwise). Throws JsonSplitError.
 */
export async function* jsonObjectMembers(s: string, start = 0, end = s.length): AsyncGenerator<Array<[string, unknown]>> {
  let i = skipWs(s, start)
  if (s[i] !== '{') throw new JsonSplitError(`expected an object at ${i}`)
  i = skipWs(s, i + 1)
  if (s[i] === '}') {
    i = skipWs(s, i + 1)
    if (i !== end) throw new JsonSplitError(`unexpected text after the object at ${i}`)
    return
  }
  let batch: Array<[string, unknown]> = []
  for (;;) {
    if (s[i] !== '"') throw new JsonSplitError(`expected a key at ${i}`)
    const keyEnd = stringEnd(s, i)
    const key = parseKey(s, i, keyEnd)
    i = skipWs(s, keyEnd)
    if (s[i] !== ':') throw new JsonSplitError(`expected ':' at ${i}`)
    i = skipWs(s, i + 1)
    const vEnd = valueEnd(s, i)
    if (vEnd > end) throw new JsonSplitError(`unterminated value at ${i}`)
    batch.push([key, parsePiece(s, i, vEnd)])
    i = skipWs(s, vEnd)
    if (s[i] === ',') {
      i = skipWs(s, i + 1)
    } else if (s[i] === '}') {
      i = skipWs(s, i + 1)
      if (i !== end) throw new JsonSplitError(`unexpected text after the object at ${i}`)
      yield batch
      return
    } else {
      throw new JsonSplitError(`expected ',' or '}' at ${i}`)
    }
    if (batch.length === BATCH) {
      yield batch
      batch = []
      if (paceDue()) await pace()
    }
  }
}

/**
 * An object whose members are parsed piece by piece, except that the member named
 * `splitKey`, when it is an array, is split into items too (a manifest's "tensors").
 * Refuses duplicate keys. Returns a plain object (null prototype is not used: keys such as
 * "__proto__" are stored as own properties).
 */
export async function parseJsonObjectSplitting(s: string, splitKey?: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  const seen = new Set<string>()
  let i = skipWs(s, 0)
  if (s[i] !== '{') throw new JsonSplitError(`expected an object at ${i}`)
  // Walk the members by hand when one of them must be split.
  if (splitKey === undefined) {
    for await (const batch of jsonObjectMembers(s)) {
      for (const [k, v] of batch) {
        if (seen.has(k)) throw new JsonSplitError(`key ${JSON.stringify(k.slice(0, 60))} appears twice`)
        seen.add(k)
        Object.defineProperty(out, k, {value: v, enumerable: true, configurable: true, writable: true})
      }
    }
    return out
  }
  i = skipWs(s, i + 1)
  if (s[i] === '}') {
    if (skipWs(s, i + 1) !== s.length) throw new JsonSplitError(`unexpected text after the object at ${i}`)
    return out
  }
  for (;;) {
    if (s[i] !== '"') throw new JsonSplitError(`expected a key at ${i}`)
    const keyEnd = stringEnd(s, i)
    const key = parseKey(s, i, keyEnd)
    if (seen.has(key)) throw new JsonSplitError(`key ${JSON.stringify(key.slice(0, 60))} appears twice`)
    seen.add(key)
    i = skipWs(s, keyEnd)
    if (s[i] !== ':') throw new JsonSplitError(`expected ':' at ${i}`)
    i = skipWs(s, i + 1)
    const vEnd = valueEnd(s, i)
    let value: unknown
    if (key === splitKey && s[i] === '[') value = await jsonArrayItems(s, i, vEnd)
    else value = parsePiece(s, i, vEnd)
    Object.defineProperty(out, key, {value, enumerable: true, configurable: true, writable: true})
    i = skipWs(s, vEnd)
    if (s[i] === ',') i = skipWs(s, i + 1)
    else if (s[i] === '}') {
      if (skipWs(s, i + 1) !== s.length) throw new JsonSplitError(`unexpected text after the object at ${i}`)
      return out
    } else throw new JsonSplitError(`expected ',' or '}' at ${i}`)
  }
}

/** The items of the JSON array exactly spanning s[start, end), parsed one by one. */
export async function jsonArrayItems(s: string, start: number, end: number): Promise<unknown[]> {
  const items: unknown[] = []
  let i = skipWs(s, start + 1)
  if (s[i] === ']') {
    if (i + 1 !== end) throw new JsonSplitError(`unexpected text in the array at ${i}`)
    return items
  }
  for (;;) {
    const vEnd = valueEnd(s, i)
    items.push(parsePiece(s, i, vEnd))
    i = skipWs(s, vEnd)
    if (s[i] === ',') i = skipWs(s, i + 1)
    else if (s[i] === ']' && i + 1 === end) return items
    else throw new JsonSplitError(`expected ',' or ']' at ${i}`)
    if ((items.length & 255) === 0 && paceDue()) await pace()
  }
}
