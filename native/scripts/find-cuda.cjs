// Prints the CUDA toolkit root when nvcc and the static runtime are present, else nothing.
// binding.gyp builds the CUDA kernels only when this prints a path. SPARSE_NO_CUDA=1 forces
// a CPU-only build (used by the tests of that configuration).
const fs = require('node:fs')
const path = require('node:path')
const {execSync} = require('node:child_process')

function find() {
  if (process.env.SPARSE_NO_CUDA === '1') return ''
  const candidates = []
  if (process.env.CUDA_HOME) candidates.push(process.env.CUDA_HOME)
  if (process.env.CUDA_PATH) candidates.push(process.env.CUDA_PATH)
  try {
    const nvcc = execSync('command -v nvcc', {stdio: ['ignore', 'pipe', 'ignore'], shell: '/bin/sh'}).toString().trim()
    if (nvcc) candidates.push(path.resolve(path.dirname(fs.realpathSync(nvcc)), '..'))
  } catch {}
  candidates.push('/usr/local/cuda')
  for (const c of candidates) {
    if (fs.existsSync(path.join(c, 'bin', 'nvcc')) && fs.existsSync(path.join(c, 'lib64', 'libcudart_static.a'))) return c
  }
  return ''
}
process.stdout.write(find())
