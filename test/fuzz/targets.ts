/**
 * The fuzz targets: one per parser (.npy, .npz, .safetensors, .smtx, CSR .npz, CSR
 * directory). Each has a fast-check arbitrary of cases that mixes
 *   - valid seed files (made here by independent builders, plus the numpy/SciPy fixtures),
 *   - seeds with byte mutations (truncation at every offset class, bit flips, lying
 *     integer fields, inserted/deleted/duplicated bytes) — for .npz both the container and,
 *     re-zipped with a correct CRC, the members,
 *   - structure-aware lies (shapes whose product overflows, 10^12 elements, negative dims,
 *     huge header lengths, offsets past the end, wrong dtypes, non-canonical CSR),
 *   - claims beyond 4 GiB (headers and ZIP sizes for data that are not there: refused
 *     before allocating) and valid CSR matrices whose M x N is beyond 2^32 (read),
 *   - a FIFO at the input path (and at a CSR directory's manifest.json or member): refused
 *     at once as not-a-file, never waited on,
 *   - pure random bytes (with and without the format's magic),
 * and a `run` that parses the case through the library's public entry points (the same
 * the CLI uses: stdin bytes or a real file) and checks what came back. The property
 * around it (see property.ts) accepts a clean SparseError (input/usage) or a result that
 * passes these checks, and nothing else.
 *
 * Two more targets test what no single parse shows: 'many' (files of 10^4..10^5 tensors:
 * read in linear time, the event loop never held long, so Ctrl-C acts) and 'race' (two
 * writers of one output at once: one wins, the other gets output-exists, nothing partial
 * or temporary is left). Every case is made from the seed; a race's interleaving is the
 * system's, and the property holds for every interleaving.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import fc from 'fast-check'

import {
  CsrDirectoryWriter,
  inspectCsr,
  inspectDense,
  inspectInput,
  openTensorSource,
  readCsrInput,
  setStdinForTesting,
  writeCsrNpz,
  writeCsrNpzTo,
  writeNpy,
  type ByteSink,
  type InfoResult,
} from '../../src/formats/index.js'
import type {DenseTensor, NamedCsr} from '../../src/types.js'
import {buildManyNpz, buildManySafetensors, buildNpy, buildSafetensors, buildZip, bytesOf, concat, npyDict, safetensorsHeader, seededBytes, type Built, type ManySpec, type ZipMemberSpec} from './builders.js'
import {applyMutations, mutationsArb, type Mutation} from './mutate.js'
import {indexTarget, mapTarget, torchTarget} from './targets-21.js'
import {checkCsrResult, checkDataIsTail, checkDenseResult, checkRace, csrProblem, fail, linearity, matrixOf, type RaceOutcome, sameBytes, snapshot, viewBytes} from './oracle.js'

// ---------------------------------------------------------------------------------------
// Cases

export interface ExpectedDense {
  /** null: the single tensor of an .npy (named after the file, or 'stdin'). */
  name: string | null
  dtype: string
  shape: number[]
  bytes: Uint8Array
}

export interface ExpectedCsr {
  name?: string
  rows: number
  cols: number
  offsets: number[]
  indices: number[]
  /** Value bytes as stored (f32/f16/bf16), or null for a pattern (.smtx). */
  values: Uint8Array | null
  dtype: string
  rowIndices?: number[]
  shape: number[]
}

export type Expect =
  /** Exactly these dense tensors (and these unsupported names). */
  | {type: 'dense'; tensors: ExpectedDense[]; unsupported: string[]}
  /** Exactly these CSR matrices, or (valid: false) a clean error. */
  | {type: 'csr'; valid: boolean; mats: ExpectedCsr[]; why?: string}
  /** A clean error (with this code, when given). */
  | {type: 'reject'; why: string; code?: string}
  /** Every returned dense tensor's data must be the tail of one of these (member) files. */
  | {type: 'tail-of'; files: Uint8Array[]}

export interface FuzzCase {
  /** How it was made (seed, mutations, lies), for reports. */
  what: string
  /** The input file. For csr-dir: manifest.json. */
  bytes: Uint8Array
  /** csr-dir only: the other files of the directory. */
  files?: [string, Uint8Array][]
  expect?: Expect
  /** Read through a real file instead of stdin. */
  viaFile: boolean
  /**
   * A named pipe (FIFO) stands at an input path instead of a file: true for the input
   * itself, or the name of one file of a directory case (manifest.json, a member).
   */
  fifo?: true | string
}

export interface TargetContext {
  /** A private scratch folder (created by the runner, removed afterwards). */
  tmp: string
}

export interface Target {
  name: string
  /** Uncompressed formats may allocate a small multiple of their size; zips up to DEFLATE's ratio. */
  allocFactor: number
  arbitrary: fc.Arbitrary<FuzzCase>
  /**
   * The share of the runs a parser gets that this target runs (default 1), and at least
   * `minRuns`: targets whose cases are large by design run fewer of them.
   */
  share?: number
  minRuns?: number
  /** Its own per-case time bound (ms), for cases that are large by design. */
  caseTimeMs?: number
  /** Parse the case (inside the allocation budget); throws the parser's errors. */
  parse(c: FuzzCase, ctx: TargetContext): Promise<unknown>
  /** Check a successful result; throws FuzzViolation. */
  check(c: FuzzCase, result: unknown): void
}

type ArbType<A> = A extends fc.Arbitrary<infer T> ? T : never

const describeMuts = (m: Mutation[]) => m.map((x) => JSON.stringify(x)).join(' ')
const viaFileArb = fc.nat({max: 7}).map((n) => n === 0)

/** A file at `tmp/name` holding `bytes` (or '-' with stdin set to them, or a FIFO). */
function place(c: FuzzCase, ctx: TargetContext, ext: string): string {
  if (c.fifo) return fifoAt(ctx, `fifo${ext}`)
  if (!c.viaFile) {
    setStdinForTesting(c.bytes)
    return '-'
  }
  const p = join(ctx.tmp, `case${ext}`)
  writeFileSync(p, c.bytes)
  return p
}

const tensorNameFor = (c: FuzzCase) => (c.viaFile ? 'case' : 'stdin')

/**
 * A named pipe at `tmp/name` (made once: a hard link to the context's one FIFO, which no
 * one ever opens for writing, so a reader that waits on it waits forever). Nothing may
 * write to that name afterwards: writeFileSync on a FIFO blocks too.
 */
function fifoAt(ctx: TargetContext, name: string, dir = ctx.tmp): string {
  const stock = join(ctx.tmp, '.fifo')
  if (!existsSync(stock)) execFileSync('mkfifo', [stock])
  const p = join(dir, name)
  if (!existsSync(p)) linkSync(stock, p)
  return p
}

const REJECT_FIFO: Expect = {type: 'reject', why: 'a FIFO stands at the input path', code: 'not-a-file'}

/** A FIFO where the target's input file would be: refused at once (not-a-file), never waited on. */
const fifoCase: fc.Arbitrary<FuzzCase> = fc.constant(null).map(() => ({what: 'a FIFO at the input path', bytes: new Uint8Array(0), viaFile: true, fifo: true, expect: REJECT_FIFO}))

// ---------------------------------------------------------------------------------------
// Shared arbitraries

const smallShape = fc.array(fc.integer({min: 0, max: 5}), {maxLength: 4})
const dataSeed = fc.integer()

/** Dimension texts that lie: int32/int64 edges, 10^12, negative, not integers. */
const LYING_DIMS = ['0', '1', '3', '2147483647', '2147483648', '4294967296', '1000000000000', '9007199254740991', '9007199254740993', '18446744073709551616', '99999999999999999999999999999999999', '-1', '1.5', '0x10', '7L', '1e3', "'3'", 'None', '']

const DENSE_DESCR: Record<string, {dtype: string; size: number}> = {'<f4': {dtype: 'f32', size: 4}, '<f2': {dtype: 'f16', size: 2}, '<f8': {dtype: 'f64', size: 8}, '=f4': {dtype: 'f32', size: 4}}
const OTHER_DESCR: Record<string, number> = {'>f4': 4, '>f8': 8, '<i4': 4, '<i8': 8, '|u1': 1, '|b1': 1, '<c8': 8, '<f16': 16, '|O': 8, '<U3': 12, '|S3': 3, '<V8': 8, '<m8': 8, '<i0': 0, '|S0': 0, '<f0': 0}

const product = (s: number[]) => s.reduce((a, b) => a * b, 1)

/** Whether a dense tensor of this shape is within sparse's documented limits. */
function withinDenseLimits(shape: number[]): boolean {
  const [r, c] = matrixOf(shape)
  if (r > 2 ** 31 - 1 || c > 2 ** 31 - 1) return false
  const n = product(shape)
  if (n > 2 ** 32) return false
  if (n === 0 && r > 2 ** 16) return false
  return true
}

/** Boundaries and fields of an .npy made elsewhere (fixtures, members). */
function builtFromNpy(bytes: Uint8Array): Built {
  const headerEnd = bytes.indexOf(0x0a) + 1
  const prefix = bytes[6] === 1 ? 10 : 12
  return {
    bytes,
    boundaries: [0, 6, 8, prefix, headerEnd - 1, headerEnd, bytes.length - 1, bytes.length],
    fields: [{offset: 8, width: prefix === 10 ? 2 : 4, what: 'npy header length'}],
  }
}

function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url)))
}

// ---------------------------------------------------------------------------------------
// .npy

interface NpySeed {
  built: Built
  expect?: Expect
  what: string
}

const validNpy: fc.Arbitrary<NpySeed> = fc
  .record({descr: fc.constantFrom('<f4', '<f2', '<f8'), shape: smallShape, version: fc.constantFrom(1, 2, 3), fortran: fc.boolean(), seed: dataSeed})
  .map(({descr, shape, version, fortran, seed}) => {
    const {dtype, size} = DENSE_DESCR[descr]
    const data = seededBytes(product(shape) * size, seed)
    const built = buildNpy({descr, shape, version, fortran, data})
    const expect: Expect =
      fortran && shape.length > 1
        ? {type: 'reject', why: 'Fortran order'}
        : {type: 'dense', tensors: [{name: null, dtype, shape, bytes: data}], unsupported: []}
    return {built, expect, what: `npy v${version} ${descr} (${shape.join(',')}) fortran=${fortran}`}
  })

const NPY_FIXTURES = ['dense-f32.npy', 'dense-f16.npy', 'dense-f64.npy', 'nan.npy', 'bad-int64.npy', 'bad-bigendian.npy', 'bad-fortran.npy']
let npyFixtureCache: Built[] | undefined
const npyFixtures = () => (npyFixtureCache ??= NPY_FIXTURES.map((f) => builtFromNpy(fixture(f))))

const npySeedArb: fc.Arbitrary<NpySeed> = fc.oneof(
  {weight: 4, arbitrary: validNpy},
  {weight: 1, arbitrary: fc.nat({max: NPY_FIXTURES.length - 1}).map((i) => ({built: npyFixtures()[i], expect: {type: 'tail-of', files: [npyFixtures()[i].bytes]} as Expect, what: `fixture ${NPY_FIXTURES[i]}`}))},
)

/** A structurally lying .npy: odd descr, lying dims, lying header length, short/long data. */
const lyingNpy: fc.Arbitrary<FuzzCase> = fc
  .record({
    descr: fc.constantFrom(...Object.keys(DENSE_DESCR), ...Object.keys(OTHER_DESCR)),
    dims: fc.array(fc.oneof(fc.integer({min: 0, max: 6}).map(String), fc.constantFrom(...LYING_DIMS)), {maxLength: 4}),
    fortran: fc.boolean(),
    version: fc.constantFrom(1, 1, 2, 3, 0, 4),
    headerLenDelta: fc.constantFrom(0, 0, 0, 1, -1, 64, -64, 1_000_000, 0x7fffffff),
    dataDelta: fc.integer({min: -9, max: 9}),
    dictStyle: fc.nat({max: 9}),
    seed: dataSeed,
    viaFile: viaFileArb,
  })
  .map((r) => {
    const plainDims = r.dims.every((d) => /^\d+$/.test(d) && Number(d) <= 64)
    const info = DENSE_DESCR[r.descr]
    const size = info?.size ?? OTHER_DESCR[r.descr]
    const numel = plainDims ? product(r.dims.map(Number)) : 3
    const dataLen = Math.max(0, Math.min(4096, numel * size + (plainDims ? r.dataDelta : 0)))
    let dict = npyDict(r.descr, r.fortran, r.dims)
    // Dict variants: extra key, missing key, wrong types, structured dtype, junk after.
    const variants = [
      dict,
      dict,
      dict,
      dict,
      `{'descr': '${r.descr}', 'fortran_order': ${r.fortran ? 'True' : 'False'}, 'shape': (${r.dims.join(', ')}), 'extra': 1, }`,
      `{'descr': '${r.descr}', 'shape': (${r.dims.join(', ')}), }`,
      `{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (${r.dims.join(', ')}), }`,
      `{'descr': '${r.descr}', 'fortran_order': 0, 'shape': [${r.dims.join(', ')}], }`,
      dict + ' junk',
      `{"descr": "${r.descr}", "fortran_order": False, "shape": (${r.dims.join(', ')},), "descr": "<f4"}`,
    ]
    dict = variants[r.dictStyle]
    const built = buildNpy({dict, version: r.version, headerLenDelta: r.headerLenDelta, data: seededBytes(dataLen, r.seed)})
    let expect: Expect | undefined
    const std = r.dictStyle < 4 && r.headerLenDelta === 0 && [1, 2, 3].includes(r.version) && plainDims
    if (std) {
      const shape = r.dims.map(Number)
      if (!info) expect = {type: 'reject', why: `dtype ${r.descr}`}
      else if (dataLen !== numel * size) expect = {type: 'reject', why: 'data length mismatch'}
      else if (r.fortran && shape.length > 1) expect = {type: 'reject', why: 'Fortran order'}
      else expect = {type: 'dense', tensors: [{name: null, dtype: info.dtype, shape, bytes: seededBytes(dataLen, r.seed)}], unsupported: []}
    } else if (r.dims.some((d) => /^-|\.|x|e|'|None/.test(d)) && r.dictStyle < 4 && r.headerLenDelta === 0) {
      expect = {type: 'reject', why: 'dimension is not a non-negative integer'}
    }
    return {what: `lying npy ${JSON.stringify(r)}`, bytes: built.bytes, expect, viaFile: r.viaFile}
  })

const randomBytes = (magic: Uint8Array) =>
  fc.record({bytes: fc.uint8Array({maxLength: 300}), withMagic: fc.boolean(), viaFile: viaFileArb}).map(({bytes, withMagic, viaFile}) => ({
    what: `random ${bytes.length} bytes${withMagic ? ' after the magic' : ''}`,
    bytes: withMagic ? concat([magic, bytes]) : bytes,
    viaFile,
  }))

function mutatedFrom<S extends {built: Built; expect?: Expect; what: string}>(seeds: fc.Arbitrary<S>, tailOf: (s: S) => Uint8Array[] | null): fc.Arbitrary<FuzzCase> {
  return fc.record({seed: seeds, muts: fc.option(mutationsArb, {freq: 6}), viaFile: viaFileArb}).map(({seed, muts, viaFile}) => {
    if (!muts) return {what: `valid ${seed.what}`, bytes: seed.built.bytes, expect: seed.expect, viaFile}
    const files = tailOf(seed)
    return {what: `${seed.what} + ${describeMuts(muts)}`, bytes: applyMutations(seed.built, muts), expect: files ? {type: 'tail-of', files} : undefined, viaFile}
  })
}

async function readDenseAll(path: string, format: string): Promise<{tensors: DenseTensor[]; listed: {name: string; shape: number[]; dtype: string}[]; unsupported: string[]}> {
  const src = await openTensorSource(path, format)
  try {
    const tensors: DenseTensor[] = []
    for (const t of src.tensors) {
      const d = await src.read(t.name)
      tensors.push(d)
      inspectDense(d) // info must cope with whatever the reader accepts
    }
    return {tensors, listed: src.tensors.map((t) => ({...t, shape: t.shape.slice()})), unsupported: src.unsupported.map((u) => u.name)}
  } finally {
    await src.close()
  }
}

function checkDense(c: FuzzCase, result: unknown, singleName?: string): void {
  const r = result as Awaited<ReturnType<typeof readDenseAll>>
  const names = new Set<string>()
  for (const [i, t] of r.tensors.entries()) {
    checkDenseResult(t)
    const l = r.listed[i]
    if (l.name !== t.name || l.dtype !== t.dtype || l.shape.join() !== t.shape.join()) fail(`listed ${JSON.stringify(l)} but read ${t.name} ${t.dtype} [${t.shape}]`)
    if (names.has(t.name)) fail(`tensor name ${t.name} twice`)
    names.add(t.name)
    if (!withinDenseLimits(t.shape)) fail(`accepted shape [${t.shape}] beyond the documented limits`)
  }
  const e = c.expect
  if (!e) return
  if (e.type === 'reject') fail(`accepted a file that must be refused (${e.why})`)
  if (e.type === 'csr') fail('expected CSR')
  if (e.type === 'tail-of') {
    for (const t of r.tensors) {
      const d = viewBytes(t.data)
      if (!e.files.some((f) => f.length >= d.length && sameBytes(d, f.subarray(f.length - d.length)))) fail(`${t.name}: data are not the data bytes of any member`)
    }
    return
  }
  if (r.tensors.length !== e.tensors.length) fail(`read ${r.tensors.length} tensors, expected ${e.tensors.length}`)
  const byName = new Map(r.tensors.map((t) => [t.name, t]))
  for (const x of e.tensors) {
    const name = x.name === null ? singleName! : x.name
    const t = byName.get(name)
    if (!t) fail(`tensor ${name} missing`)
    if (t.dtype !== x.dtype || t.shape.join() !== x.shape.join()) fail(`read ${t.name} ${t.dtype} [${t.shape}], expected ${name} ${x.dtype} [${x.shape}]`)
    if (!sameBytes(viewBytes(t.data), x.bytes)) fail(`${t.name}: data differ`)
  }
  // File order (by data offset) for tensors with data; empty ones share offsets and have none.
  const order = r.tensors.filter((t) => t.data.length > 0).map((t) => t.name)
  const expected = e.tensors.filter((x) => x.bytes.length > 0).map((x) => x.name ?? singleName)
  if (order.join('\u0000') !== expected.join('\u0000')) fail(`tensor order ${order} expected ${expected}`)
  // Tensors of equal data offsets (empty ones) have no defined file order: compare as sets.
  if (r.unsupported.slice().sort().join('|') !== e.unsupported.slice().sort().join('|')) fail(`unsupported ${r.unsupported} expected ${e.unsupported}`)
}

/** Shapes whose data need more than 2^32 bytes (and some more than 2^32 elements or int32 rows). */
const HUGE_ROWS = [32_768, 65_536, 128_256, 2 ** 31 - 1, 2 ** 31, 2 ** 33]
const HUGE_COLS = [32_769, 16_385, 8192, 131_072]

/** An .npy header claiming more than 4 GiB (issue 12), with a few bytes of data: refused before allocating. */
function over4GiBNpyBytes(r: {rows: number; cols: number; descr: string; have: number; version: number; seed: number}): Uint8Array {
  return buildNpy({descr: r.descr, shape: [r.rows, r.cols], version: r.version, data: seededBytes(r.have, r.seed)}).bytes
}

const over4GiBNpyArb = fc.record({
  rows: fc.constantFrom(...HUGE_ROWS),
  cols: fc.constantFrom(...HUGE_COLS),
  descr: fc.constantFrom('<f4', '<f2', '<f8'),
  have: fc.nat({max: 64}),
  version: fc.constantFrom(1, 2, 3),
  seed: dataSeed,
})

const over4GiBNpy: fc.Arbitrary<FuzzCase> = fc.record({r: over4GiBNpyArb, viaFile: viaFileArb}).map(({r, viaFile}) => ({
  what: `npy claiming ${r.descr} (${r.rows}, ${r.cols}) with ${r.have} data bytes`,
  bytes: over4GiBNpyBytes(r),
  expect: {type: 'reject', why: 'the shape needs more than 4 GiB that are not there'},
  viaFile,
}))

export const npyTarget: Target = {
  name: 'npy',
  allocFactor: 8,
  arbitrary: fc.oneof(
    {weight: 5, arbitrary: mutatedFrom(npySeedArb, () => null)},
    {weight: 4, arbitrary: lyingNpy},
    {weight: 1, arbitrary: over4GiBNpy},
    {weight: 1, arbitrary: fifoCase},
    {weight: 1, arbitrary: randomBytes(Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]))},
  ),
  async parse(c, ctx) {
    return readDenseAll(place(c, ctx, '.npy'), 'npy')
  },
  check(c, result) {
    const r = result as Awaited<ReturnType<typeof readDenseAll>>
    if (r.tensors.length !== 1 || r.unsupported.length !== 0) fail(`an .npy gave ${r.tensors.length} tensors`)
    checkDataIsTail(r.tensors[0], c.bytes)
    checkDense(c, result, tensorNameFor(c))
  },
}

// ---------------------------------------------------------------------------------------
// .npz (dense)

interface NpzSeed {
  built: Built
  members: {name: string; npy: Built; deflate: boolean}[]
  expect?: Expect
  what: string
  zip64: boolean
}

const memberName = fc.oneof(fc.constantFrom('w', 'layers.0.weight', 'bias', 'a/b', 'x.npy', ''), fc.string({maxLength: 6}))

const npzMemberArb = fc.record({
  name: memberName,
  descr: fc.constantFrom('<f4', '<f2', '<f8', '<f4', '<i8', '|u1'),
  shape: smallShape,
  seed: dataSeed,
  deflate: fc.boolean(),
  fortran: fc.nat({max: 9}).map((n) => n === 0),
})

function npzSeedFrom(ms: ArbType<typeof npzMemberArb>[], zip64: boolean): NpzSeed {
  const seen = new Set<string>()
  const members: NpzSeed['members'] = []
  const tensors: ExpectedDense[] = []
  const unsupported: string[] = []
  for (const m of ms) {
    const name = `${m.name}.npy`
    if (m.name === '' || m.name.endsWith('/') || seen.has(m.name)) continue
    seen.add(m.name)
    const size = DENSE_DESCR[m.descr]?.size ?? OTHER_DESCR[m.descr]
    const data = seededBytes(product(m.shape) * size, m.seed)
    const npy = buildNpy({descr: m.descr, shape: m.shape, fortran: m.fortran, data})
    members.push({name, npy, deflate: m.deflate})
    const d = DENSE_DESCR[m.descr]
    if (d && !(m.fortran && m.shape.length > 1)) tensors.push({name: m.name, dtype: d.dtype, shape: m.shape, bytes: data})
    else unsupported.push(m.name)
  }
  const built = buildZip(members.map((m) => ({name: m.name, data: m.npy.bytes, deflate: m.deflate})), {zip64})
  return {built, members, zip64, expect: {type: 'dense', tensors, unsupported}, what: `npz [${members.map((m) => `${m.name}${m.deflate ? '(deflated)' : ''}`).join(', ')}]${zip64 ? ' zip64' : ''}`}
}

const npzSeedArb: fc.Arbitrary<NpzSeed> = fc.record({ms: fc.array(npzMemberArb, {maxLength: 4}), zip64: fc.boolean()}).map(({ms, zip64}) => npzSeedFrom(ms, zip64))

/** Mutate one member's .npy bytes and re-zip it with a correct CRC (so the member parser is reached). */
function memberMutated(seeds: fc.Arbitrary<NpzSeed>): fc.Arbitrary<FuzzCase> {
  return fc.record({seed: seeds, which: fc.nat(), muts: mutationsArb, viaFile: viaFileArb}).map(({seed, which, muts, viaFile}) => {
    if (seed.members.length === 0) return {what: `valid ${seed.what}`, bytes: seed.built.bytes, expect: seed.expect, viaFile}
    const k = which % seed.members.length
    const members: ZipMemberSpec[] = seed.members.map((m, i) => ({name: m.name, data: i === k ? applyMutations(m.npy, muts) : m.npy.bytes, deflate: m.deflate}))
    return {
      what: `${seed.what}, member ${seed.members[k].name} + ${describeMuts(muts)}`,
      bytes: buildZip(members, {zip64: seed.zip64}).bytes,
      expect: {type: 'tail-of', files: members.map((m) => m.data)},
      viaFile,
    }
  })
}

let npzFixtureCache: NpzSeed[] | undefined
const NPZ_FIXTURES = ['multi.npz', 'multi-compressed.npz', 'mixed-expected.npz']
function npzFixtures(): NpzSeed[] {
  return (npzFixtureCache ??= NPZ_FIXTURES.map((f) => {
    const bytes = fixture(f)
    return {built: {bytes, boundaries: [0, 4, 30, bytes.length - 22, bytes.length - 1], fields: []}, members: [], zip64: false, expect: undefined, what: `fixture ${f}`}
  }))
}

/** Container-level mutations keep the member data CRC-protected: results must be member data. */
const npzContainerMutated: fc.Arbitrary<FuzzCase> = mutatedFrom(
  fc.oneof({weight: 5, arbitrary: npzSeedArb}, {weight: 1, arbitrary: fc.nat({max: NPZ_FIXTURES.length - 1}).map((i) => npzFixtures()[i])}),
  (s) => (s.members.length > 0 ? s.members.map((m) => m.npy.bytes) : null),
)

/**
 * Claims beyond 4 GiB in an .npz (issue 12): a member whose .npy header claims more than
 * 4 GiB, or a member whose ZIP sizes (zip64 fields) claim 2^32 bytes and more, beside a
 * valid member. Refused before anything is allocated or inflated for them.
 */
const over4GiBNpz: fc.Arbitrary<FuzzCase> = fc
  .record({
    r: over4GiBNpyArb,
    how: fc.constantFrom('npy-header', 'zip-size', 'zip-both'),
    claim: fc.constantFrom(2 ** 32, 2 ** 32 + 1, 2 ** 33, 2 ** 40, 2 ** 53 - 1),
    deflate: fc.boolean(),
    other: fc.boolean(),
    viaFile: viaFileArb,
  })
  .map(({r, how, claim, deflate, other, viaFile}) => {
    const small = buildNpy({descr: '<f4', shape: [2], data: seededBytes(8, r.seed)}).bytes
    const big = how === 'npy-header' ? over4GiBNpyBytes(r) : small
    const members: ZipMemberSpec[] = [{name: 'big.npy', data: big, deflate}]
    if (other) members.unshift({name: 'w.npy', data: small})
    const built = buildZip(members, {zip64: true})
    const bytes = built.bytes.slice()
    if (how !== 'npy-header') {
      // The central directory's zip64 sizes of the big member: what the reader believes.
      const dv = new DataView(bytes.buffer)
      for (const f of built.fields) {
        if (f.what === 'big.npy zip64 size' || (how === 'zip-both' && f.what === 'big.npy zip64 compressed size')) dv.setBigUint64(f.offset, BigInt(claim), true)
      }
    }
    return {what: `npz with a member claiming more than 4 GiB (${how}, ${claim}, ${r.descr} (${r.rows}, ${r.cols}), deflate ${deflate})`, bytes, expect: {type: 'reject', why: 'a member claims more than 4 GiB that are not there'}, viaFile}
  })

export const npzTarget: Target = {
  name: 'npz',
  allocFactor: 1100,
  arbitrary: fc.oneof(
    {weight: 4, arbitrary: npzContainerMutated},
    {weight: 4, arbitrary: memberMutated(npzSeedArb)},
    {weight: 1, arbitrary: over4GiBNpz},
    {weight: 1, arbitrary: fifoCase},
    {weight: 1, arbitrary: randomBytes(Uint8Array.from([0x50, 0x4b, 0x03, 0x04]))},
  ),
  async parse(c, ctx) {
    return readDenseAll(place(c, ctx, '.npz'), 'npz')
  },
  check(c, result) {
    checkDense(c, result)
  },
}

// ---------------------------------------------------------------------------------------
// .safetensors

const ST_DTYPES: Record<string, {size: number; dense?: string}> = {
  F32: {size: 4, dense: 'f32'}, F16: {size: 2, dense: 'f16'}, BF16: {size: 2, dense: 'bf16'}, F64: {size: 8, dense: 'f64'},
  I64: {size: 8}, I32: {size: 4}, U8: {size: 1}, BOOL: {size: 1}, F8_E4M3: {size: 1},
}

interface StSeed {
  built: Built
  expect?: Expect
  what: string
}

const stTensorArb = fc.record({name: fc.oneof(fc.constantFrom('w', 'layers.0.weight', 'b', 'model.embed', 'x'), fc.string({maxLength: 5})), dtype: fc.constantFrom(...Object.keys(ST_DTYPES)), shape: smallShape, seed: dataSeed})

const validSt: fc.Arbitrary<StSeed> = fc
  .record({ts: fc.array(stTensorArb, {maxLength: 4}), meta: fc.option(fc.dictionary(fc.string({maxLength: 4}), fc.string({maxLength: 6}), {maxKeys: 2})), pad: fc.boolean()})
  .map(({ts, meta, pad}) => {
    const seen = new Set<string>()
    const list = ts.filter((t) => t.name !== '__metadata__' && !seen.has(t.name) && seen.add(t.name))
    const withBytes = list.map((t) => ({...t, bytes: product(t.shape) * ST_DTYPES[t.dtype].size}))
    const header = safetensorsHeader(withBytes, meta ?? undefined)
    const datas = withBytes.map((t) => seededBytes(t.bytes, t.seed))
    const built = buildSafetensors(header, concat(datas), {pad})
    const tensors: ExpectedDense[] = []
    const unsupported: string[] = []
    for (const [i, t] of withBytes.entries()) {
      const dense = ST_DTYPES[t.dtype].dense
      if (dense) tensors.push({name: t.name, dtype: dense, shape: t.shape, bytes: datas[i]})
      else unsupported.push(t.name)
    }
    return {built, expect: {type: 'dense', tensors, unsupported} as Expect, what: `safetensors ${header}`}
  })

/**
 * Many-tensor headers (issue 12): up to 300 tensors (the scale itself is tested in test/hardening/audit.test.ts), most of them empty, some small, with
 * duplicate names sometimes (a lying header JSON.parse would silently accept): every
 * tensor must be listed and read in order, or (duplicates) the file refused.
 */
const manySt: fc.Arbitrary<FuzzCase> = fc
  .record({n: fc.integer({min: 0, max: 300}), every: fc.integer({min: 1, max: 50}), dup: fc.nat({max: 5}), seed: dataSeed, viaFile: viaFileArb})
  .map(({n, every, dup, seed, viaFile}) => {
    const ts = Array.from({length: n}, (_, i) => ({name: `t.${i}`, dtype: 'F32', shape: i % every === 0 ? [1, 2] : [0, 3], seed: seed + i}))
    const withBytes = ts.map((t) => ({...t, bytes: product(t.shape) * 4}))
    let header = safetensorsHeader(withBytes)
    const duplicated = dup === 0 && n > 1
    // A duplicate name: the same key twice in the JSON text.
    if (duplicated) header = header.replace('"t.1":', '"t.0":')
    const datas = withBytes.map((t) => seededBytes(t.bytes, t.seed))
    const built = buildSafetensors(header, concat(datas))
    const expect: Expect = duplicated
      ? {type: 'reject', why: 'a tensor name appears twice in the header'}
      : {type: 'dense', tensors: withBytes.map((t, i) => ({name: t.name, dtype: 'f32', shape: t.shape, bytes: datas[i]})), unsupported: []}
    return {what: `many-tensor safetensors n=${n} every=${every} dup=${duplicated}`, bytes: built.bytes, expect, viaFile}
  })

/**
 * Claims beyond 4 GiB (issue 12): one tensor whose shape needs more than 2^32 bytes but
 * whose data are not there. Refused as truncated, before allocating.
 */
const over4GiBSt: fc.Arbitrary<FuzzCase> = fc
  .record({rows: fc.constantFrom(32_768, 65_536, 128_256), cols: fc.constantFrom(32_769, 16_385, 8192), dtype: fc.constantFrom('F32', 'F16', 'BF16', 'F64'), have: fc.nat({max: 64}), viaFile: viaFileArb})
  .map(({rows, cols, dtype, have, viaFile}) => {
    const bytes = rows * cols * ST_DTYPES[dtype].size
    const header = JSON.stringify({big: {dtype, shape: [rows, cols], data_offsets: [0, bytes]}})
    const built = buildSafetensors(header, new Uint8Array(have))
    return {what: `safetensors claiming ${bytes} bytes (${dtype} [${rows}, ${cols}]) with ${have}`, bytes: built.bytes, expect: {type: 'reject', why: 'the data are not there'} as Expect, viaFile}
  })

let stFixtureCache: StSeed[] | undefined
const ST_FIXTURES = ['mixed.safetensors', 'tiny-mlp.safetensors', 'bad-lying-header.safetensors']
function stFixtures(): StSeed[] {
  return (stFixtureCache ??= ST_FIXTURES.map((f) => {
    const bytes = fixture(f)
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true))
    return {built: {bytes, boundaries: [0, 8, 9, 8 + n, bytes.length - 1], fields: [{offset: 0, width: 8, what: 'header length'}]}, expect: undefined, what: `fixture ${f}`}
  }))
}

/** A JSON value that is almost, but not quite, what the header field wants. */
const weirdJson = fc.constantFrom<unknown>(null, -1, 1.5, '3', [], {}, true, 2 ** 53, 1e12, 2 ** 31, 2 ** 32, -0, 'F32', [0], [0, 1, 2], [-1, 4], [4, 0], [0, 1e12], ['0', '4'], [0.5, 4], [[1]], [2 ** 53, 2 ** 53 + 8])

const lyingSt: fc.Arbitrary<FuzzCase> = fc
  .record({
    entries: fc.array(
      fc.record({
        name: fc.oneof(fc.constantFrom('w', '__proto__', 'constructor', 'toString', '__metadata__', '', 'a'.repeat(300)), fc.string({maxLength: 4})),
        dtype: fc.oneof(fc.constantFrom(...Object.keys(ST_DTYPES), 'f32', 'F32 ', 'constructor', 'toString', '__proto__', 'F128', ''), weirdJson),
        shape: fc.oneof(fc.array(fc.oneof(fc.integer({min: 0, max: 4}), fc.constantFrom(-1, 1.5, 2 ** 31, 2 ** 32, 1e12, 2 ** 53, 2 ** 53 - 1, 0)), {maxLength: 4}), weirdJson),
        offsets: fc.oneof(fc.tuple(fc.integer({min: 0, max: 64}), fc.integer({min: 0, max: 64})), weirdJson),
        shape2: fc.boolean(),
      }),
      {maxLength: 3},
    ),
    meta: fc.oneof(fc.constant(undefined), weirdJson, fc.dictionary(fc.string({maxLength: 3}), weirdJson, {maxKeys: 2})),
    top: fc.nat({max: 12}),
    lenMode: fc.constantFrom('exact', 'exact', 'exact', 'short', 'long', 'huge', 'max', 'big'),
    dataLen: fc.integer({min: 0, max: 96}),
    seed: dataSeed,
    viaFile: viaFileArb,
  })
  .map((r) => {
    const obj: Record<string, unknown> = {}
    if (r.meta !== undefined) obj.__metadata__ = r.meta
    for (const e of r.entries) {
      Object.defineProperty(obj, e.name, {value: {dtype: e.dtype, shape: e.shape, data_offsets: e.offsets}, enumerable: true, configurable: true, writable: true})
    }
    let text = JSON.stringify(obj)
    // Whole-header lies: not an object, BOM, leading space, duplicate keys, truncated JSON.
    const tops = [text, text, text, text, text, text, '[]', '3', '"x"', 'null', `\ufeff${text}`, ` ${text}`, text.slice(0, Math.max(1, text.length >> 1))]
    text = tops[r.top]
    const lenOverride = {exact: undefined, short: BigInt(Math.max(0, text.length - 3)), long: BigInt(text.length + 3), huge: 10n ** 12n, max: 2n ** 64n - 1n, big: 100_000_001n}[r.lenMode]
    const built = buildSafetensors(text, seededBytes(r.dataLen, r.seed), {lenOverride, pad: r.top !== 12})
    return {what: `lying safetensors ${text} len=${r.lenMode} data=${r.dataLen}`, bytes: built.bytes, viaFile: r.viaFile}
  })

async function readSt(path: string) {
  return readDenseAll(path, 'safetensors')
}

/** Independent reading of a safetensors header: where each tensor's bytes are. */
function stOracleRange(file: Uint8Array, name: string): [number, number] | null {
  if (file.length < 8) return null
  const n = new DataView(file.buffer, file.byteOffset).getBigUint64(0, true)
  if (n > BigInt(file.length - 8)) return null
  let json: Record<string, {data_offsets?: [number, number]}>
  try {
    json = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + Number(n))))
  } catch {
    return null
  }
  const e = Object.prototype.hasOwnProperty.call(json, name) ? json[name] : undefined
  if (!e || !Array.isArray(e.data_offsets)) return null
  return [8 + Number(n) + e.data_offsets[0], 8 + Number(n) + e.data_offsets[1]]
}

export const safetensorsTarget: Target = {
  name: 'safetensors',
  allocFactor: 8,
  arbitrary: fc.oneof(
    {weight: 4, arbitrary: mutatedFrom(fc.oneof({weight: 6, arbitrary: validSt}, {weight: 1, arbitrary: fc.nat({max: ST_FIXTURES.length - 1}).map((i) => stFixtures()[i])}), () => null)},
    {weight: 5, arbitrary: lyingSt},
    {weight: 1, arbitrary: manySt},
    {weight: 1, arbitrary: over4GiBSt},
    {weight: 1, arbitrary: fifoCase},
    {weight: 1, arbitrary: randomBytes(Uint8Array.from([0x10, 0, 0, 0, 0, 0, 0, 0, 0x7b]))},
  ),
  async parse(c, ctx) {
    return readSt(place(c, ctx, '.safetensors'))
  },
  check(c, result) {
    const r = result as Awaited<ReturnType<typeof readSt>>
    for (const t of r.tensors) {
      const range = stOracleRange(c.bytes, t.name)
      if (!range) fail(`${t.name}: accepted, but the header does not parse independently`)
      if (!sameBytes(viewBytes(t.data), c.bytes.subarray(range[0], range[1]))) fail(`${t.name}: data are not the bytes at its data_offsets`)
    }
    checkDense(c, result)
  },
}

// ---------------------------------------------------------------------------------------
// CSR helpers

interface RawCsr {
  rows: number
  cols: number
  offsets: number[]
  indices: number[]
  rowIndices?: number[]
}

/** A canonical random CSR (small) from a seed. */
const canonicalCsr: fc.Arbitrary<RawCsr> = fc
  .record({rows: fc.integer({min: 0, max: 7}), cols: fc.integer({min: 0, max: 9}), density: fc.integer({min: 0, max: 100}), seed: dataSeed, order: fc.boolean()})
  .map(({rows, cols, density, seed, order}) => {
    const rnd = seededBytes(rows * cols + rows * 2 + 1, seed)
    const offsets = [0]
    const indices: number[] = []
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) if ((rnd[r * cols + c] * 100) / 256 < density) indices.push(c)
      offsets.push(indices.length)
    }
    const csr: RawCsr = {rows, cols, offsets, indices}
    if (order) {
      const perm = Array.from({length: rows}, (_, i) => i)
      for (let i = rows - 1; i > 0; i--) {
        const j = rnd[rows * cols + i] % (i + 1)
        ;[perm[i], perm[j]] = [perm[j], perm[i]]
      }
      csr.rowIndices = perm
    }
    return csr
  })

/** Corruptions of a canonical CSR: unsorted/duplicate/negative/past-K indices, bad offsets, non-permutation order. */
const corruptionArb = fc.record({
  kind: fc.constantFrom('swap', 'dup', 'index', 'offset', 'last', 'first', 'order', 'dropIndex', 'addIndex', 'rows', 'cols'),
  pos: fc.nat(),
  value: fc.constantFrom(-1, 0, 1, 2, 3, 9, 10, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 40, -(2 ** 40)),
})

function corrupt(csr: RawCsr, cs: ArbType<typeof corruptionArb>[]): RawCsr {
  const c: RawCsr = {rows: csr.rows, cols: csr.cols, offsets: csr.offsets.slice(), indices: csr.indices.slice(), rowIndices: csr.rowIndices?.slice()}
  for (const x of cs) {
    const n = c.indices.length
    switch (x.kind) {
      case 'swap':
        if (n > 1) {
          const i = x.pos % (n - 1)
          ;[c.indices[i], c.indices[i + 1]] = [c.indices[i + 1], c.indices[i]]
        }
        break
      case 'dup':
        if (n > 1) c.indices[(x.pos % (n - 1)) + 1] = c.indices[x.pos % (n - 1)]
        break
      case 'index':
        if (n > 0) c.indices[x.pos % n] = x.value === 9 ? c.cols : x.value
        break
      case 'offset':
        c.offsets[x.pos % c.offsets.length] = x.value
        break
      case 'last':
        c.offsets[c.offsets.length - 1] += x.value === 0 ? 1 : Math.sign(x.value)
        break
      case 'first':
        c.offsets[0] = x.value
        break
      case 'order':
        if (c.rowIndices && c.rowIndices.length > 0) c.rowIndices[x.pos % c.rowIndices.length] = x.value === 9 ? c.rows : x.value
        else c.rowIndices = [x.value]
        break
      case 'dropIndex':
        c.indices.pop()
        break
      case 'addIndex':
        c.indices.push(x.value)
        break
      case 'rows':
        c.rows = x.value === 9 ? c.rows + 1 : x.value
        break
      case 'cols':
        c.cols = x.value === 9 ? c.cols - 1 : x.value
        break
    }
  }
  return c
}

function expectedFromRaw(csr: RawCsr, values: Uint8Array | null, dtype: string, shape: number[], name?: string): ExpectedCsr {
  return {name, rows: csr.rows, cols: csr.cols, offsets: csr.offsets, indices: csr.indices, values, dtype, rowIndices: csr.rowIndices, shape}
}

function checkCsrMats(c: FuzzCase, mats: NamedCsr[]): void {
  for (const m of mats) {
    checkCsrResult(m)
    inspectCsr(m)
  }
  const e = c.expect
  if (!e) return
  if (e.type === 'reject') fail(`accepted a file that must be refused (${e.why})`)
  if (e.type !== 'csr') return
  if (!e.valid) fail(`accepted a CSR that is not canonical (${e.why ?? ''})`)
  if (mats.length !== e.mats.length) fail(`read ${mats.length} matrices, expected ${e.mats.length}`)
  for (const [i, x] of e.mats.entries()) {
    const m = mats[i]
    const {csr} = m
    if (x.name !== undefined && m.name !== x.name) fail(`name ${m.name}, expected ${x.name}`)
    if (csr.rows !== x.rows || csr.cols !== x.cols) fail(`shape ${csr.rows}x${csr.cols}, expected ${x.rows}x${x.cols}`)
    if (m.shape.join() !== x.shape.join()) fail(`tensor shape [${m.shape}], expected [${x.shape}]`)
    if (Array.from(csr.rowOffsets).join() !== x.offsets.join()) fail('row offsets differ')
    if (Array.from(csr.columnIndices).join() !== x.indices.join()) fail('column indices differ')
    if ((csr.rowIndices === undefined) !== (x.rowIndices === undefined) || (x.rowIndices && Array.from(csr.rowIndices!).join() !== x.rowIndices.join())) fail('row order differs')
    if (x.values === null) {
      if (csr.values !== null) fail('a pattern matrix got values')
    } else {
      if (csr.dtype !== x.dtype) fail(`dtype ${csr.dtype}, expected ${x.dtype}`)
      if (!csr.values || !sameBytes(viewBytes(csr.values), x.values)) fail('values differ')
    }
  }
}

// ---------------------------------------------------------------------------------------
// .smtx

function smtxText(csr: RawCsr, style: {sep: string; trailing: boolean; crlf: boolean; blankTail: number; noFinalNewline: boolean; headerSpaces: boolean}): string {
  const nl = style.crlf ? '\r\n' : '\n'
  const line = (a: number[]) => a.join(style.sep) + (style.trailing ? ' ' : '')
  const head = style.headerSpaces ? ` ${csr.rows} ,${csr.cols},  ${csr.indices.length} ` : `${csr.rows}, ${csr.cols}, ${csr.indices.length}`
  let text = [head, line(csr.offsets), line(csr.indices)].join(nl) + nl + nl.repeat(style.blankTail)
  if (style.noFinalNewline) text = text.replace(/(\r?\n)+$/, '')
  return text
}

/**
 * An independent reading of DLMC .smtx as documented in src/formats/smtx.ts: three lines
 * (CRLF tolerated, trailing blank lines ignored), "rows, cols, nnz", rows + 1 offsets, nnz
 * indices, separated by spaces/tabs. Returns the arrays, or null when malformed.
 */
export function smtxOracle(bytes: Uint8Array): RawCsr | null {
  const text = new TextDecoder('latin1').decode(bytes)
  let lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  while (lines.length > 0 && /^[ \t]*$/.test(lines[lines.length - 1])) lines.pop()
  if (lines.length === 0 || lines.length > 3) return null
  const m = /^\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*$/.exec(lines[0])
  if (!m) return null
  const [rows, cols, nnz] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (![rows, cols, nnz].every((v) => Number.isSafeInteger(v) && v <= 2 ** 31 - 1)) return null
  if (lines.length < 2 || (nnz > 0 && lines.length < 3)) return null
  const ints = (l: string | undefined): number[] | null => {
    if (l === undefined) return []
    const toks = l.split(/[ \t]+/).filter((t) => t !== '')
    if (!toks.every((t) => /^\d+$/.test(t))) return null
    const v = toks.map(Number)
    return v.every((x) => x <= 2 ** 31 - 1) ? v : null
  }
  const offsets = ints(lines[1])
  const indices = ints(lines[2])
  if (!offsets || !indices || offsets.length !== rows + 1 || indices.length !== nnz) return null
  return {rows, cols, offsets, indices}
}

const smtxStyle = fc.record({sep: fc.constantFrom(' ', ' ', '  ', '\t'), trailing: fc.boolean(), crlf: fc.boolean(), blankTail: fc.nat({max: 2}), noFinalNewline: fc.boolean(), headerSpaces: fc.boolean()})

const smtxSeeds: fc.Arbitrary<{built: Built; expect?: Expect; what: string}> = fc
  .record({csr: canonicalCsr, style: smtxStyle, corruptions: fc.array(corruptionArb, {maxLength: 2})})
  .map(({csr, style, corruptions}) => {
    const c = corrupt({...csr, rowIndices: undefined}, corruptions.filter((x) => x.kind !== 'order'))
    const text = smtxText(c, style)
    const bytes = new TextEncoder().encode(text)
    const nl = [...text.matchAll(/\n/g)].map((x) => x.index!)
    return {built: {bytes, boundaries: [0, ...nl, ...nl.map((i) => i + 1), bytes.length - 1, bytes.length], fields: []}, expect: undefined, what: `smtx ${JSON.stringify(text.slice(0, 200))}`}
  })

/** Header numbers that lie (int32 edges, 10^12, huge digit strings). */
const lyingSmtx: fc.Arbitrary<FuzzCase> = fc
  .record({
    head: fc.tuple(...[0, 1, 2].map(() => fc.oneof(fc.integer({min: 0, max: 8}).map(String), fc.constantFrom('2147483647', '2147483648', '4294967296', '1000000000000', '99999999999999999999999', '-1', '1.0', '', '0x10')))),
    l2: fc.array(fc.oneof(fc.integer({min: 0, max: 9}).map(String), fc.constantFrom('-1', '2147483648', '4294967296', '99999999999', '1e3', 'x')), {maxLength: 10}),
    l3: fc.array(fc.oneof(fc.integer({min: 0, max: 9}).map(String), fc.constantFrom('-1', '2147483647', '2147483648', '18446744073709551616')), {maxLength: 10}),
    extraLines: fc.nat({max: 2}),
    viaFile: viaFileArb,
  })
  .map((r) => {
    const text = `${r.head.join(', ')}\n${r.l2.join(' ')}\n${r.l3.join(' ')}\n${'1 2\n'.repeat(r.extraLines)}`
    return {what: `lying smtx ${JSON.stringify(text)}`, bytes: new TextEncoder().encode(text), viaFile: r.viaFile}
  })

let smtxFixtureCache: {built: Built; expect?: Expect; what: string}[] | undefined
const smtxFixtures = () =>
  (smtxFixtureCache ??= ['dlmc-rn50-0.98-initial_conv.smtx', 'empty.smtx'].map((f) => {
    const bytes = fixture(f)
    return {built: {bytes, boundaries: [0, bytes.indexOf(0x0a), bytes.indexOf(0x0a) + 1, bytes.length - 1], fields: []}, expect: undefined, what: `fixture ${f}`}
  }))

/**
 * A valid matrix whose M x N is beyond 2^32 (issue 12): up to 100,000 rows, up to 2^31 - 1
 * columns, a few nonzeros. CSR needs no M x N memory: it must be read, not refused.
 */
const hugeSparseCsr: fc.Arbitrary<RawCsr> = fc
  .record({rows: fc.constantFrom(1, 65_537, 100_000), cols: fc.constantFrom(2 ** 31 - 1, 2 ** 20 + 1, 65_536), nnz: fc.nat({max: 8}), seed: dataSeed})
  .map(({rows, cols, nnz, seed}) => {
    const rnd = seededBytes(nnz * 8, seed)
    const dv = new DataView(rnd.buffer)
    const cells = new Map<number, number[]>()
    for (let i = 0; i < nnz; i++) {
      const r = dv.getUint32(8 * i, true) % rows
      const c = dv.getUint32(8 * i + 4, true) % cols
      const row = cells.get(r) ?? []
      if (!row.includes(c)) row.push(c)
      cells.set(r, row)
    }
    const offsets = [0]
    const indices: number[] = []
    for (let r = 0; r < rows; r++) {
      const row = cells.get(r)
      if (row) indices.push(...row.sort((a, b) => a - b))
      offsets.push(indices.length)
    }
    return {rows, cols, offsets, indices}
  })

const hugeSparseSmtx: fc.Arbitrary<FuzzCase> = fc.record({csr: hugeSparseCsr, viaFile: viaFileArb}).map(({csr, viaFile}) => ({
  what: `smtx ${csr.rows} x ${csr.cols} with ${csr.indices.length} nonzeros (M x N beyond 2^32)`,
  bytes: new TextEncoder().encode(smtxText(csr, {sep: ' ', trailing: false, crlf: false, blankTail: 0, noFinalNewline: false, headerSpaces: false})),
  viaFile,
}))

export const smtxTarget: Target = {
  name: 'smtx',
  allocFactor: 8,
  arbitrary: fc.oneof(
    {weight: 6, arbitrary: mutatedFrom(fc.oneof({weight: 8, arbitrary: smtxSeeds}, {weight: 1, arbitrary: fc.nat({max: 1}).map((i) => smtxFixtures()[i])}), () => null)},
    {weight: 3, arbitrary: lyingSmtx},
    {weight: 1, arbitrary: hugeSparseSmtx},
    {weight: 1, arbitrary: fifoCase},
    {weight: 1, arbitrary: randomBytes(new TextEncoder().encode('3, 4, 2\n'))},
  ),
  async parse(c, ctx) {
    return readCsrInput(place(c, ctx, '.smtx'), 'smtx')
  },
  check(c, result) {
    const mats = result as NamedCsr[]
    if (mats.length !== 1) fail(`an .smtx gave ${mats.length} matrices`)
    checkCsrMats(c, mats)
    // Differential check against the independent reading, for every case.
    const o = smtxOracle(c.bytes)
    if (!o) fail('accepted an .smtx that the independent reading calls malformed')
    const p = csrProblem(o.rows, o.cols, o.offsets, o.indices, null)
    if (p) fail(`accepted a non-canonical .smtx (${p})`)
    const {csr} = mats[0]
    if (csr.rows !== o.rows || csr.cols !== o.cols || Array.from(csr.rowOffsets).join() !== o.offsets.join() || Array.from(csr.columnIndices).join() !== o.indices.join()) fail('arrays differ from the independent reading')
    if (csr.values !== null) fail('an .smtx matrix has values')
  },
}

/** For smtx, "must fail" is decided by the independent reading (see checkRejection). */
export function smtxMustAccept(bytes: Uint8Array): boolean {
  const o = smtxOracle(bytes)
  return o !== null && csrProblem(o.rows, o.cols, o.offsets, o.indices, null) === null
}

// ---------------------------------------------------------------------------------------
// CSR .npz

type IntDescr = '<i4' | '<i8'

function intNpy(descr: IntDescr, values: number[], shape?: number[]): Uint8Array {
  const data = descr === '<i4' ? bytesOf(Int32Array.from(values, (v) => v | 0)) : bytesOf(BigInt64Array.from(values, (v) => BigInt(Math.trunc(v))))
  return buildNpy({descr, shape: shape ?? [values.length], data}).bytes
}

function strNpy(s: string, kind: '|S' | '<U'): Uint8Array {
  if (kind === '|S') return buildNpy({descr: `|S${s.length}`, shape: [], data: Uint8Array.from(s, (c) => c.charCodeAt(0))}).bytes
  return buildNpy({descr: `<U${s.length}`, shape: [], data: bytesOf(Uint32Array.from(s, (c) => c.codePointAt(0)!))}).bytes
}

interface CsrNpzSpec {
  csr: RawCsr
  dataDescr: '<f4' | '<f2' | '<f8' | '<u2' | '<i4'
  dataDelta: number
  indexDescr: IntDescr
  ptrDescr: IntDescr
  shapeDescr: IntDescr
  format: 'csr' | 'csc' | 'none'
  formatKind: '|S' | '<U'
  tensorShape: number[] | null
  bf16Tag: boolean
  seed: number
  deflate: boolean
  zip64: boolean
}

const INT32_MAX = 2 ** 31 - 1

/** Build a SciPy-layout CSR .npz from raw (possibly lying) arrays, and say whether it must be accepted. */
function buildCsrNpz(s: CsrNpzSpec): {members: ZipMemberSpec[]; expect: Expect} {
  const nnz = s.csr.indices.length
  const nData = Math.max(0, nnz + s.dataDelta)
  const itemSize = {'<f4': 4, '<f2': 2, '<f8': 8, '<u2': 2, '<i4': 4}[s.dataDescr]
  let dataBytes = seededBytes(nData * itemSize, s.seed)
  if (s.dataDescr === '<f8') dataBytes = bytesOf(Float64Array.from({length: nData}, (_, i) => (i % 7) - 3 + i / 8))
  const members: ZipMemberSpec[] = [
    {name: 'indices.npy', data: intNpy(s.indexDescr, s.csr.indices), deflate: s.deflate},
    {name: 'indptr.npy', data: intNpy(s.ptrDescr, s.csr.offsets), deflate: s.deflate},
  ]
  if (s.format !== 'none') members.push({name: 'format.npy', data: strNpy(s.format, s.formatKind), deflate: s.deflate})
  members.push({name: 'shape.npy', data: intNpy(s.shapeDescr, [s.csr.rows, s.csr.cols]), deflate: s.deflate})
  members.push({name: 'data.npy', data: buildNpy({descr: s.dataDescr, shape: [nData], data: dataBytes}).bytes, deflate: s.deflate})
  if (s.csr.rowIndices) members.push({name: 'row_indices.npy', data: intNpy('<i4', s.csr.rowIndices), deflate: s.deflate})
  if (s.tensorShape) members.push({name: 'tensor_shape.npy', data: intNpy('<i8', s.tensorShape), deflate: s.deflate})
  if (s.bf16Tag) members.push({name: 'dtype.npy', data: strNpy('bfloat16', '<U'), deflate: s.deflate})

  // What a correct reader does with it.
  const why: string[] = []
  const inInt = (v: number, d: IntDescr) => (d === '<i4' ? v >= -(2 ** 31) && v <= INT32_MAX : true)
  const all = [...s.csr.indices.map((v) => [v, s.indexDescr] as const), ...s.csr.offsets.map((v) => [v, s.ptrDescr] as const), [s.csr.rows, s.shapeDescr] as const, [s.csr.cols, s.shapeDescr] as const]
  // Values that do not fit the written width were wrapped by the builder: decide on the stored values.
  const stored = (v: number, d: IntDescr) => (d === '<i4' ? v | 0 : v)
  const csr: RawCsr = {
    rows: stored(s.csr.rows, s.shapeDescr),
    cols: stored(s.csr.cols, s.shapeDescr),
    offsets: s.csr.offsets.map((v) => stored(v, s.ptrDescr)),
    indices: s.csr.indices.map((v) => stored(v, s.indexDescr)),
    rowIndices: s.csr.rowIndices?.map((v) => v | 0),
  }
  void all
  void inInt
  if (s.format === 'csc') why.push('format csc')
  if (s.dataDescr === '<i4') why.push('integer data')
  if (s.dataDescr === '<u2' && !s.bf16Tag) why.push('uint16 data without the bfloat16 tag')
  if (s.bf16Tag && s.dataDescr !== '<u2') why.push('bfloat16 tag on non-uint16 data')
  if (nData !== nnz) why.push('data length != nnz')
  const p = csrProblem(csr.rows, csr.cols, csr.offsets, csr.indices, null, csr.rowIndices)
  if (p) why.push(p)
  if (s.tensorShape) {
    const ts = s.tensorShape
    const [r, c] = matrixOf(ts)
    if (!ts.every((d) => Number.isSafeInteger(d) && d >= 0) || r !== csr.rows || c !== csr.cols) why.push('tensor_shape inconsistent')
  }
  const dtype = s.bf16Tag ? 'bf16' : s.dataDescr === '<f2' ? 'f16' : 'f32'
  const values = s.dataDescr === '<f8' ? bytesOf(Float32Array.from(new Float64Array(dataBytes.buffer, dataBytes.byteOffset, nData))) : dataBytes
  const shape = s.tensorShape ?? [csr.rows, csr.cols]
  return {members, expect: {type: 'csr', valid: why.length === 0, why: why.join('; '), mats: [expectedFromRaw(csr, values, dtype, shape)]}}
}

const csrNpzSpecArb = (corruptions: number): fc.Arbitrary<CsrNpzSpec> =>
  fc
    .record({
      csr: canonicalCsr,
      corr: fc.array(corruptionArb, {maxLength: corruptions}),
      dataDescr: fc.constantFrom('<f4', '<f4', '<f2', '<f8', '<u2', '<i4'),
      dataDelta: fc.constantFrom(0, 0, 0, 0, 0, 1, -1),
      indexDescr: fc.constantFrom('<i4', '<i8'),
      ptrDescr: fc.constantFrom('<i4', '<i8'),
      shapeDescr: fc.constantFrom('<i8', '<i8', '<i4'),
      format: fc.constantFrom('csr', 'csr', 'csr', 'csc', 'none'),
      formatKind: fc.constantFrom('|S', '<U'),
      tensorShape: fc.nat({max: 5}),
      bf16: fc.boolean(),
      seed: dataSeed,
      deflate: fc.boolean(),
      zip64: fc.boolean(),
    })
    .map((r) => {
      const csr = corrupt(r.csr, r.corr)
      const ts = [null, null, null, [csr.rows, csr.cols], [csr.rows, 1, csr.cols], [csr.rows, -1, -csr.cols]][r.tensorShape]
      const bf16Tag = r.dataDescr === '<u2' ? r.bf16 || r.seed % 4 !== 0 : r.bf16 && r.seed % 8 === 0
      return {csr, dataDescr: r.dataDescr as CsrNpzSpec['dataDescr'], dataDelta: r.dataDelta, indexDescr: r.indexDescr as IntDescr, ptrDescr: r.ptrDescr as IntDescr, shapeDescr: r.shapeDescr as IntDescr, format: r.format as CsrNpzSpec['format'], formatKind: r.formatKind as '|S' | '<U', tensorShape: ts, bf16Tag, seed: r.seed, deflate: r.deflate, zip64: r.zip64}
    })

const structuralCsrNpz: fc.Arbitrary<FuzzCase> = fc.record({spec: csrNpzSpecArb(3), viaFile: viaFileArb}).map(({spec, viaFile}) => {
  const {members, expect} = buildCsrNpz(spec)
  return {what: `csr npz ${JSON.stringify(spec)}`, bytes: buildZip(members, {zip64: spec.zip64}).bytes, expect, viaFile}
})

/** Our own writer's output (realistic member order and flags) as seeds, plus SciPy's fixtures. */
class MemSink implements ByteSink {
  parts: Uint8Array[] = []
  async write(c: Uint8Array) {
    this.parts.push(c.slice())
  }
}

async function ourCsrNpz(csr: RawCsr, dtype: 'f32' | 'f16' | 'bf16', seed: number): Promise<Uint8Array> {
  const nnz = csr.indices.length
  const values = dtype === 'f32' ? new Float32Array(seededBytes(nnz * 4, seed).buffer) : new Uint16Array(seededBytes(nnz * 2, seed).buffer)
  const sink = new MemSink()
  await writeCsrNpzTo(sink, {name: 'm', shape: [csr.rows, csr.cols], csr: {rows: csr.rows, cols: csr.cols, rowOffsets: Int32Array.from(csr.offsets), columnIndices: Int32Array.from(csr.indices), values, dtype, rowIndices: csr.rowIndices ? Int32Array.from(csr.rowIndices) : undefined}})
  return concat(sink.parts)
}

interface CsrNpzSeed {
  built: Built
  members: ZipMemberSpec[]
  expect: Expect
  what: string
  zip64: boolean
}

const csrNpzSeeds: fc.Arbitrary<CsrNpzSeed> = csrNpzSpecArb(0).map((spec) => {
  const {members, expect} = buildCsrNpz(spec)
  const built = buildZip(members, {zip64: spec.zip64})
  return {built, members, expect, zip64: spec.zip64, what: `csr npz ${JSON.stringify({...spec, csr: undefined})} ${spec.csr.rows}x${spec.csr.cols}`}
})

let csrFixtureCache: Built[] | undefined
const CSR_FIXTURES = ['scipy-csr.npz', 'scipy-csr-int64.npz']
const csrFixtures = () => (csrFixtureCache ??= CSR_FIXTURES.map((f) => {
  const bytes = fixture(f)
  return {bytes, boundaries: [0, 4, 30, bytes.length - 22, bytes.length - 1], fields: []}
}))

const csrMemberMutated: fc.Arbitrary<FuzzCase> = fc.record({seed: csrNpzSeeds, which: fc.nat(), muts: mutationsArb, viaFile: viaFileArb}).map(({seed, which, muts, viaFile}) => {
  const k = which % seed.members.length
  const members = seed.members.map((m, i) => (i === k ? {...m, data: applyMutations(builtFromNpy(m.data), muts)} : m))
  return {what: `${seed.what}, member ${seed.members[k].name} + ${describeMuts(muts)}`, bytes: buildZip(members, {zip64: seed.zip64}).bytes, viaFile}
})

const csrContainerMutated: fc.Arbitrary<FuzzCase> = fc
  .record({pick: fc.nat({max: 9}), seed: csrNpzSeeds, fx: fc.nat({max: CSR_FIXTURES.length - 1}), muts: mutationsArb, viaFile: viaFileArb})
  .map(({pick, seed, fx, muts, viaFile}) => {
    const built = pick === 0 ? csrFixtures()[fx] : seed.built
    return {what: `${pick === 0 ? `fixture ${CSR_FIXTURES[fx]}` : seed.what} + ${describeMuts(muts)}`, bytes: applyMutations(built, muts), viaFile}
  })

/** Our writer's files, valid (exact) or mutated. */
const ourWriterCases: fc.Arbitrary<{csr: RawCsr; dtype: 'f32' | 'f16' | 'bf16'; seed: number; muts: Mutation[] | null; viaFile: boolean}> = fc.record({
  csr: canonicalCsr,
  dtype: fc.constantFrom('f32', 'f16', 'bf16'),
  seed: dataSeed,
  muts: fc.option(mutationsArb, {freq: 3}),
  viaFile: viaFileArb,
})

/**
 * Beyond 4 GiB in a CSR .npz (issue 12): a member (data, indices or indptr) whose .npy
 * header claims more than 4 GiB that are not there (refused before allocating), or a valid
 * matrix whose M x N is beyond 2^32 with a few nonzeros (read: CSR needs no M x N memory).
 */
const over4GiBCsrNpz: fc.Arbitrary<FuzzCase> = fc
  .record({
    csr: hugeSparseCsr,
    lie: fc.constantFrom('none', 'none', 'data.npy', 'indices.npy', 'indptr.npy'),
    claim: fc.constantFrom(2 ** 30, 2 ** 31, 2 ** 32 + 1, 2 ** 40),
    ptrDescr: fc.constantFrom<IntDescr>('<i4', '<i8'),
    seed: dataSeed,
    deflate: fc.boolean(),
    viaFile: viaFileArb,
  })
  .map(({csr, lie, claim, ptrDescr, seed, deflate, viaFile}) => {
    const spec: CsrNpzSpec = {csr, dataDescr: '<f4', dataDelta: 0, indexDescr: '<i4', ptrDescr, shapeDescr: '<i8', format: 'csr', formatKind: '<U', tensorShape: null, bf16Tag: false, seed, deflate, zip64: false}
    const {members, expect} = buildCsrNpz(spec)
    if (lie === 'none') return {what: `csr npz ${csr.rows} x ${csr.cols}, nnz ${csr.indices.length} (M x N beyond 2^32)`, bytes: buildZip(members).bytes, expect, viaFile}
    const lying = members.map((m) => (m.name === lie ? {...m, data: buildNpy({descr: lie === 'data.npy' ? '<f4' : '<i8', shape: [claim], data: seededBytes(16, seed)}).bytes} : m))
    return {what: `csr npz whose ${lie} claims ${claim} elements`, bytes: buildZip(lying).bytes, expect: {type: 'reject', why: `${lie} claims more than 4 GiB that are not there`} as Expect, viaFile}
  })

export const csrNpzTarget: Target = {
  name: 'csr-npz',
  allocFactor: 1100,
  arbitrary: fc.oneof(
    {weight: 4, arbitrary: structuralCsrNpz},
    {weight: 3, arbitrary: csrMemberMutated},
    {weight: 3, arbitrary: csrContainerMutated},
    {weight: 1, arbitrary: over4GiBCsrNpz},
    {weight: 1, arbitrary: fifoCase},
    {weight: 1, arbitrary: ourWriterCases.map((x) => ({what: `ours ${JSON.stringify(x)}`, bytes: new Uint8Array(0), viaFile: x.viaFile, ours: x}) as FuzzCase)},
    {weight: 1, arbitrary: randomBytes(Uint8Array.from([0x50, 0x4b, 0x03, 0x04]))},
  ),
  async parse(c, ctx) {
    const ours = (c as FuzzCase & {ours?: ArbType<typeof ourWriterCases>}).ours
    if (ours && c.bytes.length === 0) {
      // Materialise lazily (the writer is async).
      const bytes = await ourCsrNpz(ours.csr, ours.dtype, ours.seed)
      const nnz = ours.csr.indices.length
      c.bytes = ours.muts ? applyMutations({bytes, boundaries: [0, 30, bytes.length - 22], fields: []}, ours.muts) : bytes
      if (!ours.muts) {
        const vb = ours.dtype === 'f32' ? seededBytes(nnz * 4, ours.seed) : seededBytes(nnz * 2, ours.seed)
        c.expect = {type: 'csr', valid: true, mats: [expectedFromRaw(ours.csr, vb, ours.dtype, [ours.csr.rows, ours.csr.cols])]}
      }
    }
    return readCsrInput(place(c, ctx, '.npz'), 'csr-npz')
  },
  check(c, result) {
    const mats = result as NamedCsr[]
    if (mats.length !== 1) fail(`a CSR .npz gave ${mats.length} matrices`)
    checkCsrMats(c, mats)
  },
}

// ---------------------------------------------------------------------------------------
// CSR directory (manifest.json + one CSR .npz per tensor)

interface DirSeed {
  manifest: Record<string, unknown>
  files: [string, Uint8Array][]
  mats: ExpectedCsr[]
}

const dirSeedArb: fc.Arbitrary<DirSeed> = fc.array(fc.record({csr: canonicalCsr, name: fc.constantFrom('w', 'layers.0.weight', 'x/y', 'b', 'conv'), shape4: fc.boolean(), seed: dataSeed}), {minLength: 1, maxLength: 3}).map((ts) => {
  const names = new Set<string>()
  const files: [string, Uint8Array][] = []
  const tensors: Record<string, unknown>[] = []
  const mats: ExpectedCsr[] = []
  for (const [i, t] of ts.entries()) {
    if (names.has(t.name)) continue
    names.add(t.name)
    const csr = {...t.csr}
    const shape = t.shape4 ? [csr.rows, 1, csr.cols] : [csr.rows, csr.cols]
    const spec: CsrNpzSpec = {csr, dataDescr: '<f4', dataDelta: 0, indexDescr: '<i4', ptrDescr: '<i4', shapeDescr: '<i8', format: 'csr', formatKind: '<U', tensorShape: t.shape4 ? shape : null, bf16Tag: false, seed: t.seed, deflate: false, zip64: false}
    const {members, expect} = buildCsrNpz(spec)
    const file = `t${i}.npz`
    files.push([file, buildZip(members).bytes])
    tensors.push({name: t.name, shape, rows: csr.rows, cols: csr.cols, nnz: csr.indices.length, sparsity: 0, dtype: 'f32', rowOrder: csr.rowIndices !== undefined, file})
    mats.push({...(expect as {mats: ExpectedCsr[]}).mats[0], name: t.name, shape})
  }
  return {manifest: {format: 'sparse-csr-dir', version: 1, tensors}, files, mats}
})

/** JSON-level lies in a manifest: names, files (traversal, absolute, hidden, missing), shapes, nnz. */
const manifestLieArb = fc.record({
  target: fc.nat(),
  field: fc.oneof({weight: 8, arbitrary: fc.constantFrom('name', 'file', 'shape', 'nnz', 'entry', 'tensors', 'top', 'dupName')}, {weight: 5, arbitrary: fc.constant('none')}),
  value: fc.oneof(
    fc.constantFrom<unknown>('../t0.npz', '/etc/passwd', '.t0.npz', 'manifest.json', '', 'missing.npz', 'a/t0.npz', 't0.npz', 't1.npz', 'C:\\t0.npz', '..', '.'),
    weirdJson,
    fc.constantFrom<unknown>([2, 3], [-2, -3], [0, 5], [6], [2 ** 31, 1], [1e12, 0], ['2', '3'], 'w', 'b'),
  ),
})

function applyManifestLie(seed: DirSeed, lie: ArbType<typeof manifestLieArb>): {text: string; intact: boolean} {
  const m = JSON.parse(JSON.stringify(seed.manifest)) as {tensors: Record<string, unknown>[]} & Record<string, unknown>
  const t = m.tensors[lie.target % m.tensors.length]
  switch (lie.field) {
    case 'name':
    case 'file':
    case 'shape':
    case 'nnz':
      t[lie.field] = lie.value
      break
    case 'entry':
      m.tensors[lie.target % m.tensors.length] = lie.value as Record<string, unknown>
      break
    case 'tensors':
      m.tensors = lie.value as Record<string, unknown>[]
      break
    case 'top':
      return {text: JSON.stringify(lie.value), intact: false}
    case 'dupName':
      m.tensors.push({...t})
      break
    case 'none':
      return {text: JSON.stringify(m), intact: true}
  }
  return {text: JSON.stringify(m), intact: false}
}

const dirCaseArb: fc.Arbitrary<FuzzCase> = fc
  .record({
    seed: dirSeedArb,
    lie: manifestLieArb,
    textMuts: fc.option(mutationsArb, {freq: 2}),
    fileMuts: fc.option(fc.record({which: fc.nat(), muts: mutationsArb}), {freq: 2}),
  })
  .map(({seed, lie, textMuts, fileMuts}) => {
    const {text, intact} = applyManifestLie(seed, lie)
    let bytes: Uint8Array = new TextEncoder().encode(text)
    if (textMuts) bytes = applyMutations({bytes, boundaries: [0, 1, bytes.length >> 1, bytes.length - 1], fields: []}, textMuts)
    const files = seed.files.map(([n, b]) => [n, b] as [string, Uint8Array])
    if (fileMuts) {
      const k = fileMuts.which % files.length
      const b = files[k][1]
      files[k] = [files[k][0], applyMutations({bytes: b, boundaries: [0, 30, b.length - 22, b.length], fields: []}, fileMuts.muts)]
    }
    const exact = intact && !textMuts && !fileMuts
    return {
      what: `csr dir ${text.slice(0, 400)}${textMuts ? ` + manifest ${describeMuts(textMuts)}` : ''}${fileMuts ? ` + file ${fileMuts.which % files.length} ${describeMuts(fileMuts.muts)}` : ''}`,
      bytes,
      files,
      expect: exact ? {type: 'csr', valid: true, mats: seed.mats} : undefined,
      viaFile: true,
    }
  })

/** A valid CSR directory whose manifest.json, or one of whose files, is a FIFO (issue 12): refused at once. */
const dirFifoArb: fc.Arbitrary<FuzzCase> = fc.record({seed: dirSeedArb, which: fc.nat()}).map(({seed, which}) => {
  const names = ['manifest.json', ...seed.files.map(([n]) => n)]
  const fifo = names[which % names.length]
  return {what: `csr dir whose ${fifo} is a FIFO`, bytes: new TextEncoder().encode(JSON.stringify(seed.manifest)), files: seed.files, viaFile: true, fifo, expect: REJECT_FIFO}
})

/**
 * The case directory is reused: only files the previous case had and this one lacks are
 * removed (rm -r per case was most of the time), and a name that was a FIFO is removed
 * before anything is written to it (writing to a FIFO would wait for a reader).
 */
const dirFiles = new Map<string, {files: Set<string>; fifo?: string}>()
export const csrDirTarget: Target = {
  name: 'csr-dir',
  allocFactor: 1100,
  arbitrary: fc.oneof({weight: 12, arbitrary: dirCaseArb}, {weight: 1, arbitrary: dirFifoArb}),
  async parse(c, ctx) {
    const dir = join(ctx.tmp, 'dir')
    let had = dirFiles.get(dir)
    if (!had) {
      mkdirSync(dir, {recursive: true})
      had = {files: new Set()}
    }
    const now = new Set((c.files ?? []).map(([n]) => n))
    for (const n of had.files) if (!now.has(n)) rmSync(join(dir, n), {force: true})
    if (had.fifo) rmSync(join(dir, had.fifo), {force: true})
    const fifo = typeof c.fifo === 'string' ? c.fifo : undefined
    for (const [n, b] of [['manifest.json', c.bytes] as [string, Uint8Array], ...(c.files ?? [])]) {
      if (n !== fifo) writeFileSync(join(dir, n), b)
      else {
        rmSync(join(dir, n), {force: true})
        fifoAt(ctx, n, dir)
      }
    }
    dirFiles.set(dir, {files: now, fifo})
    return readCsrInput(dir)
  },
  check(c, result) {
    const mats = result as NamedCsr[]
    checkCsrMats(c, mats)
    const names = new Set(mats.map((m) => m.name))
    if (names.size !== mats.length) fail('two tensors with one name')
    // Every matrix must be one of the directory's files, read exactly.
  },
}

// ---------------------------------------------------------------------------------------
// Format detection + `sparse info` on any of the above, with no format given

/** Every case of the five file parsers, read as `sparse info` reads an unnamed file: by sniffing its content. */
export const detectTarget: Target = {
  name: 'detect',
  allocFactor: 1100,
  arbitrary: fc.oneof(npyTarget.arbitrary, npzTarget.arbitrary, safetensorsTarget.arbitrary, smtxTarget.arbitrary, csrNpzTarget.arbitrary),
  async parse(c, ctx) {
    if (c.fifo) return inspectInput(fifoAt(ctx, 'fifo.bin'))
    if (c.bytes.length === 0 && (c as FuzzCase & {ours?: unknown}).ours) return null // materialised only by the csr-npz target
    if (!c.viaFile) {
      setStdinForTesting(c.bytes)
      return inspectInput('-')
    }
    const p = join(ctx.tmp, 'case.bin')
    writeFileSync(p, c.bytes)
    return inspectInput(p)
  },
  check(c, result) {
    if (result === null) return
    const r = result as InfoResult
    for (const t of r.tensors) {
      if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) fail(`${t.name}: shape [${t.shape}]`)
      const [rows, cols] = matrixOf(t.shape)
      if (rows !== t.rows || cols !== t.cols) fail(`${t.name}: shape [${t.shape}] but ${t.rows}x${t.cols}`)
      if (t.numel !== rows * cols || !(t.nnz >= 0 && t.nnz <= t.numel)) fail(`${t.name}: numel ${t.numel}, nnz ${t.nnz}`)
      if (!(t.sparsity >= 0 && t.sparsity <= 1)) fail(`${t.name}: sparsity ${t.sparsity}`)
      const inBins = t.histogram.reduce((a, b) => a + b.count, 0)
      if (inBins !== rows) fail(`${t.name}: histogram counts ${inBins} rows of ${rows}`)
    }
    const e = c.expect
    if (e?.type === 'dense' && r.tensors.length !== e.tensors.length) fail(`info lists ${r.tensors.length} tensors, expected ${e.tensors.length}`)
  },
}

// ---------------------------------------------------------------------------------------
// Many tensors (issue 12): headers of 10^4 .. 10^5 tensors

interface ManyCase extends FuzzCase {
  many: {format: 'safetensors' | 'npz'; n: number; small: Uint8Array; nSmall: number}
}

/**
 * A .safetensors or .npz of n = 10^4 .. 10^5 tensors (log-uniform), most of them empty:
 * valid, or its last tensor named like the first, or (safetensors) its last tensor's data
 * past the end. Every tensor must be listed and read in order, or the file refused; the
 * time per tensor must not grow from a tenth of the file to the whole (linear time), and
 * the event loop must get a turn at least every MAX_STALL_MS (a Ctrl-C acts).
 */
const manyArb: fc.Arbitrary<FuzzCase> = fc
  .record({
    format: fc.constantFrom<'safetensors' | 'npz'>('safetensors', 'npz'),
    scale: fc.integer({min: 0, max: 1000}),
    every: fc.constantFrom(1, 7, 100, 1000, 1_000_000),
    kind: fc.constantFrom('valid', 'valid', 'valid', 'duplicate-last', 'past-end'),
    file: fc.nat({max: 3}),
  })
  .map(({format, scale, every, kind, file}): ManyCase => {
    const n = Math.round(10 ** (4 + scale / 1000))
    const nSmall = Math.ceil(n / 10)
    // NOTE: reading an .npz member from a file costs four small reads (~0.4 ms each on a loaded machine): most .npz cases come through stdin.
    const viaFile = format === 'npz' ? file === 0 : file < 2
    const spec = (count: number): ManySpec => ({n: count, every, duplicateLast: kind === 'duplicate-last', pastEnd: format === 'safetensors' && kind === 'past-end'})
    const build = format === 'npz' ? buildManyNpz : buildManySafetensors
    const large = build(spec(n))
    const refused = kind === 'duplicate-last' || (format === 'safetensors' && kind === 'past-end')
    const expect: Expect = refused
      ? {type: 'reject', why: kind === 'duplicate-last' ? 'the last tensor is named like the first' : "the last tensor's data run past the end"}
      : {type: 'dense', tensors: large.tensors.map((t) => ({name: t.name, dtype: 'f32', shape: t.shape, bytes: t.bytes})), unsupported: []}
    return {what: `${format} of ${n} tensors (every ${every} holds a value; ${kind}) via ${viaFile ? 'a file' : 'stdin'}`, bytes: large.bytes, expect, viaFile, many: {format, n, small: build(spec(nSmall)).bytes, nSmall}}
  })

export const manyTarget: Target = {
  name: 'many',
  allocFactor: 8,
  // About 4-6 s a case on a loaded 2-core machine (the tenth is read 11 times, the whole
  // once or twice): a thousandth of the runs (100 at the default).
  share: 0.001,
  minRuns: 2,
  caseTimeMs: 180_000,
  arbitrary: manyArb,
  async parse(c, ctx) {
    const m = (c as ManyCase).many
    // Each from its own file, or from stdin (which load() fills before each timed run).
    const input = (bytes: Uint8Array, stem: string) => {
      if (!c.viaFile) return {load: () => setStdinForTesting(bytes), path: '-'}
      const path = join(ctx.tmp, `${stem}.${m.format}`)
      writeFileSync(path, bytes)
      return {path}
    }
    const small = input(m.small, 'small')
    const whole = input(c.bytes, 'many')
    const {problem, whole: large} = await linearity(
      `${m.format} via ${c.viaFile ? 'a file' : 'stdin'}`,
      {n: m.nSmall, load: small.load, read: () => readDenseAll(small.path, m.format)},
      {n: m.n, load: whole.load, read: () => readDenseAll(whole.path, m.format)},
    )
    if (problem !== null) fail(problem)
    if (large.error !== undefined) throw large.error
    return large.value
  },
  check(c, result) {
    checkDense(c, result)
  },
}

// ---------------------------------------------------------------------------------------
// Output races (issue 12): two writers, one output

type RaceKind = 'npy' | 'csr-npz' | 'csr-dir'

interface RaceCase extends FuzzCase {
  race: {kind: RaceKind; pre: 'absent' | 'stale' | 'existing' | 'link'; force: [boolean, boolean]; delays: [number, number]; payloads: [RawCsr[], RawCsr[]]; seeds: [number, number]}
}

/**
 * Two writers of one output at once, through the library the commands use (writeNpy,
 * writeCsrNpz, CsrDirectoryWriter), each after a delay of 0-3 ms: the output absent, absent
 * with a stale temporary of a dead run beside it, an earlier output there, or a dangling
 * link; --force on neither, one or both. checkRace says what must hold.
 */
const raceArb: fc.Arbitrary<FuzzCase> = fc
  .record({
    kind: fc.constantFrom<RaceKind>('npy', 'csr-npz', 'csr-dir'),
    pre: fc.constantFrom<RaceCase['race']['pre']>('absent', 'absent', 'absent', 'stale', 'existing', 'link'),
    force: fc.tuple(fc.nat({max: 2}), fc.nat({max: 2})).map(([a, b]): [boolean, boolean] => [a === 0, b === 0]),
    delays: fc.tuple(fc.nat({max: 3}), fc.nat({max: 3})),
    payloads: fc.tuple(fc.array(canonicalCsr, {minLength: 1, maxLength: 3}), fc.array(canonicalCsr, {minLength: 1, maxLength: 3})),
    seeds: fc.tuple(dataSeed, dataSeed),
  })
  .map((r): RaceCase => {
    // A symbolic link is never replaced by a directory (output-is-link): not a race.
    const race = {...r, pre: r.kind === 'csr-dir' && r.pre === 'link' ? 'existing' : r.pre}
    const desc = {...race, payloads: race.payloads.map((p) => p.map((x) => `${x.rows}x${x.cols}/${x.indices.length}`))}
    return {what: `race ${JSON.stringify(desc)}`, bytes: new Uint8Array(0), viaFile: true, race}
  })

function raceValues(n: number, seed: number): Float32Array {
  return Float32Array.from({length: n}, (_, i) => ((seed >>> 0) % 251) + i / 8)
}

function raceCsr(x: RawCsr, seed: number, name: string): NamedCsr {
  const csr = {rows: x.rows, cols: x.cols, rowOffsets: Int32Array.from(x.offsets), columnIndices: Int32Array.from(x.indices), values: raceValues(x.indices.length, seed), dtype: 'f32' as const, rowIndices: x.rowIndices ? Int32Array.from(x.rowIndices) : undefined}
  return {name, shape: [x.rows, x.cols], csr}
}

/** Writer `i`'s output at `out`, as the commands write it. */
async function raceWrite(r: RaceCase['race'], i: number, out: string, force: boolean): Promise<unknown> {
  const [first, ...rest] = r.payloads[i]
  if (r.kind === 'npy') return writeNpy({name: 'w', shape: [first.rows, first.cols + 1], dtype: 'f32', data: raceValues(first.rows * (first.cols + 1), r.seeds[i])}, out, {force})
  if (r.kind === 'csr-npz') return writeCsrNpz(raceCsr(first, r.seeds[i], 'w'), out, {force})
  const dir = await CsrDirectoryWriter.open(out, {force})
  try {
    for (const [j, x] of [first, ...rest].entries()) await dir.add(raceCsr(x, r.seeds[i] + j, `w${j}`))
  } catch (error) {
    await dir.abort()
    throw error
  }
  return dir.commit()
}

let raceCount = 0

export const raceTarget: Target = {
  name: 'race',
  allocFactor: 1,
  // Two writers and two reference writes a case (~15 ms): a twentieth of the runs.
  share: 0.05,
  minRuns: 20,
  arbitrary: raceArb,
  async parse(c, ctx) {
    const r = (c as RaceCase).race
    const root = join(ctx.tmp, 'race')
    rmSync(root, {recursive: true, force: true})
    const folder = join(root, String(++raceCount))
    mkdirSync(folder, {recursive: true})
    const name = r.kind === 'csr-dir' ? 'out' : `out.${r.kind === 'npy' ? 'npy' : 'npz'}`
    const out = join(folder, name)
    // What each writer writes alone (its own folder, nothing there).
    const refs: [string | null, string | null] = [null, null]
    for (const i of [0, 1]) {
      const p = join(root, `ref${i}`, name)
      mkdirSync(join(root, `ref${i}`))
      await raceWrite(r, i, p, false)
      refs[i] = snapshot(p)
    }
    if (r.pre === 'stale') {
      // A temporary of a process that no longer exists (a pid above pid_max), untouched for two minutes.
      const stale = join(folder, `.${name}.4194400-0123abcd.tmp`)
      if (r.kind === 'csr-dir') mkdirSync(stale)
      writeFileSync(r.kind === 'csr-dir' ? join(stale, 'w0.npz') : stale, 'partial')
      const old = new Date(Date.now() - 120_000)
      utimesSync(stale, old, old)
    } else if (r.pre === 'existing') {
      if (r.kind === 'csr-dir') await raceWrite({...r, seeds: [r.seeds[0] + 1000, r.seeds[1]]}, 0, out, false)
      else writeFileSync(out, 'an earlier output')
    } else if (r.pre === 'link') {
      symlinkSync('nowhere', out)
    }
    const before = snapshot(out)
    const results = await Promise.allSettled(
      [0, 1].map(async (i) => {
        await new Promise((res) => setTimeout(res, r.delays[i]))
        return raceWrite(r, i, out, r.force[i])
      }),
    )
    return {results, force: r.force, before, refs, after: snapshot(out), name, names: readdirSync(folder)} satisfies RaceOutcome
  },
  check(_c, result) {
    checkRace(result as RaceOutcome)
  },
}

export const TARGETS: Target[] = [npyTarget, npzTarget, safetensorsTarget, smtxTarget, csrNpzTarget, csrDirTarget, detectTarget, manyTarget, raceTarget, torchTarget, mapTarget, indexTarget]

/** For cases whose generator knows the file must be refused: did the parser accept it anyway? */
export function mustReject(t: Target, c: FuzzCase): boolean {
  if (c.expect?.type === 'reject') return true
  if (c.expect?.type === 'csr' && !c.expect.valid) return true
  if (t === smtxTarget) return false
  return false
}

/** For cases that must be accepted: a clean error is then a failure too (a false rejection). */
export function mustAccept(t: Target, c: FuzzCase): string | null {
  if (t === smtxTarget && smtxMustAccept(c.bytes)) return 'the independent .smtx reading accepts it'
  if (t === detectTarget && c.bytes.length === 0) return null
  const e = c.expect
  if (!e) return null
  if (e.type === 'dense') {
    // Within the documented limits only.
    if (e.tensors.every((t) => withinDenseLimits(t.shape))) return 'a valid file'
    return null
  }
  if (e.type === 'csr' && e.valid) return 'a valid CSR file'
  return null
}
