import {expect} from 'chai'

import {isIdentityOrder, reorderRows, rowSwizzle} from '../../src/reorder/swizzle.js'
import type {CsrMatrix} from '../../src/types.js'
import {rng} from '../pruning/reference.js'

const offsets = (lengths: number[]) => Int32Array.from([0, ...lengths.map(((s) => (l: number) => (s += l))(0))])

describe('row swizzle', () => {
  it('orders rows by length descending, ties by row number ascending', () => {
    expect([...rowSwizzle(offsets([2, 5, 0, 5, 1, 2]))]).to.deep.equal([1, 3, 0, 5, 4, 2])
    expect([...rowSwizzle(offsets([3, 3, 3]))]).to.deep.equal([0, 1, 2])
    expect([...rowSwizzle(offsets([0, 0, 7]))]).to.deep.equal([2, 0, 1])
    expect([...rowSwizzle(offsets([]))]).to.deep.equal([])
  })

  it('matches a stable comparison sort on random row lengths', () => {
    const r = rng(11)
    for (let trial = 0; trial < 50; trial++) {
      const rows = Math.floor(r() * 300)
      const lens = Array.from({length: rows}, () => Math.floor(r() * r() * 64))
      const expected = lens.map((_, i) => i).sort((a, b) => lens[b] - lens[a] || a - b)
      expect([...rowSwizzle(offsets(lens))]).to.deep.equal(expected)
    }
  })

  it('reorderRows stores the order and shares the arrays', () => {
    const csr: CsrMatrix = {rows: 3, cols: 4, rowOffsets: offsets([1, 3, 2]), columnIndices: Int32Array.from([0, 1, 2, 3, 0, 1]), values: new Float32Array(6), dtype: 'f32'}
    const out = reorderRows(csr)
    expect([...out.rowIndices!]).to.deep.equal([1, 2, 0])
    expect(out.columnIndices).to.equal(csr.columnIndices)
    expect(csr.rowIndices).to.equal(undefined)
    expect(isIdentityOrder(out.rowIndices)).to.equal(false)
    expect(isIdentityOrder(Int32Array.from([0, 1, 2]))).to.equal(true)
  })
})
