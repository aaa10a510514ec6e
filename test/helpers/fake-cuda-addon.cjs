// A stand-in for the addon that claims a GPU, loaded through SPARSE_ADDON, so that what the
// TypeScript side reports of CUDA runs (which SpMM variant ran, and why) can be tested end to
// end on machines without one, CI included. Every kernel runs on the real addon's CPU path,
// so results are still checked against the float64 reference.
//
// SPARSE_FAKE_SPMM_VARIANTS (JSON) says what the fake GPU's SpMM plan answers, per dtype
// ("*": any dtype): {selected, variants, alsoRuns?}. `spmmVariants` returns {selected,
// variants}; a variant passed by name runs when it is in `variants` or `alsoRuns` (names the
// list leaves out but the kernel runs, as narrower vector widths are), and is refused with
// code cudaErrorInvalidValue otherwise, as the real plan refuses a variant that cannot run.
// Each CUDA SpMM call is appended to SPARSE_FAKE_LOG (when set) as one JSON line
// {dtype, n, variant}.
'use strict'
const {appendFileSync} = require('node:fs')
const {join} = require('node:path')

const real = require(join(__dirname, '..', '..', 'build', 'Release', 'sparse.node'))
const plans = JSON.parse(process.env.SPARSE_FAKE_SPMM_VARIANTS || '{"*": {"selected": "split_v4_t8_w1", "variants": ["split_v4_t8_w1"]}}')
const planOf = (dtype) => plans[dtype] || plans['*'] || {selected: '', variants: []}

module.exports = {
  ...real,
  cudaInfo: () => ({
    ...real.cudaInfo(),
    available: true,
    reason: undefined,
    code: undefined,
    deviceCount: 1,
    name: 'Fake GPU (CPU kernels)',
    smCount: 132,
    computeCapability: '9.0',
  }),
  spmmVariants: (shape) => {
    const p = planOf(shape.dtype)
    return {selected: p.selected, variants: [...p.variants]}
  },
  spmm: async (args) => {
    if (args.device !== 'cuda') return real.spmm(args)
    if (process.env.SPARSE_FAKE_LOG) appendFileSync(process.env.SPARSE_FAKE_LOG, JSON.stringify({dtype: args.dtype, n: args.n, variant: args.variant ?? null}) + '\n')
    const p = planOf(args.dtype)
    const v = args.variant
    if (v && v !== 'auto' && !p.variants.includes(v) && !(p.alsoRuns || []).includes(v)) {
      throw Object.assign(new Error(`CudaSpmm launch of variant '${v}': invalid argument`), {code: 'cudaErrorInvalidValue'})
    }
    return real.spmm({...args, device: 'cpu', variant: undefined})
  },
  sddmm: (args) => real.sddmm({...args, device: 'cpu'}),
}
