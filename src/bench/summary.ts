/**
 * Summaries of a run: per sparsity level (geometric-mean speedup over each baseline, how
 * often dense was faster), overall per op and dtype, whole-model totals (sum of layer
 * times, sparse against dense, and memory), and, with an anchors file, how this run's
 * library figures agree with the reference table's.
 */
import {memorySaving} from '../sparse/memory.js'
import {geomean, median} from './stats.js'
import type {AgreementSummary, BenchCaseRecord, BenchCaseResult, BenchSummary, LevelSummary, ModelTotal, OverallSummary} from './types.js'

/** The nominal level of a case: 2 decimals of its sparsity. */
export function levelOf(sparsity: number): number {
  return Math.round(sparsity * 100) / 100
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>()
  for (const it of items) {
    const k = key(it)
    const list = m.get(k)
    if (list) list.push(it)
    else m.set(k, [it])
  }
  return m
}

function speedupGeomeans(cases: BenchCaseResult[]): Record<string, number> {
  const names = [...new Set(cases.flatMap((c) => Object.keys(c.speedup)))]
  const out: Record<string, number> = {}
  for (const name of names) out[name] = geomean(cases.map((c) => c.speedup[name]).filter((v) => v !== undefined))
  return out
}

const AGREEMENT_PAIRS: Array<[string, string]> = [
  ['cublas_f32', 'ref_cublas_f32'],
  ['cublas_tf32', 'ref_cublas_tf32'],
  ['cublas_f16', 'ref_cublas_f16'],
  ['cusparse', 'ref_cusparse'],
]

export function summarizeCases(records: BenchCaseRecord[]): BenchSummary {
  const ok = records.filter((c): c is BenchCaseResult => c.status === 'ok')
  const levels: LevelSummary[] = []
  for (const list of groupBy(ok, (c) => `${c.op}|${c.dtype}|${c.group}|${levelOf(c.level)}`).values()) {
    const c0 = list[0]
    levels.push({
      op: c0.op,
      dtype: c0.dtype,
      group: c0.group,
      sparsity: levelOf(c0.level),
      cases: list.length,
      geomeanSpeedup: speedupGeomeans(list),
      denseFaster: list.filter((c) => c.recommendation?.use === 'dense').length,
      medianTflops: median(list.map((c) => c.tflops)),
    })
  }
  levels.sort((a, b) => cmp(a.op, b.op) || cmp(a.dtype, b.dtype) || cmp(a.group, b.group) || a.sparsity - b.sparsity)

  const overall: OverallSummary[] = []
  for (const list of groupBy(ok, (c) => `${c.op}|${c.dtype}`).values()) {
    const fr = list.map((c) => c.fractionOfBandwidth).filter((v): v is number => v !== null)
    overall.push({
      op: list[0].op,
      dtype: list[0].dtype,
      cases: list.length,
      geomeanSpeedup: speedupGeomeans(list),
      denseFaster: list.filter((c) => c.recommendation?.use === 'dense').length,
      medianTflops: median(list.map((c) => c.tflops)),
      medianFractionOfBandwidth: fr.length > 0 ? median(fr) : null,
    })
  }
  overall.sort((a, b) => cmp(a.op, b.op) || cmp(a.dtype, b.dtype))

  const models: ModelTotal[] = []
  const withModel = ok.filter((c) => c.model !== undefined)
  for (const list of groupBy(withModel, (c) => `${c.model}|${c.op}|${c.dtype}|${c.n}`).values()) {
    const c0 = list[0]
    const sparseMs = list.reduce((a, c) => a + c.ms.median, 0)
    const names = [...new Set(list.flatMap((c) => Object.keys(c.baselines)))]
    const baselineMs: Record<string, number> = {}
    const speedup: Record<string, number> = {}
    for (const name of names) {
      // Compare over the layers where the baseline ran, so a missing one does not skew the total.
      const both = list.filter((c) => c.baselines[name] !== undefined)
      const dense = both.reduce((a, c) => a + c.baselines[name], 0)
      const sparse = both.reduce((a, c) => a + c.ms.median, 0)
      baselineMs[name] = dense
      speedup[name] = sparse > 0 ? dense / sparse : Number.NaN
    }
    const denseBytes = list.reduce((a, c) => a + c.memory.denseBytes, 0)
    const csrBytes = list.reduce((a, c) => a + c.memory.csrBytes, 0)
    const sum = (key: 'bitmapBytes' | 'twoFourBytes' | 'tcBytes'): number | null =>
      list.every((c) => c.memory[key] !== null && c.memory[key] !== undefined) ? list.reduce((a, c) => a + c.memory[key]!, 0) : null
    models.push({model: c0.model!, op: c0.op, dtype: c0.dtype, n: c0.n, layers: list.length, sparseMs, baselineMs, speedup, denseBytes, csrBytes, memorySaving: memorySaving(denseBytes, csrBytes), bitmapBytes: sum('bitmapBytes'), twoFourBytes: sum('twoFourBytes'), tcBytes: sum('tcBytes')})
  }

  const agreement: AgreementSummary[] = []
  for (const list of groupBy(ok.filter((c) => c.compare), (c) => `${c.op}|${c.dtype}`).values()) {
    for (const [baseline, reference] of AGREEMENT_PAIRS) {
      const ratios = list.filter((c) => c.baselines[baseline] > 0 && (c.compare?.[reference] ?? 0) > 0).map((c) => c.baselines[baseline] / c.compare![reference])
      if (ratios.length === 0) continue
      agreement.push({
        op: list[0].op,
        dtype: list[0].dtype,
        baseline,
        reference,
        cases: ratios.length,
        geomeanRatio: geomean(ratios),
        within15: ratios.filter((r) => Math.abs(r - 1) <= 0.15).length / ratios.length,
      })
    }
  }

  return {total: records.length, ok: ok.length, failed: records.length - ok.length, levels, overall, models, agreement}
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
