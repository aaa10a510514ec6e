/**
 * The acceptance sweep of issue 3: `verify` on every DLMC problem of the dev subset at the
 * paper's N (the (file, n) pairs of ../shared/anchors/dlmc_dev_h200.jsonl), every op and
 * dtype, on the GPU. Heavy: it runs only when SPARSE_DLMC_SWEEP is set (to 'cuda',
 * 'cpu' or 'auto'), and skips with the reason otherwise. SPARSE_DLMC_SWEEP_OUT names a
 * JSON-lines file to receive every case.
 *
 *   SPARSE_DLMC_SWEEP=cuda node_modules/.bin/mocha --no-config -n import=tsx --timeout 0 test/verify/dlmc-sweep.test.ts
 */
import {expect} from 'chai'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DLMC} from '../helpers/cli.js'
import {verifyInput, type VerifyCase} from '../../src/verify/index.js'

const ANCHORS = join(DLMC, '..', 'anchors', 'dlmc_dev_h200.jsonl')

describe('DLMC sweep: verify on every dev-subset problem at the paper\'s N', function () {
  this.timeout(0)
  const device = process.env.SPARSE_DLMC_SWEEP as 'cuda' | 'cpu' | 'auto' | undefined

  before(function () {
    if (!device) {
      console.log('    skipping the DLMC sweep: set SPARSE_DLMC_SWEEP=cuda (heavy; meant for the GPU machine)')
      this.skip()
    }
    if (!existsSync(ANCHORS)) {
      console.log(`    skipping the DLMC sweep: ${ANCHORS} is missing`)
      this.skip()
    }
  })

  it('passes every problem, op and dtype', async () => {
    const problems = readFileSync(ANCHORS, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {file: string; n: number})
    const all: (VerifyCase & {file: string})[] = []
    const t0 = Date.now()
    for (const p of problems) {
      const r = await verifyInput(join(DLMC, p.file), {n: p.n, device})
      for (const c of r.cases) all.push({...c, file: p.file})
      if (!r.ok) console.log(`    FAILED ${p.file} n=${p.n}: ${r.cases.filter((c) => !c.passed).map((c) => `${c.op}/${c.dtype} rel=${c.relativeError} nonFinite=${c.nonFinite}`).join(', ')}`)
    }
    if (process.env.SPARSE_DLMC_SWEEP_OUT) writeFileSync(process.env.SPARSE_DLMC_SWEEP_OUT, all.map((c) => JSON.stringify(c)).join('\n') + '\n')
    // Summary: cases and worst relative error per op and dtype.
    const groups = new Map<string, {n: number; failed: number; worst: number}>()
    for (const c of all) {
      const key = `${c.op} ${c.dtype} ${c.device}`
      const g = groups.get(key) ?? {n: 0, failed: 0, worst: 0}
      g.n++
      if (!c.passed) g.failed++
      g.worst = Math.max(g.worst, c.relativeError ?? Infinity)
      groups.set(key, g)
    }
    console.log(`    ${problems.length} problems, ${all.length} cases in ${((Date.now() - t0) / 1000).toFixed(0)} s`)
    for (const [key, g] of groups) console.log(`    ${key.padEnd(18)} cases ${g.n}  failed ${g.failed}  worst relative error ${g.worst.toExponential(2)}`)
    expect(all.filter((c) => !c.passed).map((c) => `${c.file} ${c.op} ${c.dtype} n=${c.n}`)).to.deep.equal([])
    expect(all).to.have.length(problems.length * 6)
  })
})
