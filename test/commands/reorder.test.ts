import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {readCsrInput} from '../../src/formats/index.js'
import {rowSwizzle} from '../../src/reorder/swizzle.js'
import {runCli} from '../helpers/cli.js'
import {fixture, makeTmp, pyJson, requirePython} from '../formats/helpers.js'

describe('sparse reorder', () => {
  const tmp = makeTmp('sparse-reorder-')
  after(tmp.cleanup)
  const out = (name: string) => join(tmp.dir, name)

  it('stores the row swizzle in a CSR .npz (SciPy still opens it) and reports before/after', async function () {
    const r = await runCli(['reorder', fixture('scipy-csr.npz'), '-o', out('s.npz'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    const [orig] = await readCsrInput(fixture('scipy-csr.npz'))
    const expected = Array.from(rowSwizzle(orig.csr.rowOffsets))
    const t = json.tensors[0]
    expect(t).to.deep.include({rows: 33, cols: 50, hadRowOrder: false})
    expect(t.after.firstRows.map((x: {row: number}) => x.row)).to.deep.equal(expected.slice(0, 8))
    expect(t.before.firstRows.map((x: {row: number}) => x.row)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7])
    // Longest rows first, so lengths never increase along the order; similar rows side by side.
    const lens = t.after.firstRows.map((x: {length: number}) => x.length)
    expect(lens).to.deep.equal([...lens].sort((a: number, b: number) => b - a))
    expect(t.after.groupSpread).to.be.lessThan(t.before.groupSpread)
    const [back] = await readCsrInput(out('s.npz'))
    expect(Array.from(back.csr.rowIndices!)).to.deep.equal(expected)
    expect(Array.from(back.csr.columnIndices)).to.deep.equal(Array.from(orig.csr.columnIndices))
    requirePython(this)
    const py = pyJson<{nnz: number; same: boolean; order: number[]}>(
      `import sys, json, numpy as np, scipy.sparse as sp
a = sp.load_npz(sys.argv[1]); b = sp.load_npz(sys.argv[2]); z = np.load(sys.argv[2])
print(json.dumps({"nnz": int(b.nnz), "same": bool((a != b).nnz == 0), "order": z["row_indices"].tolist()}))`,
      [fixture('scipy-csr.npz'), out('s.npz')],
    )
    expect(py).to.deep.equal({nnz: orig.csr.rowOffsets[33], same: true, order: expected})
  })

  it('a pattern-only .smtx gets seeded values; a report without -o writes nothing', async () => {
    const r = await runCli(['reorder', fixture('dlmc-rn50-0.98-initial_conv.smtx')])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/before \(natural order\): first rows/)
    expect(r.stdout).to.match(/after  \(swizzle\): +first rows/)
    expect(r.stdout).to.match(/nothing written/)
    const w = await runCli(['reorder', fixture('dlmc-rn50-0.98-initial_conv.smtx'), '-o', out('conv.npz'), '--seed', '5'])
    expect(w.code, w.stderr).to.equal(0)
    expect(w.stdout).to.match(/values filled with seeded normal values \(seed 5\)/)
    const [m] = await readCsrInput(out('conv.npz'))
    expect(m.csr.values).to.have.length(188)
    expect(m.csr.rowIndices).to.have.length(64)
  })

  it('a CSR directory in, a directory out; a stored order is reported as the "before"', async () => {
    const p = await runCli(['prune', fixture('tiny-mlp.safetensors'), '-s', '0.7', '--no-reorder', '-o', out('mlp')])
    expect(p.code, p.stderr).to.equal(0)
    const r = await runCli(['reorder', out('mlp'), '-o', out('mlp2'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json.outputKind).to.equal('dir')
    expect(json.tensors.map((t: {name: string; hadRowOrder: boolean}) => [t.name, t.hadRowOrder])).to.deep.equal([
      ['layers.0.weight', false],
      ['layers.1.weight', false],
      ['layers.2.weight', false],
    ])
    const back = await readCsrInput(out('mlp2'))
    for (const b of back) expect(Array.from(b.csr.rowIndices!)).to.deep.equal(Array.from(rowSwizzle(b.csr.rowOffsets)))
    const again = await runCli(['reorder', join(out('mlp2'), 'layers.0.weight.npz'), '--json'])
    expect(JSON.parse(again.stdout).tensors[0].hadRowOrder).to.equal(true)
  })

  it('errors: dense input and existing output exit 2; corrupt CSR exits 1; nothing written', async () => {
    const dense = await runCli(['reorder', fixture('dense-f32.npy'), '-o', out('x.npz')])
    expect(dense.code).to.equal(2)
    expect(dense.stderr.trim().split('\n')).to.have.length(1)
    writeFileSync(out('exists.npz'), 'keep')
    const exists = await runCli(['reorder', fixture('scipy-csr.npz'), '-o', out('exists.npz')])
    expect(exists.code).to.equal(2)
    expect(readFileSync(out('exists.npz'), 'utf8')).to.equal('keep')
    const bad = await runCli(['reorder', fixture('bad-truncated.npz'), '-o', out('y.npz')])
    expect(bad.code).to.equal(1)
    expect(existsSync(out('x.npz')) || existsSync(out('y.npz'))).to.equal(false)
  })
})
