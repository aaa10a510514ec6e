/**
 * scripts/gpu/probe/gemm_ab.py (an A/B of GEMM workbench builds from their `gemm_probe time`
 * outputs) on synthetic outputs whose ratios are known: the base runs' spread against their
 * geometric mean, a build's time over it in events and graphs (only on the cells it shares with
 * every base run), one variant over another in the base runs, and the refusals (no base, a file
 * without `time` lines, a pair no cell of which both ran). The times themselves need the GPU
 * (docs/gpu-runs.md, the A/B recipe).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'
import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

const HEADER = 'variant               M      K     N      ev_us  graph_us TFLOP/s  cublas_ev cublas_gr  ratio_e ratio_g'
const CELLS: [string, number, number, number][] = [
  ['f16_a', 4096, 4096, 256],
  ['f16_a', 4096, 4096, 1024],
  ['f16_b', 4096, 4096, 256],
  ['f16_b', 4096, 4096, 1024],
]
const BASE_US = [30, 40, 33, 48]

/** One `time` output: the cells' events and graph times scaled by `ev` and `gr` (per cell, or one factor). */
function timeOutput(ev: number | number[], gr: number | number[], cells = CELLS): string {
  const at = (f: number | number[], i: number) => (Array.isArray(f) ? f[i] : f)
  const rows = cells.map((cell, i) => {
    const [v, m, k, n] = cell
    const us = BASE_US[CELLS.indexOf(cell)]
    const e = us * at(ev, i), g = us * at(gr, i)
    return `${v}   ${m}   ${k}  ${n}      ${e.toFixed(4)}     ${g.toFixed(4)}   500.0       40.0      40.0    1.000   1.000`
  })
  return ['M  4100 K   136: pair stream 773728 bytes (a line the summary ignores)', HEADER, ...rows].join('\n') + '\n'
}

describe('scripts/gpu/probe/gemm_ab.py (synthetic `time` outputs)', function () {
  this.timeout(30_000)
  const tmp = tempDirs('gemm-ab-')

  function run(files: Record<string, string>, args: (dir: string) => string[]) {
    const dir = tmp()
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    const r = spawnSync('python3', [join(ROOT, 'scripts', 'gpu', 'probe', 'gemm_ab.py'), ...args(dir)], {encoding: 'utf8'})
    return {code: r.status, stdout: r.stdout, stderr: r.stderr}
  }

  it('gives each build over the base runs\' geometric mean, the bases\' spread, and one variant over another', function () {
    requirePython3(this)
    // Base runs at 1.0x and 1.21x (their mean 1.1x): each run 1/1.1 and 1.1 of it, every cell 10 % off.
    // The build: 0.99x in events (0.9 of the bases' mean) on f16_a, 1.1x on f16_b; graphs 1.1x everywhere (1.0).
    const r = run(
      {
        'b1.txt': timeOutput(1, 1),
        'b2.txt': timeOutput(1.21, 1.21),
        'x.txt': timeOutput([0.99, 0.99, 1.1, 1.1], 1.1),
      },
      (d) => ['--base', join(d, 'b1.txt'), '--base', join(d, 'b2.txt'), `early=${join(d, 'x.txt')}`, '--pair', 'f16_b:f16_a'],
    )
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.include('base: 2 run(s), 4 cells')
    expect(r.stdout).to.include('  f16_a: runs / their mean 0.909 1.100; largest cell 10.0 %')
    expect(r.stdout).to.include('early / base (events, graphs; cells min-max):')
    expect(r.stdout).to.include('  f16_a: 0.900 (graphs 1.000; 0.900-0.900, 2 cells)')
    expect(r.stdout).to.include('  f16_b: 1.000 (graphs 1.000; 1.000-1.000, 2 cells)')
    // f16_b over f16_a cell by cell: 33 / 30 = 1.1 and 48 / 40 = 1.2 (both scaled by 1.1).
    expect(r.stdout).to.include('  M 4096 K 4096 N 256: 36.3 / 33.0 us = 1.100')
    expect(r.stdout).to.include('  M 4096 K 4096 N 1024: 52.8 / 44.0 us = 1.200')
    expect(r.stdout).to.include(`  geomean ${Math.sqrt(1.1 * 1.2).toFixed(3)} (1.100-1.200)`)
  })

  it('weighs a build only on the cells it shares with every base run', function () {
    requirePython3(this)
    // The second base run lacks f16_a at N = 1024: the build's 0.5x there is not counted. The
    // build lacks f16_b at N = 1024: its f16_b figure is the one cell it ran.
    const r = run(
      {
        'b1.txt': timeOutput(1, 1),
        'b2.txt': timeOutput(1, 1, CELLS.slice(0, 1).concat(CELLS.slice(2))),
        'x.txt': timeOutput([0.8, 0.5, 0.7], 1, CELLS.slice(0, 3)),
      },
      (d) => ['--base', join(d, 'b1.txt'), '--base', join(d, 'b2.txt'), `x=${join(d, 'x.txt')}`],
    )
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.include('base: 2 run(s), 3 cells')
    expect(r.stdout).to.include('  f16_a: 0.800 (graphs 1.000; 0.800-0.800, 1 cells)')
    expect(r.stdout).to.include('  f16_b: 0.700 (graphs 1.000; 0.700-0.700, 1 cells)')
  })

  it('refuses bad usage and files without `time` lines in one line, exit 2', function () {
    requirePython3(this)
    const cases: [Record<string, string>, (d: string) => string[], RegExp][] = [
      [{}, () => [], /no --base run/],
      [{'b.txt': timeOutput(1, 1)}, (d) => [`x=${join(d, 'b.txt')}`], /no --base run/],
      [{'e.txt': 'nothing here\n'}, (d) => ['--base', join(d, 'e.txt')], /e\.txt: no `time` lines/],
      [{}, (d) => ['--base', join(d, 'missing.txt')], /missing\.txt: No such file/],
      [{'b.txt': timeOutput(1, 1)}, (d) => ['--base', join(d, 'b.txt'), '--pair', 'f16_a'], /--pair f16_a: A:B/],
      [{'b.txt': timeOutput(1, 1)}, (d) => ['--base', join(d, 'b.txt'), '--pair', 'f16_a:f16_zz'], /no cell both ran/],
      [{'b.txt': timeOutput(1, 1)}, (d) => ['--base', join(d, 'b.txt'), 'loose'], /loose: NAME=FILE/],
      [{'b.txt': timeOutput(1, 1)}, (d) => ['--base'], /--base needs a value/],
    ]
    for (const [files, args, want] of cases) {
      const r = run(files, args)
      expect(r.code, r.stdout).to.equal(2)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
      expect(r.stderr).to.match(want)
    }
  })
})
