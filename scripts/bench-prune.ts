/**
 * `npm run bench:prune`: times magnitude pruning of a seeded 64M-element float32 tensor
 * (8192 x 8192, standard normal, seed 42) at S = 0.9, and in the same run the NumPy/SciPy
 * equivalent (np.partition on |w| for the threshold, then scipy.sparse.csr_matrix of the
 * masked weights) on the same data, shared as an .npy in a temporary folder.
 *
 *   npm run bench:prune [-- --rows 8192 --cols 8192 --sparsity 0.9 --reps 5 --json]
 *
 * Timings (best and median of --reps runs):
 *   core       pruneMagnitude(): the one-pass sampled path (see src/pruning/sampled.ts) + CSR
 *              build + row swizzle + report, in memory (the input is already in memory)
 *   exact      the exact path alone (radix select, 2 histogram passes + the CSR pass), as
 *              global scope and the fallback use it
 *   select     the exact radix select alone (selectCut), to set beside np.partition
 *   cli        `node bin/run.js prune w.npy -s S -o out.npz`, wall clock: Node start, reading
 *              the .npy, pruning, writing the CSR (needs `npm run build`; skipped otherwise)
 *   numpy      np.abs + np.partition + threshold (python3, time.perf_counter)
 *   numpy+csr  the above + scipy.sparse.csr_matrix(np.where(|w| > t, w, 0))
 * Also printed: the cost of first touching a fresh 256 MiB allocation in Node (page faults;
 * NumPy asks for huge pages, Node cannot), which dominates on some virtual machines.
 * A benchmark, not a test: it never fails on timing.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {writeNpy} from '../src/formats/index.js'
import {emitCsr} from '../src/pruning/emit.js'
import {prepareTensor} from '../src/pruning/keys.js'
import {pruneMagnitude} from '../src/pruning/magnitude.js'
import {prunedCount} from '../src/pruning/amount.js'
import {selectCut} from '../src/pruning/select.js'
import {fillNormal} from '../src/sparse/random.js'
import type {DenseTensor} from '../src/types.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}

const rows = arg('rows', 8192)
const cols = arg('cols', 8192)
const sparsity = arg('sparsity', 0.9)
const reps = arg('reps', 5)
const json = process.argv.includes('--json')

interface Timing {
  best: number
  median: number
  runs: number[]
}

function summarise(runs: number[]): Timing {
  const s = [...runs].sort((a, b) => a - b)
  return {best: s[0], median: s[Math.floor((s.length - 1) / 2)], runs}
}

function time(fn: () => void): Timing {
  const runs: number[] = []
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now()
    fn()
    runs.push((performance.now() - t0) / 1000)
  }
  return summarise(runs)
}

const PY = `
import sys, time, json
import numpy as np, scipy.sparse as sp
w = np.load(sys.argv[1]); S = float(sys.argv[2]); reps = int(sys.argv[3])
k = int(round(S * w.size))
part, full = [], []
for _ in range(reps):
    t0 = time.perf_counter()
    a = np.abs(w)
    t = np.partition(a.ravel(), k - 1)[k - 1]
    t1 = time.perf_counter()
    m = sp.csr_matrix(np.where(a > t, w, np.float32(0)))
    t2 = time.perf_counter()
    part.append(t1 - t0); full.append(t2 - t0)
    del a, m
fresh = []
for _ in range(reps):
    t0 = time.perf_counter(); b = np.empty(256 << 20, np.uint8); b[::4096] = 1; fresh.append(time.perf_counter() - t0); del b
print(json.dumps({"fresh": fresh, "partition": part, "full": full, "nnz": int(np.count_nonzero(np.abs(w) > t)), "numpy": np.__version__, "scipy": __import__("scipy").__version__}))
`

async function main(): Promise<void> {
  const n = rows * cols
  const log = (s: string) => {
    if (!json) process.stdout.write(s + '\n')
  }
  log(`bench:prune  ${rows}x${cols} float32 (${(n / 2 ** 20).toFixed(0)}M weights), standard normal (seed 42), S = ${sparsity}, ${reps} reps`)
  const data = fillNormal(new Float32Array(n), 42)
  const tensor: DenseTensor = {name: 'w', shape: [rows, cols], dtype: 'f32', data}

  const k = prunedCount(sparsity, n)
  const m = prepareTensor(tensor)
  let nnz = 0
  pruneMagnitude(tensor, {sparsity}) // warm-up (JIT)
  const core = time(() => {
    nnz = pruneMagnitude(tensor, {sparsity}).report.nnz
  })
  const exact = time(() => {
    const cut = selectCut(m, k)
    emitCsr(m, cut.key, cut.ties, n - k)
  })
  const select = time(() => void selectCut(m, k))
  const fresh = time(() => {
    const a = new Uint8Array(256 << 20)
    for (let i = 0; i < a.length; i += 4096) a[i] = 1
  })
  log(`  sparse core (pruneMagnitude):        best ${core.best.toFixed(3)} s, median ${core.median.toFixed(3)} s  (nnz ${nnz})`)
  log(`  sparse exact path (select + CSR):    best ${exact.best.toFixed(3)} s, median ${exact.median.toFixed(3)} s`)
  log(`  sparse exact radix select only:      best ${select.best.toFixed(3)} s, median ${select.median.toFixed(3)} s`)
  log(`  node: first touch of 256 MiB fresh:  best ${fresh.best.toFixed(3)} s, median ${fresh.median.toFixed(3)} s  (page faults)`)

  const dir = mkdtempSync(join(tmpdir(), 'sparse-bench-'))
  const result: Record<string, unknown> = {rows, cols, sparsity, reps, nnz, node: process.version, core, exact, select, freshMemory256MiB: fresh}
  try {
    const npy = join(dir, 'w.npy')
    await writeNpy(tensor, npy)

    // The whole CLI path, if built.
    const bin = join(ROOT, 'bin', 'run.js')
    if (existsSync(join(ROOT, 'dist', 'commands', 'prune.js'))) {
      const runs: number[] = []
      for (let i = 0; i < Math.min(reps, 3); i++) {
        const out = join(dir, `out${i}.npz`)
        const t0 = performance.now()
        const r = spawnSync(process.execPath, [bin, 'prune', npy, '-s', String(sparsity), '-o', out], {encoding: 'utf8', env: {...process.env, NO_COLOR: '1'}})
        runs.push((performance.now() - t0) / 1000)
        if (r.status !== 0) throw new Error(`sparse prune failed: ${r.stderr}`)
        rmSync(out, {force: true})
      }
      const cli = summarise(runs)
      result.cli = cli
      log(`  sparse CLI (read .npy, prune, write CSR .npz): best ${cli.best.toFixed(3)} s, median ${cli.median.toFixed(3)} s`)
    } else {
      log('  sparse CLI: skipped (run `npm run build` first)')
    }

    const py = spawnSync('python3', ['-c', PY, npy, String(sparsity), String(reps)], {encoding: 'utf8', maxBuffer: 1 << 20})
    if (py.error || py.status !== 0) {
      log(`  numpy/scipy: skipped (${py.error ? py.error.message : py.stderr.trim().split('\n').pop()})`)
    } else {
      const p = JSON.parse(py.stdout) as {fresh: number[]; partition: number[]; full: number[]; nnz: number; numpy: string; scipy: string}
      const partition = summarise(p.partition)
      const full = summarise(p.full)
      const pyFresh = summarise(p.fresh)
      result.numpy = {partition, full, freshMemory256MiB: pyFresh, nnz: p.nnz, versions: {numpy: p.numpy, scipy: p.scipy}}
      log(`  numpy np.partition (+abs):            best ${partition.best.toFixed(3)} s, median ${partition.median.toFixed(3)} s`)
      log(`  numpy + scipy csr_matrix:             best ${full.best.toFixed(3)} s, median ${full.median.toFixed(3)} s  (nnz ${p.nnz}; numpy ${p.numpy}, scipy ${p.scipy})`)
      log(`  numpy: first touch of 256 MiB fresh: best ${pyFresh.best.toFixed(3)} s, median ${pyFresh.median.toFixed(3)} s`)
      const ratio = full.median / core.median
      result.ratio = {numpyScipyOverCore: ratio, numpyScipyOverExact: full.median / exact.median, numpyPartitionOverSelect: partition.median / select.median}
      log(`  ratio (numpy+scipy) / (sparse core), medians: ${ratio.toFixed(2)}x ${ratio >= 1 ? '(sparse is faster)' : '(numpy+scipy is faster)'}`)
      log(`  ratio (numpy+scipy) / (sparse exact path):    ${(full.median / exact.median).toFixed(2)}x`)
      log(`  ratio np.partition / sparse select, medians:  ${(partition.median / select.median).toFixed(2)}x`)
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
  if (json) process.stdout.write(JSON.stringify(result, null, 2) + '\n')
}

await main()
