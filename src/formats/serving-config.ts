/**
 * What `prune --format dense` records in a Hugging Face folder's config.json, the way serving
 * stacks read it: compressed-tensors' `sparsity_config` (the `SparsityCompressionConfig`
 * model of neuralmagic/compressed-tensors, src/compressed_tensors/config/base.py), inside the
 * `quantization_config` member that compressed-tensors' ModelCompressor.update_config writes
 * and that transformers and vLLM read:
 *
 *   "quantization_config": {
 *     "quant_method": "compressed-tensors",        QUANTIZATION_METHOD_NAME / DEFAULT_QUANTIZATION_METHOD
 *     "version": "0.12.2",                          COMPRESSION_VERSION_NAME: the schema followed
 *     "sparsity_config": {                          SPARSITY_CONFIG_NAME
 *       "format": "dense",                          CompressionFormat.dense: weights stored dense, zeros in place
 *       "sparsity_structure": "2:4",                SparsityStructure: "2:4", "unstructured" or "0:0"
 *       "global_sparsity": 0.47,                    float: zeros / weights of the whole model
 *       "targets": ["model.layers.0.mlp.up_proj"],  list of module names (or null)
 *       "ignore": ["lm_head"]                       list of module names left dense (or null)
 *     },
 *     "transform_config": {}
 *   }
 *
 * Facts only; nothing of compressed-tensors' code is used. See docs/formats.md.
 */
import type {PruneReport} from '../pruning/report.js'

/** The compressed-tensors release whose schema this follows (written as `version`). */
export const COMPRESSED_TENSORS_VERSION = '0.12.2'
/** `quant_method` of a compressed-tensors config. */
export const QUANT_METHOD = 'compressed-tensors'
/** compressed-tensors' SparsityStructure values. */
export const SPARSITY_STRUCTURES = ['2:4', 'unstructured', '0:0'] as const

export interface SparsityCompressionConfig {
  format: 'dense'
  targets: string[] | null
  ignore: string[] | null
  global_sparsity: number
  sparsity_structure: (typeof SPARSITY_STRUCTURES)[number]
}

/** A module's name from its weight tensor's ("model.layers.0.mlp.up_proj.weight" -> "...up_proj"); null for other tensors. */
function moduleOf(tensor: string): string | null {
  return tensor.endsWith('.weight') ? tensor.slice(0, -'.weight'.length) : null
}

/**
 * The sparsity_config of a pruned model: targets are the modules whose weight was pruned,
 * ignore those whose 2-D (or larger) weight was left dense (embeddings, lm_head, excluded
 * layers), global_sparsity the zeros of the pruned weights over every weight of the model
 * (tensors left alone count as dense), and the structure "2:4" only for a 2:4 run (other N:M
 * patterns have no SparsityStructure value: "unstructured").
 */
export function sparsityConfigFor(report: Pick<PruneReport, 'tensors' | 'skipped' | 'pattern'>): SparsityCompressionConfig {
  const targets = [...new Set(report.tensors.map((t) => moduleOf(t.name)).filter((m): m is string => m !== null))].sort()
  const pruned = new Set(targets)
  const ignore = [
    ...new Set(
      report.skipped
        .filter((s) => s.shape.length >= 2)
        .map((s) => moduleOf(s.name))
        .filter((m): m is string => m !== null && !pruned.has(m)),
    ),
  ].sort()
  let zeros = 0
  let total = 0
  for (const t of report.tensors) {
    zeros += t.numel - t.nnz
    total += t.numel
  }
  for (const s of report.skipped) total += s.shape.reduce((a, b) => a * b, 1)
  return {
    format: 'dense',
    targets: targets.length > 0 ? targets : null,
    ignore: ignore.length > 0 ? ignore : null,
    global_sparsity: total === 0 ? 0 : Number((zeros / total).toFixed(6)),
    sparsity_structure: report.pattern === '2:4' ? '2:4' : 'unstructured',
  }
}

/**
 * config.json's text with the sparsity_config recorded; `note` says why it was left as it was
 * (not a JSON object, or another quantization method already there).
 */
export function withSparsityConfig(configText: string, sparsity: SparsityCompressionConfig): {text: string; note?: string} {
  let config: unknown
  try {
    config = JSON.parse(configText)
  } catch {
    return {text: configText, note: 'config.json is not valid JSON: it was copied unchanged, without a sparsity_config'}
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    return {text: configText, note: 'config.json is not a JSON object: it was copied unchanged, without a sparsity_config'}
  }
  const c = config as Record<string, unknown>
  const existing = c.quantization_config
  let base: Record<string, unknown> = {}
  if (existing !== undefined && existing !== null) {
    const method = typeof existing === 'object' ? (existing as {quant_method?: unknown}).quant_method : undefined
    if (typeof existing !== 'object' || Array.isArray(existing) || method !== QUANT_METHOD) {
      return {text: configText, note: `config.json has a quantization_config of another method (${JSON.stringify(method ?? null)}): it was copied unchanged, without a sparsity_config`}
    }
    base = existing as Record<string, unknown>
  }
  c.quantization_config = {
    ...base,
    quant_method: QUANT_METHOD,
    version: typeof base.version === 'string' ? base.version : COMPRESSED_TENSORS_VERSION,
    sparsity_config: sparsity,
    transform_config: base.transform_config ?? {},
  }
  return {text: JSON.stringify(c, null, 2) + '\n'}
}
