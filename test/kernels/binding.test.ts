import {expect} from 'chai'

import {DeviceError, InputError, UsageError} from '../../src/errors.js'
import {loadAddon} from '../../src/kernels/binding.js'
import {cudaInfo, resolveDevice, sddmm, spmm, spmmVariants} from '../../src/kernels/index.js'
import type {CsrMatrix} from '../../src/types.js'
import {uniform} from '../../src/verify/index.js'
import {randomPattern} from './helpers.js'

function small(): {a: CsrMatrix; b: {rows: number; cols: number; dtype: 'f32'; data: Float32Array}} {
  const p = randomPattern(4, 6, 10, 11)
  return {a: {...p, values: uniform(10, 1)}, b: {rows: 6, cols: 3, dtype: 'f32', data: uniform(18, 2)}}
}

describe('native addon: loading and device selection', () => {
  it('loads and reports CUDA availability without throwing', () => {
    const info = cudaInfo()
    expect(info.available).to.be.a('boolean')
    if (info.available) {
      expect(info.name).to.be.a('string').and.not.equal('')
      expect(info.smCount).to.be.above(0)
      expect(info.computeCapability).to.match(/^\d+\.\d+$/)
    } else {
      // The no-GPU machine (CI): a one-line reason and the CUDA error name.
      expect(info.reason).to.be.a('string').and.not.equal('')
      expect(info.reason).to.not.include('\n')
      expect(info.code).to.match(/^(cuda\w+|ERR_NO_CUDA)$/)
    }
  })

  it("'auto' falls back to the CPU without a GPU, and 'cuda' then fails with a DeviceError (exit 3)", function () {
    const info = cudaInfo()
    if (info.available) {
      expect(resolveDevice('auto').device).to.equal('cuda')
      this.skip()
    }
    expect(resolveDevice('auto').device).to.equal('cpu')
    expect(resolveDevice('cpu').device).to.equal('cpu')
    let err: unknown
    try {
      resolveDevice('cuda')
    } catch (error) {
      err = error
    }
    expect(err).to.be.instanceOf(DeviceError)
    expect((err as DeviceError).exitCode).to.equal(3)
    expect((err as DeviceError).message).to.include('--device cuda needs a CUDA GPU').and.include(info.reason!)
  })

  it('spmm on cuda without a GPU rejects with a DeviceError', async function () {
    if (cudaInfo().available) this.skip()
    const {a, b} = small()
    const err = await spmm(a, b, {device: 'cuda'}).catch((e: unknown) => e)
    expect(err).to.be.instanceOf(DeviceError)
  })

  it('the raw native call without a GPU rejects with the CUDA error name as code', async function () {
    const info = cudaInfo()
    if (info.available) this.skip()
    const {a, b} = small()
    const native = loadAddon()
    const err = (await native
      .spmm({m: 4, k: 6, n: 3, rowOffsets: a.rowOffsets, columnIndices: a.columnIndices, values: a.values!, b: b.data, c: new Float32Array(12), dtype: 'f32', device: 'cuda'})
      .catch((e: unknown) => e)) as Error & {code?: string}
    expect(err).to.be.instanceOf(Error)
    expect(err.code).to.equal(info.code)
  })
})

describe('native addon: arguments are re-checked natively (TypeError/RangeError naming the field)', () => {
  const native = () => loadAddon()
  const base = () => {
    const {a, b} = small()
    return {m: 4, k: 6, n: 3, rowOffsets: a.rowOffsets, columnIndices: a.columnIndices, values: a.values as Float32Array, b: b.data, c: new Float32Array(12), dtype: 'f32' as const, device: 'cpu' as const}
  }

  it('rejects a wrong typed array type', () => {
    expect(() => native().spmm({...base(), b: new Float64Array(18) as unknown as Float32Array})).to.throw(TypeError, 'b must be a Float32Array')
  })

  it('rejects a wrong length', () => {
    expect(() => native().spmm({...base(), c: new Float32Array(11)})).to.throw(RangeError, 'c has 11 elements, expected 12')
  })

  it('rejects row offsets that do not end at nnz', () => {
    const args = base()
    const ro = Int32Array.from(args.rowOffsets)
    ro[4] = ro[4] - 1
    expect(() => native().spmm({...args, rowOffsets: ro})).to.throw(RangeError, 'csr.rowOffsets[m] must equal nnz')
  })

  it('rejects out-of-range column indices and non-permutation row orders', () => {
    const args = base()
    const ci = Int32Array.from(args.columnIndices)
    ci[0] = 6
    expect(() => native().spmm({...args, columnIndices: ci})).to.throw(RangeError, 'csr.columnIndices must be in [0, k)')
    expect(() => native().spmm({...args, rowIndices: new Int32Array([0, 0, 1, 2])})).to.throw(RangeError, 'csr.rowIndices must be a permutation')
  })

  it('rejects a bad dtype or device', () => {
    expect(() => native().spmm({...base(), dtype: 'f64' as 'f32'})).to.throw(RangeError, "dtype must be one of f32|f16|bf16, got 'f64'")
    expect(() => native().spmm({...base(), device: 'tpu' as 'cpu'})).to.throw(RangeError, 'device must be one of cuda|cpu')
  })
})

describe('kernels library: validation before any native call', () => {
  it('rejects an invalid CSR with an InputError before launching', async () => {
    const {a, b} = small()
    const bad: CsrMatrix = {...a, columnIndices: Int32Array.from(a.columnIndices).fill(7, 0, 1)}
    // device 'cuda' would be a DeviceError here without a GPU: the CSR error comes first.
    const err = await spmm(bad, b, {device: 'cuda'}).catch((e: unknown) => e)
    expect(err).to.be.instanceOf(InputError)
    expect((err as InputError).message).to.include('out of range')
    const unsorted: CsrMatrix = {...a, rowOffsets: Int32Array.from([0, 5, 3, 8, 10])}
    expect(await sddmm(unsorted, b, b, {device: 'cuda'}).catch((e: unknown) => e)).to.be.instanceOf(InputError)
  })

  it('rejects shape and dtype mismatches with UsageErrors naming the operand', async () => {
    const {a, b} = small()
    const e1 = (await spmm(a, {...b, rows: 5, data: uniform(15, 3)}).catch((e: unknown) => e)) as UsageError
    expect(e1).to.be.instanceOf(UsageError)
    expect(e1.message).to.equal('SpMM dense operand B has 5 rows, expected 6')
    const e2 = (await spmm(a, {...b, dtype: 'f16', data: new Uint16Array(18)}).catch((e: unknown) => e)) as UsageError
    expect(e2.message).to.include('the CSR values are f32 but the dense operand is f16')
    const e3 = (await spmm(a, {...b, data: new Float32Array(17)}).catch((e: unknown) => e)) as UsageError
    expect(e3.message).to.include('has 17 elements, expected 18')
    const e4 = (await spmm(a, b, {threads: 0}).catch((e: unknown) => e)) as UsageError
    expect(e4.message).to.include('expected a positive integer for threads')
    // keepSparse: a boolean, checked on the CPU too (where it changes nothing).
    const e5 = (await spmm(a, b, {device: 'cpu', keepSparse: 'yes' as unknown as boolean}).catch((e: unknown) => e)) as UsageError
    expect(e5).to.be.instanceOf(UsageError)
    expect(e5.message).to.equal('keepSparse must be true or false, got "yes"')
    expect((await spmm(a, b, {device: 'cpu', keepSparse: true})).c.data).to.deep.equal((await spmm(a, b, {device: 'cpu'})).c.data)
    expect(() => spmmVariants({m: 4, k: 6, n: 3, nnz: 10, dtype: 'f32', keepSparse: 0 as unknown as boolean})).to.throw(UsageError, 'keepSparse must be true or false, got 0')
  })

  it('gives a pattern-only CSR seeded random values (same seed, same result)', async () => {
    const {a, b} = small()
    const pattern = {...a, values: null}
    const r1 = await spmm(pattern, b, {device: 'cpu', seed: 5})
    const r2 = await spmm(pattern, b, {device: 'cpu', seed: 5})
    const r3 = await spmm(pattern, b, {device: 'cpu', seed: 6})
    expect(Array.from(r1.c.data)).to.deep.equal(Array.from(r2.c.data))
    expect(Array.from(r1.c.data)).to.not.deep.equal(Array.from(r3.c.data))
  })

  it('reads and writes typed arrays that are views into larger buffers (no copies, offsets honoured)', async () => {
    const a: CsrMatrix = {rows: 2, cols: 3, rowOffsets: new Int32Array([9, 0, 2, 3]).subarray(1), columnIndices: new Int32Array([0, 2, 1]), values: new Float32Array([7, 1, 2, 3]).subarray(1), dtype: 'f32'}
    const bigB = new Float32Array([9, 9, 1, 2, 3, 4, 5, 6])
    const b = {rows: 3, cols: 2, dtype: 'f32' as const, data: bigB.subarray(2)}
    const bigC = new Float32Array(6).fill(-1)
    const out = bigC.subarray(1, 5)
    await spmm(a, b, {device: 'cpu', out})
    expect(Array.from(bigC)).to.deep.equal([-1, 11, 14, 9, 12, -1])
  })

  it('computes a known product exactly (hand-checked)', async () => {
    // A = [[1, 0, 2], [0, 3, 0]], B = [[1, 2], [3, 4], [5, 6]] -> C = [[11, 14], [9, 12]]
    const a: CsrMatrix = {rows: 2, cols: 3, rowOffsets: new Int32Array([0, 2, 3]), columnIndices: new Int32Array([0, 2, 1]), values: new Float32Array([1, 2, 3]), dtype: 'f32'}
    const b = {rows: 3, cols: 2, dtype: 'f32' as const, data: new Float32Array([1, 2, 3, 4, 5, 6])}
    const {c} = await spmm(a, b, {device: 'cpu'})
    expect(Array.from(c.data)).to.deep.equal([11, 14, 9, 12])
    // SDDMM with L = B[:2] (2 x 2) and R = B (3 x 2): out = [L0.R0, L0.R2, L1.R1] = [5, 17, 25]
    const l = {rows: 2, cols: 2, dtype: 'f32' as const, data: new Float32Array([1, 2, 3, 4])}
    const {values} = await sddmm(a, l, b, {device: 'cpu'})
    expect(Array.from(values)).to.deep.equal([5, 17, 25])
  })
})
