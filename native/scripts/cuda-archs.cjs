// Prints nvcc's -gencode flags for binding.gyp's CUDA rule, one per line (gyp's <!@ list).
//
// Which GPU architectures are compiled:
//   SPARSE_CUDA_ARCHS set: exactly those. A list of compute capabilities separated by commas,
//     semicolons or spaces ("90", "8.0,9.0", "sm_90"), or a word:
//       portable  the packaging set: sm_80 + sm_90 SASS and compute_90 PTX (what every GPU
//                 from Ampere on runs, newer ones through the PTX);
//       native    the GPUs nvidia-smi reports on this machine (an error when there are none).
//     SASS for each listed architecture, plus PTX for the highest (so newer GPUs still run).
//   unset: the GPUs detected here (nvidia-smi --query-gpu=compute_cap) when every one of them is
//     in the portable set (sm_80 or sm_90): only those (per file about a quarter less CPU
//     time and half the device code).
//     Otherwise, including on a machine with no GPU or no nvidia-smi, the portable set.
//     NOTE: a build made on a machine without a GPU is carried to GPU machines (the H200
//     benchmarks, packages), so no GPU must never mean "no sm_90".
// `node cuda-archs.cjs --explain` prints the choice in words (for the README and a build log).
const {execFileSync} = require('node:child_process')

const PORTABLE = [80, 90]
const OLDEST = 75 // nvcc 13's oldest target

function detected() {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    }).toString()
    const caps = out
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^\d+\.\d+$/.test(l))
      .map((l) => Math.round(Number(l) * 10))
    return [...new Set(caps)].sort((a, b) => a - b)
  } catch {
    return []
  }
}

/** Parses SPARSE_CUDA_ARCHS's list ("90", "8.0,9.0", "sm_86 sm_90"); throws on a bad entry. */
function parseList(value) {
  const archs = []
  for (const raw of value.split(/[\s,;]+/).filter(Boolean)) {
    const m = /^(?:sm_|compute_)?(\d+)(?:\.(\d))?$/.exec(raw.trim())
    if (!m) throw new Error(`SPARSE_CUDA_ARCHS: '${raw}' is not a compute capability (e.g. 90, 9.0 or sm_90), 'portable' or 'native'`)
    const cc = m[2] === undefined ? Number(m[1]) : Number(m[1]) * 10 + Number(m[2])
    if (cc < OLDEST) throw new Error(`SPARSE_CUDA_ARCHS: sm_${cc} is older than nvcc 13 supports (sm_${OLDEST})`)
    archs.push(cc)
  }
  if (archs.length === 0) throw new Error('SPARSE_CUDA_ARCHS is set but lists no architecture')
  return [...new Set(archs)].sort((a, b) => a - b)
}

/** {archs, why}: the architectures to compile and the reason, from the environment and nvidia-smi. */
function choose(env = process.env, detect = detected) {
  const asked = (env.SPARSE_CUDA_ARCHS ?? '').trim()
  if (asked === 'portable') return {archs: PORTABLE, why: 'SPARSE_CUDA_ARCHS=portable'}
  if (asked === 'native') {
    const caps = detect()
    if (caps.length === 0) throw new Error('SPARSE_CUDA_ARCHS=native, but nvidia-smi reports no GPU here')
    return {archs: caps, why: 'SPARSE_CUDA_ARCHS=native'}
  }
  if (asked !== '') return {archs: parseList(asked), why: `SPARSE_CUDA_ARCHS=${asked}`}
  const caps = detect()
  if (caps.length > 0 && caps.every((c) => PORTABLE.includes(c))) return {archs: caps, why: `detected GPU${caps.length > 1 ? 's' : ''} (nvidia-smi)`}
  if (caps.length > 0) return {archs: PORTABLE, why: `detected sm_${caps.join(', sm_')} is outside the default set: the portable set (SPARSE_CUDA_ARCHS=native compiles for it)`}
  return {archs: PORTABLE, why: 'no GPU detected: the portable set'}
}

/** nvcc's -gencode flags: SASS for each architecture, PTX for the highest. */
function gencode(archs) {
  const flags = []
  for (const a of archs) flags.push('-gencode', `arch=compute_${a},code=sm_${a}`)
  const top = archs[archs.length - 1]
  flags.push('-gencode', `arch=compute_${top},code=compute_${top}`)
  return flags
}

module.exports = {choose, gencode, parseList, PORTABLE}

if (require.main === module) {
  try {
    const {archs, why} = choose()
    if (process.argv.includes('--explain')) process.stdout.write(`CUDA architectures: sm_${archs.join(', sm_')} + PTX compute_${archs[archs.length - 1]} (${why})\n`)
    else process.stdout.write(gencode(archs).join('\n') + '\n')
  } catch (e) {
    process.stderr.write(`error: ${e.message}\n`)
    process.exit(1)
  }
}
