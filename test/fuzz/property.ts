/**
 * The property every fuzz case must satisfy, and a runner used by both the mocha suite
 * (short, seeded) and scripts/fuzz.ts (the full budget):
 *
 *   parsing the case ends either in a clean SparseError of kind input/usage (exit 1/2) with
 *   a one-line message — or in a result that passes the target's checks; never another
 *   exception type; within a per-case time bound; and with no allocation larger than the
 *   input justifies (alloc-guard.ts). Generators that know a file is valid also fail a
 *   clean error (a false rejection); generators that know it is invalid fail an acceptance.
 */
import {mkdtempSync, rmSync, writeFileSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'

import {SparseError} from '../../src/errors.js'
import {AllocationViolation, withAllocBudget} from './alloc-guard.js'
import {FuzzViolation} from './oracle.js'
import {mustAccept, mustReject, type FuzzCase, type Target, type TargetContext} from './targets.js'

export interface TargetStats {
  target: string
  runs: number
  ms: number
  /** Outcome label -> count ('ok', 'InputError:truncated', ...). */
  outcomes: Record<string, number>
  slowestMs: number
  largestAlloc: number
  inputBytes: {min: number; max: number; total: number}
}

export interface TargetReport {
  stats: TargetStats
  failed: boolean
  seed: number
  /** The minimal counterexample's description, error and bytes (when failed). */
  counterexample?: {what: string; error: string; bytes: Uint8Array; files?: [string, Uint8Array][]; path?: string}
  numShrinks?: number
}

export interface RunOptions {
  numRuns: number
  seed: number
  /** Per-case wall-clock bound (ms). */
  caseTimeMs?: number
  /** Called every `progressEvery` cases (for watchdogs and progress lines). */
  onProgress?: (done: number) => void
  progressEvery?: number
  /** Called with each case before it runs (the script's hang watchdog records it). */
  onCase?: (c: FuzzCase) => void
  /** Where to save a failing case's bytes (a folder); default: none. */
  saveTo?: string
}

const MIB = 1 << 20

function caseBytes(c: FuzzCase): number {
  return c.bytes.length + (c.files ?? []).reduce((a, [, b]) => a + b.length, 0)
}

/** One case; throws FuzzViolation/AllocationViolation (or anything unexpected) on failure. */
export async function runCase(target: Target, c: FuzzCase, ctx: TargetContext, stats: TargetStats | null, caseTimeMs: number): Promise<void> {
  const t0 = performance.now()
  const n = caseBytes(c)
  const single = Math.max(MIB, target.allocFactor * n)
  let outcome: string
  let result: unknown
  let accepted = false
  try {
    const r = await withAllocBudget(single, 4 * single, () => target.parse(c, ctx))
    result = r.value
    accepted = true
    if (stats && r.stats.largest > stats.largestAlloc) stats.largestAlloc = r.stats.largest
  } catch (error) {
    if (error instanceof AllocationViolation || error instanceof FuzzViolation) throw error
    if (!(error instanceof SparseError) || (error.kind !== 'input' && error.kind !== 'usage')) {
      const e = error as Error
      throw new FuzzViolation(`not a clean error: ${e?.constructor?.name ?? typeof e}: ${e?.message ?? String(e)}\n${e?.stack ?? ''}`)
    }
    if (!error.message || error.message.includes('\n') || error.message.length > 2000) throw new FuzzViolation(`error message is not one line: ${JSON.stringify(error.message.slice(0, 300))}`)
    const must = mustAccept(target, c)
    if (must) throw new FuzzViolation(`refused (${error.name} ${error.code}: ${error.message}) but it is ${must}`)
    const e = c.expect
    if (e?.type === 'reject' && e.code !== undefined && error.code !== e.code) {
      throw new FuzzViolation(`refused for another reason (${error.code}: ${error.message}) than ${e.why} (${e.code})`)
    }
    outcome = `${error.name}:${error.code}`
  }
  if (accepted) {
    if (mustReject(target, c)) {
      const e = c.expect
      throw new FuzzViolation(`accepted a file that must be refused (${e && 'why' in e ? e.why : ''})`)
    }
    target.check(c, result)
    outcome = 'ok'
  }
  const dt = performance.now() - t0
  if (dt > caseTimeMs) throw new FuzzViolation(`case took ${dt.toFixed(0)} ms (bound ${caseTimeMs} ms)`)
  if (stats) {
    stats.outcomes[outcome!] = (stats.outcomes[outcome!] ?? 0) + 1
    stats.runs++
    if (dt > stats.slowestMs) stats.slowestMs = dt
    stats.inputBytes.min = Math.min(stats.inputBytes.min, n)
    stats.inputBytes.max = Math.max(stats.inputBytes.max, n)
    stats.inputBytes.total += n
  }
}

/** How many cases a target runs when each parser runs `runs` (its share, at least its minRuns). */
export function runsFor(target: Target, runs: number): number {
  return Math.max(target.minRuns ?? 1, Math.ceil(runs * (target.share ?? 1)))
}

/** Run one target for `numRuns` cases; shrink and describe the first failure. */
export async function runTarget(target: Target, opts: RunOptions): Promise<TargetReport> {
  const tmp = mkdtempSync(join(tmpdir(), `sparse-fuzz-${target.name}-`))
  const ctx: TargetContext = {tmp}
  const stats: TargetStats = {target: target.name, runs: 0, ms: 0, outcomes: {}, slowestMs: 0, largestAlloc: 0, inputBytes: {min: Infinity, max: 0, total: 0}}
  // A target whose cases are large by design brings its own bound.
  const caseTimeMs = Math.max(opts.caseTimeMs ?? 2000, target.caseTimeMs ?? 0)
  let shrinking = false
  let done = 0
  const every = opts.progressEvery ?? 1000
  const t0 = performance.now()
  try {
    const prop = fc.asyncProperty(target.arbitrary, async (c) => {
      opts.onCase?.(c)
      await runCase(target, c, ctx, shrinking ? null : stats, caseTimeMs)
      if (!shrinking && ++done % every === 0) opts.onProgress?.(done)
    })
    const details = await fc.check(prop, {
      numRuns: opts.numRuns,
      seed: opts.seed,
      // Catches promises that never settle; a synchronous infinite loop is the watchdog's job.
      timeout: Math.max(caseTimeMs * 5, 10_000),
      reporter: (d) => {
        void d
      },
      asyncReporter: undefined,
      markInterruptAsFailure: true,
    })
    stats.ms = performance.now() - t0
    if (!details.failed) return {stats, failed: false, seed: opts.seed}
    shrinking = true
    const ce = details.counterexample?.[0] as FuzzCase | undefined
    let error = String(details.errorInstance ?? details.error ?? 'failed')
    if (details.errorInstance instanceof Error) error = `${details.errorInstance.name}: ${details.errorInstance.message}`
    const report: TargetReport = {stats, failed: true, seed: opts.seed, numShrinks: details.numShrinks}
    if (ce) {
      report.counterexample = {what: ce.what, error, bytes: ce.bytes, files: ce.files}
      if (opts.saveTo) report.counterexample.path = saveCase(opts.saveTo, target.name, opts.seed, ce)
    } else {
      report.counterexample = {what: '(none)', error, bytes: new Uint8Array(0)}
    }
    return report
  } finally {
    rmSync(tmp, {recursive: true, force: true})
  }
}

/** Save a case's bytes (and a directory case's files) for reproduction. */
export function saveCase(folder: string, target: string, seed: number, c: FuzzCase): string {
  mkdirSync(folder, {recursive: true})
  const base = join(folder, `${target}-seed${seed}`)
  if (c.files) {
    rmSync(base, {recursive: true, force: true})
    mkdirSync(base, {recursive: true})
    writeFileSync(join(base, 'manifest.json'), c.bytes)
    for (const [n, b] of c.files) writeFileSync(join(base, n), b)
    return base
  }
  const ext = {npy: '.npy', npz: '.npz', safetensors: '.safetensors', smtx: '.smtx', 'csr-npz': '.npz'}[target] ?? '.bin'
  writeFileSync(base + ext, c.bytes)
  return base + ext
}

/** A hex dump of the first bytes, for reports. */
export function hexdump(b: Uint8Array, max = 256): string {
  const lines: string[] = []
  for (let i = 0; i < Math.min(b.length, max); i += 16) {
    const row = b.subarray(i, Math.min(i + 16, b.length, max))
    const hex = Array.from(row, (x) => x.toString(16).padStart(2, '0')).join(' ')
    const txt = Array.from(row, (x) => (x >= 0x20 && x < 0x7f ? String.fromCharCode(x) : '.')).join('')
    lines.push(`${i.toString(16).padStart(6, '0')}  ${hex.padEnd(48)} ${txt}`)
  }
  if (b.length > max) lines.push(`... (${b.length} bytes in all)`)
  return lines.join('\n')
}

/** A failure as text: target, seed, the minimal case, the error. */
export function describeFailure(r: TargetReport): string {
  const c = r.counterexample
  if (!c) return `${r.stats.target}: failed (no counterexample)`
  const lines = [
    `${r.stats.target}: FAILED (seed ${r.seed}, ${r.numShrinks ?? 0} shrinks)`,
    `  case: ${c.what.slice(0, 2000)}`,
    `  error: ${c.error.split('\n').slice(0, 12).join('\n         ')}`,
    `  bytes (${c.bytes.length}):`,
    hexdump(c.bytes)
      .split('\n')
      .map((l) => '    ' + l)
      .join('\n'),
  ]
  for (const [n, b] of c.files ?? []) lines.push(`  file ${n} (${b.length} bytes)`)
  if (c.path) lines.push(`  saved to ${c.path}`)
  return lines.join('\n')
}
