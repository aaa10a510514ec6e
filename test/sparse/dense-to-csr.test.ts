import {expect} from 'chai'

import {csrToDense, denseToCsr, matrixShape} from '../../src/sparse/dense-to-csr.js'
import {validateCsr} from '../../src/sparse/validate.js'
import {createRng} from '../../src/sparse/random.js'
import {float32ToHalf} from '../../src/sparse/half.js'

describe('sparse/dense-to-csr', () => {
  it('views N-D tensors as [shape[0], product of the rest]', () => {
    expect(matrixShape([64, 3, 7, 7])).to.deep.equal([64, 147])
    expect(matrixShape([5])).to.deep.equal([1, 5])
    expect(matrixShape([])).to.deep.equal([1, 1])
  })

  it('drops zeros (including -0), keeps NaN, and round trips', () => {
    const data = Float32Array.of(0, 1, -0, NaN, 0, 0, 2, 0, -3)
    const {csr} = denseToCsr({name: 'x', shape: [3, 3], dtype: 'f32', data})
    validateCsr(csr)
    expect(Array.from(csr.rowOffsets)).to.deep.equal([0, 1, 2, 4])
    expect(Array.from(csr.columnIndices)).to.deep.equal([1, 0, 0, 2])
    const back = csrToDense({name: 'x', shape: [3, 3], csr})
    expect(Array.from(back.data).map((v) => (Number.isNaN(v) ? 'nan' : v))).to.deep.equal([0, 1, 0, 'nan', 0, 0, 2, 0, -3])
  })

  it('keeps f16/bf16 bits and converts between dtypes; random shapes round trip', () => {
    const rng = createRng(11)
    for (const [rows, cols] of [[7, 96], [1, 1], [13, 40], [0, 4]]) {
      const f = Float32Array.from({length: rows * cols}, () => (rng.nextFloat() < 0.5 ? 0 : rng.normal()))
      const h = float32ToHalf(f, 'f16')
      const named = denseToCsr({name: 'h', shape: [rows, cols], dtype: 'f16', data: h})
      expect(named.csr.dtype).to.equal('f16')
      const back = csrToDense(named)
      expect(Array.from(back.data)).to.deep.equal(Array.from(h).map((b) => ((b & 0x7fff) === 0 ? 0 : b)))
      const asF32 = denseToCsr({name: 'f', shape: [rows, cols], dtype: 'f64', data: Float64Array.from(f)})
      expect(asF32.csr.dtype).to.equal('f32')
      expect(Array.from(csrToDense(asF32).data)).to.deep.equal(Array.from(f))
    }
  })
})
