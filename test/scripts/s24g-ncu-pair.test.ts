/**
 * scripts/gpu/s24g-ncu-pair.py on synthetic ncu details pages (the lines it reads, in ncu's
 * layout): the pipes' busy share of the SM active cycles, their work in cycles, the commonest
 * stalls, the ratios, and the refusal of a page without a figure. What ncu measures needs the
 * GPU machine (s24g-ncu.sh).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'
import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

// A details page's lines as ncu prints them (the metric tables, then the sampled stalls: all
// samples first, then the not-issued ones, which the script leaves out).
function page(elapsed: string, active: string, tensor: string, shared: string, stalls: Record<string, number>): string {
  const lines = [
    '  GemmKernel (128, 1, 1)x(384, 1, 1), Context 1, Stream 13, Device 0, CC 9.0',
    '    Section: GPU Speed Of Light Throughput',
    `    Elapsed Cycles                cycle       ${elapsed}`,
    `    SM Active Cycles              cycle    ${active}`,
    `    SM: Pipe Tensor Cycles Active                                                       %        ${tensor}`,
    `    L1: Data Pipe Lsu Wavefronts                                       %        ${shared}`,
  ]
  for (const [k, v] of Object.entries(stalls)) lines.push(`    smsp__pcsamp_warps_issue_stalled_${k}                 warp        ${v.toLocaleString('en-US')}`)
  for (const k of Object.keys(stalls)) lines.push(`    smsp__pcsamp_warps_issue_stalled_${k}_not_issued      warp        99,999`)
  return lines.join('\n') + '\n'
}

describe('scripts/gpu/s24g-ncu-pair.py (synthetic details pages)', function () {
  this.timeout(30_000)
  const tmp = tempDirs('ncu-pair-')

  function run(ours: string, theirs: string) {
    const dir = tmp()
    writeFileSync(join(dir, 'ours.txt'), ours)
    writeFileSync(join(dir, 'theirs.txt'), theirs)
    const r = spawnSync('python3', [join(ROOT, 'scripts', 'gpu', 's24g-ncu-pair.py'), join(dir, 'ours.txt'), join(dir, 'theirs.txt')], {encoding: 'utf8'})
    return {code: r.status, stdout: r.stdout, stderr: r.stderr}
  }

  it('puts the same work in more cycles down to idle pipes: busy share of the active cycles, work, stalls, ratios', function () {
    requirePython3(this)
    // Ours: 50 % of 64,000 cycles = 32,000 tensor cycles in 56,000 active (57.1 %); theirs: the
    // same 32,000 in 58,000 elapsed / 50,000 active (64.0 %).
    const r = run(
      page('64,000', '56,000.00', '50.00', '60.00', {long_scoreboard: 600, wait: 300, barrier: 100}),
      page('58,000', '50,000.00', '55.172', '66.207', {barrier: 500, long_scoreboard: 400, wait: 100}),
    )
    expect(r.code, r.stderr).to.equal(0)
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| ours') || l.startsWith('| theirs'))
    expect(rows).to.have.length(2)
    const ours = rows[0].split('|').map((c) => c.trim())
    expect(ours.slice(1, 10)).to.deep.equal(['ours', '64000', '56000', '50.0 %', '57.1 %', '32000', '60.0 %', '68.6 %', '38400'])
    expect(ours[10]).to.equal('long_scoreboard 60 %, wait 30 %, barrier 10 %')
    const theirs = rows[1].split('|').map((c) => c.trim())
    expect(theirs.slice(4, 7)).to.deep.equal(['55.2 %', '64.0 %', '32000'])
    expect(theirs[10]).to.equal('barrier 50 %, long_scoreboard 40 %, wait 10 %')
    expect(r.stdout).to.contain('ours / theirs: elapsed 1.103, SM active 1.120, tensor work 1.000, L1 work 1.000')
  })

  it('refuses a page without one of the figures, naming it (exit 1)', function () {
    requirePython3(this)
    const good = page('64,000', '56,000', '50', '60', {wait: 1})
    const r = run(good, good.replace(/^.*SM Active Cycles.*$/m, ''))
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/theirs\.txt: no active figure/)
    expect(run(good, good).code).to.equal(0)
  })
})
