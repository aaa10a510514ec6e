import {expect} from 'chai'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {colourOff} from '../../src/cli/base-command.js'
import {dirLabel, plural} from '../../src/cli/text.js'
import {runCli} from '../helpers/cli.js'

describe('CLI conventions', function () {
  this.timeout(120_000)

  it('NO_COLOR: set and non-empty turns colour off, empty does not (no-color.org)', () => {
    expect(colourOff([], {NO_COLOR: '1'}, true)).to.equal(true)
    expect(colourOff([], {NO_COLOR: ''}, true)).to.equal(false)
    expect(colourOff([], {}, true)).to.equal(false)
    expect(colourOff(['--no-color'], {}, true)).to.equal(true)
    expect(colourOff([], {}, false)).to.equal(true)
  })

  it('wording: plurals and one trailing slash on folders', () => {
    expect(plural(1, 'case')).to.equal('1 case')
    expect(plural(2, 'case')).to.equal('2 cases')
    expect(plural(0, 'CSR .npz file')).to.equal('0 CSR .npz files')
    expect(dirLabel('model-csr/')).to.equal('model-csr/')
    expect(dirLabel('model-csr//')).to.equal('model-csr/')
    expect(dirLabel('model-csr')).to.equal('model-csr/')
  })

  it('an unknown command is one error: line with exit 2 (a suggestion when close), JSON under --json', async () => {
    const r = await runCli(['prnue', 'x.npy'])
    expect(r.code).to.equal(2)
    expect(r.stdout).to.equal('')
    expect(r.stderr).to.equal("error: unknown command 'prnue' (did you mean 'sparse prune'? run 'sparse --help' for the list)\n")
    const far = await runCli(['frobnicate'])
    expect(far.code).to.equal(2)
    expect(far.stderr).to.match(/^error: unknown command 'frobnicate' \(run 'sparse --help' for the list of commands\)\n$/)
    const j = await runCli(['frobnicate', '--json'])
    expect(j.code).to.equal(2)
    expect(JSON.parse(j.stdout).error).to.include({code: 'unknown-command', exitCode: 2})
  })

  it('sparse version prints the versions and the addon status; --json the same as an object', async () => {
    const r = await runCli(['version'])
    expect(r.code).to.equal(0)
    expect(r.stdout).to.match(/^sparse\/0\.\d+\.\d+ \w+-\w+ node-v20\.\d+\.\d+; addon /)
    const j = JSON.parse((await runCli(['version', '--json'])).stdout)
    expect(j).to.include({name: 'sparse', node: process.versions.node})
    expect(j.addon).to.have.keys(j.addon.gpu === null ? ['loaded', 'cuda', 'gpu', 'reason'] : ['loaded', 'cuda', 'gpu'])
  })

  it('a directory output is reported with one slash, and one file in the singular', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sparse-word-'))
    try {
      const r = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.5', '--include', 'layers.0.weight|layers.1.weight', '-o', join(dir, 'out') + '/'])
      expect(r.code, r.stderr).to.equal(0)
      expect(r.stdout).to.include(`wrote ${join(dir, 'out')}/ (2 CSR .npz files + manifest.json)`)
      expect(r.stdout).to.not.include('//')
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
