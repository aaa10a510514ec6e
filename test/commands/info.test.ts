import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {jsonText} from '../../src/cli/base-command.js'
import {renderInfo} from '../../src/commands/info.js'
import {escapeReport} from '../../src/formats/limits.js'
import {inspectInputs, writeCsrNpz} from '../../src/formats/index.js'
import {buildManySafetensors, buildSafetensors} from '../fuzz/builders.js'
import {runCli} from '../helpers/cli.js'
import {fixture, makeTmp} from '../formats/helpers.js'
import {TC_EXAMPLE_BYTES, tcExample} from '../sparse/tc-example.js'

describe('sparse info', () => {
  const tmp = makeTmp('sparse-info-')
  after(tmp.cleanup)

  it('a dense .npy: stats, histogram and bytes in the human report', async () => {
    const r = await runCli(['info', fixture('dense-f32.npy')])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/dense-f32 {2}\[7, 96\] {2}f32 {2}dense/)
    expect(r.stdout).to.match(/nnz 405 of 672 {2}sparsity 39\.73%/)
    expect(r.stdout).to.match(/row lengths {2}min 0 {2}mean 57\.86 {2}max 73/)
    expect(r.stdout).to.match(/row-length histogram/)
    expect(r.stdout).to.match(/bytes f32 {2}dense 2\.6 KiB {2}CSR 3\.2 KiB \(saving 0\.82x\)/)
    // fp16 against dense fp16 (1.3 KiB), not dense fp32; the bitmap form beside CSR; 2:4 only for 2:4 matrices.
    expect(r.stdout).to.match(/bytes f16 {2}dense 1\.3 KiB {2}CSR 1\.6 KiB \(saving 0\.81x, 16-bit indices\) {2}bitmap 1\.1 KiB \(saving 1\.19x\) {2}2:4 n\/a \(not 2:4\)/)
    expect(r.stdout).to.match(/memory saving = bytes of the dense matrix in the same value dtype \/ bytes of the form/)
    expect(r.stdout).to.match(/row order {2}none/)
  })

  it('--json prints only the result object: {files: [{file, format, tensors, skipped, totals}], totals}', async () => {
    const r = await runCli(['info', fixture('dense-f32.npy'), '--json'])
    expect(r.code).to.equal(0)
    const report = JSON.parse(r.stdout)
    expect(Object.keys(report)).to.deep.equal(['files', 'totals'])
    const json = report.files[0]
    expect(Object.keys(json)).to.deep.equal(['file', 'format', 'tensors', 'skipped', 'totals'])
    expect(json.format).to.equal('npy')
    expect(json.totals).to.deep.equal({tensors: 1, numel: 672, nnz: 405, sparsity: 1 - 405 / 672})
    expect(report.totals).to.deep.equal(json.totals)
    const t = json.tensors[0]
    expect(t).to.deep.include({name: 'dense-f32', shape: [7, 96], rows: 7, cols: 96, dtype: 'f32', storage: 'dense', nnz: 405, numel: 672, rowOrder: false, indices16: true})
    expect(t.rowLengths.min).to.equal(0)
    expect(t.rowLengths.max).to.equal(73)
    expect(t.rowLengths.mean).to.be.closeTo(405 / 7, 1e-12)
    expect(t.histogram.reduce((a: number, b: {count: number}) => a + b.count, 0)).to.equal(7)
    expect(t.denseBytes).to.deep.equal({f32: 672 * 4, f16: 672 * 2})
    expect(t.csrBytes).to.deep.equal({f32: 405 * 8 + 8 * 4, f16: 405 * 4 + 8 * 4})
    expect(t.memorySaving.f32).to.be.closeTo((672 * 4) / (405 * 8 + 32), 1e-12)
    // The tensor-core forms hold 16-bit values whatever the input's dtype: against dense f16.
    expect(Object.keys(t)).to.include.members(['bitmapBytes', 'twoFourBytes', 'tcBytes'])
    expect(t.memorySaving.tc).to.equal((672 * 2) / t.tcBytes)
    expect(r.stderr).to.equal('')
  })

  it('every tensor of a safetensors model; skipped dtypes listed', async () => {
    const r = await runCli(['info', fixture('mixed.safetensors'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout).files[0]
    expect(json.tensors.map((t: {name: string; dtype: string}) => `${t.name}:${t.dtype}`)).to.deep.equal(['a.f32:f32', 'b.f16:f16', 'c.bf16:bf16'])
    expect(json.skipped[0]).to.deep.include({name: 'd.i64', dtype: 'I64'})
    const h = await runCli(['info', fixture('tiny-mlp.safetensors'), '--long'])
    expect(h.stdout).to.match(/6 tensors/)
    expect(h.stdout).to.match(/layers\.2\.weight {2}\[96, 64\]/)
  })

  describe('the report is made tensor by tensor: the same text as the library result, rendered whole', () => {
    // What the command printed when it rendered inspectInputs() in one string (before it was
    // streamed for files of a million tensors): the text report and jsonText of the result.
    const cases: Array<[string, () => string[]]> = [
      ['one .npy', () => [fixture('dense-f32.npy')]],
      ['a safetensors with a skipped tensor', () => [fixture('mixed.safetensors')]],
      ['two files and a folder (recursively)', () => [fixture('scipy-csr.npz'), fixture('mixed.safetensors'), fixture('hf-tiny')]],
      ['one folder of two files', () => [fixture('hf-tiny')]],
      ['a file with no tensors', () => [join(tmp.dir, 'none.safetensors')]],
      ['names with control characters, a file of 3000 tensors', () => [join(tmp.dir, 'odd.safetensors'), join(tmp.dir, 'many.safetensors')]],
    ]
    before(() => {
      writeFileSync(join(tmp.dir, 'none.safetensors'), buildSafetensors('{}', new Uint8Array(0)).bytes)
      const odd = JSON.stringify({'\u001b[31mred\nline\u009b\u2028': {dtype: 'F32', shape: [1, 2], data_offsets: [0, 8]}, 'i\u0085': {dtype: 'I64', shape: [1], data_offsets: [8, 16]}})
      writeFileSync(join(tmp.dir, 'odd.safetensors'), buildSafetensors(odd, new Uint8Array([0, 0, 128, 63, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])).bytes)
      writeFileSync(join(tmp.dir, 'many.safetensors'), buildManySafetensors({n: 3000, every: 7}).bytes)
    })
    for (const [what, inputs] of cases) {
      it(`${what}: text and --json`, async () => {
        const paths = inputs()
        const report = await inspectInputs(paths)
        const json = await runCli(['info', ...paths, '--json'])
        expect(json.code, json.stderr).to.equal(0)
        expect(json.stdout).to.equal(jsonText(report) + '\n')
        // The long form (a model's default is one line per tensor: see wording.test.ts).
        const text = await runCli(['info', ...paths, '--long'])
        expect(text.code, text.stderr).to.equal(0)
        expect(text.stdout).to.equal(escapeReport(report.files.map(renderInfo).join('\n')))
      })
    }
  })

  it('CSR inputs: SciPy .npz, .smtx (pattern), a stored row order, a directory', async () => {
    const s = JSON.parse((await runCli(['info', fixture('scipy-csr.npz'), '--json'])).stdout).files[0]
    expect(s.format).to.equal('csr-npz')
    expect(s.tensors[0]).to.deep.include({storage: 'csr', nnz: 323, rowOrder: false})
    expect(s.tensors[0].rowLengths.min).to.equal(0)
    const d = JSON.parse((await runCli(['info', fixture('dlmc-rn50-0.98-initial_conv.smtx'), '--json'])).stdout).files[0]
    expect(d.tensors[0]).to.deep.include({dtype: 'pattern', nnz: 188, rows: 64, cols: 147})
    const p = join(tmp.dir, 'ordered.npz')
    await writeCsrNpz({name: 'o', shape: [2, 3], csr: {rows: 2, cols: 3, rowOffsets: Int32Array.of(0, 1, 3), columnIndices: Int32Array.of(1, 0, 2), values: Float32Array.of(1, 2, 3), dtype: 'f32', rowIndices: Int32Array.of(1, 0)}}, p)
    const o = await runCli(['info', p])
    expect(o.stdout).to.match(/row order {2}stored/)
    const oj = JSON.parse((await runCli(['info', p, '--json'])).stdout).files[0]
    expect(oj.tensors[0].rowOrder).to.equal(true)
    expect(oj.tensors[0].csrBytes.f32).to.equal(3 * 8 + 3 * 4 + 2 * 4)
    const dir = join(tmp.dir, 'mlp')
    expect((await runCli(['convert', fixture('tiny-mlp.safetensors'), '-o', dir])).code).to.equal(0)
    const dj = JSON.parse((await runCli(['info', dir, '--json'])).stdout).files[0]
    expect(dj.format).to.equal('csr-dir')
    expect(dj.tensors).to.have.length(6)
  })

  it('the tc form (16 x 32 CSR tiles) beside bitmap and 2:4: the hand-sized 20 x 70 example is 92 bytes', async () => {
    // test/sparse/tc-example.ts: 10 stored f16 entries (one a stored zero, counted all the same).
    const p = join(tmp.dir, 'tc-example.npz')
    await writeCsrNpz({name: 'tc', shape: [20, 70], csr: tcExample()}, p)
    const j = await runCli(['info', p, '--json'])
    expect(j.code, j.stderr).to.equal(0)
    const t = JSON.parse(j.stdout).files[0].tensors[0]
    expect(t).to.deep.include({dtype: 'f16', nnz: 10, twoFourBytes: null, tcBytes: TC_EXAMPLE_BYTES})
    expect(t.memorySaving.tc).to.equal((20 * 70 * 2) / 92)
    const r = await runCli(['info', p])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/ {2}bitmap \S+ B \(saving [\d.]+x\) {2}2:4 n\/a \(not 2:4\) {2}tc 92 B \(saving 30\.43x\)\n/)
  })

  it('reads stdin: info - (a .npy, or a CSR .npz piped from convert)', async () => {
    const r = await runCli(['info', '-', '--json'], {input: readFileSync(fixture('dense-f16.npy'))})
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout).files[0]).to.deep.include({file: '-', format: 'npy'})
    const c = await runCli(['convert', '-', '-o', '-'], {input: readFileSync(fixture('dense-f32.npy'))})
    const i = await runCli(['info', '-', '--json'], {input: c.stdoutBytes})
    expect(JSON.parse(i.stdout).files[0].tensors[0]).to.deep.include({name: 'stdin', storage: 'csr', nnz: 405})
  })

  it('errors: bad data exit 1, missing file exit 2, JSON error object under --json', async () => {
    const bad = await runCli(['info', fixture('bad-int64.npy')])
    expect(bad.code).to.equal(1)
    expect(bad.stderr).to.match(/^error: .*unsupported dtype int64/)
    expect(bad.stdout).to.equal('')
    const j = await runCli(['info', fixture('bad-truncated.npy'), '--json'])
    expect(j.code).to.equal(1)
    expect(JSON.parse(j.stdout).error.code).to.equal('truncated')
    const missing = await runCli(['info', join(tmp.dir, 'nope.npy')])
    expect(missing.code).to.equal(2)
    const nan = await runCli(['info', fixture('nan.npy'), '--json'])
    expect(nan.code).to.equal(0) // info describes NaN tensors; pruning refuses them
    expect(JSON.parse(nan.stdout).files[0].tensors[0].nnz).to.equal(32)
  })
})
