/**
 * The kernels binding's argument parsers (native/binding/kernel_call.h, per op), entry point by
 * entry point: the exact message of each re-check, which field is reported first when
 * several are wrong, and which fields an entry point does not read at all. The TypeScript
 * side validates before calling, so these messages only reach a caller of the raw addon; they
 * are pinned so that the parsers can be shared between entry points without changing them.
 */
import {expect} from 'chai'

import {cudaInfo, loadAddon} from '../../src/kernels/binding.js'

interface Raw {
  spmm(args?: unknown): Promise<void>
  sddmm(args?: unknown): Promise<void>
  spmmTime(args?: unknown): Promise<Float64Array>
  spmmReference(args?: unknown): Promise<Float64Array>
  sddmmReference(args?: unknown): Promise<Float64Array>
  spmmVariants(args?: unknown): {selected: string; variants: string[]}
  tcFormat(args?: unknown): {offsets: Uint32Array; entries: Uint32Array}
  sddmmChunkStarts(args?: unknown): Int32Array
}
const raw = () => loadAddon<Raw>() as unknown as Raw

// A = [[1, 0, 2], [0, 3, 0]] (2 x 3), B = [[1, 2], [3, 4], [5, 6]] -> C = [[11, 14], [9, 12]].
const pattern = () => ({rowOffsets: new Int32Array([0, 2, 3]), columnIndices: new Int32Array([0, 2, 1])})
const spmmArgs = (over: Record<string, unknown> = {}) => ({
  m: 2, k: 3, n: 2, dtype: 'f32', ...pattern(),
  values: new Float32Array([1, 2, 3]),
  b: new Float32Array([1, 2, 3, 4, 5, 6]),
  c: new Float32Array(4),
  device: 'cpu',
  ...over,
})
// SDDMM on the same mask (2 x 3), L (2 x 2) and R (3 x 2): out = [L0.R0, L0.R2, L1.R1] = [5, 17, 25].
const sddmmArgs = (over: Record<string, unknown> = {}) => ({
  m: 2, k: 2, n: 3, dtype: 'f32', ...pattern(),
  lhs: new Float32Array([1, 2, 3, 4]),
  rhs: new Float32Array([1, 2, 3, 4, 5, 6]),
  out: new Float32Array(3),
  device: 'cpu',
  ...over,
})

function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected the call to throw')
}

describe('kernels binding: each entry point re-checks its arguments, in a fixed order', () => {
  const big = 2 ** 21
  const cases: Array<[string, () => unknown, ErrorConstructor, string]> = [
    ['spmm: no object', () => raw().spmm(), TypeError, 'spmm: expected one argument object'],
    ['spmm: m not a number', () => raw().spmm(spmmArgs({m: '2'})), TypeError, 'spmm: m must be a number'],
    ['spmm: k fractional', () => raw().spmm(spmmArgs({k: 2.5})), RangeError, 'spmm: k must be an integer in [0, 2^31)'],
    ['spmm: dtype', () => raw().spmm(spmmArgs({dtype: 'f8'})), RangeError, "spmm: dtype must be one of f32|f16|bf16, got 'f8'"],
    ['spmm: dtype not a string', () => raw().spmm(spmmArgs({dtype: 3})), TypeError, 'spmm: dtype must be a string (f32|f16|bf16)'],
    ['spmm: C too large', () => raw().spmm(spmmArgs({m: big, n: big / 2})), RangeError, 'spmm: the dense operands are too large'],
    ['spmm: B too large', () => raw().spmm(spmmArgs({k: big, n: big / 2})), RangeError, 'spmm: the dense operands are too large'],
    ['spmm: rowOffsets length', () => raw().spmm(spmmArgs({rowOffsets: new Int32Array([0, 3])})), RangeError, 'spmm: rowOffsets has 2 elements, expected 3'],
    ['spmm: rowOffsets[0]', () => raw().spmm(spmmArgs({rowOffsets: new Int32Array([1, 2, 3])})), RangeError, 'spmm: csr.rowOffsets[0] must be 0'],
    ['spmm: columnIndices type', () => raw().spmm(spmmArgs({columnIndices: [0, 2, 1]})), TypeError, 'spmm: columnIndices must be an Int32Array'],
    ['spmm: rowIndices length', () => raw().spmm(spmmArgs({rowIndices: new Int32Array(3)})), RangeError, 'spmm: rowIndices has 3 elements, expected 2'],
    ['spmm: values type', () => raw().spmm(spmmArgs({values: new Uint16Array(3)})), TypeError, 'spmm: values must be a Float32Array'],
    ['spmm: f16 values', () => raw().spmm(spmmArgs({dtype: 'f16'})), TypeError, 'spmm: values must be a Uint16Array (f16/bf16 bit patterns)'],
    ['spmm: c missing', () => raw().spmm(spmmArgs({c: undefined})), TypeError, 'spmm: c must be a Float32Array'],
    ['spmm: the problem before the device', () => raw().spmm(spmmArgs({c: new Float32Array(3), device: 'tpu'})), RangeError, 'spmm: c has 3 elements, expected 4'],
    ['spmm: device missing', () => raw().spmm(spmmArgs({device: undefined})), TypeError, 'spmm: device must be a string (cuda|cpu)'],
    ['spmm: threads', () => raw().spmm(spmmArgs({threads: -1})), RangeError, 'spmm: threads must be an integer in [0, 2^31)'],
    ['spmm: device before threads', () => raw().spmm(spmmArgs({threads: -1, device: 'gpu'})), RangeError, "spmm: device must be one of cuda|cpu, got 'gpu'"],
    ['spmm: indexBits', () => raw().spmm(spmmArgs({indexBits: 8})), RangeError, 'spmm: indexBits must be 16 or 32'],
    ['spmm: threads before indexBits', () => raw().spmm(spmmArgs({indexBits: 8, threads: 'x'})), TypeError, 'spmm: threads must be a number'],
    ['spmm: indexBits 16 and k', () => raw().spmm(spmmArgs({k: 40000, b: new Float32Array(80000), indexBits: 16})), RangeError, 'spmm: indexBits 16 needs k <= 32768'],
    ['spmm: variant', () => raw().spmm(spmmArgs({variant: 7})), TypeError, 'spmm: variant must be a string'],
    ['spmm: indexBits before variant', () => raw().spmm(spmmArgs({variant: 7, indexBits: 12})), RangeError, 'spmm: indexBits must be 16 or 32'],
    ['spmm: keepSparse', () => raw().spmm(spmmArgs({keepSparse: 1})), TypeError, 'spmm: keepSparse must be a boolean'],
    ['spmm: variant before keepSparse', () => raw().spmm(spmmArgs({variant: 7, keepSparse: 1})), TypeError, 'spmm: variant must be a string'],
    ['sddmm: no object', () => raw().sddmm('x'), TypeError, 'sddmm: expected one argument object'],
    ['sddmm: L too large', () => raw().sddmm(sddmmArgs({m: big, k: big / 2})), RangeError, 'sddmm: the dense operands are too large'],
    ['sddmm: R too large', () => raw().sddmm(sddmmArgs({n: big, k: big / 2})), RangeError, 'sddmm: the dense operands are too large'],
    ['sddmm: rows checked before the product size', () => raw().sddmm(sddmmArgs({m: -1, n: big, k: big})), RangeError, 'sddmm: m must be an integer in [0, 2^31)'],
    ['sddmm: lhs type', () => raw().sddmm(sddmmArgs({lhs: new Float64Array(4)})), TypeError, 'sddmm: lhs must be a Float32Array'],
    ['sddmm: rhs length', () => raw().sddmm(sddmmArgs({rhs: new Float32Array(5)})), RangeError, 'sddmm: rhs has 5 elements, expected 6'],
    ['sddmm: out length', () => raw().sddmm(sddmmArgs({out: new Float32Array(2)})), RangeError, 'sddmm: out has 2 elements, expected 3'],
    ['sddmm: column range', () => raw().sddmm(sddmmArgs({columnIndices: new Int32Array([0, 3, 1])})), RangeError, 'sddmm: csr.columnIndices must be in [0, n)'],
    ['sddmm: device', () => raw().sddmm(sddmmArgs({device: 'tpu'})), RangeError, "sddmm: device must be one of cuda|cpu, got 'tpu'"],
    ['sddmm: threads', () => raw().sddmm(sddmmArgs({threads: 1.5})), RangeError, 'sddmm: threads must be an integer in [0, 2^31)'],
    ['spmmTime: indexBits', () => raw().spmmTime(spmmArgs({indexBits: 64, variants: []})), RangeError, 'spmmTime: indexBits must be 16 or 32'],
    ['spmmTime: variants missing', () => raw().spmmTime(spmmArgs()), TypeError, 'spmmTime: variants must be an array of strings'],
    ['spmmTime: variants element', () => raw().spmmTime(spmmArgs({variants: ['tile_v1_t2', 3]})), TypeError, 'spmmTime: variants[1] must be a string'],
    ['spmmTime: reps', () => raw().spmmTime(spmmArgs({variants: [], reps: -5})), RangeError, 'spmmTime: reps must be an integer in [0, 2^31)'],
    ['spmmTime: c required', () => raw().spmmTime(spmmArgs({c: undefined, variants: []})), TypeError, 'spmmTime: c must be a Float32Array'],
    ['spmmReference: values length', () => raw().spmmReference(spmmArgs({values: new Float32Array(2)})), RangeError, 'spmmReference: values has 2 elements, expected 3'],
    ['spmmReference: threads', () => raw().spmmReference(spmmArgs({threads: -2})), RangeError, 'spmmReference: threads must be an integer in [0, 2^31)'],
    ['sddmmReference: rhs type', () => raw().sddmmReference(sddmmArgs({rhs: new Int32Array(6)})), TypeError, 'sddmmReference: rhs must be a Float32Array'],
    ['tcFormat: values type', () => raw().tcFormat({m: 2, k: 3, ...pattern(), values: new Float32Array(3)}), TypeError, 'tcFormat: values must be a Uint16Array'],
    ['sddmmChunkStarts: n', () => raw().sddmmChunkStarts({m: 2, n: -3, ...pattern()}), RangeError, 'sddmmChunkStarts: n must be an integer in [0, 2^31)'],
  ]
  for (const [what, call, type, message] of cases) {
    it(what, () => {
      const err = thrown(call)
      expect(err).to.be.instanceOf(type)
      expect(err.message).to.equal(message)
    })
  }
})

describe('kernels binding: what each entry point reads', () => {
  it('spmm and sddmm on the CPU fill the caller arrays (hand-checked)', async () => {
    const a = spmmArgs({threads: 1})
    await raw().spmm(a)
    expect(Array.from(a.c as Float32Array)).to.deep.equal([11, 14, 9, 12])
    const s = sddmmArgs()
    await raw().sddmm(s)
    expect(Array.from(s.out as Float32Array)).to.deep.equal([5, 17, 25])
  })

  it('the references read neither an output array nor a device, and resolve to float64', async () => {
    const c = await raw().spmmReference(spmmArgs({c: undefined, device: undefined, indexBits: 'ignored'}))
    expect(c).to.be.instanceOf(Float64Array)
    expect(Array.from(c)).to.deep.equal([11, 14, 9, 12])
    const out = await raw().sddmmReference(sddmmArgs({out: undefined, device: 'ignored'}))
    expect(Array.from(out)).to.deep.equal([5, 17, 25])
  })

  it('spmmTime and a CUDA spmm without a GPU reject with a coded error', async function () {
    const info = cudaInfo()
    if (info.available) this.skip() // a GPU is present: the GPU kernel tests cover these
    const code = info.built ? info.code : 'ERR_NO_CUDA'
    const t = (await raw().spmmTime(spmmArgs({variants: ['x']})).catch((e: unknown) => e)) as Error & {code?: string}
    expect(t.code).to.equal(code)
    const s = (await raw().sddmm(sddmmArgs({device: 'cuda'})).catch((e: unknown) => e)) as Error & {code?: string}
    expect(s.code).to.equal(code)
  })

  it('spmmVariants reads the shape only when CUDA is built', () => {
    const info = cudaInfo()
    const shape = {m: 64, k: 64, n: 32, nnz: 300, dtype: 'f16'}
    const r = raw().spmmVariants(shape)
    if (!info.built) {
      expect(r).to.deep.equal({selected: '', variants: []})
      expect(raw().spmmVariants({})).to.deep.equal({selected: '', variants: []})
      return
    }
    expect(r.selected).to.be.a('string').and.not.equal('')
    expect(r.variants).to.include(r.selected)
    expect(() => raw().spmmVariants({...shape, dtype: 'f64'})).to.throw(RangeError, "spmmVariants: dtype must be one of f32|f16|bf16, got 'f64'")
  })
})
