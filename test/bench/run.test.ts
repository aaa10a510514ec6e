import {expect} from 'chai'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {benchAndWrite} from '../../src/bench/index.js'
import type {NativeBenchArgs} from '../../src/bench/types.js'
import {runBench} from '../../src/bench/run.js'
import {DeviceError} from '../../src/errors.js'
import {writeSafetensors} from '../../src/formats/index.js'
import {ROOT} from '../helpers/cli.js'
import {fakeNative, noGpuNative} from './fake-native.js'
import {ok, tempDirs} from './helpers.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx' // 64 x 147, nnz 188

const tempDir = tempDirs('bench-')

describe('bench: runBench (fake harness)', () => {
  it('turns samples into the case record: statistics, rate, bytes, fractions, memory, speedups, advice', async () => {
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [64], native: fakeNative({calls})})
    expect(r.cases).to.have.length(1)
    const c = ok(r.cases[0])
    expect([c.m, c.k, c.n, c.nnz, c.op, c.dtype, c.device]).to.deep.equal([64, 147, 64, 188, 'spmm', 'f32', 'cuda'])
    expect(c.sparsity).to.be.closeTo(1 - 188 / (64 * 147), 1e-12)
    const ours = 188 * 64 * 1e-9
    expect(c.ms.median).to.be.closeTo(ours, 1e-15)
    expect(c.ms.p10).to.be.closeTo(ours * 0.96, 1e-15)
    expect(c.ms.p90).to.be.closeTo(ours * 1.04, 1e-15)
    const f32 = 64 * 147 * 64 * 2e-10
    expect(c.baselines.cublas_f32).to.be.closeTo(f32, 1e-15)
    expect(c.baselines.cublas_tf32).to.be.closeTo(f32 / 2, 1e-15)
    expect(c.baselines.cusparse).to.be.closeTo(2 * ours, 1e-15)
    expect(c.speedup.cusparse).to.be.closeTo(2, 1e-12)
    expect(c.speedup.cublas_f32).to.be.closeTo(f32 / ours, 1e-9)
    // 2 nnz n FLOPs; values + int32 indices + offsets + B + C bytes (f32: the CSR kernels).
    expect(c.tflops).to.be.closeTo((2 * 188 * 64) / (ours * 1e-3) / 1e12, 1e-9)
    expect(c.form).to.equal('csr')
    expect(c.bytes).to.equal(188 * 8 + 4 * 65 + 147 * 64 * 4 + 64 * 64 * 4)
    expect(c.fractionOfBandwidth).to.be.closeTo(c.bytes / (ours * 1e-3) / 1e9 / 4000, 1e-9)
    expect(c.fractionOfCompute).to.be.closeTo(c.tflops / 50, 1e-12)
    expect(c.memory.denseBytes).to.equal(64 * 147 * 4)
    expect(c.memory.csrBytes).to.equal(188 * 8 + 4 * 65 + 4 * 64)
    expect(c.memorySaving).to.be.closeTo(c.memory.denseBytes / c.memory.csrBytes, 1e-12)
    expect(c.recommendation).to.deep.include({use: 'sparse', against: 'cublas_f32'})
    expect(c.recommendation!.factor).to.be.closeTo(f32 / ours, 1e-9)
    expect(c.l2Mode).to.equal('rotate')
    expect(c.check).to.deep.equal({relErr: 1e-7, against: 'cublas_f32'})
    // The harness got the CSR (with random values for the pattern-only .smtx) and the plan.
    expect(calls[0].impls).to.deep.equal(['ours', 'cublas_f32', 'cublas_tf32', 'cusparse'])
    expect(calls[0].csr.values).to.be.instanceOf(Float32Array)
    expect(calls[0].indexBits).to.equal(32)
    expect(r.device).to.deep.include({name: 'Fake GPU', smCount: 132, label: 'CUDA'})
    expect(r.device.clocks.smMhzSeen).to.deep.equal({min: 1900, max: 1980})
    expect(r.device.ceilings.copyGBps).to.equal(4000)
  })

  it('passes SDDMM as mask m x k with the inner dimension n, and f16 with 16-bit indices for SpMM', async () => {
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [32], ops: ['spmm', 'sddmm'], dtypes: ['f16'], native: fakeNative({calls})})
    expect(r.cases.map((c) => `${c.op} ${c.dtype}`)).to.deep.equal(['spmm f16', 'sddmm f16'])
    expect(calls[0]).to.deep.include({m: 64, k: 147, n: 32, indexBits: 16, dtype: 'f16'})
    expect(calls[1]).to.deep.include({m: 64, k: 32, n: 147, indexBits: 32})
    expect(calls[0].impls).to.deep.equal(['ours', 'cublas_f16', 'cusparse'])
    expect(calls[0].csr.values).to.be.instanceOf(Uint16Array)
    const sd = ok(r.cases[1])
    expect([sd.m, sd.k, sd.n]).to.deep.equal([64, 147, 32])
    expect(sd.bytes).to.equal(188 * 4 + 4 * 65 + 64 * 32 * 2 + 147 * 32 * 2 + 188 * 2)
    expect(sd.recommendation?.against).to.equal('cublas_f16')
  })

  it('reports a missing baseline and goes on', async () => {
    const r = await runBench({inputs: [SMTX], ns: [8], native: fakeNative({unavailable: ['cusparse']})})
    const c = ok(r.cases[0])
    expect(c.unavailable).to.deep.equal({cusparse: 'cusparse missing in this test'})
    expect(c.baselines).to.not.have.property('cusparse')
    expect(c.speedup).to.have.keys(['cublas_f32', 'cublas_tf32'])
  })

  it('times cusparselt for f16/bf16 SpMM only, and shows it unavailable with its reason', async () => {
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [8], dtypes: ['f32', 'f16'], ops: ['spmm', 'sddmm'], baselines: ['dense', 'cusparse', 'cusparselt'], native: fakeNative({calls, unavailable: ['cusparselt']})})
    const asked = calls.map((c) => `${c.dtype}:${c.impls.join(',')}`)
    expect(asked.filter((a) => a.includes('cusparselt'))).to.deep.equal(['f16:ours,cublas_f16,cusparse,cusparselt'])
    const f16 = r.cases.map(ok).find((c) => c.op === 'spmm' && c.dtype === 'f16')!
    expect(f16.unavailable).to.deep.equal({cusparselt: 'cusparselt missing in this test'})
  })

  it('records failing cases with their error and summarises the rest', async () => {
    const r = await benchAndWrite({inputs: [SMTX], ns: [8, 16], native: fakeNative({fail: {message: 'out of memory: cudaErrorMemoryAllocation', code: 'cudaErrorMemoryAllocation'}})})
    expect(r.cases).to.have.length(2)
    expect(r.cases.every((c) => c.status === 'failed')).to.equal(true)
    expect(r.cases[0]).to.deep.include({status: 'failed', code: 'cudaErrorMemoryAllocation', m: 64, k: 147, n: 8})
    expect(r.allFailed).to.equal(true)
    expect(r.summary).to.deep.include({total: 2, ok: 0, failed: 2})
  })

  it('needs a GPU for --device cuda: DeviceError (exit 3) before any case', async () => {
    let error: unknown
    try {
      await runBench({inputs: [SMTX], ns: [8], device: 'cuda', native: noGpuNative()})
    } catch (e) {
      error = e
    }
    expect(error).to.be.instanceOf(DeviceError)
    expect((error as DeviceError).exitCode).to.equal(3)
    expect((error as Error).message).to.match(/no usable GPU/)
  })

  it('compares with the anchors file: sputnik as a peer, the reference library figures as columns', async () => {
    // The bundled DLMC excerpt and its anchor lines (fixtures/dlmc-mini), so a fresh clone runs it.
    const mini = join(ROOT, 'fixtures', 'dlmc-mini')
    const anchors = join(mini, 'anchors.jsonl')
    const dir = join(mini, 'rn50', 'magnitude_pruning', '0.98')
    const r = await runBench({inputs: [dir], ns: [3136], compare: anchors, native: fakeNative()})
    expect(r.cases).to.have.length(3)
    // initial_conv has no anchor at N = 3136 (its paper N is 12544): 2 of the 3 match.
    expect(r.settings.compare).to.deep.equal({path: anchors, kind: 'anchors', matched: 2})
    const c = ok(r.cases.find((x) => x.file.endsWith('bottleneck_1_block_group1_1_1.smtx')))
    const line = readFileSync(anchors, 'utf8')
      .split('\n')
      .map((l) => (l ? JSON.parse(l) : null))
      .find((l) => l && l.file === 'rn50/magnitude_pruning/0.98/bottleneck_1_block_group1_1_1.smtx' && l.n === 3136)
    expect(c.compare!.sputnik).to.be.closeTo(line.spmm_f32_us.sputnik / 1000, 1e-12)
    expect(c.compare!.ref_cusparse).to.be.closeTo(line.spmm_f32_us.cusparse / 1000, 1e-12)
    expect(c.baselines.sputnik).to.equal(c.compare!.sputnik)
    expect(c.speedup.sputnik).to.be.closeTo(c.compare!.sputnik / c.ms.median, 1e-9)
    expect(c.baselines).to.not.have.property('ref_cusparse')
    // Agreement of this run's baselines with the reference figures.
    const agree = r.summary.agreement.find((a) => a.baseline === 'cusparse')!
    expect(agree.cases).to.equal(2)
    expect(agree.reference).to.equal('ref_cusparse')
  })

  it('compares with an earlier run written with --jsonl', async () => {
    const dir = tempDir()
    const first = await benchAndWrite({inputs: [SMTX], ns: [8], native: fakeNative(), jsonl: join(dir, 'a.jsonl')})
    expect(first.outputs.map((o) => o.path)).to.deep.equal([join(dir, 'a.jsonl')])
    const second = await runBench({inputs: [SMTX], ns: [8], native: fakeNative(), compare: join(dir, 'a.jsonl')})
    const c = ok(second.cases[0])
    expect(c.compare!.previous).to.be.closeTo(c.ms.median, 1e-15)
    expect(c.speedup.previous).to.be.closeTo(1, 1e-12)
    expect(c.compare!.previous_cusparse).to.be.closeTo(c.baselines.cusparse, 1e-15)
  })

  it('benches every 2-D weight of a model file pruned with -s, with model totals', async () => {
    const dir = tempDir()
    const model = join(dir, 'mlp.safetensors')
    const w = (rows: number, cols: number, seed: number) => Float32Array.from({length: rows * cols}, (_, i) => Math.sin(i * 12.9898 + seed) * 43758.5453 % 1)
    await writeSafetensors([
      {name: 'fc1.weight', shape: [32, 16], dtype: 'f32', data: w(32, 16, 1)},
      {name: 'fc1.bias', shape: [32], dtype: 'f32', data: w(1, 32, 2)},
      {name: 'fc2.weight', shape: [8, 32], dtype: 'f32', data: w(8, 32, 3)},
    ], model)
    const r = await runBench({inputs: [model], ns: [4], sparsity: 0.75, native: fakeNative()})
    expect(r.cases.map((c) => c.file)).to.deep.equal([`${model}:fc1.weight`, `${model}:fc2.weight`])
    const cs = r.cases.map(ok)
    expect(cs.map((c) => c.nnz)).to.deep.equal([128, 64])
    expect(cs.every((c) => c.level === 0.75)).to.equal(true)
    const [total] = r.summary.models
    expect(total).to.deep.include({model, op: 'spmm', dtype: 'f32', n: 4, layers: 2})
    expect(total.sparseMs).to.be.closeTo(cs[0].ms.median + cs[1].ms.median, 1e-15)
    expect(total.baselineMs.cublas_f32).to.be.closeTo(cs[0].baselines.cublas_f32 + cs[1].baselines.cublas_f32, 1e-15)
    expect(total.speedup.cublas_f32).to.be.closeTo(total.baselineMs.cublas_f32 / total.sparseMs, 1e-9)
    expect(total.denseBytes).to.equal((32 * 16 + 8 * 32) * 4)
    expect(total.memorySaving).to.be.closeTo(total.denseBytes / total.csrBytes, 1e-12)
  })

  it('--suite attention: SDDMM in f16 and bf16 on seq x seq masks at head dims 64 and 128 by default', async () => {
    const calls: NativeBenchArgs[] = []
    const r = await runBench({suite: {kind: 'attention'}, attentionSparsities: [0.99], native: fakeNative({calls})})
    expect(r.settings).to.deep.include({ops: ['sddmm'], dtypes: ['f16', 'bf16'], suite: 'attention'})
    expect(r.cases).to.have.length(3 * 2 * 2)
    expect(r.cases.slice(0, 4).map((c) => `${c.file} ${c.op} ${c.dtype} ${c.n}`)).to.deep.equal([
      'attention/2048x2048/0.99 sddmm f16 64',
      'attention/2048x2048/0.99 sddmm f16 128',
      'attention/2048x2048/0.99 sddmm bf16 64',
      'attention/2048x2048/0.99 sddmm bf16 128',
    ])
    const last = ok(r.cases.at(-1))
    expect([last.group, last.level, last.m, last.k, last.n, last.nnz]).to.deep.equal(['attention', 0.99, 8192, 8192, 128, 8192 * 82])
    // The mask is m x k; SDDMM's inner dimension (the head dimension) goes to the harness as k.
    expect(calls[0]).to.deep.include({m: 2048, k: 64, n: 2048, dtype: 'f16'})
    expect(calls[0].impls).to.deep.equal(['ours', 'cublas_f16', 'cusparse'])
    const spmm = await runBench({suite: {kind: 'attention'}, attentionSparsities: [0.99], ops: ['spmm'], dtypes: ['f16'], ns: [64], native: fakeNative()})
    expect(spmm.cases.map((c) => `${c.file} ${c.op} ${c.n}`)).to.deep.equal(['attention/2048x2048/0.99 spmm 64', 'attention/4096x4096/0.99 spmm 64', 'attention/8192x8192/0.99 spmm 64'])
  })

  it('refuses bad usage before running', async () => {
    const cases: Array<[() => Promise<unknown>, RegExp]> = [
      [() => runBench({inputs: [SMTX], ns: [0], native: fakeNative()}), /positive integers for --n/],
      [() => runBench({inputs: ['fixtures/dense-f32.npy'], ns: [4], native: fakeNative()}), /is dense: bench prunes it first and needs -s/],
      [() => runBench({inputs: ['no/such/file.smtx'], ns: [4], native: fakeNative()}), /does not exist/],
      [() => runBench({native: fakeNative()}), /nothing to bench/],
      [() => benchAndWrite({inputs: [SMTX], ns: [4], plot: 'x.pdf', native: fakeNative()}), /must end in \.svg or \.png/],
    ]
    for (const [fn, re] of cases) {
      let error: unknown
      try {
        await fn()
      } catch (e) {
        error = e
      }
      expect((error as Error)?.message, String(re)).to.match(re)
      expect((error as {exitCode?: number}).exitCode, String(re)).to.equal(2)
    }
  })

  it('refuses to overwrite an output without force, before the run', async () => {
    const dir = tempDir()
    const csv = join(dir, 'out.csv')
    writeFileSync(csv, 'keep me')
    const calls: NativeBenchArgs[] = []
    let error: unknown
    try {
      await benchAndWrite({inputs: [SMTX], ns: [4], csv, native: fakeNative({calls})})
    } catch (e) {
      error = e
    }
    expect((error as Error).message).to.match(/exists/)
    expect(calls).to.have.length(0)
    expect(readFileSync(csv, 'utf8')).to.equal('keep me')
    const r = await benchAndWrite({inputs: [SMTX], ns: [4], csv, force: true, native: fakeNative()})
    expect(r.outputs[0].path).to.equal(csv)
    expect(readFileSync(csv, 'utf8')).to.match(/^file,op,dtype/)
  })
})
