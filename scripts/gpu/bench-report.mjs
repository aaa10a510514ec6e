// Prints a compact report of a `sparse bench --json` output (used on the GPU machine, where
// the output_tail is all that comes back at once): header, per-level summary, agreement
// with the anchors, unavailable baselines, the largest check errors, failed cases.
//   node scripts/gpu/bench-report.mjs out.json [--cases]
import {readFileSync} from 'node:fs'

import {renderCases, renderHeader, renderSummary} from '../../dist/bench/output.js'

const [path, flag] = process.argv.slice(2)
const report = JSON.parse(readFileSync(path, 'utf8'))
if (report.error) {
  console.log('ERROR', JSON.stringify(report.error))
  process.exit(1)
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
