/**
 * A restricted Python unpickler (protocols 0-5, the opcodes that data needs). It never runs
 * code: a GLOBAL (or STACK_GLOBAL) is looked up in an allow-list the caller gives, and any
 * other name is refused with an InputError naming it. REDUCE and BUILD may only apply the
 * allowed functions; NEWOBJ, INST, OBJ and the extension registry are refused outright.
 *
 * Values: None -> null, bool, int -> number (bigint when beyond 2^53), float -> number,
 * str -> string, bytes -> Uint8Array, list -> PyList, tuple -> PyTuple, dict -> PyDict
 * (insertion-ordered), set -> PyList. Every length the stream claims is checked against the
 * bytes left before anything is allocated.
 *
 * Bounded by construction (src/formats/limits.ts): the pickle's size, the values it makes,
 * the memo, nested MARKs and integer lengths are counted as it is read, and `objectTree`
 * measures what walking the result would produce (every path through shared containers
 * counted, cycles refused) before anyone walks it. So a few hundred hostile bytes get a
 * one-line InputError at once, never minutes of CPU, a heap of gigabytes or a stack overflow.
 * `unpickleAsync` yields to the event loop as it reads (src/formats/pace.ts).
 */
import {InputError} from '../errors.js'
import {
  MAX_PICKLE_BYTES,
  MAX_PICKLE_DEPTH,
  MAX_PICKLE_INT_BYTES,
  MAX_PICKLE_INT_DIGITS,
  MAX_PICKLE_MEMO,
  MAX_PICKLE_OBJECTS,
  MAX_PICKLE_VALUES,
  safeText,
} from './limits.js'
import {pace} from './pace.js'

export class PyTuple extends Array<unknown> {}
export class PyList extends Array<unknown> {}

/** A dict (also OrderedDict); `state` holds what a BUILD set on it (e.g. a state_dict's `_metadata`). */
export class PyDict {
  readonly map = new Map<unknown, unknown>()
  state?: unknown
}

/** A name the pickle refers to (module, qualified name), resolved through the allow-list. */
export class PyGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualified(): string {
    return `${this.module}.${this.name}`
  }
}

export interface UnpickleHooks {
  /** Whether `module.name` may be loaded; a refused name stops the whole read. */
  allowGlobal(module: string, name: string): boolean
  /** Apply an allowed global to its arguments (REDUCE). */
  call(fn: PyGlobal, args: PyTuple): unknown
  /** Resolve a persistent id (BINPERSID / PERSID). */
  persistentLoad?(pid: unknown): unknown
  /** Why a refused name is refused, and what to do (the error's suggestion). */
  refusal?(module: string, name: string): {message: string; suggestion: string} | undefined
}

const MARK = Symbol('mark')

/** Read a whole pickle at once (synchronously). See unpickleAsync for long inputs. */
export function unpickle(bytes: Uint8Array, label: string, hooks: UnpickleHooks): unknown {
  return unpickler(bytes, label, hooks)(Infinity).value
}

/** Read a pickle, giving the event loop a turn every PACE_MS (so a signal acts at once). */
export async function unpickleAsync(bytes: Uint8Array, label: string, hooks: UnpickleHooks): Promise<unknown> {
  const run = unpickler(bytes, label, hooks)
  for (;;) {
    const r = run(1 << 14)
    if (r.done) return r.value
    await pace()
  }
}

function pickleError(label: string, msg: string): never {
  throw new InputError('bad-pickle', `${label}: ${msg}`, 'the file is corrupt or not a PyTorch checkpoint; save it again with torch.save')
}

/** A reader that runs at most `budget` opcodes a call, until STOP gives the value. */
function unpickler(bytes: Uint8Array, label: string, hooks: UnpickleHooks): (budget: number) => {done: boolean; value?: unknown} {
  if (bytes.length > MAX_PICKLE_BYTES) pickleError(label, `a pickle of ${bytes.length} bytes, more than the ${MAX_PICKLE_BYTES} read`)
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const bad = (msg: string): never => pickleError(label, msg)
  let p = 0
  const need = (n: number): void => {
    if (n < 0 || p + n > bytes.length) bad(`truncated pickle (needs ${n} bytes at offset ${p}, ${bytes.length - p} left)`)
  }
  const u8 = () => (need(1), bytes[p++])
  const u16 = () => (need(2), (p += 2), dv.getUint16(p - 2, true))
  const i32 = () => (need(4), (p += 4), dv.getInt32(p - 4, true))
  const u32 = () => (need(4), (p += 4), dv.getUint32(p - 4, true))
  const u64 = (): number => {
    need(8)
    const v = dv.getBigUint64(p, true)
    p += 8
    if (v > BigInt(bytes.length)) bad(`length ${v} exceeds the pickle's ${bytes.length} bytes`)
    return Number(v)
  }
  const take = (n: number): Uint8Array => {
    need(n)
    p += n
    return bytes.subarray(p - n, p)
  }
  const utf8 = new TextDecoder('utf-8', {fatal: false})
  const latin1 = new TextDecoder('latin1')
  const line = (): string => {
    const end = bytes.indexOf(0x0a, p)
    if (end < 0) bad('truncated pickle (a text argument has no newline)')
    const s = latin1.decode(bytes.subarray(p, end))
    p = end + 1
    return s
  }

  const stack: unknown[] = []
  const marks: number[] = []
  // NOTE: an array, not a Map: memo keys are small dense integers (MEMOIZE numbers them in
  // order), and an array holds a million of them in a tenth of the time.
  const memo: unknown[] = []
  let memoSize = 0
  let values = 0
  const push = (v: unknown): void => {
    if (++values > MAX_PICKLE_VALUES) bad(`more than ${MAX_PICKLE_VALUES} values (a checkpoint's pickle makes about 25 a tensor)`)
    stack.push(v)
  }
  const remember = (k: number, v: unknown): void => {
    if ((k >= memo.length || memo[k] === undefined) && ++memoSize > MAX_PICKLE_MEMO) bad(`more than ${MAX_PICKLE_MEMO} memo entries`)
    // (undefined marks a free slot; no unpickled value is undefined, but a hook's result might be)
    if (k === memo.length) memo.push(v ?? null)
    else memo[k] = v ?? null
  }
  /** An integer's digits (text INT/LONG), refused past MAX_PICKLE_INT_DIGITS before parsing (BigInt is quadratic). */
  const digits = (s: string, what: string): bigint => {
    if (s.length > MAX_PICKLE_INT_DIGITS + 1) bad(`an integer of ${s.length} digits (${what}); at most ${MAX_PICKLE_INT_DIGITS} are read`)
    if (!/^-?\d+$/.test(s)) bad(`bad ${what}`)
    return BigInt(s)
  }
  const pop = (): unknown => {
    if (stack.length === 0 || (marks.length > 0 && stack.length <= marks[marks.length - 1])) bad('pickle stack underflow')
    return stack.pop()
  }
  const top = (): unknown => {
    if (stack.length === 0) bad('pickle stack underflow')
    return stack[stack.length - 1]
  }
  const popMark = (): unknown[] => {
    const m = marks.pop()
    if (m === undefined) bad('pickle MARK missing')
    return stack.splice(m!)
  }
  const global = (module: string, name: string): PyGlobal => {
    if (!hooks.allowGlobal(module, name)) {
      const why = hooks.refusal?.(module, name)
      throw new InputError(
        'unsafe-pickle',
        `${label}: refusing to load the Python global ${safeText(`${module}.${name}`, 120)}${why ? `: ${why.message}` : ''}; only tensors and plain containers are read (no code is run)`,
        why?.suggestion ?? 'save only the weights: torch.save(model.state_dict(), path), or export to .safetensors',
      )
    }
    return new PyGlobal(module, name)
  }
  const long = (b: Uint8Array): number | bigint => {
    if (b.length === 0) return 0
    if (b.length > MAX_PICKLE_INT_BYTES) bad(`an integer of ${b.length} bytes; at most ${MAX_PICKLE_INT_BYTES} are read`)
    let v = 0n
    for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i])
    if (b[b.length - 1] & 0x80) v -= 1n << BigInt(8 * b.length)
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v
  }
  const setItems = (d: unknown, kv: unknown[]): void => {
    if (!(d instanceof PyDict)) bad('SETITEM on something that is not a dict')
    if (kv.length % 2 !== 0) bad('SETITEMS with an odd number of items')
    for (let i = 0; i < kv.length; i += 2) (d as PyDict).map.set(kv[i], kv[i + 1])
  }
  const append = (l: unknown, items: unknown[]): void => {
    if (!(l instanceof PyList)) bad('APPEND on something that is not a list')
    for (const x of items) (l as PyList).push(x)
  }
  const tuple = (items: unknown[]): PyTuple => {
    const t = new PyTuple()
    for (const x of items) t.push(x)
    return t
  }

  return (budget: number) => {
    for (let n = 0; n < budget; n++) {
      if (stack.length > 1_000_000) bad('pickle stack too deep')
      const op = u8()
      switch (op) {
        case 0x80: // PROTO
          if (u8() > 5) bad('pickle protocol newer than 5')
          break
        case 0x95: // FRAME: a length hint only
          u64()
          break
        case 0x2e: {
          // STOP
          const v = pop()
          return {done: true, value: v}
        }
        case 0x28: // MARK
          if (marks.length >= MAX_PICKLE_DEPTH) bad(`more than ${MAX_PICKLE_DEPTH} nested MARKs`)
          marks.push(stack.length)
          break
        case 0x30: // POP
          pop()
          break
        case 0x31: // POP_MARK
          popMark()
          break
        case 0x32: // DUP
          push(top())
          break
        case 0x4e: // NONE
          push(null)
          break
        case 0x88: // NEWTRUE
          push(true)
          break
        case 0x89: // NEWFALSE
          push(false)
          break
        case 0x4a: // BININT
          push(i32())
          break
        case 0x4b: // BININT1
          push(u8())
          break
        case 0x4d: // BININT2
          push(u16())
          break
        case 0x8a: // LONG1
          push(long(take(u8())))
          break
        case 0x8b: {
          // LONG4
          const n = i32()
          if (n < 0) bad('negative LONG4 length')
          push(long(take(n)))
          break
        }
        case 0x49: {
          // INT (text; 00/01 are False/True)
          const s = line()
          if (s === '00' || s === '01') push(s === '01')
          else push(long(bigintBytes(digits(s, 'INT'))))
          break
        }
        case 0x4c: {
          // LONG (text)
          const s = line()
          push(long(bigintBytes(digits(s.endsWith('L') ? s.slice(0, -1) : s, 'LONG'))))
          break
        }
        case 0x47: // BINFLOAT (big-endian)
          need(8)
          push(dv.getFloat64(p, false))
          p += 8
          break
        case 0x46: {
          // FLOAT (text)
          const x = Number(line())
          if (Number.isNaN(x)) bad('bad FLOAT')
          push(x)
          break
        }
        case 0x58: // BINUNICODE
          push(utf8.decode(take(u32())))
          break
        case 0x8c: // SHORT_BINUNICODE
          push(utf8.decode(take(u8())))
          break
        case 0x8d: // BINUNICODE8
          push(utf8.decode(take(u64())))
          break
        case 0x54: {
          // BINSTRING (Python 2 str)
          const n = i32()
          if (n < 0) bad('negative BINSTRING length')
          push(latin1.decode(take(n)))
          break
        }
        case 0x55: // SHORT_BINSTRING
          push(latin1.decode(take(u8())))
          break
        case 0x42: // BINBYTES
          push(new Uint8Array(take(u32())))
          break
        case 0x43: // SHORT_BINBYTES
          push(new Uint8Array(take(u8())))
          break
        case 0x8e: // BINBYTES8
          push(new Uint8Array(take(u64())))
          break
        case 0x96: // BYTEARRAY8
          push(new Uint8Array(take(u64())))
          break
        case 0x29: // EMPTY_TUPLE
          push(new PyTuple())
          break
        case 0x74: // TUPLE
          push(tuple(popMark()))
          break
        case 0x85: // TUPLE1
          push(tuple([pop()]))
          break
        case 0x86: {
          // TUPLE2
          const b = pop()
          push(tuple([pop(), b]))
          break
        }
        case 0x87: {
          // TUPLE3
          const c = pop()
          const b = pop()
          push(tuple([pop(), b, c]))
          break
        }
        case 0x5d: // EMPTY_LIST
          push(new PyList())
          break
        case 0x6c: {
          // LIST
          const l = new PyList()
          for (const x of popMark()) l.push(x)
          push(l)
          break
        }
        case 0x61: {
          // APPEND
          const x = pop()
          append(top(), [x])
          break
        }
        case 0x65: {
          // APPENDS
          const items = popMark()
          append(top(), items)
          break
        }
        case 0x7d: // EMPTY_DICT
          push(new PyDict())
          break
        case 0x64: {
          // DICT
          const d = new PyDict()
          setItems(d, popMark())
          push(d)
          break
        }
        case 0x73: {
          // SETITEM
          const v = pop()
          const k = pop()
          setItems(top(), [k, v])
          break
        }
        case 0x75: {
          // SETITEMS
          const kv = popMark()
          setItems(top(), kv)
          break
        }
        case 0x8f: // EMPTY_SET
          push(new PyList())
          break
        case 0x90: {
          // ADDITEMS
          const items = popMark()
          append(top(), items)
          break
        }
        case 0x91: {
          // FROZENSET
          const l = new PyList()
          for (const x of popMark()) l.push(x)
          push(l)
          break
        }
        case 0x63: {
          // GLOBAL
          const module = line()
          push(global(module, line()))
          break
        }
        case 0x93: {
          // STACK_GLOBAL
          const name = pop()
          const module = pop()
          if (typeof module !== 'string' || typeof name !== 'string') bad('STACK_GLOBAL needs two strings')
          push(global(module as string, name as string))
          break
        }
        case 0x52: {
          // REDUCE
          const args = pop()
          const fn = pop()
          if (!(fn instanceof PyGlobal)) bad('REDUCE of something that is not an allowed function')
          if (!(args instanceof PyTuple)) bad('REDUCE arguments are not a tuple')
          push(hooks.call(fn as PyGlobal, args as PyTuple))
          break
        }
        case 0x62: {
          // BUILD: only plain state on a dict (an OrderedDict's attributes, e.g. _metadata)
          const state = pop()
          const obj = top()
          if (!(obj instanceof PyDict)) bad('BUILD on an object other than a dict (objects are not rebuilt)')
          ;(obj as PyDict).state = state
          break
        }
        case 0x51: {
          // BINPERSID
          const pid = pop()
          if (!hooks.persistentLoad) bad('a persistent id, but this file type has none')
          push(hooks.persistentLoad!(pid))
          break
        }
        case 0x50: {
          // PERSID (text)
          const pid = line()
          if (!hooks.persistentLoad) bad('a persistent id, but this file type has none')
          push(hooks.persistentLoad!(pid))
          break
        }
        case 0x71: // BINPUT
          remember(u8(), top())
          break
        case 0x72: // LONG_BINPUT
          remember(u32(), top())
          break
        case 0x70: {
          // PUT
          const k = Number(line())
          if (!Number.isSafeInteger(k) || k < 0) bad('bad PUT index')
          remember(k, top())
          break
        }
        case 0x94: // MEMOIZE
          remember(memoSize, top())
          break
        case 0x68: // BINGET
        case 0x6a: // LONG_BINGET
        case 0x67: {
          // GET
          const k = op === 0x68 ? u8() : op === 0x6a ? u32() : Number(line())
          if (!(k >= 0) || memo[k] === undefined) bad(`memo key ${k} is not defined`)
          push(memo[k])
          break
        }
        case 0x81: // NEWOBJ
        case 0x92: // NEWOBJ_EX
        case 0x69: // INST
        case 0x6f: // OBJ
          throw new InputError('unsafe-pickle', `${label}: the pickle builds Python objects (opcode ${opName(op)}); only tensors and plain containers are read (no code is run)`, 'save only the weights: torch.save(model.state_dict(), path), or export to .safetensors')
        case 0x82: // EXT1
        case 0x83: // EXT2
        case 0x84: // EXT4
          throw new InputError('unsafe-pickle', `${label}: the pickle uses the extension registry (opcode ${opName(op)}), which is not supported`, 'save only the weights: torch.save(model.state_dict(), path)')
        default:
          bad(`unknown pickle opcode 0x${op.toString(16).padStart(2, '0')} at offset ${p - 1}`)
      }
    }
    return {done: false}
  }
}

function opName(op: number): string {
  return ({0x81: 'NEWOBJ', 0x92: 'NEWOBJ_EX', 0x69: 'INST', 0x6f: 'OBJ', 0x82: 'EXT1', 0x83: 'EXT2', 0x84: 'EXT4'} as Record<number, string>)[op] ?? `0x${op.toString(16)}`
}

/** Two's-complement little-endian bytes of a bigint (for the text INT/LONG opcodes). */
function bigintBytes(v: bigint): Uint8Array {
  const out: number[] = []
  let x = v
  for (let i = 0; i <= MAX_PICKLE_INT_BYTES; i++) {
    out.push(Number(x & 0xffn))
    x >>= 8n
    if ((x === 0n && !(out[out.length - 1] & 0x80)) || (x === -1n && out[out.length - 1] & 0x80)) break
  }
  return Uint8Array.from(out)
}

/** The items of a container the way a walk of the object visits them, or undefined for a value. */
function containerItems(v: unknown): readonly unknown[] | undefined {
  if (v instanceof PyList || v instanceof PyTuple) return v
  if (v instanceof PyDict) return [...v.map.values()]
  return undefined
}

/**
 * Measure what walking an unpickled object (its lists, tuples, sets and dict values) would
 * visit, without walking it: the objects, counting a container shared by several paths once
 * per path, and the deepest nesting. Refuses a cycle, more than MAX_PICKLE_OBJECTS objects
 * and nesting deeper than MAX_PICKLE_DEPTH with one line. Time is linear in the distinct
 * containers and their items (a shared container is measured once), which the unpickler's
 * own bounds limit.
 */
export async function objectTree(root: unknown, label: string): Promise<{objects: number; depth: number}> {
  const bad = (msg: string): never => pickleError(label, msg)
  const rootItems = containerItems(root)
  if (!rootItems) return {objects: 1, depth: 0}
  /** Completed containers: objects under them (themselves included, every path) and height. */
  const done = new Map<object, {objects: number; height: number}>()
  const onPath = new Set<object>()
  interface Frame {
    node: object
    items: readonly unknown[]
    i: number
    objects: number
    height: number
  }
  const frames: Frame[] = [{node: root as object, items: rootItems, i: 0, objects: 1, height: 0}]
  onPath.add(root as object)
  const tooMany = (): never => bad(`its containers expand to more than ${MAX_PICKLE_OBJECTS} objects (a container shared by several paths counts once per path)`)
  let steps = 0
  for (;;) {
    if ((++steps & 0x3fff) === 0) await pace()
    const f = frames[frames.length - 1]
    if (f.i < f.items.length) {
      const c = f.items[f.i++]
      const items = containerItems(c)
      if (!items) {
        if (++f.objects > MAX_PICKLE_OBJECTS) tooMany()
        if (f.height < 1) f.height = 1
        continue
      }
      const node = c as object
      if (onPath.has(node)) bad('a container holds itself (a cycle), which a checkpoint never does')
      const known = done.get(node)
      if (known) {
        if (frames.length + known.height > MAX_PICKLE_DEPTH) bad(`containers nested more than ${MAX_PICKLE_DEPTH} deep`)
        f.objects += known.objects
        if (f.objects > MAX_PICKLE_OBJECTS) tooMany()
        if (f.height < known.height + 1) f.height = known.height + 1
        continue
      }
      if (frames.length >= MAX_PICKLE_DEPTH) bad(`containers nested more than ${MAX_PICKLE_DEPTH} deep`)
      onPath.add(node)
      frames.push({node, items, i: 0, objects: 1, height: 0})
      continue
    }
    frames.pop()
    onPath.delete(f.node)
    done.set(f.node, {objects: f.objects, height: f.height})
    const parent = frames[frames.length - 1]
    if (!parent) return {objects: f.objects, depth: f.height}
    parent.objects += f.objects
    if (parent.objects > MAX_PICKLE_OBJECTS) tooMany()
    if (parent.height < f.height + 1) parent.height = f.height + 1
  }
}
