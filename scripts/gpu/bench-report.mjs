// Prints a compact report of a `sparse bench --json` output (used on the GPU machine by
// scripts/gpu/run.sh, where the output tail is what comes back first): header, per-level
// summary, agreement with the anchors, unavailable baselines, the largest check errors,
// failed cases. --cases adds the per-case table; --brief prints only a few lines (counts,
// and the geometric-mean speedups per op and dtype) for run.sh's summary.
//   node scripts/gpu/bench-report.mjs out.json [--cases | --brief]
import {readFileSync} from 'node:fs'

import {renderCases, renderHeader, renderSummary} from '../../dist/bench/output.js'

const [path, flag] = process.argv.slice(2)
let report
try {
  report = JSON.parse(readFileSync(path, 'utf8'))
} catch (error) {
  console.log(`ERROR no report in ${path}: ${error.message.split('\n')[0]}`)
  process.exit(1)
}
if (report.error) {
  console.log('ERROR', JSON.stringify(report.error))
  process.exit(1)
}
if (flag === '--brief') {
  const s = report.summary
  console.log(`${s.ok} cases ok, ${s.failed} failed, ${(report.durationMs / 1000).toFixed(0)} s on ${report.device.name}`)
  for (const o of s.overall) {
    const gm = Object.entries(o.geomeanSpeedup).map(([name, v]) => `${name} ${v.toFixed(2)}x`).join(', ')
    console.log(`${o.op} ${o.dtype}: ${o.cases} cases, geomean speedup vs ${gm}; dense faster in ${o.denseFaster}`)
  }
  for (const a of s.agreement) console.log(`${a.op} ${a.dtype} ${a.baseline}/${a.reference}: geomean ratio ${a.geomeanRatio.toFixed(3)}, ${(100 * a.within15).toFixed(0)}% within 15%`)
  const first = report.cases.find((c) => c.status === 'failed')
  if (first) console.log(`first failure: ${first.file} ${first.op} ${first.dtype} n=${first.n}: ${first.error}`)
  process.exit(0)
}
console.log(renderHeader(report))
if (flag === '--cases') console.log(renderCases(report))
console.log(renderSummary(report))
const unavailable = new Map()
const worst = new Map()
const graph = []
for (const c of report.cases) {
  if (c.status !== 'ok') continue
  for (const [name, why] of Object.entries(c.unavailable)) unavailable.set(`${c.op} ${c.dtype} ${name}: ${why}`, (unavailable.get(`${c.op} ${c.dtype} ${name}: ${why}`) ?? 0) + 1)
  for (const [name, f] of Object.entries(c.impls)) {
    if (f.relErr === undefined) continue
    const k = `${c.op} ${c.dtype} ${name} vs ${f.checkAgainst}`
    const w = worst.get(k)
    if (!w || !(f.relErr <= w.relErr)) worst.set(k, {relErr: f.relErr, file: c.file, n: c.n})
  }
  if (c.graphMsPerLaunch !== undefined) graph.push(c.ms.median / c.graphMsPerLaunch)
}
for (const [k, v] of unavailable) console.log(`unavailable (${v} cases): ${k}`)
for (const [k, v] of worst) console.log(`largest relErr ${k}: ${v.relErr.toExponential(2)} (${v.file} n=${v.n})`)
if (graph.length) console.log(`graph: ${graph.length} cases timed in a CUDA graph; per-launch time / graph time per launch median ${graph.sort((a, b) => a - b)[graph.length >> 1].toFixed(2)}`)
const modes = {}
for (const c of report.cases) if (c.status === 'ok') for (const f of Object.values(c.impls)) modes[f.l2Mode] = (modes[f.l2Mode] ?? 0) + 1
console.log('l2 modes (implementation timings):', JSON.stringify(modes))
const failed = report.cases.filter((c) => c.status === 'failed')
for (const c of failed.slice(0, 10)) console.log(`FAILED ${c.file} ${c.op} ${c.dtype} n=${c.n}: ${c.error}`)
if (failed.length > 10) console.log(`... ${failed.length - 10} more failed`)
console.log(`duration ${(report.durationMs / 1000).toFixed(1)} s, ${report.summary.ok} ok, ${report.summary.failed} failed`)
