import {expect} from 'chai'

import {loadAddon} from '../../src/kernels/binding.js'
import {pruneMagnitude} from '../../src/pruning/index.js'
import {createRng} from '../../src/sparse/random.js'
import {firstNot24, isTwoFour, not24Message} from '../../src/sparse/two-four.js'
import type {CsrMatrix} from '../../src/types.js'

/** A one-row-per-list CSR with f16 values 1.0 (0x3c00) unless given. */
function csrOf(cols: number, rows: number[][], values?: number[]): CsrMatrix {
  const rowOffsets = new Int32Array(rows.length + 1)
  rows.forEach((r, i) => (rowOffsets[i + 1] = rowOffsets[i] + r.length))
  const columnIndices = Int32Array.from(rows.flat())
  const v = Uint16Array.from(values ?? columnIndices, (x, i) => (values ? x : 0x3c00 + i))
  return {rows: rows.length, cols, rowOffsets, columnIndices, values: v, dtype: 'f16'}
}

describe('2:4 structure (firstNot24, isTwoFour)', () => {
  it('accepts at most two nonzeros in every group of four columns, partial last group included', () => {
    expect(firstNot24(csrOf(10, [[0, 3, 4, 5, 8, 9], [], [1, 2, 6, 7]]))).to.equal(null)
    expect(isTwoFour(csrOf(3, [[0, 2]]))).to.equal(true)
    expect(isTwoFour(csrOf(0, [[], []]))).to.equal(true)
  })

  it('names the first row, then its leftmost group, with the group count (the addon text)', () => {
    const csr = csrOf(16, [[0, 1], [4, 5, 6, 12, 13, 14, 15], [0, 1, 2]])
    const g = firstNot24(csr)
    expect(g).to.deep.equal({row: 1, column: 4, count: 3})
    expect(not24Message(g!)).to.equal('not 2:4: row 1, columns 4..7 hold 3 nonzeros (at most 2)')
    // A later group with more nonzeros does not hide the leftmost one.
    expect(firstNot24(csrOf(16, [[4, 5, 6, 12, 13, 14, 15]]))).to.deep.equal({row: 0, column: 4, count: 3})
    expect(firstNot24(csrOf(16, [[12, 13, 14, 15]]))).to.deep.equal({row: 0, column: 12, count: 4})
  })

  it('does not count stored zeros (+0, -0 in half; 0 in f32), as the native check; counts every entry of a pattern', () => {
    // Columns 0..3 all stored, two of them zeros (+0 and -0 in f16).
    const half = csrOf(4, [[0, 1, 2, 3]], [0x3c00, 0x0000, 0x8000, 0x4000])
    expect(isTwoFour(half)).to.equal(true)
    expect(isTwoFour({...half, values: Float32Array.from([1, 0, -0, 2]), dtype: 'f32'})).to.equal(true)
    expect(isTwoFour({...half, values: Float32Array.from([1, 0, 3, 2]), dtype: 'f32'})).to.equal(false)
    expect(isTwoFour({...half, values: null})).to.equal(false)
    // Values of another dtype can be given for the same pattern (a bench case's values).
    expect(isTwoFour(half, Uint16Array.from([1, 2, 3, 0]))).to.equal(false)
  })

  it('handles unsorted column indices', () => {
    expect(firstNot24(csrOf(8, [[5, 0, 4]]))).to.equal(null)
    expect(firstNot24(csrOf(8, [[5, 0, 6, 1, 4]]))).to.deep.equal({row: 0, column: 4, count: 3})
  })

  it('agrees with the pruner: 2:4-pruned matrices are 2:4, and 3:4 ones are not', () => {
    const rows = 33
    const cols = 70
    const data = createRng(5).fillNormal(new Float32Array(rows * cols))
    const {csr} = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {pattern: '2:4'})
    expect(isTwoFour(csr)).to.equal(true)
    const {csr: c34} = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {pattern: '3:4'})
    expect(firstNot24(c34)).to.deep.equal({row: 0, column: 0, count: 3})
  })

  it('agrees with the addon (sp24Format) on random patterns', function () {
    let addon: ReturnType<typeof loadAddon>
    try {
      addon = loadAddon()
    } catch (error) {
      console.log(`      (skipped: ${(error as Error).message})`)
      return this.skip()
    }
    const rng = createRng(11)
    for (let trial = 0; trial < 40; trial++) {
      const rows = 1 + (rng.nextUint32() % 20)
      const cols = 1 + (rng.nextUint32() % 40)
      const lists: number[][] = []
      for (let r = 0; r < rows; r++) lists.push([...Array(cols).keys()].filter(() => rng.nextFloat() < 0.45))
      const csr = csrOf(cols, lists)
      const g = firstNot24(csr)
      const run = () => addon.sp24Format({m: rows, k: cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values as Uint16Array})
      if (g) expect(run, `trial ${trial}`).to.throw(RangeError, not24Message(g))
      else expect(run, `trial ${trial}`).to.not.throw()
    }
  })
})
