// issue 22: pruned models that serving stacks understand, defaults that leave embeddings and
// lm_head alone, sparsity-map diagnostics, and the report's wording.
import {expect} from 'chai'
import {cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {runCli} from '../helpers/cli.js'

const HF = 'fixtures/hf-tiny'

const temps: string[] = []
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'prune-serving-'))
  temps.push(d)
  return d
}
after(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

/**
 * compressed-tensors' schema, written from its definition (neuralmagic/compressed-tensors,
 * src/compressed_tensors/config/base.py and compressors/model_compressors/model_compressor.py,
 * release 0.12.2): config.json's `quantization_config` holds `quant_method`
 * ("compressed-tensors"), `version`, and `sparsity_config`, a SparsityCompressionConfig:
 *   format: str (a CompressionFormat value; registered sparsity formats: "dense",
 *     "sparse-bitmask", "sparse-24-bitmask")
 *   targets: Optional[List[str]] = None
 *   ignore: Optional[List[str]] = None
 *   global_sparsity: Optional[float] = 0.0
 *   sparsity_structure: Optional[str] = "unstructured", parsed by SparsityStructure:
 *     "2:4", "unstructured", "0:0" (case-insensitive)
 * pydantic's BaseModel ignores unknown fields by default; this check refuses them, to catch a
 * misspelt name.
 */
function checkCompressedTensors(config: unknown): string[] {
  const errors: string[] = []
  const isStrList = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'))
  if (typeof config !== 'object' || config === null) return ['config.json is not an object']
  const q = (config as Record<string, unknown>).quantization_config as Record<string, unknown> | undefined
  if (typeof q !== 'object' || q === null) return ['no quantization_config object']
  if (q.quant_method !== 'compressed-tensors') errors.push(`quant_method ${JSON.stringify(q.quant_method)}`)
  if (typeof q.version !== 'string') errors.push('version is not a string')
  const s = q.sparsity_config as Record<string, unknown> | undefined
  if (typeof s !== 'object' || s === null) return [...errors, 'no sparsity_config object']
  const fields = new Set(['format', 'targets', 'ignore', 'global_sparsity', 'sparsity_structure'])
  for (const k of Object.keys(s)) if (!fields.has(k)) errors.push(`unknown field ${k}`)
  if (!['dense', 'sparse-bitmask', 'sparse-24-bitmask'].includes(s.format as string)) errors.push(`format ${JSON.stringify(s.format)}`)
  if (!isStrList(s.targets)) errors.push('targets is not a list of strings or null')
  if (!isStrList(s.ignore)) errors.push('ignore is not a list of strings or null')
  if (s.global_sparsity !== null && s.global_sparsity !== undefined && (typeof s.global_sparsity !== 'number' || !(s.global_sparsity >= 0 && s.global_sparsity <= 1))) errors.push('global_sparsity is not a float in [0, 1]')
  const st = s.sparsity_structure
  if (st !== null && st !== undefined && !(typeof st === 'string' && ['2:4', 'unstructured', '0:0'].includes(st.toLowerCase()))) errors.push(`sparsity_structure ${JSON.stringify(st)} is not a SparsityStructure`)
  return errors
}

describe('prune: serving metadata, defaults and wording (issue 22)', function () {
  this.timeout(120_000)

  it('the schema check itself refuses what compressed-tensors would not read', () => {
    expect(checkCompressedTensors({quantization_config: {quant_method: 'compressed-tensors', version: '0.12.2', sparsity_config: {format: 'dense', sparsity_structure: '2:4', global_sparsity: 0.5, targets: ['a'], ignore: null}}})).to.deep.equal([])
    expect(checkCompressedTensors({quantization_config: {quant_method: 'compressed-tensors', version: '0.12.2', sparsity_config: {format: 'dense', sparsity_structure: '4:8'}}})).to.have.length(1)
    expect(checkCompressedTensors({quantization_config: {quant_method: 'compressed-tensors', version: '0.12.2', sparsity_config: {format: 'dense', global_sparsity: '0.5'}}})).to.have.length(1)
    expect(checkCompressedTensors({sparsity_config: {}})).to.have.length(1)
  })

  it('--format dense of a model folder writes a 2:4 sparsity_config that parses as compressed-tensors defines it', async () => {
    const out = join(tempDir(), 'pruned')
    const r = await runCli(['prune', HF, '--pattern', '2:4', '--format', 'dense', '--serving-config', '-o', out])
    expect(r.code, r.stderr).to.equal(0)
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))
    expect(checkCompressedTensors(config)).to.deep.equal([])
    const s = config.quantization_config.sparsity_config
    expect(s.format).to.equal('dense')
    expect(s.sparsity_structure).to.equal('2:4')
    expect(s.targets).to.deep.equal(['model.layers.0.mlp.down_proj', 'model.layers.0.mlp.up_proj', 'model.layers.0.self_attn.o_proj'])
    expect(s.ignore).to.deep.equal(['lm_head', 'model.embed_tokens'])
    // 3 pruned matrices of 768 + 768 + 256 weights at 50%, of 768+768+256+512+512+16 weights in all.
    expect(s.global_sparsity).to.be.closeTo(896 / 2832, 1e-6)
    // The rest of config.json is kept.
    expect(config.architectures).to.deep.equal(['TinyForCausalLM'])
    expect(r.stdout).to.match(/config\.json records the sparsity for serving stacks/)
  })

  it('unstructured pruning is recorded as "unstructured"; by default config.json is copied unchanged', async () => {
    const dir = tempDir()
    const r = await runCli(['prune', HF, '-s', '0.7', '--format', 'dense', '--serving-config', '-o', join(dir, 'a')])
    expect(r.code, r.stderr).to.equal(0)
    const config = JSON.parse(readFileSync(join(dir, 'a', 'config.json'), 'utf8'))
    expect(checkCompressedTensors(config)).to.deep.equal([])
    expect(config.quantization_config.sparsity_config.sparsity_structure).to.equal('unstructured')
    const r2 = await runCli(['prune', HF, '-s', '0.7', '--format', 'dense', '-o', join(dir, 'b')])
    expect(r2.code, r2.stderr).to.equal(0)
    expect(readFileSync(join(dir, 'b', 'config.json'), 'utf8')).to.equal(readFileSync(join(HF, 'config.json'), 'utf8'))
  })

  it('a config.json with another quantization method is copied unchanged, with a note', async () => {
    const dir = tempDir()
    const model = join(dir, 'model')
    cpSync(HF, model, {recursive: true})
    const original = JSON.stringify({architectures: ['X'], quantization_config: {quant_method: 'gptq', bits: 4}}, null, 2)
    writeFileSync(join(model, 'config.json'), original)
    const r = await runCli(['prune', model, '-s', '0.5', '--format', 'dense', '--serving-config', '-o', join(dir, 'out')])
    expect(r.code, r.stderr).to.equal(0)
    expect(readFileSync(join(dir, 'out', 'config.json'), 'utf8')).to.equal(original)
    expect(r.stdout).to.match(/quantization_config of another method \("gptq"\)/)
  })

  it('the shard index given as the input (model.safetensors.index.json) writes the model folder', async () => {
    const out = join(tempDir(), 'from-index')
    const r = await runCli(['prune', join(HF, 'model.safetensors.index.json'), '-s', '0.5', '--format', 'dense', '--serving-config', '-o', out])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stderr).to.not.include('undefined')
    expect(readFileSync(join(out, 'model.safetensors.index.json'), 'utf8')).to.equal(readFileSync(join(HF, 'model.safetensors.index.json'), 'utf8'))
    expect(checkCompressedTensors(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')))).to.deep.equal([])
  })

  it('embeddings and lm_head are left dense by default; --include-embeddings prunes them', async () => {
    const r = await runCli(['prune', HF, '-s', '0.5', '--json'])
    expect(r.code, r.stderr).to.equal(0)
    const out = JSON.parse(r.stdout)
    const pruned = out.tensors.map((t: {name: string}) => t.name)
    expect(pruned).to.not.include('lm_head.weight')
    expect(pruned).to.not.include('model.embed_tokens.weight')
    const reasons = Object.fromEntries(out.skipped.map((s: {name: string; reason: string}) => [s.name, s.reason]))
    expect(reasons['lm_head.weight']).to.match(/--include-embeddings prunes it/)
    const all = JSON.parse((await runCli(['prune', HF, '-s', '0.5', '--include-embeddings', '--json'])).stdout)
    expect(all.tensors.map((t: {name: string}) => t.name)).to.include.members(['lm_head.weight', 'model.embed_tokens.weight'])
  })

  it('a sparsity-map pattern that matches nothing is warned about; the human report names the matched rule', async () => {
    const dir = tempDir()
    const map = join(dir, 'map.json')
    writeFileSync(map, JSON.stringify({'*.mlp.up_projj.weight': 0.9, '*mlp*': 0.7, '*': 0.5}))
    const r = await runCli(['prune', HF, '--sparsity-map', map])
    expect(r.code, r.stderr).to.equal(0)
    expect(r.stderr).to.match(/warning: --sparsity-map pattern "\*\.mlp\.up_projj\.weight" gives no tensor its target/)
    expect(r.stdout).to.match(/│ rule/)
    expect(r.stdout).to.match(/model\.layers\.0\.mlp\.up_proj\.weight\s+│ \*mlp\*/)
    expect(r.stdout).to.match(/model\.layers\.0\.self_attn\.o_proj\.weight\s+│ \*\s+│/)
  })

  it('a map that matches no tensor says so, not "check --include/--exclude"', async () => {
    const dir = tempDir()
    const map = join(dir, 'map.json')
    writeFileSync(map, JSON.stringify({'re:^transformer\\.h\\.': 0.5}))
    const r = await runCli(['prune', HF, '--sparsity-map', map, '-o', join(dir, 'out')])
    expect(r.code).to.equal(2)
    expect(r.stderr).to.match(/no tensor of .* matches a --sparsity-map pattern \("re:\^transformer\\\\\.h\\\\\."\)/)
    expect(r.stderr).to.not.match(/--include\/--exclude/)
  })

  it('under --scope global the target column does not repeat the achieved sparsity; the 2:4 footnote only with an n/a cell', async () => {
    const g = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '-s', '0.6', '--scope', 'global'])
    expect(g.code, g.stderr).to.equal(0)
    const row = g.stdout.split('\n').find((l) => l.includes('layers.0.weight'))!
    const cells = row.split('│').map((c) => c.trim())
    // tensor, shape, nnz, sparsity, target, ...
    expect(cells[4]).to.match(/%$/)
    expect(cells[5]).to.equal('')
    const total = g.stdout.split('\n').find((l) => l.includes('│ total'))!
    expect(total.split('│').map((c) => c.trim())[5]).to.equal('60.00%')
    expect(g.stdout).to.match(/2:4 n\/a: not a 2:4 matrix/)
    const nm = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '--pattern', '2:4'])
    expect(nm.code, nm.stderr).to.equal(0)
    expect(nm.stdout).to.not.match(/2:4 n\/a/)
  })
})
