/**
 * scripts/gpu/verify-forced.sh without a GPU machine: the shared loop of verify-s24g.sh and
 * stream24-heldout.sh run against a stub `node` whose `verify --json` report depends on the
 * variant forced, so the test checks the command each variant runs, the line it prints, the
 * failures' count and the exit status. What verify finds needs the GPU machine.
 */
import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import {chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'
import {requirePython3} from '../helpers/python.js'

// The stub: logs its arguments and the forced variant; `good*` passes 4 cases, `bad*` fails 1 of
// 4 (exit 1, as verify does), `crash*` writes no report and exits 3.
const NODE_STUB = `#!/usr/bin/env bash
echo "$SPARSE_SPMM_VARIANT $*" >> "$CALLS"
case "$SPARSE_SPMM_VARIANT" in
  good*) echo '{"passed": 4, "failed": 0}' ;;
  bad*) echo '{"passed": 3, "failed": 1}'; exit 1 ;;
  *) echo "sparse: error: no such variant" >&2; exit 3 ;;
esac
`

describe('scripts/gpu/verify-forced.sh (stubbed verify)', function () {
  this.timeout(30_000)
  let base = ''
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'verify-forced-'))
    cpSync(join(ROOT, 'scripts', 'gpu', 'verify-forced.sh'), join(base, 'scripts', 'gpu', 'verify-forced.sh'))
    mkdirSync(join(base, 'bin'))
    mkdirSync(join(base, 'w'))
    writeFileSync(join(base, 'bin', 'node'), NODE_STUB)
    chmodSync(join(base, 'bin', 'node'), 0o755)
  })
  afterEach(() => rmSync(base, {recursive: true, force: true}))

  function run(args: string[], env: NodeJS.ProcessEnv = {W: join(base, 'w')}) {
    const r = spawnSync('bash', ['scripts/gpu/verify-forced.sh', ...args], {
      cwd: base,
      encoding: 'utf8',
      env: {...process.env, PATH: `${join(base, 'bin')}:${process.env.PATH}`, CALLS: join(base, 'calls.txt'), ...env},
    })
    return {code: r.status, stdout: r.stdout, stderr: r.stderr}
  }

  it('forces each variant in turn on every file, f16 and bf16 at the N given, and counts no failure when all pass', function () {
    requirePython3(this)
    const r = run(['128,136', 'good_a good_b', 'x.npy', 'y.npy'])
    expect(r.stdout).to.equal('good_a rc=0 4 passed 0 failed\ngood_b rc=0 4 passed 0 failed\nfailures: 0\n')
    expect(r.code).to.equal(0)
    const calls = readFileSync(join(base, 'calls.txt'), 'utf8').trim().split('\n')
    expect(calls).to.deep.equal(['good_a', 'good_b'].map((v) => `${v} bin/run.js verify x.npy y.npy --op spmm --dtype f16,bf16 --n 128,136 --device cuda --json`))
    expect(JSON.parse(readFileSync(join(base, 'w', 'verify_good_b.json'), 'utf8'))).to.deep.equal({passed: 4, failed: 0})
  })

  it('counts a variant that fails a case or writes no report, runs the rest, and exits 1', function () {
    requirePython3(this)
    const r = run(['8', 'bad_a crash_b good_c', 'x.npy'])
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).to.equal('bad_a rc=1 3 passed 1 failed')
    expect(lines[1]).to.equal('crash_b rc=3 no report: sparse: error: no such variant')
    expect(lines.slice(2)).to.deep.equal(['good_c rc=0 4 passed 0 failed', 'failures: 2'])
    expect(r.code).to.equal(1)
  })

  it('refuses too few arguments (2) and a missing W', () => {
    expect(run(['8', 'good_a']).code).to.equal(2)
    const r = run(['8', 'good_a', 'x.npy'], {W: ''})
    expect(r.code).to.not.equal(0)
    expect(r.stderr).to.match(/W: set by run\.sh/)
  })
})
