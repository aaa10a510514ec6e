import {expect} from 'chai'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {InputError, UsageError} from '../../src/errors.js'
import {cudaInfo, spmmVariants} from '../../src/kernels/index.js'
import type {CsrMatrix, NamedCsr} from '../../src/types.js'
import {compare, DEFAULT_N, poisoned, TOLERANCE, variantWarnings, verifyInput, verifyMatrices, type VerifyCase} from '../../src/verify/index.js'
import {denseRowPattern, randomPattern, swizzle} from '../kernels/helpers.js'

const named = (name: string, csr: NamedCsr['csr']): NamedCsr => ({name, shape: [csr.rows, csr.cols], csr})

/** Runs `fn` with the variables set (undefined: unset), then restores them. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k]
      else process.env[k] = x
    }
  }
  set(vars)
  try {
    return await fn()
  } finally {
    set(before)
  }
}

/** A 2:4 pattern: in every group of four columns, the first two. */
function twoFourPattern(rows: number, cols: number): CsrMatrix {
  const perRow = Array.from({length: cols}, (_, c) => c).filter((c) => c % 4 < 2)
  const rowOffsets = Int32Array.from({length: rows + 1}, (_, r) => r * perRow.length)
  const columnIndices = Int32Array.from({length: rows * perRow.length}, (_, i) => perRow[i % perRow.length])
  return {rows, cols, rowOffsets, columnIndices, values: null, dtype: 'f32'}
}

describe('verify: the comparison', () => {
  it('computes the relative and max abs error against the reference', () => {
    const r = compare(new Float32Array([1, 2, 3.5]), 'f32', new Float64Array([1, 2, 3]))
    expect(r.maxAbsError).to.equal(0.5)
    expect(r.relativeError).to.be.closeTo(0.5 / Math.sqrt(14), 1e-12)
    expect(r.passed).to.equal(false)
    expect(compare(new Float32Array([1, 2, 3]), 'f32', new Float64Array([1, 2, 3])).passed).to.equal(true)
  })

  it('fails any NaN/inf output, even one (an unwritten element)', () => {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const out = poisoned(dtype, 3)
      const r = compare(out, dtype, new Float64Array([1, 2, 3]))
      expect(r.passed, dtype).to.equal(false)
      expect(r.nonFinite).to.equal(3)
      expect(r.relativeError).to.equal(null)
    }
  })

  it('passes all-zero outputs only against an all-zero reference', () => {
    expect(compare(new Float32Array(2), 'f32', new Float64Array(2))).to.include({relativeError: 0, passed: true})
    expect(compare(new Float32Array([0, 1e-30]), 'f32', new Float64Array(2)).passed).to.equal(false)
  })

  it('uses 1e-5 for f32 and 1e-2 for f16/bf16', () => {
    expect(TOLERANCE).to.deep.equal({f32: 1e-5, f16: 1e-2, bf16: 1e-2})
    expect(DEFAULT_N).to.equal(256)
  })
})

describe('verify: cases on the CPU', () => {
  it('passes every op and dtype on awkward matrices, with the shapes recorded per case', async () => {
    const mats = [named('awkward', randomPattern(7, 96, 333, 1)), named('dense-row', swizzle(denseRowPattern(9, 300, 4))), named('empty', randomPattern(5, 8, 0, 3))]
    const r = await verifyMatrices(mats, {device: 'cpu', n: 17, seed: 3})
    expect(r.device).to.equal('cpu')
    expect(r.cases).to.have.length(3 * 2 * 3)
    expect(r.ok).to.equal(true)
    expect(r.failed).to.equal(0)
    const c = r.cases[0]
    expect(c).to.include({matrix: 'awkward', op: 'spmm', dtype: 'f32', device: 'cpu', m: 7, k: 96, nnz: 333, n: 17, tolerance: 1e-5, nonFinite: 0, passed: true})
    for (const x of r.cases) expect(x.relativeError).to.be.a('number').and.at.most(x.tolerance)
    // bf16 rounds its output to 8 bits of mantissa: a visible but tolerated error.
    const bf = r.cases.find((x) => x.matrix === 'awkward' && x.dtype === 'bf16' && x.op === 'spmm')!
    expect(bf.relativeError).to.be.above(1e-4).and.below(1e-2)
  })

  it('names the CPU kernel of each case, with no variant (the CPU kernels have none) and no warning', async () => {
    const r = await withEnv({SPARSE_SPMM_VARIANT: undefined, SPARSE_SDDMM_VARIANT: undefined}, () =>
      verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', dtypes: ['f16'], n: 5}),
    )
    expect(r.cases.map((c) => [c.op, c.kernel])).to.deep.equal([['spmm', 'CpuSpmm'], ['sddmm', 'CpuSddmm']])
    for (const c of r.cases) expect(c).to.not.have.any.keys('variant', 'variantSource', 'forcedVariant', 'variantNote')
    expect(r.warnings).to.deep.equal([])
  })

  it('says per case and in the warnings that the CPU ignores a forced variant', async () => {
    const r = await withEnv({SPARSE_SPMM_VARIANT: 's24e_w8_k256', SPARSE_SDDMM_VARIANT: 'tc'}, () =>
      verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', dtypes: ['f16'], n: 5}),
    )
    expect(r.ok).to.equal(true)
    const [sp, sd] = r.cases
    expect(sp).to.include({kernel: 'CpuSpmm', forcedVariant: 's24e_w8_k256'})
    expect(sp.variantNote).to.equal('SPARSE_SPMM_VARIANT=s24e_w8_k256 is ignored on the CPU: its SpMM kernel has no variants')
    expect(sd).to.include({kernel: 'CpuSddmm', forcedVariant: 'tc'})
    expect(sd.variantNote).to.match(/^SPARSE_SDDMM_VARIANT=tc is ignored on the CPU/)
    for (const c of r.cases) expect(c).to.not.have.any.keys('variant', 'variantSource')
    expect(r.warnings).to.deep.equal([sp.variantNote, sd.variantNote])
    // 'auto' forces nothing.
    const auto = await withEnv({SPARSE_SPMM_VARIANT: 'auto', SPARSE_SDDMM_VARIANT: 'auto'}, () =>
      verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', dtypes: ['f16'], n: 5}),
    )
    expect(auto.warnings).to.deep.equal([])
    for (const c of auto.cases) expect(c).to.not.have.property('forcedVariant')
  })

  it('honours --op and --dtype selections', async () => {
    const r = await verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', ops: ['sddmm'], dtypes: ['bf16'], n: 5})
    expect(r.cases.map((c) => `${c.op}/${c.dtype}`)).to.deep.equal(['sddmm/bf16'])
  })

  it('ns: every case at every N (N, then dtype, then op), each the very case a run at that N alone gives', async () => {
    const mats = [named('awkward', randomPattern(7, 96, 333, 1)), named('empty', randomPattern(5, 8, 0, 3))]
    const r = await verifyMatrices(mats, {device: 'cpu', ns: [5, 1, 5], dtypes: ['f32', 'bf16'], seed: 2})
    expect(r.ok).to.equal(true)
    expect(r.ns).to.deep.equal([5, 1]) // duplicates dropped, order kept
    expect(r).to.not.have.property('n') // several N: no one n
    expect(r.cases.filter((c) => c.matrix === 'awkward').map((c) => `${c.n}/${c.dtype}/${c.op}`)).to.deep.equal([
      '5/f32/spmm', '5/f32/sddmm', '5/bf16/spmm', '5/bf16/sddmm', '1/f32/spmm', '1/f32/sddmm', '1/bf16/spmm', '1/bf16/sddmm',
    ])
    expect(r.cases).to.have.length(2 * 2 * 2 * 2)
    for (const n of [5, 1]) {
      const alone = await verifyMatrices(mats, {device: 'cpu', n, dtypes: ['f32', 'bf16'], seed: 2})
      expect(alone).to.include({n})
      expect(alone.ns).to.deep.equal([n])
      const errors = (cases: VerifyCase[]) => cases.filter((c) => c.n === n).map((c) => [c.matrix, c.op, c.dtype, c.relativeError, c.maxAbsError])
      expect(errors(r.cases)).to.deep.equal(errors(alone.cases))
    }
  })

  it('ns: a case that fails at any N fails the whole result', async () => {
    process.env.SPARSE_VERIFY_FAULT = 'unwritten'
    try {
      const r = await verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', ns: [1, 3], ops: ['spmm'], dtypes: ['f16']})
      expect(r).to.include({ok: false, passed: 0, failed: 2})
      expect(r.cases.map((c) => c.n)).to.deep.equal([1, 3])
    } finally {
      delete process.env.SPARSE_VERIFY_FAULT
    }
  })

  it('fails when the kernel leaves an element unwritten or wrong (self-test hook)', async () => {
    const mats = [named('a', randomPattern(6, 10, 20, 2))]
    for (const fault of ['unwritten', 'perturb']) {
      process.env.SPARSE_VERIFY_FAULT = fault
      try {
        const r = await verifyMatrices(mats, {device: 'cpu', n: 8})
        expect(r.ok, fault).to.equal(false)
        expect(r.failed, fault).to.equal(6)
      } finally {
        delete process.env.SPARSE_VERIFY_FAULT
      }
    }
  })

  it('validates the CSR before any kernel runs', async () => {
    const bad = randomPattern(6, 10, 20, 2)
    bad.columnIndices[3] = 99
    const err = await verifyMatrices([named('bad', bad)], {device: 'cuda'}).catch((e: unknown) => e)
    expect(err).to.be.instanceOf(InputError) // not a DeviceError: validation comes first
  })

  it('rejects bad options with UsageErrors', async () => {
    const m = [named('a', randomPattern(6, 10, 20, 2))]
    for (const opts of [{n: 0}, {n: 1.5}, {seed: -1}, {threads: 0}, {ns: []}, {ns: [8, 0]}, {ns: [2.5]}, {ns: [(1 << 20) + 1]}, {n: 8, ns: [8]}, {keepSparse: 'yes' as unknown as boolean}]) {
      const err = await verifyMatrices(m, opts).catch((e: unknown) => e)
      expect(err, JSON.stringify(opts)).to.be.instanceOf(UsageError)
    }
  })

  it('takes keepSparse (SpMM on CUDA); on the CPU the cases are the same', async () => {
    const m = [named('a', randomPattern(6, 10, 20, 2))]
    const plain = await verifyMatrices(m, {device: 'cpu', n: 4, ops: ['spmm'], dtypes: ['f16']})
    const kept = await verifyMatrices(m, {device: 'cpu', n: 4, ops: ['spmm'], dtypes: ['f16'], keepSparse: true})
    expect(kept.ok).to.equal(true)
    expect(kept.cases.map((c) => c.maxAbsError)).to.deep.equal(plain.cases.map((c) => c.maxAbsError))
  })

  it('reads a dense .npy (zeros dropped) and an .smtx', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sparse-verify-'))
    try {
      // A 3 x 4 float32 .npy with 5 nonzeros, written by hand.
      const data = new Float32Array([0, 1.5, 0, -2, 3, 0, 0, 0, 0, 0.25, 4, 0])
      const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"
      const pad = 64 - ((10 + header.length + 1) % 64)
      const h = Buffer.from(header + ' '.repeat(pad) + '\n', 'latin1')
      const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, h.length & 0xff, h.length >> 8])
      await writeFile(join(dir, 'w.npy'), Buffer.concat([pre, h, Buffer.from(data.buffer)]))
      const r = await verifyInput(join(dir, 'w.npy'), {device: 'cpu', n: 3})
      expect(r.ok).to.equal(true)
      expect(r.cases[0]).to.include({m: 3, k: 4, nnz: 5})
      await writeFile(join(dir, 'p.smtx'), '3, 5, 4\n0 2 2 4 \n0 3 1 4 \n')
      const s = await verifyInput(join(dir, 'p.smtx'), {device: 'cpu', n: 2})
      expect(s.ok).to.equal(true)
      expect(s.cases[0]).to.include({m: 3, k: 5, nnz: 4})
    } finally {
      await rm(dir, {recursive: true, force: true})
    }
  })
})

describe('verify: the warnings on forced variants (CUDA cases as the library records them)', () => {
  const shape = {matrix: 'a', dtype: 'f16' as const, device: 'cuda' as const, m: 8, k: 8, nnz: 8, n: 8, tolerance: 1e-2, relativeError: 0, maxAbsError: 0, nonFinite: 0, passed: true, ms: 1}
  const spmmCase = (variant: string, source: 'forced' | 'heuristic', forced?: string): VerifyCase => ({
    ...shape, op: 'spmm', kernel: 'CudaSpmm', variant, variantSource: source, ...(forced ? {forcedVariant: forced} : {}),
  })

  it('says nothing when the forced variant ran every case, or nothing is forced', () => {
    expect(variantWarnings([spmmCase('s24e_w8_k256', 'forced', 's24e_w8_k256')], {spmm: 's24e_w8_k256'})).to.deep.equal([])
    expect(variantWarnings([spmmCase('s24_w4_m1_s8', 'heuristic'), {...shape, op: 'sddmm', kernel: 'CudaSddmm'}], {})).to.deep.equal([])
  })

  it('counts the CUDA SpMM cases a forced variant did not run, and says why', () => {
    const cases = [spmmCase('s24e_w8_k256', 'forced', 's24e_w8_k256'), spmmCase('s24_w4_m1_s8', 'heuristic', 's24e_w8_k256'), spmmCase('s24_w4_m1_s8', 'heuristic', 's24e_w8_k256')]
    expect(variantWarnings(cases, {spmm: 's24e_w8_k256'})).to.deep.equal([
      "SPARSE_SPMM_VARIANT=s24e_w8_k256 did not run 2 of 3 CUDA SpMM cases (it cannot run them): the built-in selection's variant ran there instead; each case's variant says which",
    ])
    const typo = variantWarnings([spmmCase('split_v8_t2_w2', 'heuristic', 'fastest')], {spmm: 'fastest'})
    expect(typo).to.have.length(1)
    expect(typo[0]).to.match(/^SPARSE_SPMM_VARIANT=fastest did not run 1 of 1 CUDA SpMM cases \(it is not the name of an SpMM variant\)/)
  })

  it('says that the addon cannot confirm a forced SDDMM kernel, and that an unknown one is not a kernel', () => {
    const sd: VerifyCase = {...shape, op: 'sddmm', kernel: 'CudaSddmm', forcedVariant: 'tc'}
    expect(variantWarnings([sd], {sddmm: 'tc'})).to.deep.equal([
      'SPARSE_SDDMM_VARIANT=tc: the addon does not say which SDDMM kernel ran, so whether tc did is not known (it runs where it can, the built-in selection elsewhere)',
    ])
    expect(variantWarnings([sd], {sddmm: 'wmma'})).to.deep.equal(['SPARSE_SDDMM_VARIANT=wmma is not an SDDMM kernel (simt, tc, dense): the built-in selection ran'])
  })
})

describe('verify on CUDA: which SpMM variant ran each case', function () {
  this.timeout(120_000)
  before(function () {
    const info = cudaInfo()
    if (!info.available) {
      console.log(`    skipping the CUDA verify tests: ${info.reason}`)
      this.skip()
    }
  })

  const mat = named('r', randomPattern(70, 300, 2000, 5))
  const selected = (csr: CsrMatrix, n: number, dtype: 'f32' | 'f16' | 'bf16', structure?: '2:4') =>
    spmmVariants({m: csr.rows, k: csr.cols, n, nnz: csr.columnIndices.length, dtype, ...(structure ? {structure} : {})})

  it("names the selection's variant when nothing is forced", async () => {
    const r = await withEnv({SPARSE_SPMM_VARIANT: undefined}, () => verifyMatrices([mat], {device: 'cuda', ops: ['spmm'], n: 64}))
    expect(r.ok).to.equal(true)
    for (const c of r.cases) {
      expect(c, c.dtype).to.include({kernel: 'CudaSpmm', variant: selected(mat.csr, 64, c.dtype).selected, variantSource: 'heuristic'})
      expect(c).to.not.have.any.keys('forcedVariant', 'variantNote')
    }
    expect(r.warnings).to.deep.equal([])
  })

  it('runs and checks a forced variant the plan lists, and says it was forced', async () => {
    const list = selected(mat.csr, 64, 'f32')
    const other = list.variants.find((v) => v !== list.selected)!
    expect(other, 'a second f32 variant').to.be.a('string')
    const r = await withEnv({SPARSE_SPMM_VARIANT: other}, () => verifyMatrices([mat], {device: 'cuda', ops: ['spmm'], dtypes: ['f32'], n: 64}))
    expect(r.ok).to.equal(true)
    expect(r.cases[0]).to.include({variant: other, variantSource: 'forced', forcedVariant: other})
    expect(r.cases[0]).to.not.have.property('variantNote')
    expect(r.warnings).to.deep.equal([])
  })

  it('a narrower vector width, which the list leaves out, still runs when forced, and is reported as forced', async () => {
    // f32 at N = 64 lists 4-wide vectors only; 1-wide ones run when asked for by name.
    expect(selected(mat.csr, 64, 'f32').variants).to.not.include('split_v1_t8_w1')
    const r = await withEnv({SPARSE_SPMM_VARIANT: 'split_v1_t8_w1'}, () => verifyMatrices([mat], {device: 'cuda', ops: ['spmm'], dtypes: ['f32'], n: 64}))
    expect(r.ok).to.equal(true)
    expect(r.cases[0]).to.include({variant: 'split_v1_t8_w1', variantSource: 'forced'})
  })

  it("a forced variant that cannot run a case: the selection's ran, and the case and the warnings say so", async () => {
    // 4-wide vectors cannot run N = 17.
    const r = await withEnv({SPARSE_SPMM_VARIANT: 'split_v4_t8_w1'}, () => verifyMatrices([mat], {device: 'cuda', ops: ['spmm'], dtypes: ['f32'], n: 17}))
    expect(r.ok).to.equal(true)
    const c = r.cases[0]
    const pick = selected(mat.csr, 17, 'f32').selected
    expect(c).to.include({variant: pick, variantSource: 'heuristic', forcedVariant: 'split_v4_t8_w1'})
    expect(c.variantNote).to.equal(`SPARSE_SPMM_VARIANT=split_v4_t8_w1 cannot run this case: the built-in selection's ${pick} ran instead`)
    expect(r.warnings).to.have.length(1)
    expect(r.warnings[0]).to.match(/^SPARSE_SPMM_VARIANT=split_v4_t8_w1 did not run 1 of 1 CUDA SpMM cases \(it cannot run them\)/)
  })

  it('the 2:4 streaming variant forced on a 2:4 matrix: forced on compute capability 9.0, the selection elsewhere', async () => {
    const csr = twoFourPattern(128, 256)
    const r = await withEnv({SPARSE_SPMM_VARIANT: 's24e_w8_k256'}, () =>
      verifyMatrices([named('w24', csr)], {device: 'cuda', ops: ['spmm'], dtypes: ['f16', 'bf16'], n: 8}),
    )
    expect(r.ok).to.equal(true)
    const hopper = cudaInfo().computeCapability === '9.0'
    for (const c of r.cases) {
      if (hopper) expect(c, c.dtype).to.include({variant: 's24e_w8_k256', variantSource: 'forced'})
      else expect(c, c.dtype).to.include({variant: selected(csr, 8, c.dtype, '2:4').selected, variantSource: 'heuristic'})
    }
    expect(r.warnings).to.have.length(hopper ? 0 : 1)
  })
})
