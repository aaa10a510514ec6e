// The CPU benchmark's dense baseline (issue 22): the fastest GEMM measured, never the
// reference BLAS; the header names it with its rate; a warning when a case's dense product
// runs far below the machine's GEMM ceiling.
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {cpuGemm, DENSE_FLOOR, denseBaselineWarning} from '../../src/bench/cpu-baseline.js'
import type {BenchCaseRecord, NativeCeilings} from '../../src/bench/types.js'
import {runCli} from '../helpers/cli.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx'
const FAST = ['--reps', '3', '--min-ms', '1', '--warmup', '1']

function ceilings(note: string, f32Tflops: number | null = 0.05): NativeCeilings {
  return {copyGBps: 10, f32Tflops, tf32Tflops: null, f16Tflops: null, bf16Tflops: null, gemmSize: 768, note}
}
const NOTE = 'CPU: single-threaded memcpy bandwidth; dense rate of the CPU baseline\'s fp32 GEMM: OpenBLAS 0.3.31 cblas_sgemm (/usr/lib/libopenblas.so.0), 2 threads; the fastest; ceiling 61.2 GFLOP/s at 512^3 (measured: OpenBLAS 0.3.31 61.2, our GEMM 40.0 GFLOP/s)'

function okCase(m: number, k: number, n: number, denseMs: number): BenchCaseRecord {
  return {status: 'ok', file: 'w.npz', name: 'layer', group: 'input', level: 0.9, op: 'spmm', dtype: 'f32', device: 'cpu', m, k, n, nnz: 1, sparsity: 0.9, indexBits: 32, ms: {median: 1, p10: 1, p90: 1}, samples: 3, baselines: {cpu_dense_f32: denseMs}, speedup: {}, unavailable: {}, impls: {}, tflops: 0, form: 'csr', bytes: 0, gbps: 0, fractionOfBandwidth: null, fractionOfCompute: null, memory: {} as never, memorySaving: 1, recommendation: null, l2Mode: 'n/a'}
}

describe('CPU dense baseline', function () {
  this.timeout(180_000)

  it('reads the library, its rate and the ceiling from the ceilings', () => {
    const g = cpuGemm(ceilings(NOTE, 0.0585))
    expect(g.name).to.equal('OpenBLAS 0.3.31')
    expect(g.gflops).to.be.closeTo(58.5, 1e-9)
    expect(g.ceilingGflops).to.be.closeTo(61.2, 1e-9)
  })

  it(`warns when a case's dense product runs below ${DENSE_FLOOR * 100}% of the ceiling, and only then`, () => {
    // 1024 x 1024 x 256 = 0.537 GFLOP: 137 ms (the reference BLAS of the issue) is 3.9 GFLOP/s.
    const slow = denseBaselineWarning([okCase(1024, 1024, 256, 137)], ceilings(NOTE))
    expect(slow).to.match(/below 25% of this machine's measured GEMM ceiling \(61\.2 GFLOP\/s\) in 1 of 1 cases/)
    expect(slow).to.match(/at 3\.9 GFLOP\/s/)
    // 8.8 ms (our GEMM in the issue) is 61 GFLOP/s: no warning.
    expect(denseBaselineWarning([okCase(1024, 1024, 256, 8.8)], ceilings(NOTE))).to.equal(null)
  })

  it('never uses the reference BLAS, even when it is the only library found (a fake libblas.so.3 on LD_LIBRARY_PATH)', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'refblas-'))
    try {
      // A Netlib-like library: cblas_sgemm and nothing that names a vendor.
      writeFileSync(
        join(dir, 'refblas.c'),
        `void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) { float s = 0; for (int p = 0; p < k; ++p) s += a[i * lda + p] * (tb == 112 ? b[j * ldb + p] : b[p * ldb + j]); c[i * ldc + j] = alpha * s + beta * c[i * ldc + j]; }
}\n`,
      )
      try {
        execFileSync('cc', ['-O0', '-shared', '-fPIC', '-o', join(dir, 'libblas.so.3'), join(dir, 'refblas.c')], {stdio: 'ignore'})
      } catch {
        this.skip() // no C compiler to build the fake library
      }
      const r = await runCli(['bench', SMTX, '--device', 'cpu', '--n', '64', '--op', 'spmm', '--dtype', 'f32', ...FAST, '--json'], {env: {LD_LIBRARY_PATH: dir}})
      expect(r.code, r.stderr).to.equal(0)
      const out = JSON.parse(r.stdout)
      const note: string = out.device.ceilings.note
      const used = note.split('GEMM: ')[1].split(';')[0]
      expect(used, note).to.not.include(join(dir, 'libblas.so.3'))
      expect(note).to.include(`the reference BLAS is never used (${join(dir, 'libblas.so.3')})`)
      expect(note).to.match(/ceiling [\d.]+ GFLOP\/s at 512\^3 \(measured: .*our GEMM [\d.]+/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('the header names the dense product and its GFLOP/s', async () => {
    const r = await runCli(['bench', SMTX, '--device', 'cpu', '--n', '64', '--op', 'spmm', '--dtype', 'f32', ...FAST])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/CPU figures: .*against a dense fp32 product: [^,]+, [\d.]+ GFLOP\/s\)/)
    expect(r.stdout).to.match(/dense f32 [\d.]+ GFLOP\/s at 768\^3 \(the machine's GEMM ceiling: [\d.]+ GFLOP\/s/)
  })
})
