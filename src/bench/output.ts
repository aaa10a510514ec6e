/**
 * Writers and the human report of `sparse bench`: CSV (one row per case), JSONL (one JSON
 * object per case, the format `--compare` reads back), and text tables.
 */
import chalk from 'chalk'
import Table from 'cli-table3'

import {writeAtomically, type WrittenFile} from '../formats/output.js'
import {escapeText} from '../formats/limits.js'
import {forcedSpmmLine} from '../kernels/variant.js'
import {cpuGemm} from './cpu-baseline.js'
import type {BenchCaseRecord, BenchReport} from './types.js'

// ---------------------------------------------------------------------------------------
// CSV and JSONL

function csvField(v: unknown): string {
  if (v === undefined || v === null) return ''
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan') : String(v)
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** Baseline and peer names that appear in the report, in a stable order. */
export function baselineColumns(report: BenchReport): string[] {
  const order = ['cublas_f32', 'cublas_tf32', 'cublas_f16', 'cublas_bf16', 'cusparse', 'cusparselt', 'cpu_dense_f32', 'sputnik', 'previous']
  const names = new Set<string>()
  for (const c of report.cases) if (c.status === 'ok') for (const k of Object.keys(c.baselines)) names.add(k)
  return [...names].sort((a, b) => rank(order, a) - rank(order, b) || (a < b ? -1 : a > b ? 1 : 0))
}

function rank(order: string[], name: string): number {
  const i = order.indexOf(name)
  return i < 0 ? order.length : i
}

/** CSV with a header row; one row per case (failed cases carry their error). */
export function toCsv(report: BenchReport): string {
  const names = baselineColumns(report)
  const header = [
    'file', 'op', 'dtype', 'device', 'm', 'k', 'n', 'nnz', 'sparsity', 'level', 'status',
    'ms_median', 'ms_p10', 'ms_p90',
    ...names.flatMap((n) => [`${n}_ms`, `speedup_${n}`]),
    'tflops', 'bytes', 'gbps', 'fraction_of_bandwidth', 'fraction_of_compute',
    'dense_bytes', 'csr_bytes', 'memory_saving', 'bitmap_bytes', 'two_four_bytes', 'tc_bytes', 'form', 'recommendation', 'recommendation_factor',
    'l2_mode', 'graph_ms_per_launch', 'rel_err', 'variant', 'variant_source', 'error',
  ]
  const rows = [header.join(',')]
  for (const c of report.cases) {
    const f: unknown[] = [c.file, c.op, c.dtype, c.device, c.m, c.k, c.n, c.nnz, c.sparsity, c.level, c.status]
    if (c.status === 'ok') {
      f.push(c.ms.median, c.ms.p10, c.ms.p90)
      for (const n of names) f.push(c.baselines[n], c.speedup[n])
      f.push(c.tflops, c.bytes, c.gbps, c.fractionOfBandwidth, c.fractionOfCompute, c.memory.denseBytes, c.memory.csrBytes, c.memorySaving, c.memory.bitmapBytes, c.memory.twoFourBytes, c.memory.tcBytes, c.form)
      f.push(c.recommendation?.use, c.recommendation?.factor, c.l2Mode, c.graphMsPerLaunch, c.check?.relErr, c.variant, c.variantSource, '')
    } else {
      f.push('', '', '')
      for (let i = 0; i < names.length; i++) f.push('', '')
      f.push('', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', c.error)
    }
    rows.push(f.map(csvField).join(','))
  }
  return rows.join('\n') + '\n'
}

/** JSONL: one case per line, with the device's name so lines stand alone. */
export function toJsonl(report: BenchReport): string {
  return report.cases.map((c) => JSON.stringify({...c, deviceName: report.device.name})).join('\n') + '\n'
}

export function writeText(path: string, text: string, opts: {force?: boolean} = {}): Promise<WrittenFile> {
  const bytes = new TextEncoder().encode(text)
  return writeAtomically(path, {force: opts.force}, async (sink) => sink.write(bytes))
}

// ---------------------------------------------------------------------------------------
// Text report

const PLAIN = {head: [] as string[], border: [] as string[]}

function ms(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '-'
  if (v >= 100) return v.toFixed(0)
  if (v >= 1) return v.toFixed(2)
  return v.toFixed(4)
}

function ratio(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '-'
  const s = `${v.toFixed(2)}x`
  return v < 1 ? chalk.red(`${s}*`) : chalk.green(s)
}

function pct(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '-' : `${(100 * v).toFixed(1)}%`
}

/** A file (or model) name for a table cell: escaped (it is file text; the table keeps our styling), and cut to `width`. */
function shortFile(file: string, width = 48): string {
  const s = escapeText(file)
  return s.length <= width ? s : '…' + s.slice(s.length - width + 1)
}

function table(head: string[]): Table.Table {
  return new Table({head, style: {...PLAIN, compact: true}, chars: {mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': ''}})
}

/**
 * The per-case table: our time, speedup over each baseline (marked * where it is faster), rate,
 * share of the copy bandwidth and memory saving of the form our kernel read (named when it is
 * not CSR, e.g. '1.78x 2:4'), advice.
 */
export function renderCases(report: BenchReport, cases: BenchCaseRecord[] = report.cases): string {
  const names = baselineColumns(report)
  const t = table(['file', 'op', 'dtype', 'n', 'sparsity', 'ms', ...names.map((n) => `vs ${n}`), 'TFLOP/s', '%BW', 'mem saving', 'advice'])
  for (const c of cases) {
    if (c.status !== 'ok') {
      t.push([shortFile(c.file), c.op, c.dtype, c.n, c.sparsity.toFixed(2), chalk.red('FAILED'), ...names.map(() => ''), '', '', '', escapeText(c.error).slice(0, 60)])
      continue
    }
    const advice = c.recommendation ? (c.recommendation.use === 'sparse' ? chalk.green(`sparse ${c.recommendation.factor.toFixed(2)}x`) : chalk.red(`DENSE ${c.recommendation.factor.toFixed(2)}x`)) : '-'
    t.push([
      shortFile(c.file),
      c.op,
      c.dtype,
      c.n,
      c.sparsity.toFixed(3),
      ms(c.ms.median),
      ...names.map((n) => ratio(c.speedup[n])),
      c.tflops.toFixed(2),
      pct(c.fractionOfBandwidth),
      `${c.memorySaving.toFixed(2)}x${c.form === 'csr' ? '' : ` ${c.form}`}`,
      advice,
    ])
  }
  return t.toString()
}

/** The per-sparsity-level summary (geometric-mean speedups) and the overall line per op and dtype. */
export function renderSummary(report: BenchReport): string {
  const s = report.summary
  const names = baselineColumns(report)
  const out: string[] = []
  if (s.levels.length > 0) {
    const t = table(['op', 'dtype', 'group', 'sparsity', 'cases', ...names.map((n) => `gm vs ${n}`), 'dense faster', 'median TFLOP/s'])
    for (const l of s.levels) {
      t.push([l.op, l.dtype, l.group, l.sparsity.toFixed(2), l.cases, ...names.map((n) => ratio(l.geomeanSpeedup[n])), `${l.denseFaster}/${l.cases}`, l.medianTflops.toFixed(2)])
    }
    for (const o of s.overall) {
      t.push([chalk.bold(o.op), chalk.bold(o.dtype), chalk.bold('all'), '', o.cases, ...names.map((n) => ratio(o.geomeanSpeedup[n])), `${o.denseFaster}/${o.cases}`, o.medianTflops.toFixed(2)])
    }
    out.push('Per sparsity level (geometric-mean speedup of sparse over each baseline; * = the baseline is faster):', t.toString())
  }
  if (s.models.length > 0) {
    const mt = table(['model', 'op', 'dtype', 'n', 'layers', 'sparse ms', ...names.map((n) => `vs ${n}`), 'dense MB', 'CSR MB', 'saving', 'bitmap MB', '2:4 MB', 'tc MB'])
    const mb = (b: number | null): string => (b === null ? 'n/a' : (b / 1e6).toFixed(2))
    for (const m of s.models) {
      mt.push([shortFile(m.model, 32), m.op, m.dtype, m.n, m.layers, ms(m.sparseMs), ...names.map((n) => ratio(m.speedup[n])), mb(m.denseBytes), mb(m.csrBytes), `${m.memorySaving.toFixed(2)}x`, mb(m.bitmapBytes ?? null), mb(m.twoFourBytes ?? null), mb(m.tcBytes ?? null)])
    }
    out.push('', 'Model totals (sum of layer times, sparse against dense; memory in the case dtype, saving against dense of that dtype):', mt.toString())
  }
  if (s.agreement.length > 0) {
    const at = table(['op', 'dtype', 'this run', 'reference', 'cases', 'geomean ratio', 'within 15%'])
    for (const a of s.agreement) at.push([a.op, a.dtype, a.baseline, a.reference, a.cases, a.geomeanRatio.toFixed(3), pct(a.within15)])
    out.push('', `Baselines against ${report.settings.compare?.path ?? 'the reference'} (time ratio, this run / reference):`, at.toString())
  }
  return out.join('\n')
}

/** One line on how the SpMM kernel variants were chosen (CUDA runs with SpMM cases). */
export function tuneLine(report: BenchReport): string | undefined {
  const t = report.tune
  if (!t) return undefined
  const spmm = report.cases.filter((c) => c.status === 'ok' && c.op === 'spmm' && c.variantSource)
  if (spmm.length === 0) return undefined
  const count = (src: string) => spmm.filter((c) => c.status === 'ok' && c.variantSource === src).length
  if (t.forced) return forcedSpmmLine(t.forced, count('forced'), spmm.length)
  const parts: string[] = []
  if (t.tune) {
    const gain = t.geomeanGain === null ? '' : `, geomean ${t.geomeanGain.toFixed(3)}x over the selection's pick (candidate timing)`
    parts.push(`tuned ${t.tuned} cases (${t.changed} changed variant${gain})`)
    if (t.only) parts.push(`only ${t.only.join(', ')}* and the selection's pick timed; not saved (--tune-only)`)
    else parts.push(t.cache ? (t.saved > 0 ? `saved ${t.saved} to ${t.cache}` : `nothing saved to ${t.cache}`) : 'not saved (--no-tune-cache)')
  } else {
    parts.push(`${count('cache')} from the tune cache${t.cache ? ` ${t.cache}` : ' (off)'}`, `${count('heuristic')} by the built-in selection`)
  }
  if (t.keepSparse) parts.push('keeping A sparse (--keep-sparse: no kernel that stores every weight)')
  return `SpMM variants: ${parts.join('; ')}`
}

/** Header lines: device, ceilings, timing policy. */
export function renderHeader(report: BenchReport): string {
  const d = report.device
  const c = d.ceilings
  const tf = (v: number | null) => (v === null ? '-' : v.toFixed(1))
  const gemm = d.kind === 'cpu' ? cpuGemm(c) : null
  const lines = [
    gemm
      ? chalk.yellow(`CPU figures: ${d.name} (our CPU kernels against a dense fp32 product: ${gemm.name}${gemm.gflops === null ? '' : `, ${gemm.gflops.toFixed(1)} GFLOP/s`})`)
      : `GPU: ${d.name} (${d.smCount} SMs, cc ${d.computeCapability}, L2 ${((d.l2Bytes ?? 0) / 2 ** 20).toFixed(0)} MiB, driver ${d.driver})` +
        (d.clocks.smMhzSeen ? `, SM clock seen ${d.clocks.smMhzSeen.min}-${d.clocks.smMhzSeen.max} MHz` : ''),
    gemm
      ? `ceilings (measured): copy ${c.copyGBps.toFixed(0)} GB/s; dense f32 ${tf(c.f32Tflops === null ? null : c.f32Tflops * 1000)} GFLOP/s at ${c.gemmSize}^3 (the machine's GEMM ceiling: ${tf(gemm.ceilingGflops)} GFLOP/s, the fastest of the GEMMs timed)`
      : `ceilings (measured): copy ${c.copyGBps.toFixed(0)} GB/s; dense f32 ${tf(c.f32Tflops)}, tf32 ${tf(c.tf32Tflops)}, f16 ${tf(c.f16Tflops)}, bf16 ${tf(c.bf16Tflops)} TFLOP/s`,
    `timing: ${report.settings.timing.warmup} warm-up, >= ${report.settings.timing.minReps} reps and ${report.settings.timing.minMs} ms (max ${report.settings.timing.maxReps} reps); ${d.kind === 'cpu' ? 'steady clock' : 'CUDA events per launch, cold L2 (rotate/flush per case)'}`,
    `${report.summary.ok} cases ok, ${report.summary.failed} failed, ${(report.durationMs / 1000).toFixed(1)} s`,
  ]
  const tl = tuneLine(report)
  if (tl) lines.splice(3, 0, tl)
  return lines.join('\n')
}
