/**
 * `--compare FILE.jsonl`: times from an earlier run of `sparse bench --jsonl`, or from a
 * reference table such as ../shared/anchors/dlmc_dev_h200.jsonl (Sputnik's per-problem
 * times on the H200), matched to this run's cases by file, op, dtype and N.
 *
 * Columns added to a matched case (ms):
 *   anchors file: `sputnik` (compared as a speedup), and the file's own library figures as
 *     `ref_cusparse`, `ref_cusparse_torch`, `ref_cublas_f32`, `ref_cublas_tf32`, `ref_cublas_f16`
 *     (to check this run's baselines against; not speedups).
 *   earlier run: `previous` (its median for our kernel, compared as a speedup) and
 *     `previous_<baseline>` for its baselines.
 * The LLM anchors file (../shared/anchors/llm_h200.jsonl: one line per shape m x k, sparsity s
 * and N, with `sputnik_f32_us`, `cublas_f32_us`, `cusparse_torch_f32_us` or `sputnik_f16_us`,
 * `cublas_f16_us`) matches the `--suite llm` cases `llm/MxK/S` in the same columns.
 * Files match by path segments: when one path ends with all the segments of the other (so
 * `../shared/dlmc/rn50/.../x.smtx` matches the anchors' `rn50/.../x.smtx`), and never
 * through a tail that two lines of the file share.
 */
import {errorAbout, InputError} from '../errors.js'
import {readTextFile} from '../formats/byte-source.js'
import {MAX_COMPARE_BYTES} from '../formats/limits.js'
import type {ValueDType} from '../types.js'
import type {BenchOp} from './types.js'

export interface CompareEntry {
  /** Columns in ms. */
  columns: Record<string, number>
  /** Columns that are peers to compare against as speedups ('sputnik', 'previous'). */
  peers: string[]
}

export interface CompareTable {
  kind: 'anchors' | 'run'
  path: string
  lines: number
  lookup(file: string, op: BenchOp, dtype: ValueDType, n: number): CompareEntry | undefined
}

const US = 1e-3

/** Map of anchors-file sections to (op, dtype) and their column names. */
const ANCHOR_SECTIONS: Array<{key: string; op: BenchOp; dtype: ValueDType; columns: Record<string, string>}> = [
  {key: 'spmm_f32_us', op: 'spmm', dtype: 'f32', columns: {sputnik: 'sputnik', cusparse: 'ref_cusparse', cusparse_torch: 'ref_cusparse_torch', cublas_f32: 'ref_cublas_f32', cublas_tf32: 'ref_cublas_tf32'}},
  {key: 'spmm_f16_us', op: 'spmm', dtype: 'f16', columns: {sputnik: 'sputnik', cusparse: 'ref_cusparse', cublas_f16: 'ref_cublas_f16'}},
  {key: 'sddmm_f32_us', op: 'sddmm', dtype: 'f32', columns: {sputnik: 'sputnik', cusparse: 'ref_cusparse', cusparse_torch: 'ref_cusparse_torch', cublas_f32_full: 'ref_cublas_f32'}},
]

/** The LLM anchors' per-dtype fields and the columns they fill (op spmm). */
const LLM_ANCHOR_FIELDS: Array<{dtype: ValueDType; columns: Record<string, string>}> = [
  {dtype: 'f32', columns: {sputnik_f32_us: 'sputnik', cublas_f32_us: 'ref_cublas_f32', cusparse_torch_f32_us: 'ref_cusparse_torch'}},
  {dtype: 'f16', columns: {sputnik_f16_us: 'sputnik', cublas_f16_us: 'ref_cublas_f16'}},
]

/** A line of the LLM anchors file: {m, k, n, s, ...LLM_ANCHOR_FIELDS}. */
function isLlmAnchor(obj: Record<string, unknown>): boolean {
  return (
    typeof obj.m === 'number' && typeof obj.k === 'number' && typeof obj.n === 'number' && typeof obj.s === 'number' &&
    LLM_ANCHOR_FIELDS.some((f) => Object.keys(f.columns).some((c) => typeof obj[c] === 'number'))
  )
}

function key(file: string, op: string, dtype: string, n: number): string {
  return `${op}|${dtype}|${n}|${file}`
}

/** Path tails, longest first: a/b/c -> a/b/c, b/c, c. */
function tails(file: string): string[] {
  const parts = file.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.')
  const out: string[] = []
  for (let i = 0; i < parts.length; i++) out.push(parts.slice(i).join('/'))
  return out
}

/**
 * Reads and parses a --compare file: a regular file of at most MAX_COMPARE_BYTES (a FIFO
 * or a device is refused at once, never waited on or read without end).
 */
export async function loadCompare(path: string): Promise<CompareTable> {
  let text: string
  try {
    text = await readTextFile(path, MAX_COMPARE_BYTES)
  } catch (error) {
    throw errorAbout(error, '--compare', 'pass a JSONL file written by `sparse bench --jsonl`, or ../shared/anchors/dlmc_dev_h200.jsonl')
  }
  return parseCompare(text, path)
}

export function parseCompare(text: string, path = 'compare.jsonl'): CompareTable {
  // Two paths match when one ends with all the segments of the other. `full` holds each
  // line's whole path; `tail` every tail of it (null where two lines share that tail).
  const full = new Map<string, CompareEntry>()
  const tail = new Map<string, CompareEntry | null>()
  const put = (file: string, op: string, dtype: string, n: number, entry: CompareEntry) => {
    const all = tails(file)
    if (all.length === 0) return
    full.set(key(all[0], op, dtype, n), entry)
    for (const t of all) {
      const k = key(t, op, dtype, n)
      tail.set(k, tail.has(k) ? null : entry)
    }
  }
  let kind: 'anchors' | 'run' | undefined
  let lines = 0
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '') continue
    let obj: Record<string, unknown>
    try {
      obj = JSON.parse(line) as Record<string, unknown>
    } catch {
      throw new InputError('bad-compare', `${path}:${i + 1}: not a JSON line`, 'pass a JSONL file (one JSON object per line)')
    }
    if (typeof obj.file !== 'string' && isLlmAnchor(obj)) {
      lines++
      kind ??= 'anchors'
      const file = `llm/${obj.m as number}x${obj.k as number}/${obj.s as number}`
      for (const f of LLM_ANCHOR_FIELDS) {
        const columns: Record<string, number> = {}
        for (const [from, to] of Object.entries(f.columns)) {
          const v = obj[from]
          if (typeof v === 'number' && v > 0) columns[to] = v * US
        }
        if (Object.keys(columns).length > 0) put(file, 'spmm', f.dtype, obj.n as number, {columns, peers: 'sputnik' in columns ? ['sputnik'] : []})
      }
      continue
    }
    if (typeof obj.file !== 'string' || typeof obj.n !== 'number') {
      throw new InputError('bad-compare', `${path}:${i + 1}: each line needs "file" and "n"`, 'pass a JSONL file written by `sparse bench --jsonl`, or one of the anchors files (dlmc_dev_h200.jsonl, llm_h200.jsonl)')
    }
    lines++
    if (ANCHOR_SECTIONS.some((s) => typeof obj[s.key] === 'object')) {
      kind ??= 'anchors'
      for (const s of ANCHOR_SECTIONS) {
        const sec = obj[s.key] as Record<string, unknown> | undefined
        if (!sec || typeof sec !== 'object') continue
        const columns: Record<string, number> = {}
        for (const [from, to] of Object.entries(s.columns)) {
          const v = sec[from]
          if (typeof v === 'number' && v > 0) columns[to] = v * US
        }
        put(obj.file, s.op, s.dtype, obj.n, {columns, peers: 'sputnik' in columns ? ['sputnik'] : []})
      }
    } else if (obj.status !== 'failed' && typeof obj.op === 'string' && typeof obj.dtype === 'string') {
      kind ??= 'run'
      const ms = obj.ms as {median?: number} | undefined
      const columns: Record<string, number> = {}
      if (ms && typeof ms.median === 'number') columns.previous = ms.median
      const baselines = (obj.baselines ?? {}) as Record<string, unknown>
      for (const [name, v] of Object.entries(baselines)) if (typeof v === 'number') columns[`previous_${name}`] = v
      put(obj.file, obj.op, obj.dtype, obj.n, {columns, peers: 'previous' in columns ? ['previous'] : []})
    }
  }
  if (lines === 0) throw new InputError('empty-compare', `--compare: ${path} holds no lines`, 'pass a non-empty JSONL file')
  return {
    kind: kind ?? 'run',
    path,
    lines,
    lookup(file, op, dtype, n) {
      const mine = tails(file)
      // This case's path ends with a line's whole path...
      for (const t of mine) {
        const hit = full.get(key(t, op, dtype, n))
        if (hit) return hit
      }
      // ...or a line's path ends with this case's whole path (and no other line's does).
      return mine.length > 0 ? (tail.get(key(mine[0], op, dtype, n)) ?? undefined) : undefined
    },
  }
}
