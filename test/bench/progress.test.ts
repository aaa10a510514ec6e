/**
 * `sparse bench`'s progress: what the line says (cases done, total, time left), and the one
 * predicate that decides whether any spinner is drawn (interactive stderr with a width, never
 * under --json).
 */
import {expect} from 'chai'

import {formatDuration, ProgressClock} from '../../src/bench/progress.js'
import {spinnerAllowed} from '../../src/cli/base-command.js'
import {runCli} from '../helpers/cli.js'

describe('bench progress', () => {
  it('says cases done, total and the time left from the mean time per case', () => {
    let t = 1000
    const clock = new ProgressClock(() => t)
    expect(clock.line({done: 0, total: 4, label: 'a.smtx spmm f32 n=8'}, 8)).to.equal('[........] 0/4 cases  a.smtx spmm f32 n=8')
    t += 3000 // the first case took 3 s: 3 more to go, about 9 s
    expect(clock.line({done: 1, total: 4, label: 'b'}, 8)).to.equal('[##......] 1/4 cases, 9 s left  b')
    t += 1000 // two cases in 4 s: 2 s each, 2 left
    expect(clock.line({done: 2, total: 4, label: 'c'}, 8)).to.equal('[####....] 2/4 cases, 4 s left  c')
    expect(new ProgressClock(() => 0).line({done: 0, total: 1, label: 'x'}, 4)).to.equal('[....] 0/1 case  x')
  })

  it('formats durations in s, min and h', () => {
    expect(formatDuration(400)).to.equal('0 s')
    expect(formatDuration(59_400)).to.equal('59 s')
    expect(formatDuration(185_000)).to.equal('3 min 5 s')
    expect(formatDuration(3_720_000)).to.equal('1 h 02 min')
  })

  it('draws only on a terminal stderr with a width, and never under --json', () => {
    expect(spinnerAllowed(false, {isTTY: true, columns: 80})).to.equal(true)
    expect(spinnerAllowed(true, {isTTY: true, columns: 80})).to.equal(false) // --json
    expect(spinnerAllowed(false, {isTTY: false, columns: 80})).to.equal(false) // piped
    expect(spinnerAllowed(false, {})).to.equal(false)
    expect(spinnerAllowed(false, {isTTY: true, columns: 0})).to.equal(false) // ora would loop forever
  })

  it('writes no progress to a piped stderr', async function () {
    this.timeout(120_000)
    const r = await runCli(['bench', 'fixtures/dlmc-rn50-0.98-initial_conv.smtx', '--n', '8,16', '--device', 'cpu', '--reps', '3', '--min-ms', '1', '--warmup', '1'])
    expect(r.code, r.stderr).to.equal(0)
    // Progress lines only: the notes and warnings printed after the run are not progress.
    const progress = r.stderr.split('\n').filter((l) => !/^(note|warning): /.test(l))
    expect(progress.join('\n')).to.not.match(/cases|preparing|\u001b\[/)
  })
})
