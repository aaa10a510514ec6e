import {expect} from 'chai'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {cudaInfo} from '../../src/kernels/binding.js'
import {runCli} from '../helpers/cli.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx' // 64 x 147, nnz 188
const FAST = ['--reps', '3', '--min-ms', '1', '--warmup', '1']


const temps: string[] = []
/** A fresh temporary folder, removed after the tests of this file. */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'bench-cli-'))
  temps.push(d)
  return d
}
after(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

describe('sparse bench', function () {
  this.timeout(120_000)

  it('runs for real on the CPU: --json has device, cases and summary, labelled as CPU figures', async () => {
    const dir = tempDir()
    const csv = join(dir, 'out.csv')
    const jsonl = join(dir, 'out.jsonl')
    const plot = join(dir, 'out.svg')
    const r = await runCli(['bench', SMTX, '--n', '8,16', '--op', 'all', '--dtype', 'f32,f16', '--device', 'cpu', ...FAST, '--json', '--csv', csv, '--jsonl', jsonl, '--plot', plot])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    expect(out.device).to.deep.include({kind: 'cpu', label: 'CPU figures'})
    expect(out.device.ceilings.copyGBps).to.be.greaterThan(0)
    expect(out.cases).to.have.length(8) // 2 N x 2 ops x 2 dtypes
    for (const c of out.cases) {
      expect(c.status).to.equal('ok')
      expect([c.m, c.k, c.nnz]).to.deep.equal([64, 147, 188])
      expect(c.device).to.equal('cpu')
      expect(c.ms.median).to.be.greaterThan(0)
      expect(c.ms.p10).to.be.at.most(c.ms.median)
      expect(c.ms.p90).to.be.at.least(c.ms.median)
      expect(c.samples).to.be.at.least(3)
      expect(Object.keys(c.baselines)).to.deep.equal(['cpu_dense_f32'])
      expect(c.speedup.cpu_dense_f32).to.be.closeTo(c.baselines.cpu_dense_f32 / c.ms.median, 1e-9)
      expect(c.tflops).to.be.closeTo((2 * 188 * c.n) / (c.ms.median * 1e-3) / 1e12, 1e-9)
      expect(c.memorySaving).to.be.greaterThan(10)
      expect(['sparse', 'dense']).to.include(c.recommendation.use)
      // Our CPU kernel agrees with the dense product.
      expect(c.check.against).to.equal('cpu_dense_f32')
      expect(c.check.relErr).to.be.below(c.dtype === 'f32' ? 1e-5 : 1e-2)
    }
    expect(out.summary.levels.map((l: {op: string; dtype: string; sparsity: number}) => `${l.op} ${l.dtype} ${l.sparsity}`)).to.deep.equal([
      'sddmm f16 0.98',
      'sddmm f32 0.98',
      'spmm f16 0.98',
      'spmm f32 0.98',
    ])
    expect(readFileSync(csv, 'utf8').trimEnd().split('\n')).to.have.length(9)
    expect(readFileSync(jsonl, 'utf8').trimEnd().split('\n')).to.have.length(8)
    expect(readFileSync(plot, 'utf8')).to.match(/^<svg/)
  })

  it('prints the table, the per-level summary and the CPU label without --json', async () => {
    const r = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', ...FAST])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/CPU figures/)
    expect(r.stdout).to.match(/vs cpu_dense_f32/)
    expect(r.stdout).to.match(/Per sparsity level/)
    expect(r.stdout).to.match(/advice/)
  })

  it('needs a GPU for --device cuda (the default): exit 3 with one line', async function () {
    if (cudaInfo().available) this.skip() // a GPU is present: nothing to refuse
    const r = await runCli(['bench', SMTX, '--n', '8'])
    expect(r.code).to.equal(3)
    expect(r.stderr.trim().split('\n')).to.have.length(1)
    expect(r.stderr).to.match(/GPU|CUDA|addon/)
    const j = await runCli(['bench', SMTX, '--n', '8', '--json'])
    expect(j.code).to.equal(3)
    expect(JSON.parse(j.stdout).error.exitCode).to.equal(3)
    // --tune too: the GPU is what it measures.
    const t = await runCli(['bench', SMTX, '--n', '8', '--tune', '--no-tune-cache'])
    expect(t.code).to.equal(3)
  })

  it('rejects bad usage with exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['bench', SMTX, '--device', 'cpu'], /needs --n/],
      [['bench', SMTX, '--n', '8,x', '--device', 'cpu'], /--n: expected integers/],
      [['bench', SMTX, '--n', '8', '--dtype', 'f64', '--device', 'cpu'], /--dtype/],
      [['bench', SMTX, '--n', '8', '--op', 'gemm', '--device', 'cpu'], /--op/],
      [['bench', SMTX, '--n', '8', '--baseline', 'cusparse', '--device', 'cpu'], /cuSPARSE is a GPU library/],
      [['bench', SMTX, '--n', '8', '--baseline', 'dense,cusparselt', '--device', 'cpu'], /cuSPARSELt is a GPU library/],
      [['bench', SMTX, '--n', '8', '--baseline', 'cusparselite', '--device', 'cpu'], /--baseline: expected dense, cusparse, cusparselt, all or none/],
      [['bench', '--suite', 'dlmc', '--device', 'cpu'], /needs the DLMC folder/],
      [['bench', '--suite', 'attention', '--attention-sparsity', '0.9,1', '--device', 'cpu'], /--attention-sparsity: expected sparsities in \[0, 1\)/],
      [['bench', '--device', 'cpu'], /nothing to bench/],
      [['bench', 'fixtures/dense-f32.npy', '--n', '8', '--device', 'cpu'], /needs -s/],
      [['bench', SMTX, '--n', '8', '--device', 'cpu', '--plot', 'x.gif'], /\.svg or \.png/],
      [['bench', SMTX, '--n', '8', '--device', 'cpu', '--tune'], /--tune needs --device cuda/],
      [['bench', SMTX, '--n', '8', '--op', 'sddmm', '--tune'], /--tune tunes SpMM/],
      [['bench', SMTX, '--n', '8', '--tune-cache', 'x.json', '--no-tune-cache'], /contradict/],
    ]
    for (const [args, re] of cases) {
      const r = await runCli(args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2)
      expect(r.stderr, args.join(' ')).to.match(re)
    }
  })

  it('prunes a dense .npy with -s and benches it on the CPU', async () => {
    const r = await runCli(['bench', 'fixtures/dense-f32.npy', '-s', '0.5', '--n', '4', '--device', 'cpu', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    expect(out.cases).to.have.length(1)
    expect(out.cases[0].level).to.equal(0.5)
    expect(out.cases[0].status).to.equal('ok')
  })

  it('does not overwrite an existing output without --force', async () => {
    const dir = tempDir()
    const csv = join(dir, 'x.csv')
    const first = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', ...FAST, '--csv', csv])
    expect(first.code, first.stderr).to.equal(0)
    expect(existsSync(csv)).to.equal(true)
    const again = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', ...FAST, '--csv', csv])
    expect(again.code).to.equal(2)
    expect(again.stderr).to.match(/exists.*--force/)
  })
})
