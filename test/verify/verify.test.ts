import {expect} from 'chai'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {InputError, UsageError} from '../../src/errors.js'
import type {NamedCsr} from '../../src/types.js'
import {compare, DEFAULT_N, poisoned, TOLERANCE, verifyInput, verifyMatrices} from '../../src/verify/index.js'
import {denseRowPattern, randomPattern, swizzle} from '../kernels/helpers.js'

const named = (name: string, csr: NamedCsr['csr']): NamedCsr => ({name, shape: [csr.rows, csr.cols], csr})

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

  it('honours --op and --dtype selections', async () => {
    const r = await verifyMatrices([named('a', randomPattern(6, 10, 20, 2))], {device: 'cpu', ops: ['sddmm'], dtypes: ['bf16'], n: 5})
    expect(r.cases.map((c) => `${c.op}/${c.dtype}`)).to.deep.equal(['sddmm/bf16'])
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
    for (const opts of [{n: 0}, {n: 1.5}, {seed: -1}, {threads: 0}]) {
      const err = await verifyMatrices(m, opts).catch((e: unknown) => e)
      expect(err, JSON.stringify(opts)).to.be.instanceOf(UsageError)
    }
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
