/**
 * `sparse bench`'s core, stage by stage, each stage's output the next one's input:
 *   plan.ts    options -> plan (defaults, usage checks, problems, --compare table)
 *   device.ts  the GPU or CPU and its measured ceilings (DeviceError before any case)
 *   case.ts    one case -> its record (variant choice, one harness call, figures, --compare)
 *   report.ts  records -> the report (settings, clocks seen, tune summary, summaries)
 * The types live in types.ts, which imports nothing else from src/bench/.
 */
import {type CaseInput, type CaseOutcome, runCase, valuesFor} from './case.js'
import {DeviceError} from '../errors.js'
import {describeDevice, resolveDevice} from './device.js'
import {getBenchNative} from './native.js'
import {planBench} from './plan.js'
import {assembleReport} from './report.js'
import type {BenchOptions, BenchReport} from './types.js'
import {Tuner} from './variant.js'

export {implList} from './plan.js'

/** Runs the benchmark. Throws UsageError/DeviceError before any case runs; case failures are recorded. */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const started = Date.now()
  const planned = await planBench(options)
  const native = options.native ?? getBenchNative()
  const plan = {...planned, device: resolveDevice(planned.device, native)}
  if (options.tune && plan.device !== 'cuda') {
    throw new DeviceError('tune-no-gpu', '--tune needs a GPU, and --device auto found no usable one', 'run on a machine with an NVIDIA GPU, or drop --tune')
  }
  const device = await describeDevice(native, plan.device, plan.timing.threads)
  const tuner = plan.device === 'cuda' ? await Tuner.create(options, plan.timing, device.name, plan.forced) : undefined
  const ctx = {native, device: plan.device, baselineKinds: plan.baselineKinds, timing: plan.timing, seed: plan.seed, ceilings: device.ceilings, tuner, compare: plan.compare}

  const {total} = plan
  let done = 0
  const outcomes: CaseOutcome[] = []
  for (const problem of plan.problems) {
    let loaded: Pick<CaseInput, 'csr' | 'loadError'>
    try {
      loaded = {csr: await problem.load()}
    } catch (error) {
      loaded = {loadError: error}
    }
    for (const dtype of plan.dtypes) {
      const values = loaded.csr ? valuesFor(loaded.csr, dtype, plan.seed, problem.file) : undefined
      for (const op of plan.ops) {
        for (const n of problem.ns) {
          const label = `${problem.file} ${op} ${dtype} n=${n}`
          options.onProgress?.({done, total, label})
          const onTuning = (i: number, count: number): void => options.onProgress?.({done, total, label: `${label} tuning ${i}/${count}`})
          outcomes.push(await runCase(ctx, {problem, ...loaded, values, op, dtype, n}, onTuning))
          done++
        }
      }
    }
  }
  options.onProgress?.({done, total, label: 'done'})

  const tune = tuner ? await tuner.finish() : null
  return assembleReport(plan, device, outcomes, tune, Date.now() - started)
}
