/**
 * `npm run scale:prune`: pruning at scale. Writes a 4 GiB `.safetensors` of seeded random
 * float32 tensors (16 × 8192×8192 by default) into a temporary folder — streamed with
 * writeSafetensorsStream, never held in memory, never inside the repository — then runs the
 * real CLI (`node bin/run.js prune`, so `npm run build` first) with `--scope tensor` and
 * `--scope global`, each writing a CSR directory, and measures wall time, throughput (input
 * bytes / wall second) and peak resident memory (`/usr/bin/time -v`, else /proc VmHWM). The
 * files are deleted afterwards. Results go to stdout and to a Markdown report.
 *
 * Targets (issue 6): peak RSS under 1.5 GB and at least 200 MB/s on a 2-core machine.
 *
 * Environment:
 *   SCALE_TENSORS, SCALE_ROWS, SCALE_COLS   the model (default 16, 8192, 8192)
 *   SCALE_SPARSITY                         target sparsity (default 0.9)
 *   SCALE_SCOPES                           comma list (default tensor,global)
 *   SCALE_DIR                              parent of the temporary folder (default os.tmpdir())
 *   SCALE_REPORT                           Markdown report path (default /tmp/benchmarks-scale.md)
 *   SCALE_PROFILE=1                        also write a V8 CPU profile of each run (node --cpu-prof) into the report's folder
 *   SCALE_KEEP=1                           keep the generated model (its path is printed)
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync} from 'node:fs'
import {cpus, loadavg, totalmem, tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {writeSafetensorsStream} from '../src/formats/index.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')

const TENSORS = Number(process.env.SCALE_TENSORS ?? 16)
const ROWS = Number(process.env.SCALE_ROWS ?? 8192)
const COLS = Number(process.env.SCALE_COLS ?? 8192)
const SPARSITY = Number(process.env.SCALE_SPARSITY ?? 0.9)
const SCOPES = (process.env.SCALE_SCOPES ?? 'tensor,global').split(',').map((s) => s.trim())
const REPORT = process.env.SCALE_REPORT ?? '/tmp/benchmarks-scale.md'
const PROFILE = process.env.SCALE_PROFILE === '1'
const KEEP = process.env.SCALE_KEEP === '1'
const TARGET_RSS = 1.5e9
const TARGET_MBPS = 200

// ---------------------------------------------------------------------------------------
// Seeded weights: normal deviates through a 2^16-entry inverse-CDF table with linear
// interpolation (a few ns per value; Box–Muller would take a minute for 10^9 values).

function inverseNormal(p: number): number {
  // Acklam's rational approximation (relative error < 1.2e-9).
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239]
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572]
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783]
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416]
  const lo = 0.02425
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p))
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
  }
  if (p > 1 - lo) return -inverseNormal(1 - p)
  const q = p - 0.5
  const r = q * q
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
}

const TABLE_BITS = 16
const TABLE = (() => {
  const n = 1 << TABLE_BITS
  const t = new Float64Array(n + 1)
  for (let i = 0; i <= n; i++) t[i] = inverseNormal(Math.min(1 - 1e-12, Math.max(1e-12, i / n)))
  return t
})()

/** Fill `out` with ~N(0, std²) float32 values from a xorshift128 state (mutated). */
function fillWeights(out: Float32Array, state: Uint32Array, std: number): void {
  let [x, y, z, w] = state
  const frac = 1 / (1 << (32 - TABLE_BITS))
  for (let i = 0; i < out.length; i++) {
    const t = x ^ (x << 11)
    x = y
    y = z
    z = w
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0
    const hi = w >>> (32 - TABLE_BITS)
    const f = (w & ((1 << (32 - TABLE_BITS)) - 1)) * frac
    out[i] = std * (TABLE[hi] + f * (TABLE[hi + 1] - TABLE[hi]))
  }
  state[0] = x
  state[1] = y
  state[2] = z
  state[3] = w
}

// ---------------------------------------------------------------------------------------
// Measuring a child process

interface RunResult {
  code: number | null
  wallS: number
  /** User + system CPU seconds of the command (from /usr/bin/time), or NaN. */
  cpuS: number
  peakRssBytes: number
  how: string
  stdout: string
  stderr: string
}

function measure(args: string[], cwd: string): Promise<RunResult> {
  const useTime = existsSync('/usr/bin/time')
  const cmd = useTime ? '/usr/bin/time' : process.execPath
  const argv = useTime ? ['-v', process.execPath, ...args] : args
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(cmd, argv, {cwd, env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    // Fallback (and cross-check): poll VmHWM of the node process.
    let hwm = 0
    const poll = setInterval(() => {
      for (const pid of [child.pid, ...childrenOf(child.pid!)]) {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
          if (m) hwm = Math.max(hwm, Number(m[1]) * 1024)
        } catch {
          // gone
        }
      }
    }, 50)
    child.on('error', reject)
    child.on('close', (code) => {
      clearInterval(poll)
      const wallS = (performance.now() - t0) / 1000
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)
      const timeRss = m ? Number(m[1]) * 1024 : 0
      const user = /User time \(seconds\): ([\d.]+)/.exec(stderr)
      const sys = /System time \(seconds\): ([\d.]+)/.exec(stderr)
      const cpuS = user && sys ? Number(user[1]) + Number(sys[1]) : NaN
      resolve({code, wallS, cpuS, peakRssBytes: Math.max(timeRss, hwm), how: m ? '/usr/bin/time -v (max RSS), cross-checked with /proc VmHWM' : '/proc/<pid>/status VmHWM, polled every 50 ms', stdout, stderr})
    })
  })
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

const gb = (n: number) => (n / 1e9).toFixed(2)
const mib = (n: number) => (n / 2 ** 20).toFixed(0)

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'commands', 'prune.js'))) throw new Error('dist/commands/prune.js is missing: run `npm run build` first')
  const bytes = TENSORS * ROWS * COLS * 4
  const parent = process.env.SCALE_DIR ?? tmpdir()
  const fs = statfsSync(parent)
  const free = fs.bavail * fs.bsize
  const need = bytes * 1.3 + 1e9
  if (free < need) throw new Error(`${parent} has ${gb(free)} GB free; this run needs about ${gb(need)} GB (model + CSR output)`)
  const dir = mkdtempSync(join(parent, 'sparse-scale-'))
  const model = join(dir, 'model.safetensors')
  const cleanup = () => {
    if (KEEP) rmSync(join(dir, 'out'), {recursive: true, force: true})
    else rmSync(dir, {recursive: true, force: true})
  }
  process.on('SIGINT', () => {
    cleanup()
    process.exit(130)
  })
  try {
    console.log(`writing ${TENSORS} x ${ROWS}x${COLS} float32 (${gb(bytes)} GB) to ${model}`)
    let t0 = performance.now()
    const chunk = new Float32Array(1 << 21) // 8 MiB
    const state = Uint32Array.from([0x9e3779b9, 0x243f6a88, 0xb7e15162, 20261129])
    await writeSafetensorsStream(
      Array.from({length: TENSORS}, (_, i) => ({name: `layers.${String(i).padStart(2, '0')}.weight`, shape: [ROWS, COLS], dtype: 'f32' as const})),
      async (i, sink) => {
        // Kaiming-like scale, different per tensor, so global scope has work to do.
        const std = Math.sqrt(2 / COLS) * (0.5 + i / TENSORS)
        for (let left = ROWS * COLS; left > 0; left -= chunk.length) {
          const part = left >= chunk.length ? chunk : chunk.subarray(0, left)
          fillWeights(part, state, std)
          await sink.write(new Uint8Array(part.buffer, part.byteOffset, part.byteLength))
        }
      },
      model,
    )
    const size = statSync(model).size
    console.log(`  written in ${((performance.now() - t0) / 1000).toFixed(1)} s (${size} bytes)`)

    const rows: {scope: string; wallS: number; cpuS: number; mbps: number; rss: number; nnz: number; tensors: number; outBytes: number; how: string; profile?: string}[] = []
    for (const scope of SCOPES) {
      const out = join(dir, 'out')
      rmSync(out, {recursive: true, force: true})
      const profDir = join(dirname(REPORT), `scale-prune-profile-${scope}`)
      const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []
      if (PROFILE) mkdirSync(profDir, {recursive: true})
      const args = [...nodeArgs, BIN, 'prune', model, '-s', String(SPARSITY), '--scope', scope, '-o', out, '--json']
      console.log(`prune --scope ${scope} ...`)
      t0 = performance.now()
      const r = await measure(args, ROOT)
      if (r.code !== 0) throw new Error(`prune --scope ${scope} failed (exit ${r.code}): ${r.stderr.slice(-2000)}${r.stdout.slice(-2000)}`)
      const result = JSON.parse(r.stdout) as {tensors: {nnz: number}[]}
      const nnz = result.tensors.reduce((a, t) => a + t.nnz, 0)
      const outBytes = dirBytes(out)
      const mbps = size / 1e6 / r.wallS
      rows.push({scope, wallS: r.wallS, cpuS: r.cpuS, mbps, rss: r.peakRssBytes, nnz, tensors: result.tensors.length, outBytes, how: r.how, profile: PROFILE ? profDir : undefined})
      console.log(`  ${r.wallS.toFixed(1)} s (CPU ${r.cpuS.toFixed(1)} s), ${mbps.toFixed(0)} MB/s, peak RSS ${mib(r.peakRssBytes)} MiB, nnz ${nnz}, output ${gb(outBytes)} GB`)
      rmSync(out, {recursive: true, force: true})
    }

    const date = new Date().toISOString()
    const cpu = cpus()[0]?.model ?? 'unknown CPU'
    const lines = [
      '# Pruning at scale (`npm run scale:prune`)',
      '',
      `Date: ${date}. Machine: ${cpus().length} cores (${cpu}), ${gb(totalmem())} GB RAM, Node ${process.version}.`,
      `Command: \`npm run build && ${Object.entries({SCALE_TENSORS: TENSORS, SCALE_ROWS: ROWS, SCALE_COLS: COLS, SCALE_SPARSITY: SPARSITY}).map(([k, v]) => `${k}=${v}`).join(' ')} npm run scale:prune\``,
      `Input: ${TENSORS} float32 tensors of ${ROWS}x${COLS} (seeded normal, std scaled per tensor), one .safetensors of ${size} bytes (${gb(size)} GB), in ${parent} (warm page cache: the file was just written).`,
      `Each run: \`sparse prune model.safetensors -s ${SPARSITY} --scope <scope> -o out/ --json\` (a CSR directory is written). Peak memory: ${rows[0]?.how ?? ''}.`,
      '',
      '| scope | wall s | CPU s (user + sys) | throughput MB/s (input / wall) | peak RSS MiB | tensors | nnz | output GB | targets (≥ 200 MB/s, < 1.5 GB) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...rows.map((r) => `| ${r.scope} | ${r.wallS.toFixed(1)} | ${r.cpuS.toFixed(1)} | ${r.mbps.toFixed(0)} | ${mib(r.rss)} | ${r.tensors} | ${r.nnz} | ${gb(r.outBytes)} | ${r.mbps >= TARGET_MBPS ? 'speed met' : 'speed MISSED'}, ${r.rss < TARGET_RSS ? 'memory met' : 'memory MISSED'} |`),
      '',
      'MB = 10^6 bytes. Throughput counts the input file once, whatever the number of passes.',
      `Load average when the runs ended: ${loadavg().map((x) => x.toFixed(1)).join(', ')} (the machine is shared: wall time above CPU time is time spent waiting for a core).`,
      ...(PROFILE ? ['', `CPU profiles (node --cpu-prof): ${rows.map((r) => r.profile).join(', ')}`] : []),
      '',
    ]
    mkdirSync(dirname(REPORT), {recursive: true})
    writeFileSync(REPORT, lines.join('\n'))
    console.log(`\n${lines.join('\n')}\nreport written to ${REPORT}`)
    if (KEEP) console.log(`model kept: ${model}`)
  } finally {
    cleanup()
  }
}

function dirBytes(dir: string): number {
  let n = 0
  try {
    for (const f of readdirSync(dir)) n += statSync(join(dir, f)).size
  } catch {
    return 0
  }
  return n
}

await main()
