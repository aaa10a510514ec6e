import {expect} from 'chai'

import {geomean, median, quantile, summarize} from '../../src/bench/stats.js'

describe('bench statistics', () => {
  it('quantiles interpolate linearly between closest ranks (NumPy default)', () => {
    const v = [10, 1, 4, 3, 2, 6, 5, 9, 8, 7] // 1..10 shuffled
    expect(median(v)).to.equal(5.5)
    expect(quantile(v, 0.1)).to.be.closeTo(1.9, 1e-12) // numpy.percentile(range(1,11), 10)
    expect(quantile(v, 0.9)).to.be.closeTo(9.1, 1e-12)
    expect(quantile(v, 0)).to.equal(1)
    expect(quantile(v, 1)).to.equal(10)
    expect(median([3])).to.equal(3)
    expect(median([1, 2, 3])).to.equal(2)
    expect(Number.isNaN(median([]))).to.equal(true)
    expect(() => quantile(v, 1.5)).to.throw(RangeError)
  })

  it('does not reorder its input', () => {
    const v = new Float64Array([3, 1, 2])
    median(v)
    expect(Array.from(v)).to.deep.equal([3, 1, 2])
  })

  it('summarize gives median, p10, p90, min, mean and count', () => {
    const s = summarize(Float64Array.from({length: 101}, (_, i) => i / 100)) // 0, 0.01, ... 1
    expect(s.count).to.equal(101)
    expect(s.median).to.be.closeTo(0.5, 1e-12)
    expect(s.p10).to.be.closeTo(0.1, 1e-12)
    expect(s.p90).to.be.closeTo(0.9, 1e-12)
    expect(s.min).to.equal(0)
    expect(s.mean).to.be.closeTo(0.5, 1e-12)
    expect(summarize([]).count).to.equal(0)
  })

  it('geomean of ratios skips missing (non-positive, non-finite) values', () => {
    expect(geomean([2, 8])).to.be.closeTo(4, 1e-12)
    expect(geomean([0.5, 2])).to.be.closeTo(1, 1e-12)
    expect(geomean([4, Number.NaN, 0, -1, Infinity])).to.be.closeTo(4, 1e-12)
    expect(Number.isNaN(geomean([]))).to.equal(true)
  })
})
