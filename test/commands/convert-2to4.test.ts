import {readdirSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {encodeSp24, openTensorSource, readCsrInput, sp24NpzArrays, writeAtomically, writeCsrNpz, writeNpy} from '../../src/formats/index.js'
import {writeNpzTo} from '../../src/formats/npz.js'
import {denseToCsr} from '../../src/sparse/dense-to-csr.js'
import {f32ToBf16Bits, f32ToF16Bits} from '../../src/sparse/half.js'
import {createRng} from '../../src/sparse/random.js'
import {runCli} from '../helpers/cli.js'
import {makeTmp, sameBits} from '../formats/helpers.js'

/** A rows x cols dense f32 matrix that is 2:4: in each group of 4, columns (r + g) % 4 and (r + g + 1) % 4 are kept. */
function dense24(rows: number, cols: number, seed: number): Float32Array {
  const rng = createRng(seed)
  const d = new Float32Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const g = c >> 2
      const j = c & 3
      if (j === (r + g) % 4 || j === (r + g + 1) % 4) d[r * cols + c] = rng.normal() || 0.5
    }
  }
  return d
}

describe('sparse convert --to 2:4, and 2:4 files as inputs', () => {
  const tmp = makeTmp('sparse-convert24-')
  after(tmp.cleanup)
  const out = (name: string) => join(tmp.dir, name)
  const noPartial = () => expect(readdirSync(tmp.dir).filter((n) => n.endsWith('.tmp'))).to.deep.equal([])

  before(async () => {
    const f32 = dense24(20, 70, 1)
    await writeNpy({name: 'w', shape: [20, 70], dtype: 'f32', data: f32}, out('d24-f32.npy'))
    await writeNpy({name: 'w', shape: [20, 70], dtype: 'f16', data: Uint16Array.from(f32, (v) => f32ToF16Bits(v))}, out('d24-f16.npy'))
    const bf = denseToCsr({name: 'w', shape: [20, 70], dtype: 'bf16', data: Uint16Array.from(f32, (v) => f32ToBf16Bits(v))})
    bf.csr.rowIndices = Int32Array.from({length: 20}, (_, i) => 19 - i)
    await writeCsrNpz(bf, out('c24-bf16.npz'))
    const bad = dense24(20, 70, 2)
    bad[5 * 70 + 9] = 1.5 // row 5, group 2 (columns 8..11) now holds 3 nonzeros
    bad[5 * 70 + 10] = 1.5
    bad[5 * 70 + 11] = 1.5
    await writeNpy({name: 'w', shape: [20, 70], dtype: 'f16', data: Uint16Array.from(bad, (v) => f32ToF16Bits(v))}, out('not24.npy'))
  })

  it('dense f16 (2:4 by its zeros) -> 2:4 .npz -> dense .npy, bit for bit; --json result', async () => {
    const r = await runCli(['convert', out('d24-f16.npy'), '-o', out('w24.npz'), '--to', '2:4', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json).to.deep.include({from: 'npy', to: '2:4', outputFormat: 'sp24-npz'})
    expect(json.tensors[0]).to.deep.include({name: 'd24-f16', shape: [20, 70], dtype: 'f16', nnz: 700, rowOrder: false})
    const back = await runCli(['convert', out('w24.npz'), '-o', out('w24.npy')])
    expect(back.code, back.stderr).to.equal(0)
    expect(back.stdout).to.match(/w24\.npz \(sp24-npz\) -> .*w24\.npy \(npy, 1 tensor/)
    const a = await openTensorSource(out('d24-f16.npy'))
    const b = await openTensorSource(out('w24.npy'))
    expect(sameBits((await b.read('w24')).data, (await a.read('d24-f16')).data)).to.equal(true)
    await a.close()
    await b.close()
    noPartial()
  })

  it('a bf16 CSR -> 2:4 (the row order dropped, with a note) -> CSR with the same nonzeros', async () => {
    const r = await runCli(['convert', out('c24-bf16.npz'), '-o', out('b24.npz'), '--to', '2:4'])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/\(sp24-npz, 1 tensor/)
    expect(r.stdout).to.match(/note: the 2:4 form has no place for a row order/)
    const c = await runCli(['convert', out('b24.npz'), '-o', out('b24-csr.npz')])
    expect(c.code, c.stderr).to.equal(0)
    const [orig] = await readCsrInput(out('c24-bf16.npz'))
    const [again] = await readCsrInput(out('b24-csr.npz'))
    expect(again.csr.dtype).to.equal('bf16')
    expect(Array.from(again.csr.rowOffsets)).to.deep.equal(Array.from(orig.csr.rowOffsets))
    expect(Array.from(again.csr.columnIndices)).to.deep.equal(Array.from(orig.csr.columnIndices))
    expect(sameBits(again.csr.values!, orig.csr.values!)).to.equal(true)
    // A dtype change on the way: bf16 tiles -> f16 tiles.
    const h = await runCli(['convert', out('b24.npz'), '-o', out('b24-f16.npz'), '--to', '2:4', '--dtype', 'f16', '--json'])
    expect(h.code, h.stderr).to.equal(0)
    expect(JSON.parse(h.stdout)).to.deep.include({from: 'sp24-npz', outputFormat: 'sp24-npz'})
  })

  it('refuses f32 values without --dtype (exit 2), converts them with --dtype f16; --dtype f32 is refused', async () => {
    const r = await runCli(['convert', out('d24-f32.npy'), '-o', out('f32.npz'), '--to', '2:4'])
    expect(r.code).to.equal(2)
    expect(r.stderr.trim().split('\n')).to.have.length(1)
    expect(r.stderr).to.match(/error: d24-f32 holds f32 values; the 2:4 form holds f16 or bf16 .*pass --dtype f16 or --dtype bf16/)
    const f = await runCli(['convert', out('d24-f32.npy'), '-o', out('f32.npz'), '--to', '2:4', '--dtype', 'f32'])
    expect(f.code).to.equal(2)
    const ok = await runCli(['convert', out('d24-f32.npy'), '-o', out('f32.npz'), '--to', '2:4', '--dtype', 'f16', '--json'])
    expect(ok.code, ok.stderr).to.equal(0)
    expect(JSON.parse(ok.stdout).tensors[0]).to.deep.include({dtype: 'f16', nnz: 700})
    const [m] = await readCsrInput(out('f32.npz'))
    expect(m.csr.dtype).to.equal('f16')
  })

  it('a matrix that is not 2:4: one line naming the first group, exit 1, no output left', async () => {
    const r = await runCli(['convert', out('not24.npy'), '-o', out('no.npz'), '--to', '2:4'])
    expect(r.code).to.equal(1)
    const lines = r.stderr.trim().split('\n')
    expect(lines).to.have.length(1)
    expect(lines[0]).to.match(/^error: not24: not 2:4: row 5, columns 8\.\.11 hold (3|4) nonzeros \(at most 2\)/)
    expect(readdirSync(tmp.dir)).to.not.include('no.npz')
    noPartial()
    const j = await runCli(['convert', out('not24.npy'), '-o', out('no.npz'), '--to', '2:4', '--json'])
    expect(j.code).to.equal(1)
    expect(JSON.parse(j.stdout).error).to.deep.include({code: 'not-2to4', exitCode: 1})
  })

  it('a corrupt 2:4 file (members of the wrong size): one line, exit 1, from convert, info and verify', async () => {
    const [m] = await readCsrInput(out('c24-bf16.npz'))
    const arrays = sp24NpzArrays(encodeSp24(m)).map((a) => (a.name === 'meta' ? {...a, shape: [1, 3, 16], data: (a.data as Uint32Array).subarray(0, 48)} : a))
    await writeAtomically(out('corrupt.npz'), {}, (sink) => writeNpzTo(sink, arrays))
    for (const args of [
      ['convert', out('corrupt.npz'), '-o', out('x.npy')],
      ['info', out('corrupt.npz')],
      ['verify', out('corrupt.npz'), '--device', 'cpu'],
    ]) {
      const r = await runCli(args)
      expect(r.code, `${args[0]}: ${r.stderr}`).to.equal(1)
      const lines = r.stderr.trim().split('\n')
      expect(lines, args[0]).to.have.length(1)
      expect(lines[0]).to.match(/meta has shape \(1, 3, 16\), expected \(2, 3, 16\) for a 20x70 matrix/)
    }
    expect(readdirSync(tmp.dir)).to.not.include('x.npy')
  })

  it('info describes a 2:4 file: tiles, bytes per element against dense f16', async () => {
    const r = await runCli(['info', out('w24.npz')])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/\(sp24-npz, 1 tensor\)/)
    expect(r.stdout).to.match(/format {2}2:4 tiles \(2 x 3 tiles of 16 x 32\) {2}3\.4 KiB {2}2\.469 bytes per element vs 2 for dense f16/)
    const j = await runCli(['info', out('w24.npz'), '--json'])
    const t = JSON.parse(j.stdout).files[0].tensors[0]
    expect(t).to.deep.include({storage: '2:4', dtype: 'f16', nnz: 700, rows: 20, cols: 70})
    expect(t.sp24).to.deep.include({strips: 2, ksteps: 3, bytes: 6 * 576, denseF16BytesPerElement: 2})
  })

  it('verify runs the kernels on a 2:4 file (CPU)', async () => {
    const r = await runCli(['verify', out('w24.npz'), '--device', 'cpu', '--op', 'spmm', '--dtype', 'f16', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(JSON.stringify(json)).to.match(/"nnz":700/)
  })

  it('the recipe: prune --pattern 2:4 then convert --to 2:4; bench reads the 2:4 file (CPU)', async () => {
    const d = dense24(16, 64, 3).map((v, i) => (v === 0 ? 0.01 * ((i % 7) + 1) : v)) // dense: prune makes it 2:4
    await writeNpy({name: 'w', shape: [16, 64], dtype: 'f16', data: Uint16Array.from(d, (v) => f32ToF16Bits(v))}, out('dense.npy'))
    const p = await runCli(['prune', out('dense.npy'), '--pattern', '2:4', '-o', out('pruned.npz')])
    expect(p.code, p.stderr).to.equal(0)
    const c = await runCli(['convert', out('pruned.npz'), '-o', out('pruned24.npz'), '--to', '2:4'])
    expect(c.code, c.stderr).to.equal(0)
    const b = await runCli(['bench', out('pruned24.npz'), '--n', '8', '--dtype', 'f16', '--device', 'cpu', '--reps', '2', '--min-ms', '0', '--json'])
    expect(b.code, b.stderr).to.equal(0)
    const bench = JSON.parse(b.stdout)
    expect(bench.cases[0]).to.deep.include({status: 'ok', nnz: 512, m: 16, k: 64})
    // One memory saving (src/sparse/memory.ts) in all three commands for the same matrix: the
    // 2:4 form is 2 tiles of 576 bytes against 16 x 64 dense f16 values, whatever file holds it.
    const twoFour = (16 * 64 * 2) / (2 * 576)
    const pj = await runCli(['prune', out('dense.npy'), '--pattern', '2:4', '-o', out('pruned-again.npz'), '--json'])
    const pruned = JSON.parse(pj.stdout).tensors[0]
    expect(pruned.twoFourBytes).to.equal(2 * 576)
    expect(pruned.memorySaving.twoFour).to.equal(twoFour)
    for (const file of ['pruned.npz', 'pruned24.npz']) {
      const t = JSON.parse((await runCli(['info', out(file), '--json'])).stdout).files[0].tensors[0]
      expect([t.twoFourBytes, t.memorySaving.twoFour], file).to.deep.equal([2 * 576, twoFour])
      // CSR in 16-bit values: prune's bytes and saving for prune's file (it holds the row order;
      // the 2:4 file does not, so its CSR is 4 bytes a row smaller).
      const rowOrder = file === 'pruned.npz' ? 0 : 4 * 16
      expect(t.csrBytes.f16, file).to.equal(pruned.csrBytes.f16 - rowOrder)
      expect(t.memorySaving.f16, file).to.equal((16 * 64 * 2) / t.csrBytes.f16)
    }
    expect(JSON.parse((await runCli(['info', out('pruned.npz'), '--json'])).stdout).files[0].tensors[0].memorySaving.f16).to.equal(pruned.memorySaving.f16)
    const info24 = JSON.parse((await runCli(['info', out('pruned24.npz'), '--json'])).stdout).files[0].tensors[0]
    expect(info24.sp24.savingVsF16).to.equal(twoFour)
    expect(bench.cases[0].memory).to.deep.include({twoFourBytes: 2 * 576, twoFourSaving: twoFour, saving: pruned.memorySaving.f16})
    const human = await runCli(['info', out('pruned24.npz')])
    expect(human.stdout).to.include(`2:4 1.1 KiB (saving ${twoFour.toFixed(2)}x)`)
    expect(human.stdout).to.match(/memory saving = bytes of the dense matrix in the same value dtype \/ bytes of the form\n$/)
  })
})
