import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {implList, planBench} from '../../src/bench/plan.js'
import {runBench} from '../../src/bench/run.js'
import {LLM_NM_NS, llmSuite, randomNMPrunedCsr} from '../../src/bench/suites.js'
import {readTuneCache, spmmVariantName, tuneKey} from '../../src/bench/tune.js'
import type {BenchNative, NativeBenchArgs} from '../../src/bench/types.js'
import {UsageError} from '../../src/errors.js'
import {cudaInfo} from '../../src/kernels/index.js'
import {writeCsrNpz, writeSafetensors} from '../../src/formats/index.js'
import {pruneMagnitude} from '../../src/pruning/index.js'
import {createRng} from '../../src/sparse/random.js'
import {firstNot24, isTwoFour} from '../../src/sparse/two-four.js'
import {validateCsr} from '../../src/sparse/validate.js'
import {fakeNative} from './fake-native.js'
import {ok, tempDirs} from './helpers.js'

const FAST = {minReps: 3, minMs: 1, warmup: 1}

const tempDir = tempDirs('bench-24-')

async function rejection(fn: () => Promise<unknown>): Promise<Error & {exitCode?: number}> {
  try {
    await fn()
  } catch (error) {
    return error as Error & {exitCode?: number}
  }
  throw new Error('expected an error')
}

describe('bench on 2:4 matrices', () => {
  describe('--suite llm --pattern 2:4', () => {
    it('has the three 7B shapes once each, named for the pattern, at N 1 ... 2048 (1024 included)', () => {
      const s = llmSuite({pattern: '2:4'})
      expect(s.map((e) => e.file)).to.deep.equal(['llm/4096x4096/2:4', 'llm/11008x4096/2:4', 'llm/4096x11008/2:4'])
      expect(s.every((e) => e.group === 'llm-2:4' && e.sparsity === 0.5)).to.equal(true)
      expect(s[0].ns).to.deep.equal([1, 8, 16, 32, 64, 256, 1024, 2048])
      expect([...LLM_NM_NS]).to.deep.equal(s[0].ns)
      expect(llmSuite({pattern: '2:4', ns: [16]})[2].ns).to.deep.equal([16])
      // Other N:M patterns work the same way; 'unstructured' is the usual suite.
      expect(llmSuite({pattern: '4:8'})[0]).to.deep.include({file: 'llm/4096x4096/4:8', group: 'llm-4:8', sparsity: 0.5})
      expect(llmSuite({pattern: 'unstructured'})).to.have.length(18)
      expect(() => llmSuite({pattern: '2:4', sparsities: [0.9]})).to.throw(UsageError, /--llm-sparsity contradicts --pattern 2:4/)
      expect(() => llmSuite({pattern: '5:4'})).to.throw(UsageError, /pattern 5:4 is invalid/)
    })

    it('makes layers the pruner pruned to 2:4: exactly 2 of every 4, the larger magnitudes, Sputnik row order', () => {
      const rows = 37
      const cols = 70 // a partial last group of 2
      const csr = randomNMPrunedCsr(rows, cols, '2:4', 'seed')
      validateCsr(csr, 'generated')
      expect(isTwoFour(csr)).to.equal(true)
      expect(csr.rowOffsets[rows]).to.equal(rows * (17 * 2 + 2))
      // The same normals pruned in one piece by pruneMagnitude give the same matrix.
      const data = createRng('seed').fillNormal(new Float32Array(rows * cols))
      const ref = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {pattern: '2:4', reorder: false}).csr
      expect(Array.from(csr.columnIndices)).to.deep.equal(Array.from(ref.columnIndices))
      expect(Array.from(csr.values as Float32Array)).to.deep.equal(Array.from(ref.values as Float32Array))
      expect(csr.rowIndices).to.have.length(rows)
      // Kept magnitudes beat the dropped ones of their group.
      for (let r = 0; r < rows; r++) {
        for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) {
          const c = csr.columnIndices[i]
          const g = c - (c % 4)
          for (let j = g; j < Math.min(g + 4, cols); j++) {
            const kept = Array.from(csr.columnIndices.subarray(csr.rowOffsets[r], csr.rowOffsets[r + 1])).includes(j)
            if (!kept) expect(Math.abs(data[r * cols + c])).to.be.at.least(Math.abs(data[r * cols + j]))
          }
        }
      }
    })

    it('generates blocks of rows that join up exactly (more rows than one block)', () => {
      // 2^22 / 1024 = 4096 rows per block: 4100 rows need two.
      const csr = randomNMPrunedCsr(4100, 1024, '2:4', 1)
      validateCsr(csr, 'generated')
      expect(csr.rowOffsets[4100]).to.equal(4100 * 512)
      expect(firstNot24(csr)).to.equal(null)
    })

    it('plans f16 and bf16 by default, names the suite, and refuses --pattern with another suite', async () => {
      const plan = await planBench({suite: {kind: 'llm'}, pattern: '2:4'})
      expect(plan.dtypes).to.deep.equal(['f16', 'bf16'])
      expect(plan.ops).to.deep.equal(['spmm'])
      expect(plan.suite).to.equal('llm 2:4')
      expect(plan.problems.map((p) => p.file)).to.deep.equal(['llm/4096x4096/2:4', 'llm/11008x4096/2:4', 'llm/4096x11008/2:4'])
      expect(plan.total).to.equal(3 * 8 * 2)
      expect((await planBench({suite: {kind: 'llm'}, pattern: '2:4', dtypes: ['f32']})).dtypes).to.deep.equal(['f32'])
      expect((await planBench({suite: {kind: 'llm'}})).dtypes).to.deep.equal(['f32', 'f16'])
      const e = await rejection(() => planBench({suite: {kind: 'attention'}, pattern: '2:4'}))
      expect(e).to.be.instanceOf(UsageError)
      expect(e.message).to.match(/--pattern 2:4 applies to --suite llm and dense inputs/)
      const bad = await rejection(() => planBench({suite: {kind: 'llm'}, pattern: 'two:four'}))
      expect(bad.exitCode).to.equal(2)
    })

    it('--baseline all adds cuSPARSELt to the 2:4 cases (f16/bf16 SpMM on CUDA)', () => {
      expect(implList('spmm', 'f16', 'cuda', ['dense', 'cusparse', 'cusparselt'])).to.deep.equal(['ours', 'cublas_f16', 'cusparse', 'cusparselt'])
      expect(implList('spmm', 'bf16', 'cuda', ['dense', 'cusparse', 'cusparselt'])).to.include('cusparselt')
      expect(implList('spmm', 'f32', 'cuda', ['dense', 'cusparse', 'cusparselt'])).to.not.include('cusparselt')
    })
  })

  describe('dense inputs pruned with --pattern', () => {
    it('prunes every 2-D weight to 2:4 (no -s needed) and passes the 2:4 CSR to the harness as is', async () => {
      const dir = tempDir()
      const data = createRng(3).fillNormal(new Float32Array(32 * 64))
      await writeSafetensors([{name: 'fc.weight', shape: [32, 64], dtype: 'f32', data}], join(dir, 'm.safetensors'))
      const calls: NativeBenchArgs[] = []
      const r = await runBench({inputs: [join(dir, 'm.safetensors')], pattern: '2:4', ns: [8], dtypes: ['f16'], baselines: ['dense', 'cusparse', 'cusparselt'], timing: FAST, native: fakeNative({calls})})
      const c = ok(r.cases[0])
      expect(c).to.deep.include({nnz: 32 * 32, sparsity: 0.5, level: 0.5})
      const csr = calls[0].csr
      expect(isTwoFour({rows: csr.rows, cols: csr.cols, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values ?? null, dtype: 'f16'})).to.equal(true)
      expect(calls[0].impls).to.deep.equal(['ours', 'cublas_f16', 'cusparse', 'cusparselt'])
      expect(calls[0]).to.not.have.property('variant') // the kernel's own selection: it detects 2:4 itself
      const e = await rejection(() => runBench({inputs: [join(dir, 'm.safetensors')], pattern: '2:4', sparsity: 0.9, ns: [8], native: fakeNative()}))
      expect(e).to.be.instanceOf(UsageError)
      expect(e.message).to.match(/contradicts --pattern 2:4/)
      // -s may repeat the implied sparsity; a sweep cannot go with a pattern that fixes it.
      const same = await runBench({inputs: [join(dir, 'm.safetensors')], pattern: '2:4', sparsity: [0.5], ns: [8], dtypes: ['f16'], timing: FAST, native: fakeNative()})
      expect(ok(same.cases[0])).to.deep.include({nnz: 32 * 32, level: 0.5, file: join(dir, 'm.safetensors') + ':fc.weight'})
      const sweep = await rejection(() => runBench({inputs: [join(dir, 'm.safetensors')], pattern: '2:4', sparsity: [0.5, 0.7], ns: [8], native: fakeNative()}))
      expect(sweep).to.be.instanceOf(UsageError)
      expect(sweep.message).to.equal('-s 0.5,0.7 sweeps sparsities, but --pattern 2:4 fixes it at 0.5')
      // Without a pattern the same -s list is a sweep: one set of cases per level.
      const levels = await runBench({inputs: [join(dir, 'm.safetensors')], sparsity: [0.5, 0.7], ns: [8], timing: FAST, native: fakeNative()})
      expect(levels.cases.map((c) => c.level)).to.deep.equal([0.5, 0.7])
    })
  })

  describe('--tune on 2:4 matrices', () => {
    const LIST = ['split_v4_t8_w1', 'split_v4_t4_w2', 'bm_w4_m1_s4']
    /**
     * A fake harness whose spmmVariants, as the plan does, checks the matrix it is given for
     * 2:4 (f16/bf16), records the shapes asked with what it found, and lists s24_w4_m1_s8 (the
     * fastest) for 2:4 ones.
     */
    function native(shapes: Array<Record<string, unknown>>, calls: NativeBenchArgs[] = []): BenchNative {
      const factors = {split_v4_t8_w1: 1, split_v4_t4_w2: 0.7, bm_w4_m1_s4: 0.6, s24_w4_m1_s8: 0.3}
      const base = fakeNative({calls, variants: {selected: 'split_v4_t8_w1', factors}})
      return {
        ...base,
        spmmVariants: (q) => {
          const {rowOffsets, columnIndices, values, ...shape} = q
          const csr = {rows: q.m, cols: q.k, rowOffsets, columnIndices, values: null, dtype: q.dtype}
          const structure = q.dtype !== 'f32' && isTwoFour(csr, values) ? ('2:4' as const) : undefined
          shapes.push({...shape, structure})
          // As the kernels: the bitmap kernel for f16/bf16, the 2:4 one for 2:4 matrices too.
          const list = q.dtype === 'f32' ? LIST.filter((v) => !v.startsWith('bm_')) : LIST
          return {selected: 'split_v4_t8_w1', variants: structure ? [...list, 's24_w4_m1_s8'] : list, ...(structure ? {structure} : {})}
        },
      }
    }

    async function writeMatrices(dir: string): Promise<{s24: string; unstructured: string}> {
      const rows = 64
      const cols = 128
      const data = createRng(9).fillNormal(new Float32Array(rows * cols))
      const p24 = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {pattern: '2:4'}).csr
      const un = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {sparsity: 0.5}).csr
      expect(isTwoFour(un)).to.equal(false)
      expect(un.rowOffsets[rows]).to.equal(p24.rowOffsets[rows]) // same shape and density
      const s24 = join(dir, 's24.npz')
      const unstructured = join(dir, 'un.npz')
      await writeCsrNpz({name: 'w', shape: [rows, cols], csr: p24}, s24)
      await writeCsrNpz({name: 'w', shape: [rows, cols], csr: un}, unstructured)
      return {s24, unstructured}
    }

    it('lists the s24_* variants for a 2:4 matrix in f16/bf16 (structure: 2:4), not for f32 or an unstructured one, and caches them apart', async () => {
      const dir = tempDir()
      const {s24, unstructured} = await writeMatrices(dir)
      const cache = join(dir, 'tune.json')
      const shapes: Array<Record<string, unknown>> = []
      const r = await runBench({inputs: [s24, unstructured], ns: [16], dtypes: ['f32', 'f16', 'bf16'], tune: true, tuneCache: cache, timing: FAST, native: native(shapes)})
      const cases = r.cases.map(ok)
      const by = (file: string, dtype: string) => cases.find((c) => c.file === file && c.dtype === dtype)!
      expect(by(s24, 'f16').variant).to.equal('s24_w4_m1_s8')
      expect(by(s24, 'bf16').variant).to.equal('s24_w4_m1_s8')
      expect(Object.keys(by(s24, 'f16').tuned!.candidates)).to.include.members(['s24_w4_m1_s8', 'bm_w4_m1_s4'])
      expect(by(s24, 'f32').variant).to.equal('split_v4_t4_w2') // 2:4 kernels are half precision only
      expect(by(unstructured, 'f16').variant).to.equal('bm_w4_m1_s4')
      expect(shapes.filter((s) => s.structure === '2:4').map((s) => s.dtype)).to.deep.equal(['f16', 'bf16'])
      expect(shapes.filter((s) => s.structure === undefined)).to.have.length(4)
      // Same GPU, dtype, shape, N and density: two keys, the 2:4 one marked.
      const k = {gpu: 'Fake GPU', dtype: 'f16' as const, m: 64, k: 128, n: 16, nnz: 64 * 64}
      expect(tuneKey({...k, structure: '2:4'})).to.equal(`${tuneKey(k)}|s24`)
      expect(tuneKey({...k, dtype: 'f32', structure: '2:4'})).to.equal(tuneKey({...k, dtype: 'f32'}))
      const json = JSON.parse(readFileSync(cache, 'utf8'))
      expect(json.entries[tuneKey({...k, structure: '2:4'})]).to.deep.include({variant: 's24_w4_m1_s8', structure: '2:4'})
      expect(json.entries[tuneKey(k)]).to.deep.include({variant: 'bm_w4_m1_s4'})
      expect(json.entries[tuneKey(k)]).to.not.have.property('structure')
      // The cache reads the new variant names back (they are valid names).
      const {cache: read, warning} = await readTuneCache(cache)
      expect(warning).to.equal(undefined)
      expect(Object.keys(read.entries)).to.have.length(Object.keys(json.entries).length)
    })

    it('uses a cached s24 winner for the 2:4 matrix only, on a later run', async () => {
      const dir = tempDir()
      const {s24, unstructured} = await writeMatrices(dir)
      const cache = join(dir, 'tune.json')
      await runBench({inputs: [s24], ns: [16], dtypes: ['f16'], tune: true, tuneCache: cache, timing: FAST, native: native([])})
      const calls: NativeBenchArgs[] = []
      const later = await runBench({inputs: [s24, unstructured], ns: [16], dtypes: ['f16'], tuneCache: cache, timing: FAST, native: native([], calls)})
      const [a, b] = later.cases.map(ok)
      expect(a).to.deep.include({variantSource: 'cache', variant: 's24_w4_m1_s8'})
      expect(b).to.deep.include({variantSource: 'heuristic', variant: 'split_v4_t8_w1'})
      expect(calls[0].variant).to.equal('s24_w4_m1_s8')
      expect(calls[1]).to.not.have.property('variant')
    })

    it('accepts the bitmap and 2:4 names in the cache (and still drops malformed ones)', () => {
      const name = spmmVariantName()
      for (const v of ['bm_w4_m1_s4', 's24_w4_m1_s8', 's24_w8_m2_s1', 's24g_m256_n128_s4', 's24g_m128_n256_s3_sk1', 's24g_m256_n128_s4_sk2', 's24g_m128_n128_s6_sk3', 's24g_m128_n256_s4_c2', 's24g_m128_n256_s4_ss1_sk2', 'tc_w8_s4_p4', 'split_v8_t2_w2', 'tile_v4_t8_x2_u16', 'split_v4_t16_w1_u16']) expect(name.test(v), v).to.equal(true)
      for (const v of ['s24_', 's24_w4_m1_s8;rm', 'tile_v4_t8_x2_u']) expect(name.test(v), v).to.equal(false)
      // Names of no family, or a family's name with a part too many, need the families'
      // grammar, which only a build with CUDA lists (spmmVariantGrammar).
      if (cudaInfo().built) {
        for (const v of ['bm_w4', 'x24_w4_m1_s8', 'panel_v4_r2', 'split_v4_t16_w1_u16_u16', 's24g_m192_n128_s4', 's24g_m256_n128_s4_sk4', 's24g_m256_n128_s4_c2_sk2', 's24g_m256_n128_s4_c3']) expect(name.test(v), v).to.equal(false)
      }
    })
  })
})

