// The commands in a real terminal: stdout and stderr both a pseudo-terminal (util-linux
// `script`), colour on. The tool's own styling must reach the terminal as escape codes, never
// as the text "\u001b[32m" (issue 22: bench printed its colour codes as text).
import {expect} from 'chai'
import {execFileSync, spawnSync} from 'node:child_process'
import {copyFileSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {BIN, ROOT} from '../helpers/cli.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx'
const FAST = ['--reps', '3', '--min-ms', '1', '--warmup', '1']

function hasScript(): boolean {
  try {
    execFileSync('script', ['--version'], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

/** Runs the CLI under `script -qec` (a pseudo-terminal for stdin, stdout and stderr); returns what the terminal got. */
function inTerminal(args: string[]): {output: string; code: number | null} {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`
  const command = [process.execPath, BIN, ...args].map(quote).join(' ')
  const env: NodeJS.ProcessEnv = {...process.env, TERM: 'xterm-256color', COLUMNS: '200'}
  delete env.NO_COLOR
  delete env.FORCE_COLOR
  // A user's terminal, not a CI runner's: chalk (supports-color) turns colour off when these
  // are set, whatever the terminal (CI runs this suite with CI=true).
  for (const v of ['CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'RUN_ID']) delete env[v]
  const r = spawnSync('script', ['-qec', command, '/dev/null'], {cwd: ROOT, env, encoding: 'utf8', timeout: 120_000})
  return {output: r.stdout, code: r.status}
}

describe('colour in a terminal (pseudo-terminal under script)', function () {
  this.timeout(180_000)
  let dir = ''
  before(function () {
    if (!hasScript()) this.skip() // util-linux `script` is not installed: no pseudo-terminal to test in
    dir = mkdtempSync(join(tmpdir(), 'terminal-'))
  })
  after(() => {
    if (dir) rmSync(dir, {recursive: true, force: true})
  })

  const cases: Array<[string, () => string[]]> = [
    ['bench', () => ['bench', SMTX, '--device', 'cpu', '--n', '8', '--op', 'spmm', '--dtype', 'f32', ...FAST]],
    ['prune', () => ['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.5', '-o', join(dir, 'pruned')]],
    ['info', () => ['info', 'fixtures/tiny-mlp.safetensors']],
    ['verify', () => ['verify', SMTX, '--device', 'cpu', '--op', 'spmm', '--dtype', 'f32', '--n', '8']],
  ]
  for (const [name, args] of cases) {
    it(`${name}: no escape code printed as text`, () => {
      const {output, code} = inTerminal(args())
      expect(code, output).to.equal(0)
      expect(output, output).to.not.include('\\u001b')
      expect(output, output).to.not.include('\\x1b')
    })
  }

  it('bench: its colour reaches the terminal as escape codes', () => {
    const {output, code} = inTerminal(cases[0][1]())
    expect(code, output).to.equal(0)
    // eslint-disable-next-line no-control-regex
    expect(output).to.match(/\u001b\[\d+m/)
  })

  it('a file name with an escape sequence is still escaped in a terminal', () => {
    const {output} = inTerminal(['info', join(dir, 'no\u001b[31mfile.npy')])
    expect(output).to.include('\\u001b[31m')
  })

  it("names from files stay escaped beside the tool's own colour (bench's table and warning, prune's report)", () => {
    const evil = join(dir, 'ev\u001b[31mil.smtx')
    copyFileSync(SMTX, evil)
    const bench = inTerminal(['bench', evil, '--device', 'cpu', '--n', '8', '--op', 'spmm', '--dtype', 'f32', ...FAST])
    expect(bench.code, bench.output).to.equal(0)
    // eslint-disable-next-line no-control-regex
    expect(bench.output).to.match(/\u001b\[\d+m/) // our colour
    expect(bench.output).to.not.include('ev\u001b[31mil')
    expect(bench.output).to.include('ev\\u001b[31mil')
    const dense = join(dir, 'ev\u001b[31mil.npy')
    copyFileSync('fixtures/dense-f32.npy', dense)
    const prune = inTerminal(['prune', dense, '-s', '0.5'])
    expect(prune.code, prune.output).to.equal(0)
    expect(prune.output).to.not.include('ev\u001b[31mil')
    expect(prune.output).to.include('ev\\u001b[31mil')
  })
})
