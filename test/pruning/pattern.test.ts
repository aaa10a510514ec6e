import {expect} from 'chai'

import {InputError} from '../../src/errors.js'
import {pruneMagnitude} from '../../src/pruning/magnitude.js'
import {nmPrunedCount, parsePattern} from '../../src/pruning/pattern.js'
import type {DenseTensor} from '../../src/types.js'
import {csrArrays, csrFromMask, randomTensor, referenceNmMask} from './reference.js'

const f32 = (shape: number[], values: number[]): DenseTensor => ({name: 'w', shape, dtype: 'f32', data: Float32Array.from(values)})

describe('N:M pruning', () => {
  it('keeps the N largest of every M consecutive weights in a row', () => {
    const p = pruneMagnitude(f32([2, 8], [1, -4, 3, 2, 0.5, 0.1, -0.2, 0.3, 5, 6, 7, 8, -1, 1, -2, 2]), {pattern: '2:4', reorder: false})
    expect([...p.csr.columnIndices]).to.deep.equal([1, 2, 4, 7, 2, 3, 6, 7])
    expect([...p.csr.rowOffsets]).to.deep.equal([0, 4, 8])
    expect(p.report.sparsity).to.equal(0.5)
    expect(p.report.targetSparsity).to.equal(0.5)
    // Largest pruned |w|: 6 (row 1, first group).
    expect(p.report.threshold).to.equal(6)
  })

  it('among equal magnitudes prunes the earlier weights (same order rule as unstructured)', () => {
    const p = pruneMagnitude(f32([1, 4], [1, -1, 1, -1]), {pattern: '2:4', reorder: false})
    expect([...p.csr.columnIndices]).to.deep.equal([2, 3])
    const q = pruneMagnitude(f32([1, 4], [2, 1, 1, 1]), {pattern: '1:4', reorder: false})
    expect([...q.csr.columnIndices]).to.deep.equal([0])
    const r = pruneMagnitude(f32([1, 4], [1, 1, 2, 1]), {pattern: '2:4', reorder: false})
    expect([...r.csr.columnIndices]).to.deep.equal([2, 3])
  })

  it('a partial last group of L < M weights keeps min(N, L)', () => {
    // cols = 6 with 2:4: groups [0..3] and [4, 5]; the partial group keeps both.
    const p = pruneMagnitude(f32([1, 6], [1, 2, 3, 4, 5, 6]), {pattern: '2:4', reorder: false})
    expect([...p.csr.columnIndices]).to.deep.equal([2, 3, 4, 5])
    expect(p.report.pruned).to.equal(2)
    expect(p.report.targetSparsity).to.equal(2 / 6)
    // cols = 5 with 1:3: groups [0..2] and [3, 4]; the partial group keeps 1 of 2.
    const q = pruneMagnitude(f32([1, 5], [3, 1, 2, 9, 8]), {pattern: '1:3', reorder: false})
    expect([...q.csr.columnIndices]).to.deep.equal([0, 3])
    expect(nmPrunedCount(1, 5, {n: 1, m: 3})).to.equal(3)
    expect(nmPrunedCount(3, 7, {n: 2, m: 4})).to.equal(3 * (2 + 1))
    expect(nmPrunedCount(2, 1, {n: 2, m: 4})).to.equal(0)
  })

  it('never stores zeros: a group of zeros keeps none and the report says over-sparse', () => {
    const p = pruneMagnitude(f32([1, 8], [0, 0, 0, 1, 1, 2, 3, 4]), {pattern: '2:4', reorder: false})
    expect([...p.csr.columnIndices]).to.deep.equal([3, 6, 7])
    expect(p.report.overSparse).to.equal(true)
    expect(p.report.extraZeros).to.equal(1)
  })

  it('matches the brute-force reference on seeded tensors of every dtype and pattern', () => {
    const patterns: Array<[number, number]> = [[2, 4], [1, 4], [4, 8], [1, 2], [3, 3], [2, 5], [7, 20], [1, 33]]
    let i = 0
    for (const [n, m] of patterns) {
      for (const dtype of ['f32', 'f16', 'bf16', 'f64'] as const) {
        for (const kind of ['normal', 'quantized', 'equal'] as const) {
          const shape = [[7, 96], [5, 37], [3, 4, 5]][i % 3]
          const t = randomTensor('w', shape, dtype, kind, 500 + i++)
          const p = pruneMagnitude(t, {pattern: `${n}:${m}`, reorder: false})
          expect(csrArrays(p.csr), `${n}:${m} ${dtype} ${kind} [${shape}]`).to.deep.equal(csrFromMask(t, referenceNmMask(t, n, m)))
        }
      }
    }
  })

  it('refuses NaN/Inf weights like unstructured pruning', () => {
    expect(() => pruneMagnitude(f32([2, 4], [1, 2, 3, 4, 5, Number.NaN, 7, Infinity]), {pattern: '2:4'})).to.throw(InputError, /'w' has 1 NaN and 1 infinite weights/)
  })

  it('parses patterns', () => {
    expect(parsePattern('2:4')).to.deep.equal({kind: 'n:m', n: 2, m: 4})
    expect(parsePattern(' Unstructured ')).to.deep.equal({kind: 'unstructured'})
    expect(parsePattern(undefined)).to.deep.equal({kind: 'unstructured'})
    for (const bad of ['2:', ':4', '2/4', '-1:4', '2.5:4', '4:2', '0:4', '1:70000']) expect(() => parsePattern(bad), bad).to.throw(/pattern/)
  })
})
