/**
 * Per-tensor sparsity recipes (`--sparsity-map FILE`): an ordered list of name patterns and
 * target sparsities, as pruning recipes (llm-compressor / SparseML) give them per layer.
 *
 * File (JSON or YAML): either a mapping `pattern: sparsity` (in file order) or a list of
 * `{pattern, sparsity}` objects. A pattern is a glob matched against the whole tensor name
 * (`*` any run of characters, dots included; `?` one character), or, with the prefix `re:`,
 * a JavaScript regular expression matched anywhere in the name. The first matching pattern
 * wins. A tensor no pattern matches is skipped, or pruned to `-s` when `-s` is given.
 */

import {parse as parseYaml} from 'yaml'

import {errorAbout, UsageError} from '../errors.js'
import {readTextFile} from '../formats/byte-source.js'
import {MAX_SPARSITY_MAP_BYTES} from '../formats/limits.js'
import {validateSparsity} from './amount.js'
import {refuseRecipe} from './recipe.js'

export interface SparsityRule {
  /** The pattern as written in the file. */
  pattern: string
  sparsity: number
  /** The compiled matcher. */
  test: RegExp
}

/** Compile a pattern: a whole-name glob, or `re:REGEX` (unanchored). */
export function compilePattern(pattern: string, where = '--sparsity-map'): RegExp {
  if (pattern.startsWith('re:')) {
    try {
      return new RegExp(pattern.slice(3))
    } catch (error) {
      throw new UsageError('bad-sparsity-map', `${where}: pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`)
    }
  }
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp(`^${body}$`)
}

/** Build the rules from parsed JSON/YAML (a mapping or a list of {pattern, sparsity}). */
export function sparsityRules(value: unknown, where = '--sparsity-map'): SparsityRule[] {
  const bad = (msg: string): never => {
    throw new UsageError('bad-sparsity-map', `${where}: ${msg}`, 'write a mapping of name patterns to sparsities, e.g. {"re:mlp": 0.7, "*": 0.5} (see docs/recipes.md)')
  }
  // An llm-compressor recipe is refused with the nearest command (recipe.ts).
  refuseRecipe(value, where)
  let pairs: [string, unknown][]
  if (Array.isArray(value)) {
    pairs = value.map((r, i) => {
      if (typeof r !== 'object' || r === null || typeof (r as {pattern?: unknown}).pattern !== 'string') bad(`entry ${i} must be an object with a "pattern" string and a "sparsity" number`)
      return [(r as {pattern: string}).pattern, (r as {sparsity?: unknown}).sparsity] as [string, unknown]
    })
  } else if (typeof value === 'object' && value !== null) {
    pairs = Object.entries(value as Record<string, unknown>)
  } else {
    return bad('expected a mapping of patterns to sparsities, or a list of {pattern, sparsity}')
  }
  if (pairs.length === 0) bad('the map is empty')
  return pairs.map(([pattern, s]) => {
    if (typeof s !== 'number') bad(`the sparsity of ${JSON.stringify(pattern)} must be a number in [0, 1), got ${JSON.stringify(s)}`)
    try {
      validateSparsity(s as number)
    } catch {
      bad(`the sparsity of ${JSON.stringify(pattern)} must be in [0, 1), got ${s}`)
    }
    return {pattern, sparsity: s as number, test: compilePattern(pattern, where)}
  })
}

/** Read a sparsity map file: `.yaml`/`.yml` as YAML, anything else as JSON (then YAML). */
export async function readSparsityMap(path: string): Promise<SparsityRule[]> {
  let text: string
  try {
    // A regular file of at most MAX_SPARSITY_MAP_BYTES: a FIFO is refused, never waited on.
    text = await readTextFile(path, MAX_SPARSITY_MAP_BYTES)
  } catch (error) {
    throw errorAbout(error, '--sparsity-map', 'pass a JSON or YAML recipe file (see docs/recipes.md)')
  }
  const yaml = /\.ya?ml$/i.test(path)
  let value: unknown
  try {
    // NOTE: JSON is valid YAML, but JSON.parse gives the clearer message for a .json file.
    value = yaml ? parseYaml(text, {maxAliasCount: 100}) : JSON.parse(text)
  } catch (error) {
    const msg = (error as Error).message.split('\n')[0]
    throw new UsageError('bad-sparsity-map', `--sparsity-map: ${path} is not valid ${yaml ? 'YAML' : 'JSON'} (${msg})`, yaml ? 'check the indentation and the colons' : 'name a YAML file .yaml, or fix the JSON')
  }
  return sparsityRules(value, `--sparsity-map ${path}`)
}

/** The first rule matching `name`, or undefined. */
export function matchRule(rules: readonly SparsityRule[], name: string): SparsityRule | undefined {
  return rules.find((r) => r.test.test(name))
}
