// issue 22: an llm-compressor recipe given as --sparsity-map is refused with the nearest command.
import {expect} from 'chai'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {recipeModifiers, refuseRecipe} from '../../src/pruning/recipe.js'
import {sparsityRules} from '../../src/pruning/sparsity-map.js'
import {runCli} from '../helpers/cli.js'

const RECIPE = `sparsity_stage:
  sparsity_modifiers:
    SparseGPTModifier:
      sparsity: 0.5
      mask_structure: "2:4"
      targets: ["Linear"]
      ignore: ["re:.*lm_head", "model.layers.0.mlp.down_proj"]
`

describe('llm-compressor recipes as --sparsity-map', () => {
  it('finds the modifiers of a nested recipe, and nothing in a sparsity map', () => {
    expect(recipeModifiers({a: {b: {WandaPruningModifier: {sparsity: 0.6}}}}).map((m) => m.type)).to.deep.equal(['WandaPruningModifier'])
    expect(recipeModifiers({'re:mlp': 0.7, '*': 0.5})).to.deep.equal([])
    expect(() => refuseRecipe({'*': 0.5}, 'x')).to.not.throw()
    expect(sparsityRules({'*': 0.5})).to.have.length(1)
  })

  it('is refused (exit 2) with the command that does the nearest thing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recipe-'))
    try {
      writeFileSync(join(dir, 'recipe.yaml'), RECIPE)
      const r = await runCli(['prune', 'fixtures/hf-tiny', '--sparsity-map', join(dir, 'recipe.yaml')])
      expect(r.code).to.equal(2)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
      expect(r.stderr).to.match(/is an llm-compressor recipe \(SparseGPTModifier: sparsity 0\.5; mask_structure 2:4; targets Linear; ignore re:\.\*lm_head, model\.layers\.0\.mlp\.down_proj\)/)
      expect(r.stderr).to.include("sparse prune MODEL --pattern 2:4 --exclude '(^|\\.)model\\.layers\\.0\\.mlp\\.down_proj\\.'")
      // The suggested command does what it says on this model.
      const s = await runCli(['prune', 'fixtures/hf-tiny', '--pattern', '2:4', '--exclude', '(^|\\.)model\\.layers\\.0\\.mlp\\.down_proj\\.', '--json'])
      expect(s.code, s.stderr).to.equal(0)
      expect(JSON.parse(s.stdout).tensors.map((t: {name: string}) => t.name)).to.deep.equal(['model.layers.0.mlp.up_proj.weight', 'model.layers.0.self_attn.o_proj.weight'])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('an unstructured recipe suggests -s', () => {
    expect(() => refuseRecipe({stage: {MagnitudePruningModifier: {sparsity: 0.7, targets: ['re:model.layers.\\d+.mlp']}}}, 'r.yaml')).to.throw(/llm-compressor recipe/).with.property('suggestion').that.match(/sparse prune MODEL -s 0\.7 --include 'model\.layers\.\\d\+\.mlp'/)
  })
})
