/**
 * sparse — the library core, usable without the CLI:
 *
 *   import {openTensorSource, pruneMagnitude, spmm, verifyInput, runBench} from 'sparse'
 *
 * - formats:  .npy / .npz / .safetensors readers, SciPy CSR .npz, DLMC .smtx, atomic writers
 * - pruning:  exact, linear-time magnitude pruning (tensor or global scope, N:M patterns)
 * - reorder:  Sputnik's row swizzle
 * - kernels:  SpMM and SDDMM on CUDA or the CPU (f32, f16, bf16), float64 references
 * - verify:   kernels against the float64 reference on a sparsity pattern
 * - bench:    CUDA-event timing against cuBLAS / cuSPARSE, suites, summaries, plots
 */
export * from './errors.js'
export type * from './types.js'
export * from './sparse/csr.js'
export {validateCsr} from './sparse/validate.js'
export {firstNot24, isTwoFour, not24Message, type Not24} from './sparse/two-four.js'
export * from './sparse/half.js'
export * from './formats/index.js'
export * from './pruning/index.js'
export * from './reorder/index.js'
export * from './kernels/index.js'
export {
  verifyInput,
  verifyInputs,
  verifyMatrices,
  readVerifyInput,
  DEFAULT_N as VERIFY_DEFAULT_N,
  TOLERANCE as VERIFY_TOLERANCE,
  type VerifyOptions,
  type VerifyCase,
  type VerifyResult,
  type VerifyKernel,
  type VerifyOp,
} from './verify/index.js'
export {
  benchAndWrite,
  runBench,
  summarizeCases,
  dlmcSuite,
  llmSuite,
  attentionSuite,
  loadCompare,
  geomean,
  median,
  quantile,
  recommend,
  renderPlotSvg,
  writePlot,
  type BenchOptions,
  type BenchReport,
  type BenchCaseResult,
  type BenchSummary,
  type Recommendation,
} from './bench/index.js'
