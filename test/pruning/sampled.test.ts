import {expect} from 'chai'

import {InputError} from '../../src/errors.js'
import {prunedCount} from '../../src/pruning/amount.js'
import {emitCsr} from '../../src/pruning/emit.js'
import {prepareTensor} from '../../src/pruning/keys.js'
import {pruneMagnitude} from '../../src/pruning/magnitude.js'
import {pruneSampledF32, SAMPLED_MIN_NUMEL} from '../../src/pruning/sampled.js'
import {selectCut} from '../../src/pruning/select.js'
import type {CsrMatrix, DenseTensor} from '../../src/types.js'
import {csrArrays, csrFromMask, normal, randomTensor, referenceMasks, rng} from './reference.js'

/** The exact three-pass path (itself checked against a full sort in select.test.ts). */
function exact(t: DenseTensor, k: number) {
  const m = prepareTensor(t)
  const cut = selectCut(m, k)
  return emitCsr(m, cut.key, cut.ties, m.numel - k).csr
}

function bigTensor(kind: 'normal' | 'quantized' | 'zeros' | 'scaled-rows' | 'ascending', seed: number): DenseTensor {
  const rows = 1024
  const cols = 1100
  const r = rng(seed)
  const data = new Float32Array(rows * cols)
  for (let i = 0; i < data.length; i++) {
    const row = Math.floor(i / cols)
    switch (kind) {
      case 'normal':
        data[i] = normal(r)
        break
      case 'quantized':
        data[i] = (Math.floor(r() * 15) - 7) / 8
        break
      case 'zeros':
        data[i] = r() < 0.7 ? 0 : normal(r)
        break
      case 'scaled-rows': // row scales span 6 orders of magnitude
        data[i] = normal(r) * 10 ** ((row % 7) - 3)
        break
      case 'ascending':
        data[i] = i * 1e-3
        break
    }
  }
  return {name: kind, shape: [rows, cols], dtype: 'f32', data}
}

/** Typed-array comparison (chai's deep equality is slow on a million entries). */
function expectSameCsr(a: CsrMatrix, b: CsrMatrix, what: string): void {
  expect([a.rows, a.cols], what).to.deep.equal([b.rows, b.cols])
  const same = (x: ArrayLike<number>, y: ArrayLike<number>, field: string) => {
    expect(x.length, `${what}: ${field}.length`).to.equal(y.length)
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) expect.fail(`${what}: ${field}[${i}] = ${x[i]}, expected ${y[i]}`)
  }
  same(a.rowOffsets, b.rowOffsets, 'rowOffsets')
  same(a.columnIndices, b.columnIndices, 'columnIndices')
  const bits = (v: CsrMatrix['values']) => new Uint32Array(v!.buffer, v!.byteOffset, v!.length)
  same(bits(a.values), bits(b.values), 'values')
}

describe('one-pass sampled pruning (large f32 tensors)', () => {
  it('is taken for large f32 tensors and agrees with the exact path', function () {
    this.timeout(60_000)
    let taken = 0
    for (const kind of ['normal', 'quantized', 'zeros', 'scaled-rows', 'ascending'] as const) {
      const t = bigTensor(kind, 17)
      expect(t.data.length).to.be.at.least(SAMPLED_MIN_NUMEL)
      for (const s of [0.001, 0.5, 0.9, 0.999]) {
        const k = prunedCount(s, t.data.length)
        const fast = pruneSampledF32(prepareTensor(t), k)
        const want = exact(t, k)
        if (fast) {
          taken++
          expectSameCsr(fast.csr, want, `${kind} S=${s}`)
        }
      }
    }
    // Quantized and zero-heavy data can make the guess useless; the rest must use it.
    expect(taken).to.be.at.least(12)
  })

  it('is what pruneMagnitude uses for a large f32 tensor', () => {
    const t = bigTensor('normal', 23)
    const k = prunedCount(0.9, t.data.length)
    const got = pruneMagnitude(t, {sparsity: 0.9, reorder: false})
    expectSameCsr(got.csr, exact(t, k), 'pruneMagnitude')
    // The fast path returns views with some slack behind them.
    expect(got.csr.values!.buffer.byteLength).to.be.greaterThan(got.csr.values!.byteLength)
  })

  it('falls back (returns null) when the guess is wrong, and is exact when it is right', () => {
    const t = randomTensor('w', [40, 50], 'f32', 'quantized', 3)
    const m = prepareTensor(t)
    const k = prunedCount(0.6, m.numel)
    const keyOf = (x: number) => new Uint32Array(Float32Array.of(Math.abs(x)).buffer)[0]
    // lo above the cut: fewer than k entries below it is required.
    expect(pruneSampledF32(m, k, {lo: keyOf(0.75), capacity: m.numel})).to.equal(null)
    // Capacity too small for the entries above lo.
    expect(pruneSampledF32(m, k, {lo: keyOf(0.25), capacity: 10})).to.equal(null)
    // A good guess, on data full of ties at the cut.
    for (const lo of [0.25, 0.5]) {
      const got = pruneSampledF32(m, k, {lo: keyOf(lo), capacity: m.numel})!
      expect(csrArrays(got.csr), `lo ${lo}`).to.deep.equal(csrFromMask(t, referenceMasks([t], k)[0]))
    }
  })

  it('still refuses NaN/Inf with whole-tensor counts', function () {
    this.timeout(30_000)
    const t = bigTensor('normal', 5)
    t.data[12345] = Number.NaN
    t.data[999_999] = -Infinity
    expect(() => pruneMagnitude(t, {sparsity: 0.9})).to.throw(InputError, /'normal' has 1 NaN and 1 infinite weights \(2 of 1126400\)/)
  })
})
