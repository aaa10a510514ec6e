import {expect} from 'chai'
import {existsSync, readFileSync} from 'node:fs'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {cudaInfo} from '../../src/kernels/index.js'
import {ROOT, runCli} from '../helpers/cli.js'

// Two of the smallest DLMC matrices (64 x 147, 188 nonzeros; 256 x 64), bundled (fixtures/README.md).
const MINI = join(ROOT, 'fixtures', 'dlmc-mini', 'rn50', 'magnitude_pruning', '0.98')
const SMALL = join(MINI, 'initial_conv.smtx')
const SMALL2 = join(MINI, 'bottleneck_3_block_group1_1_1.smtx')

describe('sparse verify', function () {
  this.timeout(120_000)
  let dir: string

  before(async function () {
    expect(existsSync(SMALL), SMALL).to.equal(true)
    dir = await mkdtemp(join(tmpdir(), 'sparse-verify-cmd-'))
  })

  after(async () => {
    if (dir) await rm(dir, {recursive: true, force: true})
  })

  it('passes every op and dtype on a DLMC matrix on the CPU: table on stdout, exit 0', async () => {
    const r = await runCli(['verify', SMALL, '--device', 'cpu', '--n', '33'])
    expect(r.stderr).to.equal('')
    expect(r.code).to.equal(0)
    // A box table (as prune and bench draw): the cells of each row between its bars.
    const lines = r.stdout.trim().split('\n')
    const cells = (l: string) => l.split('│').slice(1, -1).map((c) => c.trim())
    // The tolerance bounds the relative error, and stands beside it.
    expect(cells(lines[1])).to.deep.equal(['op', 'dtype', 'device', 'kernel', 'M x K', 'nnz', 'N', 'rel. error', 'rel. tolerance', 'max abs error', 'ms', 'result'])
    const rows = lines.map(cells).filter((c) => c[0] === 'spmm' || c[0] === 'sddmm')
    expect(rows).to.have.length(6)
    expect(rows.filter((c) => c.at(-1) === 'pass')).to.have.length(6)
    expect(rows[0].slice(0, 7)).to.deep.equal(['spmm', 'f32', 'cpu', 'CpuSpmm', '64 x 147', '188', '33'])
    expect(rows[1].slice(0, 4)).to.deep.equal(['sddmm', 'f32', 'cpu', 'CpuSddmm'])
    expect(lines.at(-1)).to.match(/6 of 6 cases passed \(all passed\) on cpu \(CPU \(\d+ threads\)\), N=33, seed 0$/)
  })

  it('--json gives {device, cases[]} with the documented fields', async () => {
    const r = await runCli(['verify', SMALL2, '--device', 'cpu', '--op', 'sddmm', '--dtype', 'f16', '--n', '8', '--seed', '4', '--json'])
    expect(r.code).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j).to.include({device: 'cpu', ok: true, passed: 1, failed: 0, n: 8, seed: 4})
    expect(j.cases).to.have.length(1)
    const c = j.cases[0]
    expect(Object.keys(c)).to.include.members(['op', 'dtype', 'device', 'kernel', 'n', 'relativeError', 'maxAbsError', 'tolerance', 'passed'])
    expect(c).to.include({op: 'sddmm', dtype: 'f16', device: 'cpu', kernel: 'CpuSddmm', n: 8, m: 256, k: 64, nnz: 327, tolerance: 0.01, passed: true})
    expect(c).to.not.have.any.keys('variant', 'variantSource', 'forcedVariant', 'variantNote')
    expect(c.relativeError).to.be.a('number').and.below(0.01)
    expect(j.warnings).to.deep.equal([])
  })

  it('a forced variant on the CPU: every case says it is ignored, and so does one warning on stderr (exit 0)', async () => {
    const env = {SPARSE_SPMM_VARIANT: 's24e_w8_k256', SPARSE_SDDMM_VARIANT: undefined}
    const r = await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--dtype', 'f16', '--n', '8'], {env})
    expect(r.code).to.equal(0)
    expect(r.stderr).to.equal('warning: SPARSE_SPMM_VARIANT=s24e_w8_k256 is ignored on the CPU: its SpMM kernel has no variants\n')
    expect(r.stdout).to.match(/│ spmm +│ f16 +│ cpu +│ CpuSpmm +│/)
    expect(r.stdout).to.not.include('SpMM variant:') // no CUDA SpMM case to count
    const j = await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--dtype', 'f16', '--n', '8', '--json'], {env})
    expect(j.stderr).to.equal('')
    const out = JSON.parse(j.stdout)
    expect(out.cases[0]).to.include({kernel: 'CpuSpmm', forcedVariant: 's24e_w8_k256'})
    expect(out.cases[0]).to.not.have.any.keys('variant', 'variantSource')
    expect(out.cases[0].variantNote).to.match(/ignored on the CPU/)
    expect(out.warnings).to.have.length(1)
  })

  it('takes --keep-sparse (SpMM on CUDA; the CPU cases pass as without it)', async () => {
    const r = await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--dtype', 'f16', '--n', '8', '--keep-sparse', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout).cases.every((c: {passed: boolean}) => c.passed)).to.equal(true)
  })

  it('defaults to N = 256 and --device auto (the CPU here without a GPU), saying which it used', async function () {
    const r = await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f32', '--json'])
    expect(r.code).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j.n).to.equal(256)
    expect(j.device).to.equal(cudaInfo().available ? 'cuda' : 'cpu')
    expect(j.deviceName).to.be.a('string').and.not.equal('')
  })

  it('a failing case exits 1 with a one-line summary on stderr (and the full table)', async () => {
    const r = await runCli(['verify', SMALL, '--device', 'cpu', '--n', '8', '--dtype', 'bf16'], {env: {SPARSE_VERIFY_FAULT: 'unwritten'}})
    expect(r.code).to.equal(1)
    expect(r.stdout).to.include('FAIL (1 NaN/inf)')
    const err = r.stderr.trim().split('\n')
    expect(err).to.have.length(1)
    expect(err[0]).to.match(/^error: 2 of 2 verify cases failed: initial_conv spmm bf16 on cpu: 1 outputs NaN\/inf/)
    const j = await runCli(['verify', SMALL, '--device', 'cpu', '--n', '8', '--dtype', 'f32', '--json'], {env: {SPARSE_VERIFY_FAULT: 'perturb'}})
    expect(j.code).to.equal(1)
    expect(JSON.parse(j.stdout)).to.include({ok: false, failed: 2})
  })

  it('--device cuda without a GPU exits 3 with a one-line reason', async function () {
    if (cudaInfo().available) this.skip()
    const r = await runCli(['verify', SMALL, '--device', 'cuda'])
    expect(r.code).to.equal(3)
    expect(r.stdout).to.equal('')
    const err = r.stderr.trim().split('\n')
    expect(err).to.have.length(1)
    expect(err[0]).to.match(/^error: --device cuda needs a CUDA GPU, but none is usable: /)
  })

  it('a corrupt CSR file is an input error (exit 1) before any launch, also with --device cuda', async () => {
    const bad = join(dir, 'bad.smtx')
    await writeFile(bad, '2, 3, 2\n0 1 2\n0 7\n') // column 7 of 3
    const r = await runCli(['verify', bad, '--device', 'cuda'])
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/^error: .*7/)
    const missing = await runCli(['verify', join(dir, 'nope.smtx'), '--device', 'cpu'])
    expect(missing.code).to.not.equal(0)
    expect(missing.stderr.trim().split('\n')).to.have.length(1)
  })

  it('bad flags are usage errors (exit 2)', async () => {
    for (const args of [['--n', '0'], ['--dtype', 'f64'], ['--op', 'gemm'], ['--device', 'tpu']]) {
      const r = await runCli(['verify', SMALL, ...args])
      expect(r.code, args.join(' ')).to.equal(2)
    }
  })

  it('a problem too large for host memory is refused before any allocation (exit 2)', async () => {
    // 100000 x 100000 with 3 nonzeros: fine as CSR, but N = 2^20 asks for 10^11-element outputs.
    const big = join(dir, 'big.smtx')
    await writeFile(big, `100000, 100000, 3\n0 1 2 3${' 3'.repeat(99997)}\n5 70 99999\n`)
    const r = await runCli(['verify', big, '--device', 'cpu', '--dtype', 'f32', '--op', 'spmm', '--n', '1048576'])
    expect(r.code).to.equal(2)
    const err = r.stderr.trim().split('\n')
    expect(err).to.have.length(1)
    expect(err[0]).to.match(/^error: .*100000x100000 at N = 1048576 needs about \d+\.\d GB of host memory.*choose a smaller --n/)
  })

  // The CUDA reports, end to end without a GPU: the addon is a stand-in (test/helpers/
  // fake-cuda-addon.cjs) that claims one, answers spmmVariants with the plan given here, refuses
  // a variant it cannot run as the real plan does, and runs every kernel on the CPU.
  describe('on a (stand-in) GPU: which SpMM variant ran each case', () => {
    const FAKE = join(ROOT, 'test', 'helpers', 'fake-cuda-addon.cjs')
    // f16: a 2:4 plan where the streaming variant runs; f32 and bf16: it is not there.
    const PLAN = {f16: {selected: 's24_w4_m1_s8', variants: ['s24_w4_m1_s8', 's24e_w8_k256']}, '*': {selected: 'split_v4_t8_w1', variants: ['split_v4_t8_w1', 'tile_v4_t8_x1'], alsoRuns: ['split_v1_t8_w1']}}
    const fake = (vars: Record<string, string | undefined>) => ({SPARSE_ADDON: FAKE, SPARSE_FAKE_SPMM_VARIANTS: JSON.stringify(PLAN), SPARSE_SPMM_VARIANT: undefined, SPARSE_SDDMM_VARIANT: undefined, ...vars})
    const spmmRows = (stdout: string) =>
      stdout
        .split('\n')
        .map((l) => l.split('│').slice(1, -1).map((c) => c.trim()))
        .filter((c) => c[0] === 'spmm')

    it("nothing forced: each case names the selection's variant", async () => {
      const r = await runCli(['verify', SMALL, '--op', 'spmm', '--n', '8'], {env: fake({})})
      expect(r.code).to.equal(0)
      expect(r.stderr).to.equal('')
      expect(spmmRows(r.stdout).map((c) => [c[1], c[2], c[3]])).to.deep.equal([
        ['f32', 'cuda', 'split_v4_t8_w1 (selection)'],
        ['f16', 'cuda', 's24_w4_m1_s8 (selection)'],
        ['bf16', 'cuda', 'split_v4_t8_w1 (selection)'],
      ])
      expect(r.stdout).to.not.include('SpMM variant:')
      const j = JSON.parse((await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f16', '--n', '8', '--json'], {env: fake({})})).stdout)
      expect(j.device).to.equal('cuda')
      expect(j.cases[0]).to.include({kernel: 'CudaSpmm', variant: 's24_w4_m1_s8', variantSource: 'heuristic'})
      expect(j.cases[0]).to.not.have.any.keys('forcedVariant', 'variantNote')
    })

    it('forced where it runs: "(forced)", counted in the report; where it cannot: the selection, said in the row, the count and a warning', async () => {
      const r = await runCli(['verify', SMALL, '--op', 'spmm', '--n', '8'], {env: fake({SPARSE_SPMM_VARIANT: 's24e_w8_k256'})})
      expect(r.code).to.equal(0) // the outputs are right: a warning, not a failure
      expect(spmmRows(r.stdout).map((c) => [c[1], c[3], c.at(-1)])).to.deep.equal([
        ['f32', 'split_v4_t8_w1 (selection, not forced)', 'pass'],
        ['f16', 's24e_w8_k256 (forced)', 'pass'],
        ['bf16', 'split_v4_t8_w1 (selection, not forced)', 'pass'],
      ])
      expect(r.stdout).to.include(
        "SpMM variant: s24e_w8_k256 forced by SPARSE_SPMM_VARIANT (1 of 3 cases; the other 2 cannot run it and ran the built-in selection's variant)\n",
      )
      expect(r.stderr).to.equal(
        "warning: SPARSE_SPMM_VARIANT=s24e_w8_k256 did not run 2 of 3 CUDA SpMM cases (it cannot run them): the built-in selection's variant ran there instead; each case's variant says which\n",
      )
      const j = JSON.parse((await runCli(['verify', SMALL, '--op', 'spmm', '--n', '8', '--json'], {env: fake({SPARSE_SPMM_VARIANT: 's24e_w8_k256'})})).stdout)
      expect(j.ok).to.equal(true)
      expect(j.cases[1]).to.include({dtype: 'f16', kernel: 'CudaSpmm', variant: 's24e_w8_k256', variantSource: 'forced', forcedVariant: 's24e_w8_k256'})
      expect(j.cases[1]).to.not.have.property('variantNote')
      expect(j.cases[0]).to.include({dtype: 'f32', variant: 'split_v4_t8_w1', variantSource: 'heuristic', forcedVariant: 's24e_w8_k256'})
      expect(j.cases[0].variantNote).to.equal("SPARSE_SPMM_VARIANT=s24e_w8_k256 cannot run this case: the built-in selection's split_v4_t8_w1 ran instead")
      expect(j.warnings).to.have.length(1)
    })

    it('forced and asked for by name: a name outside the list that the kernel runs counts as forced; the output is still checked', async () => {
      const log = join(dir, 'calls.jsonl')
      const r = await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f32', '--n', '8', '--json'], {env: {...fake({SPARSE_SPMM_VARIANT: 'split_v1_t8_w1'}), SPARSE_FAKE_LOG: log}})
      const j = JSON.parse(r.stdout)
      expect(j.cases[0]).to.include({variant: 'split_v1_t8_w1', variantSource: 'forced', passed: true})
      expect(j.warnings).to.deep.equal([])
      // One call, with the variant passed by name.
      expect(readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l).variant)).to.deep.equal(['split_v1_t8_w1'])
    })

    it('a forced variant that cannot run: refused, then the selection runs and fills the output (a fault still fails)', async () => {
      const log = join(dir, 'fallback.jsonl')
      const env = {...fake({SPARSE_SPMM_VARIANT: 'tile_v8_t8_x1'}), SPARSE_FAKE_LOG: log}
      const r = await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f32', '--n', '8', '--json'], {env})
      const j = JSON.parse(r.stdout)
      expect(j.cases[0]).to.include({variant: 'split_v4_t8_w1', variantSource: 'heuristic', passed: true})
      expect(readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l).variant)).to.deep.equal(['tile_v8_t8_x1', null])
      const bad = await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f32', '--n', '8'], {env: {...env, SPARSE_VERIFY_FAULT: 'unwritten'}})
      expect(bad.code).to.equal(1)
      expect(bad.stderr).to.match(/error: 1 of 1 verify case failed: initial_conv spmm f32 on cuda \(split_v4_t8_w1\): 1 outputs NaN\/inf/)
      expect(bad.stderr).to.match(/warning: SPARSE_SPMM_VARIANT=tile_v8_t8_x1 did not run 1 of 1 CUDA SpMM cases/)
    })

    it('a name that is no variant: the selection, and the warning says why', async () => {
      const r = await runCli(['verify', SMALL, '--op', 'spmm', '--dtype', 'f32', '--n', '8', '--json'], {env: fake({SPARSE_SPMM_VARIANT: 'fastest'})})
      const j = JSON.parse(r.stdout)
      expect(j.cases[0]).to.include({variant: 'split_v4_t8_w1', variantSource: 'heuristic', forcedVariant: 'fastest'})
      expect(j.cases[0].variantNote).to.equal("SPARSE_SPMM_VARIANT=fastest is not the name of an SpMM variant: the built-in selection's split_v4_t8_w1 ran instead")
      expect(j.warnings[0]).to.match(/\(it is not the name of an SpMM variant\)/)
    })

    it('SDDMM: the kernel, and a forced SDDMM kernel the addon cannot confirm, said in the row and a warning', async () => {
      const r = await runCli(['verify', SMALL, '--op', 'sddmm', '--dtype', 'f16', '--n', '8'], {env: fake({SPARSE_SDDMM_VARIANT: 'tc'})})
      expect(r.code).to.equal(0)
      expect(r.stdout).to.match(/│ sddmm +│ f16 +│ cuda +│ CudaSddmm \(tc forced\?\) +│/)
      expect(r.stderr).to.match(/^warning: SPARSE_SDDMM_VARIANT=tc: the addon does not say which SDDMM kernel ran/)
      const j = JSON.parse((await runCli(['verify', SMALL, '--op', 'sddmm', '--dtype', 'f16', '--n', '8', '--json'], {env: fake({})})).stdout)
      expect(j.cases[0]).to.include({kernel: 'CudaSddmm'})
      expect(j.cases[0]).to.not.have.any.keys('variant', 'variantSource', 'forcedVariant', 'variantNote')
    })
  })
})
