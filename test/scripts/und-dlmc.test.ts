/**
 * scripts/gpu/und-dlmc.py on a `sparse bench --tune` report made from its own model: every DLMC
 * problem und may run has its modelled shape's und variant timed at FIXED + PER_CYCLE x its
 * modelled cycles (the cycles from the script's --plan, which test/kernels/gemm-plan.test.ts
 * ties to the C++). The fit must recover the constants, print them as the SPARSE_UND_SMALL line
 * the library reads, and check the rule held out by model family. What the fit says about the
 * GPU needs a real --tune run (docs/gemm-engine.md "v37", call 1).
 */
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

const tempDir = tempDirs('sparse-und-dlmc-')

const SCRIPT = 'scripts/gpu/und-dlmc.py'
const FIXED = 4.5
const PER_CYCLE = 0.00065

describe('scripts/gpu/und-dlmc.py', () => {
  it('recovers und\'s constants from a --tune report of its own model and prints the SPARSE_UND_SMALL line', function () {
    requirePython3(this)
    this.timeout(120_000)
    const dir = tempDir()
    // DLMC-like problems of both model families, und's shapes (N >= 184, N and K multiples of
    // 8) and a few it may not run (N = 56, K = 147).
    const problems: {file: string; m: number; k: number; n: number; nnz: number}[] = []
    for (const [family, shapes, ns] of [
      ['rn50', [[256, 64], [64, 256], [512, 2048], [1024, 256], [64, 147]], [56, 200, 784, 3136]],
      ['transformer', [[512, 512], [2048, 512], [512, 2048]], [256, 2048]],
    ] as const) {
      for (const [m, k] of shapes)
        for (const n of ns)
          for (const density of [0.1, 0.3]) problems.push({file: `${family}/magnitude_pruning/${1 - density}/w${m}x${k}.smtx`, m, k, n, nnz: Math.round(m * k * density)})
    }
    const plan = spawnSync('python3', [SCRIPT, '--plan'], {input: problems.map((p) => JSON.stringify({...p, sms: 132})).join('\n') + '\n', encoding: 'utf8'})
    expect(plan.status, plan.stderr).to.equal(0)
    const plans = plan.stdout.trim().split('\n').map((l) => JSON.parse(l) as {und: {nTile: number; split: boolean; cycles: number}; ungUs: number})
    let timed = 0
    const cases = problems.map((p, i) => {
      const und = plans[i].und
      const selMs = (plans[i].ungUs * 1.05) / 1000
      const candidates: Record<string, number> = {ung_n128_sk3: selMs}
      if (p.n >= 184 && p.n % 8 === 0 && p.k % 8 === 0) {
        candidates[`und_n${und.nTile}${und.split ? '_sk3' : ''}`] = (FIXED + PER_CYCLE * und.cycles) / 1000
        timed++
      }
      return {
        status: 'ok', op: 'spmm', dtype: 'f16', ...p, sparsity: 1 - p.nnz / (p.m * p.k),
        baselines: {sputnik: selMs * 1.5}, speedup: {sputnik: 1.5},
        impls: {ours: {detail: 'CudaSpmm spmm_f16_i16_ung_n128_sk3, 16-bit indices'}},
        tuned: {candidates, defaultVariant: 'ung_n128_sk3', defaultMs: selMs, variant: 'ung_n128_sk3', ms: selMs},
      }
    })
    const report = join(dir, 'dlmc.json')
    writeFileSync(report, JSON.stringify({cases: [...cases, {status: 'failed', op: 'spmm'}]}))
    const r = spawnSync('python3', [SCRIPT, report], {encoding: 'utf8'})
    expect(r.status, r.stderr).to.equal(0)
    expect(r.stdout).to.match(new RegExp(`^${problems.length} problems, ${timed} with und \\(its modelled shape\\) timed`, 'm'))
    const fit = /^und = ([\d.]+) us \+ ([\d.e-]+) us a modelled cycle \(relative rms ([\d.]+)/m.exec(r.stdout)!
    expect(Number(fit[1])).to.be.closeTo(FIXED, 0.01)
    expect(Number(fit[2])).to.be.closeTo(PER_CYCLE, PER_CYCLE * 0.01)
    expect(Number(fit[3])).to.be.below(0.001)
    const line = /^SPARSE_UND_SMALL=([^,\s]+),(\S+)$/m.exec(r.stdout)!
    expect(Number(line[1])).to.be.closeTo(FIXED, 0.01)
    expect(Number(line[2])).to.be.closeTo(PER_CYCLE, PER_CYCLE * 0.01)
    // Held out by family, both ways.
    expect(r.stdout).to.match(/fitted without rn50 .*: on rn50 the rule picks/)
    expect(r.stdout).to.match(/fitted without transformer .*: on transformer the rule picks/)
  })
})
