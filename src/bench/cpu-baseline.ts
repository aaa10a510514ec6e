/**
 * The CPU benchmark's dense baseline, as the addon chose it (native/cpu/cpu_gemm.h: every CPU
 * BLAS that loads and our own GEMM are timed once, the fastest is used, the reference BLAS
 * never). Read from the ceilings' note, and checked per case: a dense product far below the
 * machine's GEMM ceiling inflates every speedup measured against it (issue 22: 13x).
 */
import type {BenchCaseRecord, NativeCeilings} from './types.js'

/** A case's dense baseline below this fraction of the machine's GEMM ceiling gets a warning. */
export const DENSE_FLOOR = 0.25

export interface CpuGemm {
  /** The library ("OpenBLAS 0.3.31") or "our blocked fp32 GEMM". */
  name: string
  /** The baseline's rate on the ceilings' square product (GFLOP/s); null when not measured. */
  gflops: number | null
  /** The best rate of every candidate timed when the baseline was chosen (GFLOP/s); null when unknown. */
  ceilingGflops: number | null
}

/** The CPU dense product from the ceilings ("...GEMM: OpenBLAS 0.3.31 cblas_sgemm (/path), 2 threads; the fastest; ceiling 61.2 GFLOP/s ..."). */
export function cpuGemm(ceilings: NativeCeilings): CpuGemm {
  const what = ceilings.note?.split('GEMM: ')[1] ?? ''
  const name = what.split(' (')[0] || 'a CPU BLAS or our blocked GEMM'
  const ceiling = /ceiling ([\d.]+) GFLOP\/s/.exec(what)
  const gflops = ceilings.f32Tflops === null ? null : ceilings.f32Tflops * 1000
  const measured = ceiling ? Number(ceiling[1]) : null
  // The ceiling is the best rate seen: the choice's own (512^3) or the ceilings' run (gemmSize^3).
  const ceilingGflops = measured === null && gflops === null ? null : Math.max(measured ?? 0, gflops ?? 0)
  return {name: name.replace(/ (cblas_sgemm|scipy_cblas_sgemm\S*|cblas_sgemm64_)$/, ''), gflops, ceilingGflops}
}

/**
 * One warning when the dense baseline ran below DENSE_FLOOR of the ceiling in some cases
 * (their speedups compare against a slow dense product), else null.
 */
export function denseBaselineWarning(cases: BenchCaseRecord[], ceilings: NativeCeilings): string | null {
  const {ceilingGflops, name} = cpuGemm(ceilings)
  if (!ceilingGflops) return null
  const slow: Array<{label: string; gflops: number}> = []
  let timed = 0
  for (const c of cases) {
    if (c.status !== 'ok' || c.device !== 'cpu') continue
    const ms = c.baselines.cpu_dense_f32
    if (!(ms > 0)) continue
    timed++
    const gflops = (2 * c.m * c.k * c.n) / (ms * 1e-3) / 1e9
    if (gflops < DENSE_FLOOR * ceilingGflops) slow.push({label: `${c.name || c.file} ${c.op} N=${c.n}`, gflops})
  }
  if (slow.length === 0) return null
  slow.sort((a, b) => a.gflops - b.gflops)
  const worst = slow[0]
  return (
    `the dense baseline (${name}) ran below ${100 * DENSE_FLOOR}% of this machine's measured GEMM ceiling (${ceilingGflops.toFixed(1)} GFLOP/s) in ${slow.length} of ${timed} cases ` +
    `(slowest: ${worst.label} at ${worst.gflops.toFixed(1)} GFLOP/s): speedups there compare against an underperforming dense product (small or thin products run below the ceiling; see docs/bench.md)`
  )
}
