/**
 * Device-side sweep of every CUDA SpMM kernel variant (issue 5): on each DLMC dev-subset
 * problem at the paper's N (../shared/anchors/dlmc_dev_h200.jsonl) and on LLM-shaped random
 * layers at small N, times every variant that can run the problem (hot L2, batched launches:
 * for ranking variants and calibrating the families' selection rules, native/cuda/spmm/
 * spmm_family.h; not for reports), records what the selection picked, and fails when the
 * picks' geomean over the best rises above the fitted figure (with a margin). Heavy: runs only when
 * SPARSE_SPMM_SWEEP is set (to a JSON-lines output path), else skips with the reason.
 *
 *   SPARSE_SPMM_SWEEP=/tmp/variants.jsonl node --import tsx node_modules/mocha/bin/_mocha --no-config --timeout 0 test/kernels/spmm-variants.sweep.test.ts
 */
import {expect} from 'chai'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {DLMC} from '../helpers/cli.js'
import {cudaInfo, spmmVariants, timeSpmmVariants} from '../../src/kernels/index.js'
import {parseSmtx} from '../../src/formats/smtx.js'
import {rowSwizzle} from '../../src/reorder/swizzle.js'
import {createRng} from '../../src/sparse/random.js'
import {float32ToHalf} from '../../src/sparse/half.js'
import type {CsrMatrix, ValueDType} from '../../src/types.js'
import {uniform} from '../../src/verify/index.js'

const ANCHORS = join(DLMC, '..', 'anchors', 'dlmc_dev_h200.jsonl')

/**
 * The selection's figure: its picks ran at 1.06-1.07x the time of the best variant (geomean
 * per dtype) on the sweep its constants were fitted to and checked on (docs/kernels.md, "SpMM
 * kernel variants and how one is chosen"; BENCHMARKS.md, v6). A sweep more than MARGIN above
 * it is a regression of the rules (or of a kernel the rules pick) and fails; the margin
 * covers run-to-run noise of hot-L2 timing.
 */
const FITTED_SELECTED_OVER_BEST = 1.07
const MARGIN = 1.05

/** A random layer with each entry kept with probability 1 - sparsity (row lengths binomial, as magnitude pruning of i.i.d. weights gives). */
function randomLayer(rows: number, cols: number, sparsity: number, seed: number): CsrMatrix {
  const rng = createRng(seed)
  const rowOffsets = new Int32Array(rows + 1)
  const idx: number[] = []
  const keep = 1 - sparsity
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) if (rng.nextUint32() / 4294967296 < keep) idx.push(c)
    rowOffsets[r + 1] = idx.length
  }
  return {rows, cols, rowOffsets, columnIndices: Int32Array.from(idx), values: null, dtype: 'f32', rowIndices: rowSwizzle(rowOffsets, rows)}
}

describe('SpMM variant sweep (timing every kernel variant per problem)', function () {
  this.timeout(0)
  const out = process.env.SPARSE_SPMM_SWEEP

  before(function () {
    if (!out) {
      console.log('    skipping the SpMM variant sweep: set SPARSE_SPMM_SWEEP=<output.jsonl> (heavy; meant for the GPU machine)')
      this.skip()
    }
    const info = cudaInfo()
    if (!info.available) {
      console.log(`    skipping the SpMM variant sweep: ${info.reason}`)
      this.skip()
    }
  })

  it('times every variant on the DLMC subset and the LLM shapes', async () => {
    const lines: string[] = []
    const dtypes: ValueDType[] = (process.env.SPARSE_SPMM_SWEEP_DTYPES ?? 'f32,f16').split(',') as ValueDType[]
    const problems: Array<{name: string; csr: () => CsrMatrix; n: number}> = []
    // SPARSE_SPMM_SWEEP_SET=llm: only the LLM layers (sparsities 0.5-0.95, N from
    // SPARSE_SPMM_SWEEP_NS, default 16,64); default: the DLMC subset and the LLM layers.
    const set = process.env.SPARSE_SPMM_SWEEP_SET ?? 'all'
    const llmNs = (process.env.SPARSE_SPMM_SWEEP_NS ?? '16,64').split(',').map(Number)
    const llmLevels = set === 'llm' ? [0.5, 0.7, 0.9, 0.95] : [0.7, 0.9]
    if (set !== 'llm' && existsSync(ANCHORS)) {
      const cache = new Map<string, CsrMatrix>()
      for (const line of readFileSync(ANCHORS, 'utf8').trim().split('\n')) {
        const p = JSON.parse(line) as {file: string; n: number}
        problems.push({
          name: p.file,
          n: p.n,
          csr: () => {
            let c = cache.get(p.file)
            if (!c) {
              const raw = parseSmtx(readFileSync(join(DLMC, p.file)), p.file)
              c = {...raw, rowIndices: rowSwizzle(raw.rowOffsets, raw.rows)}
              cache.set(p.file, c)
            }
            return c
          },
        })
      }
    }
    const llm: Array<[number, number]> = [[4096, 4096], [11008, 4096], [4096, 11008]]
    for (const [m, k] of llm) {
      for (const s of llmLevels) {
        let c: CsrMatrix | undefined
        for (const n of llmNs) problems.push({name: `llm ${m}x${k} s=${s}`, n, csr: () => (c ??= randomLayer(m, k, s, m + k + Math.round(s * 100)))})
      }
    }
    const t0 = Date.now()
    for (const p of problems) {
      const csr = p.csr()
      const nnz = csr.columnIndices.length
      for (const dtype of dtypes) {
        const list = spmmVariants({m: csr.rows, k: csr.cols, n: p.n, nnz, dtype})
        const a: CsrMatrix = {...csr, values: null}
        const bf = uniform(csr.cols * p.n, 7)
        const b = {rows: csr.cols, cols: p.n, dtype, data: dtype === 'f32' ? bf : float32ToHalf(bf, dtype)}
        // About 2 ms of launches per variant (at least 5, at most 200).
        const probe = await timeSpmmVariants(a, b, [list.selected], {reps: 5})
        const reps = Math.max(5, Math.min(200, Math.round(2 / Math.max(probe[0].ms, 1e-3))))
        const times = await timeSpmmVariants(a, b, list.variants, {reps})
        const ms = Object.fromEntries(times.map((t) => [t.variant, t.ms]))
        const best = times.reduce((x, y) => (y.ms < x.ms ? y : x))
        lines.push(JSON.stringify({name: p.name, m: csr.rows, k: csr.cols, n: p.n, nnz, dtype, selected: list.selected, selectedMs: ms[list.selected], best: best.variant, bestMs: best.ms, reps, ms}))
      }
    }
    writeFileSync(out!, lines.join('\n') + '\n')
    // Summary: geometric mean of selected / best, bounded by the fitted figure.
    const ratios = lines.map((l) => JSON.parse(l) as {selectedMs: number; bestMs: number; dtype: string})
    const geomeans: Record<string, number> = {}
    for (const dtype of dtypes) {
      const r = ratios.filter((x) => x.dtype === dtype).map((x) => x.selectedMs / x.bestMs)
      const g = Math.exp(r.reduce((s, x) => s + Math.log(x), 0) / Math.max(1, r.length))
      geomeans[dtype] = g
      console.log(`    ${dtype}: ${r.length} problems, selected / best (geomean) ${g.toFixed(3)}, worst ${Math.max(...r).toFixed(2)}`)
    }
    console.log(`    ${lines.length} rows in ${((Date.now() - t0) / 1000).toFixed(0)} s`)
    expect(lines.length).to.be.greaterThan(0)
    // NaN (the selected variant not timed) fails too.
    for (const [dtype, g] of Object.entries(geomeans)) {
      expect(g, `${dtype}: selected / best (geomean), fitted ${FITTED_SELECTED_OVER_BEST}`).to.be.at.most(FITTED_SELECTED_OVER_BEST * MARGIN)
    }
  })
})
