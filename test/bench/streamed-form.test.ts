import {expect} from 'chai'
import {join} from 'node:path'

import {bytesMoved, memoryFigures, streamedWeights} from '../../src/bench/metrics.js'
import {renderCases, toCsv, toJsonl} from '../../src/bench/output.js'
import {runBench} from '../../src/bench/run.js'
import type {BenchCaseResult, BenchNative} from '../../src/bench/types.js'
import {writeCsrNpz} from '../../src/formats/index.js'
import {spmmKernelVariant, spmmVariantForm} from '../../src/kernels/variant.js'
import {pruneMagnitude} from '../../src/pruning/index.js'
import {csrTileStats, twoFourBytes} from '../../src/sparse/memory.js'
import {createRng} from '../../src/sparse/random.js'
import {isTwoFour} from '../../src/sparse/two-four.js'
import type {CsrMatrix} from '../../src/types.js'
import {TC_EXAMPLE_BYTES, tcExample} from '../sparse/tc-example.js'
import {fakeNative} from './fake-native.js'
import {ok, tempDirs} from './helpers.js'

const FAST = {minReps: 3, minMs: 1, warmup: 1}
const ROWS = 64
const COLS = 128
const N = 8

const tempDir = tempDirs('bench-form-')

/** A 64 x 128 matrix magnitude-pruned to 2:4, and the same normals pruned to 50 % unstructured (its CSR: `un`). */
async function writeMatrices(): Promise<{s24: string; unstructured: string; un: CsrMatrix}> {
  const dir = tempDir()
  const data = createRng(11).fillNormal(new Float32Array(ROWS * COLS))
  const p24 = pruneMagnitude({name: 'w', shape: [ROWS, COLS], dtype: 'f32', data}, {pattern: '2:4'}).csr
  const un = pruneMagnitude({name: 'w', shape: [ROWS, COLS], dtype: 'f32', data}, {sparsity: 0.5}).csr
  expect(isTwoFour(p24)).to.equal(true)
  expect(isTwoFour(un)).to.equal(false)
  const s24 = join(dir, 's24.npz')
  const unstructured = join(dir, 'un.npz')
  await writeCsrNpz({name: 'w', shape: [ROWS, COLS], csr: p24}, s24)
  await writeCsrNpz({name: 'w', shape: [ROWS, COLS], csr: un}, unstructured)
  return {s24, unstructured, un}
}

async function oneCase(file: string, native: BenchNative, op: 'spmm' | 'sddmm' = 'spmm'): Promise<{c: BenchCaseResult; report: Awaited<ReturnType<typeof runBench>>}> {
  const report = await runBench({inputs: [file], ns: [N], ops: [op], dtypes: ['f16'], tuneCache: false, timing: FAST, native})
  return {c: ok(report.cases[0]), report}
}

/** B (k x n) and C (m x n) in f16. */
const DENSE_OPERANDS = COLS * N * 2 + ROWS * N * 2

describe('bench: bytes and memory saving of the form our kernel read', () => {
  describe('the form of a kernel variant', () => {
    it('maps the 2:4 families to 2:4, the bitmap family to bitmap, the tensor-core one to tc, and the rest to CSR', () => {
      for (const v of ['s24_w4_m1_s8', 's24e_w8_k256', 's24g_m256_n128_s4_sk2', 's24g_m128_n256_s3']) expect(spmmVariantForm(v), v).to.equal('2:4')
      expect(spmmVariantForm('bm_w4_m1_s8')).to.equal('bitmap')
      for (const v of ['ube_w8', 'ube_w4', 'ube_w8_c88']) expect(spmmVariantForm(v), v).to.equal('bitmap stream')
      for (const v of ['ube_p8', 'ube_p8_c72']) expect(spmmVariantForm(v), v).to.equal('pair stream')
      for (const v of ['ung_n256', 'ung_n128', 'ung_n256_sk2', 'ung_n256_c120', 'ung_n128_c128_sk2']) expect(spmmVariantForm(v), v).to.equal('pair stream')
      for (const v of ['und_n256', 'und_n128_sk3']) expect(spmmVariantForm(v), v).to.equal('dense')
      for (const v of ['tc_w8_s4_p4', 'tc_w4_s1_p8']) expect(spmmVariantForm(v), v).to.equal('tc')
      for (const v of ['split_v8_t2_w2', 'tile_v4_t8_x2_u16', 'split_v4_t16_w1_u16']) expect(spmmVariantForm(v), v).to.equal('csr')
    })

    it("reads the variant from the harness's kernel name in ours's detail", () => {
      expect(spmmKernelVariant('CudaSpmm spmm_f16_i16_s24e_w8_k256, 16-bit indices; 2:4 tiles, staged built once on the host in 12.3 ms, 66.06 MB')).to.equal('s24e_w8_k256')
      expect(spmmKernelVariant('CudaSpmmVariant spmm_bf16_i16_s24_w4_m1_s8 (variant chosen by the caller), 16-bit indices; 2:4 tiles built once on the host in 1.0 ms, 0.01 MB')).to.equal('s24_w4_m1_s8')
      expect(spmmKernelVariant('CudaSpmm spmm_f16_i16_s24g_m256_n128_s4_sk2, 16-bit indices')).to.equal('s24g_m256_n128_s4_sk2')
      expect(spmmKernelVariant('CudaSpmm spmm_f16_i16_bm_w4_m1_s8, 16-bit indices; bitmap tiles built once on the host in 0.4 ms, 0.02 MB')).to.equal('bm_w4_m1_s8')
      expect(spmmKernelVariant('CudaSpmm spmm_f32_i32_tile_v4_t8_x2_u16, 32-bit indices')).to.equal('tile_v4_t8_x2_u16')
      expect(spmmKernelVariant('CudaSpmm spmm_f16_i16_ube_w8, 16-bit indices; bitmap stream built once on the host in 3.1 ms, 1.20 MB')).to.equal('ube_w8')
      expect(spmmKernelVariant('CudaSpmmVariant spmm_bf16_i16_ube_w4_c88 (variant chosen by the caller), 16-bit indices')).to.equal('ube_w4_c88')
      expect(spmmKernelVariant('CudaSpmm spmm_f16_i16_ung_n256_sk2, 16-bit indices')).to.equal('ung_n256_sk2')
      expect(spmmKernelVariant('CudaSpmmVariant spmm_bf16_i16_ung_n128_c120_sk2 (variant chosen by the caller), 16-bit indices')).to.equal('ung_n128_c120_sk2')
      // No kernel named: the CPU, the harness before Setup, an absent detail.
      expect(spmmKernelVariant('CpuSpmm, 8 threads')).to.equal(undefined)
      expect(spmmKernelVariant('CudaSpmm, 16-bit indices')).to.equal(undefined)
      expect(spmmKernelVariant(undefined)).to.equal(undefined)
    })

    it("takes the detail's kernel first, then the case's variant, and CSR for SDDMM, the CPU or a form without figures", () => {
      const tiles = {bitmapBytes: 20_000, tcBytes: 18_000, twoFour: true}
      const m = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f16', tiles)
      const detail = 'CudaSpmm spmm_f16_i16_s24_w4_m1_s8, 16-bit indices'
      expect(streamedWeights('spmm', 'cuda', detail, 'split_v8_t2_w2', m)).to.deep.equal({form: '2:4', bytes: twoFourBytes(ROWS, COLS), saving: m.twoFourSaving})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'bm_w4_m1_s8', m)).to.deep.equal({form: 'bitmap', bytes: 20_000, saving: m.bitmapSaving})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'tc_w8_s1_p4', m)).to.deep.equal({form: 'tc', bytes: 18_000, saving: m.tcSaving})
      expect(streamedWeights('spmm', 'cuda', 'fake ours', undefined, m)).to.deep.equal({form: 'csr', bytes: null, saving: m.saving})
      // The bitmap stream at the variant's row-block height (ube_w4: 64 rows); without its figure, CSR's.
      const st = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f16', {...tiles, bitmapStream: {w8: 9_000, w4: 9_500}})
      const dense = ROWS * COLS * 2
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f16_i16_ube_w8, 16-bit indices', undefined, st)).to.deep.equal({form: 'bitmap stream', bytes: 9_000, saving: dense / 9_000})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ube_w4_c32', st)).to.deep.equal({form: 'bitmap stream', bytes: 9_500, saving: dense / 9_500})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ube_w8', m).form, 'no stream figure').to.equal('csr')
      expect(memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f32', {...tiles, bitmapStream: {w8: 9_000, w4: 9_500}})).to.not.have.property('bitmapStreamBytes')
      // The pair stream's figure for ube_p8 (128-row blocks); none for f32, and without it CSR's.
      const ps = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f16', {...tiles, bitmapStream: {w8: 9_000, w4: 9_500}, pairStream: 11_000})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f16_i16_ube_p8, 16-bit indices', undefined, ps)).to.deep.equal({form: 'pair stream', bytes: 11_000, saving: dense / 11_000})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ube_p8_c32', ps).bytes).to.equal(11_000)
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ube_p8', st).form, 'no pair figure').to.equal('csr')
      expect(memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f32', {...tiles, pairStream: 11_000})).to.not.have.property('pairStreamBytes')
      // The GEMM engine's ung_* read the pair stream cut in 64-column stages: its own figure, which
      // ube_p8 never reads; none for f32, and without it CSR's.
      const pg = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f16', {...tiles, pairStream: 11_000, pairStreamGemm: 11_500})
      expect([pg.pairStreamBytes, pg.pairStreamGemmBytes]).to.deep.equal([11_000, 11_500])
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f16_i16_ung_n256_sk2, 16-bit indices', 'ube_p8', pg)).to.deep.equal({form: 'pair stream', bytes: 11_500, saving: dense / 11_500})
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ung_n128_c120', pg).bytes).to.equal(11_500)
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm, 16-bit indices', 'ube_p8', pg).bytes).to.equal(11_000)
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f16_i16_ung_n256, 16-bit indices', undefined, ps), 'no 64-column figure').to.deep.equal({form: 'csr', bytes: null, saving: ps.saving})
      expect(memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f32', {...tiles, pairStreamGemm: 11_500})).to.not.have.property('pairStreamGemmBytes')
      // The GEMM engine's und_* read A dense: the dense matrix's bytes, a saving of 1.
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f16_i16_und_n256_sk3, 16-bit indices', undefined, pg)).to.deep.equal({form: 'dense', bytes: pg.denseBytes, saving: 1})
      expect(streamedWeights('sddmm', 'cuda', detail, undefined, m).form).to.equal('csr')
      expect(streamedWeights('spmm', 'cpu', detail, undefined, m).form).to.equal('csr')
      // Not 2:4 by the matrix's own test (or f32, which has no tensor-core forms): CSR's figures.
      const un = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f16', {bitmapBytes: 20_000, tcBytes: 18_000, twoFour: false})
      expect(streamedWeights('spmm', 'cuda', detail, undefined, un)).to.deep.equal({form: 'csr', bytes: null, saving: un.saving})
      const f32 = memoryFigures(ROWS, COLS, ROWS * COLS / 2, 'f32')
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f32_i32_bm_w4_m1_s8', undefined, f32).form).to.equal('csr')
      expect(streamedWeights('spmm', 'cuda', 'CudaSpmm spmm_f32_i32_tc_w8_s1_p4', undefined, f32).form).to.equal('csr')
    })

    it("counts a tc_* kernel's tiles: the hand-sized example's 92 bytes", () => {
      const csr = tcExample()
      const m = memoryFigures(20, 70, 10, 'f16', csrTileStats(csr))
      expect([m.tcBytes, m.tcSaving]).to.deep.equal([TC_EXAMPLE_BYTES, (20 * 70 * 2) / TC_EXAMPLE_BYTES])
      const detail = 'CudaSpmm spmm_f16_i16_tc_w8_s1_p4, 16-bit indices; tensor-core tiles built once on the host in 0.1 ms, 0.00 MB'
      expect(streamedWeights('spmm', 'cuda', detail, 'split_v8_t2_w2', m)).to.deep.equal({form: 'tc', bytes: 92, saving: 2800 / 92})
      // CSR would be 10 x (2 + 2) + 4 x 21 + 4 x 20 = 204 bytes.
      expect(m.csrBytes).to.equal(204)
    })
  })

  describe('case records', () => {
    it('a 2:4 case that ran an s24 kernel counts the 2:4 tiles: bytes, %BW and a saving above 1.7x at f16', async () => {
      const {s24} = await writeMatrices()
      const nnz = ROWS * COLS / 2
      for (const kernel of ['s24e_w8_k256', 's24_w4_m1_s8', 's24g_m256_n128_s4']) {
        const {c, report} = await oneCase(s24, fakeNative({kernel}))
        expect(c.impls.ours.detail).to.equal(`CudaSpmm spmm_f16_i16_${kernel}, 16-bit indices`)
        expect(c.form, kernel).to.equal('2:4')
        // 16 x 32 tiles of 576 bytes: 4 x 4 of them.
        expect(c.memory.twoFourBytes).to.equal(16 * 576)
        expect(c.bytes).to.equal(16 * 576 + DENSE_OPERANDS)
        expect(c.bytes).to.be.below(bytesMoved({op: 'spmm', dtype: 'f16', m: ROWS, k: COLS, n: N, nnz, indexBits: 16}))
        const ms = nnz * N * 1e-9
        expect(c.gbps).to.be.closeTo(c.bytes / (ms * 1e-3) / 1e9, 1e-6)
        expect(c.fractionOfBandwidth).to.be.closeTo(c.gbps / 4000, 1e-12)
        expect(c.memorySaving).to.equal(c.memory.twoFourSaving)
        expect(c.memorySaving).to.be.closeTo((ROWS * COLS * 2) / (16 * 576), 1e-12) // 1.78x
        expect(c.memorySaving).to.be.above(1.7)
        // The CSR figures stay in `memory` (16-bit values and indices at 50 %: about 1x).
        expect(c.memory.saving).to.be.below(1.01)
        expect(renderCases(report)).to.include('1.78x 2:4')
      }
    })

    it('a bitmap case counts the bitmap tiles', async () => {
      const {unstructured} = await writeMatrices()
      const {c, report} = await oneCase(unstructured, fakeNative({kernel: 'bm_w4_m1_s8'}))
      expect(c.form).to.equal('bitmap')
      expect(c.memory.twoFourBytes).to.equal(null)
      expect(c.memory.bitmapBytes).to.be.a('number')
      expect(c.bytes).to.equal(c.memory.bitmapBytes! + DENSE_OPERANDS)
      expect(c.memorySaving).to.equal(c.memory.bitmapSaving)
      expect(c.memorySaving).to.not.equal(c.memory.saving)
      expect(renderCases(report)).to.include(`${c.memorySaving.toFixed(2)}x bitmap`)
    })

    it("an ung case counts the pair stream in the GEMM engine's 64-column stages, an ube_p8 case in 128-column ones", async () => {
      const {unstructured, un} = await writeMatrices()
      const dense = ROWS * COLS * 2
      const {c, report} = await oneCase(unstructured, fakeNative({kernel: 'ung_n256_sk2'}))
      expect(c.form).to.equal('pair stream')
      // 64 x 128: one row block of 2 stages (2 x 1024 bytes of records + 3 offsets) against
      // ube_p8's one stage (2048 + 2 offsets); the stored registers, padded per stage, on top.
      const tiles = csrTileStats(un)
      const gemm = tiles.pairStreamGemm!
      expect([c.memory.pairStreamGemmBytes, c.memory.pairStreamBytes]).to.deep.equal([gemm, tiles.pairStream])
      expect(gemm - (2 * 1024 + 4 * 3)).to.be.above(0).and.satisfy((b: number) => b % 16 === 0)
      expect(tiles.pairStream! - (2048 + 4 * 2)).to.be.above(0).and.satisfy((b: number) => b % 16 === 0)
      expect(c.bytes).to.equal(gemm + DENSE_OPERANDS)
      expect(c.memorySaving).to.equal(dense / gemm)
      expect(renderCases(report)).to.include(`${c.memorySaving.toFixed(2)}x pair stream`)
      const p8 = (await oneCase(unstructured, fakeNative({kernel: 'ube_p8'}))).c
      expect(p8.form).to.equal('pair stream')
      expect(p8.bytes).to.equal(c.memory.pairStreamBytes! + DENSE_OPERANDS)
    })

    it('a tc case counts the tensor-core CSR tiles: 4 bytes per nonzero, no padding at 2:4, and the offsets', async () => {
      const {s24} = await writeMatrices()
      const nnz = ROWS * COLS / 2
      const {c, report} = await oneCase(s24, fakeNative({kernel: 'tc_w8_s4_p4'}))
      expect(c.form).to.equal('tc')
      // Every 16 x 32 tile holds 256 entries (a multiple of 4); 4 x 4 tiles, 17 offsets.
      expect(c.memory.tcBytes).to.equal(4 * nnz + 4 * 17)
      expect(c.bytes).to.equal(4 * nnz + 4 * 17 + DENSE_OPERANDS)
      expect(c.memorySaving).to.equal(c.memory.tcSaving)
      expect(c.memorySaving).to.equal((ROWS * COLS * 2) / (4 * nnz + 68))
      expect(renderCases(report)).to.include(`${c.memorySaving.toFixed(2)}x tc`)
      const [head, row] = toCsv(report).trimEnd().split('\n').map((l) => l.split(','))
      expect(row).to.have.length(head.length)
      expect([row[head.indexOf('form')], Number(row[head.indexOf('tc_bytes')])]).to.deep.equal(['tc', 4 * nnz + 68])
    })

    it('a CSR case (the CSR kernels, SDDMM, no kernel named) keeps the CSR figures', async () => {
      const {s24, unstructured} = await writeMatrices()
      const nnz = ROWS * COLS / 2
      const csrBytes = bytesMoved({op: 'spmm', dtype: 'f16', m: ROWS, k: COLS, n: N, nnz, indexBits: 16})
      expect(csrBytes).to.equal(nnz * 4 + 4 * (ROWS + 1) + DENSE_OPERANDS)
      for (const [file, kernel] of [[unstructured, 'split_v8_t2_w2'], [s24, 'tile_v4_t8_x2'], [s24, undefined]] as const) {
        const {c, report} = await oneCase(file, fakeNative(kernel ? {kernel} : {}))
        expect(c.form, kernel).to.equal('csr')
        expect(c.bytes).to.equal(csrBytes)
        expect(c.memorySaving).to.equal(c.memory.saving)
        expect(renderCases(report)).to.include(`${c.memorySaving.toFixed(2)}x `).and.not.match(/x (2:4|bitmap|tc)/)
      }
      // SDDMM reads the CSR mask whatever the detail says.
      const sd = (await oneCase(s24, fakeNative({kernel: 's24_w4_m1_s8'}), 'sddmm')).c
      expect(sd.form).to.equal('csr')
      expect(sd.bytes).to.equal(bytesMoved({op: 'sddmm', dtype: 'f16', m: ROWS, k: COLS, n: N, nnz, indexBits: 32}))
    })

    it('a tuned 2:4 winner counts the 2:4 tiles too; --json, JSONL and CSV carry the form', async () => {
      const {s24} = await writeMatrices()
      const factors = {split_v4_t8_w1: 1, bm_w4_m1_s4: 0.6, s24_w4_m1_s8: 0.3}
      const native = fakeNative({variants: {selected: 'split_v4_t8_w1', factors}})
      const r = await runBench({inputs: [s24], ns: [N], dtypes: ['f16'], tune: true, tuneCache: false, timing: FAST, native})
      const c = ok(r.cases[0])
      expect(c.variant).to.equal('s24_w4_m1_s8')
      expect(c).to.deep.include({form: '2:4', bytes: 16 * 576 + DENSE_OPERANDS})
      expect(JSON.parse(toJsonl(r).trimEnd()).form).to.equal('2:4')
      const [head, row] = toCsv(r).trimEnd().split('\n').map((l) => l.split(','))
      expect(row).to.have.length(head.length)
      expect(row[head.indexOf('form')]).to.equal('2:4')
      expect(Number(row[head.indexOf('memory_saving')])).to.equal(c.memory.twoFourSaving)
      expect(Number(row[head.indexOf('bytes')])).to.equal(c.bytes)
    })
  })
})
