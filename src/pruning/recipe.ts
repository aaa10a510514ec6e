/**
 * llm-compressor recipes given as --sparsity-map. A recipe names modifiers (SparseGPTModifier,
 * WandaPruningModifier, MagnitudePruningModifier, ...) with `sparsity`, `mask_structure`
 * ("2:4", "0:0" = unstructured), `targets` (module types such as "Linear", module names, or
 * "re:" regular expressions) and `ignore`, nested under stage and group names, e.g.
 *
 *   sparsity_stage:
 *     sparsity_modifiers:
 *       SparseGPTModifier: {sparsity: 0.5, mask_structure: "2:4", targets: [Linear], ignore: ["re:.*lm_head"]}
 *
 * sparse does not run a recipe: SparseGPT and Wanda choose weights with calibration data, and
 * a recipe's targets are module types that a weights file does not record. It refuses one with
 * the nearest command, worked out from the recipe (issue 22).
 */
import {UsageError} from '../errors.js'

interface Modifier {
  type: string
  args: Record<string, unknown>
}

/** The modifiers of a parsed recipe (any mapping key ending in "Modifier" whose value is a mapping), or [] when it is not one. */
export function recipeModifiers(value: unknown, depth = 0): Modifier[] {
  if (depth > 6 || typeof value !== 'object' || value === null) return []
  const out: Modifier[] = []
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value)
  for (const [k, v] of entries) {
    if (/Modifier$/.test(k) && typeof v === 'object' && v !== null && !Array.isArray(v)) out.push({type: k, args: v as Record<string, unknown>})
    else out.push(...recipeModifiers(v, depth + 1))
  }
  return out
}

const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A --include/--exclude RegExp for recipe entries: "re:X" as X, a module name as its tensors. */
function nameFilter(items: string[]): string | null {
  const parts = items.map((t) => (t.startsWith('re:') ? t.slice(3) : `(^|\\.)${escapeRe(t)}\\.`))
  return parts.length === 0 ? null : parts.length === 1 ? parts[0] : parts.map((p) => `(${p})`).join('|')
}

/**
 * The refusal of a recipe: what it asks, and the sparse command nearest to it. Throws when
 * `value` is a recipe with pruning modifiers; returns when it is not a recipe.
 */
export function refuseRecipe(value: unknown, where: string): void {
  const modifiers = recipeModifiers(value).filter((m) => 'sparsity' in m.args || 'mask_structure' in m.args)
  if (modifiers.length === 0) return
  const m = modifiers[0]
  const sparsity = typeof m.args.sparsity === 'number' ? m.args.sparsity : undefined
  const structure = typeof m.args.mask_structure === 'string' ? m.args.mask_structure : '0:0'
  const targets = strings(m.args.targets)
  const ignore = strings(m.args.ignore)
  const flags: string[] = []
  if (/^\d+:\d+$/.test(structure) && structure !== '0:0') flags.push(`--pattern ${structure}`)
  else if (sparsity !== undefined) flags.push(`-s ${sparsity}`)
  // Module types (Linear, Conv2d, ...) are not in a weights file: sparse's default selection,
  // the 2-D weights without embeddings and lm_head, is what "Linear" selects in a transformer.
  const named = targets.filter((t) => t.startsWith('re:') || t.includes('.'))
  const include = nameFilter(named)
  if (include) flags.push(`--include ${quote(include)}`)
  // lm_head and embeddings are left dense by default: no --exclude needed for them.
  const exclude = nameFilter(ignore.filter((t) => !/^(re:\.\*)?lm_head$|^re:.*lm_head\$?$/.test(t)))
  if (exclude) flags.push(`--exclude ${quote(exclude)}`)
  const what = [
    sparsity === undefined ? null : `sparsity ${sparsity}`,
    `mask_structure ${structure}`,
    targets.length ? `targets ${targets.join(', ')}` : null,
    ignore.length ? `ignore ${ignore.join(', ')}` : null,
  ].filter(Boolean)
  const more = modifiers.length > 1 ? ` (and ${modifiers.length - 1} more modifier${modifiers.length > 2 ? 's' : ''})` : ''
  throw new UsageError(
    'llm-compressor-recipe',
    `${where} is an llm-compressor recipe (${m.type}: ${what.join('; ')})${more}, not a sparsity map: sparse prunes by weight magnitude, without calibration data, and cannot resolve module types from a weights file`,
    `the nearest command: sparse prune MODEL ${flags.join(' ')} (module types such as Linear: the 2-D weights, which sparse prunes by default, leaving embeddings and lm_head dense); or write a sparsity map of tensor-name patterns (docs/recipes.md)`,
  )
}
