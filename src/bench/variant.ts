/**
 * The kernel variant of each CUDA SpMM case: forced (SPARSE_SPMM_VARIANT), tuned (--tune:
 * every variant timed with candidate timing, the fastest kept), a cached winner (the tune
 * cache, see tune.ts), or the kernel's built-in selection ('heuristic'). One Tuner serves
 * a run: it chooses before a case is timed, settles the case's record after, and at the
 * end saves the winners and returns the run's TuneSummary.
 */
import {DeviceError} from '../errors.js'
import {spmmVariantChoice} from '../kernels/variant.js'
import {errorMessage} from './failure.js'
import {indexBitsFor} from './metrics.js'
import {type MeasureArgs, measure} from './measure.js'
import {geomean, summarize} from './stats.js'
import {
  candidateTiming,
  defaultTuneCachePath,
  pickFastest,
  readTuneCache,
  rowClass,
  saveTuneEntries,
  type TuneCache,
  type TuneCacheEntry,
  tuneKey,
} from './tune.js'
import type {BenchCaseResult, BenchNative, BenchOptions, BenchVariantList, NativeTimingOptions, TunedFigures, TuneSummary, VariantSource} from './types.js'


export interface VariantChoice {
  /** The variant passed to the harness (absent: the kernel chooses). */
  pass?: string
  /** The variant that runs, when known. */
  name?: string
  source: VariantSource
  tuned?: TunedFigures
  /** The tune-cache key of the case, and the parts of it a cache entry records. */
  key: string
  structure?: '2:4'
  keepSparse: boolean
}

export class Tuner {
  private readonly warnings: string[] = []
  private readonly fresh: Record<string, TuneCacheEntry> = {}
  private hits = 0
  private tunedCases: TunedFigures[] = []
  private noVariantsWarned = false
  private onlyWarned = false

  private constructor(
    private readonly options: BenchOptions,
    private readonly timing: NativeTimingOptions,
    private readonly gpu: string,
    private readonly forced: string | undefined,
    private readonly path: string | null,
    private readonly cache: TuneCache | undefined,
    warning: string | undefined,
  ) {
    if (warning) this.warnings.push(warning)
  }

  /** Reads the cache (unless --tune, a forced variant, or the cache is off). */
  static async create(options: BenchOptions, timing: NativeTimingOptions, gpu: string, forced: string | undefined): Promise<Tuner> {
    const path = options.tuneCache === false ? null : (options.tuneCache ?? defaultTuneCachePath())
    if (!path || options.tune || forced) return new Tuner(options, timing, gpu, forced, path, undefined, undefined)
    const {cache, warning} = await readTuneCache(path)
    return new Tuner(options, timing, gpu, forced, path, cache, warning)
  }

  async choose(native: BenchNative, a: MeasureArgs, progress: (i: number, count: number) => void): Promise<VariantChoice> {
    const {csr} = a
    const nnz = csr.rowOffsets[csr.rows]
    const indexBits = indexBitsFor(a.op, a.dtype, csr.cols)
    const keepSparse = this.options.keepSparse === true
    const shape = {m: csr.rows, k: csr.cols, n: a.n, nnz, dtype: a.dtype, indexBits}
    // The plan checks the matrix's structure (the 2:4 test) and says what it found.
    // NOTE: a 2:4 matrix lists the 2:4 kernel's s24_* variants too, and has its own cache key.
    const query = {...shape, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: a.values, ...(keepSparse ? {keepSparse} : {})}
    const list: BenchVariantList = native.spmmVariants ? native.spmmVariants(query) : {selected: '', variants: []}
    // (2:4 keys and entries apart for f16/bf16 only, as tuneKey writes them.)
    const structure = list.structure && a.dtype !== 'f32' ? {structure: list.structure} : {}
    const key = tuneKey({gpu: this.gpu, ...shape, ...structure, keepSparse})
    // What every choice below carries for the cache (keep()).
    const ids = {key, ...structure, keepSparse}
    const selected = list.selected || undefined
    if (this.forced) {
      // The kernel runs the forced variant where it can, else its selection (settle() checks
      // the kernel name the harness reports, for names outside the list).
      const {variant, source} = spmmVariantChoice(list, this.forced)
      return {name: variant, source, ...ids}
    }
    if (this.options.tune) {
      const only = this.options.tuneOnly
      const names = list.variants.filter((v) => !only || v === selected || only.some((p) => v.startsWith(p)))
      if (selected && !names.includes(selected)) names.unshift(selected)
      if (only && !names.some((v) => v !== selected) && !this.onlyWarned) {
        this.warnings.push(`--tune-only ${only.join(',')}: no variant of ${a.dtype} m=${csr.rows} k=${csr.cols} n=${a.n} has such a name (the selection's ${selected ?? 'none'} timed alone)`)
        this.onlyWarned = true
      }
      if (names.length === 0) {
        if (!this.noVariantsWarned) this.warnings.push('cannot tune: the addon lists no SpMM variants (rebuild it: npx node-gyp rebuild)')
        this.noVariantsWarned = true
        return {name: selected, source: 'heuristic', ...ids}
      }
      const cand = candidateTiming(this.timing, this.options.tuneMinMs)
      const candidates: Record<string, number> = {}
      const failed: Record<string, string> = {}
      for (const [i, name] of names.entries()) {
        progress(i + 1, names.length)
        try {
          const res = await measure(native, {...a, impls: ['ours'], timing: cand, variant: name})
          const ours = res.impls.find((r) => r.name === 'ours')
          if (!ours?.available) throw new Error(ours?.reason ?? 'did not run')
          candidates[name] = summarize(ours.samples ?? new Float64Array(0)).median
        } catch (error) {
          if (error instanceof DeviceError) throw error
          failed[name] = errorMessage(error)
        }
      }
      const defaultVariant = selected ?? names[0]
      const best = pickFastest(candidates, defaultVariant)
      if (!best) return {...this.heuristic(selected), ...ids}
      const tuned: TunedFigures = {variant: best.variant, ms: best.ms, defaultVariant, defaultMs: candidates[defaultVariant] ?? Number.NaN, candidates}
      if (Object.keys(failed).length > 0) tuned.failed = failed
      return {pass: best.variant, name: best.variant, source: 'tuned', tuned, ...ids}
    }
    const hit = this.cache?.entries[key]
    if (hit && list.variants.includes(hit.variant)) {
      this.hits++
      return {pass: hit.variant, name: hit.variant, source: 'cache', ...ids}
    }
    return {...this.heuristic(selected), ...ids}
  }

  /**
   * The built-in selection's pick. The harness's own selection knows nothing of keepSparse, so
   * with it the pick (made by spmmVariants with keepSparse) is passed by name.
   */
  private heuristic(selected: string | undefined): Omit<VariantChoice, 'key' | 'structure' | 'keepSparse'> {
    return {...(this.options.keepSparse && selected ? {pass: selected} : {}), name: selected, source: 'heuristic'}
  }

  /**
   * The case's record with the variant that ran and where it came from; a tuned winner is
   * kept for the cache when its output checked out.
   */
  settle(record: BenchCaseResult, choice: VariantChoice, file: string): BenchCaseResult {
    if (this.forced && record.impls.ours?.detail?.includes(`_${this.forced},`)) choice = {...choice, name: this.forced, source: 'forced'}
    const settled: BenchCaseResult = {...record, ...(choice.name ? {variant: choice.name} : {}), variantSource: choice.source}
    if (!choice.tuned) return settled
    settled.tuned = choice.tuned
    this.keep(settled, choice.tuned, choice, file)
    return settled
  }

  private keep(record: BenchCaseResult, t: TunedFigures, choice: VariantChoice, file: string): void {
    const {key} = choice
    this.tunedCases.push(t)
    const limit = record.dtype === 'f32' ? 1e-3 : 5e-2
    if (record.check && !(record.check.relErr <= limit)) {
      this.warnings.push(`not caching ${t.variant} for ${file} n=${record.n} ${record.dtype}: its output differs from ${record.check.against} (relErr ${record.check.relErr.toExponential(2)})`)
      return
    }
    this.fresh[key] = {
      variant: t.variant,
      ms: t.ms,
      defaultVariant: t.defaultVariant,
      defaultMs: t.defaultMs,
      gpu: this.gpu,
      dtype: record.dtype,
      indexBits: record.indexBits,
      m: record.m,
      k: record.k,
      n: record.n,
      nnz: record.nnz,
      rowClass: rowClass(record.m, record.nnz),
      ...(choice.structure ? {structure: choice.structure} : {}),
      ...(choice.keepSparse ? {keepSparse: true as const} : {}),
      file,
      tunedAt: new Date().toISOString(),
    }
  }

  /** Saves the winners (--tune) and returns the run's summary. */
  async finish(): Promise<TuneSummary> {
    let saved = 0
    // --tune-only's winners were not weighed against every variant: not cached.
    if (this.options.tune && !this.options.tuneOnly && this.path && Object.keys(this.fresh).length > 0) {
      try {
        const r = await saveTuneEntries(this.path, this.fresh)
        if (r.warning) this.warnings.push(`${r.warning}; it was replaced`)
        saved = Object.keys(this.fresh).length
      } catch (error) {
        this.warnings.push(`could not save the tune cache ${this.path}: ${errorMessage(error)}`)
      }
    }
    const gains = this.tunedCases.filter((t) => t.defaultMs > 0 && t.ms > 0).map((t) => t.defaultMs / t.ms)
    return {
      tune: this.options.tune ?? false,
      cache: this.path,
      forced: this.forced ?? null,
      keepSparse: this.options.keepSparse === true,
      only: this.options.tuneOnly ?? null,
      cacheEntries: this.cache ? Object.keys(this.cache.entries).length : 0,
      hits: this.hits,
      tuned: this.tunedCases.length,
      changed: this.tunedCases.filter((t) => t.variant !== t.defaultVariant).length,
      geomeanGain: gains.length > 0 ? geomean(gains) : null,
      saved,
      warnings: this.warnings,
    }
  }
}
