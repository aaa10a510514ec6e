import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {openTensorSource, readCsrInput, writeSafetensors} from '../../src/formats/index.js'
import {npyChunks} from '../../src/formats/npy.js'
import {runCli} from '../helpers/cli.js'
import {fixture, makeTmp, pyJson, requirePython} from '../formats/helpers.js'

/**
 * The definition, written independently in NumPy: order by (|w|, row-major index) with a
 * stable lexsort, prune the first round(S * n) (Python's round: half to even), never keep
 * zeros. Then scipy.sparse.load_npz must hold exactly those entries, bit for bit.
 */
const CHECK_PY = `
import sys, json
import numpy as np, scipy.sparse as sp
dense, out, S = sys.argv[1], sys.argv[2], float(sys.argv[3])
w = np.load(dense)
if w.dtype == np.float64: w = w.astype(np.float32)
w2 = w.reshape(w.shape[0], -1) if w.ndim > 1 else w.reshape(1, -1)
a = np.abs(w2).ravel().astype(np.float64)
n = a.size; k = round(S * n)
order = np.lexsort((np.arange(n), a))
keep = np.ones(n, dtype=bool); keep[order[:k]] = False; keep &= a != 0
keep = keep.reshape(w2.shape)
m = sp.load_npz(out)
z = np.load(out)
r, c = np.nonzero(keep)
mr = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
same = (m.shape == w2.shape and m.nnz == int(keep.sum()) and np.array_equal(mr, r) and np.array_equal(m.indices, c)
        and np.array_equal(m.data.view(np.uint16 if m.data.itemsize == 2 else np.uint32), w2[keep].view(np.uint16 if w2.itemsize == 2 else np.uint32)))
print(json.dumps({"same": bool(same), "nnz": int(m.nnz), "expected": int(keep.sum()), "dtype": str(m.dtype),
                  "members": sorted(z.files), "row_indices": z["row_indices"].tolist() if "row_indices" in z.files else None}))
`

describe('sparse prune', () => {
  const tmp = makeTmp('sparse-prune-')
  after(tmp.cleanup)
  const out = (name: string) => join(tmp.dir, name)
  const noTemps = () => expect(readdirSync(tmp.dir).filter((n) => n.startsWith('.'))).to.deep.equal([])

  it('prunes a .npy to a CSR .npz that scipy.sparse.load_npz opens with exactly the defined entries', async function () {
    const r = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.9', '-o', out('w.npz')])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stderr).to.equal('')
    expect(r.stdout).to.match(/dense-f32 +│ 7x96 +│ +67 │ +90\.03% │ +90\.03% │/)
    expect(r.stdout).to.match(/wrote .*w\.npz/)
    const [m] = await readCsrInput(out('w.npz'))
    expect(m.csr.rowOffsets[7]).to.equal(67) // 672 - round(0.9 * 672) = 672 - 605
    expect(m.csr.rowIndices).to.have.length(7)
    requirePython(this)
    for (const [file, s] of [['dense-f32.npy', '0.9'], ['dense-f16.npy', '0.5'], ['dense-f64.npy', '0.25']]) {
      const o = out(`${file}.npz`)
      const p = await runCli(['prune', fixture(file), '-s', s, '-o', o])
      expect(p.code, p.stderr).to.equal(0)
      const check = pyJson<{same: boolean; nnz: number; expected: number; dtype: string; members: string[]}>(CHECK_PY, [fixture(file), o, s])
      expect(check, file).to.deep.include({same: true})
      expect(check.members).to.include.members(['data', 'indices', 'indptr', 'shape', 'format', 'row_indices'])
      expect(check.dtype).to.equal(file === 'dense-f16.npy' ? 'float16' : 'float32')
    }
    noTemps()
  })

  it('--json prints the result object only: tensors[], skipped[], totals', async () => {
    const r = await runCli(['prune', fixture('multi.npz'), '-s', '0.5', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json).to.deep.include({input: fixture('multi.npz'), output: null, outputKind: null, scope: 'tensor', pattern: 'unstructured', sparsity: 0.5})
    expect(json.tensors.map((t: {name: string}) => t.name)).to.deep.equal(['layers.0.weight', 'half'])
    const w = json.tensors[0]
    for (const key of ['name', 'shape', 'nnz', 'sparsity', 'threshold', 'denseBytes', 'csrBytes', 'memorySaving', 'targetSparsity', 'rows', 'cols']) expect(w).to.have.property(key)
    expect(w.shape).to.deep.equal([32, 48])
    expect(w.denseBytes).to.deep.equal({f32: 32 * 48 * 4, f16: 32 * 48 * 2})
    expect(w.csrBytes.f32).to.equal(w.nnz * 8 + 33 * 4 + 32 * 4)
    expect(w.csrBytes.f16).to.equal(w.nnz * 4 + 33 * 4 + 32 * 4)
    expect(w.memorySaving.f32).to.be.closeTo(w.denseBytes.f32 / w.csrBytes.f32, 1e-12)
    expect(w.memorySaving.f16).to.be.closeTo(w.denseBytes.f16 / w.csrBytes.f16, 1e-12)
    expect(w.bitmapBytes).to.be.greaterThan(0)
    expect(w.memorySaving.bitmap).to.be.closeTo(w.denseBytes.f16 / w.bitmapBytes, 1e-12)
    expect(w.threshold).to.be.a('number').and.greaterThan(0)
    // ~20% zeros in the input: below the 50% target, so not over-sparse.
    expect(w.overSparse).to.equal(false)
    expect(w.nnz).to.equal(768)
    expect(json.skipped).to.deep.equal([
      {name: 'layers.0.bias', shape: [32], reason: '1-D tensor (bias or norm); --include-1d prunes it'},
      {name: 'steps', shape: [], reason: 'unsupported dtype int64 (not a float32/float16/float64 array)'},
    ])
    expect(json.totals).to.deep.include({tensors: 2, numel: 32 * 48 + 64, nnz: 768 + 32})
  })

  it('reports the tc form (16 x 32 CSR tiles) of what it keeps: the hand-sized 20 x 70 example, 92 bytes', async () => {
    // The nonzeros of test/sparse/tc-example.ts (its stored zero is a zero here, not kept: tile
    // (1, 1) holds 3 entries, still padded to 16 bytes), plus two small weights in the empty
    // tiles (0, 1) and (1, 0) that -s prunes: kept, they would add 16 bytes each (124).
    const w = new Float32Array(20 * 70)
    for (const [r, c] of [[0, 17], [2, 69], [3, 0], [3, 5], [3, 31], [15, 16], [19, 48], [19, 49], [19, 51]]) w[r * 70 + c] = 1
    w[5 * 70 + 40] = 1e-3
    w[17 * 70 + 3] = -1e-3
    const p = out('tc-example.npy')
    writeFileSync(p, Buffer.concat(npyChunks('<f4', [20, 70], w)))
    // round(0.9935 x 1400) = 1391 pruned: the 1389 zeros and the two small weights.
    const r = await runCli(['prune', p, '-s', '0.9935', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    const t = json.tensors[0]
    expect(t).to.deep.include({nnz: 9, twoFourBytes: null, tcBytes: 92})
    expect(t.memorySaving.tc).to.equal((20 * 70 * 2) / 92)
    expect(json.totals).to.deep.include({tcBytes: 92})
    expect(json.totals.memorySaving.tc).to.equal((20 * 70 * 2) / 92)
    const h = await runCli(['prune', p, '-s', '0.9935'])
    expect(h.code, h.stderr).to.equal(0)
    expect(h.stdout).to.match(/│ +bitmap f16 │ 2:4 f16 │ +tc f16 │\n/)
    expect(h.stdout).to.match(/│ +n\/a │ 92 B \(30\.43x\) │\n/)
  })

  it('several tensors make a directory with manifest.json; global scope and N:M', async () => {
    const r = await runCli(['prune', fixture('tiny-mlp.safetensors'), '-s', '0.8', '--scope', 'global', '-o', out('mlp'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const json = JSON.parse(r.stdout)
    expect(json.outputKind).to.equal('dir')
    expect(json.tensors).to.have.length(3)
    expect(json.skipped.map((s: {name: string}) => s.name)).to.deep.equal(['layers.0.bias', 'layers.1.bias', 'layers.2.bias'])
    expect(json.totals.threshold).to.be.a('number')
    expect(json.tensors.every((t: {threshold: number}) => t.threshold === json.totals.threshold)).to.equal(true)
    const total = 128 * 64 + 64 * 128 + 96 * 64
    expect(json.totals.nnz).to.equal(total - Math.round(0.8 * total))
    // The totals of the tc form: the tensors' sums, against the sum of dense f16.
    const tc = json.tensors.reduce((a: number, t: {tcBytes: number}) => a + t.tcBytes, 0)
    expect([json.totals.tcBytes, json.totals.memorySaving.tc]).to.deep.equal([tc, (total * 2) / tc])
    const manifest = JSON.parse(readFileSync(out('mlp/manifest.json'), 'utf8'))
    expect(manifest.tensors.map((t: {name: string; file: string}) => [t.name, t.file])).to.deep.equal([
      ['layers.0.weight', 'layers.0.weight.npz'],
      ['layers.1.weight', 'layers.1.weight.npz'],
      ['layers.2.weight', 'layers.2.weight.npz'],
    ])
    const back = await readCsrInput(out('mlp'))
    expect(back.map((b) => b.csr.rowOffsets[b.csr.rows])).to.deep.equal(json.tensors.map((t: {nnz: number}) => t.nnz))

    const nm = await runCli(['prune', fixture('tiny-mlp.safetensors'), '--pattern', '2:4', '--include', 'layers\\.[01]\\.', '--no-reorder', '-o', out('nm'), '--json'])
    expect(nm.code, nm.stderr).to.equal(0)
    const nmj = JSON.parse(nm.stdout)
    expect(nmj.sparsity).to.equal(0.5)
    expect(nmj.tensors.map((t: {name: string; nnz: number}) => [t.name, t.nnz])).to.deep.equal([['layers.0.weight', 128 * 32], ['layers.1.weight', 64 * 64]])
    // The 2:4 form's size: 576 bytes per 16 x 32 tile (layers.0: 128 x 64, 8 x 2 tiles; layers.1: 64 x 128, 4 x 4), against dense f16.
    expect(nmj.tensors.map((t: {twoFourBytes: number}) => t.twoFourBytes)).to.deep.equal([16 * 576, 16 * 576])
    expect(nmj.tensors[0].memorySaving.twoFour).to.equal((128 * 64 * 2) / (16 * 576))
    expect(nmj.totals.twoFourBytes).to.equal(32 * 576)
    expect(json.tensors.every((t: {twoFourBytes: number | null}) => t.twoFourBytes === null)).to.equal(true) // unstructured 90 %: not 2:4
    const [first] = await readCsrInput(out('nm'))
    expect(first.csr.rowIndices).to.equal(undefined)
    // Every group of 4 keeps exactly 2.
    const cols = first.csr.columnIndices
    for (let r0 = 0; r0 < first.csr.rows; r0++) {
      const groups = new Map<number, number>()
      for (let i = first.csr.rowOffsets[r0]; i < first.csr.rowOffsets[r0 + 1]; i++) groups.set(cols[i] >> 2, (groups.get(cols[i] >> 2) ?? 0) + 1)
      expect([...groups.values()].every((c) => c === 2) && groups.size === 16).to.equal(true)
    }
  })

  it('pipes: prune - -s 0.9 -o - < w.npy | info -', async () => {
    const npy = readFileSync(fixture('dense-f32.npy'))
    const p = await runCli(['prune', '-', '-s', '0.9', '-o', '-'], {input: npy})
    expect(p.code, p.stderr).to.equal(0)
    expect(p.stdoutBytes.subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04')
    expect(p.stderr).to.match(/wrote the CSR \.npz to stdout/)
    const info = await runCli(['info', '-', '--json'], {input: p.stdoutBytes})
    expect(info.code, info.stderr).to.equal(0)
    const ij = JSON.parse(info.stdout).files[0]
    expect(ij.tensors[0]).to.deep.include({nnz: 67, shape: [7, 96], rowOrder: true})
  })

  it('over-sparse input and skipped tensors are reported in the human output', async () => {
    const r = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.1'])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.match(/dense-f32 \*/)
    expect(r.stdout).to.match(/already had more zeros than the target/)
    expect(r.stdout).to.match(/no -o given: report only, nothing written/)
    const m = await runCli(['prune', fixture('multi.npz'), '-s', '0.5'])
    expect(m.stdout).to.match(/skipped layers\.0\.bias \[32\]: 1-D tensor/)
    expect(m.stdout).to.match(/skipped steps \[\]: unsupported dtype int64/)
  })

  it('bad usage exits 2 with one line and writes nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['-s', '1'], /sparsity must be a number in \[0, 1\), got 1/],
      [['-s', '-0.1'], /sparsity must be a number in \[0, 1\)/],
      [['-s', 'abc'], /got 'abc'/],
      [[], /sparsity is required/],
      [['-s', '0.5', '--pattern', '3:2'], /pattern 3:2 is invalid/],
      [['--pattern', '2:4', '-s', '0.9'], /contradicts/],
      [['-s', '0.5', '--include', '(('], /not a valid regular expression/],
    ]
    // Independent runs: in parallel, to keep the suite quick.
    const results = await Promise.all(cases.map(([flags]) => runCli(['prune', fixture('dense-f32.npy'), ...flags, '-o', out('never.npz')])))
    for (const [i, [flags, re]] of cases.entries()) {
      const r = results[i]
      expect(r.code, flags.join(' ')).to.equal(2)
      expect(r.stderr.trim().split('\n'), flags.join(' ')).to.have.length(1)
      expect(r.stderr, flags.join(' ')).to.match(re)
      expect(r.stdout).to.equal('')
    }
    // Several tensors cannot go to stdout, nor to a .npz name.
    const s = await runCli(['prune', fixture('tiny-mlp.safetensors'), '-s', '0.5', '-o', '-'])
    expect(s.code).to.equal(2)
    expect(s.stderr).to.match(/-o - \(stdout\) takes exactly one/)
    const z = await runCli(['prune', fixture('tiny-mlp.safetensors'), '-s', '0.5', '-o', out('mlp.npz')])
    expect(z.code).to.equal(2)
    expect(existsSync(out('never.npz')) || existsSync(out('mlp.npz'))).to.equal(false)
    const js = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', '-', '--json'])
    expect(js.code).to.equal(2)
    expect(JSON.parse(js.stdout).error.message).to.match(/--json and -o - both write to stdout/)
    // Under --json the error is a JSON object on stdout, same exit code.
    const j = await runCli(['prune', fixture('dense-f32.npy'), '-s', '2', '--json'])
    expect(j.code).to.equal(2)
    expect(JSON.parse(j.stdout).error).to.deep.include({code: 'bad-sparsity', exitCode: 2})
    noTemps()
  })

  it('refuses to overwrite without --force (exit 2, file untouched); --force replaces it', async () => {
    writeFileSync(out('exists.npz'), 'keep me')
    const r = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', out('exists.npz')])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.match(/refusing to overwrite .*exists\.npz.*--force/)
    expect(readFileSync(out('exists.npz'), 'utf8')).to.equal('keep me')
    const f = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', out('exists.npz'), '--force'])
    expect(f.code, f.stderr).to.equal(0)
    expect((await readCsrInput(out('exists.npz')))[0].csr.rows).to.equal(7)
  })

  it('bad input exits 1 (NaN weights, corrupt file) and leaves no output; missing file and unwritable output exit 2', async () => {
    const nan = await runCli(['prune', fixture('nan.npy'), '-s', '0.5', '-o', out('nan.npz')])
    expect(nan.code).to.equal(1)
    expect(nan.stderr.trim().split('\n')).to.have.length(1)
    expect(nan.stderr).to.match(/tensor 'nan' has 2 NaN and 1 infinite weights \(3 of 32\)/)
    expect(existsSync(out('nan.npz'))).to.equal(false)

    const bad = await runCli(['prune', fixture('bad-truncated.npy'), '-s', '0.5', '-o', out('bad.npz')])
    expect(bad.code).to.equal(1)
    expect(bad.stderr).to.match(/truncated/)
    expect(existsSync(out('bad.npz'))).to.equal(false)

    const missing = await runCli(['prune', out('no-such.npy'), '-s', '0.5'])
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/no-such\.npy/)
    expect(missing.stderr).not.to.match(/\n\s+at /) // no stack trace

    const notDir = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', join(fixture('dense-f32.npy'), 'out.npz')])
    expect(notDir.code).to.equal(2)
    expect(notDir.stderr).to.match(/cannot write .*is not an existing folder/)
    // /sys refuses new files even to root.
    const unwritable = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', '/sys/sparse-test-out.npz'])
    expect(unwritable.code).to.equal(2)
    expect(unwritable.stderr).to.match(/cannot write \/sys\/sparse-test-out\.npz: permission denied/)
    if (process.getuid?.() !== 0) {
      mkdirSync(out('ro'))
      chmodSync(out('ro'), 0o555)
      const ro = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '-o', out('ro/w.npz')])
      chmodSync(out('ro'), 0o755)
      expect(ro.code).to.equal(2)
      expect(ro.stderr).to.match(/permission denied/)
    }

    // A NaN in the second of several tensors: the directory never appears.
    const ok = new Float32Array(64).fill(1)
    const withNan = new Float32Array(64).fill(2)
    withNan[5] = Number.NaN
    await writeSafetensors(
      [
        {name: 'a', shape: [8, 8], dtype: 'f32', data: ok},
        {name: 'b', shape: [8, 8], dtype: 'f32', data: withNan},
      ],
      out('two.safetensors'),
    )
    const two = await runCli(['prune', out('two.safetensors'), '-s', '0.5', '-o', out('two-csr')])
    expect(two.code).to.equal(1)
    expect(two.stderr).to.match(/tensor 'b' has 1 NaN weight/)
    expect(existsSync(out('two-csr'))).to.equal(false)
    noTemps()
  })

  it('keeps the input dtype; --dtype converts the stored values', async () => {
    const r = await runCli(['prune', fixture('dense-f32.npy'), '-s', '0.5', '--dtype', 'bf16', '-o', out('bf.npz'), '--json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(JSON.parse(r.stdout).tensors[0].dtype).to.equal('bf16')
    const [m] = await readCsrInput(out('bf.npz'))
    expect(m.csr.dtype).to.equal('bf16')
    const src = await openTensorSource(fixture('dense-f64.npy'))
    expect(src.tensors[0].dtype).to.equal('f64')
    await src.close()
    const d = await runCli(['prune', fixture('dense-f64.npy'), '-s', '0.5', '-o', out('f64.npz'), '--json'])
    expect(JSON.parse(d.stdout).tensors[0]).to.deep.include({dtype: 'f32', shape: [5, 3, 4], rows: 5, cols: 12})
  })
})
