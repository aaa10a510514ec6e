import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import type {NativeBenchArgs} from '../../src/bench/types.js'
import {runBench} from '../../src/bench/run.js'
import {
  candidateTiming,
  defaultTuneCachePath,
  pickFastest,
  readTuneCache,
  rowClass,
  saveTuneEntries,
  type TuneCacheEntry,
  tunedVariant,
  tuneKey,
} from '../../src/bench/tune.js'
import {renderHeader, toCsv} from '../../src/bench/output.js'
import {fakeNative} from './fake-native.js'
import {ok, tempDirs} from './helpers.js'

const SMTX = 'fixtures/dlmc-rn50-0.98-initial_conv.smtx' // 64 x 147, nnz 188
const BASE = 188 * 16 * 1e-9 // the fake's time for ours at n = 16, factor 1
const VARIANTS = {selected: 'split_v4_t8_w1', factors: {split_v4_t8_w1: 1, split_v4_t4_w2: 0.5, tile_v4_t32_x2: 0.8, split_v4_t2_w4: 0.7}}
const FAST = {minReps: 3, minMs: 1, warmup: 1}

const tempDir = tempDirs('bench-tune-')

async function usageError(fn: () => Promise<unknown>): Promise<Error & {exitCode?: number}> {
  try {
    await fn()
  } catch (error) {
    return error as Error & {exitCode?: number}
  }
  throw new Error('expected an error')
}

describe('bench --tune: keys, selection and the cache file', () => {
  it('builds keys from the GPU, dtype, index width, exact m/k/n and the mean row length as a power of 2', () => {
    expect(rowClass(64, 188)).to.equal(4) // 2.94 -> 2^2
    expect(rowClass(4096, 4096 * 1229)).to.equal(1024) // 0.7 of 4096: 1229 -> 2^10
    expect(rowClass(4096, 4096 * 1500)).to.equal(2048) // log2 1500 = 10.55 -> 2^11
    expect(rowClass(10, 0)).to.equal(0)
    expect(rowClass(0, 0)).to.equal(0)
    const k = {gpu: 'NVIDIA H200', dtype: 'f32' as const, m: 4096, k: 11008, n: 16, nnz: 4096 * 1100}
    expect(tuneKey(k)).to.equal('NVIDIA H200|f32|i32|m4096|k11008|n16|r1024')
    // Half precision defaults to 16-bit indices when k <= 32768, as the bench runs it.
    expect(tuneKey({...k, dtype: 'f16'})).to.equal('NVIDIA H200|f16|i16|m4096|k11008|n16|r1024')
    expect(tuneKey({...k, dtype: 'f16', indexBits: 32})).to.equal('NVIDIA H200|f16|i32|m4096|k11008|n16|r1024')
    // A nearby sparsity shares the key; twice the work per row does not; n, m, k and the GPU are exact.
    expect(tuneKey({...k, nnz: 4096 * 1000})).to.equal(tuneKey(k))
    expect(tuneKey({...k, nnz: 4096 * 2200})).to.not.equal(tuneKey(k))
    expect(tuneKey({...k, n: 32})).to.not.equal(tuneKey(k))
    expect(tuneKey({...k, gpu: 'NVIDIA A100'})).to.not.equal(tuneKey(k))
    // Tuned with keepSparse (no kernel storing every weight among the candidates): kept apart.
    expect(tuneKey({...k, keepSparse: true})).to.equal('NVIDIA H200|f32|i32|m4096|k11008|n16|r1024|sparse')
    expect(tuneKey({...k, keepSparse: false})).to.equal(tuneKey(k))
    expect(tuneKey({...k, dtype: 'f16', structure: '2:4', keepSparse: true})).to.match(/\|s24\|sparse$/)
  })

  it('puts the cache under $XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultTuneCachePath({XDG_CACHE_HOME: '/x/cache', HOME: '/home/u'})).to.equal('/x/cache/sparse/tune.json')
    expect(defaultTuneCachePath({HOME: '/home/u'})).to.equal('/home/u/.cache/sparse/tune.json')
    // A relative XDG_CACHE_HOME is invalid (XDG base directory spec): ignored.
    expect(defaultTuneCachePath({XDG_CACHE_HOME: 'rel', HOME: '/home/u'})).to.equal('/home/u/.cache/sparse/tune.json')
  })

  it('picks the fastest candidate; ties go to the selection; unusable times are skipped', () => {
    expect(pickFastest({a: 2, b: 1, c: 3}, 'a')).to.deep.equal({variant: 'b', ms: 1})
    expect(pickFastest({a: 1, b: 1}, 'b')).to.deep.equal({variant: 'b', ms: 1})
    expect(pickFastest({a: 1, b: 1}, 'x')).to.deep.equal({variant: 'a', ms: 1})
    expect(pickFastest({a: Number.NaN, b: 0, c: 5}, 'a')).to.deep.equal({variant: 'c', ms: 5})
    expect(pickFastest({}, 'a')).to.equal(undefined)
  })

  it('times candidates with a smaller sample, never above the user settings', () => {
    expect(candidateTiming({warmup: 5, minReps: 50, minMs: 200, maxReps: 1000})).to.deep.include({warmup: 3, minReps: 10, minMs: 20, maxReps: 200, graphBelowMs: 0, check: false})
    expect(candidateTiming({warmup: 1, minReps: 3, minMs: 1, maxReps: 5}, 50)).to.deep.include({warmup: 1, minReps: 3, minMs: 1, maxReps: 5})
  })

  it('reads a missing file as empty, a corrupt one as empty with a warning, and drops malformed entries', async () => {
    const dir = tempDir()
    expect(await readTuneCache(join(dir, 'none.json'))).to.deep.equal({cache: {format: 'sparse-tune', version: 1, entries: {}}})
    const cases: Array<[string, RegExp]> = [
      ['{"format": "sparse-tune", "vers', /not valid JSON/],
      ['[1, 2]', /not a JSON object/],
      ['{"format": "other", "version": 1, "entries": {}}', /not a sparse tune cache/],
      ['{"format": "sparse-tune", "version": 7, "entries": {}}', /version 7/],
      ['{"format": "sparse-tune", "version": 1}', /no "entries"/],
    ]
    for (const [text, re] of cases) {
      const p = join(dir, 'bad.json')
      writeFileSync(p, text)
      const r = await readTuneCache(p)
      expect(r.cache.entries, text).to.deep.equal({})
      expect(r.warning, text).to.match(re)
      expect(r.warning).to.include(p)
    }
    const p = join(dir, 'mixed.json')
    writeFileSync(p, JSON.stringify({format: 'sparse-tune', version: 1, entries: {a: {variant: 'split_v4_t8_w1'}, b: {variant: 'rm -rf'}, c: null}}))
    const r = await readTuneCache(p)
    expect(Object.keys(r.cache.entries)).to.deep.equal(['a'])
    expect(r.warning).to.match(/ignored 2 malformed entries/)
  })

  it('saves atomically into a new folder, merges with the entries already there, and tunedVariant reads them back', async () => {
    const dir = tempDir()
    const path = join(dir, 'deep', 'er', 'tune.json')
    const key = {gpu: 'G', dtype: 'f32' as const, m: 64, k: 147, n: 16, nnz: 188}
    const entry = (variant: string): TuneCacheEntry => ({variant, ms: 1, defaultVariant: 'split_v4_t8_w1', defaultMs: 2, gpu: 'G', dtype: 'f32', indexBits: 32, m: 64, k: 147, n: 16, nnz: 188, rowClass: 4, tunedAt: '2025-01-01T00:00:00.000Z'})
    expect(await tunedVariant(key, {path})).to.equal(undefined)
    await saveTuneEntries(path, {[tuneKey(key)]: entry('split_v4_t4_w2')})
    expect(await tunedVariant(key, {path})).to.equal('split_v4_t4_w2')
    expect(await tunedVariant({...key, n: 32}, {path})).to.equal(undefined)
    const other = tuneKey({...key, n: 32})
    const r = await saveTuneEntries(path, {[other]: entry('tile_v4_t32_x2')})
    expect(r.total).to.equal(2)
    expect(await tunedVariant(key, {path})).to.equal('split_v4_t4_w2')
    expect(await tunedVariant({...key, n: 32}, {path})).to.equal('tile_v4_t32_x2')
    expect(readdirSync(join(dir, 'deep', 'er'))).to.deep.equal(['tune.json']) // no temporary file left
    const json = JSON.parse(readFileSync(path, 'utf8'))
    expect(json).to.deep.include({format: 'sparse-tune', version: 1})
    expect(Object.keys(json.entries)).to.deep.equal([tuneKey(key), other].sort())
    // A corrupt file reads as no entry, and a save replaces it.
    writeFileSync(path, 'garbage')
    expect(await tunedVariant(key, {path})).to.equal(undefined)
    const again = await saveTuneEntries(path, {[tuneKey(key)]: entry('split_v4_t4_w2')})
    expect(again.warning).to.match(/not valid JSON/)
    expect(await tunedVariant(key, {path})).to.equal('split_v4_t4_w2')
  })
})

describe('bench --tune: runs (fake harness)', () => {
  it('times every variant, uses the fastest as ours, reports it, and saves it to the cache', async () => {
    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: cache, timing: FAST, native: fakeNative({calls, variants: VARIANTS})})
    const c = ok(r.cases[0])
    expect(c.variantSource).to.equal('tuned')
    expect(c.variant).to.equal('split_v4_t4_w2')
    expect(c.tuned!.variant).to.equal('split_v4_t4_w2')
    expect(c.tuned!.ms).to.be.closeTo(BASE * 0.5, 1e-15)
    expect(c.tuned!.defaultVariant).to.equal('split_v4_t8_w1')
    expect(c.tuned!.defaultMs).to.be.closeTo(BASE, 1e-15)
    expect(Object.keys(c.tuned!.candidates).sort()).to.deep.equal(Object.keys(VARIANTS.factors).sort())
    expect(c.tuned!.candidates.tile_v4_t32_x2).to.be.closeTo(BASE * 0.8, 1e-15)
    expect(c.tuned).to.not.have.property('failed')
    // Ours is the winner, timed again with the full settings and all baselines.
    expect(c.ms.median).to.be.closeTo(BASE * 0.5, 1e-15)
    expect(c.speedup.cusparse).to.be.closeTo(2, 1e-9)
    // One harness call per candidate (ours alone, candidate timing, no check), then the case.
    expect(calls).to.have.length(5)
    for (const call of calls.slice(0, 4)) {
      expect(call.impls).to.deep.equal(['ours'])
      expect(call.options).to.deep.include({minReps: 3, minMs: 1, graphBelowMs: 0, check: false})
    }
    expect(calls.slice(0, 4).map((x) => x.variant).sort()).to.deep.equal(Object.keys(VARIANTS.factors).sort())
    expect(calls[4]).to.deep.include({variant: 'split_v4_t4_w2'})
    expect(calls[4].impls).to.deep.equal(['ours', 'cublas_f32', 'cublas_tf32', 'cusparse'])
    expect(calls[4].options).to.deep.include({minReps: 3, minMs: 1})
    // The winner is in the cache, under the case's key.
    expect(r.tune).to.deep.include({tune: true, cache, tuned: 1, changed: 1, saved: 1, hits: 0, forced: null, warnings: []})
    expect(r.tune!.geomeanGain).to.be.closeTo(2, 1e-9)
    const json = JSON.parse(readFileSync(cache, 'utf8'))
    const key = tuneKey({gpu: 'Fake GPU', dtype: 'f32', m: 64, k: 147, n: 16, nnz: 188})
    expect(json.entries[key]).to.deep.include({variant: 'split_v4_t4_w2', defaultVariant: 'split_v4_t8_w1', m: 64, k: 147, n: 16, nnz: 188, indexBits: 32, rowClass: 4, gpu: 'Fake GPU', file: SMTX})
    expect(renderHeader(r)).to.match(/SpMM variants: tuned 1 cases \(1 changed variant, geomean 2\.000x/)
    const csv = toCsv(r).trimEnd().split('\n')
    const head = csv[0].split(',')
    expect(csv[1].split(',')[head.indexOf('variant')]).to.equal('split_v4_t4_w2')
    expect(csv[1].split(',')[head.indexOf('variant_source')]).to.equal('tuned')
  })

  it('--keep-sparse: no variant that stores every weight is selected, tuned or taken from the cache; its winners are kept apart', async () => {
    // und_n128 stores the weights dense and is the fastest; the selection picks it unless asked to keep A sparse.
    const withDense = {selected: 'und_n128', sparseSelected: 'split_v4_t8_w1', dense: ['und_n128'], factors: {...VARIANTS.factors, und_n128: 0.3}}
    const calls: NativeBenchArgs[] = []
    const queries: object[] = []
    const plain = await runBench({inputs: [SMTX], ns: [16], tuneCache: false, timing: FAST, native: fakeNative({calls, queries: queries as never, variants: withDense})})
    expect(ok(plain.cases[0])).to.deep.include({variantSource: 'heuristic', variant: 'und_n128'})
    expect(calls[0]).to.not.have.property('variant') // the harness's own selection runs
    expect(queries[0]).to.not.have.property('keepSparse')

    calls.length = 0
    queries.length = 0
    const sparse = await runBench({inputs: [SMTX], ns: [16], tuneCache: false, keepSparse: true, timing: FAST, native: fakeNative({calls, queries: queries as never, variants: withDense})})
    expect(ok(sparse.cases[0])).to.deep.include({variantSource: 'heuristic', variant: 'split_v4_t8_w1'})
    expect(queries[0]).to.deep.include({keepSparse: true})
    // The harness's selection knows nothing of keepSparse: the pick is passed by name.
    expect(calls[0].variant).to.equal('split_v4_t8_w1')
    expect(ok(sparse.cases[0]).ms.median).to.be.closeTo(BASE, 1e-15)
    expect(sparse.tune).to.deep.include({keepSparse: true})
    expect(plain.tune).to.deep.include({keepSparse: false})
    expect(renderHeader(sparse)).to.match(/SpMM variants: .*; keeping A sparse \(--keep-sparse/)
    expect(renderHeader(plain)).to.not.match(/keep-sparse/)

    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    const tuned = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: cache, keepSparse: true, timing: FAST, native: fakeNative({variants: withDense})})
    const t = ok(tuned.cases[0])
    expect(t.variant).to.equal('split_v4_t4_w2')
    expect(Object.keys(t.tuned!.candidates)).to.not.include('und_n128')
    expect(t.tuned!.defaultVariant).to.equal('split_v4_t8_w1')
    const key = tuneKey({gpu: 'Fake GPU', dtype: 'f32', m: 64, k: 147, n: 16, nnz: 188, keepSparse: true})
    expect(key.endsWith('|sparse')).to.equal(true)
    const json = JSON.parse(readFileSync(cache, 'utf8'))
    expect(Object.keys(json.entries)).to.deep.equal([key])
    expect(json.entries[key]).to.deep.include({variant: 'split_v4_t4_w2', keepSparse: true})
    expect(json.entries[key]).to.not.have.property('structure')
    // Its winner serves later --keep-sparse runs, not the others (which select und_n128 again).
    const again = await runBench({inputs: [SMTX], ns: [16], tuneCache: cache, keepSparse: true, timing: FAST, native: fakeNative({variants: withDense})})
    expect(ok(again.cases[0])).to.deep.include({variantSource: 'cache', variant: 'split_v4_t4_w2'})
    const other = await runBench({inputs: [SMTX], ns: [16], tuneCache: cache, timing: FAST, native: fakeNative({variants: withDense})})
    expect(ok(other.cases[0])).to.deep.include({variantSource: 'heuristic', variant: 'und_n128'})
  })

  it('records a 2:4 winner with its structure and keepSparse as the plan reported them, in its own cache key', async () => {
    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    const s24 = {...VARIANTS, structure: '2:4' as const}
    for (const keepSparse of [false, true]) {
      await runBench({inputs: [SMTX], ns: [16], dtypes: ['f16'], tune: true, tuneCache: cache, keepSparse, timing: FAST, native: fakeNative({variants: s24})})
    }
    await runBench({inputs: [SMTX], ns: [16], dtypes: ['f16'], tune: true, tuneCache: cache, timing: FAST, native: fakeNative({variants: VARIANTS})})
    const base = {gpu: 'Fake GPU', dtype: 'f16' as const, m: 64, k: 147, n: 16, nnz: 188}
    const entries = JSON.parse(readFileSync(cache, 'utf8')).entries
    expect(Object.keys(entries).sort()).to.deep.equal([tuneKey(base), tuneKey({...base, structure: '2:4'}), tuneKey({...base, structure: '2:4', keepSparse: true})].sort())
    expect(entries[tuneKey({...base, structure: '2:4'})]).to.deep.include({structure: '2:4'}).and.not.have.property('keepSparse')
    expect(entries[tuneKey({...base, structure: '2:4', keepSparse: true})]).to.deep.include({structure: '2:4', keepSparse: true})
    expect(entries[tuneKey(base)]).to.not.have.any.keys('structure', 'keepSparse')
  })

  it('uses the cached winner on a later run; --no-tune-cache, another GPU or a variant the shape cannot run fall back to the selection', async () => {
    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: cache, timing: FAST, native: fakeNative({variants: VARIANTS})})

    const calls: NativeBenchArgs[] = []
    const later = await runBench({inputs: [SMTX], ns: [16, 32], tuneCache: cache, timing: FAST, native: fakeNative({calls, variants: VARIANTS})})
    const [hit, miss] = later.cases.map(ok)
    expect(hit).to.deep.include({variantSource: 'cache', variant: 'split_v4_t4_w2'})
    expect(hit).to.not.have.property('tuned')
    expect(hit.ms.median).to.be.closeTo(BASE * 0.5, 1e-15)
    expect(calls[0].variant).to.equal('split_v4_t4_w2')
    expect(miss).to.deep.include({variantSource: 'heuristic', variant: 'split_v4_t8_w1'})
    expect(calls[1]).to.not.have.property('variant')
    expect(calls).to.have.length(2) // no tuning without --tune
    expect(later.tune).to.deep.include({tune: false, cache, hits: 1, cacheEntries: 1, saved: 0, warnings: []})
    expect(renderHeader(later)).to.match(/SpMM variants: 1 from the tune cache .*; 1 by the built-in selection/)

    const off = await runBench({inputs: [SMTX], ns: [16], tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(off.cases[0])).to.deep.include({variantSource: 'heuristic', variant: 'split_v4_t8_w1'})
    expect(off.tune).to.deep.include({cache: null, hits: 0})

    const gpu = fakeNative({variants: VARIANTS})
    const info = gpu.benchDeviceInfo()
    gpu.benchDeviceInfo = () => ({...info, name: 'Another GPU'} as typeof info)
    const other = await runBench({inputs: [SMTX], ns: [16], tuneCache: cache, timing: FAST, native: gpu})
    expect(ok(other.cases[0]).variantSource).to.equal('heuristic')

    const fewer = {selected: 'split_v4_t8_w1', factors: {split_v4_t8_w1: 1, tile_v4_t32_x2: 0.8}}
    const stale = await runBench({inputs: [SMTX], ns: [16], tuneCache: cache, timing: FAST, native: fakeNative({variants: fewer})})
    expect(ok(stale.cases[0])).to.deep.include({variantSource: 'heuristic', variant: 'split_v4_t8_w1'})
  })

  it('warns about a corrupt cache file and goes on without it; --tune replaces it', async () => {
    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    writeFileSync(cache, '{"format": "sparse-tune", "version": 1, "entries": {')
    const r = await runBench({inputs: [SMTX], ns: [16], tuneCache: cache, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(r.cases[0]).variantSource).to.equal('heuristic')
    expect(r.tune!.warnings).to.have.length(1)
    expect(r.tune!.warnings[0]).to.match(/ignoring the tune cache .*tune\.json: not valid JSON/)
    const t = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: cache, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(t.tune!.warnings[0]).to.match(/not valid JSON; it was replaced/)
    expect(t.tune!.saved).to.equal(1)
    expect((await readTuneCache(cache)).warning).to.equal(undefined)
  })

  it('warns, and runs on, when the cache cannot be written', async () => {
    const dir = tempDir()
    const blocker = join(dir, 'file')
    writeFileSync(blocker, 'x')
    const r = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: join(blocker, 'tune.json'), timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(r.cases[0]).variantSource).to.equal('tuned')
    expect(r.tune!.saved).to.equal(0)
    expect(r.tune!.warnings[0]).to.match(/could not save the tune cache/)
  })

  it('records failing candidates and tunes among the others; SDDMM cases are not tuned', async () => {
    const dir = tempDir()
    const r = await runBench({
      inputs: [SMTX], ns: [16], ops: ['spmm', 'sddmm'], tune: true, tuneCache: join(dir, 't.json'), timing: FAST,
      native: fakeNative({variants: VARIANTS, failingVariants: ['split_v4_t4_w2']}),
    })
    const [sp, sd] = r.cases.map(ok)
    expect(sp.tuned!.variant).to.equal('split_v4_t2_w4')
    expect(sp.tuned!.failed).to.have.keys(['split_v4_t4_w2'])
    expect(sp.tuned!.failed!.split_v4_t4_w2).to.match(/cudaErrorInvalidValue/)
    expect(sp.tuned!.candidates).to.not.have.property('split_v4_t4_w2')
    expect(sd.op).to.equal('sddmm')
    expect(sd).to.not.have.property('variantSource')
    expect(sd).to.not.have.property('tuned')
  })

  it('--no-tune-cache with --tune: tunes, saves nothing', async () => {
    const r = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(r.cases[0]).variantSource).to.equal('tuned')
    expect(r.tune).to.deep.include({cache: null, saved: 0, tuned: 1})
    expect(renderHeader(r)).to.match(/not saved \(--no-tune-cache\)/)
  })

  it('--tune-only: times the variants of those prefixes and the selection\'s pick, caches nothing, and warns where none matches', async () => {
    const dir = tempDir()
    const cache = join(dir, 'tune.json')
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneOnly: ['tile_'], tuneCache: cache, timing: FAST, native: fakeNative({calls, variants: VARIANTS})})
    const c = ok(r.cases[0])
    expect(Object.keys(c.tuned!.candidates).sort()).to.deep.equal(['split_v4_t8_w1', 'tile_v4_t32_x2'])
    expect(c).to.deep.include({variant: 'tile_v4_t32_x2', variantSource: 'tuned'})
    expect(calls.slice(0, -1).map((x) => x.variant).sort()).to.deep.equal(['split_v4_t8_w1', 'tile_v4_t32_x2'])
    expect(r.tune).to.deep.include({only: ['tile_'], saved: 0, tuned: 1, warnings: []})
    expect(existsSync(cache), 'nothing written').to.equal(false)
    expect(renderHeader(r)).to.match(/only tile_\* and the selection's pick timed; not saved \(--tune-only\)/)
    // Several prefixes; none matching: the selection's pick alone, and a warning (once).
    const two = await runBench({inputs: [SMTX], ns: [16], tune: true, tuneOnly: ['tile_', 'split_v4_t4'], tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(Object.keys(ok(two.cases[0]).tuned!.candidates).sort()).to.deep.equal(['split_v4_t4_w2', 'split_v4_t8_w1', 'tile_v4_t32_x2'])
    const none = await runBench({inputs: [SMTX], ns: [16, 32], tune: true, tuneOnly: ['s24g_'], tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(Object.keys(ok(none.cases[0]).tuned!.candidates)).to.deep.equal(['split_v4_t8_w1'])
    expect(none.tune!.warnings).to.have.length(1)
    expect(none.tune!.warnings[0]).to.match(/--tune-only s24g_: no variant of f32 m=64 k=147 n=16 has such a name/)
    // Without --tune, or with a prefix no variant name could start with: exit 2 before any case.
    const native = fakeNative({calls: [], variants: VARIANTS})
    const alone = await usageError(() => runBench({inputs: [SMTX], ns: [16], tuneOnly: ['tile_'], native}))
    expect(alone.message).to.match(/--tune-only narrows --tune's candidates, but --tune is not given/)
    expect(alone.exitCode).to.equal(2)
    for (const bad of [[], [''], ['Tile_'], ['tile-v4']]) {
      const e = await usageError(() => runBench({inputs: [SMTX], ns: [16], tune: true, tuneOnly: bad, native}))
      expect(e.message, JSON.stringify(bad)).to.match(/--tune-only: expected variant name prefixes/)
    }
  })

  it('reports a variant forced by SPARSE_SPMM_VARIANT and passes none', async () => {
    const calls: NativeBenchArgs[] = []
    const r = await runBench({inputs: [SMTX], ns: [16], forcedVariant: 'tile_v4_t32_x2', tuneCache: false, timing: FAST, native: fakeNative({calls, variants: VARIANTS})})
    expect(ok(r.cases[0])).to.deep.include({variantSource: 'forced', variant: 'tile_v4_t32_x2'})
    expect(calls[0]).to.not.have.property('variant')
    expect(r.tune!.forced).to.equal('tile_v4_t32_x2')
    expect(renderHeader(r)).to.include('SpMM variant: tile_v4_t32_x2 forced by SPARSE_SPMM_VARIANT (1 of 1 cases)\n')
    // A variant the plan does not list for the case: the selection ran it, and the header says so.
    const missed = await runBench({inputs: [SMTX], ns: [16], forcedVariant: 'bm_w4_m1_s8', tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(missed.cases[0])).to.deep.include({variantSource: 'heuristic', variant: VARIANTS.selected})
    expect(renderHeader(missed)).to.include("SpMM variant: bm_w4_m1_s8 forced by SPARSE_SPMM_VARIANT (0 of 1 cases; the other 1 cannot run it and ran the built-in selection's variant)")
    const auto = await runBench({inputs: [SMTX], ns: [16], forcedVariant: 'auto', tuneCache: false, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(ok(auto.cases[0]).variantSource).to.equal('heuristic')
  })

  it('refuses --tune on the CPU, without spmm, or with a forced variant (exit 2), before any case runs', async () => {
    const calls: NativeBenchArgs[] = []
    const native = fakeNative({calls, variants: VARIANTS})
    const cpu = await usageError(() => runBench({inputs: [SMTX], ns: [16], device: 'cpu', tune: true, native}))
    expect(cpu.message).to.match(/--tune needs --device cuda/)
    expect(cpu.exitCode).to.equal(2)
    const op = await usageError(() => runBench({inputs: [SMTX], ns: [16], ops: ['sddmm'], tune: true, native}))
    expect(op.message).to.match(/--tune tunes SpMM/)
    expect(op.exitCode).to.equal(2)
    const forced = await usageError(() => runBench({inputs: [SMTX], ns: [16], tune: true, forcedVariant: 'split_v4_t8_w1', native}))
    expect(forced.message).to.match(/SPARSE_SPMM_VARIANT=split_v4_t8_w1/)
    expect(forced.exitCode).to.equal(2)
    expect(calls).to.have.length(0)
  })

  it('does not read or report a tune cache on the CPU', async () => {
    const dir = tempDir()
    const cache = join(dir, 'never.json')
    const r = await runBench({inputs: [SMTX], ns: [16], device: 'cpu', tuneCache: cache, timing: FAST, native: fakeNative({variants: VARIANTS})})
    expect(r.tune).to.equal(null)
    expect(ok(r.cases[0])).to.not.have.property('variantSource')
    expect(existsSync(cache)).to.equal(false)
  })
})
