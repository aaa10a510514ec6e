// Profiling target (ncu): one launch each of the tensor-core SpMM (4096x4096 at 0.9, N = 16,
// f16, tc_w8_s1_p4) and SDDMM (4096x4096 mask at 0.9, K = 64, f16).
import {randomPrunedCsr, randomAttentionMask} from '../../dist/bench/suites.js'
import {sddmm, timeSpmmVariants} from '../../dist/kernels/index.js'
import {float32ToHalf} from '../../dist/sparse/half.js'

const a = randomPrunedCsr(4096, 4096, 0.9, 1)
const n = 16
const b = {rows: 4096, cols: n, dtype: 'f16', data: float32ToHalf(new Float32Array(4096 * n).fill(0.5), 'f16')}
const variant = process.argv[2] ?? 'tc_w8_s1_p4'
console.log(await timeSpmmVariants({...a, values: null}, b, [variant], {reps: 1}))
const mask = randomAttentionMask(4096, 0.9, 2)
const k = 64
const l = {rows: 4096, cols: k, dtype: 'f16', data: float32ToHalf(new Float32Array(4096 * k).fill(0.25), 'f16')}
await sddmm(mask, l, l, {device: 'cuda'})
console.log('done')
