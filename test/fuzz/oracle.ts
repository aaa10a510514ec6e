/**
 * Independent checks of what a parser returned (written apart from src/sparse/validate.ts,
 * so the validator itself is under test). A failed check throws FuzzViolation.
 */
import {lstatSync, readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {availableParallelism, loadavg} from 'node:os'
import {join} from 'node:path'

import {SparseError} from '../../src/errors.js'
import type {CsrMatrix, DenseTensor, NamedCsr} from '../../src/types.js'

export class FuzzViolation extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FuzzViolation'
  }
}

export function fail(msg: string): never {
  throw new FuzzViolation(msg)
}

const INT32_MAX = 2 ** 31 - 1

/** Why these CSR arrays are not canonical CSR, or null when they are. Plain loops over plain numbers. */
export function csrProblem(rows: number, cols: number, offsets: ArrayLike<number>, indices: ArrayLike<number>, nValues: number | null, rowOrder?: ArrayLike<number>): string | null {
  if (!Number.isInteger(rows) || rows < 0 || rows > INT32_MAX) return `rows ${rows}`
  if (!Number.isInteger(cols) || cols < 0 || cols > INT32_MAX) return `cols ${cols}`
  if (offsets.length !== rows + 1) return `offsets length ${offsets.length} != rows + 1`
  const nnz = indices.length
  if (nValues !== null && nValues !== nnz) return `values length ${nValues} != nnz ${nnz}`
  if (offsets[0] !== 0) return 'offsets[0] != 0'
  if (offsets[rows] !== nnz) return `offsets[rows] = ${offsets[rows]} != nnz ${nnz}`
  for (let r = 0; r < rows; r++) {
    const a = offsets[r]
    const b = offsets[r + 1]
    if (!(b >= a)) return `offsets decrease at row ${r}`
    if (b > nnz) return `offsets[${r + 1}] past nnz`
    for (let i = a; i < b; i++) {
      const c = indices[i]
      if (!Number.isInteger(c) || c < 0 || c >= cols) return `index ${c} out of range at ${i}`
      if (i > a && !(c > indices[i - 1])) return `indices of row ${r} not strictly ascending at ${i}`
    }
  }
  if (rowOrder !== undefined) {
    if (rowOrder.length !== rows) return `row order length ${rowOrder.length} != rows`
    const seen = new Set<number>()
    for (let i = 0; i < rowOrder.length; i++) {
      const r = rowOrder[i]
      if (!Number.isInteger(r) || r < 0 || r >= rows || seen.has(r)) return `row order not a permutation at ${i}`
      seen.add(r)
    }
  }
  return null
}

function shapeProblem(shape: unknown): string | null {
  if (!Array.isArray(shape)) return 'shape is not an array'
  for (const d of shape) if (!Number.isSafeInteger(d) || d < 0) return `shape has dimension ${String(d)}`
  return null
}

const product = (s: number[]) => s.reduce((a, b) => a * b, 1)

/** The matrix view of a tensor shape: [shape[0], prod(rest)]; 1-D is one row; scalar 1x1. */
export function matrixOf(shape: number[]): [number, number] {
  if (shape.length === 0) return [1, 1]
  if (shape.length === 1) return [1, shape[0]]
  return [shape[0], product(shape.slice(1))]
}

/** A CSR result: canonical, typed as promised, consistent with its tensor shape. */
export function checkCsrResult(named: NamedCsr): void {
  const {csr, shape} = named
  if (typeof named.name !== 'string') fail('name is not a string')
  const sp = shapeProblem(shape)
  if (sp) fail(`${named.name}: ${sp}`)
  checkCsr(csr, named.name)
  const [r, c] = matrixOf(shape)
  if (r !== csr.rows || c !== csr.cols) fail(`${named.name}: tensor shape [${shape.join(', ')}] is a ${r}x${c} matrix but the CSR is ${csr.rows}x${csr.cols}`)
}

export function checkCsr(csr: CsrMatrix, what: string): void {
  if (!(csr.rowOffsets instanceof Int32Array)) fail(`${what}: rowOffsets is not an Int32Array`)
  if (!(csr.columnIndices instanceof Int32Array)) fail(`${what}: columnIndices is not an Int32Array`)
  if (csr.values !== null) {
    const ok = csr.dtype === 'f32' ? csr.values instanceof Float32Array : csr.values instanceof Uint16Array
    if (!ok || !['f32', 'f16', 'bf16'].includes(csr.dtype)) fail(`${what}: values of dtype ${csr.dtype} held in ${csr.values?.constructor.name}`)
  }
  if (csr.rowIndices !== undefined && !(csr.rowIndices instanceof Int32Array)) fail(`${what}: rowIndices is not an Int32Array`)
  const p = csrProblem(csr.rows, csr.cols, csr.rowOffsets, csr.columnIndices, csr.values === null ? null : csr.values.length, csr.rowIndices)
  if (p) fail(`${what}: accepted a non-canonical CSR (${p})`)
}

const DENSE_CLASS: Record<string, string> = {f32: 'Float32Array', f64: 'Float64Array', f16: 'Uint16Array', bf16: 'Uint16Array'}
const ITEM: Record<string, number> = {f32: 4, f64: 8, f16: 2, bf16: 2}

/** A dense result: shape of non-negative integers whose product is the data length, the right array class. */
export function checkDenseResult(t: DenseTensor, expectedName?: string): void {
  if (expectedName !== undefined && t.name !== expectedName) fail(`name ${t.name} != ${expectedName}`)
  const sp = shapeProblem(t.shape)
  if (sp) fail(`${t.name}: ${sp}`)
  const cls = DENSE_CLASS[t.dtype]
  if (!cls) fail(`${t.name}: unknown dtype ${t.dtype}`)
  if (t.data?.constructor?.name !== cls) fail(`${t.name}: dtype ${t.dtype} held in ${t.data?.constructor?.name}`)
  if (t.data.length !== product(t.shape)) fail(`${t.name}: shape [${t.shape.join(', ')}] has ${product(t.shape)} elements but data has ${t.data.length}`)
  const [r, c] = matrixOf(t.shape)
  if (r > INT32_MAX || c > INT32_MAX) fail(`${t.name}: accepted shape [${t.shape.join(', ')}] whose matrix ${r}x${c} exceeds int32`)
}

/** The bytes of a typed array's view. */
export function viewBytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The data of a dense result must be exactly the last bytes of the (member) file. */
export function checkDataIsTail(t: DenseTensor, file: Uint8Array): void {
  const d = viewBytes(t.data)
  if (d.length !== ITEM[t.dtype] * t.data.length) fail('data byte length mismatch')
  const tail = file.subarray(file.length - d.length)
  if (!sameBytes(d, tail)) fail(`${t.name}: returned data differ from the file's data bytes`)
}

// ---------------------------------------------------------------------------------------
// Scale: linear time, and an event loop that keeps getting control

/** A call's outcome, its wall time, and the longest the event loop went without a turn. */
export interface Timed<T> {
  value?: T
  error?: unknown
  ms: number
  /** The longest gap between turns of the event loop (ms): how long a Ctrl-C would have waited. */
  stallMs: number
}

/**
 * Runs `fn` and watches the event loop meanwhile (a 5 ms timer notes the gaps between its
 * runs). Node runs a signal's handlers only on a turn of the event loop, so the longest gap
 * is the longest a Ctrl-C or SIGTERM would have waited.
 */
export async function timed<T>(fn: () => Promise<T>): Promise<Timed<T>> {
  let last = performance.now()
  let stallMs = 0
  const tick = setInterval(() => {
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    last = now
  }, 5)
  const t0 = performance.now()
  const out: Timed<T> = {ms: 0, stallMs: 0}
  try {
    out.value = await fn()
  } catch (error) {
    out.error = error
  }
  out.ms = performance.now() - t0
  clearInterval(tick)
  out.stallMs = Math.max(stallMs, performance.now() - last)
  return out
}

/** The most the event loop may go without a turn (5x the ~100 ms latency docs/limits.md promises), on a machine that is not oversubscribed. */
export const MAX_STALL_MS = 500

/**
 * How oversubscribed the machine is: its 1-minute load average per core, at least 1. A
 * thread waits about that many times longer for a core, so every gap between turns of its
 * event loop stretches by as much (the fuzzer runs two workers per core, and the machine
 * may be shared).
 */
export function loadFactor(): number {
  return Math.max(1, loadavg()[0] / availableParallelism())
}
/** The most the time per tensor may grow from a file to one 10x larger (linear: about 1; quadratic: 10). */
export const MAX_PER_ITEM_GROWTH = 4

/** How many times the time per item of the large run is that of the small one. */
export function perItemGrowth(small: {n: number; run: Timed<unknown>}, large: {n: number; run: Timed<unknown>}): number {
  return large.run.ms / large.n / (small.run.ms / small.n)
}

/**
 * Linear time and prompt interrupts: the time per item of the large run may be at most
 * MAX_PER_ITEM_GROWTH times that of the small one, and neither may stall the event loop for
 * more than MAX_STALL_MS times the loadFactor(). Returns what is wrong, or null. Runs are
 * best of two (the first run warms up; a garbage collection or a busy machine can slow one
 * run, not the code).
 */
export function scaleProblem(what: string, small: {n: number; run: Timed<unknown>}, large: {n: number; run: Timed<unknown>}, smallItems = String(small.n)): string | null {
  const growth = perItemGrowth(small, large)
  if (growth > MAX_PER_ITEM_GROWTH) {
    return `${what}: not linear: ${large.n} items took ${large.run.ms.toFixed(0)} ms, ${smallItems} took ${small.run.ms.toFixed(0)} ms (${growth.toFixed(1)}x the time per item)`
  }
  const load = loadFactor()
  for (const [n, r] of [[small.n, small.run], [large.n, large.run]] as const) {
    if (r.stallMs > MAX_STALL_MS * load) {
      return `${what}: with ${n} items the event loop went ${r.stallMs.toFixed(0)} ms without a turn (a Ctrl-C would have waited that long; bound ${MAX_STALL_MS} ms x load ${load.toFixed(1)} per core)`
    }
  }
  return null
}

/** The better of two runs of one call: the shorter time and the shorter stall. */
export function bestOf<T>(a: Timed<T>, b: Timed<T>): Timed<T> {
  return {...(a.ms <= b.ms ? a : b), stallMs: Math.min(a.stallMs, b.stallMs)}
}

/** An input of `n` items for linearity(): `load` puts it in place (untimed: stdin must hold it), `read` reads it whole. */
export interface Measured<T> {
  n: number
  load?: () => void
  read: () => Promise<T>
}

/** How many times linearity() reads the tenth in one timed run: as many items as the whole. */
export const TENTH_READS = 10

/**
 * Linear time, measured: `tenth.read` (n/10 items) and `whole.read` (n items) are timed and
 * compared by scaleProblem. The tenth is read once to warm up, then TENTH_READS times in
 * one timed run, so that both runs handle as many items in about as much time; then the
 * whole once. Only when that looks wrong are both timed again (best of two): a slow step in
 * the code shows twice, a busy machine rarely. The tenth's errors are not its concern (the
 * whole's outcome is checked by the caller). Returns what is wrong (or null), the growth of
 * the time per item (perItemGrowth) and the whole's run.
 *
 * NOTE: one read of a tenth of 10^4 tensors takes ~2 ms, less than a young-generation
 * collection's interval and a scheduler time slice: its best of two ran with no collection
 * while the whole (40-70 ms) had 3-6 of them (8-50 ms), and on a loaded machine the whole
 * is preempted where 2 ms are not. That alone made the time per tensor "grow" 2-10x. Ten
 * reads of the tenth allocate as much as the whole and last as long; a quadratic step
 * still grows 10x (10 (n/10)^2 against n^2).
 */
export async function linearity<T>(what: string, tenth: Measured<unknown>, whole: Measured<T>): Promise<{problem: string | null; growth: number; whole: Timed<T>}> {
  const readTenth = async () => {
    try {
      await tenth.read()
    } catch {
      // The tenth of a file that must be refused is refused too; only its time counts here.
    }
  }
  const batch = async () => {
    for (let i = 0; i < TENTH_READS; i++) await readTenth()
  }
  const timeTenth = () => {
    tenth.load?.()
    return timed(batch)
  }
  const timeWhole = () => {
    whole.load?.()
    return timed(whole.read)
  }
  tenth.load?.()
  await readTenth()
  let small = await timeTenth()
  let large = await timeWhole()
  const runs = () => [{n: TENTH_READS * tenth.n, run: small}, {n: whole.n, run: large}] as const
  const problem = () => scaleProblem(what, ...runs(), `${TENTH_READS} reads of ${tenth.n}`)
  if (problem() === null) return {problem: null, growth: perItemGrowth(...runs()), whole: large}
  small = bestOf(small, await timeTenth())
  large = bestOf(large, await timeWhole())
  return {problem: problem(), growth: perItemGrowth(...runs()), whole: large}
}

// ---------------------------------------------------------------------------------------
// Output races: two writers, one output

/**
 * What stands at a path, as text to compare: `file:<base64>`, `link:<target>`, or
 * `dir:` and each entry (sorted) with its own snapshot; null when nothing is there.
 */
export function snapshot(path: string): string | null {
  let st
  try {
    st = lstatSync(path)
  } catch {
    return null
  }
  if (st.isSymbolicLink()) return `link:${readlinkSync(path)}`
  if (st.isFile()) return `file:${readFileSync(path).toString('base64')}`
  if (st.isDirectory()) return `dir:${readdirSync(path).sort().map((n) => `${n}=${snapshot(join(path, n))}`).join(';')}`
  return `other:${st.mode}`
}

export interface RaceOutcome {
  /** The two writers' outcomes. */
  results: PromiseSettledResult<unknown>[]
  force: [boolean, boolean]
  /** What stood at the output before (null: nothing), what each writer writes alone, and what stands there after. */
  before: string | null
  refs: [string | null, string | null]
  after: string | null
  /** The output's name, and every name in its folder after the race. */
  name: string
  names: string[]
}

/**
 * The promise of docs/limits.md for two runs writing one output at once: each run either
 * succeeds or is refused with `output-exists` (exit 2, "refusing to overwrite"); without
 * --force on either, exactly one succeeds (none, if something stood there), and with it
 * at least one; what stands at the output afterwards is, byte for byte, what one
 * successful writer writes alone (or what stood there, if none succeeded): never a partial
 * or a mixed result; and nothing else is left in the folder (no temporary file or folder,
 * no moved-aside old output, no stale temporary of a dead run).
 */
export function checkRace(o: RaceOutcome): void {
  const ok: number[] = []
  for (const [i, r] of o.results.entries()) {
    if (r.status === 'fulfilled') {
      ok.push(i)
      continue
    }
    const e = r.reason as Error
    if (!(e instanceof SparseError)) fail(`writer ${i} failed with ${e?.constructor?.name}: ${e?.message}\n${e?.stack ?? ''}`)
    if (e.code !== 'output-exists' || e.exitCode !== 2 || !/refusing to overwrite/.test(e.message)) fail(`writer ${i} failed with ${e.code} (exit ${e.exitCode}): ${e.message}; a loser must get output-exists, exit 2`)
    if (e.message.includes('\n')) fail(`writer ${i}: a message of more than one line`)
  }
  const anyForce = o.force[0] || o.force[1]
  if (!anyForce && o.before !== null && ok.length > 0) fail(`writer ${ok[0]} replaced an existing output without --force`)
  if (!anyForce && o.before === null && ok.length !== 1) fail(`${ok.length} writers succeeded; exactly one must`)
  if (anyForce && ok.length === 0) fail('both writers failed, although one had --force')
  if (ok.length === 0) {
    if (o.after !== o.before) fail('the output changed although both writers failed')
  } else if (!ok.some((i) => o.after === o.refs[i])) {
    fail(`the output is not what a successful writer writes alone (a partial or mixed result): ${String(o.after).slice(0, 200)}`)
  }
  const extra = o.names.filter((n) => n !== o.name)
  if (extra.length > 0) fail(`left in the folder besides the output: ${extra.join(', ')}`)
}
