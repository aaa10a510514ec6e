/**
 * The native benchmark harness (native/binding/bench_binding.cc, native/bench) called
 * directly, below src/bench: every argument re-check names its field, a CPU case comes back
 * in the asked order with the unavailable implementations explained, and (on a GPU) every
 * CUDA implementation reports the `detail` it always has. These pin the native surface that
 * src/bench reads, so a restructuring of the harness cannot change it unseen.
 */
import {expect} from 'chai'

import {cudaInfo, loadAddon} from '../../src/kernels/binding.js'
import {randomPattern} from '../kernels/helpers.js'

interface ImplOut {
  name: string
  available: boolean
  reason?: string
  detail?: string
  l2Mode?: string
  copies?: number
  samples?: Float64Array
  relErr?: number
  checkAgainst?: string
}
interface BenchOut {
  impls: ImplOut[]
  l2Bytes: number
  smClockMhz: {min: number; max: number} | null
}
interface RawBench {
  benchCudaBuilt: boolean
  benchDeviceInfo(): {available: boolean; reason?: string; cublas?: string; cusparse?: string}
  benchCeilings(device?: unknown, threads?: unknown): Promise<Record<string, unknown>>
  benchSpmm(args?: unknown): Promise<BenchOut>
  benchSddmm(args?: unknown): Promise<BenchOut>
  spmmVariants(shape: object): {selected: string; variants: string[]}
}

const raw = () => loadAddon<RawBench>()
const FAST = {warmup: 1, minReps: 3, minMs: 0, maxReps: 3, graphLaunches: 4}

/** A valid case: a 3 x 5 pattern with 5 nonzeros, n = 4, on the CPU. */
function args(over: Record<string, unknown> = {}, csrOver: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    device: 'cpu',
    dtype: 'f32',
    m: 3,
    k: 5,
    n: 4,
    csr: {
      rows: 3,
      cols: 5,
      rowOffsets: new Int32Array([0, 2, 2, 5]),
      columnIndices: new Int32Array([0, 4, 1, 2, 3]),
      values: new Float32Array([1, -2, 0.5, 3, 0.25]),
      ...csrOver,
    },
    impls: ['ours', 'cpu_dense_f32'],
    options: FAST,
    ...over,
  }
}

/** The error a call throws synchronously (argument checks run before any work is queued). */
function thrown(fn: () => unknown): Error & {code?: string} {
  try {
    fn()
  } catch (error) {
    return error as Error & {code?: string}
  }
  throw new Error('expected the call to throw')
}

describe('native bench harness: arguments are re-checked, naming the field', () => {
  const cases: Array<[string, () => unknown, ErrorConstructor, string]> = [
    ['no argument object', () => raw().benchSpmm(42), TypeError, 'benchSpmm(args): args must be an object'],
    ['no argument object (sddmm)', () => raw().benchSddmm(), TypeError, 'benchSddmm(args): args must be an object'],
    ['device not a string', () => raw().benchSpmm(args({device: 3})), TypeError, "device must be 'cuda' or 'cpu'"],
    ['device unknown', () => raw().benchSpmm(args({device: 'tpu'})), RangeError, "device must be 'cuda' or 'cpu', got 'tpu'"],
    ['dtype unknown', () => raw().benchSpmm(args({dtype: 'f64'})), RangeError, "args.dtype must be 'f32', 'f16' or 'bf16', got 'f64'"],
    ['dtype not a string', () => raw().benchSpmm(args({dtype: 1})), TypeError, "args.dtype must be 'f32', 'f16' or 'bf16'"],
    ['m not a number', () => raw().benchSpmm(args({m: 'x'})), TypeError, 'args.m must be a number'],
    ['m negative', () => raw().benchSpmm(args({m: -1})), RangeError, 'args.m must be an integer >= 0, got -1.000000'],
    ['n fractional', () => raw().benchSddmm(args({n: 1.5})), RangeError, 'args.n must be an integer >= 0, got 1.500000'],
    ['indexBits', () => raw().benchSpmm(args({indexBits: 8})), RangeError, 'args.indexBits must be 16 or 32'],
    ['variant not a string', () => raw().benchSpmm(args({variant: 5})), TypeError, 'args.variant must be a string'],
    ['variant too long', () => raw().benchSpmm(args({variant: 'a'.repeat(48)})), RangeError, 'args.variant is too long'],
    ['variant characters', () => raw().benchSpmm(args({variant: 'Bad-Name'})), RangeError, "args.variant must be a variant name like 'split_v4_t8_w1', got 'Bad-Name'"],
    ['csr missing', () => raw().benchSpmm(args({csr: undefined})), TypeError, 'args.csr must be an object'],
    ['csr.rows', () => raw().benchSpmm(args({}, {rows: -2})), RangeError, 'args.csr.rows must be an integer >= 0, got -2.000000'],
    ['rowOffsets type', () => raw().benchSpmm(args({}, {rowOffsets: new Uint32Array(4)})), TypeError, 'args.csr.rowOffsets must be a Int32Array'],
    ['rowOffsets length', () => raw().benchSpmm(args({}, {rowOffsets: new Int32Array([0, 2, 5])})), RangeError, 'args.csr.rowOffsets must have 4 elements, got 3'],
    ['rowOffsets start', () => raw().benchSpmm(args({}, {rowOffsets: new Int32Array([1, 2, 2, 5])})), RangeError, 'args.csr.rowOffsets must run from 0 to nnz'],
    ['columnIndices length', () => raw().benchSpmm(args({}, {columnIndices: new Int32Array(4)})), RangeError, 'args.csr.columnIndices must have 5 elements, got 4'],
    ['f32 values type', () => raw().benchSpmm(args({}, {values: new Uint16Array(5)})), TypeError, 'args.csr.values must be a Float32Array for f32'],
    ['f16 values type', () => raw().benchSpmm(args({dtype: 'f16'})), TypeError, 'args.csr.values must be a Uint16Array for f16/bf16'],
    ['values length', () => raw().benchSpmm(args({}, {values: new Float32Array(6)})), RangeError, 'args.csr.values must have 5 elements, got 6'],
    ['rowIndices length', () => raw().benchSpmm(args({}, {rowIndices: new Int32Array(2)})), RangeError, 'args.csr.rowIndices must have 3 elements, got 2'],
    ['impls not an array', () => raw().benchSpmm(args({impls: 'ours'})), TypeError, 'args.impls must be an array of implementation names'],
    ['impls element', () => raw().benchSpmm(args({impls: ['ours', 3]})), TypeError, 'args.impls[1] must be a string'],
    ['options range', () => raw().benchSpmm(args({options: {minReps: 0}})), RangeError, 'args.options: minReps and maxReps must be >= 1, warmup and minMs >= 0'],
    ['ceilings device missing', () => raw().benchCeilings(), TypeError, "device must be 'cuda' or 'cpu'"],
    ['ceilings device unknown', () => raw().benchCeilings('gpu'), RangeError, "device must be 'cuda' or 'cpu', got 'gpu'"],
  ]
  for (const [what, call, type, message] of cases) {
    it(what, () => {
      const err = thrown(call)
      expect(err).to.be.instanceOf(type)
      expect(err.message).to.equal(message)
    })
  }
})

describe('native bench harness: a CPU case', () => {
  it('times ours and the dense product, in the asked order, and explains the rest', async () => {
    const r = await raw().benchSpmm(args({impls: ['cusparse', 'ours', 'bogus', 'cpu_dense_f32']}))
    expect(r.impls.map((i) => i.name)).to.deep.equal(['cusparse', 'ours', 'bogus', 'cpu_dense_f32'])
    const [cusparse, ours, bogus, dense] = r.impls
    expect(cusparse).to.deep.include({available: false, reason: 'cusparse is a CUDA baseline (not available in CPU mode)'})
    expect(bogus).to.deep.include({available: false, reason: "unknown implementation 'bogus'"})
    for (const impl of [ours, dense]) {
      expect(impl.available).to.equal(true)
      expect(impl.l2Mode).to.equal('n/a')
      expect(impl.samples).to.be.instanceOf(Float64Array).with.length(3)
    }
    expect(ours.checkAgainst).to.equal('cpu_dense_f32')
    expect(ours.relErr).to.be.below(1e-6)
    expect(r.smClockMhz).to.equal(null)
  })

  it('runs an SDDMM case with a pattern-only mask', async () => {
    const r = await raw().benchSddmm(args({m: 3, k: 4, n: 5}, {values: undefined}))
    expect(r.impls.map((i) => [i.name, i.available])).to.deep.equal([['ours', true], ['cpu_dense_f32', true]])
    expect(r.impls[0].relErr).to.be.below(1e-6)
  })

  it('measures the CPU ceilings', async () => {
    const c = await raw().benchCeilings('cpu', 1)
    expect(c.copyGBps).to.be.a('number').above(0)
    expect(c).to.have.property('gemmSize').that.is.a('number')
  })
})

describe('native bench harness: CUDA without a GPU', () => {
  it('reports no device and refuses a CUDA case with a coded error', async function () {
    if (cudaInfo().available) this.skip() // a GPU is present: see the GPU block below
    const addon = raw()
    const info = addon.benchDeviceInfo()
    expect(info.available).to.equal(false)
    expect(info.reason).to.be.a('string').and.not.equal('')
    if (!addon.benchCudaBuilt) {
      // A CPU-only addon refuses synchronously.
      expect(thrown(() => addon.benchSpmm(args({device: 'cuda'}))).code).to.equal('cudaNotBuilt')
      expect(thrown(() => addon.benchCeilings('cuda')).code).to.equal('cudaNotBuilt')
      return
    }
    const err = (await addon.benchSpmm(args({device: 'cuda'})).catch((e: unknown) => e)) as Error & {code?: string}
    expect(err).to.be.instanceOf(Error)
    expect(err.code).to.match(/^cuda\w+$/)
    expect(err.message).to.match(/^no CUDA device/)
  })
})

describe('native bench harness: every CUDA implementation (GPU)', () => {
  before(function () {
    const info = cudaInfo()
    if (!info.available) this.skip() // no GPU on this machine: nothing to time
  })

  const spmmArgs = (dtype: 'f32' | 'f16', impls: string[], over: Record<string, unknown> = {}) => {
    const p = randomPattern(96, 128, 900, 7)
    return {device: 'cuda', dtype, m: 96, k: 128, n: 64, csr: {rows: 96, cols: 128, rowOffsets: p.rowOffsets, columnIndices: p.columnIndices}, impls, options: FAST, ...over}
  }
  const sddmmArgs = (dtype: 'f32' | 'f16', impls: string[]) => {
    const p = randomPattern(96, 80, 700, 8)
    return {device: 'cuda', dtype, m: 96, k: 32, n: 80, csr: {rows: 96, cols: 80, rowOffsets: p.rowOffsets, columnIndices: p.columnIndices}, impls, options: FAST}
  }

  it('SpMM f32: ours, cuBLAS fp32/TF32, cuSPARSE; wrong dtype and unknown names explained', async () => {
    const r = await raw().benchSpmm(spmmArgs('f32', ['ours', 'cublas_f32', 'cublas_tf32', 'cublas_f16', 'cusparse', 'bogus']))
    const by = Object.fromEntries(r.impls.map((i) => [i.name, i]))
    expect(r.impls.map((i) => i.name)).to.deep.equal(['ours', 'cublas_f32', 'cublas_tf32', 'cublas_f16', 'cusparse', 'bogus'])
    expect(by.ours.available).to.equal(true)
    expect(by.ours.detail).to.match(/^CudaSpmm spmm_f32_i32_\w+, 32-bit indices$/)
    // 96 x 128 is tiny: keeping the L2 cold by rotation would take more than 64 operand
    // copies, so the harness flushes the L2 between launches instead (one copy).
    expect(by.ours.l2Mode).to.equal('flush')
    expect(by.ours.copies).to.equal(1)
    expect(by.cublas_f16).to.deep.include({available: false, reason: 'cublas_f16 needs f16 operands (this case is f32)'})
    expect(by.bogus).to.deep.include({available: false, reason: "unknown implementation 'bogus'"})
    if (by.cublas_f32.available) {
      expect(by.cublas_f32.detail).to.equal('cublasGemmEx CUBLAS_COMPUTE_32F, default math (fp32 FMA)')
      expect(by.cublas_tf32.detail).to.equal('cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores)')
      expect(by.ours.checkAgainst).to.equal('cublas_f32')
      expect(by.ours.relErr).to.be.below(1e-5)
    }
    if (by.cusparse.available) {
      expect(by.cusparse.detail).to.match(
        /^cusparseSpMM CUSPARSE_SPMM_CSR_ALG[123] \(the fastest in a warm trial: CSR_ALG2 [\d.]+ us, CSR_ALG1 [\d.]+ us, CSR_ALG3 [\d.]+ us\), compute fp32, descriptors, workspace and preprocess made before timing$/,
      )
      expect(by.cusparse.relErr).to.be.below(1e-5)
    }
  })

  it("SpMM f16 with a tensor-core variant: the tiles are built once and the variant named", async function () {
    const p = randomPattern(96, 128, 900, 7)
    const tc = raw().spmmVariants({m: 96, k: 128, n: 64, nnz: p.columnIndices.length, dtype: 'f16', indexBits: 16}).variants.find((v) => v.startsWith('tc_'))
    if (!tc) this.skip() // this GPU has no tensor-core variant for the shape
    const r = await raw().benchSpmm(spmmArgs('f16', ['ours', 'cublas_f16'], {indexBits: 16, variant: tc}))
    const [ours, dense] = r.impls
    expect(ours.detail).to.match(
      new RegExp(`^CudaSpmmVariant spmm_f16_i16_${tc} \\(variant chosen by the caller\\), 16-bit indices; tiles built once on the host in [\\d.]+ ms, [\\d.]+ MB$`),
    )
    if (dense.available) {
      expect(dense.detail).to.equal('cublasGemmEx f16 in/out, CUBLAS_COMPUTE_32F (tensor cores, fp32 accumulate)')
      expect(ours.relErr).to.be.below(1e-2)
    }
  })

  it('SpMM: a variant that cannot run fails the case', async () => {
    const err = (await raw().benchSpmm(spmmArgs('f32', ['ours'], {variant: 'no_such_variant'})).catch((e: unknown) => e)) as Error
    expect(err.message).to.include("CudaSpmmVariant 'no_such_variant' (unknown, or it cannot run this problem)")
  })

  it('SDDMM f16: ours, cuBLAS (operand order trial), cuSPARSE', async () => {
    const r = await raw().benchSddmm(sddmmArgs('f16', ['ours', 'cublas_f16', 'cusparse', 'cublas_tf32']))
    const by = Object.fromEntries(r.impls.map((i) => [i.name, i]))
    expect(by.ours.detail).to.match(/^CudaSddmm sddmm_f16_\w+/)
    expect(by.cublas_tf32).to.deep.include({available: false, reason: 'cublas_tf32 needs f32 operands (this case is f16)'})
    if (by.cublas_f16.available) {
      expect(by.cublas_f16.detail).to.match(
        /^full product L R\^T, cublasGemmEx f16 in\/out, CUBLAS_COMPUTE_32F \(tensor cores\), order (LR \(C = L R\^T column-major|RL \(C\^T = R L\^T column-major).*, the faster in a trial: RL [\d.]+ us, LR [\d.]+ us$/,
      )
      expect(by.ours.checkAgainst).to.equal('cublas_f16')
      expect(by.ours.relErr).to.be.below(1e-2)
    }
    if (by.cusparse.available) {
      expect(by.cusparse.detail).to.match(
        /^cusparseSDDMM CUSPARSE_SDDMM_ALG_DEFAULT, compute fp32, R (described as column-major R\^T|row-major with opB = transpose), descriptors, workspace and preprocess made before timing$/,
      )
      expect(by.cusparse.relErr).to.be.below(1e-2)
    }
  })

  it('SDDMM f16 on the tensor-core path when forced: chunk starts built once', async function () {
    const before = process.env.SPARSE_SDDMM_VARIANT
    process.env.SPARSE_SDDMM_VARIANT = 'tc'
    try {
      const r = await raw().benchSddmm(sddmmArgs('f16', ['ours']))
      const detail = r.impls[0].detail ?? ''
      if (!detail.includes('_tc')) this.skip() // the tensor-core SDDMM cannot run this shape here
      expect(detail).to.match(/; chunk starts built once on the host in [\d.]+ ms, [\d.]+ MB$/)
    } finally {
      if (before === undefined) delete process.env.SPARSE_SDDMM_VARIANT
      else process.env.SPARSE_SDDMM_VARIANT = before
    }
  })

  it('SpMM f16/bf16 on a 2:4 matrix: cuSPARSELt searched, compressed once, checked (or explained when missing)', async () => {
    // Row r keeps columns (r + g) % 4 and (r + g + 1) % 4 of each group g of 4: exactly 2:4.
    const m = 96, k = 128
    const offsets = new Int32Array(m + 1)
    const cols: number[] = []
    for (let r = 0; r < m; r++) {
      for (let g = 0; g < k / 4; g++) cols.push(...[(r + g) % 4, (r + g + 1) % 4].sort((a, b) => a - b).map((c) => 4 * g + c))
      offsets[r + 1] = cols.length
    }
    const csr = {rows: m, cols: k, rowOffsets: offsets, columnIndices: new Int32Array(cols)}
    for (const dtype of ['f16', 'bf16'] as const) {
      const dense = dtype === 'f16' ? 'cublas_f16' : 'cublas_bf16'
      const r = await raw().benchSpmm({device: 'cuda', dtype, m, k, n: 64, csr, impls: ['ours', dense, 'cusparselt'], options: FAST})
      const lt = r.impls[2]
      if (!lt.available) {
        expect(lt.reason).to.match(/^(cuSPARSELt not found: |cusparseLtInit failed|cuSPARSELt \d+ at .* is older)/)
        continue
      }
      expect(lt.detail).to.match(
        new RegExp(`^cusparseLtMatmul, A 2:4 row-major \\(compressed\\), B and C row-major, ${dtype} in/out, CUSPARSE_COMPUTE_32F; algorithm \\d+ \\(of ids 0\\.\\.\\d+\\) chosen by cusparseLtMatmulSearch .*; compressed A made once by cusparseLtSpMMACompress in [\\d.]+ ms, [\\d.]+ MB$`),
      )
      if (r.impls[1].available) {
        expect(lt.checkAgainst).to.equal(dense)
        expect(lt.relErr).to.be.below(1e-2)
      }
    }
  })

  it('cusparselt explains what it cannot run: f32, a matrix that is not 2:4, SDDMM', async () => {
    const f32 = await raw().benchSpmm(spmmArgs('f32', ['ours', 'cusparselt']))
    expect(f32.impls[1]).to.deep.include({available: false, reason: 'cusparselt takes f16 or bf16 operands (this case is f32)'})
    const dense = await raw().benchSpmm(spmmArgs('f16', ['ours', 'cusparselt']))
    expect(dense.impls[1].available).to.equal(false)
    expect(dense.impls[1].reason).to.match(/^cuSPARSELt: A is not 2:4 \(row \d+ has 3 or more nonzeros in columns \d+\.\.\d+\)$/)
    const sddmm = await raw().benchSddmm(sddmmArgs('f16', ['ours', 'cusparselt']))
    expect(sddmm.impls[1]).to.deep.include({available: false, reason: 'cusparselt does not do SDDMM'})
  })

  it('measures the ceilings', async () => {
    const c = await raw().benchCeilings('cuda')
    expect(c.copyGBps).to.be.a('number').above(0)
    expect(c.gemmSize).to.be.a('number').at.least(1024)
  })
})
