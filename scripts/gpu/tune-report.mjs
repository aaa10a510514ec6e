// Prints what the `tune` task of scripts/gpu/run.sh checks in a `sparse bench --json` report:
//   node tune-report.mjs FILE            tuned/cached SpMM cases: variant, source, times
//   node tune-report.mjs FILE --sddmm    SDDMM cases: each cuBLAS baseline's order and relErr
//   node tune-report.mjs FILE --expect S exit 1 unless every SpMM case has variantSource S
//   node tune-report.mjs FILE --candidates P  tuned SpMM cases: each candidate whose name starts
//                                       with P, its time (us) and dense cuBLAS's / it, the
//                                       selection's variant first (and cuSPARSELt's / it where the
//                                       report has it); then per candidate the
//                                       geomean of selection's time / its time, and its minimum
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
} else if (mode === '--candidates') {
  const prefix = want ?? ''
  const gain = {} // candidate -> [selection's time / its time]
  for (const c of ok.filter((x) => x.op === 'spmm' && x.tuned)) {
    const t = c.tuned
    const dense = c.baselines?.[c.dtype === 'bf16' ? 'cublas_bf16' : 'cublas_f16']
    // (cuSPARSELt's time where the bench ran it: --baseline dense,cusparselt)
    const lt = c.baselines?.cusparselt
    const ratio = (ms) =>
      dense && Number.isFinite(ms) ? ` (${(dense / ms).toFixed(3)}x${lt ? `, cuSPARSELt ${(lt / ms).toFixed(3)}x` : ''})` : ''
    const names = Object.keys(t.candidates).filter((v) => v.startsWith(prefix) && v !== t.defaultVariant)
    console.log(`${tail(c.file)} ${c.dtype} m=${c.m} k=${c.k} n=${c.n} sparsity=${c.sparsity}: selection ${t.defaultVariant} ${us(t.defaultMs)}us${ratio(t.defaultMs)}; tuned ${t.variant}`)
    for (const v of names) {
      const ms = t.candidates[v]
      console.log(`  ${v.padEnd(24)} ${us(ms).padStart(8)}us${ratio(ms)} ${(t.defaultMs / ms).toFixed(3)}x the selection`)
      if (Number.isFinite(ms) && ms > 0 && Number.isFinite(t.defaultMs)) (gain[v] ??= []).push(t.defaultMs / ms)
    }
  }
  for (const [v, g] of Object.entries(gain)) {
    const geo = Math.exp(g.reduce((s, x) => s + Math.log(x), 0) / g.length)
    console.log(`${v.padEnd(24)} selection / it: geomean ${geo.toFixed(3)}x, min ${Math.min(...g).toFixed(3)}x, max ${Math.max(...g).toFixed(3)}x over ${g.length} cases`)
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
