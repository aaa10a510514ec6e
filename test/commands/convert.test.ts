import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {openTensorSource, readCsrInput, writeCsrNpz} from '../../src/formats/index.js'
import {denseToCsr} from '../../src/sparse/dense-to-csr.js'
import {randomValues} from '../../src/sparse/random.js'
import {runCli} from '../helpers/cli.js'
import {fixture, makeTmp, sameBits} from '../formats/helpers.js'

describe('sparse convert', () => {
  const tmp = makeTmp('sparse-convert-')
  after(tmp.cleanup)
  const out = (name: string) => join(tmp.dir, name)
  const noTemps = () => expect(readdirSync(tmp.dir).filter((n) => n.endsWith('.tmp'))).to.deep.equal([])

  it('dense .npy -> CSR .npz (zeros dropped) -> dense .npy, bit for bit; --json result', async () => {
    const r = await runCli(['convert', fixture('dense-f32.npy'), '-o', out('w.npz'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json).to.deep.include({from: 'npy', to: 'csr', outputFormat: 'csr-npz', valuesGenerated: false})
    expect(json.tensors).to.have.length(1)
    expect(json.tensors[0]).to.deep.include({name: 'dense-f32', shape: [7, 96], dtype: 'f32', nnz: 405, rowOrder: false})
    expect(json.tensors[0].sparsity).to.be.closeTo(1 - 405 / 672, 1e-12)
    expect(json.bytes).to.be.greaterThan(0)
    const [m] = await readCsrInput(out('w.npz'))
    const src = await openTensorSource(fixture('dense-f32.npy'))
    const dense = await src.read('dense-f32')
    await src.close()
    const ref = denseToCsr(dense)
    expect(Array.from(m.csr.rowOffsets)).to.deep.equal(Array.from(ref.csr.rowOffsets))
    expect(sameBits(m.csr.values!, ref.csr.values!)).to.equal(true)

    const back = await runCli(['convert', out('w.npz'), '-o', out('w.npy')])
    expect(back.code, back.stderr).to.equal(0)
    expect(back.stdout).to.match(/-> .*w\.npy \(npy, 1 tensor/)
    const s2 = await openTensorSource(out('w.npy'))
    expect(sameBits((await s2.read('w')).data, dense.data)).to.equal(true)
    await s2.close()
    noTemps()
  })

  it('.smtx -> CSR .npz fills values from the seeded generator and says so; CSR -> .smtx', async () => {
    const r = await runCli(['convert', fixture('dlmc-rn50-0.98-initial_conv.smtx'), '-o', out('conv.npz'), '--dtype', 'f16', '--seed', '3', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json).to.deep.include({from: 'smtx', valuesGenerated: true, seed: 3})
    expect(json.notes.join('\n')).to.match(/the input has no values \(pattern only\).*seed 3/)
    const [m] = await readCsrInput(out('conv.npz'))
    expect(m.csr.dtype).to.equal('f16')
    expect(sameBits(m.csr.values!, randomValues(188, 'f16', 3))).to.equal(true)
    const s = await runCli(['convert', out('conv.npz'), '-o', out('conv.smtx')])
    expect(s.code, s.stderr).to.equal(0)
    const [orig] = await readCsrInput(fixture('dlmc-rn50-0.98-initial_conv.smtx'))
    const [again] = await readCsrInput(out('conv.smtx'))
    expect(Array.from(again.csr.columnIndices)).to.deep.equal(Array.from(orig.csr.columnIndices))
    expect(Array.from(again.csr.rowOffsets)).to.deep.equal(Array.from(orig.csr.rowOffsets))
  })

  it('changes the value dtype and keeps a stored row order', async () => {
    const src = await openTensorSource(fixture('dense-f32.npy'))
    const named = denseToCsr(await src.read('dense-f32'))
    await src.close()
    named.csr.rowIndices = Int32Array.from([2, 0, 1, 4, 5, 6, 3])
    await writeCsrNpz(named, out('ordered.npz'))
    const r = await runCli(['convert', out('ordered.npz'), '-o', out('ordered-bf16.npz'), '--dtype', 'bf16', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout).tensors[0]).to.deep.include({dtype: 'bf16', rowOrder: true})
    const [m] = await readCsrInput(out('ordered-bf16.npz'))
    expect(m.csr.dtype).to.equal('bf16')
    expect(Array.from(m.csr.rowIndices!)).to.deep.equal([2, 0, 1, 4, 5, 6, 3])
    // .smtx has no place for the order: the note says it was dropped.
    const s = await runCli(['convert', out('ordered.npz'), '-o', out('ordered.smtx')])
    expect(s.stdout).to.match(/row order was dropped/)
  })

  it('a multi-tensor file -> a directory of CSR files plus manifest.json; the directory reads back', async () => {
    const r = await runCli(['convert', fixture('multi-compressed.npz'), '-o', out('multi-dir'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json.outputFormat).to.equal('csr-dir')
    expect(json.tensors.map((t: {name: string}) => t.name)).to.deep.equal(['layers.0.weight', 'layers.0.bias', 'half'])
    expect(json.skipped.map((t: {name: string}) => t.name)).to.deep.equal(['steps'])
    const manifest = JSON.parse(readFileSync(join(out('multi-dir'), 'manifest.json'), 'utf8'))
    expect(manifest.tensors.map((t: {file: string}) => t.file)).to.deep.equal(['layers.0.weight.npz', 'layers.0.bias.npz', 'half.npz'])
    expect(manifest.tensors[2]).to.deep.include({name: 'half', dtype: 'f16', shape: [8, 8]})
    // Directory -> dense .npz restores the original shapes.
    const d = await runCli(['convert', out('multi-dir'), '-o', out('multi-back.npz'), '--to', 'dense'])
    expect(d.code, d.stderr).to.equal(0)
    const back = await openTensorSource(out('multi-back.npz'))
    const orig = await openTensorSource(fixture('multi-compressed.npz'))
    for (const t of orig.tensors) {
      const a = await orig.read(t.name)
      const b = await back.read(t.name)
      expect(b.shape, t.name).to.deep.equal(a.shape)
      expect(sameBits(a.data, b.data), t.name).to.equal(true)
    }
    await back.close()
    await orig.close()
    const one = await runCli(['convert', fixture('multi.npz'), '-o', out('one.npz')])
    expect(one.code).to.equal(2)
    expect(one.stderr).to.match(/holds 3 tensors; a CSR \.npz holds one.*directory/)
  })

  it('pipes: convert - -o - turns a .npy on stdin into a CSR .npz on stdout', async () => {
    const r = await runCli(['convert', '-', '-o', '-'], {input: readFileSync(fixture('dense-f32.npy'))})
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdoutBytes.subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04')
    expect(r.stderr).to.match(/stdin \(npy\) -> stdout \(csr-npz/)
    writeFileSync(out('piped.npz'), r.stdoutBytes)
    const [m] = await readCsrInput(out('piped.npz'))
    expect(m.csr.rowOffsets[7]).to.equal(405)
    const j = await runCli(['convert', '-', '-o', '-', '--json'], {input: readFileSync(fixture('dense-f32.npy'))})
    expect(j.code).to.equal(2)
    expect(JSON.parse(j.stdout).error.code).to.equal('json-with-stdout')
  })

  it('refuses to overwrite without --force (exit 2, file untouched); --force replaces', async () => {
    writeFileSync(out('exists.npz'), 'precious')
    const r = await runCli(['convert', fixture('dense-f32.npy'), '-o', out('exists.npz')])
    expect(r.code).to.equal(2)
    expect(r.stderr.trim().split('\n')).to.have.length(1)
    expect(r.stderr).to.match(/refusing to overwrite .*exists\.npz.*--force/)
    expect(readFileSync(out('exists.npz'), 'utf8')).to.equal('precious')
    const f = await runCli(['convert', fixture('dense-f32.npy'), '-o', out('exists.npz'), '--force'])
    expect(f.code, f.stderr).to.equal(0)
    expect((await readCsrInput(out('exists.npz')))[0].csr.rows).to.equal(7)
    // Onto the input: refused without --force; with it, safe (the rename happens last).
    const self = await runCli(['convert', out('exists.npz'), '-o', out('exists.npz'), '--dtype', 'f16'])
    expect(self.code).to.equal(2)
    expect(self.stderr).to.match(/refusing to overwrite the input/)
    const selfForce = await runCli(['convert', out('exists.npz'), '-o', out('exists.npz'), '--dtype', 'f16', '--force'])
    expect(selfForce.code, selfForce.stderr).to.equal(0)
    expect((await readCsrInput(out('exists.npz')))[0].csr.dtype).to.equal('f16')
  })

  it('bad inputs: exit 1 with one line and no output file; bad usage: exit 2', async () => {
    for (const [file, re] of [
      ['bad-truncated.npy', /truncated/],
      ['bad-int64.npy', /unsupported dtype int64/],
      ['bad-lying-header.safetensors', /lying header/],
    ] as const) {
      const target = out(`${file}.npz`)
      const r = await runCli(['convert', fixture(file), '-o', target])
      expect(r.code, file).to.equal(1)
      expect(r.stderr).to.match(re)
      expect(r.stderr.trim().split('\n'), file).to.have.length(1)
      expect(r.stderr).to.not.match(/\n\s+at /) // no stack trace
      expect(existsSync(target), file).to.equal(false)
    }
    const j = await runCli(['convert', fixture('bad-truncated.npy'), '-o', out('x.npz'), '--json'])
    expect(j.code).to.equal(1)
    expect(JSON.parse(j.stdout).error).to.deep.include({code: 'truncated', exitCode: 1})
    const missing = await runCli(['convert', out('missing.npy'), '-o', out('y.npz')])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/no such file/)
    const badTo = await runCli(['convert', fixture('dense-f32.npy'), '-o', out('z.txt')])
    expect(badTo.code).to.equal(2)
    const noDir = await runCli(['convert', fixture('dense-f32.npy'), '-o', join(tmp.dir, 'no', 'such', 'z.npz')])
    expect(noDir.code).to.equal(2)
    expect(noDir.stderr).to.match(/does not exist/)
    if (existsSync('/sys/kernel')) {
      const ro = await runCli(['convert', fixture('dense-f32.npy'), '-o', '/sys/kernel/sparse-test.npz'])
      expect(ro.code).to.equal(2)
      expect(ro.stderr).to.match(/permission denied/)
    }
    noTemps()
  })
})
