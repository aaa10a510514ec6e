/**
 * scripts/gpu/sass-stalls.py on a synthetic ncu source page (the CSV layout of `ncu --page source
 * --print-source sass --csv`): the samples by class (a branch on a try_wait's predicate is part
 * of the mbarrier wait, one on a predicate written since is not), the top instructions with their
 * stall reasons, the instructions a GMMA, and the refusal of a file without a source table. What
 * ncu samples needs the GPU machine (s24g-ncu.sh with NCU_SOURCE=1).
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'
import {requirePython3} from '../helpers/python.js'
import {tempDirs} from '../helpers/temp.js'

const HEAD = ['Address', 'Source', 'Warp Stall Sampling (All Samples)', 'Warp Stall Sampling (Not-issued Samples)', 'Instructions Executed',
  'stall_long_sb', 'stall_barrier', 'stall_wait', 'stall_long_sb (Not Issued)']

// [SASS, samples, executions, long_sb, barrier, wait]
type Row = [string, number, number, number, number, number]

function page(rows: Row[]): string {
  const q = (s: string | number) => `"${typeof s === 'number' ? s.toLocaleString('en-US') : s}"`
  const lines = [`${q('Kernel Name')},${q('void GemmKernel<1>(Params)')},`, HEAD.map(q).join(',')]
  rows.forEach(([sass, samples, ex, lsb, bar, wait], i) =>
    lines.push([`0x7f00000${(i * 16).toString(16).padStart(4, '0')}`, sass, samples, samples, ex, lsb, bar, wait, lsb].map(q).join(',')))
  return lines.join('\n') + '\n'
}

describe('scripts/gpu/sass-stalls.py (a synthetic source page)', function () {
  this.timeout(30_000)
  const tmp = tempDirs('sass-stalls-')

  function run(text: string, ...args: string[]) {
    const file = join(tmp(), 'k.sass.csv')
    writeFileSync(file, text)
    const r = spawnSync('python3', [join(ROOT, 'scripts', 'gpu', 'sass-stalls.py'), file, ...args], {encoding: 'utf8'})
    return {code: r.status, stdout: r.stdout, stderr: r.stderr}
  }

  it('sums the samples by what the instruction does and lists the top ones', function () {
    requirePython3(this)
    const r = run(page([
      ['SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R9+URZ+0x37400], R12', 5, 1000, 0, 0, 5],
      ['IMAD.SHL.U32 R10, R2, 0x2, RZ', 5, 1000, 0, 0, 5],
      ['@!P0  BRA 0x7f0000001000', 400, 1000, 400, 0, 0], // P0 from the try_wait: the wait
      ['WARPGROUP.ARRIVE', 10, 1000, 0, 0, 10],
      ['HGMMA.SP.64x256x32.F32 R24, gdesc[UR4].tnspB, R24, R15', 30, 2000, 0, 0, 30],
      ['WARPGROUP.DEPBAR.LE gsb0, 0x1', 250, 1000, 0, 240, 10],
      ['ISETP.GE.AND P0, PT, R8, R11, PT', 50, 1000, 0, 0, 50],
      ['@!P0  BRA 0x7f0000000000', 150, 1000, 0, 0, 150], // P0 rewritten by ISETP: not a wait
      ['@!P0  NANOSLEEP.SYNCS 0x989680', 100, 10, 100, 0, 0],
    ]), '--top', '3')
    expect(r.code, r.stderr).to.equal(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).to.match(/: 1000 samples, 9010 instructions executed \(4\.5 a GMMA\)$/)
    // 5 + 400 + 100 at the mbarrier; 250 at the DEPBAR; 10 + 30 issuing; 5 + 50 + 150 other.
    expect(lines[1].trim()).to.equal('mbarrier wait 50.5 %, wgmma wait 25.0 %, wgmma issue 4.0 %, other 20.5 %')
    expect(lines).to.have.length(5)
    expect(lines[2]).to.match(/^\s+40\.0 %\s+mbarrier wait\s+@!P0\s+BRA 0x7f0000001000\s+x1000\s+long_sb 400$/)
    expect(lines[3]).to.match(/^\s+25\.0 %\s+wgmma wait\s+WARPGROUP\.DEPBAR\.LE gsb0, 0x1\s+x1000\s+barrier 240, wait 10$/)
    expect(lines[4]).to.match(/^\s+15\.0 %\s+other\s+@!P0\s+BRA 0x7f0000000000\s+x1000\s+wait 150$/)
  })

  it('refuses a file without a source table (exit 1), and wants a file (exit 2)', function () {
    requirePython3(this)
    const r = run('==ERROR== no source page\n')
    expect(r.code).to.equal(1)
    expect(r.stdout).to.match(/k\.sass\.csv: no source table/)
    const none = spawnSync('python3', [join(ROOT, 'scripts', 'gpu', 'sass-stalls.py')], {encoding: 'utf8'})
    expect(none.status).to.equal(2)
  })
})
