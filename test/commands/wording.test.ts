// issue 22, item 8 and the info summary: what the commands say, each checked against the
// wording the issue found.
import {expect} from 'chai'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {oneLine} from '../../src/cli/base-command.js'
import {buildZip} from '../fuzz/builders.js'
import {runCli} from '../helpers/cli.js'

const temps: string[] = []
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'wording-'))
  temps.push(d)
  return d
}
after(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

describe('wording (issue 22)', function () {
  this.timeout(120_000)

  it("a usage error that oclif wrapped reads as one sentence (not \"('-' =: stdin)\")", async () => {
    expect(oneLine("Missing 1 required arg:\ninput  a file ('-' =\nstdin); several\nSee more help with --help")).to.equal("Missing 1 required arg: input  a file ('-' = stdin); several")
    const r = await runCli(['info'], {env: {COLUMNS: '60'}})
    expect(r.code).to.equal(2)
    expect(r.stderr).to.include("('-' = stdin)")
    expect(r.stderr).to.not.include('=:')
  })

  it('-o naming an existing directory for a one-file output does not suggest --force', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'empty'))
    const r = await runCli(['prune', 'fixtures/dense-f32.npy', '-s', '0.5', '-o', join(dir, 'empty')])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.match(/it is an existing directory/)
    expect(r.stderr).to.not.match(/or pass --force\)/)
  })

  it('-o in a folder that takes no new files (/proc) does not say the folder is missing', async function () {
    if (process.platform !== 'linux') this.skip() // /proc is Linux's
    const r = await runCli(['prune', 'fixtures/dense-f32.npy', '-s', '0.5', '-o', '/proc/out.npz'])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.not.match(/does not exist/)
    expect(r.stderr).to.match(/\/proc does not take new files/)
  })

  it("-s's help names --sparsity-map", async () => {
    const r = await runCli(['prune', '--help'])
    const s = r.stdout.split('\n').findIndex((l) => l.includes('-s, --sparsity'))
    expect(r.stdout.split('\n').slice(s, s + 4).join(' ')).to.match(/--sparsity-map/)
  })

  it('a TorchScript archive (which has a data.pkl too) is refused as TorchScript', async () => {
    const dir = tempDir()
    const p = join(dir, 'scripted.pt')
    const text = (s: string) => new TextEncoder().encode(s)
    // torch.jit.save's layout: the module's state in data.pkl, its code and constants beside it.
    const evilish = Uint8Array.from([0x80, 0x02, 0x63, ...text('__torch__.M\nM\n'), 0x29, 0x81, 0x2e])
    writeFileSync(p, buildZip([
      {name: 'scripted/data.pkl', data: evilish},
      {name: 'scripted/code/__torch__.py', data: text('class M(Module): pass\n')},
      {name: 'scripted/constants.pkl', data: Uint8Array.from([0x80, 0x02, 0x29, 0x2e])},
      {name: 'scripted/version', data: text('3\n')},
    ]).bytes)
    const r = await runCli(['info', p])
    expect(r.code).to.equal(1)
    expect(r.stderr).to.match(/is a TorchScript archive \(torch\.jit\.save\)/)
  })

  it('verify draws a box table, as prune and bench do', async () => {
    const r = await runCli(['verify', 'fixtures/dlmc-rn50-0.98-initial_conv.smtx', '--device', 'cpu', '--op', 'spmm', '--dtype', 'f32', '--n', '8'])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/^┌/m)
    expect(r.stdout).to.match(/│ spmm │ f32/)
    expect(r.stdout).to.not.match(/^-{2,}/m)
  })

  it('info on a model: one line per tensor and the totals by default; --long for every figure', async () => {
    const r = await runCli(['info', 'fixtures/hf-tiny'])
    expect(r.code, r.stderr).to.equal(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.length).to.be.lessThan(16)
    expect(r.stdout).to.match(/│ model\.layers\.0\.mlp\.up_proj\.weight\s+│ 48x16\s+│ bf16\s+│\s+768 │\s+0\.00% │/)
    expect(r.stdout).to.match(/│ total\s+│ 2832 weights/)
    const long = await runCli(['info', 'fixtures/hf-tiny', '--long'])
    expect(long.stdout).to.match(/row lengths {2}min/)
    expect(long.stdout.split('\n').length).to.be.greaterThan(40)
    // A 2:4 model says so per tensor; --summary on a single matrix too.
    const dir = tempDir()
    expect((await runCli(['prune', 'fixtures/hf-tiny', '--pattern', '2:4', '--format', 'dense', '-o', join(dir, 'm')])).code).to.equal(0)
    const p = await runCli(['info', join(dir, 'm')])
    expect(p.stdout).to.match(/│ model\.layers\.0\.mlp\.up_proj\.weight\s+│ 48x16\s+│ bf16\s+│\s+384 │\s+50\.00% │ 2:4/)
    expect(p.stdout).to.match(/│ lm_head\.weight\s+│ 32x16\s+│ bf16\s+│\s+512 │\s+0\.00% │\s+│/)
    const one = await runCli(['info', 'fixtures/dense-f32.npy', '--summary'])
    expect(one.stdout).to.match(/│ total/)
    const j = JSON.parse((await runCli(['info', 'fixtures/hf-tiny', '--json'])).stdout)
    expect(j.files[0].tensors).to.have.length(6)
    // The summary's total row, as numbers.
    expect(j.totals).to.deep.include({tensors: 6})
    expect(j.totals.nnz).to.equal(j.files[0].tensors.reduce((a: number, t: {nnz: number}) => a + t.nnz, 0))
  })
})
