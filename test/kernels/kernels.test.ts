import {expect} from 'chai'

import {cudaInfo, sddmm, sddmmReference, spmm, spmmReference, type Device} from '../../src/kernels/index.js'
import {float32ToHalf} from '../../src/sparse/half.js'
import type {CsrMatrix, ValueDType} from '../../src/types.js'
import {compare, poisoned, TOLERANCE, uniform} from '../../src/verify/index.js'
import {awkwardShapes, wideShape, type Shape} from './helpers.js'

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

describe('kernels on the CPU against the float64 reference', () => {
  suite('cpu')

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

describe('kernels on CUDA against the float64 reference', function () {
  before(function () {
    const info = cudaInfo()
    if (!info.available) {
      console.log(`    skipping the CUDA kernel tests: ${info.reason}`)
      this.skip()
    }
  })
  suite('cuda')
})
