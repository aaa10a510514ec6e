import {expect} from 'chai'
import {existsSync} from 'node:fs'
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
    expect(cells(lines[1])).to.deep.equal(['op', 'dtype', 'device', 'M x K', 'nnz', 'N', 'rel. error', 'rel. tolerance', 'max abs error', 'ms', 'result'])
    const rows = lines.map(cells).filter((c) => c[0] === 'spmm' || c[0] === 'sddmm')
    expect(rows).to.have.length(6)
    expect(rows.filter((c) => c.at(-1) === 'pass')).to.have.length(6)
    expect(rows[0].slice(0, 6)).to.deep.equal(['spmm', 'f32', 'cpu', '64 x 147', '188', '33'])
    expect(lines.at(-1)).to.match(/6 of 6 cases passed \(all passed\) on cpu \(CPU \(\d+ threads\)\), N=33, seed 0$/)
  })

  it('--json gives {device, cases[]} with the documented fields', async () => {
    const r = await runCli(['verify', SMALL2, '--device', 'cpu', '--op', 'sddmm', '--dtype', 'f16', '--n', '8', '--seed', '4', '--json'])
    expect(r.code).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j).to.include({device: 'cpu', ok: true, passed: 1, failed: 0, n: 8, seed: 4})
    expect(j.cases).to.have.length(1)
    const c = j.cases[0]
    expect(Object.keys(c)).to.include.members(['op', 'dtype', 'device', 'n', 'relativeError', 'maxAbsError', 'tolerance', 'passed'])
    expect(c).to.include({op: 'sddmm', dtype: 'f16', device: 'cpu', n: 8, m: 256, k: 64, nnz: 327, tolerance: 0.01, passed: true})
    expect(c.relativeError).to.be.a('number').and.below(0.01)
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
})
