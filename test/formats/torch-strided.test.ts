// issue 22: a non-contiguous torch tensor (a transposed view) is a layout, not a dtype: it is
// read through its strides and pruned; --format dense writes it back into its strided storage.
// An overlapping view (expand) is refused by name. Fixture: fixtures/make_checkpoints.py.
import {expect} from 'chai'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {openTensorSource} from '../../src/formats/index.js'
import {runCli} from '../helpers/cli.js'

const PT = 'fixtures/torch-transposed.pt'

/** The float32 data of a .npy written by numpy (little-endian, C order, version 1 header). */
function npyF32(path: string): Float32Array {
  const b = readFileSync(path)
  const headerLen = b.readUInt16LE(8)
  const data = b.subarray(10 + headerLen)
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))
}

describe('torch: non-contiguous views', function () {
  this.timeout(60_000)

  it('reads a transposed view through its strides; refuses an overlapping one by name', async () => {
    const src = await openTensorSource(PT)
    try {
      expect(src.tensors.map((t) => t.name)).to.deep.equal(['proj.weight'])
      const t = await src.read('proj.weight')
      expect(t.shape).to.deep.equal([10, 6])
      expect(Array.from(t.data as Float32Array)).to.deep.equal(Array.from(npyF32('fixtures/torch-transposed-expected.npy')))
      const tiled = src.unsupported.find((u) => u.name === 'tiled.weight')
      expect(tiled?.reason).to.match(/a view whose elements overlap \(stride \[0, 1\]/)
    } finally {
      await src.close()
    }
  })

  it('prunes it (not "unsupported dtype float32") and writes it back in place with --format dense', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'torch-strided-'))
    try {
      const r = await runCli(['prune', PT, '-s', '0.5', '--json'])
      expect(r.code, r.stderr).to.equal(0)
      const report = JSON.parse(r.stdout)
      expect(report.tensors.map((t: {name: string}) => t.name)).to.deep.equal(['proj.weight'])
      expect(JSON.stringify(report.skipped)).to.not.match(/unsupported dtype float32/)
      const out = join(dir, 'pruned.pt')
      const w = await runCli(['prune', PT, '-s', '0.5', '--format', 'dense', '-o', out])
      expect(w.code, w.stderr).to.equal(0)
      const expected = npyF32('fixtures/torch-transposed-expected.npy')
      const src = await openTensorSource(out)
      try {
        const t = await src.read('proj.weight')
        const got = t.data as Float32Array
        // The kept half are the largest |w| at their own places; the rest are zeros.
        const cut = [...expected].map(Math.abs).sort((a, b) => a - b)[29]
        for (let i = 0; i < expected.length; i++) expect(got[i]).to.equal(Math.abs(expected[i]) > cut ? expected[i] : 0)
      } finally {
        await src.close()
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
