// The target of `run.sh profile`: one case of one kernel, launched a few times (Nsight
// Compute skips the first launch, a warm-up, and profiles the next).
//   node scripts/gpu/profile-case.mjs OP:DTYPE:MATRIX:N[:VARIANT] [--launches L] [--device cpu]
// OP spmm or sddmm; DTYPE f32, f16 or bf16; MATRIX either ROWSxCOLS@SPARSITY (a seeded
// random pruned matrix; for SDDMM the mask) or a CSR file (.smtx, .npz), looked up under
// ../shared first (e.g. dlmc/transformer/magnitude_pruning/0.9/<name>.smtx); N the dense
// operand's columns (SDDMM: the inner dimension); VARIANT an SpMM variant name (see
// `spmmVariants`) or, for SDDMM, simt or tc (SPARSE_SDDMM_VARIANT).
// Example: spmm:f16:4096x4096@0.9:16:tc_w8_s1_p4   sddmm:f16:4096x4096@0.9:64:tc
// --device cpu runs the CPU kernels instead (to try a case spec on a machine without a GPU).
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {randomPrunedCsr} from '../../dist/bench/index.js'
import {float32ToHalf, readCsrInput, sddmm, spmm} from '../../dist/index.js'

function fail(message) {
  console.error(`profile-case: ${message}`)
  process.exit(2)
}

const args = process.argv.slice(2)
function option(name, fallback) {
  const at = args.indexOf(name)
  return at >= 0 ? args[at + 1] : fallback
}
const spec = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'))
const launches = Number(option('--launches', '2'))
const device = option('--device', 'cuda')
if (!spec) fail('expected OP:DTYPE:MATRIX:N[:VARIANT], e.g. spmm:f16:4096x4096@0.9:16')
if (!(Number.isInteger(launches) && launches >= 1)) fail(`--launches: expected a positive integer, got ${option('--launches')}`)
if (device !== 'cuda' && device !== 'cpu') fail(`--device: expected cuda or cpu, got ${device}`)
const [op, dtype, matrix, nText, variant] = spec.split(':')
if (op !== 'spmm' && op !== 'sddmm') fail(`OP must be spmm or sddmm, got ${JSON.stringify(op)}`)
if (!['f32', 'f16', 'bf16'].includes(dtype)) fail(`DTYPE must be f32, f16 or bf16, got ${JSON.stringify(dtype)}`)
const n = Number(nText)
if (!(Number.isInteger(n) && n >= 1)) fail(`N must be a positive integer, got ${JSON.stringify(nText)}`)

let csr
const shape = /^(\d+)x(\d+)@(0?\.\d+)$/.exec(matrix ?? '')
if (shape) {
  csr = randomPrunedCsr(Number(shape[1]), Number(shape[2]), Number(shape[3]), 1)
} else {
  const path = [join('..', 'shared', matrix ?? ''), matrix ?? ''].find((p) => p && existsSync(p))
  if (!path) fail(`MATRIX must be ROWSxCOLS@SPARSITY or a CSR file (under ../shared or here), got ${JSON.stringify(matrix)}`)
  csr = (await readCsrInput(path))[0].csr
}
// Pattern only: the kernels fill seeded random values of the operands' dtype.
csr = {...csr, values: null}

function dense(rows, cols, fill) {
  const data = new Float32Array(rows * cols).fill(fill)
  return {rows, cols, dtype, data: dtype === 'f32' ? data : float32ToHalf(data, dtype)}
}

const nnz = csr.rowOffsets[csr.rows]
console.log(`case ${op} ${dtype} ${csr.rows}x${csr.cols} nnz ${nnz} (sparsity ${(1 - nnz / (csr.rows * csr.cols)).toFixed(3)}) n ${n}${variant ? ` variant ${variant}` : ''}, ${launches} launches on ${device}`)
try {
  if (op === 'spmm') {
    const b = dense(csr.cols, n, 0.5)
    for (let i = 0; i < launches; i++) await spmm(csr, b, {device, ...(variant ? {variant} : {})})
  } else {
    if (variant) process.env.SPARSE_SDDMM_VARIANT = variant
    const l = dense(csr.rows, n, 0.25)
    const r = dense(csr.cols, n, 0.25)
    for (let i = 0; i < launches; i++) await sddmm(csr, l, r, {device})
  }
} catch (error) {
  console.error(`profile-case: ${error.message.split('\n')[0]}`)
  process.exit(error.exitCode ?? 1)
}
console.log('done')
