/**
 * Per-tensor sparsity recipes (`--sparsity-map FILE`): an ordered list of name patterns and
 * target sparsities, as pruning recipes (llm-compressor / SparseML) give them per layer.
 *
 * File (JSON or YAML): either a mapping `pattern: sparsity` (in file order) or a list of
 * `{pattern, sparsity}` objects. A pattern is a glob matched against the whole tensor name
 * (`*` any run of characters, dots included; `?` one character), or, with the prefix `re:`,
 * a JavaScript regular expression matched anywhere in the name. The first matching pattern
 * wins. A tensor no pattern matches is skipped, or pruned to `-s` when `-s` is given.
 *
 * Bounded (issue 21): patterns are matched in time linear in the name (name-match.ts); a
 * name without `*` or `?` is looked up in a hash table, so a map with one exact name per
 * tensor costs nothing per rule; at most MAX_SPARSITY_RULES rules, MAX_PATTERN_RULES of
 * them globs or regexes; YAML files at most MAX_SPARSITY_MAP_YAML_BYTES (the YAML parser
 * takes about a second per 30,000 keys: larger recipes are JSON).
 */

import {isMap, isScalar, parseDocument} from 'yaml'

import {errorAbout, UsageError} from '../errors.js'
import {readTextFile} from '../formats/byte-source.js'
import {MAX_NAME_CHARS, MAX_SPARSITY_MAP_BYTES, safeText} from '../formats/limits.js'
import {validateSparsity} from './amount.js'
import {globMatcher, MAX_PATTERN_CHARS, regexMatcher, type NameTest} from './name-match.js'
import {refuseRecipe} from './recipe.js'

/** The most rules a map may have, and how many of them may be globs or regexes. */
export const MAX_SPARSITY_RULES = 1 << 18
export const MAX_PATTERN_RULES = 4096
/** The largest YAML recipe (a JSON one may have MAX_SPARSITY_MAP_BYTES). */
export const MAX_SPARSITY_MAP_YAML_BYTES = 512 << 10

export interface SparsityRule {
  /** The pattern as written in the file. */
  pattern: string
  sparsity: number
  /** The compiled matcher (linear in the name's length). */
  test: NameTest
}

/** Whether a pattern is an exact name (no `re:`, `*` or `?`): matched by a table lookup. */
function isExactName(pattern: string): boolean {
  return !pattern.startsWith('re:') && !pattern.includes('*') && !pattern.includes('?')
}

/** Compile a pattern: a whole-name glob, or `re:REGEX` (unanchored), both linear-time. */
export function compilePattern(pattern: string, where = '--sparsity-map'): NameTest {
  if (pattern.startsWith('re:')) {
    try {
      void new RegExp(pattern.slice(3))
    } catch (error) {
      throw new UsageError('bad-sparsity-map', `${where}: pattern ${JSON.stringify(safeText(pattern))} is not a valid regular expression: ${(error as Error).message}`)
    }
    return regexMatcher(pattern.slice(3), `${where}: pattern ${JSON.stringify(safeText(pattern, 40))}`)
  }
  return isExactName(pattern) ? {test: (name) => name === pattern} : globMatcher(pattern)
}

/** A value in a message: its JSON when short and flat, else its kind (no deep stringify). */
function describeValue(v: unknown): string {
  if (v === null || typeof v !== 'object') return safeText(String(JSON.stringify(v)), 40)
  return Array.isArray(v) ? 'a list' : 'a mapping'
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
  if (pairs.length > MAX_SPARSITY_RULES) bad(`${pairs.length} rules, more than the ${MAX_SPARSITY_RULES} accepted`)
  let patterns = 0
  return pairs.map(([pattern, s]) => {
    // (a function: made only for a message, not for each of 200,000 rules)
    const shown = () => JSON.stringify(safeText(pattern, 60))
    if (typeof s !== 'number') bad(`the sparsity of ${shown()} must be a number in [0, 1), got ${describeValue(s)}`)
    try {
      validateSparsity(s as number)
    } catch {
      bad(`the sparsity of ${shown()} must be in [0, 1), got ${s}`)
    }
    if (isExactName(pattern)) {
      if (pattern.length > MAX_NAME_CHARS) bad(`the name ${shown()} is ${pattern.length} characters long; tensor names have at most ${MAX_NAME_CHARS}`)
    } else {
      if (++patterns > MAX_PATTERN_RULES) bad(`more than ${MAX_PATTERN_RULES} glob or re: patterns (exact names have no limit of their own)`)
      if (pattern.length > MAX_PATTERN_CHARS) bad(`the pattern ${shown()} is ${pattern.length} characters long; at most ${MAX_PATTERN_CHARS} are accepted`)
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
  if (yaml) {
    if (text.length > MAX_SPARSITY_MAP_YAML_BYTES) {
      throw new UsageError('bad-sparsity-map', `--sparsity-map: ${path} has ${text.length} characters, more than the ${MAX_SPARSITY_MAP_YAML_BYTES} read as YAML`, 'write a large recipe as JSON (up to 16 MiB), or use globs instead of one line per tensor')
    }
    value = parseYamlMap(text, path)
  } else {
    // NOTE: counted before parsing: JSON.parse of a million keys takes seconds and a gigabyte.
    const members = countTopLevelMembers(text, MAX_SPARSITY_RULES)
    if (members > MAX_SPARSITY_RULES) {
      throw new UsageError('bad-sparsity-map', `--sparsity-map ${path}: more than ${MAX_SPARSITY_RULES} rules`, 'write a mapping of name patterns to sparsities, e.g. {"re:mlp": 0.7, "*": 0.5} (see docs/recipes.md)')
    }
    try {
      // NOTE: JSON is valid YAML, but JSON.parse gives the clearer message for a .json file.
      value = JSON.parse(text)
    } catch (error) {
      const msg = safeText((error as Error).message.split('\n')[0], 120)
      throw new UsageError('bad-sparsity-map', `--sparsity-map: ${path} is not valid JSON (${msg})`, 'name a YAML file .yaml, or fix the JSON')
    }
  }
  return sparsityRules(value, `--sparsity-map ${path}`)
}

/**
 * The members of the top-level object or array of a JSON text (commas at depth 1 outside
 * strings, plus one), counting no further than `limit` + 1; 0 for anything else.
 */
export function countTopLevelMembers(text: string, limit: number): number {
  let depth = 0
  let count = 0
  let nonEmpty = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // a string: skip to its closing quote
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++
      if (depth === 1) nonEmpty = true
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 1) nonEmpty = true
      depth++
    } else if (c === 0x7d || c === 0x5d) {
      depth--
      if (depth === 0) break
    } else if (depth === 1 && c === 0x2c) {
      if (++count > limit) return count + 1
    } else if (depth === 1 && c > 0x20) nonEmpty = true
  }
  return nonEmpty ? count + 1 : 0
}

/**
 * A YAML recipe: parsed by the library without its own logging (it prints warnings with the
 * raw source line, escape sequences included) and without its duplicate-key check (quadratic
 * in the keys); errors and warnings become one escaped line, duplicate keys are checked here.
 */
function parseYamlMap(text: string, path: string): unknown {
  const fail = (msg: string): never => {
    throw new UsageError('bad-sparsity-map', `--sparsity-map: ${path} is not valid YAML (${safeText(msg.split('\n')[0], 120)})`, 'check the indentation and the colons; quote patterns that start with * (YAML reads *x as an alias)')
  }
  // NOTE: checked before the library sees it: the YAML parser recurses per level, and a
  // stack overflow inside V8's regex compiler aborts the process (a fatal error, not an
  // exception), as a few thousand nested [ did.
  const deep = yamlNesting(text)
  if (deep) fail(deep)
  try {
    const doc = parseDocument(text, {uniqueKeys: false, logLevel: 'silent'})
    if (doc.errors.length > 0) fail(doc.errors[0].message)
    if (doc.warnings.length > 0) fail(doc.warnings[0].message)
    if (isMap(doc.contents)) {
      const seen = new Set<unknown>()
      for (const item of doc.contents.items) {
        const k = isScalar(item.key) ? item.key.value : item.key
        if (seen.has(k)) fail(`the key ${JSON.stringify(safeText(String(k), 60))} appears twice`)
        seen.add(k)
      }
    }
    return doc.toJS({maxAliasCount: 100})
  } catch (error) {
    if (error instanceof UsageError) throw error
    return fail(error instanceof RangeError ? 'nested too deeply' : (error as Error).message)
  }
}

/** The deepest nesting a recipe may have in YAML: flow brackets, and indentation columns. */
const MAX_YAML_FLOW_DEPTH = 64
const MAX_YAML_INDENT = 128

/**
 * Why a YAML text nests too deeply for the parser, or undefined: flow collections ([ and {,
 * outside quotes and comments) nested past MAX_YAML_FLOW_DEPTH, or a line indented (spaces
 * and block-sequence dashes) past MAX_YAML_INDENT columns. Conservative: a recipe is flat.
 */
function yamlNesting(text: string): string | undefined {
  let depth = 0
  let quote = ''
  let lineStart = true
  let indent = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\n') {
      lineStart = true
      indent = 0
      if (quote === "'" || quote === '"') continue
      continue
    }
    if (lineStart) {
      if (c === ' ' || c === '-' || c === '\t') {
        if (++indent > MAX_YAML_INDENT) return `a line indented more than ${MAX_YAML_INDENT} columns`
        continue
      }
      lineStart = false
    }
    if (quote) {
      if (c === '\\' && quote === '"') i++
      else if (c === quote) quote = ''
      continue
    }
    if (c === '"' || c === "'") quote = c
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++
    } else if (c === '[' || c === '{') {
      if (++depth > MAX_YAML_FLOW_DEPTH) return `collections nested more than ${MAX_YAML_FLOW_DEPTH} deep`
    } else if ((c === ']' || c === '}') && depth > 0) depth--
  }
  return undefined
}

/** Exact names by the index of their first rule, and the other rules' indexes (per rule list). */
const lookup = new WeakMap<readonly SparsityRule[], {exact: Map<string, number>; patterns: number[]}>()

/** The first rule matching `name`, or undefined. */
export function matchRule(rules: readonly SparsityRule[], name: string): SparsityRule | undefined {
  let index = lookup.get(rules)
  if (!index) {
    index = {exact: new Map(), patterns: []}
    for (let i = 0; i < rules.length; i++) {
      if (!isExactName(rules[i].pattern)) index.patterns.push(i)
      else if (!index.exact.has(rules[i].pattern)) index.exact.set(rules[i].pattern, i)
    }
    lookup.set(rules, index)
  }
  const exact = index.exact.get(name) ?? Infinity
  for (const i of index.patterns) {
    if (i > exact) break
    if (rules[i].test.test(name)) return rules[i]
  }
  return exact === Infinity ? undefined : rules[exact]
}
