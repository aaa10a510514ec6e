/**
 * Stage 4 of a run: the report. Gathers the cases' records, the SM clocks the cases saw,
 * the tune summary and the plan's settings into the BenchReport, with its summaries.
 */
import type {CaseOutcome} from './case.js'
import {pdlMode} from '../kernels/variant.js'
import {type BenchPlan, implList} from './plan.js'
import type {BenchDevice} from './types.js'
import {denseBaselineWarning} from './cpu-baseline.js'
import {summarizeCases} from './summary.js'
import type {BenchReport, DeviceSummary, TuneSummary} from './types.js'

export function assembleReport(plan: BenchPlan & {device: BenchDevice}, device: DeviceSummary, outcomes: CaseOutcome[], tune: TuneSummary | null, durationMs: number): BenchReport {
  const cases = outcomes.map((o) => o.record)
  let smMhzSeen: {min: number; max: number} | null = null
  for (const {smClockMhz: c} of outcomes) {
    if (c) smMhzSeen = smMhzSeen ? {min: Math.min(smMhzSeen.min, c.min), max: Math.max(smMhzSeen.max, c.max)} : {...c}
  }
  const {ops, dtypes, timing} = plan
  const baselineNames = [...new Set(dtypes.flatMap((d) => ops.flatMap((op) => implList(op, d, plan.device, plan.baselineKinds).filter((i) => i !== 'ours'))))]
  return {
    device: smMhzSeen ? {...device, clocks: {...device.clocks, smMhzSeen}} : device,
    settings: {
      ops,
      dtypes,
      baselines: baselineNames,
      timing: {warmup: timing.warmup, minReps: timing.minReps, minMs: timing.minMs, maxReps: timing.maxReps, graphBelowMs: timing.graphBelowMs},
      suite: plan.suite,
      compare: plan.compare ? {path: plan.compare.path, kind: plan.compare.kind, matched: outcomes.filter((o) => o.compared).length} : null,
      seed: plan.seed,
      keepSparse: plan.keepSparse,
      pdl: pdlMode(),
    },
    cases,
    summary: summarizeCases(cases),
    tune,
    warnings: device.kind === 'cpu' ? [denseBaselineWarning(cases, device.ceilings)].filter((w): w is string => w !== null) : [],
    durationMs,
  }
}
