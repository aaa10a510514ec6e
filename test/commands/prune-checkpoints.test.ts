/**
 * `sparse prune` on the checkpoints users hold and back into their formats: --format dense,
 * -o/--format agreement, --sparsity-map recipes, global scope's layer collapse and floor.
 */
import {expect} from 'chai'
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {openTensorSource, readCsrInput} from '../../src/formats/index.js'
import type {DenseTensor} from '../../src/types.js'
import {fixture, makeTmp} from '../formats/helpers.js'
import {runCli} from '../helpers/cli.js'

async function readAll(path: string): Promise<Map<string, DenseTensor>> {
  const src = await openTensorSource(path)
  const out = new Map<string, DenseTensor>()
  try {
    for (const t of src.tensors) {
      const x = await src.read(t.name)
      out.set(t.name, {...x, data: x.data.slice()})
    }
  } finally {
    await src.close()
  }
  return out
}

/** Every file under `dir` with its contents, for a before/after comparison. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const e of readdirSync(dir, {withFileTypes: true, recursive: true})) {
    if (e.isFile()) out[join(e.parentPath, e.name)] = readFileSync(join(e.parentPath, e.name), 'utf8')
  }
  return out
}

/** Every entry of `out` equals `input` or is zero; returns the count of nonzeros. */
function maskedOf(input: DenseTensor, out: DenseTensor): number {
  expect(out.dtype).to.equal(input.dtype)
  expect(out.shape).to.deep.equal(input.shape)
  let nz = 0
  for (let i = 0; i < input.data.length; i++) {
    if (out.data[i] !== 0) {
      expect(out.data[i], `${input.name}[${i}]`).to.equal(input.data[i])
      nz++
    }
  }
  return nz
}

describe('sparse prune: checkpoints in, usable models out', function () {
  this.timeout(120_000)
  const tmp = makeTmp('sparse-ckpt-cmd-')
  after(() => tmp.cleanup())

  it('--format dense on .safetensors: the same names, order, metadata and dtypes; pruned weights zero, others unchanged', async () => {
    const out = join(tmp.dir, 'mlp-masked.safetensors')
    const r = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.75', '--format', 'dense', '-o', out, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const j = JSON.parse(r.stdout)
    expect(j).to.include({outputKind: 'dense', outputFormat: 'safetensors', output: out})
    const a = await readAll(fixture('tiny-mlp.safetensors'))
    const b = await readAll(out)
    expect([...b.keys()]).to.deep.equal([...a.keys()])
    for (const t of j.tensors) expect(maskedOf(a.get(t.name)!, b.get(t.name)!)).to.equal(t.nnz)
    for (const s of j.skipped) expect([...b.get(s.name)!.data]).to.deep.equal([...a.get(s.name)!.data])
  })

  it('--format dense on a torch.save file: the pickle is copied unchanged, storages masked, tied weights follow', async () => {
    const out = join(tmp.dir, 'sd-masked.pt')
    const r = await runCli(['prune', 'fixtures/torch-state-dict.pt', '-s', '0.5', '--format', 'dense', '-o', out])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stdout).to.include(`wrote ${out} (the masked model, torch.save file)`)
    expect(r.stdout).to.match(/skipped lm_head\.weight \[10, 12\]: tied to emb\.weight/)
    const a = await readAll(fixture('torch-state-dict.pt'))
    const b = await readAll(out)
    expect([...b.keys()]).to.deep.equal([...a.keys()])
    for (const name of ['fc1.weight', 'fc2.weight', 'emb.weight', 'conv.weight', 'attn.q.weight', 'attn.k.weight']) {
      expect(maskedOf(a.get(name)!, b.get(name)!), name).to.equal(Math.round(a.get(name)!.data.length / 2))
    }
    expect([...b.get('fc1.bias')!.data]).to.deep.equal([...a.get('fc1.bias')!.data])
  })

  it('--format dense from stdin: the same file as from the path (regression: masking wrote into the memoised stdin)', async () => {
    const fromPath = join(tmp.dir, 'p.pt')
    const fromStdin = join(tmp.dir, 's.pt')
    expect((await runCli(['prune', 'fixtures/torch-state-dict.pt', '-s', '0.5', '--format', 'dense', '-o', fromPath])).code).to.equal(0)
    const r = await runCli(['prune', '-', '-s', '0.5', '--format', 'dense', '-o', fromStdin], {input: readFileSync(fixture('torch-state-dict.pt'))})
    expect(r.code, r.stderr).to.equal(0)
    expect(readFileSync(fromStdin).equals(readFileSync(fromPath))).to.equal(true)
  })

  it('--format dense on a Hugging Face folder writes a folder: same shards and index, config copied; global scope across shards', async () => {
    const out = join(tmp.dir, 'hf-pruned')
    const r = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--scope', 'global', '--min-density', '0.1', '--include-embeddings', '--format', 'dense', '-o', out, '--json'])
    expect(r.code, r.stderr).to.equal(0)
    expect(readdirSync(out).sort()).to.deep.equal(['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json'])
    expect(readFileSync(join(out, 'model.safetensors.index.json'), 'utf8')).to.equal(readFileSync(fixture('hf-tiny/model.safetensors.index.json'), 'utf8'))
    const j = JSON.parse(r.stdout)
    expect(j.totals.numel).to.equal(2816)
    const a = await readAll(fixture('hf-tiny'))
    const b = await readAll(out)
    for (const t of j.tensors) expect(maskedOf(a.get(t.name)!, b.get(t.name)!)).to.equal(t.nnz)
    expect([...b.get('model.layers.0.input_layernorm.weight')!.data]).to.deep.equal([...a.get('model.layers.0.input_layernorm.weight')!.data])
  })

  it('--force never deletes a folder holding files this output would not rewrite (issue 21: data loss)', async () => {
    // A user's folder that happens to hold a model file: before the fix, --force deleted it
    // recursively, with important.txt and sub/thesis.tex.
    const victim = join(tmp.dir, 'victim')
    mkdirSync(join(victim, 'sub'), {recursive: true})
    writeFileSync(join(victim, 'model.safetensors'), 'x')
    writeFileSync(join(victim, 'important.txt'), 'keep me')
    writeFileSync(join(victim, 'sub', 'thesis.tex'), 'keep me too')
    const before = snapshot(victim)
    // (A single .safetensors input makes a file: a folder for -o is refused for its name.)
    for (const [input, why] of [
      ['fixtures/hf-tiny', /refusing to replace .*victim: it holds 3 entries this output would not rewrite \(.*"important\.txt"/],
      ['fixtures/tiny-mlp.safetensors', /but -o .*victim has no extension/],
    ] as const) {
      const r = await runCli(['prune', input, '-s', '0.5', '--format', 'dense', '-o', victim, '--force'])
      expect(r.code, `${input}: ${r.stderr}`).to.equal(2)
      expect(r.stderr).to.match(why)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
      expect(snapshot(victim), input).to.deep.equal(before)
    }
    // Run from par/child with -o par: the current folder's parent is never replaced, even
    // when it holds nothing but files the output would rewrite.
    const par = join(tmp.dir, 'par')
    mkdirSync(join(par, 'child'), {recursive: true})
    writeFileSync(join(par, 'model.safetensors.index.json'), '{}')
    const fromChild = await runCli(['prune', join(process.cwd(), 'fixtures/hf-tiny'), '-s', '0.5', '--format', 'dense', '-o', par, '--force'], {cwd: join(par, 'child')})
    expect(fromChild.code, fromChild.stderr).to.equal(2)
    expect(existsSync(join(par, 'child'))).to.equal(true)
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([])
  })

  it('--force replaces a model folder this output rewrites whole', async () => {
    const out = join(tmp.dir, 'hf-again')
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['prune', 'fixtures/hf-tiny', '-s', String(0.5 + i * 0.25), '--format', 'dense', '-o', out, '--force'])
      expect(r.code, r.stderr).to.equal(0)
    }
    expect(readdirSync(out).sort()).to.deep.equal(['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'model.safetensors.index.json'])
  })

  it('-o must agree with --format: a dense name for CSR, or a foreign extension for dense, is exit 2 and writes nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['prune', 'fixtures/dense-f32.npy', '-s', '0.5', '-o', join(tmp.dir, 'x.npy')], /-o .*x\.npy names a dense \.npy file, but the result is CSR \(a SciPy \.npz\)/],
      [['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.5', '-o', join(tmp.dir, 'x.safetensors')], /but the result is CSR \(a directory of SciPy \.npz files\)/],
      [['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.5', '--format', 'dense', '-o', join(tmp.dir, 'x.npz')], /--format dense writes the input's own format \(safetensors\), but -o .* names a \.npz file/],
      [['prune', 'fixtures/hf-tiny', '-s', '0.5', '--format', 'dense', '-o', join(tmp.dir, 'x.safetensors')], /a model folder writes a folder/],
      [['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.5', '--format', 'dense', '--dtype', 'f16', '-o', join(tmp.dir, 'y.safetensors')], /--format dense keeps the input's dtype/],
    ]
    for (const [args, pattern] of cases) {
      const r = await runCli(args)
      expect(r.code, args.join(' ')).to.equal(2)
      expect(r.stderr).to.match(pattern)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
    }
    expect(readdirSync(tmp.dir).filter((f) => /^(x|y)\./.test(f) || f.endsWith('.tmp'))).to.deep.equal([])
  })

  it('--value-dtype f32 (alias of --dtype) writes float32 CSR values, which SciPy can densify', async () => {
    const out = join(tmp.dir, 'h.npz')
    const r = await runCli(['prune', 'fixtures/dense-f16.npy', '-s', '0.5', '--value-dtype', 'f32', '-o', out])
    expect(r.code, r.stderr).to.equal(0)
    const [m] = await readCsrInput(out)
    expect(m.csr.dtype).to.equal('f32')
    const half = await runCli(['prune', 'fixtures/dense-f16.npy', '-s', '0.5', '-o', join(tmp.dir, 'h16.npz')])
    expect(half.stdout).to.match(/note: the CSR values are 16-bit: SciPy cannot call toarray\(\) on float16/)
  })

  it('--sparsity-map (JSON and YAML): first match wins, unmatched skipped or given -s', async () => {
    const json = join(tmp.dir, 'recipe.json')
    writeFileSync(json, JSON.stringify({'layers.0.weight': 0.9, 're:layers\\.[12]\\.weight': 0.5, 'layers.*': 0.1}))
    const yaml = join(tmp.dir, 'recipe.yaml')
    writeFileSync(yaml, "# a recipe\n- pattern: layers.0.weight\n  sparsity: 0.9\n- {pattern: 're:layers\\.[12]\\.weight', sparsity: 0.5}\n")
    const a = JSON.parse((await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '--sparsity-map', json, '--json'])).stdout)
    expect(a.sparsity).to.equal(null)
    // round(S x numel) / numel: 0.9 of 8192 weights is 7373.
    expect(a.tensors.map((t: {name: string; targetSparsity: number; numel: number; rule: string}) => [t.name, Math.round(t.targetSparsity * t.numel), t.rule])).to.deep.equal([
      ['layers.0.weight', 7373, 'layers.0.weight'],
      ['layers.1.weight', 4096, 're:layers\\.[12]\\.weight'],
      ['layers.2.weight', 3072, 're:layers\\.[12]\\.weight'],
    ])
    const y = JSON.parse((await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '--sparsity-map', yaml, '--include-1d', '--json'])).stdout)
    expect(y.tensors.map((t: {name: string}) => t.name)).to.deep.equal(['layers.0.weight', 'layers.1.weight', 'layers.2.weight'])
    expect(y.skipped.filter((s: {reason: string}) => /no --sparsity-map pattern/.test(s.reason))).to.have.length(3)
    const withS = JSON.parse((await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '--sparsity-map', yaml, '-s', '0.25', '--include-1d', '--json'])).stdout)
    expect(withS.tensors).to.have.length(6)
    expect(withS.tensors.find((t: {name: string}) => t.name === 'layers.0.bias').targetSparsity).to.equal(0.25)
  })

  it('a bad sparsity map, or one with --scope global, is a one-line usage error (exit 2)', async () => {
    const bad = join(tmp.dir, 'bad.json')
    writeFileSync(bad, '{"layers.*": 1.5}')
    const notJson = join(tmp.dir, 'bad2.json')
    writeFileSync(notJson, '{layers: 0.5')
    const badYaml = join(tmp.dir, 'bad.yaml')
    writeFileSync(badYaml, 'a: [0.5\n')
    const cases: [string[], RegExp][] = [
      [['--sparsity-map', bad], /the sparsity of "layers\.\*" must be in \[0, 1\), got 1\.5/],
      [['--sparsity-map', notJson], /is not valid JSON/],
      [['--sparsity-map', badYaml], /is not valid YAML/],
      [['--sparsity-map', join(tmp.dir, 'missing.json')], /--sparsity-map: no such file: .*missing\.json/],
    ]
    writeFileSync(join(tmp.dir, 'ok.json'), '{"*": 0.5}')
    cases.push([['--sparsity-map', join(tmp.dir, 'ok.json'), '--scope', 'global', '-s', '0.5'], /--sparsity-map gives each tensor its own target/])
    for (const [extra, pattern] of cases) {
      const r = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', ...extra])
      expect(r.code, extra.join(' ')).to.equal(2)
      expect(r.stderr).to.match(pattern)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
    }
  })

  it('--scope global warns about layer collapse across shards; --min-density keeps the floor', async () => {
    const r = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--scope', 'global'])
    expect(r.code).to.equal(0)
    expect(r.stderr).to.match(/^warning: layer collapse in model\.layers\.0\.self_attn\.o_proj\.weight: the global cut prunes it away entirely; --min-density 0\.1 /m)
    const j = JSON.parse((await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--scope', 'global', '--json'])).stdout)
    expect(j.warnings).to.have.length(1)
    const f = JSON.parse((await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--scope', 'global', '--min-density', '0.1', '--json'])).stdout)
    expect(f.warnings).to.deep.equal([])
    const o = f.tensors.find((t: {name: string}) => t.name === 'model.layers.0.self_attn.o_proj.weight')
    expect(o).to.include({floored: true, nnz: Math.ceil(0.1 * 256)})
    // The other tensors get exactly what they get without the floor.
    for (const t of j.tensors) if (t.name !== o.name) expect(f.tensors.find((x: {name: string}) => x.name === t.name).nnz).to.equal(t.nnz)
    const bad = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--min-density', '0.1'])
    expect(bad.code).to.equal(2)
    expect(bad.stderr).to.match(/--min-density applies to --scope global only/)
  })

  it('prunes a .pt to CSR like any other input (nested names kept)', async () => {
    const out = join(tmp.dir, 'ckpt-csr')
    const r = await runCli(['prune', 'fixtures/torch-checkpoint.pt', '-s', '0.5', '--include-1d', '-o', out])
    expect(r.code, r.stderr).to.equal(0)
    expect(existsSync(join(out, 'manifest.json'))).to.equal(true)
    const mats = await readCsrInput(out)
    expect(mats.map((m) => m.name)).to.deep.equal(['model.layer.weight', 'model.layer.bias'])
  })
})
