/**
 * The models the selection weighs unstructured A with at N >= 128 (native/common/gemm_plan.h,
 * through the addon's unstGemmPlan; pure C++, runs everywhere), and the Python mirror of them
 * that scripts/gpu/und-dlmc.py fits measured times with: the two must give the same shapes,
 * cycles and estimates, or the script's fits and held-out checks describe another rule than
 * the one the addon runs. Likewise the 2:4 family's launch model (Gemm24Pick, Gemm24Us, through
 * gemm24Rows with a model) and scripts/gpu/s24g-fit.py.
 */
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

import {loadAddon} from '../../src/kernels/binding.js'

const tempDir = tempDirs('sparse-s24g-plan-')

interface Problem {
  m: number
  k: number
  n: number
  nnz: number
  sms: number
  undSmall?: {fixedUs: number; usPerCycle: number} | 'off'
}

/** ung's own constants (kUnGemmFixedUs, kUnGemmUsPerCycle): v36's model of und below 2^31. */
const UNG_CONSTANTS = {fixedUs: 6.18, usPerCycle: 0.000584}

/** DLMC's and the LLM suite's shapes (and some awkward ones) at the Ns the rules split on, on three GPU sizes. */
function grid(): Problem[] {
  const shapes: [number, number][] = [
    [64, 147],
    [256, 64],
    [512, 512],
    [512, 2048],
    [2048, 512],
    [1000, 2048],
    [4096, 4096],
    [11008, 4096],
    [4096, 11008],
    [6144, 4096],
    [4096, 14336],
    [33, 100],
  ]
  const out: Problem[] = []
  for (const [m, k] of shapes) {
    for (const n of [128, 184, 256, 1000, 1024, 2048, 3136, 25088]) {
      for (const sms of [132, 114, 78]) {
        for (const density of [0.02, 0.1, 0.5]) {
          const p = {m, k, n, nnz: Math.round(m * k * density), sms}
          out.push(p, {...p, undSmall: 'off'}, {...p, undSmall: UNG_CONSTANTS}, {...p, undSmall: {fixedUs: 9, usPerCycle: 0.0005}})
        }
      }
    }
  }
  return out
}

describe('GEMM engine selection models (unstructured A, host)', () => {
  const addon = loadAddon()

  it('scripts/gpu/und-dlmc.py --plan gives the addon\'s shapes, cycles and estimates on every problem of the grid', function () {
    requirePython3(this)
    const problems = grid()
    const r = spawnSync('python3', ['scripts/gpu/und-dlmc.py', '--plan'], {input: problems.map((p) => JSON.stringify(p)).join('\n') + '\n', encoding: 'utf8'})
    expect(r.status, r.stderr).to.equal(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).to.have.length(problems.length)
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b))
    const differ: string[] = []
    let ungShapes = 0
    let undShapes = 0
    const undWins = new Set<string>()
    for (const [i, p] of problems.entries()) {
      const py = JSON.parse(lines[i])
      const cc = addon.unstGemmPlan(p)
      const at = `${p.m}x${p.k} N=${p.n} nnz=${p.nnz} sms=${p.sms}`
      for (const f of ['ung', 'und'] as const) {
        if (py[f].nTile !== cc[f].nTile || py[f].split !== cc[f].split) differ.push(`${at}: ${f} shape ${JSON.stringify(py[f])} against ${JSON.stringify(cc[f])}`)
        else if (!close(py[f].cycles, cc[f].cycles)) differ.push(`${at}: ${f} cycles ${py[f].cycles} against ${cc[f].cycles}`)
      }
      if (!close(py.ungUs, cc.ungUs)) differ.push(`${at}: ung estimate ${py.ungUs} against ${cc.ungUs}`)
      if (!close(py.csrUs, cc.csrUs)) differ.push(`${at}: CSR estimate ${py.csrUs} against ${cc.csrUs}`)
      for (const f of ['unstGemmWins', 'undGemmWins'] as const) {
        if (py[f] !== cc[f]) differ.push(`${at} undSmall=${JSON.stringify(p.undSmall)}: ${f} ${py[f]} against ${cc[f]}`)
      }
      if (JSON.stringify(py.undSmall) !== JSON.stringify(cc.undSmall)) differ.push(`${at} undSmall=${JSON.stringify(p.undSmall)}: constants ${JSON.stringify(py.undSmall)} against ${JSON.stringify(cc.undSmall)}`)
      if (cc.undGemmWins) undWins.add(`${p.m * p.k * p.n >= 2 ** 31 ? 'large' : 'small'} ${p.undSmall === 'off' ? 'off' : 'on'}`)
      ungShapes |= 1 << ((cc.ung.nTile === 256 ? 2 : 0) + (cc.ung.split ? 1 : 0))
      undShapes |= 1 << ((cc.und.nTile === 256 ? 2 : 0) + (cc.und.split ? 1 : 0))
    }
    expect(differ.slice(0, 10), `${differ.length} differences over ${problems.length} problems`).to.deep.equal([])
    // The grid reaches more than one shape of each model (else it would not test the choice).
    expect(popcount(ungShapes), 'ung shapes reached').to.be.at.least(3)
    expect(popcount(undShapes), 'und shapes reached').to.be.at.least(3)
    // und's rule is reached from 2^31 on either way, and below only with its branch on.
    expect([...undWins].sort()).to.deep.equal(['large off', 'large on', 'small on'])
  })

  it('runs A stored dense from the ridge on, from 2^31 multiply-adds, N and K multiples of 8, at least 2.5 % dense', () => {
    // The rule from 2^31 on (the branch below it off here: the next test has it).
    const wins = (m: number, k: number, n: number, density = 0.5) => addon.unstGemmPlan({m, k, n, nnz: Math.round(m * k * density), sms: 132, undSmall: 'off'}).undGemmWins
    expect(wins(4096, 4096, 256)).to.equal(true)
    expect(wins(4096, 4096, 184), 'N = 184: the first multiple of 8 past 177.5').to.equal(true)
    expect(wins(4096, 4096, 176), 'below the ridge').to.equal(false)
    expect(wins(4096, 4096, 260), 'N % 8').to.equal(false)
    expect(wins(4096, 4100, 256), 'K % 8').to.equal(false)
    expect(wins(512, 512, 2048), '2^29 multiply-adds').to.equal(false)
    expect(wins(4096, 4096, 256, 0.02), '2 % dense').to.equal(false)
    // The pair stream's rule: "always" from 2^31 on; below, its estimate against the CSR kernels'.
    const plan = addon.unstGemmPlan({m: 4096, k: 4096, n: 256, nnz: 4096 * 4096 / 2, sms: 132})
    expect(plan.unstGemmWins).to.equal(true)
    const small = addon.unstGemmPlan({m: 512, k: 512, n: 256, nnz: Math.round((512 * 512) / 50), sms: 132})
    expect(small.unstGemmWins, '98 % on 512²: the CSR kernels').to.equal(small.ungUs < small.csrUs)
    expect(small.unstGemmWins).to.equal(false)
    expect(addon.unstGemmPlan({m: 4096, k: 4096, n: 64, nnz: 1000, sms: 132}).unstGemmWins, 'N < 128').to.equal(false)
  })

  it('below 2^31 multiply-adds, runs A stored dense where its estimate beats both others: the fitted constants unless undSmall says otherwise', () => {
    const plan = (m: number, k: number, n: number, nnz: number, undSmall?: Problem['undSmall']) => addon.unstGemmPlan({m, k, n, nnz, sms: 132, ...(undSmall ? {undSmall} : {})})
    // 1024² at N = 1024, 50 %: 2^30 multiply-adds. Off: ung's estimate decides.
    const off = plan(1024, 1024, 1024, 524288, 'off')
    expect(off.undGemmWins).to.equal(false)
    expect(off.unstGemmWins).to.equal(true)
    expect(off.undSmall).to.equal(null)
    // The library's default: the constants fitted in v38 (kUndSmallFitted), which put it on und.
    const fitted = plan(1024, 1024, 1024, 524288)
    expect(fitted.undSmall).to.deep.equal({fixedUs: 5.669, usPerCycle: 0.0006903})
    expect(fitted.undGemmWins).to.equal(true)
    expect(plan(1024, 1024, 1024, 524288, {fixedUs: 5.669, usPerCycle: 0.0006903})).to.deep.equal(fitted)
    // On with ung's constants: und's fewer modelled cycles (no decode) win.
    const on = plan(1024, 1024, 1024, 524288, UNG_CONSTANTS)
    expect(on.und.cycles).to.be.below(on.ung.cycles)
    expect(on.undGemmWins).to.equal(true)
    expect(on.undSmall).to.deep.equal(UNG_CONSTANTS)
    // A fixed cost above ung's whole estimate: ung's.
    expect(plan(1024, 1024, 1024, 524288, {fixedUs: on.ungUs, usPerCycle: 1e-9}).undGemmWins).to.equal(false)
    // Below the ridge, or K % 8: never, whatever the constants.
    expect(plan(1024, 1024, 176, 524288, UNG_CONSTANTS).undGemmWins).to.equal(false)
    expect(plan(1024, 1020, 1024, 522240, UNG_CONSTANTS).undGemmWins).to.equal(false)
    // Very sparse and small (512² at 99 %, N = 256): the CSR kernels' estimate is lower than und's.
    for (const small of [UNG_CONSTANTS, undefined]) {
      const sparse = plan(512, 512, 256, 2621, small)
      expect(sparse.csrUs).to.be.below(sparse.undSmall!.fixedUs + sparse.undSmall!.usPerCycle * sparse.und.cycles)
      expect(sparse.undGemmWins).to.equal(false)
    }
  })

  it('refuses bad arguments with a RangeError', () => {
    expect(() => addon.unstGemmPlan({m: 2, k: 2, n: 1, nnz: 1, sms: 132, undSmall: {fixedUs: -1, usPerCycle: 1}})).to.throw(RangeError, /undSmall/)
    expect(() => addon.unstGemmPlan({m: 2, k: 2, n: 1, nnz: 1, sms: 132, undSmall: {fixedUs: 1, usPerCycle: 0}})).to.throw(RangeError, /undSmall/)
    expect(() => addon.unstGemmPlan({m: 2, k: 2, n: 1, nnz: 1, sms: 132, undSmall: 3 as never})).to.throw(TypeError, /undSmall must be 'off' or an object/)
    expect(() => addon.unstGemmPlan({m: 2, k: 2, n: 1, nnz: 1, sms: 132, undSmall: 'on' as never})).to.throw(TypeError, /undSmall must be 'off' or an object/)
    expect(() => addon.unstGemmPlan({m: 0, k: 1, n: 1, nnz: 0, sms: 132})).to.throw(RangeError, /at least 1/)
    expect(() => addon.unstGemmPlan({m: 2, k: 2, n: 1, nnz: 5, sms: 132})).to.throw(RangeError, /nnz must be from 0 to m k/)
    expect(() => addon.unstGemmPlan({m: 2, k: 2.5, n: 1, nnz: 1, sms: 132})).to.throw(RangeError, /integer/)
  })
})

/** s24g-fit.py's constants (v12's records fitted, rounded), with and without the cooperative split. */
const S24G_MODEL = {S_m128_n128: 600, S_m256_n128: 1100, F: 60, T0: 1.1, FX0: 7.2, L2: 5300}
const S24G_COOP = {...S24G_MODEL, FX3: 3}
/** The library's constants with the 64-column tiles as candidates (v53; stage cycles of the order the shared-memory bytes give). */
const S24G_NARROW = {...S24G_MODEL, FX3: 7.2, S_m128_n64: 380, S_m256_n64: 700}
/** With the 128 x 256 `_ss1` tile (v55) a candidate too: a stage a little cheaper than 256 x 128's for the same multiply-adds. */
const S24G_WIDE = {...S24G_NARROW, S_m128_n256: 1000}
/** With the 256 x 192 `_ss1` tile (v56) a candidate: 1.5x 256 x 128's work a stage for 1.2x its cycles; alone, and beside 128 x 256. */
const S24G_W192 = {...S24G_NARROW, S_m256_n192: 1300}
const S24G_BOTH = {...S24G_WIDE, S_m256_n192: 1300}

describe('GEMM engine selection models (2:4, host)', () => {
  const addon = loadAddon()

  it('scripts/gpu/s24g-fit.py --model gives the addon\'s Gemm24Pick and Gemm24Us on every problem of the grid', function () {
    requirePython3(this)
    const dir = tempDir()
    const problems: {m: number; k: number; n: number; sms: number}[] = []
    for (const [m, k] of [[4096, 4096], [11008, 4096], [4096, 11008], [14336, 4096], [4096, 14336], [6144, 4096], [2048, 512], [300, 1000], [129, 264]])
      for (const n of [128, 136, 256, 512, 1024, 2048])
        for (const sms of [132, 114, 78]) problems.push({m, k, n, sms})
    const kinds = new Set<string>()
    const differ: string[] = []
    for (const model of [S24G_MODEL, S24G_COOP, S24G_NARROW, S24G_WIDE, S24G_W192, S24G_BOTH]) {
      const params = join(dir, 'params.json')
      writeFileSync(params, JSON.stringify(model))
      const r = spawnSync('python3', ['scripts/gpu/s24g-fit.py', '--model', params], {input: problems.map((p) => JSON.stringify(p)).join('\n') + '\n', encoding: 'utf8'})
      expect(r.status, r.stderr).to.equal(0)
      const lines = r.stdout.trim().split('\n')
      expect(lines).to.have.length(problems.length)
      for (const [i, p] of problems.entries()) {
        const py = JSON.parse(lines[i]) as {estimates: Record<string, number>; pick: {rows: number; cols: number; mode: number}}
        const cc = addon.gemm24Rows({...p, model})
        const at = `${p.m}x${p.k} N=${p.n} sms=${p.sms}${'FX3' in model ? ' coop' : ''}${'S_m128_n64' in model ? ' narrow' : ''}${'S_m128_n256' in model ? ' wide' : ''}${'S_m256_n192' in model ? ' w192' : ''}`
        if (py.pick.rows !== cc.rows || py.pick.cols !== cc.cols || py.pick.mode !== cc.streamK)
          differ.push(`${at}: pick ${JSON.stringify(py.pick)} against rows ${cc.rows} cols ${cc.cols} streamK ${cc.streamK}`)
        expect(Object.keys(cc.estimates!).sort(), at).to.deep.equal(Object.keys(py.estimates).sort())
        for (const [shape, us] of Object.entries(py.estimates)) {
          if (Math.abs(us - cc.estimates![shape]) > 1e-9 * Math.max(1, us)) differ.push(`${at}: ${shape} ${us} against ${cc.estimates![shape]}`)
        }
        kinds.add(`${cc.rows}x${cc.cols}_${cc.streamK}`)
      }
    }
    expect(differ.slice(0, 10), `${differ.length} differences`).to.deep.equal([])
    // The grid reaches whole tiles and splits of both heights, the cooperative split, 64-column
    // tiles of both heights, and the 128 x 256 and 256 x 192 tiles whole and split.
    for (const k of ['128x128_0', '256x128_0', '128x128_2', '128x128_3', '128x64_0', '256x64_0', '128x256_0', '128x256_2', '256x192_0', '256x192_2'])
      expect([...kinds], k).to.include(k)
  })

  it('with the model off keeps Gemm24Rows and the owner\'s split; on, whole 128-row tiles where a split costs more', () => {
    const off = addon.gemm24Rows({m: 6144, k: 4096, n: 256, sms: 132, model: 'off'})
    expect(off).to.deep.include({rows: 256, split: 2, streamK: 2, model: null})
    expect(off).to.not.have.property('estimates')
    // The library's default: the model with the constants fitted in v62 (kGemm24Fitted), the
    // cooperative split, the 64-column tiles and both `_ss1` tiles candidates.
    const fitted = addon.gemm24Rows({m: 6144, k: 4096, n: 256, sms: 132})
    expect(fitted.model).to.deep.equal({S_m128_n128: 545, S_m256_n128: 980, F: 26.2, T0: 4.73, FX0: 1.78, L2: 5716, FX3: 4.07, S_m128_n64: 415, S_m256_n64: 622,
      S_m128_n256: 880, S_m256_n192: 1234})
    expect(fitted).to.deep.include({rows: 128, cols: 128, split: 1, streamK: 0})
    expect(addon.gemm24Rows({m: 6144, k: 4096, n: 256, sms: 132, model: fitted.model!})).to.deep.equal(fitted)
    // v53 (H100, --tune): 4096^2 at N = 256 in 128-row tiles, two pieces, the owner adding (20.5 us
    // against 20.9 reduced together and 21.9 for whole 128 x 64 tiles; v62's constants take the
    // whole 128 x 64 tiles there, the next test); at N = 128 in 128 x 64 tiles, two pieces (18.6 us
    // against 20.0 for v38's pick).
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 256, sms: 132, model: S24G_MODEL})).to.deep.include({rows: 128, cols: 128, split: 2, streamK: 2})
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 128, sms: 132})).to.deep.include({rows: 128, cols: 64, split: 2, streamK: 2})
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 256, sms: 132, model: 'off'})).to.deep.include({rows: 256, split: 4, streamK: 2})
    // 6144 x 4096 at N = 256: 96 tiles of 128 rows fill most of a wave, whole (v12: 23.9 us
    // against 26.3 for the 256-row split in two).
    const picked = addon.gemm24Rows({m: 6144, k: 4096, n: 256, sms: 132, model: S24G_MODEL})
    expect(picked).to.deep.include({rows: 128, split: 1, streamK: 0})
    expect(picked.estimates!.m128_n128).to.be.below(picked.estimates!.m256_n128_sk2)
    // Large problems: 256-row tiles (fewer shared-memory bytes a multiply-add).
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 2048, sms: 132, model: S24G_MODEL})).to.deep.include({rows: 256, streamK: 0})
  })

  it('with the library\'s constants (v62) runs whole 256 x 192 tiles where their waves fill and 128 x 256 ones where they do not', () => {
    const lib = (m: number, k: number, n: number) => addon.gemm24Rows({m, k, n, sms: 132})
    const pick = (m: number, k: number, n: number) => {
      const r = lib(m, k, n)
      return `${r.rows}x${r.cols}${r.streamK ? `_sk${r.streamK}` : ''}`
    }
    // v57 (H100, --tune): 6144 x 4096 at N = 2048 in 0.90x the time of the 256 x 128 tile (96 tiles
    // of 256 x 192 in one wave against 264 of 256 x 128 in two), 11008 x 4096 at N = 1024 0.90x.
    for (const [m, k, n] of [[6144, 4096, 2048], [11008, 4096, 1024], [11008, 4096, 2048], [14336, 4096, 2048]])
      expect(pick(m, k, n), `${m} x ${k}, N = ${n}`).to.equal('256x192')
    // v62 (H200, --tune, after v61's unrolled loop and `_ss` runs made the 128 x 256 stage 880
    // cycles): where 256 x 192's waves do not fill, whole 128 x 256 tiles, not 256 x 128 ones:
    // 4096^2 at N = 1024 35.2 us against 37.7, 4096 x 11008 83.6 against 91.5, 11008 x 4096 at
    // N = 256 34.3 against 37.6, 14336 x 4096 at N = 256 35.1 against 38.7.
    for (const [m, k, n] of [[4096, 4096, 1024], [4096, 4096, 2048], [4096, 11008, 1024], [4096, 14336, 1024], [11008, 4096, 256], [14336, 4096, 256]])
      expect(pick(m, k, n), `${m} x ${k}, N = ${n}`).to.equal('128x256')
    // Ragged waves of 128 x 256 tiles split, the owner adding (14336 x 4096 at N = 1024: 123.8 us
    // against 130.0 for 256 x 128 reduced together).
    expect(pick(14336, 4096, 1024)).to.equal('128x256_sk2')
    // N = 128 and 256 on the narrow problems: 64-column tiles on 4096^2 (N = 128 split as in v53;
    // N = 256 whole: 19.9 us against 19.3 for v53's split 128 x 128 tiles, the one pick of the six
    // shapes at N = 256 over 1.03x the fastest), split 128 x 128 tiles where K is long.
    expect(pick(4096, 4096, 128)).to.equal('128x64_sk2')
    expect(pick(4096, 4096, 256)).to.equal('128x64')
    expect(pick(4096, 11008, 256)).to.equal('128x128_sk2')
    // The old constants, as SPARSE_S24G_MODEL gives them: 256 x 128 at 6144 x 4096, N = 2048, and
    // v57's at 4096^2, N = 1024.
    const v53 = {S_m128_n128: 551, S_m256_n128: 895, F: 25, T0: 7.17, FX0: 2.49, L2: 8230, FX3: 5.12, S_m128_n64: 455, S_m256_n64: 645}
    expect(addon.gemm24Rows({m: 6144, k: 4096, n: 2048, sms: 132, model: v53})).to.deep.include({rows: 256, cols: 128})
    const v57 = {S_m128_n128: 565, S_m256_n128: 956, F: 19.3, T0: 5.79, FX0: 1.43, L2: 5489, FX3: 4.09, S_m128_n64: 468, S_m256_n64: 685, S_m128_n256: 1000, S_m256_n192: 1247}
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 1024, sms: 132, model: v57})).to.deep.include({rows: 256, cols: 128, streamK: 0})
  })

  it('weighs 64-column tiles only where the model has both of their stage cycles', () => {
    // 4096^2 at N = 256: 128 tiles of 128 x 64 fill a wave whole, where 128-column tiles need a split.
    const narrow = addon.gemm24Rows({m: 4096, k: 4096, n: 256, sms: 132, model: S24G_NARROW})
    expect(narrow).to.deep.include({rows: 128, cols: 64, split: 1, streamK: 0})
    expect(narrow.model).to.deep.equal(S24G_NARROW)
    expect(narrow.estimates!.m128_n64).to.be.below(narrow.estimates!.m128_n128_sk3)
    // Large problems keep the wide tiles (fewer shared-memory bytes a multiply-add).
    expect(addon.gemm24Rows({m: 4096, k: 4096, n: 2048, sms: 132, model: S24G_NARROW})).to.deep.include({rows: 256, cols: 128})
    // Without the 64-column stage cycles, no 64-column estimate.
    const wide = addon.gemm24Rows({m: 4096, k: 4096, n: 256, sms: 132, model: S24G_COOP})
    expect(Object.keys(wide.estimates!).filter((s) => s.includes('_n64'))).to.deep.equal([])
    expect(wide.model).to.not.have.property('S_m128_n64')
  })

  it('weighs the 128 x 256 tile (`_ss1`) only where the model has its stage cycles, whole or with the owner adding', () => {
    const wide = addon.gemm24Rows({m: 4096, k: 4096, n: 2048, sms: 132, model: S24G_WIDE})
    expect(wide.model).to.deep.equal(S24G_WIDE)
    expect(Object.keys(wide.estimates!).filter((s) => s.includes('_n256')).sort()).to.deep.equal(['m128_n256'])
    // 4096^2 at N = 2048: 256 tiles either way; the cheaper stage wins.
    expect(wide).to.deep.include({rows: 128, cols: 256, split: 1, streamK: 0})
    expect(wide.estimates!.m128_n256).to.be.below(wide.estimates!.m256_n128)
    // Where the ragged wave splits, the owner's split only (the `_ss1` tile has no cooperative one).
    const ragged = addon.gemm24Rows({m: 6144, k: 4096, n: 1024, sms: 132, model: S24G_WIDE})
    expect(Object.keys(ragged.estimates!).filter((s) => s.includes('_n256')).sort()).to.deep.equal(['m128_n256', 'm128_n256_sk2'])
    expect(Object.keys(addon.gemm24Rows({m: 4096, k: 4096, n: 2048, sms: 132, model: S24G_NARROW}).estimates!).filter((s) => s.includes('_n256'))).to.deep.equal([])
  })

  it('weighs the 256 x 192 tile (`_ss1`) only where the model has its stage cycles, whole or with the owner adding, its last column of tiles ragged', () => {
    // 11008 x 4096 at N = 2048: 43 x 11 = 473 tiles of 256 x 192 (the last column 128 wide, a
    // whole tile's work), 3.6 waves, against 43 x 16 = 688 of 256 x 128 (5.2 waves).
    const big = addon.gemm24Rows({m: 11008, k: 4096, n: 2048, sms: 132, model: S24G_W192})
    expect(big.model).to.deep.equal(S24G_W192)
    expect(big).to.deep.include({rows: 256, cols: 192, streamK: 0})
    expect(Object.keys(big.estimates!).filter((s) => s.includes('_n192')).sort()).to.deep.equal(['m256_n192'])
    expect(big.estimates!.m256_n192).to.be.below(big.estimates!.m256_n128)
    expect(Object.keys(big.estimates!).filter((s) => s.includes('_n256'))).to.deep.equal([])
    // 4096^2 at N = 256: 16 x 2 tiles, half of the second column empty, for 132 SMs: the ragged
    // wave's split and narrower tiles win; the 192-column estimate is there and higher.
    const small = addon.gemm24Rows({m: 4096, k: 4096, n: 256, sms: 132, model: S24G_BOTH})
    expect(small.cols).to.not.equal(192)
    expect(Object.keys(small.estimates!).filter((s) => s.includes('_n192')).sort()).to.deep.equal(['m256_n192', 'm256_n192_sk2'])
    expect(small.estimates!.m256_n192_sk2).to.be.above(small.estimates![`m${small.rows}_n${small.cols}${small.streamK ? `_sk${small.streamK}` : ''}`])
    expect(small.model).to.deep.equal(S24G_BOTH)
    // Without its stage cycles, no 192-column estimate.
    expect(Object.keys(addon.gemm24Rows({m: 11008, k: 4096, n: 2048, sms: 132, model: S24G_WIDE}).estimates!).filter((s) => s.includes('_n192'))).to.deep.equal([])
  })

  it('refuses a bad model', () => {
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 132, model: 3 as never})).to.throw(TypeError, /model must be 'off' or an object/)
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 132, model: 'on' as never})).to.throw(TypeError, /model must be 'off' or an object/)
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 132, model: {...S24G_MODEL, F: 'x' as never}})).to.throw(TypeError, /model.F must be a finite number/)
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 132, model: {...S24G_MODEL, L2: 0}})).to.throw(RangeError, /model: stage cycles/)
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 132, model: {...S24G_MODEL, S_m128_n64: 380}})).to.throw(RangeError, /both S_m128_n64 and S_m256_n64/)
  })
})

function popcount(x: number): number {
  let c = 0
  for (let v = x; v; v &= v - 1) c++
  return c
}
