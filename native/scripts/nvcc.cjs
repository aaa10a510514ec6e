// Compiles one CUDA source for binding.gyp's rule: node nvcc.cjs NVCC INPUT OUTPUT.
//
// Flags: the addon's common ones, and the architectures of cuda-archs.cjs (SPARSE_CUDA_ARCHS,
// the detected GPU, or the portable set). A file whose name ends in "_sm90a.cu" holds code
// for compute capability 9.0 only (wgmma, Hopper's warpgroup MMA): it is compiled for sm_90a
// alone, with SPARSE_SM90A defined, when sm_90 is among the architectures; otherwise for the
// others without SPARSE_SM90A (its table entry then runs nothing).
const {spawnSync} = require('node:child_process')
const {choose, gencode} = require('./cuda-archs.cjs')

// SPARSE_ENGINE_NO_TRACE: the streaming engine's trace stamps compiled out of the addon, which
// never traces (v52, workbench A/B on an H100: 0.966-0.969x the time in events, 0.957-0.958x in
// CUDA graphs over 12 cases; docs/stream-engine.md "v52"). The workbenches keep them (`trace`).
function flagsFor(input, archs) {
  const common = ['-std=c++17', '-O3', '-Xcompiler', '-fPIC', '-DSPARSE_WITH_CUDA=1', '-DSPARSE_ENGINE_NO_TRACE', '-Inative', '--expt-relaxed-constexpr', '-lineinfo']
  if (/_sm90a\.cu$/.test(input) && archs.includes(90)) return [...common, '-gencode', 'arch=compute_90a,code=sm_90a', '-DSPARSE_SM90A=1']
  return [...common, ...gencode(archs)]
}

module.exports = {flagsFor}

if (require.main === module) {
  const [nvcc, input, output] = process.argv.slice(2)
  if (!nvcc || !input || !output) {
    process.stderr.write('usage: node nvcc.cjs NVCC INPUT OUTPUT\n')
    process.exit(2)
  }
  let archs
  try {
    archs = choose().archs
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n`)
    process.exit(1)
  }
  const r = spawnSync(nvcc, [...flagsFor(input, archs), '-c', input, '-o', output], {stdio: 'inherit'})
  if (r.error) {
    process.stderr.write(`error: cannot run ${nvcc}: ${r.error.message}\n`)
    process.exit(1)
  }
  process.exit(r.status ?? 1)
}
