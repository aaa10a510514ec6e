import {spawnSync} from 'node:child_process'
import {resolve} from 'node:path'

import {expect} from 'chai'

import {cudaInfo, sddmm, sddmmReference, spmm, spmmReference, spmmVariants, type Device} from '../../src/kernels/index.js'
import {float32ToHalf} from '../../src/sparse/half.js'
import type {DenseMatrix} from '../../src/kernels/types.js'
import type {CsrMatrix, ValueDType} from '../../src/types.js'
import {compare, poisoned, TOLERANCE, uniform} from '../../src/verify/index.js'
import {awkwardShapes, infRowZeroCase, randomPattern, swizzle, twoFourPattern, wideShape, type Shape} from './helpers.js'

const DTYPES: ValueDType[] = ['f32', 'f16', 'bf16']

function encode(x: Float32Array, dtype: ValueDType): Float32Array | Uint16Array {
  return dtype === 'f32' ? x : float32ToHalf(x, dtype)
}

/** One SpMM case: fresh seeded operands, poisoned output, float64 reference. */
async function checkSpmm(device: Device, shape: Shape, dtype: ValueDType, seed: number): Promise<void> {
  const {csr, n} = shape
  const nnz = csr.columnIndices.length
  const a: CsrMatrix = {...csr, values: encode(uniform(nnz, seed), dtype), dtype}
  const b = {rows: csr.cols, cols: n, dtype, data: encode(uniform(csr.cols * n, seed + 1), dtype)}
  const out = poisoned(dtype, csr.rows * n)
  const res = await spmm(a, b, {device, out})
  expect(res.device).to.equal(device)
  expect(res.c.data).to.equal(out) // filled in place
  const ref = await spmmReference(a, b)
  const r = compare(out, dtype, ref)
  expect(r.nonFinite, `${shape.name} spmm ${dtype}: unwritten outputs`).to.equal(0)
  expect(r.relativeError, `${shape.name} spmm ${dtype}`).to.be.a('number').and.at.most(TOLERANCE[dtype])
}

async function checkSddmm(device: Device, shape: Shape, dtype: ValueDType, seed: number): Promise<void> {
  const {csr, n} = shape
  const nnz = csr.columnIndices.length
  const lhs = {rows: csr.rows, cols: n, dtype, data: encode(uniform(csr.rows * n, seed + 2), dtype)}
  const rhs = {rows: csr.cols, cols: n, dtype, data: encode(uniform(csr.cols * n, seed + 3), dtype)}
  const out = poisoned(dtype, nnz)
  const res = await sddmm(csr, lhs, rhs, {device, out})
  expect(res.device).to.equal(device)
  expect(res.values).to.equal(out)
  const ref = await sddmmReference(csr, lhs, rhs)
  const r = compare(out, dtype, ref)
  expect(r.nonFinite, `${shape.name} sddmm ${dtype}: unwritten outputs`).to.equal(0)
  expect(r.relativeError, `${shape.name} sddmm ${dtype}`).to.be.a('number').and.at.most(TOLERANCE[dtype])
}

function suite(device: Device): void {
  let seed = device === 'cpu' ? 100 : 200
  for (const shape of [...awkwardShapes(), wideShape()]) {
    for (const dtype of DTYPES) {
      const s = (seed += 10)
      it(`SpMM ${dtype}: ${shape.name}`, () => checkSpmm(device, shape, dtype, s))
      it(`SDDMM ${dtype}: ${shape.name}`, () => checkSddmm(device, shape, dtype, s))
    }
  }
}

/** Shapes for the every-variant sweep: vector widths 16 bytes / half2 / 1, long split rows, empty rows. */
function variantShapes(): Shape[] {
  return [
    {name: 'M=7 K=96 N=40 nnz=333', csr: randomPattern(7, 96, 333, 1), n: 40},
    {name: 'odd N=17', csr: randomPattern(33, 50, 400, 2), n: 17},
    {name: 'N=2 (half2)', csr: randomPattern(12, 9, 50, 8), n: 2},
    {name: 'empty rows, N=24', csr: randomPattern(20, 30, 150, 4, {emptyRows: [0, 5, 6, 7, 8, 9, 19]}), n: 24},
    {name: 'long rows at every alignment, swizzled, N=16', csr: swizzle(randomPattern(37, 3000, 37 * 700 + 13, 11)), n: 16},
    {name: 'N=72 (strip residue)', csr: randomPattern(29, 400, 3000, 12), n: 72},
    // The tensor-core kernel's edges: tiles over half dense (entries past a stage's 256 are
    // read from global memory), several row blocks and cluster splits over 32 k-tiles, and
    // column blocks of 64 with an 8-wide residue.
    {name: 'tiles 90% dense, M=45 K=300 N=8', csr: randomPattern(45, 300, 45 * 270, 13), n: 8},
    {name: 'M=300 K=1000 N=64, 10%', csr: randomPattern(300, 1000, 30_000, 14), n: 64},
    {name: 'N=136 (column blocks 64 + 64 + 8)', csr: randomPattern(70, 200, 2000, 15), n: 136},
    // Wide strips with a 4-wide residue, swizzled rows of about 280 nonzeros (the deep f32
    // variants' 16-nonzero steps and their residue) and empty rows.
    {name: 'wide: swizzled, M=150 K=700 N=260, 40%, empty rows', csr: swizzle(randomPattern(150, 700, 42_000, 16, {emptyRows: [3, 77, 149]})), n: 260},
  ]
}

/** 2:4 matrices (at most two nonzeros in every group of four columns of a row). */
/** What `run` rejects with, or undefined when it resolves. */
async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  return undefined
}

/**
 * A variant of sm_90a code forced on `a` x `b`: on compute capability 9.0 (`hopper`) run twice,
 * each time right against `ref` with every output written; elsewhere refused with
 * cudaErrorInvalidValue.
 */
async function checkSm90aVariant(a: CsrMatrix, b: DenseMatrix, ref: Float64Array, variant: string, hopper: boolean, what: string): Promise<void> {
  const dtype = a.dtype
  for (let rep = 0; rep < (hopper ? 2 : 1); rep++) {
    const out = poisoned(dtype, a.rows * b.cols)
    const err = await errorOf(() => spmm(a, b, {device: 'cuda', out, variant}))
    const run = `${what} run ${rep}`
    if (!hopper) {
      expect((err as {code?: string})?.code, `${run}: sm_90a code runs on 9.0 only`).to.equal('cudaErrorInvalidValue')
      continue
    }
    expect(err, run).to.equal(undefined)
    const r = compare(out, dtype, ref)
    expect(r.nonFinite, `${run}: unwritten outputs`).to.equal(0)
    expect(r.relativeError, run).to.be.a('number').and.at.most(TOLERANCE[dtype])
  }
}

/**
 * Each of the GEMM engine's `variants` forced (checkSm90aVariant) on M and K off the tiles
 * (default 300 x 1000: the last stage 40 columns; 129 x 257: K odd, 8 + 1 rows of the second row
 * block) at each sparsity, N = 128 (one column block), 136 (a partial second one) and 256; N =
 * 136 only off 9.0, where each must be refused. `seed` seeds the patterns, values and B.
 */
async function checkGemmEngineShapes(dtype: 'f16' | 'bf16', hopper: boolean, sparsities: number[], seed: number, variants: string[], shapes: Array<[number, number]> = [[300, 1000], [129, 257]]): Promise<void> {
  for (const [si, [m, k]] of shapes.entries()) {
    for (const sparsity of sparsities) {
      const nnz = Math.round(m * k * (1 - sparsity))
      const csr = randomPattern(m, k, nnz, seed + 30 + 10 * si + Math.round(100 * sparsity))
      const a: CsrMatrix = {...csr, values: encode(uniform(nnz, seed + si), dtype), dtype}
      for (const n of hopper ? [128, 136, 256] : [136]) {
        const b = {rows: k, cols: n, dtype, data: encode(uniform(k * n, seed + 1 + n), dtype)}
        const ref = await spmmReference(a, b)
        for (const variant of variants) await checkSm90aVariant(a, b, ref, variant, hopper, `${variant} ${m}x${k} ${100 * sparsity}% N=${n}`)
      }
    }
  }
}

/** twoFourPattern drawing from a linear congruential sequence started at `seed`. */
function lcgTwoFour(m: number, k: number, seed: number, keep: (r: number, g: number) => number): CsrMatrix {
  let x = seed
  return twoFourPattern(m, k, () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x >>> 8), keep)
}

function twoFourShapes(): Shape[] {
  return [
    {name: 'M=7 K=96 N=40', csr: lcgTwoFour(7, 96, 1, () => 2), n: 40},
    {name: 'M=300 K=1000 N=16', csr: lcgTwoFour(300, 1000, 2, () => 2), n: 16},
    {name: 'groups of 0-2 nonzeros, empty rows, M=33 K=70 N=1', csr: lcgTwoFour(33, 70, 3, (r, g) => (r % 5 === 2 ? 0 : (r + g) % 3)), n: 1},
    {name: 'N=17 (element-wise B)', csr: lcgTwoFour(64, 256, 4, () => 2), n: 17},
    {name: 'N=136 (column blocks 128 + 8), K=2048', csr: lcgTwoFour(257, 2048, 5, () => 2), n: 136},
  ]
}

/** Every SpMM variant that can run the shape, against the float64 reference (CUDA). */
async function checkAllVariants(shape: Shape, dtype: ValueDType, seed: number, structure?: '2:4'): Promise<number> {
  const {csr, n} = shape
  const nnz = csr.columnIndices.length
  const a: CsrMatrix = {...csr, values: encode(uniform(nnz, seed), dtype), dtype}
  const b = {rows: csr.cols, cols: n, dtype, data: encode(uniform(csr.cols * n, seed + 1), dtype)}
  const ref = await spmmReference(a, b)
  const list = spmmVariants({m: csr.rows, k: csr.cols, n, nnz, dtype, structure})
  if (dtype !== 'f32') {
    expect(list.variants.some((v) => v.startsWith('bm_')), `${shape.name}: the bitmap kernel's variants are listed`).to.equal(true)
    expect(list.variants.some((v) => v.startsWith('s24_')), `${shape.name}: the 2:4 kernel's variants listed only for 2:4`).to.equal(structure === '2:4')
  }
  expect(list.variants, `${shape.name} ${dtype}: the selection picks a listed variant`).to.include(list.selected)
  for (const variant of list.variants) {
    const out = poisoned(dtype, csr.rows * n)
    await spmm(a, b, {device: 'cuda', out, variant})
    const r = compare(out, dtype, ref)
    expect(r.nonFinite, `${shape.name} ${dtype} ${variant}: unwritten outputs`).to.equal(0)
    expect(r.relativeError, `${shape.name} ${dtype} ${variant}`).to.be.a('number').and.at.most(TOLERANCE[dtype])
  }
  return list.variants.length
}

/**
 * Inf and NaN in row 0 of B, which only some rows reference: those rows' outputs are
 * non-finite, every other row must be finite and right. (Reverse offset alignment once
 * multiplied the previous row's leading elements by zero against B's row 0: 0 * Inf = NaN.)
 */
async function checkInfRowZero(device: Device, dtype: ValueDType, variant?: string): Promise<void> {
  const {csr, n, referencing} = infRowZeroCase()
  await checkInfRow(device, dtype, csr, n, 0, referencing, variant)
}

/**
 * Inf and NaN in row `row` of B (N = n): the rows of A in `referencing` (those that hold column
 * `row`) come out non-finite in every column, every other row finite and right.
 */
async function checkInfRow(device: Device, dtype: ValueDType, csr: CsrMatrix, n: number, row: number, referencing: Set<number>, variant?: string): Promise<void> {
  const nnz = csr.columnIndices.length
  const a: CsrMatrix = {...csr, values: encode(uniform(nnz, 31), dtype), dtype}
  const bf = uniform(csr.cols * n, 32)
  for (let j = 0; j < n; j++) bf[row * n + j] = j % 3 === 1 ? Number.NaN : j % 2 === 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY
  const b = {rows: csr.cols, cols: n, dtype, data: encode(bf, dtype)}
  const out = poisoned(dtype, csr.rows * n)
  await spmm(a, b, {device, out, variant})
  const finiteB = {...b, data: encode(bf.map((x) => (Number.isFinite(x) ? x : 0)), dtype)}
  const ref = await spmmReference(a, finiteB)
  const what = `${device} ${dtype} ${variant ?? ''} N=${n}`
  for (let r = 0; r < csr.rows; r++) {
    const rowOut = out.subarray(r * n, (r + 1) * n)
    const rowRef = ref.subarray(r * n, (r + 1) * n)
    const res = compare(rowOut, dtype, rowRef)
    if (referencing.has(r)) {
      expect(res.nonFinite, `${what}: row ${r} references B's row ${row}`).to.equal(n)
    } else {
      expect(res.nonFinite, `${what}: row ${r} must not see B's row ${row}`).to.equal(0)
      expect(res.relativeError, `${what}: row ${r}`).to.be.at.most(TOLERANCE[dtype])
    }
  }
}

/** The rows of `csr` that hold column `col`. */
// Forces `variant` on each (matrix, N) with fresh values, twice each (a second launch on the same
// operand: its counters must be zero again), against the float64 reference into poisoned outputs.
async function checkForced(variant: string, dtype: ValueDType, cases: Array<[CsrMatrix, number]>): Promise<void> {
  for (const [m, n] of cases) {
    const mnnz = m.columnIndices.length
    const a: CsrMatrix = {...m, values: encode(uniform(mnnz, 40 + n), dtype), dtype}
    const b = {rows: m.cols, cols: n, dtype, data: encode(uniform(m.cols * n, 41 + n), dtype)}
    const ref = await spmmReference(a, b)
    for (let rep = 0; rep < 2; rep++) {
      const out = poisoned(dtype, m.rows * n)
      await spmm(a, b, {device: 'cuda', out, variant})
      const r = compare(out, dtype, ref)
      const what = `${variant} ${m.rows}x${m.cols} N=${n} run ${rep}`
      expect(r.nonFinite, `${what}: unwritten outputs`).to.equal(0)
      expect(r.relativeError, what).to.be.a('number').and.at.most(TOLERANCE[dtype])
    }
  }
}

function rowsHolding(csr: CsrMatrix, col: number): Set<number> {
  const rows = new Set<number>()
  for (let r = 0; r < csr.rows; r++) {
    for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) if (csr.columnIndices[i] === col) rows.add(r)
  }
  return rows
}

describe('kernels on the CPU against the float64 reference', () => {
  suite('cpu')

  for (const dtype of DTYPES) {
    it(`SpMM ${dtype}: Inf/NaN in row 0 of B reach only the rows that reference it`, () => checkInfRowZero('cpu', dtype))
  }

  it('a zero output is not mistaken for a pass when nothing is written (poison check)', () => {
    const r = compare(poisoned('f16', 4), 'f16', new Float64Array(4))
    expect(r.passed).to.equal(false)
    expect(r.nonFinite).to.equal(4)
  })

  it('uses the given thread count and gives the same result', async () => {
    const shape = awkwardShapes()[0]
    const a: CsrMatrix = {...shape.csr, values: uniform(shape.csr.columnIndices.length, 9), dtype: 'f32'}
    const b = {rows: a.cols, cols: shape.n, dtype: 'f32' as const, data: uniform(a.cols * shape.n, 10)}
    const one = await spmm(a, b, {device: 'cpu', threads: 1})
    const two = await spmm(a, b, {device: 'cpu', threads: 2})
    expect(Array.from(two.c.data)).to.deep.equal(Array.from(one.c.data))
  })
})

// The selection of the unstructured kernel on the streaming engine (family ube, rank 15), planned
// without data (the sizes and nnz alone decide; no GPU needed, a build with CUDA is): on compute
// capability 9.0 for unstructured f16/bf16 at N <= 64 above a density that falls with N (15 % at
// N < 8, 7.5 % at N 8-16, 5 % above: UnstStreamWins); the pair stream (ube_p8) from 60 % sparsity
// on (UnstPairsWins), below it the bitmap stream, w8 to N = 32 and w4 above; both forms listed for
// --tune; declined (the older families run) past N = 64, under those densities, for f32 and for
// 2:4 matrices (the 2:4 kernels); on any other GPU or none, never listed nor selected.
describe('the selection of the unstructured stream kernels (ube: bitmap and pair stream)', function () {
  before(function () {
    if (!cudaInfo().built) {
      console.log('    skipping: the addon is built without CUDA, which has no SpMM variants')
      this.skip()
    }
  })

  for (const dtype of ['f16', 'bf16'] as const) {
    it(`${dtype}: on compute capability 9.0 at N <= 64 and density >= 15 / 7.5 / 5 % by N, nowhere else`, () => {
      const hopper = cudaInfo().computeCapability === '9.0'
      const plan = (m: number, k: number, nnz: number, n: number, d: ValueDType = dtype, structure?: '2:4') =>
        spmmVariants({m, k, n, nnz, dtype: d, structure})
      const half = 4096 * 4096 / 2
      const fivePercent = Math.ceil(4096 * 4096 / 20)
      const picks = [1, 8, 16, 32, 33, 64].map((n) => plan(4096, 4096, half, n).selected)
      if (hopper) expect(picks).to.deep.equal(['ube_w8', 'ube_w8', 'ube_w8', 'ube_w8', 'ube_w4', 'ube_w4'])
      else for (const v of picks) expect(v).to.not.match(/^ube_/)
      expect(plan(4096, 4096, half, 16).variants.filter((v) => v.startsWith('ube_'))).to.deep.equal(hopper ? ['ube_w8', 'ube_p8'] : [])
      expect(plan(4096, 4096, half, 40).variants.filter((v) => v.startsWith('ube_'))).to.deep.equal(hopper ? ['ube_w4', 'ube_p8'] : [])
      expect(plan(4096, 4096, fivePercent, 32).selected, '5 % dense, N = 32').to.equal(hopper ? 'ube_p8' : plan(4096, 4096, 0, 32).selected)
      const tenPercent = Math.ceil(4096 * 4096 / 10)
      expect(plan(4096, 4096, tenPercent, 8).selected, '10 % dense, N = 8').to.equal(hopper ? 'ube_p8' : plan(4096, 4096, 0, 8).selected)
      // The pair stream from 60 % sparsity on, at every N to 64; one nonzero more, the bitmap stream.
      const sixty = (4096 * 4000 * 2) / 5
      const pairs = [1, 8, 33, 64].map((n) => plan(4096, 4000, sixty, n).selected)
      if (hopper) expect(pairs).to.deep.equal(['ube_p8', 'ube_p8', 'ube_p8', 'ube_p8'])
      else for (const v of pairs) expect(v).to.not.match(/^ube_/)
      expect(plan(4096, 4000, sixty + 1, 8).selected, 'just under 60 %').to.equal(hopper ? 'ube_w8' : plan(4096, 4000, sixty + 1, 8).selected)
      expect(plan(4096, 4000, sixty + 1, 40).selected, 'just under 60 %, N = 40').to.equal(hopper ? 'ube_w4' : plan(4096, 4000, sixty + 1, 40).selected)
      for (const [what, p] of [
        ['N = 65', plan(4096, 4096, half, 65)],
        ['over 95 % sparse, N = 32', plan(4096, 4096, fivePercent - 1, 32)],
        ['5 % dense, N = 8', plan(4096, 4096, fivePercent, 8)],
        ['10 % dense, N = 1', plan(4096, 4096, tenPercent, 1)],
        ['2:4', plan(4096, 4096, half, 8, dtype, '2:4')],
      ] as const) expect(p.selected, what).to.not.match(/^ube_/)
      expect(plan(4096, 4096, half, 65).variants.some((v) => v.startsWith('ube_')), 'not listed past N = 64').to.equal(false)
      expect(plan(4096, 4096, half, 8, 'f32').variants.some((v) => v.startsWith('ube_')), 'f32').to.equal(false)
    })
  }
})

describe('kernels on CUDA against the float64 reference', function () {
  before(function () {
    const info = cudaInfo()
    if (!info.available) {
      console.log(`    skipping the CUDA kernel tests: ${info.reason}`)
      this.skip()
    }
  })
  suite('cuda')

  for (const dtype of DTYPES) {
    it(`SpMM ${dtype}: Inf/NaN in row 0 of B reach only the rows that reference it, every variant`, async () => {
      const {csr, n} = infRowZeroCase()
      const list = spmmVariants({m: csr.rows, k: csr.cols, n, nnz: csr.columnIndices.length, dtype})
      expect(list.variants.length).to.be.greaterThan(5)
      for (const variant of ['auto', ...list.variants]) await checkInfRowZero('cuda', dtype, variant)
    })
  }

  it('SpMM: the deep variants (_u16) are listed for f32 only, for --tune, and the selection does not pick them', () => {
    const f32 = spmmVariants({m: 2048, k: 1024, n: 256, nnz: Math.round(2048 * 1024 * 0.3), dtype: 'f32'})
    const deep = f32.variants.filter((v) => /^(tile_v4_t(4|8|16|32)_x[12]|split_v4_t(4|8|16|32)_w[12])_u16$/.test(v))
    expect(deep).to.have.length(16)
    expect(f32.selected).to.not.match(/_u16$/)
    const f16 = spmmVariants({m: 2048, k: 1024, n: 256, nnz: Math.round(2048 * 1024 * 0.3), dtype: 'f16'})
    expect(f16.variants.some((v) => v.endsWith('_u16'))).to.equal(false)
  })

  let seed = 900
  for (const shape of variantShapes()) {
    for (const dtype of DTYPES) {
      const s = (seed += 10)
      it(`SpMM ${dtype}, every kernel variant: ${shape.name}`, async () => {
        expect(await checkAllVariants(shape, dtype, s)).to.be.greaterThan(0)
      })
    }
  }

  // The 2:4 kernel (and every other variant) on 2:4 matrices: M and K not multiples of 16 /
  // 32, groups with fewer than two nonzeros, N = 1 (decode), odd N, wide N, Inf/NaN in B.
  for (const [i, shape] of twoFourShapes().entries()) {
    for (const dtype of ['f16', 'bf16'] as const) {
      it(`SpMM ${dtype}, 2:4, every kernel variant: ${shape.name}`, async () => {
        expect(await checkAllVariants(shape, dtype, 1700 + 10 * i, '2:4')).to.be.greaterThan(0)
      })
    }
  }
  // The 2:4 kernels on the streaming engine (wgmma, sm_90a), 128-row blocks (w8) and 64-row ones
  // (w4): listed on compute capability 9.0 for N = 1..64; forced, right at N = 8, 24
  // (instruction N 32, B's box wider than B) and 64, and at N = 1, 5, 13, 29, 33, 57, 63 (rows of
  // N halves laid out by the consumers; w8's N = 1 reads B as it is), each called twice. Under
  // SPARSE_S24E_PAD's default ('auto', v44) N 33, 57, 63 and, on w4, 29 run with B padded to its
  // box by a copy kernel first; pad.test.ts runs these tests again under 'off' (every N's rows
  // laid out by the consumers) and 'all' (every N 9-63 padded), pdl.test.ts the copy under PDL.
  // (That one operand's counters are zero again after every launch is checked in the workbench,
  // which launches each operand twice.)
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, 2:4: the streaming engine's variants (s24e) where they can run`, async function () {
      const {csr} = twoFourShapes()[1]
      const nnz = csr.columnIndices.length
      const listed = (n: number) => spmmVariants({m: csr.rows, k: csr.cols, n, nnz, dtype, structure: '2:4'}).variants.filter((v) => v.startsWith('s24e_'))
      if (cudaInfo().computeCapability !== '9.0') {
        expect(listed(16), 'only compute capability 9.0 runs sm_90a code').to.deep.equal([])
        return
      }
      const both = ['s24e_w8_k256', 's24e_w4_k256']
      expect([1, 8, 12, 16, 24, 40, 63, 64, 65, 72].map(listed)).to.deep.equal([both, both, both, both, both, both, both, both, [], []])
      // Reused ring slots: 100 x 16384 (64 K stages of 256) is planned as split-K in clusters of
      // 8, eight stages a block: more than w8's three-stage ring and w4's seven- and four-stage
      // rings at N = 16 and 64 hold, so the sanitize task's racecheck sees slots refilled after
      // their readers' release (v20: with one lane releasing for its warp it reported hazards
      // there; the addon's other cases give no block more stages than its ring).
      const long = lcgTwoFour(100, 16384, 6, () => 2)
      // B's paths by N: 8 whole rows; 64 the tensor copy; 48 the tensor copy of a wider box (its
      // columns past N filled by the copy engine); 24, 40, 56 rows laid out by the consumers in
      // whole 16-byte units (v41); 5, 13, 29, 33, 57, 63 element by element (33, 57, 63 and w4's 29
      // padded by default, above); 1 read as it is (K-major).
      const cases: Array<[CsrMatrix, number]> = [...[8, 24, 40, 48, 56, 64, 1, 5, 13, 29, 33, 57, 63].map((n): [CsrMatrix, number] => [csr, n]), [long, 16], [long, 63], [long, 64]]
      for (const variant of both) {
        await checkForced(variant, dtype, cases)
        // Inf and NaN in one row of B, at N = 1 (w8: B read as it is, through overlapping core
        // matrices), 8, 40 (B's rows laid out by the consumers in 16-byte units, v41), 63 (element
        // by element under SPARSE_S24E_PAD=off; padded by default) and 64: a 2:4 group's padded
        // zeros times Inf would be NaN in rows that do not hold that column (the exact sums mend
        // them); on 33 x 70 (groups of 0-2 nonzeros, K ragged) and 300 x 1000.
        for (const [m, col] of [[twoFourShapes()[2].csr, 5], [csr, 517]] as const) {
          for (const n of [1, 8, 40, 63, 64]) await checkInfRow('cuda', dtype, m, n, col, rowsHolding(m, col), variant)
        }
      }
    })
  }
  // Split-K clusters of 2 (4096^2, 4096 x 11008 on w4, 6144 x 4096 on w8): the partners' sums
  // meet by ClusterPush, each block sending half of its sums into the other's shared memory
  // (v27). Two K stages (K = 500, the last one ragged) are planned as clusters of 2 whatever the
  // row blocks' count up to 66 (stream-formats.test.ts: plan(10, 2)). Kept apart from the test
  // above: compute-sanitizer's racecheck does not finish on the push (v28: past 140-400 s, where
  // the same kernel summing by cluster barriers finishes in seconds), so the sanitize task runs
  // racecheck on the test above and memcheck on both (docs/gpu-runs.md). The tool's limit, not a
  // race of ours (v38, scripts/gpu/probe/push_probe.cu, ClusterPush's protocol alone, correct
  // without the tool in every form): under racecheck the form with plain cluster stores between
  // two full cluster barriers finishes with 0 hazards, the form where every warp waits on the
  // push's cluster barrier finishes (0 errors, 1 warning), and only the engine's form, whose
  // receiving warps arrive on that barrier and never wait on it, gives no summary in 50 s.
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, 2:4: the streaming engine's split-K clusters of 2 (ClusterPush)`, async function () {
      if (cudaInfo().computeCapability !== '9.0') this.skip()
      const pair = lcgTwoFour(150, 500, 7, () => 2)
      for (const variant of ['s24e_w8_k256', 's24e_w4_k256']) {
        await checkForced(variant, dtype, [1, 8, 13, 64].map((n): [CsrMatrix, number] => [pair, n]))
      }
    })
  }
  // The unstructured kernels on the streaming engine (spmm_unst_engine_sm90a.cu, family ube: the
  // bitmap stream, ube_w8 / ube_w4, and the pair stream, ube_p8 at every N, decoded into wgmma's
  // A registers), each form forced by name on compute capability 9.0:
  // M and K off 16 and 128 (300 x 1000: the last stage 104 columns, its last tile 8; 129 x 257;
  // 7 x 96), sparsity 0 % (every stage at the largest capacity), 50, 90, 99 and 100 % (nnz = 0:
  // empty stages), N = 1, 3, 13 (B's rows laid out by the consumers), 40 (w4, ragged), 8, 16, 32,
  // 64, each run twice; Inf and NaN in one row of B at N = 1, 8, 40 and 64 (the dense product's
  // NaN where a row holds that column, nothing elsewhere; the pair stream's +0 halves beside a
  // nonzero add nothing); a capacity forced below the densest stage is refused with the encoder's
  // reason. Elsewhere: not listed, and refused when forced.
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, unstructured: the bitmap- and pair-stream variants (ube) where they can run`, async function () {
      const hopper = cudaInfo().computeCapability === '9.0'
      const shapes: Array<[number, number]> = [[300, 1000], [129, 257], [7, 96]]
      const ns = hopper ? [1, 3, 8, 13, 16, 32, 40, 64] : [8, 64]
      for (const [si, [m, k]] of shapes.entries()) {
        for (const sparsity of [0, 0.5, 0.9, 0.99, 1]) {
          const nnz = Math.round(m * k * (1 - sparsity))
          const csr = randomPattern(m, k, nnz, 80 + 10 * si + Math.round(100 * sparsity))
          const a: CsrMatrix = {...csr, values: encode(uniform(nnz, 50 + si), dtype), dtype}
          for (const n of ns) {
            const b = {rows: k, cols: n, dtype, data: encode(uniform(k * n, 51 + n), dtype)}
            const ref = await spmmReference(a, b)
            for (const variant of [n <= 32 ? 'ube_w8' : 'ube_w4', 'ube_p8'])
              await checkSm90aVariant(a, b, ref, variant, hopper, `${variant} ${m}x${k} ${100 * sparsity}% N=${n}`)
          }
        }
      }
      if (!hopper) return
      const csr = randomPattern(300, 1000, 150_000, 90)
      for (const n of [1, 8, 40, 64]) {
        await checkInfRow('cuda', dtype, csr, n, 517, rowsHolding(csr, 517), n <= 32 ? 'ube_w8' : 'ube_w4')
        await checkInfRow('cuda', dtype, csr, n, 517, rowsHolding(csr, 517), 'ube_p8')
      }
      // Capacities forced: 256 holds anything; 16 values a tile cannot hold a dense stage.
      const dense = randomPattern(129, 257, 129 * 257, 91)
      const a: CsrMatrix = {...dense, values: encode(uniform(129 * 257, 92), dtype), dtype}
      const b = {rows: 257, cols: 8, dtype, data: encode(uniform(257 * 8, 93), dtype)}
      const ref = await spmmReference(a, b)
      const out = poisoned(dtype, 129 * 8)
      await spmm(a, b, {device: 'cuda', out, variant: 'ube_w8_c256'})
      expect(compare(out, dtype, ref).relativeError).to.be.at.most(TOLERANCE[dtype])
      const err = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'ube_w8_c16'}))
      expect((err as Error)?.message).to.match(/ube_w8_c16: stage \(row block 0, K stage 0\) holds 16384 nonzeros, over the ring's capacity of 1024/)
      // The pair stream: 128 registers a tile hold anything; 16 (1024 a stage) cannot hold a dense
      // stage's 8192 registers (128 rows x 64 pairs).
      const outP = poisoned(dtype, 129 * 8)
      await spmm(a, b, {device: 'cuda', out: outP, variant: 'ube_p8_c128'})
      expect(compare(outP, dtype, ref).relativeError).to.be.at.most(TOLERANCE[dtype])
      const errP = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'ube_p8_c16'}))
      expect((errP as Error)?.message).to.match(/ube_p8_c16: stage \(row block 0, K stage 0\) holds 8192 .*over the ring's capacity of 1024/)
    })
  }
  // The unstructured kernels on the Hopper GEMM engine (spmm_unst_gemm_sm90a.cu, family ung: the
  // pair stream cut in stages of 128 rows x 64 columns, decoded into wgmma's A registers; N >= 128):
  // both tile widths, whole tiles, the hybrid stream-K (every tile in pieces when they are fewer
  // than the SMs) and the ragged wave split by K (tiles in up to 4 pieces, added by the first or,
  // _sk3, reduced by all of them together, each storing its share of the columns), each
  // forced, each run twice on one prepared operand (stream-K's flags must be left zero), listed
  // for --tune where they can run; M and K off the tiles (300 x 1000: the last stage 40 columns;
  // 129 x 257: K odd, 8 + 1 rows of the second row block), sparsity 0 % (every stage full: the
  // 256-column kernel's ring of 4 stages cannot hold it, the stream's own capacity then picks
  // the 3-stage one), 50, 90, 99 and 100 % (nnz = 0), N = 128 (one column block), 136 (a partial
  // second one) and 256; Inf and NaN in one row of B (the dense product would put NaN in every
  // row; the rows that do not hold that column must stay finite: UnResum); a capacity forced
  // below a dense stage is refused with the encoder's reason, N % 8 != 0 too. Elsewhere: not
  // listed, and refused when forced.
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, unstructured: the GEMM engine's variants (ung), forced`, async function () {
      const hopper = cudaInfo().computeCapability === '9.0'
      const variants = ['ung_n256', 'ung_n256_sk1', 'ung_n256_sk2', 'ung_n256_sk3', 'ung_n128', 'ung_n128_sk1', 'ung_n128_sk2', 'ung_n128_sk3']
      const listed = spmmVariants({m: 4096, k: 4096, n: 256, nnz: 4096 * 2048, dtype}).variants
      expect(listed.filter((v) => v.startsWith('ung_')).sort(), 'listed for --tune on 9.0').to.deep.equal(hopper ? [...variants].sort() : [])
      await checkGemmEngineShapes(dtype, hopper, [0, 0.5, 0.9, 0.99, 1], 150, variants)
      if (!hopper) return
      const csr = randomPattern(300, 1000, 150_000, 190)
      for (const n of [136, 256]) {
        for (const variant of ['ung_n256_sk2', 'ung_n128_sk1', 'ung_n256_sk3', 'ung_n128_sk3']) await checkInfRow('cuda', dtype, csr, n, 517, rowsHolding(csr, 517), variant)
      }
      // Capacities forced: 128 registers a tile hold anything; 120 (3840 a stage) cannot hold a
      // dense stage's 4096 (128 rows x 32 pairs).
      const dense = randomPattern(129, 257, 129 * 257, 191)
      const a: CsrMatrix = {...dense, values: encode(uniform(129 * 257, 192), dtype), dtype}
      const b = {rows: 257, cols: 128, dtype, data: encode(uniform(257 * 128, 193), dtype)}
      const ref = await spmmReference(a, b)
      const out = poisoned(dtype, 129 * 128)
      await spmm(a, b, {device: 'cuda', out, variant: 'ung_n256_c128'})
      expect(compare(out, dtype, ref).relativeError).to.be.at.most(TOLERANCE[dtype])
      const err = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'ung_n256_c120'}))
      expect((err as Error)?.message).to.match(/ung_n256_c120: stage \(row block 0, K stage 0\) holds 4096 .*over the ring's capacity of 3840/)
      // N % 8 != 0 (B's tensor map needs rows of 16 bytes): rejected, not run.
      const b132 = {rows: 257, cols: 132, dtype, data: encode(uniform(257 * 132, 194), dtype)}
      const err132 = await errorOf(() => spmm(a, b132, {device: 'cuda', variant: 'ung_n256'}))
      expect((err132 as {code?: string})?.code).to.equal('cudaErrorInvalidValue')
    })
  }

  // Unstructured A stored dense on the GEMM engine (family und: the dense kernels, both operands
  // from shared memory, and DenseResum for CSR's semantics): each listed variant and the other
  // decompositions forced, run twice, on 300 x 1000 and 129 x 264 (K a multiple of 8, 8 + 1 rows
  // of the second row block) at 0, 50, 90 and 100 % sparse, N = 128, 136 and 256; Inf and NaN in a
  // row of B; K not a multiple of 8 refused (A's and B's tensor maps). (The selection's picks: the
  // selection test below.)
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, unstructured: A stored dense on the GEMM engine (und), forced`, async function () {
      const hopper = cudaInfo().computeCapability === '9.0'
      const listed = spmmVariants({m: 4096, k: 4096, n: 256, nnz: 4096 * 2048, dtype}).variants
      const und = ['und_n256', 'und_n256_sk3', 'und_n128', 'und_n128_sk3']
      expect(listed.filter((v) => v.startsWith('und_')).sort(), 'listed for --tune on 9.0').to.deep.equal(hopper ? [...und].sort() : [])
      expect(spmmVariants({m: 4096, k: 4100, n: 256, nnz: 4096 * 2048, dtype}).variants.filter((v) => v.startsWith('und_')), 'K % 8 != 0').to.deep.equal([])
      await checkGemmEngineShapes(dtype, hopper, [0, 0.5, 0.9, 1], 350, [...und, 'und_n256_sk1', 'und_n128_sk2'], [[300, 1000], [129, 264]])
      if (!hopper) return
      const csr = randomPattern(300, 1000, 150_000, 390)
      for (const n of [136, 256]) {
        for (const variant of ['und_n256', 'und_n128_sk3', 'und_n256_sk2']) await checkInfRow('cuda', dtype, csr, n, 517, rowsHolding(csr, 517), variant)
      }
      const odd = randomPattern(129, 257, 10_000, 391)
      const a: CsrMatrix = {...odd, values: encode(uniform(10_000, 392), dtype), dtype}
      const b = {rows: 257, cols: 128, dtype, data: encode(uniform(257 * 128, 393), dtype)}
      const err = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'und_n128'}))
      expect((err as {code?: string})?.code, 'K % 8 != 0').to.equal('cudaErrorInvalidValue')
    })
  }

  /**
   * The selection's picks in a child process with the environment variable `name` set to
   * `value` (unset when undefined; a selection model reads it once per process): `calls`, lines
   * of `pick(...)` over the library's spmmVariants, each giving a variant name.
   */
  function picksWith(name: string, value: string | undefined, calls: string[]): string[] {
    const script = [
      "const {spmmVariants} = await import(process.argv[1])",
      "const pick = (m, k, n, d, more = {}) => spmmVariants({m, k, n, nnz: Math.round(m * k * d), dtype: 'f16', ...more}).selected",
      `console.log(JSON.stringify([${calls.join(', ')}]))`,
    ].join('\n')
    const env = {...process.env}
    delete env[name]
    if (value !== undefined) env[name] = value
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, resolve('dist/index.js')], {env, encoding: 'utf8'})
    expect(r.status, r.stderr).to.equal(0)
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as string[]
  }

  // und's branch below 2^31 multiply-adds (UndSmallModel, common/gemm_plan.h; v37, fitted in v38):
  // on in the library with the fitted constants (kUndSmallFitted); SPARSE_UND_SMALL="FIXED,
  // PER_CYCLE" replaces them and "off" turns the branch off (read once per process, so a child
  // process runs the selection). On 1024^2 at N = 1024 und wins with the fitted constants and
  // with ung's own; malformed values are ignored (the fitted constants).
  it('SpMM f16, unstructured, the GEMM engine: A stored dense below 2^31 multiply-adds, SPARSE_UND_SMALL (a child process)', function () {
    if (cudaInfo().computeCapability !== '9.0') this.skip()
    const calls = ['pick(1024, 1024, 1024, 0.5)', 'pick(1024, 1024, 176, 0.5)', 'pick(512, 512, 256, 0.01)', 'pick(1024, 1024, 1024, 0.5, {keepSparse: true})']
    const run = (value: string | undefined) => picksWith('SPARSE_UND_SMALL', value, calls)
    const off = run('off')
    expect(off[0], 'off: the pair stream below 2^31').to.match(/^ung_/)
    const fitted = run(undefined)
    expect(fitted[0], 'the fitted constants: A stored dense').to.match(/^und_n(128|256)/)
    const on = run('6.18,0.000584')
    expect(on[0], 'ung\'s constants: A stored dense').to.match(/^und_n(128|256)/)
    for (const picks of [fitted, on]) {
      expect(picks[1], 'below the ridge: never').to.equal(off[1])
      expect(picks[2], '99 % on 512^2: the CSR kernels').to.equal(off[2])
      expect(picks[3], 'keepSparse: no und').to.match(/^ung_/)
    }
    expect(run('5000,0.000584')[0], 'a fixed cost above ung\'s estimate: the pair stream').to.equal(off[0])
    for (const bad of ['', '6.18', '6.18,0', '-1,0.0005', '6.18,0.0005x', 'nan,1', 'OFF']) expect(run(bad)[0], `SPARSE_UND_SMALL=${bad}: ignored`).to.equal(fitted[0])
  })

  // The 2:4 family's launch model (Gemm24Model, common/gemm_plan.h; v37, the library's since
  // v38 with kGemm24Fitted, refitted in v53, v57 and v62): SPARSE_S24G_MODEL="S128,S256,F,T0,FX0,L2[,FX3[,
  // S128N64,S256N64[,S128N256[,S256N192]]]]" replaces its constants and "off" turns it off (v12's Gemm24Rows and the
  // owner's split; read once per process, so child processes run the selection). 6144 x 4096 at
  // N = 256: whole 128-row tiles with the model, the 256-row split without; 4096^2 at N = 256:
  // whole 128 x 64 tiles with the library's constants (v62) and with v38's and 64-column stages
  // of 380 and 700 cycles, 128-row tiles in two pieces with v38's alone; malformed values are
  // ignored.
  it('SpMM f16, 2:4, the GEMM engine: the launch model\'s pick, SPARSE_S24G_MODEL (a child process)', function () {
    if (cudaInfo().computeCapability !== '9.0') this.skip()
    const two4 = "{structure: '2:4'}"
    const calls = [`pick(6144, 4096, 256, 0.5, ${two4})`, `pick(4096, 4096, 2048, 0.5, ${two4})`, `pick(4096, 4096, 64, 0.5, ${two4})`, `pick(4096, 4096, 256, 0.5, ${two4})`,
      `pick(11008, 4096, 2048, 0.5, ${two4})`]
    const run = (value: string | undefined) => picksWith('SPARSE_S24G_MODEL', value, calls)
    const off = run('off')
    expect(off[0], 'off: Gemm24Rows, the split').to.equal('s24g_m256_n128_s4_sk2')
    expect(off[3], 'off: Gemm24Rows, the split').to.equal('s24g_m256_n128_s4_sk2')
    const fitted = run(undefined)
    expect(fitted[0], 'fitted: whole 128-row tiles').to.equal('s24g_m128_n128_s6')
    expect(fitted[1], '4096^2 at N = 2048: whole 128 x 256 tiles (v62)').to.equal('s24g_m128_n256_s5_ss1')
    expect(fitted[3], '4096^2 at N = 256: whole 128 x 64 tiles (v62)').to.equal('s24g_m128_n64_s12')
    const on = run('600,1100,60,1.1,7.2,5300')
    expect(on[0], 'no FX3: whole 128-row tiles').to.equal('s24g_m128_n128_s6')
    expect(on[3], 'no FX3: the owner adds').to.equal('s24g_m128_n128_s6_sk2')
    const narrow = run('600,1100,60,1.1,7.2,5300,7.2,380,700')
    expect(narrow[3], '64-column stages given: whole 128 x 64 tiles').to.equal('s24g_m128_n64_s12')
    expect(narrow[1], '4096^2 at N = 2048: still whole 256 x 128 tiles').to.equal('s24g_m256_n128_s4')
    // v55: a tenth number, the 128 x 256 `_ss1` tile's stage cycles (the 64-column ones 0: not
    // candidates); cheaper than 256 x 128's, it takes 4096^2 at N = 2048 (256 tiles either way).
    const wide = run('600,1100,60,1.1,7.2,5300,7.2,0,0,1000')
    expect(wide[1], '128 x 256 stage given: whole `_ss1` tiles (v59: the 5-stage ring)').to.equal('s24g_m128_n256_s5_ss1')
    expect(wide[3], 'no 64-column tiles with their stages 0').to.not.match(/_n64_/)
    // v56: an eleventh, the 256 x 192 `_ss1` tile's (the 128 x 256 one's 0: not a candidate); at
    // 1.2x 256 x 128's stage for 1.5x its work it takes 11008 x 4096 at N = 2048 (473 tiles, 3.6
    // waves, against 688 of 256 x 128).
    const w192 = run('600,1100,60,1.1,7.2,5300,7.2,0,0,0,1300')
    expect(w192[4], '256 x 192 stage given: whole `_ss1` tiles').to.equal('s24g_m256_n192_s4_ss1')
    expect(w192[1], 'no 128 x 256 tiles with their stage 0').to.not.match(/_n256_/)
    // v57: the library's constants have both `_ss1` tiles' stages; 11008 x 4096 at N = 2048 runs
    // whole 256 x 192 tiles (on an H100 0.97x the time of v53's pick, 256 x 128 reduced together).
    expect(fitted[4], 'the library: whole 256 x 192 tiles').to.equal('s24g_m256_n192_s4_ss1')
    for (const picks of [off, fitted, on, narrow, wide, w192]) expect(picks[2], 'N = 64: the streaming engine either way').to.match(/^s24e_/)
    for (const bad of ['', '600,1100,60,1.1,7.2', '600,1100,60,1.1,7.2,5300x', '600,1100,0,1.1,7.2,5300', '600,1100,60,1.1,7.2,5300,-1', 'nan,1100,60,1.1,7.2,5300', 'Off', '600,1100,60,1.1,7.2,5300,7.2,380', '600,1100,60,1.1,7.2,5300,7.2,380,0', '600,1100,60,1.1,7.2,5300,7.2,0,0', '600,1100,60,1.1,7.2,5300,7.2,0,0,0', '600,1100,60,1.1,7.2,5300,7.2,380,0,1000',
      '600,1100,60,1.1,7.2,5300,7.2,0,0,0,0', '600,1100,60,1.1,7.2,5300,7.2,0,0,-1,1300', '600,1100,60,1.1,7.2,5300,7.2,0,0,0,1300,1'])
      expect(run(bad), `SPARSE_S24G_MODEL=${bad}: ignored`).to.deep.equal(fitted)
  })

  // The selection of the unstructured GEMM-engine kernels: on compute capability 9.0, f16/bf16
  // unstructured matrices from N = 128 on (N a multiple of 8). From 2^31 multiply-adds on at a
  // density of at least 2.5 %, from N = 184 on (the ridge, 177.5 flops a byte) with N and K
  // multiples of 8: A stored dense (und, since v35: UndGemmWins), with the tile width and
  // decomposition of UndGemmPick (a model of the launch's cycles with the operands' bytes through
  // L2); there with K not a multiple of 8 or N below the ridge, and elsewhere
  // where UnstGemmWins' estimate of its time beats the CSR kernels', the pair stream (ung) with
  // UnGemmPick's shape (common/gemm_plan.h). Never on 2:4 matrices (the 2:4 kernels' own), nor
  // f32, nor elsewhere. Planned without data: the sizes alone decide (the H200's 132 SMs).
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, unstructured: the selection runs the GEMM engine from N = 128 on where it wins`, () => {
      const hopper = cudaInfo().computeCapability === '9.0'
      const pick = (m: number, k: number, n: number, density: number, structure?: '2:4') =>
        spmmVariants({m, k, n, nnz: Math.round(m * k * density), dtype, ...(structure ? {structure} : {})}).selected
      const engine = (v: string, want: string, what: string) =>
        hopper ? expect(v, what).to.equal(want) : expect(v, what).to.not.match(/^un[gd]_/)
      const neither = (v: string, what: string) => expect(v, what).to.not.match(/^un[gd]_/)
      // A stored dense (und) from 2^31 on: 4096^2 at N = 128 and 256 in 128-column tiles, split
      // (64 tiles in 2 pieces: 32 tiles of 256 in 4 would move 3x the fixup's bytes; v35 --tune:
      // 23.5 against 26.9 us at N = 256); from 1024 on 256 columns, split where the wave is ragged.
      engine(pick(4096, 4096, 128, 0.5), 'ung_n128_sk3', 'N=128, below the ridge (177.5 flops a byte): the pair stream')
      engine(pick(4096, 4096, 256, 0.5), 'und_n128_sk3', 'N=256')
      for (const n of [1024, 2048]) engine(pick(4096, 4096, n, 0.5), 'und_n256_sk3', `N=${n}`)
      engine(pick(4096, 4096, 256, 0.05), 'und_n128_sk3', '95 % sparse')
      engine(pick(6144, 4096, 256, 0.3), 'und_n128_sk3', '96 tiles of 128 columns, no split pays (v35: 29.1 against 32.7 us for 256)')
      engine(pick(11008, 4096, 128, 0.3), 'ung_n128_sk3', 'N=128: 86 tiles of 128 columns of the pair stream, no split pays')
      engine(pick(4096, 4096, 184, 0.5), 'und_n128_sk3', 'N=184, the first multiple of 8 at the ridge')
      engine(pick(11008, 4096, 1024, 0.3), 'und_n256_sk3', '344 tiles: the ragged wave split')
      // K-long 4096 x 14336: 128-column tiles read A's 117 MB twice through L2 (v35: 55.0
      // against 52.5 us for 256 columns); 14336 x 4096: 224 tiles of 128 columns are 1.7 waves.
      engine(pick(4096, 14336, 256, 0.5), 'und_n256_sk3', 'K-long: the L2 bytes')
      engine(pick(14336, 4096, 256, 0.5), 'und_n256_sk3', '112 tiles of 256 columns')
      engine(pick(2048, 512, 2048, 0.5), 'und_n256_sk3', 'DLMC transformer FFN at N = 2048: 2^31')
      engine(pick(2048, 2048, 512, 0.5), 'und_n128_sk3', '2^31: 32 tiles of 128 columns in 4 pieces')
      // From 2^31 on with K not a multiple of 8 (und's tensor map of A steps 16-byte rows): ung.
      engine(pick(4096, 4100, 256, 0.5), 'ung_n128_sk3', 'K % 8 != 0: the pair stream')
      engine(pick(11008, 4100, 256, 0.1), 'ung_n256_sk3', 'K % 8 != 0, 86 tiles: no split pays, the split leaves them whole')
      neither(pick(4096, 4096, 256, 0.02), 'below 2.5 % density, by the estimates: the CSR kernels')
      engine(pick(2048, 512, 2048, 0.02), 'ung_n256_sk3', 'DLMC at 98 %, by the estimates (14.3 us against 26.8): below 2.5 %, not und')
      // Below 2^31 multiply-adds, by the estimates: A stored dense where its estimate (v38's fitted
      // constants, kUndSmallFitted) beats both the pair stream's and the CSR kernels' (v31's fit):
      // 10.6 us against 11.9 and 66 on 512^2 at N = 2048 (v38, H100: und 10.2-10.6 us against 13-15
      // for the selection's CSR kernel at 98 %); 10.6 against 11.9 and 125 on 2048 x 512 at N = 1024;
      // 8.9 against 9.7 and 12.7 on 1024 x 256 at N = 1568, 95 %; on 512^2 at N = 256, 95 % sparse,
      // the CSR kernels' 9.0 against 10.6 and 11.9 (measured: 7.5-10.3 against 12.5 for ung).
      engine(pick(512, 512, 2048, 0.5), 'und_n128', 'below 2^31, 50 %: A stored dense, no split pays')
      engine(pick(2048, 512, 1024, 0.5), 'und_n128_sk3', 'below 2^31, 50 %: A stored dense, split')
      neither(pick(512, 512, 256, 0.05), 'below 2^31, 95 %: the CSR kernels')
      engine(pick(1024, 256, 1568, 0.05), 'und_n128_sk3', 'below 2^31, 95 %, N = 1568: A stored dense')
      neither(pick(4096, 4096, 120, 0.5), 'below N = 128')
      neither(pick(4096, 4096, 132, 0.5), 'N % 8 != 0')
      neither(pick(4096, 4096, 64, 0.5), 'decode-sized N: the streaming engine')
      neither(pick(4096, 4096, 256, 0.5, '2:4'), 'a 2:4 matrix')
      neither(spmmVariants({m: 4096, k: 4096, n: 256, nnz: 4096 * 2048, dtype: 'f32'}).selected, 'f32')
      // keepSparse: no kernel that stores every weight is selected or listed; where und would
      // run, the pair stream with its own shape.
      const kept = (m: number, k: number, n: number, density: number) =>
        spmmVariants({m, k, n, nnz: Math.round(m * k * density), dtype, keepSparse: true})
      engine(kept(4096, 4096, 256, 0.5).selected, 'ung_n128_sk3', 'keepSparse, 4096^2 at N = 256')
      engine(kept(1024, 256, 1568, 0.05).selected, 'ung_n128_sk3', 'keepSparse, below 2^31: the pair stream')
      engine(kept(11008, 4096, 1024, 0.3).selected, pick(11008, 4100, 1024, 0.3), 'keepSparse: as where und cannot run (K % 8 != 0)')
      for (const [m, k, n] of [[4096, 4096, 256], [11008, 4096, 1024], [2048, 512, 2048]]) {
        expect(kept(m, k, n, 0.5).variants.filter((v) => v.startsWith('und_')), `keepSparse lists no und, ${m} x ${k}, N = ${n}`).to.deep.equal([])
        expect(kept(m, k, n, 0.5).variants.length, 'the others still listed').to.equal(spmmVariants({m, k, n, nnz: Math.round(m * k * 0.5), dtype}).variants.filter((v) => !v.startsWith('und_')).length)
      }
      expect(spmmVariants({m: 64, k: 64, n: 256, nnz: 100, dtype, keepSparse: false}).selected).to.equal(pick(64, 64, 256, 100 / 4096))
      expect(() => spmmVariants({m: 64, k: 64, n: 256, nnz: 100, dtype, keepSparse: 'yes' as unknown as boolean})).to.throw(/keepSparse must be true or false/)
    })
  }

  // The 2:4 kernels on the Hopper GEMM engine (spmm_24_gemm_sm90a.cu, wgmma.mma_async.sp; for
  // N >= 128): every variant forced (the selection picks two of them), with each decomposition
  // (whole tiles, hybrid stream-K, the ragged wave split by K, the same reduced by its pieces
  // together: _sk3, v37, each piece a share of the tile's m-slice boxes); listed for 2:4 where it can
  // run. It rejects where it cannot run (any GPU but compute capability 9.0; N % 8 != 0). On 9.0:
  // tile rows past M (M = 257, 7, 33, 300), K = 2048, 96, 70 (not a multiple of 8: only the
  // 2:4 tiles, no tensor map of A) and 1000 (not of 64), groups of 0-2 nonzeros and empty rows,
  // N = 8 (one column block, mostly empty), 136 (a partial second block), 256; the stream-K
  // variants with fewer tiles than SMs (every tile in pieces: up to 4 with _sk2 and _sk3); each run twice
  // on one prepared operand (stream-K's flags must be left zero for the second).
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, 2:4: the GEMM engine's variants (s24g), forced`, async function () {
      const names = ['s24g_m128_n128_s6', 's24g_m128_n256_s3', 's24g_m256_n128_s4', 's24g_m128_n64_s12', 's24g_m256_n64_s8']
      // --tune lists these twenty and v54's eight (listed once this test had passed on an H100, v55):
      // 128 x 256 with C staged in halves, clusters of 2 along M (whole tiles; an odd count of row
      // blocks leaves the last pair's second block past M: M = 7 and 33 with either height, 257 and
      // 300 with 128 rows), and A read by wgmma from shared memory (whole tiles or the owner's
      // split; K = 70 and 1000 exercise its compressed rows' padding to 32 columns of A)
      const tuneList = [...names, ...names.map((v) => `${v}_sk1`), ...names.map((v) => `${v}_sk2`), ...names.map((v) => `${v}_sk3`)]
      const v54 = ['s24g_m128_n256_s4', 's24g_m128_n256_s4_sk1', 's24g_m128_n256_s4_sk2', 's24g_m128_n256_s4_sk3', 's24g_m256_n128_s4_c2',
        's24g_m128_n256_s4_c2', 's24g_m128_n256_s4_ss1', 's24g_m128_n256_s4_ss1_sk2']
      // v56: 256 x 192 with A read by wgmma from shared memory (whole or the owner's split; N = 8
      // and 136 leave most of its one column of tiles empty, 256 a second column 64 wide): listed
      // since this test passed on a GPU under compute-sanitizer (v57)
      const v56 = ['s24g_m256_n192_s4_ss1', 's24g_m256_n192_s4_ss1_sk2']
      // v58: 128 x 256 with A from shared memory on a ring of 5 stages, C staged in quarters:
      // listed since this test passed on a GPU under compute-sanitizer (v59)
      const v58 = ['s24g_m128_n256_s5_ss1', 's24g_m128_n256_s5_ss1_sk2']
      const variants = [...tuneList, ...v54, ...v56, ...v58]
      const shapes = [twoFourShapes()[4].csr, twoFourShapes()[0].csr, twoFourShapes()[2].csr, twoFourShapes()[1].csr]
      const hopper = cudaInfo().computeCapability === '9.0'
      const listed = spmmVariants({m: 4096, k: 4096, n: 256, nnz: 4096 * 2048, dtype, structure: '2:4'}).variants
      expect(listed.filter((v) => v.startsWith('s24g_')).sort(), 'listed for --tune on 9.0').to.deep.equal(hopper ? variants.slice().sort() : [])
      for (const [i, csr] of shapes.entries()) {
        const nnz = csr.columnIndices.length
        const a: CsrMatrix = {...csr, values: encode(uniform(nnz, 60 + i), dtype), dtype}
        for (const n of hopper ? [8, 136, 256] : [136]) {
          const b = {rows: csr.cols, cols: n, dtype, data: encode(uniform(csr.cols * n, 61 + n + i), dtype)}
          const ref = await spmmReference(a, b)
          for (const variant of variants) {
            await checkSm90aVariant(a, b, ref, variant, hopper, `${variant} M=${csr.rows} K=${csr.cols} N=${n}`)
          }
        }
      }
      if (!hopper) return
      // N % 8 != 0 (B's tensor map needs rows of 16 bytes): rejected, not run.
      const csr = shapes[0]
      const a: CsrMatrix = {...csr, values: encode(uniform(csr.columnIndices.length, 70), dtype), dtype}
      const b = {rows: csr.cols, cols: 132, dtype, data: encode(uniform(csr.cols * 132, 71), dtype)}
      const err = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 's24g_m128_n128_s6'}))
      expect((err as {code?: string})?.code).to.equal('cudaErrorInvalidValue')
    })
  }

  // The selection between the 2:4 kernels: on compute capability 9.0 the streaming engine
  // (spmm_24_engine_sm90a.cu, SelectEngineFamily) for N <= 64 except at N <= 8 on matrices of
  // at most 4096 x 2560 (Stream24Wins), on 64-row blocks where their plan splits K or runs one
  // block per row block of at most 8 K stages (not at N 9-15, at N = 16 only where each block
  // streams at most 8 K stages: Stream24Rows64); the GEMM
  // engine (spmm_24_gemm_sm90a.cu) from N = 128 on where N is a multiple of 8, its tile height
  // and decomposition by the launch model (Gemm24Pick); the mma.sp kernel elsewhere and on every
  // other GPU. Planned without data: the sizes alone decide.
  for (const dtype of ['f16', 'bf16'] as const) {
    it(`SpMM ${dtype}, 2:4 matrix: the selection runs a 2:4 kernel, the engines where they win`, () => {
      const {csr, n} = twoFourShapes()[1]
      const pick = (m: number, k: number, n: number) =>
        spmmVariants({m, k, n, nnz: (m * k) / 2, dtype, structure: '2:4'}).selected
      const hopper = cudaInfo().computeCapability === '9.0'
      expect(pick(csr.rows, csr.cols, 16)).to.match(hopper ? /^s24e_/ : /^s24_/)
      expect(pick(csr.rows, csr.cols, 8), 'small and short: the mma.sp kernel').to.match(/^s24_/)
      expect(pick(4096, 2048, 1)).to.match(/^s24_/)
      expect(pick(8192, 2048, 8), '128 row blocks of 64, 8 K stages each').to.match(hopper ? /^s24e_w4_/ : /^s24_/)
      // 4096^2: 64-row blocks in clusters of 2 (128 SMs against 96), at N = 16 too (shares of 8
      // K stages), not at N = 12 (B's rows laid out by the consumers).
      const at4096 = [1, 8, 12, 16, 32, 64].map((n) => pick(4096, 4096, n))
      if (hopper) expect(at4096).to.deep.equal(['s24e_w4_k256', 's24e_w4_k256', 's24e_w8_k256', 's24e_w4_k256', 's24e_w4_k256', 's24e_w4_k256'])
      else for (const v of at4096) expect(v).to.match(/^s24_/)
      expect(pick(4096, 2048, 64)).to.match(hopper ? /^s24e_w4_/ : /^s24_/)
      expect(pick(6144, 4096, 8), 'one block per 64-row block: 128 rows').to.match(hopper ? /^s24e_w8_/ : /^s24_/)
      expect(pick(11008, 4096, 3)).to.match(hopper ? /^s24e_w8_/ : /^s24_/)
      expect(pick(11008, 4096, 64)).to.match(hopper ? /^s24e_w8_/ : /^s24_/)
      expect(pick(4096, 4096, 65), 'past the engine N').to.match(/^s24_/)
      expect(pick(4096, 4096, 120), 'below the GEMM engine').to.match(/^s24_/)
      expect(pick(4096, 4096, 132), 'N % 8 != 0').to.match(/^s24_/)
      // The launch model (Gemm24Pick, kGemm24Fitted; v53, refitted in v62): on these, the ragged
      // wave's pieces with the owner adding where a split pays, 128 x 64 tiles where 128 columns
      // leave most SMs idle; whole where a split costs more; 128 x 256 tiles (`_ss1`) where
      // 256-row ones would leave a wave ragged.
      expect(pick(4096, 4096, 256), '128 tiles of 128 x 64, whole').to.equal(hopper ? 's24g_m128_n64_s12' : pick(4096, 4096, 65))
      expect(pick(4096, 4096, 128), '64 tiles of 128 x 64, 2 pieces each').to.equal(hopper ? 's24g_m128_n64_s12_sk2' : pick(4096, 4096, 65))
      expect(pick(11008, 4096, 128), '86 tiles of 128 rows, whole').to.equal(hopper ? 's24g_m128_n128_s6' : pick(4096, 4096, 65))
      expect(pick(11008, 4096, 256), '86 tiles of 128 x 256, whole').to.equal(hopper ? 's24g_m128_n256_s5_ss1' : pick(4096, 4096, 65))
      expect(pick(14336, 4096, 2048)).to.match(hopper ? /^s24g_m256_/ : /^s24_/)
      // Below 2.5 % dense (DenseWorkPays) a matrix that fits 2:4 by chance goes to the kernels
      // of its nonzeros: DLMC's 64 x 256 ResNet-50 matrix at 98 % (327 nonzeros).
      const sparse = (nnz: number) => spmmVariants({m: 64, k: 256, n: 3136, nnz, dtype, structure: '2:4'}).selected
      expect(sparse(327), '2 % dense').to.not.match(/^s24/)
      expect(spmmVariants({m: 64, k: 256, n: 16, nnz: 327, dtype, structure: '2:4'}).selected, 'N = 16 too').to.not.match(/^s24/)
      expect(sparse(8192), 'the pattern full').to.match(hopper ? /^s24g_/ : /^s24_/)
      expect(n).to.be.greaterThan(0)
    })
  }

  // The tensor-core SDDMM (f16/bf16, K % 8 == 0, K <= 128) against the SIMT one, each forced
  // through SPARSE_SDDMM_VARIANT (read at every launch): rows with more than 64 entries in a
  // 256-column chunk (the tail path), partial row blocks and chunks, K = 8 and 128.
  /** Runs `fn` with SPARSE_SDDMM_VARIANT set to `variant`, then restores it. */
  async function withSddmmVariant(variant: string, fn: () => Promise<void>): Promise<void> {
    const before = process.env.SPARSE_SDDMM_VARIANT
    process.env.SPARSE_SDDMM_VARIANT = variant
    try {
      await fn()
    } finally {
      if (before === undefined) delete process.env.SPARSE_SDDMM_VARIANT
      else process.env.SPARSE_SDDMM_VARIANT = before
    }
  }
  const tcSddmmShapes: Shape[] = [
    {name: 'M=300 N=700 K=64, 30% dense (chunk tails)', csr: randomPattern(300, 700, 63_000, 21), n: 64},
    {name: 'M=130 N=513 K=128, 10%', csr: randomPattern(130, 513, 6669, 22), n: 128},
    {name: 'M=17 N=260 K=8, 50%', csr: randomPattern(17, 260, 2210, 23), n: 8},
  ]
  // The f32 dense-tile SDDMM against the SIMT one: K not a multiple of its 16-wide slices
  // (392, 20), N not a multiple of its 128-column tiles, rows past a 32-row tile, empty rows,
  // tiles with no nonzero (skipped), K = 4.
  const denseSddmmShapes: Shape[] = [
    {name: 'M=70 N=300 K=392, 40%, empty rows', csr: randomPattern(70, 300, 8400, 27, {emptyRows: [0, 33, 69]}), n: 392},
    {name: 'M=300 N=700 K=20, 30%', csr: randomPattern(300, 700, 63_000, 28), n: 20},
    {name: 'M=33 N=1000 K=64, 1% (empty tiles)', csr: randomPattern(33, 1000, 330, 29), n: 64},
    {name: 'M=5 N=129 K=4, 60%', csr: randomPattern(5, 129, 387, 30), n: 4},
  ]
  for (const shape of denseSddmmShapes) {
    it(`SDDMM f32, dense-tile and SIMT kernels: ${shape.name}`, async () => {
      for (const v of ['dense', 'simt']) await withSddmmVariant(v, () => checkSddmm('cuda', shape, 'f32', 78))
    })
  }
  for (const dtype of ['f16', 'bf16'] as const) {
    for (const shape of tcSddmmShapes) {
      it(`SDDMM ${dtype}, tensor-core and SIMT kernels: ${shape.name}`, async () => {
        for (const v of ['tc', 'simt']) await withSddmmVariant(v, () => checkSddmm('cuda', shape, dtype, 77))
      })
    }
  }
  for (const [dtype, variant] of [['f16', 'tc'], ['bf16', 'tc'], ['f32', 'dense']] as const) {
    it(`SDDMM ${dtype}, ${variant === 'tc' ? 'tensor-core' : 'dense-tile'} kernel: a NaN row of R reaches only the entries that sample it`, async () => {
      const csr = randomPattern(40, 300, 3000, 24)
      const k = 32
      const lhs = {rows: csr.rows, cols: k, dtype, data: encode(uniform(csr.rows * k, 25), dtype)}
      const rf = uniform(csr.cols * k, 26)
      for (let j = 0; j < k; j++) rf[5 * k + j] = Number.NaN // R's row 5: mask column 5
      const rhs = {rows: csr.cols, cols: k, dtype, data: encode(rf, dtype)}
      const out = poisoned(dtype, csr.columnIndices.length)
      await withSddmmVariant(variant, async () => {
        await sddmm(csr, lhs, rhs, {device: 'cuda', out})
      })
      const ref = await sddmmReference(csr, lhs, {...rhs, data: encode(rf.map((x) => (Number.isNaN(x) ? 0 : x)), dtype)})
      // Entries sampling column 5 are NaN; every other one is finite and right (checked with
      // the NaN entries zeroed on both sides: the reference has 0 there).
      const rest = out.slice()
      let sampled = 0
      for (let i = 0; i < csr.columnIndices.length; i++) {
        const nonFinite = compare(out.subarray(i, i + 1), dtype, ref.subarray(i, i + 1)).nonFinite
        expect(nonFinite, `entry ${i} (column ${csr.columnIndices[i]})`).to.equal(csr.columnIndices[i] === 5 ? 1 : 0)
        if (csr.columnIndices[i] === 5) {
          sampled++
          rest[i] = 0
        }
      }
      expect(sampled).to.be.greaterThan(0)
      const r = compare(rest, dtype, ref)
      expect(r.nonFinite).to.equal(0)
      expect(r.relativeError).to.be.at.most(TOLERANCE[dtype])
    })
  }

  it('rejects an unknown variant name with a usage error, and one that cannot run the problem with a device error', async () => {
    const shape = awkwardShapes()[1] // N = 17: no 16-byte vectors
    const a: CsrMatrix = {...shape.csr, values: uniform(shape.csr.columnIndices.length, 5), dtype: 'f32'}
    const b = {rows: a.cols, cols: shape.n, dtype: 'f32' as const, data: uniform(a.cols * shape.n, 6)}
    const unknown = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'fast'}))
    expect((unknown as {code?: string})?.code).to.equal('bad-variant')
    const cannot = await errorOf(() => spmm(a, b, {device: 'cuda', variant: 'split_v4_t8_w1'}))
    expect((cannot as {code?: string})?.code).to.equal('cudaErrorInvalidValue')
  })
})
