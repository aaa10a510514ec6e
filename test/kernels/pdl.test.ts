// Programmatic dependent launch of the streaming engine's kernels (SPARSE_PDL; the launch in
// native/cuda/spmm/stream_engine_host.h, LaunchWithPdl). With 'graph' a launch captured into a
// CUDA graph carries the attribute, and its producer requests the ring's first stages of weights
// before waiting for the kernel before it (Args::a_first); 'graph' is the default (v40), 'on'
// launches every kernel so, 'off' none. (The GEMM engine's kernels launch without it: their hooks
// are the workbench's.) The kernels must still wait for that kernel before they read B or touch C,
// the workspace or the counters: `verify` (float64 reference, outputs poisoned with NaN) with
// SPARSE_PDL=on checks the weights-first order on every streaming variant, and `bench` checks the
// output of the CUDA graph's launches (back to back, each able to start under the one before) with
// 'graph' and 'off'. Also the 2:4 kernels with a shorter ring in use (SPARSE_S24E_RING, v42), and
// with B padded to its box by a kernel launched before them (SPARSE_S24E_PAD, v43): under PDL the
// engine's producers stream A while that kernel runs, and must wait for it before reading B.
// GPU only (compute capability 9.0: the streaming engine is sm_90a code).
import {expect} from 'chai'
import {join} from 'node:path'

import {writeNpy} from '../../src/formats/index.js'
import {cudaInfo} from '../../src/kernels/index.js'
import {csrToDense} from '../../src/sparse/dense-to-csr.js'
import {createRng, randomValues} from '../../src/sparse/random.js'
import type {CsrMatrix} from '../../src/types.js'
import type {VerifyCase} from '../../src/verify/index.js'
import {runCli} from '../helpers/cli.js'
import {tempDirs} from '../helpers/temp.js'
import {randomPattern, twoFourPattern} from './helpers.js'

/** `pattern` with seeded standard normals, as a dense f16 tensor (what writeNpy writes). */
const withValues = (pattern: CsrMatrix, seed: number) =>
  csrToDense({name: 'w', shape: [pattern.rows, pattern.cols], csr: {...pattern, values: randomValues(pattern.columnIndices.length, 'f16', seed), dtype: 'f16'}})
/** Exactly 2:4: two of each group of four columns kept, chosen at random. */
const twoFour = (rows: number, cols: number, seed: number) => {
  const rng = createRng(seed)
  return twoFourPattern(rows, cols, () => rng.nextUint32(), () => 2)
}
/** `density` of the weights nonzero, at random. */
const ofDensity = (rows: number, cols: number, seed: number, density: number) => randomPattern(rows, cols, Math.round(rows * cols * density), seed)

describe('the streaming engine launched with programmatic dependent launch (SPARSE_PDL, GPU)', function () {
  this.timeout(600_000)
  const temp = tempDirs('sparse-pdl-')
  let dir: string
  const file = (name: string) => join(dir, name)

  before(async function () {
    if (cudaInfo().computeCapability !== '9.0') this.skip() // the streaming engine runs on compute capability 9.0 only
    dir = temp()
    // 2:4: K ragged against the 256-wide K stage; 64 K stages, more than any ring holds (slots refilled).
    await writeNpy(withValues(twoFour(300, 1000, 1), 11), file('t24a.npy'))
    await writeNpy(withValues(twoFour(100, 16384, 2), 12), file('t24b.npy'))
    // Unstructured: 50 % (the bitmap stream) and 80 % sparse (the pair stream), M and K ragged.
    await writeNpy(withValues(ofDensity(333, 1030, 3, 0.5), 13), file('u50.npy'))
    await writeNpy(withValues(ofDensity(333, 1030, 4, 0.2), 14), file('u80.npy'))
  })

  /** `sparse verify` of `inputs` at `ns` (f16 and bf16) with SPARSE_PDL=on (or `extra`'s) and `variant` forced: its cases. */
  async function verifyOn(variant: string, inputs: string[], ns: number[], extra: Record<string, string> = {}): Promise<VerifyCase[]> {
    const env = {SPARSE_PDL: 'on', SPARSE_SPMM_VARIANT: variant, ...extra}
    const r = await runCli(['verify', ...inputs.map(file), '--device', 'cuda', '--op', 'spmm', '--dtype', 'f16,bf16', '--n', ns.join(','), '--json'], {env, timeoutMs: 300_000})
    expect(r.code, r.stderr).to.equal(0)
    return (JSON.parse(r.stdout) as {cases: VerifyCase[]}).cases
  }

  const runs: Array<[string, string[], number[]]> = [
    ['s24e_w8_k256', ['t24a.npy', 't24b.npy'], [1, 8, 13, 64]],
    ['s24e_w4_k256', ['t24a.npy', 't24b.npy'], [1, 8, 13, 64]],
    ['ube_w8', ['u50.npy'], [1, 8, 29]],
    ['ube_w4', ['u50.npy'], [40, 64]],
    ['ube_p8', ['u80.npy'], [1, 8, 64]],
  ]
  for (const [variant, inputs, ns] of runs) {
    it(`SPARSE_PDL=on: ${variant} (forced) passes verify on ${inputs.join(', ')} at N = ${ns.join(', ')}, f16 and bf16`, async () => {
      const cases = await verifyOn(variant, inputs, ns)
      expect(cases).to.have.length(inputs.length * ns.length * 2)
      for (const c of cases) {
        const what = `${variant} N=${c.n} ${c.dtype}`
        expect(c.variant, `${what}: the forced variant ran`).to.equal(variant)
        expect(c.variantSource, what).to.equal('forced')
        expect(c.passed, `${what}: relative error ${c.relativeError}`).to.equal(true)
      }
    })
  }

  // The 2:4 kernels under their A/B switches, forced, on t24a and t24b, with the weights-first
  // order of PDL ('on') and without ('off'), whose first fills differ:
  // - SPARSE_S24E_RING=2 (Args::ring, v42): two of their ring slots in use (w8: of 3, w4: of 4 to
  //   8), each slot refilled many times on t24b's 64 K stages;
  // - SPARSE_S24E_PAD (v43; 'auto' the default since v44): 'all' pads B at every N 9-63 narrower
  //   than its box (to 16, 32 or 64 columns: the copy kernel, then the engine waiting on it under
  //   PDL); 'auto' N 33-63 not a multiple of 8 and, on w4, N 17-31 not one (13 reads B's rows as
  //   they are); 'off' reads B's rows as they are at every N. The copy kernel is launched with PDL
  //   too (SPARSE_S24E_PAD_PDL, 'on' by default since v45): it lets the engine launch at once,
  //   then waits for the kernel before it; 'off' launches it plainly.
  // - SPARSE_S24E_L2_AHEAD=1 and 2 (Args::l2_ahead, v46): stages asked into L2 ahead of the ring,
  //   forced: since v49 the default keeps none on a GPU of 4000 GB/s or more (the H200), so that
  //   path runs here on any GPU (hints: the sums must not change, and no copy may hang).
  // - SPARSE_S24E_PLAN=streamk (v49): every launch stream-K over the blocks that fit at once, so
  //   that t24a's and t24b's few row blocks are cut between blocks and summed through the fixup.
  const switched: Array<[Record<string, string>, number[]]> = [
    [{SPARSE_S24E_RING: '2', SPARSE_PDL: 'on'}, [1, 8, 13, 40, 64]],
    [{SPARSE_S24E_RING: '2', SPARSE_PDL: 'off'}, [1, 8, 13, 40, 64]],
    [{SPARSE_S24E_PAD: 'all', SPARSE_PDL: 'on'}, [9, 13, 24, 29, 40, 48, 57, 63]],
    [{SPARSE_S24E_PAD: 'all', SPARSE_PDL: 'off'}, [9, 17, 40, 63]],
    [{SPARSE_S24E_PAD: 'auto', SPARSE_PDL: 'on'}, [13, 29, 33, 63]],
    [{SPARSE_S24E_PAD: 'off', SPARSE_PDL: 'on'}, [13, 29, 33, 63]],
    [{SPARSE_S24E_PAD: 'all', SPARSE_S24E_PAD_PDL: 'off', SPARSE_PDL: 'on'}, [13, 29, 40, 63]],
    [{SPARSE_S24E_L2_AHEAD: '1', SPARSE_PDL: 'on'}, [1, 8, 16, 40, 64]],
    [{SPARSE_S24E_L2_AHEAD: '2', SPARSE_PDL: 'off'}, [1, 8, 40, 64]],
    [{SPARSE_S24E_PLAN: 'streamk', SPARSE_PDL: 'on'}, [1, 8, 13, 40, 64]],
  ]
  for (const variant of ['s24e_w8_k256', 's24e_w4_k256']) {
    for (const [extra, ns] of switched) {
      const settings = Object.entries(extra).map(([name, value]) => `${name}=${value}`).join(', ')
      it(`${settings}: ${variant} (forced) passes verify on t24a, t24b at N = ${ns.join(', ')}`, async () => {
        const cases = await verifyOn(variant, ['t24a.npy', 't24b.npy'], ns, extra)
        expect(cases).to.have.length(2 * ns.length * 2)
        for (const c of cases) {
          expect(c.variant, `N=${c.n} ${c.dtype}`).to.equal(variant)
          expect(c.passed, `N=${c.n} ${c.dtype}: relative error ${c.relativeError}`).to.equal(true)
        }
      })
    }
  }

  // The CUDA graph of bench's time per launch (a median below 0.05 ms) is where 'graph' turns it
  // on (the default); the harness checks the output after the graph ran against cuBLAS's. bench
  // prunes a dense file first: the pruning named keeps each file's own nonzeros. t24a runs the
  // selection (s24e_* at N = 16, 63 and 64: at N <= 8 a matrix this small goes to the older 2:4
  // kernel; at N = 63 (SPARSE_S24E_PAD=auto, the default) the graph holds B's copy kernel before
  // each launch, v43, itself under PDL where the engine is, v45; the third run launches it
  // plainly, SPARSE_S24E_PAD_PDL=off; s24g_* at 256); u50 forces ube_w8 (the selection's pick at
  // N = 256).
  async function benchCases(pdl: string, input: string, prune: string[], ns: string, variant?: string, padPdl?: string) {
    const env = {SPARSE_PDL: pdl, SPARSE_SPMM_VARIANT: variant, SPARSE_S24E_PAD_PDL: padPdl}
    const r = await runCli(['bench', file(input), ...prune, '--device', 'cuda', '--op', 'spmm', '--dtype', 'f16', '--n', ns, '--baseline', 'dense', '--json'], {env, timeoutMs: 300_000})
    expect(r.code, `${r.stdout.slice(0, 400)} ${r.stderr}`).to.equal(0)
    const report = JSON.parse(r.stdout)
    expect(report.settings.pdl).to.equal(pdl)
    expect(report.cases).to.have.length(ns.split(',').length)
    return report.cases
  }

  const graphRuns: Array<[string, string | undefined]> = [['graph', undefined], ['off', undefined], ['graph', 'off']]
  for (const [pdl, padPdl] of graphRuns) {
    const title = padPdl ? `SPARSE_PDL=${pdl}, SPARSE_S24E_PAD_PDL=${padPdl}` : `SPARSE_PDL=${pdl}`
    it(`bench: the CUDA graph's launches give cuBLAS's product (${title}), and the report says how they launched`, async () => {
      const cases = [
        ...(await benchCases(pdl, 't24a.npy', ['--pattern', '2:4'], '16,63,64,256', undefined, padPdl)),
        ...(await benchCases(pdl, 'u50.npy', ['-s', '0.5'], '8,29,256', 'ube_w8')),
      ]
      for (const c of cases) {
        const what = `${c.file} N=${c.n}`
        expect(c.status, what).to.equal('ok')
        if (c.file.endsWith('t24a.npy')) expect(c.variant, what).to.match(c.n <= 64 ? /^s24e_/ : /^s24g_/)
        else if (c.n <= 64) expect(c.variant, what).to.equal('ube_w8')
        expect(c.graphMsPerLaunch, `${what}: a graph figure`).to.be.a('number').and.above(0)
        expect(c.check.relErr, what).to.be.a('number').and.at.most(1e-2)
      }
    })
  }
})
