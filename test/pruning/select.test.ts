import {expect} from 'chai'

import {emitCsr} from '../../src/pruning/emit.js'
import {keyToMagnitude, prepareTensor} from '../../src/pruning/keys.js'
import {pruneMagnitude} from '../../src/pruning/magnitude.js'
import {GlobalCut, selectCut, selectCutSmall, SMALL_TENSOR} from '../../src/pruning/select.js'
import type {ValueDType} from '../../src/types.js'
import {csrArrays, csrFromMask, type Kind, magnitudes, pyRound, randomTensor, referenceMasks, rng} from './reference.js'

describe('linear-time selection vs a full sort', () => {
  const dtypes: Array<ValueDType | 'f64'> = ['f32', 'f16', 'bf16', 'f64']
  const kinds: Kind[] = ['normal', 'quantized', 'zeros', 'tiny', 'equal']
  const shapes = [[7, 96], [1, 333], [40, 7], [3, 5, 2, 4], [16, 16], [1, 1], [0, 5], [5, 0]]

  it('prunes exactly the entries the definition selects (240 seeded cases)', () => {
    let cases = 0
    const r = rng(7)
    for (const dtype of dtypes) {
      for (const kind of kinds) {
        for (const [si, shape] of shapes.entries()) {
          // Sparsities include 0, values whose S*n is x.5, and ones near 1.
          const sparsity = [0, 0.5, 0.9, 0.97, r() * 0.999, 0.25][(si + cases) % 6]
          const t = randomTensor('w', shape, dtype, kind, 1000 + cases)
          const numel = t.data.length
          const k = Math.min(numel, pyRound(sparsity * numel))
          const expected = csrFromMask(t, referenceMasks([t], k)[0])
          const got = pruneMagnitude(t, {sparsity, reorder: false})
          expect(csrArrays(got.csr), `${dtype} ${kind} [${shape}] S=${sparsity}`).to.deep.equal(expected)
          expect(got.report.pruned).to.equal(k)
          expect(got.report.nnz).to.equal(expected.columnIndices.length)
          cases++
        }
      }
    }
    expect(cases).to.equal(dtypes.length * kinds.length * shapes.length)
  })

  it('reports the threshold as the largest pruned magnitude', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const t = randomTensor('w', [33, 65], dtype, 'normal', 99)
      const k = pyRound(0.8 * t.data.length)
      const sorted = [...magnitudes(t)].sort((a, b) => a - b)
      const got = pruneMagnitude(t, {sparsity: 0.8})
      expect(got.report.threshold).to.equal(sorted[k - 1])
      // Everything stored is at least the threshold.
      const stored = magnitudes({name: 'v', dtype, data: got.csr.values!, shape: [got.csr.values!.length]})
      expect(Math.min(...stored)).to.be.at.least(got.report.threshold)
    }
  })

  it('selectCut counts below and ties consistently with a sort (random k)', () => {
    const r = rng(3)
    for (let trial = 0; trial < 60; trial++) {
      const dtype = (['f32', 'f16', 'bf16'] as const)[trial % 3]
      const t = randomTensor('w', [1 + Math.floor(r() * 50), 1 + Math.floor(r() * 50)], dtype, trial % 2 ? 'quantized' : 'normal', trial)
      const m = prepareTensor(t)
      const k = Math.floor(r() * (m.numel + 1))
      const cut = selectCut(m, k)
      const mags = [...magnitudes(t)].sort((a, b) => a - b)
      if (k === 0) {
        expect(cut).to.deep.equal({key: 0, ties: 0, below: 0})
        continue
      }
      const thr = keyToMagnitude(cut.key, m.dtype)
      expect(thr).to.equal(mags[k - 1])
      expect(cut.below).to.equal(mags.filter((x) => x < thr).length)
      expect(cut.below + cut.ties).to.equal(k)
      expect(cut.ties).to.be.within(1, mags.filter((x) => x === thr).length)
      // Emitting with the cut keeps numel - k entries minus the zeros the rule kept.
      const zerosKept = Math.max(0, mags.filter((x) => x === 0).length - k)
      expect(emitCsr(m, cut.key, cut.ties, m.numel - k).csr.rowOffsets[m.rows]).to.equal(m.numel - k - zerosKept)
    }
  })

  it('small tensors are cut by sorting, with the very cut the histograms find (issue 21: 10,000 tiny tensors took 30 s)', () => {
    const r = rng(21)
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      for (const kind of ['normal', 'quantized', 'equal'] as Kind[]) {
        const t = randomTensor('w', [70, 70], dtype, kind, 5)
        const m = prepareTensor(t)
        expect(m.numel).to.be.above(SMALL_TENSOR)
        for (const k of [0, 1, Math.floor(r() * m.numel), m.numel - 1, m.numel]) expect(selectCutSmall(m, k), `${dtype} ${kind} k=${k}`).to.deep.equal(selectCut(m, k))
        // The global histogram entry by entry (two small halves) and by bins (the whole) agree too.
        const small = new GlobalCut()
        const large = new GlobalCut()
        const halves = [0, 1].map((h) => prepareTensor({...t, shape: [35, 70], data: t.data.slice(h * 2450, (h + 1) * 2450)}))
        for (const x of halves) small.addHigh(x)
        large.addHigh(m)
        const k = Math.floor(r() * m.numel)
        expect(small.planLow(k)).to.equal(large.planLow(k))
        for (const x of halves) small.addLow(x)
        large.addLow(m)
        expect(small.finish()).to.deep.equal(large.finish())
      }
    }
  })
})

