/**
 * SpMM kernel tuning for `sparse bench --tune`, and the cache of its winners.
 *
 * Tuning times every variant of our CUDA SpMM that can run a case (the list and the
 * built-in selection's pick come from `spmmVariants`), through the bench harness's normal
 * timing (CUDA events, cold L2, spacer) with a smaller sample (`candidateTiming`), and
 * keeps the fastest. The winners go to a small JSON file that later runs read:
 *
 *   {"format": "sparse-tune", "version": 1,
 *    "entries": {"NVIDIA H200|f32|i32|m4096|k4096|n16|r2048": {"variant": "split_v4_t4_w2", ...}}}
 *
 * The key (`tuneKey`) is the GPU's name, the dtype, the index width, the exact m, k and n,
 * and the mean row length nnz/m rounded to a power of 2 (`rowClass`). Why this class: the
 * variants differ in how they cover N (vector width, strip width: exact n decides which
 * widths divide it) and how many warps the grid has (m and n), so those stay exact: they
 * are a layer's identity, and a model repeats the same few shapes. The nonzeros only enter
 * through the work per row, and the selection's own thresholds on it are powers of 2
 * (mean row / (2 w 32/t) >= c), so the same layer pruned to a nearby sparsity, or another
 * seed of it, shares its winner, while 2x more work per row is another class. k changes only
 * where B's rows are read from, and is kept exact because it is free to. A 2:4 matrix (f16/bf16
 * only) gets `|s24` at the end: the 2:4 kernel's variants can run it and not an unstructured
 * matrix of the same shape and density, so the two never share a winner. A case benched with
 * --keep-sparse gets `|sparse` last: its candidates leave out the kernels that store every
 * weight, so its winner is not the fastest of all and is kept apart.
 */
import {mkdir} from 'node:fs/promises'
import {homedir} from 'node:os'
import {dirname, join} from 'node:path'

import {errorAbout, SparseError} from '../errors.js'
import {checkTextFile, readTextFile} from '../formats/byte-source.js'
import {MAX_TUNE_CACHE_BYTES} from '../formats/limits.js'
import {spmmVariantName} from '../kernels/variant-name.js'
import type {ValueDType} from '../types.js'
import {indexBitsFor} from './metrics.js'
import {writeText} from './output.js'
import type {NativeTimingOptions} from './types.js'

export const TUNE_CACHE_FORMAT = 'sparse-tune'
export const TUNE_CACHE_VERSION = 1

/**
 * A variant name as the kernels spell it (the grammar the native side exports: one pattern per
 * kernel family; the names `spmm()` accepts).
 */
export {spmmVariantName}

/** What identifies a tuned problem. `gpu` is the device name `sparse bench` reports (report.device.name). */
export interface TuneKeyInput {
  gpu: string
  dtype: ValueDType
  m: number
  k: number
  n: number
  nnz: number
  /** Our SpMM's index width (default: 16 for f16/bf16 when k <= 32768, else 32, as the bench uses). */
  indexBits?: 16 | 32
  /** '2:4' when the matrix is 2:4 (and the dtype f16/bf16): see isTwoFour. */
  structure?: '2:4'
  /** true when tuned with keepSparse (`spmm`'s option, bench --keep-sparse). */
  keepSparse?: boolean
}

export interface TuneCacheEntry {
  variant: string
  /** The winner's and the selection's time in the tuning run (candidate timing, ms). */
  ms: number
  defaultVariant: string
  defaultMs: number
  gpu: string
  dtype: ValueDType
  indexBits: 16 | 32
  m: number
  k: number
  n: number
  /** The nnz of the case that was tuned (the key holds its row class). */
  nnz: number
  rowClass: number
  /** '2:4' for a 2:4 matrix (the key holds |s24). */
  structure?: '2:4'
  /** true when tuned with keepSparse (the key ends in |sparse). */
  keepSparse?: true
  /** The case's file, for people reading the cache. */
  file?: string
  tunedAt: string
}

export interface TuneCache {
  format: typeof TUNE_CACHE_FORMAT
  version: typeof TUNE_CACHE_VERSION
  entries: Record<string, TuneCacheEntry>
}

/** The default cache file: $XDG_CACHE_HOME/sparse/tune.json, else ~/.cache/sparse/tune.json. */
export function defaultTuneCachePath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME
  const base = xdg && xdg.startsWith('/') ? xdg : join(env.HOME || homedir(), '.cache')
  return join(base, 'sparse', 'tune.json')
}

/** The mean row length nnz/m rounded to the nearest power of 2 (0 for an empty matrix). */
export function rowClass(m: number, nnz: number): number {
  if (m <= 0 || nnz <= 0) return 0
  return 2 ** Math.round(Math.log2(nnz / m))
}

/** The cache key, e.g. "NVIDIA H200|f16|i16|m4096|k11008|n16|r1024" (a 2:4 matrix: "...|r2048|s24"). */
export function tuneKey(key: TuneKeyInput): string {
  const bits = key.indexBits ?? indexBitsFor('spmm', key.dtype, key.k)
  const s24 = key.structure === '2:4' && key.dtype !== 'f32' ? '|s24' : ''
  const sparse = key.keepSparse ? '|sparse' : ''
  return `${key.gpu}|${key.dtype}|i${bits}|m${key.m}|k${key.k}|n${key.n}|r${rowClass(key.m, key.nnz)}${s24}${sparse}`
}

export function emptyTuneCache(): TuneCache {
  return {format: TUNE_CACHE_FORMAT, version: TUNE_CACHE_VERSION, entries: {}}
}

/** What to do about a --tune-cache path that is not a cache file at all. */
const NOT_A_CACHE = 'give --tune-cache a regular file or a new file name, or pass --no-tune-cache'

/**
 * Why the cache file cannot be a tune cache, as the error readTuneCache would throw, or
 * nothing (a missing file is fine: it is created). For a check before a run starts.
 */
export async function checkTuneCache(path: string): Promise<void> {
  try {
    await checkTextFile(path, MAX_TUNE_CACHE_BYTES)
  } catch (error) {
    if (!isWrongFile(error)) return
    throw errorAbout(error, '--tune-cache', NOT_A_CACHE)
  }
}

/** A path that is not a file the cache could be (rather than a missing or unreadable one). */
function isWrongFile(error: unknown): boolean {
  return error instanceof SparseError && (error.code === 'not-a-file' || error.code === 'is-directory' || error.code === 'too-large')
}

/**
 * Reads a cache file. A missing file is an empty cache; an unreadable, corrupt or foreign
 * one is an empty cache and a `warning` (it is only a cache). Entries without a valid
 * variant name are dropped. But a path that cannot be a cache file at all is an error (exit 2
 * for a FIFO, a device or a directory; exit 1 for a file over MAX_TUNE_CACHE_BYTES): it is
 * never waited on or read whole, and --tune will not replace it.
 */
export async function readTuneCache(path: string): Promise<{cache: TuneCache; warning?: string}> {
  let text: string
  try {
    text = await readTextFile(path, MAX_TUNE_CACHE_BYTES)
  } catch (error) {
    if (isWrongFile(error)) throw errorAbout(error, '--tune-cache', NOT_A_CACHE)
    if (error instanceof SparseError && error.code === 'missing-file') return {cache: emptyTuneCache()}
    return {cache: emptyTuneCache(), warning: `ignoring the tune cache ${path}: cannot read it (${(error as Error).message.split('\n')[0]})`}
  }
  const bad = (why: string) => ({cache: emptyTuneCache(), warning: `ignoring the tune cache ${path}: ${why}`})
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return bad('not valid JSON')
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return bad('not a JSON object')
  const o = data as Record<string, unknown>
  if (o.format !== TUNE_CACHE_FORMAT) return bad(`not a sparse tune cache (format ${JSON.stringify(o.format)})`)
  if (o.version !== TUNE_CACHE_VERSION) return bad(`version ${JSON.stringify(o.version)} (this sparse reads version ${TUNE_CACHE_VERSION})`)
  if (!o.entries || typeof o.entries !== 'object' || Array.isArray(o.entries)) return bad('no "entries" object')
  const cache = emptyTuneCache()
  let dropped = 0
  for (const [key, value] of Object.entries(o.entries as Record<string, unknown>)) {
    const e = value as Partial<TuneCacheEntry> | null
    if (e && typeof e === 'object' && typeof e.variant === 'string' && spmmVariantName().test(e.variant)) cache.entries[key] = e as TuneCacheEntry
    else dropped++
  }
  return dropped > 0 ? {cache, warning: `tune cache ${path}: ignored ${dropped} malformed entr${dropped === 1 ? 'y' : 'ies'}`} : {cache}
}

/**
 * Adds `entries` to the cache file (re-read just before, so entries other runs saved
 * meanwhile are kept; a corrupt file is replaced) and writes it atomically (temporary file
 * in the same folder, then rename), creating the folder. Returns the number of entries
 * written and any warning from reading the old file.
 */
export async function saveTuneEntries(path: string, entries: Record<string, TuneCacheEntry>): Promise<{total: number; warning?: string}> {
  await mkdir(dirname(path), {recursive: true})
  const {cache, warning} = await readTuneCache(path)
  Object.assign(cache.entries, entries)
  const sorted: Record<string, TuneCacheEntry> = {}
  for (const key of Object.keys(cache.entries).sort()) sorted[key] = cache.entries[key]
  await writeText(path, JSON.stringify({...cache, entries: sorted}, null, 1) + '\n', {force: true})
  return {total: Object.keys(sorted).length, ...(warning ? {warning} : {})}
}

/**
 * The tuned variant for a problem, from the cache file (default: `defaultTuneCachePath()`),
 * or undefined. For library users of `spmm(csr, b, {device: 'cuda', variant})`:
 *
 *   const variant = await tunedVariant({gpu: cudaInfo().name, dtype: 'f16', m, k, n, nnz,
 *                                       ...(isTwoFour(csr) ? {structure: '2:4'} : {})})
 *   await spmm(csr, b, {device: 'cuda', variant})   // undefined: the built-in selection
 *
 * A corrupt cache reads as empty (undefined); a path that cannot be a cache file (a FIFO, a
 * device, a directory, a file over MAX_TUNE_CACHE_BYTES) is an error.
 */
export async function tunedVariant(key: TuneKeyInput, opts: {path?: string} = {}): Promise<string | undefined> {
  const {cache} = await readTuneCache(opts.path ?? defaultTuneCachePath())
  return cache.entries[tuneKey(key)]?.variant
}

/**
 * The timing of each tuning candidate: the harness's rules (warm-up, cold L2, spacer, at
 * least minReps and minMs, at most maxReps) with a smaller sample: at most 10 reps and
 * `minMs` ms (default 20) and at most 200 reps, no CUDA graph, no output check. The
 * winner is then timed again with the full settings as the case's `ours`.
 */
export function candidateTiming(timing: NativeTimingOptions, minMs = 20): NativeTimingOptions {
  return {
    ...timing,
    warmup: Math.min(timing.warmup ?? 5, 3),
    minReps: Math.min(timing.minReps ?? 50, 10),
    minMs: Math.min(timing.minMs ?? 200, minMs),
    maxReps: Math.min(timing.maxReps ?? 1000, 200),
    graphBelowMs: 0,
    check: false,
  }
}

/**
 * The fastest candidate by median time; on a tie the selection's pick (`defaultVariant`)
 * wins, then the earlier name. Candidates without a finite positive time are skipped;
 * undefined when none has one.
 */
export function pickFastest(candidates: Record<string, number>, defaultVariant: string): {variant: string; ms: number} | undefined {
  let best: {variant: string; ms: number} | undefined
  for (const [variant, ms] of Object.entries(candidates)) {
    if (!(Number.isFinite(ms) && ms > 0)) continue
    if (!best || ms < best.ms || (ms === best.ms && variant === defaultVariant)) best = {variant, ms}
  }
  return best
}
