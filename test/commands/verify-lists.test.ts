/** `sparse verify --n` and `--dtype` take comma-separated lists, as `sparse bench` does. */
import {expect} from 'chai'
import {join} from 'node:path'

import {ROOT, runCli} from '../helpers/cli.js'

// The smallest bundled DLMC matrix (64 x 147, 188 nonzeros; fixtures/README.md).
const SMALL = join(ROOT, 'fixtures', 'dlmc-mini', 'rn50', 'magnitude_pruning', '0.98', 'initial_conv.smtx')

/** The cells of the table's case rows (a box table: the cells of each row between its bars). */
const caseRows = (stdout: string) =>
  stdout
    .split('\n')
    .map((l) => l.split('│').slice(1, -1).map((c) => c.trim()))
    .filter((c) => c[0] === 'spmm' || c[0] === 'sddmm')

describe('sparse verify: lists of N and dtypes', function () {
  this.timeout(120_000)

  it('--n 1,5 --dtype f32,f16: a case for every N and dtype, in the table and in --json (exit 0)', async () => {
    const args = ['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--n', '1,5', '--dtype', 'f32,f16']
    const r = await runCli(args)
    expect(r.stderr).to.equal('')
    expect(r.code).to.equal(0)
    // op, dtype, ..., N (the 7th column): N, then dtype.
    expect(caseRows(r.stdout).map((c) => [c[0], c[1], c[6], c.at(-1)])).to.deep.equal([
      ['spmm', 'f32', '1', 'pass'],
      ['spmm', 'f16', '1', 'pass'],
      ['spmm', 'f32', '5', 'pass'],
      ['spmm', 'f16', '5', 'pass'],
    ])
    expect(r.stdout.trim().split('\n').at(-1)).to.match(/: 4 of 4 cases passed \(all passed\) on cpu \(CPU \(\d+ threads\)\), N=1,5, seed 0$/)
    const j = await runCli([...args, '--json'])
    expect(j.code).to.equal(0)
    const out = JSON.parse(j.stdout)
    expect(out).to.include({ok: true, passed: 4, failed: 0})
    expect(out.ns).to.deep.equal([1, 5])
    expect(out).to.not.have.property('n') // several N: each case has its own
    expect(out.cases.map((c: {op: string; dtype: string; n: number}) => [c.op, c.dtype, c.n])).to.deep.equal([
      ['spmm', 'f32', 1],
      ['spmm', 'f16', 1],
      ['spmm', 'f32', 5],
      ['spmm', 'f16', 5],
    ])
  })

  it('one N and one dtype: --json keeps n beside ns; duplicates in a list run once', async () => {
    const one = JSON.parse((await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--n', '8', '--dtype', 'f16', '--json'])).stdout)
    expect(one).to.include({n: 8, passed: 1})
    expect(one.ns).to.deep.equal([8])
    const dup = await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'sddmm', '--n', '8,2,8', '--dtype', 'bf16,bf16', '--json'])
    expect(dup.code).to.equal(0)
    const out = JSON.parse(dup.stdout)
    expect(out.ns).to.deep.equal([8, 2])
    expect(out.cases.map((c: {dtype: string; n: number}) => `${c.dtype}/${c.n}`)).to.deep.equal(['bf16/8', 'bf16/2'])
  })

  it('a case that fails at any N and dtype exits 1, the error line naming each N', async () => {
    const r = await runCli(['verify', SMALL, '--device', 'cpu', '--op', 'spmm', '--n', '1,5', '--dtype', 'f32,f16'], {env: {SPARSE_VERIFY_FAULT: 'perturb'}})
    expect(r.code).to.equal(1)
    expect(caseRows(r.stdout)).to.have.length(4)
    const err = r.stderr.trim().split('\n')
    expect(err).to.have.length(1)
    expect(err[0]).to.match(/^error: 4 of 4 verify cases failed: initial_conv spmm f32 N=1 on cpu: relative error .*; initial_conv spmm f16 N=1 on cpu: .*; initial_conv spmm f32 N=5 on cpu: .*, and 1 more$/)
  })

  it('bad lists are usage errors: one line on stderr, no stack trace, exit 2, before any case runs', async () => {
    const bad: Array<[string[], RegExp]> = [
      [['--n', '0'], /^error: --n: expected integers >= 1, got "0"/],
      [['--n', '8,-3'], /^error: --n: expected integers >= 1, got "-3"/],
      [['--n', '1.5'], /^error: --n: expected integers >= 1, got "1\.5"/],
      [['--n', '8,x'], /^error: --n: expected integers >= 1, got "x"/],
      [['--n', '1,,5'], /^error: --n: an empty item in "1,,5" \(drop the extra comma\)$/],
      [['--n', '16,'], /^error: --n: an empty item in "16,"/],
      [['--n', ''], /^error: --n: expected a comma-separated list, got ""$/],
      [['--n', '8,2000000'], /^error: expected a positive integer up to 1048576 for --n, got 2000000$/],
      [['--dtype', 'f32,f64'], /^error: --dtype: expected f32, f16, bf16 or all, got "f64"$/],
      [['--dtype', 'f16,all'], /^error: --dtype: expected f32, f16, bf16 or all, got "all"$/],
      [['--dtype', ','], /^error: --dtype: expected a comma-separated list, got ","$/],
      [['--dtype', 'f32,,f16'], /^error: --dtype: an empty item in "f32,,f16"/],
    ]
    for (const [args, message] of bad) {
      const r = await runCli(['verify', SMALL, '--device', 'cpu', ...args])
      const what = args.join(' ')
      expect(r.code, what).to.equal(2)
      expect(r.stdout, what).to.equal('')
      const err = r.stderr.trim().split('\n')
      expect(err, what).to.have.length(1)
      expect(err[0], what).to.match(message)
      expect(r.stderr, what).to.not.match(/\n\s+at /)
    }
    const j = await runCli(['verify', SMALL, '--device', 'cpu', '--n', '0', '--json'])
    expect(j.code).to.equal(2)
    expect(JSON.parse(j.stdout).error).to.include({code: 'bad-list', exitCode: 2})
  })
})
