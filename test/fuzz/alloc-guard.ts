/**
 * An allocation guard for fuzzing: "no allocation of memory that the file does not justify".
 *
 * `installAllocGuard()` replaces the global typed-array and ArrayBuffer constructors (and
 * Buffer.alloc/allocUnsafe/concat) with proxies that, while a budget is active
 * (`withAllocBudget`), check every requested size BEFORE the memory is allocated: a request
 * over the per-allocation limit, or one that takes the case's running total over its limit,
 * throws AllocationViolation instead of allocating. So a parser that believes a lying header
 * ("10^12 elements") fails the property at once, without the fuzzer itself running out of
 * memory.
 *
 * What it sees: every `new Int32Array(n)`, `new ArrayBuffer(n)`, `Float32Array.from(...)`,
 * `Buffer.alloc(n)` that looks the constructor up on the global object at call time (all of
 * src/). It does not see allocations inside libraries that captured the constructors when
 * they were loaded (fflate keeps its own `u8`): install the guard before importing them
 * (scripts/fuzz.ts does) to see those too. Views over an existing buffer
 * (`new Float32Array(buf, off, n)`) allocate nothing and are not counted.
 */

export class AllocationViolation extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'AllocationViolation'
  }
}

interface Budget {
  /** Largest single allocation, in bytes. */
  single: number
  /** Largest total over the case, in bytes. */
  total: number
  used: number
  largest: number
}

let active: Budget | null = null

const TYPED = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const

type G = Record<string, unknown>
const originals = new Map<string, unknown>()
let bufferOriginals: {alloc: typeof Buffer.alloc; allocUnsafe: typeof Buffer.allocUnsafe; allocUnsafeSlow: typeof Buffer.allocUnsafeSlow; concat: typeof Buffer.concat} | undefined

function charge(bytes: number, what: string): void {
  const b = active
  if (!b) return
  if (!Number.isFinite(bytes) || bytes > b.single) {
    throw new AllocationViolation(`${what} of ${bytes} bytes exceeds the ${b.single}-byte limit this input justifies`)
  }
  b.used += bytes
  if (bytes > b.largest) b.largest = bytes
  if (b.used > b.total) {
    throw new AllocationViolation(`${what} of ${bytes} bytes brings the case's allocations to ${b.used} bytes, over the ${b.total}-byte limit this input justifies`)
  }
}

/** The element count a typed-array constructor call would allocate (0 for a view). */
function requestedLength(args: unknown[]): number {
  const a0 = args[0]
  if (a0 === undefined || a0 === null) return 0
  if (typeof a0 === 'number') return a0
  if (typeof a0 === 'bigint') return Number(a0)
  if (a0 instanceof originalArrayBuffer() || (typeof SharedArrayBuffer !== 'undefined' && a0 instanceof SharedArrayBuffer)) return 0 // a view
  if (ArrayBuffer.isView(a0)) return (a0 as unknown as {length: number}).length ?? 0
  if (typeof a0 === 'object' && 'length' in (a0 as object)) return Number((a0 as {length: unknown}).length) || 0
  return 0
}

function originalArrayBuffer(): typeof ArrayBuffer {
  return (originals.get('ArrayBuffer') as typeof ArrayBuffer | undefined) ?? ArrayBuffer
}

/** Install the proxies (idempotent). Without an active budget they only pass through. */
export function installAllocGuard(): void {
  if (originals.size > 0) return
  const g = globalThis as unknown as G
  for (const name of TYPED) {
    const Ctor = g[name] as {BYTES_PER_ELEMENT: number} & (new (...a: unknown[]) => unknown)
    originals.set(name, Ctor)
    const size = Ctor.BYTES_PER_ELEMENT
    g[name] = new Proxy(Ctor, {
      construct(target, args, newTarget) {
        if (active) charge(requestedLength(args) * size, `new ${name}`)
        return Reflect.construct(target, args, newTarget === g[name] ? target : newTarget)
      },
    })
  }
  const AB = g.ArrayBuffer as new (...a: unknown[]) => unknown
  originals.set('ArrayBuffer', AB)
  g.ArrayBuffer = new Proxy(AB, {
    construct(target, args, newTarget) {
      if (active) charge(Number(args[0] ?? 0), 'new ArrayBuffer')
      return Reflect.construct(target, args, newTarget === g.ArrayBuffer ? target : newTarget)
    },
  })
  bufferOriginals = {alloc: Buffer.alloc, allocUnsafe: Buffer.allocUnsafe, allocUnsafeSlow: Buffer.allocUnsafeSlow, concat: Buffer.concat}
  const bo = bufferOriginals
  Buffer.alloc = ((size: number, ...rest: unknown[]) => {
    charge(size, 'Buffer.alloc')
    return (bo.alloc as (...a: unknown[]) => Buffer)(size, ...rest)
  }) as typeof Buffer.alloc
  Buffer.allocUnsafe = ((size: number) => {
    charge(size, 'Buffer.allocUnsafe')
    return bo.allocUnsafe(size)
  }) as typeof Buffer.allocUnsafe
  Buffer.allocUnsafeSlow = ((size: number) => {
    charge(size, 'Buffer.allocUnsafeSlow')
    return bo.allocUnsafeSlow(size)
  }) as typeof Buffer.allocUnsafeSlow
  Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
    charge(total ?? list.reduce((a, b) => a + b.length, 0), 'Buffer.concat')
    return bo.concat(list, total)
  }) as typeof Buffer.concat
}

/** Put the original constructors back. */
export function uninstallAllocGuard(): void {
  const g = globalThis as unknown as G
  for (const [name, ctor] of originals) g[name] = ctor
  originals.clear()
  if (bufferOriginals) Object.assign(Buffer, bufferOriginals)
  bufferOriginals = undefined
}

export interface AllocStats {
  /** Bytes requested through the guarded constructors during the call. */
  used: number
  /** The largest single request. */
  largest: number
}

/**
 * Run `fn` with an allocation budget (bytes): `single` for any one allocation, `total` for
 * the sum. Budgets do not nest; async work started by `fn` is charged until it settles.
 */
export async function withAllocBudget<T>(single: number, total: number, fn: () => Promise<T>): Promise<{value: T; stats: AllocStats}> {
  if (originals.size === 0) throw new Error('installAllocGuard() first')
  const budget: Budget = {single, total, used: 0, largest: 0}
  const prev = active
  active = budget
  try {
    const value = await fn()
    return {value, stats: {used: budget.used, largest: budget.largest}}
  } finally {
    active = prev
  }
}

/** Whether the guard is installed (the mocha suite checks it is). */
export function allocGuardInstalled(): boolean {
  return originals.size > 0
}
