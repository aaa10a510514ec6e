/**
 * Stage 3 of a run: one case (a problem's matrix, an op, a dtype, an N). Its data flows one
 * way: the variant choice (CUDA SpMM), one harness call (measure.ts), the record built from
 * the samples (statistics, rates, bytes, fractions of the ceilings, memory, speedups,
 * advice), the variant settled into it, then the --compare columns. A case that fails
 * becomes a FailedCase record; only a DeviceError (the GPU is gone) stops the run.
 */
import {DeviceError} from '../errors.js'
import {convertValues} from '../sparse/dense-to-csr.js'
import {randomValues} from '../sparse/random.js'
import type {CsrMatrix, ValueDType} from '../types.js'
import type {CompareTable} from './compare.js'
import {errorCode, errorMessage} from './failure.js'
import {type Measurement, measure} from './measure.js'
import {csrTileStats} from '../sparse/memory.js'
import {bytesMoved, denseReference, flopCount, memoryFigures, recommend, streamedWeights} from './metrics.js'
import {implList, type PlanTiming} from './plan.js'
import type {BenchProblem} from './problems.js'
import {type SampleSummary, summarize} from './stats.js'
import type {
  BaselineKind,
  BenchCaseRecord,
  BenchCaseResult,
  BenchDevice,
  BenchNative,
  BenchOp,
  CaseShape,
  ImplFigures,
  NativeCeilings,
} from './types.js'
import type {Tuner} from './variant.js'

/** What every case of a run shares. */
export interface CaseContext {
  native: BenchNative
  device: BenchDevice
  baselineKinds: BaselineKind[]
  timing: PlanTiming
  seed: number
  ceilings: NativeCeilings
  /** CUDA runs: the kernel-variant chooser. */
  tuner?: Tuner
  compare?: CompareTable
}

/** A problem once loaded: its matrix and values in the case's dtype, or why it could not be read. */
export interface CaseInput {
  problem: BenchProblem
  csr?: CsrMatrix
  values?: Float32Array | Uint16Array
  loadError?: unknown
  op: BenchOp
  dtype: ValueDType
  n: number
}

export interface CaseOutcome {
  record: BenchCaseRecord
  /** SM clock seen by the harness while the case ran (CUDA with NVML), for the device summary. */
  smClockMhz: {min: number; max: number} | null
  /** Whether the --compare table had a row for the case. */
  compared: boolean
}

/** Runs one case. `onTuning` reports --tune's progress through the candidates. */
export async function runCase(ctx: CaseContext, input: CaseInput, onTuning: (i: number, count: number) => void): Promise<CaseOutcome> {
  const {problem, csr, values, op, dtype, n} = input
  const level = Number.isFinite(problem.sparsity) ? problem.sparsity : csr ? sparsityOf(csr) : Number.NaN
  const base: CaseBase = {file: problem.file, name: problem.name, group: problem.group, ...(problem.model ? {model: problem.model} : {}), level, op, dtype, device: ctx.device, n}
  if (!csr || !values) {
    return {record: {...base, status: 'failed', sparsity: problem.sparsity, error: errorMessage(input.loadError), code: errorCode(input.loadError)}, smClockMhz: null, compared: false}
  }
  let smClockMhz: CaseOutcome['smClockMhz'] = null
  try {
    const args = {op, dtype, device: ctx.device, csr, values, n, impls: implList(op, dtype, ctx.device, ctx.baselineKinds), timing: ctx.timing, seed: ctx.seed}
    const choice = op === 'spmm' && ctx.tuner ? await ctx.tuner.choose(ctx.native, args, onTuning) : undefined
    const res = await measure(ctx.native, {...args, variant: choice?.pass})
    smClockMhz = res.smClockMhz
    let record = buildCase(base, csr, res, ctx.ceilings, choice?.name)
    if (choice && ctx.tuner) record = ctx.tuner.settle(record, choice, problem.file)
    const hit = ctx.compare?.lookup(problem.file, op, dtype, n)
    if (hit) record = withCompare(record, hit.columns, hit.peers)
    return {record, smClockMhz, compared: Boolean(hit)}
  } catch (error) {
    if (error instanceof DeviceError) throw error
    const nnz = csr.rowOffsets[csr.rows]
    return {
      record: {...base, status: 'failed', m: csr.rows, k: csr.cols, nnz, sparsity: sparsityOf(csr), error: errorMessage(error), code: errorCode(error)},
      smClockMhz,
      compared: false,
    }
  }
}

/** The matrix's values in the case's dtype; pattern-only matrices get seeded normals. */
export function valuesFor(csr: CsrMatrix, dtype: ValueDType, seed: number, file: string): Float32Array | Uint16Array {
  const nnz = csr.rowOffsets[csr.rows]
  if (csr.values === null) return randomValues(nnz, dtype, `${seed}:${file}`)
  if (csr.dtype === dtype) return csr.values
  return convertValues(csr.values, csr.dtype, dtype) as Float32Array | Uint16Array
}

export function sparsityOf(csr: CsrMatrix): number {
  const total = csr.rows * csr.cols
  return total === 0 ? 0 : 1 - csr.rowOffsets[csr.rows] / total
}

type CaseBase = Pick<BenchCaseResult, 'file' | 'name' | 'group' | 'model' | 'level' | 'op' | 'dtype' | 'device' | 'n'>

function figures(samples: Float64Array | undefined): SampleSummary {
  return summarize(samples ?? new Float64Array(0))
}

/**
 * The record of a case that ran: samples to statistics, rates, bytes, fractions of the
 * ceilings, memory, speedups and advice. `variant`: the SpMM variant chosen for it, when
 * known (the form it reads counts where `ours`'s detail names no kernel).
 */
function buildCase(
  base: CaseBase,
  csr: CsrMatrix,
  res: Measurement,
  ceilings: NativeCeilings,
  variant?: string,
): BenchCaseResult {
  const nnz = csr.rowOffsets[csr.rows]
  const ours = res.impls.find((i) => i.name === 'ours')
  if (!ours || !ours.available) throw new Error(ours?.reason ?? 'our kernel did not run')
  const impls: Record<string, ImplFigures> = {}
  const baselines: Record<string, number> = {}
  const unavailable: Record<string, string> = {}
  for (const r of res.impls) {
    if (!r.available) {
      unavailable[r.name] = r.reason ?? 'unavailable'
      continue
    }
    const s = figures(r.samples)
    impls[r.name] = {
      ms: {median: s.median, p10: s.p10, p90: s.p90},
      samples: s.count,
      detail: r.detail,
      l2Mode: r.l2Mode,
      copies: r.copies,
      ...(r.graphMsPerLaunch !== undefined ? {graphMsPerLaunch: r.graphMsPerLaunch} : {}),
      ...(r.spacerUs !== undefined ? {spacerUs: r.spacerUs} : {}),
      ...(r.relErr !== undefined ? {relErr: r.relErr, checkAgainst: r.checkAgainst} : {}),
    }
    if (r.name !== 'ours') baselines[r.name] = s.median
  }
  const o = impls.ours
  const speedup: Record<string, number> = {}
  for (const [name, ms] of Object.entries(baselines)) speedup[name] = ms / o.ms.median
  const shape: CaseShape = {op: base.op, dtype: base.dtype, m: csr.rows, k: csr.cols, n: base.n, nnz, indexBits: res.indexBits}
  const seconds = o.ms.median * 1e-3
  const tflops = flopCount(shape) / seconds / 1e12
  const memory = memoryFigures(csr.rows, csr.cols, nnz, base.dtype, base.dtype === 'f32' ? undefined : csrTileStats(csr))
  // The bytes and saving of the form the kernel read: a 2:4 kernel streams the 2:4 tiles
  // (1.125 bytes per element in f16), not the CSR (2 bytes per element at 50 % with 16-bit
  // indices), so CSR's figures would put a 2:4 case above the copy bandwidth.
  const weights = streamedWeights(base.op, base.device, o.detail, variant, memory)
  const bytes = bytesMoved(shape, weights.bytes ?? undefined)
  const gbps = bytes / seconds / 1e9
  const peak = base.dtype === 'f32' ? ceilings.f32Tflops : base.dtype === 'f16' ? ceilings.f16Tflops : ceilings.bf16Tflops
  const record: BenchCaseResult = {
    status: 'ok',
    ...base,
    m: csr.rows,
    k: csr.cols,
    nnz,
    sparsity: sparsityOf(csr),
    indexBits: res.indexBits,
    ms: o.ms,
    samples: o.samples,
    baselines,
    speedup,
    unavailable,
    impls,
    tflops,
    form: weights.form,
    bytes,
    gbps,
    fractionOfBandwidth: ceilings.copyGBps > 0 ? gbps / ceilings.copyGBps : null,
    fractionOfCompute: peak && peak > 0 ? tflops / peak : null,
    memory,
    memorySaving: weights.saving,
    recommendation: recommend(o.ms.median, baselines, denseReference(base.dtype, base.device)),
    l2Mode: o.l2Mode ?? 'n/a',
  }
  if (o.graphMsPerLaunch !== undefined) record.graphMsPerLaunch = o.graphMsPerLaunch
  if (o.relErr !== undefined) record.check = {relErr: o.relErr, against: o.checkAgainst ?? ''}
  return record
}

/** The record with the --compare columns, and its peers (e.g. sputnik) as baselines. */
function withCompare(record: BenchCaseResult, columns: Record<string, number>, peers: string[]): BenchCaseResult {
  const baselines = {...record.baselines}
  const speedup = {...record.speedup}
  for (const p of peers) {
    const ms = columns[p]
    if (ms > 0) {
      baselines[p] = ms
      speedup[p] = ms / record.ms.median
    }
  }
  return {...record, baselines, speedup, compare: {...columns}}
}
