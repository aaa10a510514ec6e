/** `sparse info` and `sparse verify` take several inputs and folders, like `sparse bench`. */
import {expect} from 'chai'

import {makeTmp} from '../formats/helpers.js'
import {runCli} from '../helpers/cli.js'

const MINI = 'fixtures/dlmc-mini'
const SMTX = `${MINI}/rn50/magnitude_pruning/0.98`

describe('several inputs: info and verify', function () {
  this.timeout(120_000)
  const tmp = makeTmp('sparse-multi-')
  after(() => tmp.cleanup())

  it('info: files and folders (searched recursively); --json is {files, totals} for one input as for several', async () => {
    const r = await runCli(['info', MINI, 'fixtures/scipy-csr.npz', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j.files.map((f: {file: string}) => f.file)).to.deep.equal([
      `${SMTX}/bottleneck_1_block_group1_1_1.smtx`,
      `${SMTX}/bottleneck_3_block_group1_1_1.smtx`,
      `${SMTX}/initial_conv.smtx`,
      'fixtures/scipy-csr.npz',
    ])
    // One shape whatever the number of inputs: a script written against one file reads two.
    const one = JSON.parse((await runCli(['info', 'fixtures/scipy-csr.npz', '--json'])).stdout)
    const two = JSON.parse((await runCli(['info', 'fixtures/scipy-csr.npz', 'fixtures/dense-f32.npy', '--json'])).stdout)
    expect(Object.keys(one)).to.deep.equal(['files', 'totals'])
    expect(Object.keys(two)).to.deep.equal(Object.keys(one))
    expect(one.files).to.have.length(1)
    expect(two.files).to.have.length(2)
    expect(two.files[0]).to.deep.equal(one.files[0])
    expect(one.files[0]).to.include({file: 'fixtures/scipy-csr.npz', format: 'csr-npz'})
    expect(two.totals).to.deep.include({tensors: 2, nnz: one.totals.nnz + two.files[1].totals.nnz, numel: one.totals.numel + two.files[1].totals.numel})
    // A model folder is one input, not its shards.
    const hf = JSON.parse((await runCli(['info', 'fixtures/hf-tiny', '--json'])).stdout)
    expect(hf.files).to.have.length(1)
    expect(hf.files[0]).to.include({file: 'fixtures/hf-tiny', format: 'sharded'})
    expect(hf.files[0].tensors).to.have.length(6)
  })

  it('verify: every matrix of every input, named file:tensor; an empty folder is exit 2', async () => {
    const r = await runCli(['verify', SMTX, 'fixtures/scipy-csr.npz', '--device', 'cpu', '--dtype', 'f32', '--op', 'spmm', '--n', '8', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j.inputs).to.have.length(4)
    expect(j.cases.map((c: {matrix: string}) => c.matrix)).to.deep.equal(j.inputs)
    expect(j).to.include({ok: true, passed: 4, failed: 0})
    const human = await runCli(['verify', SMTX, '--device', 'cpu', '--dtype', 'f32', '--op', 'spmm', '--n', '8'])
    expect(human.stdout).to.match(/^│ matrix\s+│ op\s+│ dtype/m)
    expect(human.stdout).to.match(/3 of 3 cases passed \(all passed\)/)
    const single = await runCli(['verify', `${SMTX}/initial_conv.smtx`, '--device', 'cpu', '--dtype', 'f32', '--op', 'spmm', '--n', '8'])
    expect(single.stdout).to.match(/1 of 1 case passed \(all passed\)/)
    const empty = await runCli(['verify', tmp.dir, '--device', 'cpu'])
    expect(empty.code).to.equal(2)
    expect(empty.stderr).to.match(/^error: no .* files, CSR directories or model folders under /)
  })
})
