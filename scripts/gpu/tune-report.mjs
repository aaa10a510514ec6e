// Prints what the `tune` task of scripts/gpu/run.sh checks in a `sparse bench --json` report:
//   node tune-report.mjs FILE            tuned/cached SpMM cases: variant, source, times
//   node tune-report.mjs FILE --sddmm    SDDMM cases: each cuBLAS baseline's order and relErr
//   node tune-report.mjs FILE --expect S exit 1 unless every SpMM case has variantSource S
import {readFileSync} from 'node:fs'

const [file, mode, want] = process.argv.slice(2)
const r = JSON.parse(readFileSync(file, 'utf8'))
const ok = r.cases.filter((c) => c.status === 'ok')
const failed = r.cases.filter((c) => c.status !== 'ok')
for (const c of failed) console.log(`FAILED ${c.file} ${c.op} ${c.dtype} n=${c.n}: ${c.error}`)
const tail = (f) => (f.length > 44 ? '…' + f.slice(-43) : f)
const us = (ms) => (Number.isFinite(ms) ? (ms * 1000).toFixed(1) : '-')
if (mode === '--sddmm') {
  for (const c of ok.filter((x) => x.op === 'sddmm')) {
    const parts = Object.entries(c.impls)
      .filter(([name]) => name.startsWith('cublas'))
      .map(([name, i]) => `${name} ${us(i.ms.median)}us ${(/order (LR|RL)/.exec(i.detail ?? '') ?? [, '?'])[1]} [${(/trial: (.*)$/.exec(i.detail ?? '') ?? [, ''])[1]}]${i.relErr !== undefined ? ` relErr ${i.relErr.toExponential(1)}` : ''}`)
    console.log(`${tail(c.file)} ${c.dtype} n=${c.n} m=${c.m} k=${c.k}: ours ${us(c.ms.median)}us relErr ${c.check?.relErr?.toExponential(1)} | ${parts.join(' | ')}`)
  }
} else {
  console.log('tune:', JSON.stringify(r.tune))
  let bad = 0
  for (const c of ok.filter((x) => x.op === 'spmm')) {
    const t = c.tuned
    const cand = t ? Object.values(t.candidates).length : 0
    console.log(
      `${tail(c.file)} ${c.dtype} n=${c.n} ${c.variantSource} ${c.variant} ours ${us(c.ms.median)}us relErr ${c.check?.relErr?.toExponential(1)}` +
        (t ? ` | tuned ${t.variant} ${us(t.ms)}us vs selection ${t.defaultVariant} ${us(t.defaultMs)}us (${(t.defaultMs / t.ms).toFixed(3)}x, ${cand} candidates${t.failed ? `, ${Object.keys(t.failed).length} failed` : ''})` : '') +
        ` | ${c.impls.ours.detail}`,
    )
    if (mode === '--expect' && c.variantSource !== want) bad++
  }
  if (bad > 0) {
    console.log(`${bad} SpMM cases without variantSource ${want}`)
    process.exitCode = 1
  }
}
