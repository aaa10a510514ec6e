import {expect} from 'chai'

import {InputError, UsageError} from '../../src/errors.js'
import {pruneMagnitude, pruneModel, resolveOptions} from '../../src/pruning/magnitude.js'
import {f32ToF16Bits} from '../../src/sparse/half.js'
import type {DenseTensor} from '../../src/types.js'
import {csrArrays, csrFromMask, pyRound, randomTensor, referenceMasks} from './reference.js'

const f32 = (name: string, shape: number[], values: number[]): DenseTensor => ({name, shape, dtype: 'f32', data: Float32Array.from(values)})
const kept = (t: ReturnType<typeof pruneMagnitude>) => {
  const out: Array<[number, number, number]> = []
  const {rowOffsets, columnIndices, values} = t.csr
  for (let r = 0; r < t.csr.rows; r++) for (let i = rowOffsets[r]; i < rowOffsets[r + 1]; i++) out.push([r, columnIndices[i], values![i]])
  return out
}

describe('magnitude pruning: the definition', () => {
  it('breaks ties among equal magnitudes by row-major index (first ones pruned)', () => {
    // 12 weights of magnitude 1 (mixed signs): S = 0.5 prunes the first 6 in row-major order.
    const t = f32('w', [3, 4], [1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1])
    const p = pruneMagnitude(t, {sparsity: 0.5, reorder: false})
    expect(kept(p)).to.deep.equal([[1, 2, 1], [1, 3, -1], [2, 0, 1], [2, 1, -1], [2, 2, 1], [2, 3, -1]])
    expect(p.report.threshold).to.equal(1)
  })

  it('prunes the smallest magnitudes first, ties split by index', () => {
    const t = f32('w', [2, 4], [0.5, -3, 2, -0.5, 1, 0.5, -2, 4])
    // Order: 0.5@0, 0.5@3 (|-0.5|), 0.5@5, 1@4, 2@2, 2@6, 3@1, 4@7. S = 0.625 -> round(5) = 5.
    const p = pruneMagnitude(t, {sparsity: 0.625, reorder: false})
    expect(kept(p)).to.deep.equal([[0, 1, -3], [1, 2, -2], [1, 3, 4]])
    expect(p.report.threshold).to.equal(2)
    expect(p.report.nnz).to.equal(3)
  })

  it('rounds the count half to even: S = 0.5 with 7 weights prunes 4, with 5 prunes 2', () => {
    const seven = pruneMagnitude(f32('w', [1, 7], [1, 2, 3, 4, 5, 6, 7]), {sparsity: 0.5})
    expect(seven.report.nnz).to.equal(3)
    expect(seven.report.pruned).to.equal(4)
    const five = pruneMagnitude(f32('w', [1, 5], [1, 2, 3, 4, 5]), {sparsity: 0.5})
    expect(five.report.nnz).to.equal(3)
    // 0.25 * 10 = 2.5 -> 2 (Math.round would give 3).
    expect(pruneMagnitude(f32('w', [2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), {sparsity: 0.25}).report.nnz).to.equal(8)
  })

  it('never stores zeros and reports an over-sparse tensor', () => {
    const t = f32('w', [2, 5], [0, 0, -0, 0, 0, 0, 1, 2, 0, 3])
    const p = pruneMagnitude(t, {sparsity: 0.5, reorder: false})
    expect(kept(p)).to.deep.equal([[1, 1, 1], [1, 2, 2], [1, 4, 3]])
    expect(p.report.sparsity).to.be.closeTo(0.7, 1e-12)
    expect(p.report.targetSparsity).to.equal(0.5)
    expect(p.report.overSparse).to.equal(true)
    expect(p.report.extraZeros).to.equal(2)
    expect(p.report.threshold).to.equal(0)
    // S = 0 stores every nonzero, and says the zeros made it sparser than asked.
    const none = pruneMagnitude(t, {sparsity: 0})
    expect(none.report.nnz).to.equal(3)
    expect(none.report.pruned).to.equal(0)
    expect(none.report.overSparse).to.equal(true)
  })

  it('treats a tensor with more than two dimensions as [shape[0], product of the rest]', () => {
    const t = randomTensor('conv', [4, 3, 2, 2], 'f32', 'normal', 5)
    const p = pruneMagnitude(t, {sparsity: 0.75})
    expect([p.csr.rows, p.csr.cols]).to.deep.equal([4, 12])
    expect(p.shape).to.deep.equal([4, 3, 2, 2])
    expect(p.report.shape).to.deep.equal([4, 3, 2, 2])
    expect(p.report.nnz).to.equal(12)
    expect(csrArrays({...p.csr})).to.deep.equal(csrFromMask(t, referenceMasks([t], 36)[0]))
  })

  it('refuses NaN and infinite weights, naming the tensor and the count', () => {
    const t = f32('layer.3.weight', [2, 3], [1, NaN, 2, Infinity, -Infinity, 3])
    expect(() => pruneMagnitude(t, {sparsity: 0.5})).to.throw(InputError, /layer\.3\.weight.*1 NaN and 2 infinite weights \(3 of 6\)/)
    // Even at S = 0, and for 16-bit tensors.
    const h: DenseTensor = {name: 'h', shape: [1, 3], dtype: 'f16', data: Uint16Array.from([f32ToF16Bits(1), 0x7e00, 0])}
    expect(() => pruneMagnitude(h, {sparsity: 0})).to.throw(InputError, /'h' has 1 NaN weight/)
    const d: DenseTensor = {name: 'd', shape: [1, 2], dtype: 'f64', data: Float64Array.from([1, 1e300])}
    expect(() => pruneMagnitude(d, {sparsity: 0.5})).to.throw(InputError, /1 beyond the float32 range/)
  })

  it('keeps the input dtype (f64 becomes f32), or converts with dtype', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const p = pruneMagnitude(randomTensor('w', [8, 8], dtype, 'normal', 1), {sparsity: 0.5})
      expect(p.csr.dtype).to.equal(dtype)
      expect(p.csr.values).to.be.instanceOf(dtype === 'f32' ? Float32Array : Uint16Array)
    }
    const d = pruneMagnitude(randomTensor('w', [8, 8], 'f64', 'normal', 1), {sparsity: 0.5})
    expect(d.csr.dtype).to.equal('f32')
    const h = pruneMagnitude(f32('w', [1, 4], [1e-9, 1, 2, 3]), {sparsity: 0, dtype: 'f16'})
    expect(h.csr.dtype).to.equal('f16')
    expect(h.report.nnz).to.equal(3) // 1e-9 flushes to zero in f16 and is not stored
    expect(h.report.flushedToZero).to.equal(1)
    expect(() => pruneMagnitude(f32('w', [1, 2], [1e6, 1]), {sparsity: 0, dtype: 'f16'})).to.throw(InputError, /exceed the f16 range/)
  })

  it('validates options before touching data (UsageError, exit 2)', () => {
    const bad: Array<[object, RegExp]> = [
      [{sparsity: 1}, /\[0, 1\)/],
      [{sparsity: -0.5}, /\[0, 1\)/],
      [{}, /sparsity is required/],
      [{sparsity: 0.5, pattern: '2-4'}, /unknown pattern/],
      [{pattern: '5:4'}, /1 <= N <= M/],
      [{pattern: '0:4'}, /1 <= N <= M/],
      [{sparsity: 0.9, pattern: '2:4'}, /contradicts --pattern 2:4/],
      [{pattern: '2:4', scope: 'global'}, /unstructured pruning only/],
      [{sparsity: 0.5, scope: 'layer'}, /scope must be/],
      [{sparsity: 0.5, include: '('}, /not a valid regular expression/],
      [{sparsity: 0.5, dtype: 'int8'}, /dtype must be/],
    ]
    for (const [o, re] of bad) expect(() => resolveOptions(o as never), JSON.stringify(o)).to.throw(UsageError, re)
    expect(resolveOptions({pattern: '2:4'}).sparsity).to.equal(0.5)
    expect(resolveOptions({pattern: '2:4', sparsity: 0.5}).sparsity).to.equal(0.5)
  })
})

describe('magnitude pruning: several tensors', () => {
  it('global scope: one cut, ties broken by tensor order then row-major index', async () => {
    // Every weight has magnitude 1: the first 5 in (tensor, index) order are pruned.
    const a = f32('a', [2, 2], [1, -1, 1, -1])
    const b = f32('b', [2, 3], [-1, 1, -1, 1, -1, 1])
    const {tensors, report} = await pruneModel([a, b], {sparsity: 0.5, scope: 'global', reorder: false})
    expect(tensors.map((t) => t.report.nnz)).to.deep.equal([0, 5])
    expect(tensors[1].csr.columnIndices).to.deep.equal(Int32Array.from([1, 2, 0, 1, 2]))
    expect(report.totals.nnz).to.equal(5)
    expect(report.totals.threshold).to.equal(1)
    expect(tensors.map((t) => t.report.targetSparsity)).to.deep.equal([1, 1 / 6])
  })

  it('global scope matches the reference on mixed dtypes and sizes', async () => {
    for (let seed = 0; seed < 12; seed++) {
      const kind = (['normal', 'quantized', 'zeros'] as const)[seed % 3]
      const ts = [
        randomTensor('t0', [7, 9], 'f32', kind, seed * 10 + 1),
        randomTensor('t1', [5, 4, 3], seed % 2 ? 'f16' : 'bf16', kind, seed * 10 + 2),
        randomTensor('t2', [11, 3], 'f64', kind, seed * 10 + 3),
        randomTensor('t3', [2, 40], 'f16', kind, seed * 10 + 4),
      ]
      const total = ts.reduce((s, t) => s + t.data.length, 0)
      const sparsity = [0.5, 0.9, 0.3, 0.77][seed % 4]
      const masks = referenceMasks(ts, pyRound(sparsity * total))
      const {tensors} = await pruneModel(ts, {sparsity, scope: 'global', reorder: false})
      tensors.forEach((p, i) => expect(csrArrays(p.csr), `seed ${seed} tensor ${i}`).to.deep.equal(csrFromMask(ts[i], masks[i])))
    }
  })

  it('skips 1-D tensors (listed with a reason) unless include1d; include/exclude by name', async () => {
    const w = randomTensor('layer.weight', [4, 4], 'f32', 'normal', 1)
    const bias = randomTensor('layer.bias', [4], 'f32', 'normal', 2)
    const emb = randomTensor('proj.weight', [3, 4], 'f32', 'normal', 3)
    let r = await pruneModel([w, bias, emb], {sparsity: 0.5})
    expect(r.tensors.map((t) => t.name)).to.deep.equal(['layer.weight', 'proj.weight'])
    expect(r.report.skipped).to.deep.equal([{name: 'layer.bias', shape: [4], reason: '1-D tensor (bias or norm); --include-1d prunes it'}])
    expect(r.report.notes.join('\n')).to.match(/skipped 1 tensor: layer\.bias/)
    r = await pruneModel([w, bias, emb], {sparsity: 0.5, include1d: true})
    expect(r.tensors.map((t) => [t.name, t.csr.rows, t.csr.cols])).to.deep.equal([['layer.weight', 4, 4], ['layer.bias', 1, 4], ['proj.weight', 3, 4]])
    r = await pruneModel([w, bias, emb], {sparsity: 0.5, include: '^layer\\.', exclude: 'bias'})
    expect(r.tensors.map((t) => t.name)).to.deep.equal(['layer.weight'])
    expect(r.report.skipped.map((s) => s.reason)).to.deep.equal(['matched by --exclude', 'not matched by --include'])
    r = await pruneModel([w, bias, emb], {sparsity: 0.5, exclude: 'proj'})
    expect(r.tensors.map((t) => t.name)).to.deep.equal(['layer.weight'])
  })

  it('leaves embeddings and output heads dense unless includeEmbeddings (issue 22)', async () => {
    const names = ['model.embed_tokens.weight', 'lm_head.weight', 'transformer.wte.weight', 'gpt_neox.embed_out.weight', 'bert.embeddings.word_embeddings.weight', 'model.layers.0.mlp.up_proj.weight']
    const tensors = names.map((n, i) => randomTensor(n, [4, 4], 'f32', 'normal', 10 + i))
    let r = await pruneModel(tensors, {sparsity: 0.5})
    expect(r.tensors.map((t) => t.name)).to.deep.equal(['model.layers.0.mlp.up_proj.weight'])
    expect(r.report.skipped.map((s) => s.reason)).to.deep.equal(Array(5).fill('embedding or output head; --include-embeddings prunes it'))
    r = await pruneModel(tensors, {sparsity: 0.5, includeEmbeddings: true})
    expect(r.tensors.map((t) => t.name)).to.deep.equal(names)
  })

  it('stores the row swizzle by default and counts it in the CSR bytes', () => {
    const t = f32('w', [3, 3], [0, 0, 1, 2, 3, 4, 0, 5, 6])
    const p = pruneMagnitude(t, {sparsity: 0})
    expect(p.csr.rowIndices).to.deep.equal(Int32Array.from([1, 2, 0]))
    expect(p.report.csrBytes.f32).to.equal(6 * 8 + 4 * 4 + 3 * 4)
    expect(p.report.csrBytes.f16).to.equal(6 * 4 + 4 * 4 + 3 * 4)
    expect(p.report.denseBytes).to.deep.equal({f32: 36, f16: 18})
    expect(p.report.memorySaving.f32).to.equal(36 / 76)
    // Memory saving against dense of the same dtype: fp16 CSR against dense fp16.
    expect(p.report.memorySaving.f16).to.equal(18 / p.report.csrBytes.f16)
    const q = pruneMagnitude(t, {sparsity: 0, reorder: false})
    expect(q.csr.rowIndices).to.equal(undefined)
    expect(q.report.csrBytes.f32).to.equal(6 * 8 + 4 * 4)
  })

  it('uses int32 indices in the f16 encoding beyond 32768 columns', () => {
    const p = pruneMagnitude(randomTensor('w', [1, 32769], 'f32', 'normal', 1), {sparsity: 0.5, reorder: false})
    const nnz = p.report.nnz
    expect(p.report.csrBytes.f16).to.equal(nnz * (2 + 4) + 8)
    const q = pruneMagnitude(randomTensor('w', [1, 32768], 'f32', 'normal', 1), {sparsity: 0.5, reorder: false})
    expect(q.report.csrBytes.f16).to.equal(q.report.nnz * (2 + 2) + 8)
  })
})

describe('magnitude pruning: streaming', () => {
  it('loads one tensor at a time and hands each result to the sink before the next load', async () => {
    const {pruneTensors} = await import('../../src/pruning/magnitude.js')
    const tensors = [0, 1, 2].map((i) => randomTensor(`t${i}`, [6, 7], 'f32', 'normal', i))
    for (const scope of ['tensor', 'global'] as const) {
      const log: string[] = []
      const entries = tensors.map((t) => ({
        name: t.name,
        shape: t.shape,
        load: () => {
          log.push(`load ${t.name}`)
          return t
        },
      }))
      await pruneTensors(entries, {sparsity: 0.5, scope}, (p) => {
        log.push(`sink ${p.name}`)
      })
      const prune = ['load t0', 'sink t0', 'load t1', 'sink t1', 'load t2', 'sink t2']
      const scan = ['load t0', 'load t1', 'load t2']
      // Global scope: a histogram pass, a refining pass, then the pruning pass.
      expect(log, scope).to.deep.equal(scope === 'tensor' ? prune : [...scan, ...scan, ...prune])
    }
  })
})
