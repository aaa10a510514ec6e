export {prunedCount, roundHalfEven, validateSparsity} from './amount.js'
export {countAround, emitCsr, type Emitted} from './emit.js'
export {keyToMagnitude, type MagnitudeMatrix, prepareTensor} from './keys.js'
export {
  pruneMagnitude,
  pruneModel,
  pruneTensors,
  resolveOptions,
  skipReason,
  isEmbeddingName,
  targetSparsity,
  type PrunedSink,
  type PrunedTensor,
  type PruneOptions,
  type PruneProgress,
  type PruneScope,
  type ResolvedOptions,
  type TensorEntry,
} from './magnitude.js'
export {impliedSparsity, nmPrunedCount, parsePattern, patternName, type PrunePattern, pruneNM} from './pattern.js'
export type {ByEncoding, PruneReport, PruneTotals, SkippedTensor, TensorReport} from './report.js'
export {type Cut, GlobalCut, localCut, selectCut} from './select.js'
export {convertCsrDtype} from './convert.js'
export {compilePattern, matchRule, readSparsityMap, sparsityRules, type SparsityRule} from './sparsity-map.js'
export {pruneFile, type PruneFileOptions, type PruneFileResult} from './prune-file.js'
