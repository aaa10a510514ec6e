import {expect} from 'chai'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {attentionSuite, DEFAULT_SEED, dlmcSuite, inverseNormalCdf, llmSuite, parseBatchSizes, randomAttentionMask, randomPrunedCsr, rn50Ns, roundUp} from '../../src/bench/suites.js'
import {validateCsr} from '../../src/sparse/validate.js'
import {DLMC, ROOT} from '../helpers/cli.js'

const ANCHORS = join(DLMC, '..', 'anchors', 'dlmc_dev_h200.jsonl')

function skipNoSubset(ctx: Mocha.Context): void {
  console.log(`      (skipped: the DLMC subset is not at ${DLMC}; it is for benchmarks, fixtures/dlmc-mini covers the logic)`)
  ctx.skip()
}

describe('bench suites', () => {
  describe('dlmc', () => {
    it('rounds N up to a multiple of 8 and drops duplicates', () => {
      expect(roundUp(196)).to.equal(200)
      expect(roundUp(49)).to.equal(56)
      expect(roundUp(1)).to.equal(8)
      expect(roundUp(3136)).to.equal(3136)
      expect(rn50Ns(196, [1, 8])).to.deep.equal([200, 1568])
      expect(rn50Ns(1, [1, 8])).to.deep.equal([8])
      expect(rn50Ns(49, [1, 8, 256])).to.deep.equal([56, 392, 12544])
    })

    it('parses rn50_batchsizes.txt and rejects malformed lines', () => {
      expect(parseBatchSizes('a,3136\n\nb , 49\n')).to.deep.equal(new Map([['a', 3136], ['b', 49]]))
      expect(() => parseBatchSizes('a;3')).to.throw(/expected "layer,spatial_size"/)
    })

    // A fresh clone has the bundled excerpt (fixtures/dlmc-mini); the full subset beside the
    // checkout (../shared/dlmc) is for benchmarks, and the two tests after this one check it when present.
    it('reads a DLMC-shaped tree: paper N per ResNet-50 layer from rn50_batchsizes.txt (bundled excerpt)', async () => {
      const mini = join(ROOT, 'fixtures', 'dlmc-mini')
      const suite = await dlmcSuite(mini)
      expect(suite.map((e) => e.file)).to.deep.equal([
        'rn50/magnitude_pruning/0.98/bottleneck_1_block_group1_1_1.smtx',
        'rn50/magnitude_pruning/0.98/bottleneck_3_block_group1_1_1.smtx',
        'rn50/magnitude_pruning/0.98/initial_conv.smtx',
      ])
      expect(suite.every((e) => e.group === 'rn50' && e.sparsity === 0.98)).to.equal(true)
      expect(suite[2].ns).to.deep.equal([12544, 100352])
      expect(suite[0].ns).to.deep.equal([3136, 25088])
      const anchors = readFileSync(join(mini, 'anchors.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {file: string; n: number})
      expect(new Set(suite.flatMap((e) => e.ns.map((n) => `${e.file}|${n}`)))).to.deep.equal(new Set(anchors.map((a) => `${a.file}|${a.n}`)))
      expect((await dlmcSuite(mini, {ns: [16]})).every((e) => e.ns.length === 1 && e.ns[0] === 16)).to.equal(true)
    })

    it('has exactly the (file, N) problems of the anchors file', async function () {
      if (!existsSync(ANCHORS)) return skipNoSubset(this)
      const suite = await dlmcSuite(DLMC)
      expect(suite).to.have.length(112)
      const ours = new Set(suite.flatMap((e) => e.ns.map((n) => `${e.file}|${n}`)))
      const anchors = readFileSync(ANCHORS, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {file: string; n: number})
      const theirs = new Set(anchors.map((a) => `${a.file}|${a.n}`))
      expect(ours.size).to.equal(219)
      expect([...ours].sort()).to.deep.equal([...theirs].sort())
    })

    it('uses the paper sizes: Transformer N 256 and 2048, ResNet-50 spatial size x batch', async function () {
      if (!existsSync(ANCHORS)) return skipNoSubset(this)
      const suite = await dlmcSuite(DLMC)
      const t = suite.find((e) => e.file === 'transformer/magnitude_pruning/0.9/body_decoder_layer_0_ffn_conv1_fully_connected.smtx')!
      expect(t.ns).to.deep.equal([256, 2048])
      expect(t.group).to.equal('transformer')
      expect(t.sparsity).to.equal(0.9)
      const conv = suite.find((e) => e.file === 'rn50/magnitude_pruning/0.98/initial_conv.smtx')!
      expect(conv.ns).to.deep.equal([12544, 100352])
      const fc = suite.find((e) => e.file === 'rn50/magnitude_pruning/0.98/final_dense.smtx')!
      expect(fc.ns).to.deep.equal([8])
      const one = await dlmcSuite(DLMC, {batches: [1]})
      expect(one.find((e) => e.file === conv.file)!.ns).to.deep.equal([12544])
      const forced = await dlmcSuite(DLMC, {ns: [16]})
      expect(forced.every((e) => e.ns.length === 1 && e.ns[0] === 16)).to.equal(true)
    })

    it('says what is wrong with a folder that is not a DLMC tree', async () => {
      let error: unknown
      try {
        await dlmcSuite(join(DLMC, 'no-such-folder'))
      } catch (e) {
        error = e
      }
      expect((error as Error).message).to.match(/is not a folder/)
    })
  })

  describe('llm', () => {
    it('has the 7B shapes at every sparsity level and N', () => {
      const s = llmSuite()
      expect(s).to.have.length(18)
      expect([...new Set(s.map((e) => `${e.rows}x${e.cols}`))]).to.deep.equal(['4096x4096', '11008x4096', '4096x11008'])
      expect([...new Set(s.map((e) => e.sparsity))]).to.deep.equal([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
      expect(s[0].ns).to.deep.equal([1, 8, 16, 32, 64, 256, 2048])
      expect(s.every((e) => e.group === 'llm')).to.equal(true)
      expect(llmSuite({sparsities: [0.9], ns: [16]}).map((e) => e.file)).to.deep.equal(['llm/4096x4096/0.9', 'llm/11008x4096/0.9', 'llm/4096x11008/0.9'])
    })

    it('makes magnitude-pruned random layers: density 1 - s, values beyond the threshold, Sputnik row order', () => {
      const rows = 512
      const cols = 1024
      const csr = randomPrunedCsr(rows, cols, 0.9, 7)
      validateCsr(csr, 'generated')
      const nnz = csr.rowOffsets[rows]
      const expected = rows * cols * 0.1
      expect(Math.abs(nnz - expected)).to.be.below(5 * Math.sqrt(expected)) // binomial spread
      const t = -inverseNormalCdf(0.05) // |w| > t keeps 10% of N(0, 1)
      let pos = 0
      for (const v of csr.values as Float32Array) {
        expect(Math.abs(v)).to.be.at.least(t * (1 - 1e-6))
        if (v > 0) pos++
      }
      expect(pos / nnz).to.be.closeTo(0.5, 0.02)
      // Rows ordered by length, longest first.
      const order = csr.rowIndices!
      const len = (r: number) => csr.rowOffsets[r + 1] - csr.rowOffsets[r]
      for (let i = 1; i < rows; i++) expect(len(order[i - 1])).to.be.at.least(len(order[i]))
      // Same seed, same matrix; another seed, another.
      const again = randomPrunedCsr(rows, cols, 0.9, 7)
      expect(Array.from(again.columnIndices.subarray(0, 50))).to.deep.equal(Array.from(csr.columnIndices.subarray(0, 50)))
      const other = randomPrunedCsr(rows, cols, 0.9, 8)
      expect(Array.from(other.columnIndices.subarray(0, 50))).to.not.deep.equal(Array.from(csr.columnIndices.subarray(0, 50)))
    })

    it('inverse normal CDF matches known quantiles', () => {
      expect(inverseNormalCdf(0.5)).to.be.closeTo(0, 1e-9)
      expect(inverseNormalCdf(0.975)).to.be.closeTo(1.959963985, 1e-7)
      expect(inverseNormalCdf(0.05)).to.be.closeTo(-1.644853627, 1e-7)
      expect(inverseNormalCdf(1e-6)).to.be.closeTo(-4.753424309, 1e-6)
      expect(() => inverseNormalCdf(0)).to.throw(RangeError)
    })
  })

  describe('attention', () => {
    it('has seq x seq masks for seq 2048, 4096, 8192 at every sparsity, benched at head dims 64 and 128', () => {
      const s = attentionSuite()
      expect(s.map((e) => e.file)).to.deep.equal(['attention/2048x2048/0.9', 'attention/4096x4096/0.9', 'attention/8192x8192/0.9'])
      expect(s.map((e) => [e.rows, e.cols])).to.deep.equal([[2048, 2048], [4096, 4096], [8192, 8192]])
      expect(s.every((e) => e.group === 'attention' && e.sparsity === 0.9)).to.equal(true)
      expect(s[0].ns).to.deep.equal([64, 128])
      const two = attentionSuite({sparsities: [0.9, 0.95], ns: [32]})
      expect(two).to.have.length(6)
      expect(two.map((e) => e.file).slice(0, 2)).to.deep.equal(['attention/2048x2048/0.9', 'attention/2048x2048/0.95'])
      expect(two.every((e) => e.ns.length === 1 && e.ns[0] === 32)).to.equal(true)
    })

    it('makes masks with exactly round((1 - s) seq) sorted, distinct columns per row', () => {
      const [entry] = attentionSuite({seed: 3})
      const csr = entry.generate!()
      validateCsr(csr, 'generated')
      expect([csr.rows, csr.cols]).to.deep.equal([2048, 2048])
      const k = Math.round(0.1 * 2048) // 205
      const bad: string[] = []
      for (let r = 0; r < csr.rows; r++) {
        if (csr.rowOffsets[r + 1] - csr.rowOffsets[r] !== k) bad.push(`row ${r}: ${csr.rowOffsets[r + 1] - csr.rowOffsets[r]} entries`)
        for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) {
          const c = csr.columnIndices[i]
          if (!(c >= 0 && c < 2048 && (i === csr.rowOffsets[r] || c > csr.columnIndices[i - 1]))) bad.push(`row ${r}: column ${c} at ${i}`)
        }
      }
      expect(bad.slice(0, 5)).to.deep.equal([])
      expect(csr.values).to.be.instanceOf(Float32Array)
      expect((csr.values as Float32Array).every((v) => v >= 0 && v < 1)).to.equal(true)
      expect(Array.from(csr.rowIndices!.subarray(0, 4))).to.deep.equal([0, 1, 2, 3]) // equal rows: identity order
      // Columns spread over the whole row (uniform): each quarter holds about a quarter.
      const quarter = new Array(4).fill(0)
      for (const c of csr.columnIndices) quarter[c >> 9]++
      for (const q of quarter) expect(q / csr.columnIndices.length).to.be.closeTo(0.25, 0.01)
    })

    it('is deterministic for a seed and differs for another; edge densities are exact', () => {
      const a = randomAttentionMask(256, 0.75, 'a')
      expect(Array.from(randomAttentionMask(256, 0.75, 'a').columnIndices)).to.deep.equal(Array.from(a.columnIndices))
      expect(Array.from(randomAttentionMask(256, 0.75, 'b').columnIndices)).to.not.deep.equal(Array.from(a.columnIndices))
      expect(attentionSuite({seed: 1})[0].generate!().columnIndices.subarray(0, 64)).to.not.deep.equal(attentionSuite({seed: 2})[0].generate!().columnIndices.subarray(0, 64))
      // Without a seed: seed 0, the default of every command (not the 42 the suites once had).
      const first = (seed?: number) => Array.from(attentionSuite(seed === undefined ? {} : {seed})[0].generate!().columnIndices.subarray(0, 64))
      expect(first()).to.deep.equal(first(DEFAULT_SEED)).and.to.not.deep.equal(first(42))
      expect(DEFAULT_SEED).to.equal(0)
      const dense = randomAttentionMask(64, 0, 1)
      expect(Array.from(dense.columnIndices.subarray(0, 64))).to.deep.equal(Array.from({length: 64}, (_, i) => i))
      expect(randomAttentionMask(64, 0.999, 1).rowOffsets[64]).to.equal(0)
      expect(() => randomAttentionMask(64, 1, 1)).to.throw(/sparsity must be in \[0, 1\)/)
      expect(() => randomAttentionMask(0, 0.5, 1)).to.throw(/positive integer/)
    })
  })
})
