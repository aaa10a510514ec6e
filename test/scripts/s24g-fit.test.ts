/**
 * scripts/gpu/s24g-fit.py (the 2:4 GEMM-engine family's tile shape fitted to `sparse bench --tune`
 * reports) on a report made from its own model: times written by `--model` for known constants,
 * every s24g shape a candidate. The fit must recover them (rms near 0), pick the fastest candidate
 * on every case held out by shape, and see the selection's own variant where the report names it.
 * What the fit says about the GPU needs a real --tune run (scripts/gpu/s24g-tune.sh).
 */
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

const tempDir = tempDirs('sparse-s24g-')

const SCRIPT = 'scripts/gpu/s24g-fit.py'
const TRUE = {S_m128_n128: 600, S_m256_n128: 1100, S_m128_n256: 1150, S_m256_n192: 1500, F: 40, T0: 2.5, FX0: 6, FX3: 3, L2: 5000}

function python(args: string[], input?: string) {
  return spawnSync('python3', [SCRIPT, ...args], {input, encoding: 'utf8', timeout: 120_000})
}

describe('scripts/gpu/s24g-fit.py', () => {
  it('recovers the model from its own times and picks the fastest shape held out by shape', function () {
    requirePython3(this)
    this.timeout(120_000)
    const dir = tempDir()
    const params = join(dir, 'params.json')
    writeFileSync(params, JSON.stringify(TRUE))
    const shapes = [[4096, 4096], [11008, 4096], [4096, 11008], [6144, 4096], [14336, 4096]]
    const problems = shapes.flatMap(([m, k]) => [128, 256, 1024, 2048].map((n) => ({m, k, n})))
    const model = python(['--model', params], problems.map((p) => JSON.stringify(p)).join('\n'))
    expect(model.status, model.stderr).to.equal(0)
    const rows = model.stdout.trim().split('\n').map((l) => JSON.parse(l) as {m: number; k: number; n: number; estimates: Record<string, number>; pick: {rows: number; cols: number; mode: number}})
    expect(rows).to.have.length(problems.length)
    // The estimates' candidates: both heights whole, split both ways where the ragged wave splits
    // (4096² at N = 128: 32 tiles of 128 rows, 16 of 256), and the 128 x 256 and 256 x 192 tiles
    // (`_ss1`: whole or the owner's split).
    expect(Object.keys(rows[0].estimates).sort()).to.deep.equal([
      'm128_n128', 'm128_n128_sk2', 'm128_n128_sk3', 'm128_n256', 'm128_n256_sk2', 'm256_n128', 'm256_n128_sk2', 'm256_n128_sk3', 'm256_n192', 'm256_n192_sk2',
    ])
    // Times of the model itself, as a --tune report holds them (ms), with the s24g names; the
    // selection's variant is the 256-row split (as Gemm24Rows mostly picks), a hybrid one is
    // listed and ignored. Three kernels the rule does not run are timed beside them: the 128 x 256
    // tile of 3 stages at 1.1x the `_ss1` one's time, the 4-stage `_ss1` one at 1.03x (v59: the
    // selection's 128 x 256 tile has 5 stages), and the 256 x 128 clusters of 2 at 1.05x.
    const stages: Record<string, string> = {m128_n128: '6', m256_n128: '4', m128_n256: '5_ss1', m256_n192: '4_ss1'}
    const name = (shape: string) => {
      const [, m, n, sk] = /^(m\d+)_(n\d+)(_sk\d)?$/.exec(shape)!
      return `s24g_${m}_${n}_s${stages[`${m}_${n}`]}${sk ?? ''}`
    }
    const picks = new Set<string>()
    const cases = rows.map((r) => {
      const candidates: Record<string, number> = {s24g_m128_n128_s6_sk1: 1}
      for (const [shape, us] of Object.entries(r.estimates)) candidates[name(shape)] = us / 1000
      candidates.s24g_m128_n256_s3 = (r.estimates.m128_n256 * 1.1) / 1000
      candidates.s24g_m128_n256_s4_ss1 = (r.estimates.m128_n256 * 1.03) / 1000
      candidates.s24g_m256_n128_s4_c2 = (r.estimates.m256_n128 * 1.05) / 1000
      const sel = candidates.s24g_m256_n128_s4_sk2 !== undefined ? 's24g_m256_n128_s4_sk2' : 's24g_m256_n128_s4'
      picks.add(`${r.pick.rows}x${r.pick.cols}_${r.pick.mode}`)
      // The bench's own median 1.1x the --tune time (another timing), cuSPARSELt beside cuBLAS.
      return {status: 'ok', op: 'spmm', m: r.m, k: r.k, n: r.n, dtype: 'f16', ms: {median: candidates[sel] * 1.1}, baselines: {cublas_f16: 0.02, cusparselt: 0.015},
        tuned: {candidates, defaultVariant: sel, defaultMs: candidates[sel]}}
    })
    // The grid reaches more than one kind of pick (else it would not test the choice).
    expect(picks.size, [...picks].join(' ')).to.be.at.least(3)
    const report = join(dir, 'report.json')
    writeFileSync(report, JSON.stringify({cases: [...cases, {status: 'failed', op: 'spmm'}, {...cases[0], op: 'sddmm'}]}))
    const r = python([report])
    expect(r.status, r.stderr).to.equal(0)
    // Every selection shape's time read (the hybrid, the failed case and the SDDMM case left
    // out; the other kernels apart).
    const times = rows.reduce((acc, x) => acc + Object.keys(x.estimates).length, 0)
    expect(r.stdout).to.match(new RegExp(`^${problems.length} cases, ${times} candidate times`, 'm'))
    const rmsAll = Number(/fitted on all: rms ([\d.]+)/.exec(r.stdout)![1])
    expect(rmsAll, r.stdout).to.be.below(0.01)
    const held = /the fit's pick \/ the fastest ([\d.]+) geomean \(worst ([\d.]+)\)/.exec(r.stdout)!
    expect(Number(held[2]), r.stdout).to.be.at.most(1.01)
    // Against the baselines in the bench's times: the selection's median as measured, the pick's
    // scaled by its --tune time over the selection's (so 1.1x its --tune time here).
    const geo = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length)
    const wide = cases.filter((c) => c.n >= 256)
    const fastest = wide.map((c) => Math.min(...Object.entries(c.tuned.candidates).filter(([v]) => !/_sk1$|_s3$|_c2$|m128_n256_s4_ss1$/.test(v)).map(([, ms]) => ms)))
    for (const [label, base] of [['cuBLAS', 0.02], ['cuSPARSELt', 0.015]] as const) {
      const line = new RegExp(`^in the bench's times, x ${label} at N>=256: the fit's picks ([\\d.]+) geomean \\(min ([\\d.]+)\\), the selection ([\\d.]+) \\(min ([\\d.]+)\\)$`, 'm').exec(r.stdout)
      expect(line, r.stdout).to.not.equal(null)
      expect(Number(line![3]), `${label}: the selection`).to.be.closeTo(geo(wide.map((c) => base / c.ms.median)), 0.0006)
      expect(Number(line![1]), `${label}: the picks`).to.be.closeTo(geo(fastest.map((t) => base / (1.1 * t))), geo(fastest.map((t) => base / (1.1 * t))) * 0.01)
      expect(Number(line![1]), `${label}: the picks beat the 256-row split`).to.be.above(Number(line![3]))
    }
    const fitted = JSON.parse(/^PARAMS (.*)$/m.exec(r.stdout)![1]) as Record<string, number>
    for (const k of ['S_m128_n128', 'S_m256_n128', 'S_m128_n256', 'S_m256_n192', 'T0'] as const) expect(fitted[k], k).to.be.closeTo(TRUE[k], TRUE[k] * 0.05)
    // The 256 x 192 tile is picked somewhere (it is the cheapest a multiply-add where its waves fill).
    expect(picks, [...picks].join(' ')).to.include('256x192_0')
    // The other kernels: their own stage cycles, their times against the rule's fastest, never picked.
    const other = (key: string) => new RegExp(`other kernel ${key}: [\\d.]+ cycles a stage .* its best / the rule's fastest ([\\d.]+) geomean`).exec(r.stdout)
    expect(Number(other('S_m128_n256_s3')?.[1]), r.stdout).to.be.above(1)
    expect(Number(other('S_m256_n128_s4_c2')?.[1]), r.stdout).to.be.above(1)
    expect(Number(other('S_m128_n256_s4_ss1')?.[1]), r.stdout).to.be.above(1)
    expect(r.stdout).to.not.match(/picks (m128_n256_s3|m256_n128_s4_c2|m128_n256_s4_ss1)/)
    expect(r.stdout).to.match(/^SPARSE_S24G_MODEL=([\d.e+-]+,){10}[\d.e+-]+$/m)
    // Without the `_ss1` tiles in the report, their stage cycles are not fitted, not printed, not candidates.
    const noWide = cases.map((c) => ({...c, tuned: {...c.tuned, candidates: Object.fromEntries(Object.entries(c.tuned.candidates).filter(([v]) => !v.includes('_ss1')))}}))
    writeFileSync(report, JSON.stringify({cases: noWide}))
    const r1 = python([report])
    expect(r1.status, r1.stderr).to.equal(0)
    expect(JSON.parse(/^PARAMS (.*)$/m.exec(r1.stdout)![1])).to.not.have.property('S_m128_n256')
    expect(JSON.parse(/^PARAMS (.*)$/m.exec(r1.stdout)![1])).to.not.have.property('S_m256_n192')
    expect(r1.stdout).to.not.match(/picks m(128_n256|256_n192)/)
    expect(r1.stdout).to.match(/^SPARSE_S24G_MODEL=([\d.e+-]+,){6}[\d.e+-]+$/m)
    // A report without the bench's median or cuSPARSELt: no line for what it lacks.
    writeFileSync(report, JSON.stringify({cases: cases.map((c) => ({...c, ms: undefined}))}))
    const r0 = python([report])
    expect(r0.status, r0.stderr).to.equal(0)
    expect(r0.stdout).to.not.match(/in the bench's times/)
    expect(r0.stdout).to.match(/^x cuBLAS at N>=256/m)
    // With the 256 x 192 tile and not the 128 x 256 one: the line's tenth number 0, its eleventh the tile's.
    const only192 = cases.map((c) => ({...c, tuned: {...c.tuned, candidates: Object.fromEntries(Object.entries(c.tuned.candidates).filter(([v]) => !v.includes('m128_n256_s') || !v.includes('_ss1')))}}))
    writeFileSync(report, JSON.stringify({cases: only192}))
    const r192 = python([report])
    expect(r192.status, r192.stderr).to.equal(0)
    expect(r192.stdout).to.match(/^SPARSE_S24G_MODEL=([\d.e+-]+,){9}0,[\d.e+-]+$/m)
    expect(JSON.parse(/^PARAMS (.*)$/m.exec(r192.stdout)![1])).to.have.property('S_m256_n192')
    // Without _sk3 in the report, its fixed cost is not fitted, not printed, not a candidate.
    const no3 = cases.map((c) => ({...c, tuned: {...c.tuned, candidates: Object.fromEntries(Object.entries(c.tuned.candidates).filter(([v]) => !v.endsWith('_sk3')))}}))
    writeFileSync(report, JSON.stringify({cases: no3}))
    const r2 = python([report])
    expect(r2.status, r2.stderr).to.equal(0)
    expect(JSON.parse(/^PARAMS (.*)$/m.exec(r2.stdout)![1])).to.not.have.property('FX3')
    expect(r2.stdout).to.not.match(/picks m\d+_n\d+_sk3/)
    // Without a tuned s24g case: one line and exit 1.
    writeFileSync(report, JSON.stringify({cases: [{status: 'ok', op: 'spmm', m: 1, k: 1, n: 1, dtype: 'f16', tuned: {candidates: {split_v8_t2_w1: 1}}}]}))
    const none = python([report])
    expect(none.status).to.equal(1)
    expect(none.stderr).to.match(/no tuned 2:4 case with s24g candidates/)
  })
})
