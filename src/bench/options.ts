/**
 * Parsing and checking `sparse bench`'s list-valued options (shared by the command and
 * library callers). Every problem is a UsageError naming the flag and what was given.
 */
import {existsSync} from 'node:fs'

import {UsageError} from '../errors.js'
import {parseDecimal} from '../numbers.js'
import type {ValueDType} from '../types.js'
import type {BaselineKind, BenchOp} from './types.js'

/** The items of a comma-separated list (trimmed); an empty list or an empty item is refused. */
function items(flag: string, value: string): string[] {
  const list = value.split(',').map((s) => s.trim())
  if (list.every((s) => s === '')) throw new UsageError('bad-list', `${flag}: expected a comma-separated list, got ${JSON.stringify(value)}`)
  if (list.includes('')) throw new UsageError('bad-list', `${flag}: an empty item in ${JSON.stringify(value)}`, 'drop the extra comma')
  return list
}

/** Positive integers, e.g. "16,256"; duplicates dropped, order kept. */
export function parseIntList(flag: string, value: string, min = 1): number[] {
  const out: number[] = []
  for (const s of items(flag, value)) {
    if (!/^\d+$/.test(s) || Number(s) < min || !Number.isSafeInteger(Number(s))) {
      throw new UsageError('bad-list', `${flag}: expected integers >= ${min}, got ${JSON.stringify(s)}`, `e.g. ${flag} 16,256`)
    }
    if (!out.includes(Number(s))) out.push(Number(s))
  }
  return out
}

/**
 * Sparsities in [0, 1), e.g. "0.5,0.9": plain decimal numbers, as prune's -s takes them
 * (parseDecimal: "1e-1" is 0.1; "0x1", "Infinity" and "NaN" are refused).
 */
export function parseSparsityList(flag: string, value: string): number[] {
  return items(flag, value).map((s) => {
    const v = parseDecimal(s)
    if (!(v >= 0 && v < 1)) throw new UsageError('bad-list', `${flag}: expected sparsities in [0, 1) (plain decimal numbers), got ${JSON.stringify(s)}`, `e.g. ${flag} 0.5,0.9`)
    return v === 0 ? 0 : v // -0 as 0
  })
}

export function parseOps(value: string): BenchOp[] {
  if (value === 'all') return ['spmm', 'sddmm']
  return [...new Set(items('--op', value))].map((s) => {
    if (s !== 'spmm' && s !== 'sddmm') throw new UsageError('bad-op', `--op: expected spmm, sddmm or all, got ${JSON.stringify(s)}`)
    return s
  })
}

export function parseDtypes(value: string): ValueDType[] {
  if (value === 'all') return ['f32', 'f16', 'bf16']
  return [...new Set(items('--dtype', value))].map((s) => {
    if (s !== 'f32' && s !== 'f16' && s !== 'bf16') throw new UsageError('bad-dtype', `--dtype: expected f32, f16, bf16 or all, got ${JSON.stringify(s)}`)
    return s
  })
}

/** "dense,cusparse" (the default); "all" adds cusparselt (2:4 SpMM); "none" times our kernel alone. */
export function parseBaselines(value: string): BaselineKind[] {
  if (value === 'none') return []
  if (value === 'all') return ['dense', 'cusparse', 'cusparselt']
  return [...new Set(items('--baseline', value))].map((s) => {
    if (s !== 'dense' && s !== 'cusparse' && s !== 'cusparselt') {
      throw new UsageError('bad-baseline', `--baseline: expected dense, cusparse, cusparselt, all or none, got ${JSON.stringify(s)}`)
    }
    return s
  })
}

/** Refuses to start a long run whose outputs would be refused at the end. */
export function checkOutputs(paths: Array<string | undefined>, force: boolean): void {
  const seen = new Set<string>()
  for (const p of paths) {
    if (!p) continue
    if (seen.has(p)) throw new UsageError('same-output', `${p} is given for two outputs`, 'give each output its own file')
    seen.add(p)
    if (!force && existsSync(p)) throw new UsageError('output-exists', `${p} exists`, 'pass --force to overwrite it, or choose another name')
  }
}
