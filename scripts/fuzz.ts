/**
 * `npm run fuzz`: property-based fuzzing (fast-check) of every parser: .npy, .npz,
 * .safetensors, .smtx, CSR .npz and CSR directories, plus format detection + `sparse info`
 * on all of them ('detect'); files of 10^4..10^5 tensors ('many': linear time, the event
 * loop never held for long); and two writers of one output at once ('race'). See
 * test/fuzz/targets.ts for the generators and test/fuzz/property.ts for the property.
 *
 * Each case must end in a clean InputError/UsageError or a correct, re-validated result:
 * no other exception, no case slower than FUZZ_CASE_MS, no allocation larger than the input
 * justifies (the allocation guard is installed before any library is loaded, so it also
 * sees fflate's buffers), no hang (a watchdog kills a worker whose case runs longer than
 * FUZZ_HANG_MS and reports that case).
 *
 * Environment:
 *   FUZZ_RUNS     cases per parser (default 100000); 'many' runs a thousandth of it (at least 2),
 *                 'race' a twentieth (at least 20)
 *   FUZZ_SEED     base seed (default: random, printed; pass it back to reproduce)
 *   FUZZ_TARGETS  comma-separated parsers (default: all)
 *   FUZZ_WORKERS  worker threads (default: twice the available parallelism)
 *   FUZZ_CHUNKS   jobs per parser, each with its own seed (default 8)
 *   FUZZ_CASE_MS  per-case time bound in ms (default 2000)
 *   FUZZ_HANG_MS  watchdog bound in ms (default 30000; twice its own case bound for 'many')
 *   FUZZ_SAVE     folder for failing cases (default: <tmpdir>/sparse-fuzz-failures)
 *
 * Prints a per-parser summary (busy s: time the workers spent on that parser; cases/s per
 * worker); exits 1 on any failure, with the minimal counterexample.
 */
import {availableParallelism, tmpdir} from 'node:os'
import {join} from 'node:path'
import {isMainThread, parentPort, Worker, workerData} from 'node:worker_threads'

interface Job {
  target: string
  seed: number
  runs: number
}

/** A worker's shared state: [0] heartbeat (cases started), [1] running flag, [2] case text length; then the text. */
const SHARED_BYTES = 1 << 20
const HEADER_INTS = 4

interface WorkerResult {
  type: 'result'
  job: Job
  report: import('../test/fuzz/property.js').TargetReport
  failureText?: string
}

if (isMainThread) {
  await main()
} else {
  await workerMain()
}

// ---------------------------------------------------------------------------------------
// Worker

async function workerMain(): Promise<void> {
  // The guard goes in before the library (and fflate) are imported, so it sees everything.
  const {installAllocGuard} = await import('../test/fuzz/alloc-guard.js')
  installAllocGuard()
  const {TARGETS} = await import('../test/fuzz/targets.js')
  const {runTarget, describeFailure} = await import('../test/fuzz/property.js')
  const shared = workerData.shared as SharedArrayBuffer
  const ints = new Int32Array(shared, 0, HEADER_INTS)
  const text = new Uint8Array(shared, HEADER_INTS * 4)
  const enc = new TextEncoder()
  const caseMs = Number(process.env.FUZZ_CASE_MS ?? 2000)
  const saveTo = process.env.FUZZ_SAVE ?? join(tmpdir(), 'sparse-fuzz-failures')
  parentPort!.on('message', async (job: Job) => {
    const target = TARGETS.find((t) => t.name === job.target)!
    const report = await runTarget(target, {
      numRuns: job.runs,
      seed: job.seed,
      caseTimeMs: caseMs,
      saveTo,
      progressEvery: 500,
      onProgress: (done) => parentPort!.postMessage({type: 'progress', job, done}),
      onCase: (c) => {
        // Record the case before it runs: if it never returns, the watchdog reports it.
        const desc = `${c.what.slice(0, 4000)}\n${Buffer.from(c.bytes.subarray(0, 600_000)).toString('base64')}`
        const {written} = enc.encodeInto(desc, text)
        Atomics.store(ints, 2, written)
        Atomics.add(ints, 0, 1)
      },
    })
    const msg: WorkerResult = {type: 'result', job, report, failureText: report.failed ? describeFailure(report) : undefined}
    parentPort!.postMessage(msg)
  })
  parentPort!.postMessage({type: 'ready'})
}

// ---------------------------------------------------------------------------------------
// Main

interface Slot {
  worker: Worker
  ints: Int32Array
  shared: SharedArrayBuffer
  job: Job | null
  lastBeat: number
  lastBeatAt: number
  ready: boolean
}

async function main(): Promise<void> {
  const runs = Number(process.env.FUZZ_RUNS ?? 100_000)
  const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31)
  const chunks = Math.max(1, Number(process.env.FUZZ_CHUNKS ?? 8))
  // Cases wait on file I/O part of the time (files, CSR directories): two workers per core keep the cores busy.
  const nWorkers = Math.max(1, Number(process.env.FUZZ_WORKERS ?? 2 * availableParallelism()))
  const hangMs = Number(process.env.FUZZ_HANG_MS ?? 30_000)
  const {TARGETS} = await import('../test/fuzz/targets.js')
  const wanted = process.env.FUZZ_TARGETS ? process.env.FUZZ_TARGETS.split(',').map((s) => s.trim()) : TARGETS.map((t) => t.name)
  for (const w of wanted) if (!TARGETS.some((t) => t.name === w)) throw new Error(`unknown target ${w}; targets: ${TARGETS.map((t) => t.name).join(', ')}`)

  const {runsFor} = await import('../test/fuzz/property.js')
  const target = (name: string) => TARGETS.find((t) => t.name === name)!
  const jobs: Job[] = []
  for (const [ti, name] of wanted.entries()) {
    const total = runsFor(target(name), runs)
    const per = Math.ceil(total / chunks)
    for (let k = 0, left = total; left > 0; k++, left -= per) jobs.push({target: name, seed: (seed + 7919 * ti + 104729 * k) | 0, runs: Math.min(per, left)})
  }
  // Longest-running targets first, so the workers finish together; the many-tensor jobs
  // spread evenly among them (run together they queue on the one libuv thread pool the
  // workers share, and a case then takes minutes).
  const order = ['csr-dir', 'csr-npz', 'safetensors', 'detect', 'npz', 'race', 'npy', 'smtx']
  const spread = jobs.filter((j) => j.target === 'many')
  jobs.splice(0, jobs.length, ...jobs.filter((j) => j.target !== 'many').sort((a, b) => order.indexOf(a.target) - order.indexOf(b.target)))
  for (const [k, j] of spread.entries()) jobs.splice(Math.floor((k * (jobs.length + 1)) / spread.length) + k, 0, j)
  // A target whose cases are large by design (many) gets twice its own case bound.
  const hangFor = (name: string) => Math.max(hangMs, 2 * (target(name).caseTimeMs ?? 0))

  console.log(`sparse fuzz: ${runs} cases per parser (${wanted.map((w) => (runsFor(target(w), runs) === runs ? w : `${w} ${runsFor(target(w), runs)}`)).join(', ')}), seed ${seed}, ${nWorkers} workers, ${chunks} jobs per parser`)
  console.log(`reproduce: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} FUZZ_CHUNKS=${chunks} npm run fuzz`)
  const t0 = performance.now()
  const tsxApi = import.meta.resolve('tsx/esm/api')
  const boot = `import {register} from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(import.meta.url)})`

  const results: WorkerResult[] = []
  const failures: string[] = []
  const progress = new Map<string, number>()
  let peakRss = 0

  await new Promise<void>((resolveAll) => {
    const slots: Slot[] = []
    let pending = jobs.slice()
    const finishIfDone = () => {
      if (pending.length === 0 && slots.every((s) => s.job === null)) {
        clearInterval(watch)
        clearInterval(ticker)
        for (const s of slots) void s.worker.terminate()
        resolveAll()
      }
    }
    const dispatch = (s: Slot) => {
      const job = pending.shift()
      if (!job) {
        s.job = null
        finishIfDone()
        return
      }
      s.job = job
      s.lastBeat = Atomics.load(s.ints, 0)
      s.lastBeatAt = performance.now()
      s.worker.postMessage(job)
    }
    const spawn = (): Slot => {
      const shared = new SharedArrayBuffer(SHARED_BYTES)
      const worker = new Worker(boot, {eval: true, workerData: {shared}, resourceLimits: {maxOldGenerationSizeMb: 2048}})
      const slot: Slot = {worker, shared, ints: new Int32Array(shared, 0, HEADER_INTS), job: null, lastBeat: 0, lastBeatAt: performance.now(), ready: false}
      worker.on('message', (m: {type: 'ready' | 'progress' | 'result'; job?: Job; done?: number}) => {
        if (m.type === 'ready') {
          slot.ready = true
          dispatch(slot)
        } else if (m.type === 'progress') {
          progress.set(`${m.job!.target}/${m.job!.seed}`, m.done!)
        } else if (m.type === 'result') {
          const r = m as unknown as WorkerResult
          results.push(r)
          progress.set(`${r.job.target}/${r.job.seed}`, r.job.runs)
          if (r.failureText) {
            failures.push(r.failureText)
            // One failure per parser is enough: drop that parser's remaining jobs.
            pending = pending.filter((j) => j.target !== r.job.target)
          }
          dispatch(slot)
        }
      })
      worker.on('error', (e) => {
        failures.push(`${slot.job?.target ?? '?'}: the worker died: ${e.stack ?? e}`)
        if (slot.job) pending = pending.filter((j) => j.target !== slot.job!.target)
        replace(slot)
      })
      slots.push(slot)
      return slot
    }
    const replace = (slot: Slot) => {
      slots.splice(slots.indexOf(slot), 1)
      void slot.worker.terminate()
      if (pending.length > 0) spawn()
      finishIfDone()
    }
    const watch = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss)
      for (const s of slots) {
        if (!s.job) continue
        const beat = Atomics.load(s.ints, 0)
        if (beat !== s.lastBeat) {
          s.lastBeat = beat
          s.lastBeatAt = performance.now()
        } else if (performance.now() - s.lastBeatAt > hangFor(s.job.target)) {
          const len = Atomics.load(s.ints, 2)
          const text = new TextDecoder().decode(new Uint8Array(s.shared, HEADER_INTS * 4, len).slice())
          const [what, b64] = [text.slice(0, text.lastIndexOf('\n')), text.slice(text.lastIndexOf('\n') + 1)]
          failures.push(`${s.job.target}: HANG: a case ran for more than ${hangFor(s.job.target)} ms (seed ${s.job.seed})\n  case: ${what}\n  bytes (base64): ${b64.slice(0, 4000)}`)
          pending = pending.filter((j) => j.target !== s.job!.target)
          s.job = null
          replace(s)
        }
      }
    }, 1000)
    const ticker = setInterval(() => {
      const done = [...progress.values()].reduce((a, b) => a + b, 0)
      const total = jobs.reduce((a, j) => a + j.runs, 0)
      process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${done} / ${total} cases\n`)
    }, 30_000)
    for (let i = 0; i < Math.min(nWorkers, jobs.length); i++) spawn()
  })

  const wall = (performance.now() - t0) / 1000
  peakRss = Math.max(peakRss, process.resourceUsage().maxRSS * 1024)
  console.log('')
  console.log('parser        cases   busy s   cases/s  slowest ms  largest alloc  ok      clean errors (top codes)')
  let failed = failures.length > 0
  for (const name of wanted) {
    const rs = results.filter((r) => r.job.target === name)
    const n = rs.reduce((a, r) => a + r.report.stats.runs, 0)
    const ms = rs.reduce((a, r) => a + r.report.stats.ms, 0)
    const outcomes: Record<string, number> = {}
    for (const r of rs) for (const [k, v] of Object.entries(r.report.stats.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v
    const ok = outcomes.ok ?? 0
    const errs = Object.entries(outcomes)
      .filter(([k]) => k !== 'ok')
      .sort((a, b) => b[1] - a[1])
    const top = errs.slice(0, 4).map(([k, v]) => `${k.replace(/^(Input|Usage)Error:/, '')} ${v}`).join(', ')
    const slowest = Math.max(0, ...rs.map((r) => r.report.stats.slowestMs))
    const largest = Math.max(0, ...rs.map((r) => r.report.stats.largestAlloc))
    const fail = rs.some((r) => r.report.failed) || failures.some((f) => f.startsWith(`${name}:`))
    if (n < runsFor(target(name), runs) && !fail) failed = true
    console.log(
      `${name.padEnd(12)} ${String(n).padStart(7)} ${(ms / 1000).toFixed(1).padStart(8)} ${String(Math.round(n / (ms / 1000 || 1))).padStart(9)} ${slowest.toFixed(1).padStart(11)} ${fmtBytes(largest).padStart(14)}  ${String(ok).padStart(6)}  ${errs.reduce((a, [, v]) => a + v, 0)} (${top})${fail ? '  FAILED' : ''}`,
    )
  }
  console.log('')
  console.log(`wall time ${wall.toFixed(1)} s, peak RSS ${fmtBytes(peakRss)}, seed ${seed}`)
  if (failures.length > 0) {
    console.log('')
    for (const f of failures) console.log(f + '\n')
  }
  if (failed) {
    console.log('FUZZ FAILED')
    process.exitCode = 1
  } else {
    console.log('no failures')
  }
}

function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`
  return `${(n / (1 << 20)).toFixed(1)} MiB`
}
