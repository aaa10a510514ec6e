import {expect} from 'chai'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import Bench from '../../src/commands/bench.js'
import Convert from '../../src/commands/convert.js'
import Reorder from '../../src/commands/reorder.js'
import Verify from '../../src/commands/verify.js'
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

  it('needs a GPU for --device cuda: exit 3 with one line', async function () {
    if (cudaInfo().available) this.skip() // a GPU is present: nothing to refuse
    const r = await runCli(['bench', SMTX, '--n', '8', '--device', 'cuda'])
    expect(r.code).to.equal(3)
    expect(r.stderr.trim().split('\n')).to.have.length(1)
    expect(r.stderr).to.match(/GPU|CUDA|addon/)
    const j = await runCli(['bench', SMTX, '--n', '8', '--json', '--device', 'cuda'])
    expect(j.code).to.equal(3)
    expect(JSON.parse(j.stdout).error.exitCode).to.equal(3)
    // --tune too: the GPU is what it measures.
    const t = await runCli(['bench', SMTX, '--n', '8', '--tune', '--no-tune-cache', '--device', 'cuda'])
    expect(t.code).to.equal(3)
    // --device auto (the default) without a GPU: --tune cannot run on the CPU (exit 3, GPU missing).
    const a = await runCli(['bench', SMTX, '--n', '8', '--tune', '--no-tune-cache'])
    expect(a.code, a.stderr).to.equal(3)
    expect(a.stderr).to.match(/--tune needs a GPU/)
  })

  it('takes --keep-sparse (SpMM on CUDA; nothing changes on the CPU) and lists it in --help', async () => {
    const r = await runCli(['bench', SMTX, ...FAST, '--n', '8', '--device', 'cpu', '--keep-sparse', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    expect(out.cases[0].status).to.equal('ok')
    // The settings echo it as asked (the tune summary says whether it shaped a CUDA run).
    expect(out.settings.keepSparse).to.equal(true)
    const plain = await runCli(['bench', SMTX, ...FAST, '--n', '8', '--device', 'cpu', '--json'])
    expect(JSON.parse(plain.stdout).settings.keepSparse).to.equal(false)
    const h = await runCli(['bench', '--help'])
    expect(h.stdout).to.match(/--keep-sparse\s+SpMM on CUDA: keep the weights in a sparse\s+form/)
  })

  it("echoes how the streaming engine's kernels launch (SPARSE_PDL): 'graph' unless 'on' or 'off'", async () => {
    const pdl = async (value: string | undefined) => {
      const r = await runCli(['bench', SMTX, ...FAST, '--n', '8', '--device', 'cpu', '--json'], {env: {SPARSE_PDL: value}})
      expect(r.code, r.stderr).to.equal(0)
      return JSON.parse(r.stdout).settings.pdl
    }
    expect(await pdl(undefined)).to.equal('graph')
    expect(await pdl('off')).to.equal('off')
    expect(await pdl('on')).to.equal('on')
    expect(await pdl('graph')).to.equal('graph')
    expect(await pdl('OFF'), 'read as the addon reads it: exact words only').to.equal('graph')
  })

  it('defaults as verify does: --device auto (the CPU here when no GPU is usable), N = 256, seed 0', async function () {
    if (cudaInfo().available) this.skip() // auto picks the GPU there
    const r = await runCli(['bench', SMTX, ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    expect(out.device.kind).to.equal('cpu')
    expect(out.cases.map((c: {n: number}) => c.n)).to.deep.equal([256])
    expect(out.settings.seed).to.equal(0)
    // The flags as the commands declare them (their --help and docs/commands.md come from these).
    for (const C of [Bench, Verify, Convert, Reorder]) expect(C.flags.seed.default, C.name).to.equal(0)
    for (const C of [Bench, Verify]) expect(C.flags.device.default, C.name).to.equal('auto')
    expect(Verify.flags.n.default).to.equal('256') // a list, as bench's --n: '1,8,16'
    expect(Bench.flags.n.description).to.match(/default for INPUTs 256, as in verify/)

  })

  it('sweeps a dense model: -s 0.5,0.9 gives one set of cases and model totals per sparsity', async () => {
    const r = await runCli(['bench', 'fixtures/tiny-mlp.safetensors', '-s', '0.5,0.9', '--n', '8', '--device', 'cpu', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    const levels = out.cases.map((c: {level: number}) => c.level)
    const perLevel = levels.filter((l: number) => l === 0.5).length
    expect(perLevel).to.be.greaterThan(0)
    expect(levels.filter((l: number) => l === 0.9).length).to.equal(perLevel)
    expect(levels.length).to.equal(2 * perLevel)
    for (const c of out.cases) {
      expect(c.file).to.match(new RegExp(`@ s=${c.level}$`))
      expect(Math.abs(c.sparsity - c.level)).to.be.lessThan(0.01)
    }
    expect(out.summary.models.map((m: {model: string}) => m.model).sort()).to.deep.equal(['fixtures/tiny-mlp.safetensors @ s=0.5', 'fixtures/tiny-mlp.safetensors @ s=0.9'])
    expect(out.summary.levels.map((l: {sparsity: number}) => l.sparsity).sort()).to.deep.equal([0.5, 0.9])
  })

  it('reads a Hugging Face model folder as one model over its shards', async () => {
    const r = await runCli(['bench', 'fixtures/hf-tiny', '-s', '0.5', '--n', '8', '--device', 'cpu', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    // Tensors of both shards, named as in the index, totalled as one model.
    const names = out.cases.map((c: {name: string}) => c.name).sort()
    expect(names).to.include('model.layers.0.mlp.down_proj.weight') // shard 2
    expect(names).to.include('model.layers.0.mlp.up_proj.weight') // shard 1
    // Embeddings and lm_head stay dense by default, as prune leaves them (issue 22).
    expect(names).to.not.include('lm_head.weight')
    expect(names).to.not.include('model.embed_tokens.weight')
    expect(out.summary.models).to.have.length(1)
    expect(out.summary.models[0].model).to.equal('fixtures/hf-tiny')
    expect(out.cases.every((c: {file: string}) => !c.file.includes('model-0000'))).to.equal(true)
  })

  it('--include and --exclude select the tensors of a CSR folder too (issue 22)', async () => {
    const dir = tempDir()
    const csr = join(dir, 'csr')
    const p = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '-o', csr])
    expect(p.code, p.stderr).to.equal(0)
    const r = await runCli(['bench', csr, '--include', 'up_proj', '--n', '8', '--device', 'cpu', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout).cases.map((c: {name: string}) => c.name)).to.deep.equal(['model.layers.0.mlp.up_proj.weight'])
    const x = await runCli(['bench', csr, '--exclude', 'proj', '--n', '8', '--device', 'cpu', ...FAST])
    expect(x.code).to.equal(2)
    expect(x.stderr).to.match(/no tensor matches --include\/--exclude \(it has 3\)/)
  })

  it('names the dense CPU baseline that ran: a CPU BLAS when one loads, else our blocked GEMM', async () => {
    const r = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const detail = JSON.parse(r.stdout).cases[0].impls.cpu_dense_f32.detail as string
    expect(detail).to.match(/sgemm|our blocked fp32 GEMM/)
    const b = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', '--op', 'all', ...FAST, '--json'], {env: {SPARSE_CPU_BLAS: 'builtin'}})
    expect(b.code, b.stderr).to.equal(0)
    const cases = JSON.parse(b.stdout).cases
    expect(cases[0].impls.cpu_dense_f32.detail).to.match(/^our blocked fp32 GEMM .*SPARSE_CPU_BLAS=builtin/)
    expect(cases[1].impls.cpu_dense_f32.detail).to.match(/^full product L R\^T: our blocked fp32 GEMM/)
    for (const c of cases) expect(c.check.relErr).to.be.lessThan(1e-5)
    const bad = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', ...FAST, '--json'], {env: {SPARSE_CPU_BLAS: '/no/such/libblas.so'}})
    expect(JSON.parse(bad.stdout).cases[0].impls.cpu_dense_f32.detail).to.match(/SPARSE_CPU_BLAS=\/no\/such\/libblas.so did not load/)
  })

  it('reports the tensor-core forms beside CSR for half-precision cases, none for f32', async () => {
    const r = await runCli(['bench', SMTX, '--n', '8', '--device', 'cpu', '--dtype', 'f32,f16', ...FAST, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const [f32, f16] = JSON.parse(r.stdout).cases
    expect(f32.memory).to.deep.include({bitmapBytes: null, twoFourBytes: null})
    // 64 x 147: 4 strips x 10 k-tiles; every tile at least its 48-byte header, plus the offsets.
    expect(f16.memory.bitmapBytes).to.be.at.least(40 * 48 + 4 * 41)
    expect(f16.memory.saving).to.be.closeTo((64 * 147 * 2) / f16.memory.csrBytes, 1e-12)
  })

  it('rejects bad usage with exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
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
      [['bench', 'fixtures/dense-f32.npy', '--n', '8', '--device', 'cpu', '-s', '0.5,1'], /-s: expected sparsities in \[0, 1\)/],
      [['bench', 'fixtures/dense-f32.npy', '--n', '8', '--device', 'cpu', '-s', '0x0'], /-s: expected sparsities in \[0, 1\) \(plain decimal numbers\), got "0x0"/],
      [['bench', 'fixtures/dense-f32.npy', '--n', '8', '--device', 'cpu', '-s', '0.5,0.7', '--pattern', '2:4'], /--pattern 2:4 fixes it at 0.5/],
      [['bench', SMTX, '--n', '8', '--op', 'sddmm', '--tune'], /--tune tunes SpMM/],
      [['bench', SMTX, '--n', '8', '--tune-cache', 'x.json', '--no-tune-cache'], /contradict/],
      [['bench', SMTX, '--n', '8', '--device', 'cpu', '--tune-only', 's24g_'], /--tune-only narrows --tune's candidates, but --tune is not given/],
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
