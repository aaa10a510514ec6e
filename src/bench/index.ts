/**
 * The benchmark library behind `sparse bench`: timing our SpMM/SDDMM against dense cuBLAS
 * and cuSPARSE (or, on the CPU, against a dense CPU product), suites (DLMC, LLM), reports.
 *
 *   const report = await benchAndWrite({suite: {kind: 'dlmc', dir: '../shared/dlmc'}, plot: 'bench.svg'})
 *   report.summary.levels  // geometric-mean speedups per sparsity level
 */
import {UsageError} from '../errors.js'
import type {WrittenFile} from '../formats/output.js'
import {checkOutputs} from './options.js'
import {toCsv, toJsonl, writeText} from './output.js'
import {writePlot} from './plot.js'
import {runBench} from './run.js'
import type {BenchOptions, BenchReport} from './types.js'

export interface BenchOutputs {
  csv?: string
  jsonl?: string
  plot?: string
  force?: boolean
}

export interface BenchRunResult extends BenchReport {
  /** Files written (CSV, JSONL, plot). */
  outputs: WrittenFile[]
  /** True when cases were attempted and none succeeded (the CLI then exits 1). */
  allFailed: boolean
}

/** Runs the benchmark and writes the requested outputs (checked before the run starts). */
export async function benchAndWrite(options: BenchOptions & BenchOutputs): Promise<BenchRunResult> {
  checkOutputs([options.csv, options.jsonl, options.plot], options.force ?? false)
  if (options.plot && !/\.(svg|png)$/i.test(options.plot)) {
    throw new UsageError('bad-plot-name', `--plot ${options.plot}: the name must end in .svg or .png`, 'e.g. --plot bench.svg')
  }
  const report = await runBench(options)
  const outputs: WrittenFile[] = []
  if (options.csv) outputs.push(await writeText(options.csv, toCsv(report), {force: options.force}))
  if (options.jsonl) outputs.push(await writeText(options.jsonl, toJsonl(report), {force: options.force}))
  if (options.plot && report.summary.ok > 0) outputs.push(await writePlot(report, options.plot, {force: options.force}))
  return {...report, outputs, allFailed: report.summary.total > 0 && report.summary.ok === 0}
}

export {runBench} from './run.js'
export {implList} from './plan.js'
export {summarizeCases} from './summary.js'
export type * from './types.js'
export {median, quantile, summarize, geomean, type SampleSummary} from './stats.js'
export {
  dlmcSuite,
  llmSuite,
  attentionSuite,
  randomPrunedCsr,
  randomNMPrunedCsr,
  randomAttentionMask,
  parseBatchSizes,
  rn50Ns,
  roundUp,
  LLM_SHAPES,
  LLM_NS,
  LLM_NM_NS,
  LLM_SPARSITIES,
  ATTENTION_SEQS,
  ATTENTION_NS,
  ATTENTION_SPARSITIES,
} from './suites.js'
export {loadCompare, parseCompare, type CompareTable} from './compare.js'
export {bytesMoved, flopCount, memoryFigures, recommend, streamedWeights, type StreamedWeights} from './metrics.js'
export {toCsv, toJsonl, renderCases, renderSummary, renderHeader} from './output.js'
export {plotSpec, renderPlotSvg, svgToPng, writePlot} from './plot.js'
export {parseBaselines, parseDtypes, parseIntList, parseOps, parseSparsityList} from './options.js'
export {
  tunedVariant,
  tuneKey,
  rowClass,
  defaultTuneCachePath,
  readTuneCache,
  saveTuneEntries,
  pickFastest,
  candidateTiming,
  type TuneKeyInput,
  type TuneCache,
  type TuneCacheEntry,
} from './tune.js'
