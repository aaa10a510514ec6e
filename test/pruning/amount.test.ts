import {expect} from 'chai'

import {UsageError} from '../../src/errors.js'
import {prunedCount, roundHalfEven, validateSparsity} from '../../src/pruning/amount.js'

describe('pruning amount', () => {
  it('rounds halves to even, unlike Math.round', () => {
    expect([0.5, 1.5, 2.5, 3.5, 4.5, 1e9 + 0.5].map(roundHalfEven)).to.deep.equal([0, 2, 2, 4, 4, 1e9])
    expect([0.49, 0.51, 2.4999, 7].map(roundHalfEven)).to.deep.equal([0, 1, 2, 7])
    expect(Math.round(2.5)).to.equal(3) // the trap this avoids
  })

  it('matches Python round(S * n) (table computed with CPython 3)', () => {
    // [S, n, round(S * n)] from python3 -c 'print(round(S * n))'.
    const table: Array<[number, number, number]> = [
      [0.5, 7, 4], [0.5, 5, 2], [0.5, 1, 0], [0.5, 3, 2], [0.25, 10, 2], [0.25, 2, 0], [0.75, 2, 2], [0.75, 6, 4],
      [0.3, 5, 2], [0.7, 5, 4], [0.1, 5, 0], [0.1, 15, 2], [0.1, 25, 2], [0.9, 5, 4], [0.9, 15, 14], [0.9, 25, 22],
      [0.15, 10, 2], [0.35, 10, 4], [0.45, 10, 4], [0.05, 10, 0], [0.999, 1000, 999], [0.9999, 10, 10], [0.6, 7, 4],
      [0.125, 4, 0], [0.375, 4, 2], [0.625, 4, 2], [0.875, 4, 4], [0.5, 0, 0], [0, 9, 0],
    ]
    for (const [s, n, expected] of table) expect(prunedCount(s, n), `round(${s} * ${n})`).to.equal(expected)
  })

  it('accepts S in [0, 1) and refuses the rest with a UsageError (exit 2)', () => {
    for (const s of [0, 0.5, 0.999999]) expect(() => validateSparsity(s)).not.to.throw()
    for (const s of [-0.1, 1, 1.5, Number.NaN, Infinity, -Infinity]) {
      try {
        validateSparsity(s)
        expect.fail(`accepted ${s}`)
      } catch (error) {
        expect(error).to.be.instanceOf(UsageError)
        expect((error as UsageError).exitCode).to.equal(2)
        expect((error as UsageError).message).to.match(/\[0, 1\)/)
      }
    }
  })
})
