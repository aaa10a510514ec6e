/**
 * The short, seeded version of `npm run fuzz` (scripts/fuzz.ts): every parser gets
 * FUZZ_SHORT_RUNS cases (default 400) of generated bad and good inputs (FIFOs at the input
 * paths and claims beyond 4 GiB among them); the many-tensor and output-race targets get
 * their share of that (2 and 20 cases). Each must end in a
 * clean error (InputError/UsageError) or a correct, re-validated result; no other exception,
 * no case slower than the bound, no allocation larger than the input justifies. A failure
 * prints the shrunk counterexample (and FUZZ_SEED reproduces a run).
 */
import {expect} from 'chai'

import {setStdinForTesting} from '../../src/formats/index.js'
import {allocGuardInstalled, installAllocGuard, uninstallAllocGuard, withAllocBudget, AllocationViolation} from './alloc-guard.js'
import {describeFailure, runsFor, runTarget} from './property.js'
import {TARGETS} from './targets.js'

const RUNS = Number(process.env.FUZZ_SHORT_RUNS ?? 400)
const SEED = Number(process.env.FUZZ_SEED ?? 20261129)

describe('fuzz: every parser on generated bad inputs (short, seeded)', function () {
  this.timeout(120_000)
  before(() => installAllocGuard())
  after(() => {
    uninstallAllocGuard()
    setStdinForTesting(undefined)
  })

  it('the allocation guard refuses an allocation the input does not justify, before making it', async () => {
    expect(allocGuardInstalled()).to.equal(true)
    let thrown: unknown
    try {
      await withAllocBudget(1 << 20, 4 << 20, async () => new Int32Array(1e12 / 4))
    } catch (error) {
      thrown = error
    }
    expect(thrown).to.be.instanceOf(AllocationViolation)
    // Typed arrays still behave: instanceof, from(), views.
    const {value, stats} = await withAllocBudget(1 << 20, 4 << 20, async () => Float32Array.from([1, 2, 3]))
    expect(value).to.be.instanceOf(Float32Array)
    expect(stats.used).to.equal(12)
    expect(new Int32Array(new ArrayBuffer(8))).to.be.instanceOf(Int32Array)
  })

  for (const target of TARGETS) {
    const runs = runsFor(target, RUNS)
    it(`${target.name}: ${runs} cases end in a clean error or a correct result`, async function () {
      this.timeout(Math.max(120_000, 2 * runs * (target.caseTimeMs ?? 0)))
      const r = await runTarget(target, {numRuns: runs, seed: SEED, caseTimeMs: 5000})
      if (r.failed) expect.fail(describeFailure(r))
      expect(r.stats.runs).to.equal(runs)
      // The parsers' generators must reach both sides of the property (the scale and race
      // targets run few cases, and a race's refusals are checked inside its result).
      if (target.share !== undefined) return
      const ok = r.stats.outcomes.ok ?? 0
      expect(ok, JSON.stringify(r.stats.outcomes)).to.be.greaterThan(RUNS / 50)
      expect(RUNS - ok, JSON.stringify(r.stats.outcomes)).to.be.greaterThan(RUNS / 5)
      // FIFOs stand at input paths in every parser's cases, and are refused as such.
      expect(r.stats.outcomes['UsageError:not-a-file'] ?? 0, JSON.stringify(r.stats.outcomes)).to.be.greaterThan(0)
    })
  }
})
