/**
 * Fuzz targets for the input surfaces of issue 21 (the second hostile-input audit):
 *   - 'torch': torch.save ZIP files from hand-made pickles: valid state_dicts (nested,
 *     tied, overlapping and int64 views) and mutations of their pickles (re-zipped with a
 *     correct CRC, so the unpickler sees the damage), plus DAGs of shared containers (with
 *     and without a tensor leaf), cycles, deep nesting, memo and MARK bombs, long integers,
 *     container keys, duplicate ZIP members and the flat layout;
 *   - 'map': sparsity maps (JSON and YAML) with hostile patterns (backtracking regexes,
 *     long globs), sizes (many exact names, too many patterns, YAML over its bound), deep
 *     values, unknown tags with escape sequences and duplicate keys; accepted maps must
 *     match every name as RegExp would, and a 4096-character name at once;
 *   - 'index': Hugging Face folders whose index names itself, a folder holding an index or
 *     a missing shard, and cache snapshots whose files are links into blobs/.
 * Each case ends in a clean error or a result checked against what the generator built.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import fc from 'fast-check'

import {openTensorSource, setStdinForTesting} from '../../src/formats/index.js'
import {MAX_PICKLE_MEMO} from '../../src/formats/limits.js'
import {matchRule, readSparsityMap} from '../../src/pruning/sparsity-map.js'
import {bytes, dict, f32, PROTO, STOP, str, tensor, torchZip} from '../hardening/pickles.js'
import {fail, sameBytes, viewBytes} from './oracle.js'
import type {Expect, FuzzCase, Target, TargetContext} from './targets.js'

const viaFileArb = fc.nat({max: 7}).map((n) => n === 0)

function fifoAt(ctx: TargetContext, name: string): string {
  const stock = join(ctx.tmp, '.fifo')
  if (!existsSync(stock)) execFileSync('mkfifo', [stock])
  const p = join(ctx.tmp, name)
  if (!existsSync(p)) linkSync(stock, p)
  return p
}

/** Values of a seeded float32 tensor. */
function values(n: number, seed: number): number[] {
  return Array.from({length: n}, (_, i) => ((Math.imul(seed ^ (i * 2654435761), 2246822519) >>> 8) % 2001) - 1000)
}

// ---------------------------------------------------------------------------------------
// torch

interface TorchSpec {
  tensors: {shape: number[]; seed: number; int64: boolean}[]
  nest: 'flat' | 'model' | 'list'
  tie: boolean
  overlap: boolean
}

const torchSpecArb: fc.Arbitrary<TorchSpec> = fc.record({
  tensors: fc.array(fc.record({shape: fc.array(fc.integer({min: 0, max: 4}), {minLength: 1, maxLength: 2}), seed: fc.integer(), int64: fc.nat({max: 5}).map((n) => n === 0)}), {maxLength: 4}),
  nest: fc.constantFrom('flat', 'model', 'list'),
  tie: fc.boolean(),
  overlap: fc.boolean(),
})

/** A torch.save file from a spec, and what a reader must list. */
function buildTorch(s: TorchSpec): {pickle: Uint8Array; storages: Record<string, Uint8Array>; expect: Expect} {
  const entries: [string, Uint8Array][] = []
  const storages: Record<string, Uint8Array> = {}
  const expected: Extract<Expect, {type: 'dense'}> = {type: 'dense', tensors: [], unsupported: []}
  const prefix = s.nest === 'model' ? 'model.' : ''
  const nameOf = (i: number, n: string) => (s.nest === 'list' ? `${i}` : `${prefix}${n}`)
  for (const [i, t] of s.tensors.entries()) {
    const numel = t.shape.reduce((a, b) => a * b, 1)
    const key = String(i)
    const name = nameOf(i, `t${i}.weight`)
    if (t.int64) {
      storages[key] = new Uint8Array(8 * numel)
      entries.push([`t${i}.weight`, tensor({key, type: 'LongStorage', numel, size: t.shape})])
      expected.unsupported.push(name)
      continue
    }
    const v = values(numel, t.seed)
    storages[key] = f32(v)
    entries.push([`t${i}.weight`, tensor({key, numel, size: t.shape})])
    expected.tensors.push({name, dtype: 'f32', shape: t.shape, bytes: f32(v)})
  }
  if (s.tie && s.tensors.length > 0 && !s.tensors[0].int64) {
    const t = s.tensors[0]
    entries.push(['tied', tensor({key: '0', numel: t.shape.reduce((a, b) => a * b, 1), size: t.shape})])
    expected.unsupported.push(nameOf(entries.length - 1, 'tied'))
  }
  if (s.overlap) {
    storages.ov = f32(values(6, 7))
    entries.push(['ov.a', tensor({key: 'ov', numel: 6, offset: 0, size: [2, 2]})], ['ov.b', tensor({key: 'ov', numel: 6, offset: 2, size: [4]})])
    expected.unsupported.push(nameOf(entries.length - 2, 'ov.a'), nameOf(entries.length - 1, 'ov.b'))
  }
  let body: Uint8Array
  if (s.nest === 'list') body = bytes(']', '(', ...entries.map(([, v]) => v), 'e')
  else if (s.nest === 'model') body = dict([['model', dict(entries)]])
  else body = dict(entries)
  return {pickle: bytes(PROTO, body, STOP), storages, expect: expected}
}

const REJECT: Expect = {type: 'reject', why: 'a hostile pickle'}
const u32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]

/** Pickles every bound must refuse. */
const hostilePickle: fc.Arbitrary<{what: string; pickle: Uint8Array}> = fc.oneof(
  fc.record({depth: fc.integer({min: 20, max: 120}), leaf: fc.boolean()}).map(({depth, leaf}) => ({
    what: `a DAG of ${depth} levels of shared tuples${leaf ? ' over a tensor' : ''}`,
    pickle: bytes(PROTO, dict([['a', bytes(leaf ? tensor({key: '0', numel: 1, size: [1]}) : bytes(']'), ...Array.from({length: depth}, () => bytes('2', 0x86)))]]), STOP),
  })),
  fc.constantFrom('list', 'dict').map((k) => ({what: `a ${k} that holds itself`, pickle: k === 'list' ? bytes(PROTO, ']q', 0, 'h', 0, 'a', STOP) : bytes(PROTO, '}q', 0, str('x'), 'h', 0, 's', STOP)})),
  fc.integer({min: 257, max: 3000}).map((d) => ({what: `lists nested ${d} deep`, pickle: bytes(PROTO, ']'.repeat(d + 1), 'a'.repeat(d), STOP)})),
  fc.integer({min: 257, max: 5000}).map((n) => ({what: `${n} nested MARKs`, pickle: bytes(PROTO, '('.repeat(n), 'N', STOP)})),
  // (rare: a million opcodes; the unit test in test/hardening covers it every run)
  fc.nat({max: 9}).map((n) => (n === 0 ? {what: 'a memo bomb', pickle: bytes(PROTO, 'N', new Uint8Array(MAX_PICKLE_MEMO + 1).fill(0x94), STOP)} : {what: 'a memo of a few entries past a MARK bomb', pickle: bytes(PROTO, 'N', new Uint8Array(10).fill(0x94), '('.repeat(300), STOP)})),
  fc.integer({min: 65, max: 200_000}).map((n) => ({what: `a LONG4 of ${n} bytes`, pickle: bytes(PROTO, 0x8b, u32(n), new Uint8Array(n).fill(0x35), STOP)})),
  fc.integer({min: 152, max: 200_000}).map((n) => ({what: `a text INT of ${n} digits`, pickle: bytes(PROTO, 'I', '7'.repeat(n), '\n', STOP)})),
  fc.constant({what: 'a container as a dict key', pickle: bytes(PROTO, '}', ']', 'N', 's', STOP)}),
)

/** Random damage to a pickle (before zipping, so that the CRC holds and the unpickler sees it). */
const damageArb = fc.array(fc.record({at: fc.nat(), op: fc.constantFrom('flip', 'insert', 'delete', 'cut'), byte: fc.nat({max: 255})}), {minLength: 1, maxLength: 3})
function damage(p: Uint8Array, ds: {at: number; op: string; byte: number}[]): Uint8Array {
  let b = p
  for (const d of ds) {
    const at = d.at % Math.max(1, b.length)
    if (d.op === 'flip') (b = b.slice())[at] = d.byte
    else if (d.op === 'insert') b = bytes(b.subarray(0, at), d.byte, b.subarray(at))
    else if (d.op === 'delete') b = bytes(b.subarray(0, at), b.subarray(at + 1))
    else b = b.subarray(0, at)
  }
  return b
}

/** A ZIP with one member named twice (fflate refuses duplicates: one renamed in the bytes). */
function duplicateMember(pickle: Uint8Array, storages: Record<string, Uint8Array>): Uint8Array {
  const b = Buffer.from(torchZip(pickle, {...storages, zz: new Uint8Array(3)}))
  for (let i = b.indexOf('archive/data/zz'); i >= 0; i = b.indexOf('archive/data/zz', i + 1)) b.write('archive/version', i, 'latin1')
  return new Uint8Array(b)
}

const torchCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  {weight: 4, arbitrary: fc.record({spec: torchSpecArb, viaFile: viaFileArb}).map(({spec, viaFile}) => {
    const t = buildTorch(spec)
    return {what: `valid ${JSON.stringify(spec)}`, bytes: torchZip(t.pickle, t.storages), expect: t.expect, viaFile}
  })},
  {weight: 4, arbitrary: fc.record({spec: torchSpecArb, d: damageArb, viaFile: viaFileArb}).map(({spec, d, viaFile}) => {
    const t = buildTorch(spec)
    return {what: `damaged ${JSON.stringify(spec)} ${JSON.stringify(d)}`, bytes: torchZip(damage(t.pickle, d), t.storages), viaFile}
  })},
  {weight: 3, arbitrary: fc.record({h: hostilePickle, level: fc.constantFrom<0 | 9>(0, 9), viaFile: viaFileArb}).map(({h, level, viaFile}) => ({what: h.what, bytes: torchZip(h.pickle, {'0': f32([1])}, {level}), expect: REJECT, viaFile}))},
  {weight: 1, arbitrary: fc.record({spec: torchSpecArb, flat: fc.boolean(), viaFile: viaFileArb}).map(({spec, flat, viaFile}) => {
    const t = buildTorch(spec)
    return flat
      ? {what: 'the flat layout (data.pkl at the top)', bytes: torchZip(t.pickle, t.storages, {folder: ''}), expect: REJECT, viaFile}
      : {what: 'a member named twice', bytes: duplicateMember(t.pickle, t.storages), expect: REJECT, viaFile}
  })},
  {weight: 1, arbitrary: fc.constant(null).map(() => ({what: 'a FIFO at the input path', bytes: new Uint8Array(0), viaFile: true, fifo: true as const, expect: {type: 'reject', why: 'a FIFO', code: 'not-a-file'} as Expect}))},
)

async function readAll(path: string): Promise<{tensors: {name: string; dtype: string; shape: number[]; bytes: Uint8Array}[]; unsupported: string[]}> {
  const src = await openTensorSource(path)
  try {
    const tensors = []
    for (const t of src.tensors) {
      const d = await src.read(t.name)
      tensors.push({name: d.name, dtype: d.dtype, shape: d.shape.slice(), bytes: viewBytes(d.data).slice()})
    }
    return {tensors, unsupported: src.unsupported.map((u) => u.name)}
  } finally {
    await src.close()
  }
}

function checkAgainst(e: Expect | undefined, r: Awaited<ReturnType<typeof readAll>>): void {
  if (!e) return
  if (e.type === 'reject') fail(`accepted a file that must be refused (${e.why})`)
  if (e.type !== 'dense') return
  const got = r.tensors.map((t) => `${t.name}:${t.dtype}:[${t.shape}]`).join(' ')
  const want = e.tensors.map((t) => `${t.name}:${t.dtype}:[${t.shape}]`).join(' ')
  if (got !== want) fail(`read ${got}, expected ${want}`)
  for (const [i, t] of e.tensors.entries()) if (!sameBytes(r.tensors[i].bytes, t.bytes)) fail(`${t.name}: data differ`)
  if (r.unsupported.slice().sort().join('|') !== e.unsupported.slice().sort().join('|')) fail(`unsupported ${r.unsupported} expected ${e.unsupported}`)
}

export const torchTarget: Target = {
  name: 'torch',
  allocFactor: 1100,
  arbitrary: torchCase,
  // (each case builds a ZIP, some a megabyte of opcodes: a fifth of a parser's runs, and
  // a longer bound per case, as 'many' has)
  share: 0.2,
  minRuns: 100,
  caseTimeMs: 5000,
  async parse(c, ctx) {
    if (c.fifo) return readAll(fifoAt(ctx, 'fifo.pt'))
    if (!c.viaFile) {
      setStdinForTesting(c.bytes)
      return readAll('-')
    }
    const p = join(ctx.tmp, 'case.pt')
    writeFileSync(p, c.bytes)
    return readAll(p)
  },
  check(c, result) {
    checkAgainst(c.expect, result as Awaited<ReturnType<typeof readAll>>)
  },
}

// ---------------------------------------------------------------------------------------
// sparsity maps

interface MapCase extends FuzzCase {
  map: {ext: '.json' | '.yaml'; rules: [string, number][] | null; names: string[]}
}

const atom = fc.constantFrom('a', 'b', '.', '\\d', '[ab]', '[^a]', '\\w', 'x', '(a+)', '(a|a)', '(a*)')
const quant = fc.constantFrom('', '', '*', '+', '?', '{1,2}', '*?')
const regexArb = fc.array(fc.tuple(atom, quant), {maxLength: 5}).map((xs) => xs.map(([a, q]) => a + q).join('') + (xs.length % 2 ? '$' : ''))
const globArb = fc.stringMatching(/^[ab*?.]{0,8}$/)
const exactArb = fc.stringMatching(/^[ab.]{1,8}$/)
const patternArb = fc.oneof(globArb, exactArb, regexArb.map((r) => `re:${r}`), fc.constantFrom('re:(a+)+$', 're:(a|aa)*c', 're:^(a*)*$', '*a*a*a*a*b', 're:(a)\\1', 're:a(?=b)', 're:(', 're:a{2000}'))
const shortName = fc.stringMatching(/^[ab.x1]{0,14}$/)
const LONG_NAMES = ['a'.repeat(4096), 'mlp'.repeat(1365), 'ab.'.repeat(1365)]

/** A mapping's text (keys are unique: in JSON a repeated key is the last one's, in YAML refused). */
function mapText(ext: string, rules: [string, unknown][]): string {
  if (ext === '.json') return `{${rules.map(([p, s]) => `${JSON.stringify(p)}: ${JSON.stringify(s)}`).join(', ')}}`
  return rules.map(([p, s]) => `${JSON.stringify(p)}: ${JSON.stringify(s)}`).join('\n') + '\n'
}

const mapCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  {weight: 6, arbitrary: fc.record({rules: fc.uniqueArray(fc.tuple(patternArb, fc.constantFrom(0, 0.5, 0.9, 1, -0.1)), {minLength: 1, maxLength: 6, selector: ([p]) => p}), ext: fc.constantFrom<'.json' | '.yaml'>('.json', '.yaml'), names: fc.array(shortName, {maxLength: 8})}).map(({rules, ext, names}) => ({
    what: `${ext} map ${JSON.stringify(rules)}`,
    bytes: new TextEncoder().encode(mapText(ext, rules)),
    viaFile: true,
    map: {ext, rules, names},
  }) as MapCase)},
  {weight: 1, arbitrary: fc.record({ext: fc.constantFrom<'.json' | '.yaml'>('.json', '.yaml'), over: fc.nat({max: 5}).map((n) => n === 0), at: fc.nat({max: 1000})}).map(({ext, over, at}) => {
    // Within the bounds (and a case's time), or past them: refused from the size or count alone.
    const n = ext === '.json' ? (over ? 262_145 + 40 * at : 1000 + 4 * at) : over ? 16_000 + 80 * at : 500 + 2 * at
    const rules = Array.from({length: n}, (_, i): [string, number] => [`model.layers.${i}.weight`, 0.5])
    // YAML is bounded at 512 KiB, JSON at 2^18 rules: refused past them.
    const text = mapText(ext, rules)
    const refused = ext === '.yaml' ? text.length > 512 << 10 : n > 1 << 18
    return {what: `${ext} map of ${n} exact names`, bytes: new TextEncoder().encode(text), viaFile: true, expect: refused ? ({type: 'reject', why: 'too large'} as Expect) : undefined, map: {ext, rules: refused ? null : rules, names: ['model.layers.7.weight', 'x']}} as MapCase
  })},
  {weight: 1, arbitrary: fc.integer({min: 4097, max: 6000}).map((n) => ({what: `${n} glob rules`, bytes: new TextEncoder().encode(mapText('.json', Array.from({length: n}, (_, i) => [`*${i}*`, 0.5]))), viaFile: true, expect: {type: 'reject', why: 'too many patterns'} as Expect, map: {ext: '.json', rules: null, names: []}}) as MapCase)},
  {weight: 1, arbitrary: fc.record({d: fc.integer({min: 1, max: 50_000}), ext: fc.constantFrom<'.json' | '.yaml'>('.json', '.yaml')}).map(({d, ext}) => ({
    what: `a value nested ${d} deep`,
    bytes: new TextEncoder().encode(ext === '.json' ? `{"*": ${'['.repeat(d)}${']'.repeat(d)}}` : `"*": ${'['.repeat(Math.min(d, 20_000))}${']'.repeat(Math.min(d, 20_000))}\n`),
    viaFile: true,
    expect: {type: 'reject', why: 'not a number'} as Expect,
    map: {ext, rules: null, names: []},
  }) as MapCase)},
  {weight: 1, arbitrary: fc.constantFrom('"*": !foo\u001b]0;x\u0007 0.5\n', '"*": !!binary 0.5\n', '"a": 0.5\n"a": 0.6\n', '*: 0.5\n', '"a": &x 0.5\n"b": *x\n"c": *x\n').map((text) => ({
    what: `YAML ${JSON.stringify(text)}`,
    bytes: new TextEncoder().encode(text),
    viaFile: true,
    expect: text.includes('&x') ? undefined : ({type: 'reject', why: 'bad YAML'} as Expect),
    map: {ext: '.yaml', rules: text.includes('&x') ? [['a', 0.5], ['b', 0.5], ['c', 0.5]] : null, names: ['a', 'b', 'c', 'd']},
  }) as MapCase)},
  {weight: 1, arbitrary: fc.constant(null).map(() => ({what: 'a FIFO as the map', bytes: new Uint8Array(0), viaFile: true, fifo: true as const, expect: {type: 'reject', why: 'a FIFO', code: 'not-a-file'} as Expect, map: {ext: '.json', rules: null, names: []}}) as MapCase)},
)

/** The reference: JavaScript's RegExp on names short enough for it (the old glob included). */
function referenceTest(pattern: string, name: string): boolean {
  if (pattern.startsWith('re:')) return new RegExp(pattern.slice(3)).test(name)
  return new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(name)
}

export const mapTarget: Target = {
  name: 'map',
  allocFactor: 64,
  arbitrary: mapCase,
  // (a tenth of its cases write maps of thousands of rules)
  share: 0.05,
  minRuns: 100,
  caseTimeMs: 5000,
  async parse(c, ctx) {
    const m = (c as MapCase).map
    const p = c.fifo ? fifoAt(ctx, `fifo${m.ext}`) : join(ctx.tmp, `map${m.ext}`)
    if (!c.fifo) writeFileSync(p, c.bytes)
    const rules = await readSparsityMap(p)
    const t0 = performance.now()
    for (const n of LONG_NAMES) matchRule(rules, n)
    const longMs = performance.now() - t0
    return {rules: rules.map((r) => [r.pattern, r.sparsity]), matched: m.names.map((n) => matchRule(rules, n)?.pattern ?? null), longMs}
  },
  check(c, result) {
    const m = (c as MapCase).map
    const r = result as {rules: [string, number][]; matched: (string | null)[]; longMs: number}
    if (c.expect?.type === 'reject') fail(`accepted a map that must be refused (${c.expect.why})`)
    if (r.longMs > 500) fail(`matching 4096-character names took ${r.longMs.toFixed(0)} ms`)
    if (!m.rules) return
    if (JSON.stringify(r.rules) !== JSON.stringify(m.rules)) fail(`rules ${JSON.stringify(r.rules)} expected ${JSON.stringify(m.rules)}`)
    for (const [i, n] of m.names.entries()) {
      const want = m.rules.find(([p]) => referenceTest(p, n))?.[0] ?? null
      if (r.matched[i] !== want) fail(`${JSON.stringify(n)} matched ${JSON.stringify(r.matched[i])}, RegExp says ${JSON.stringify(want)}`)
    }
  },
}

// ---------------------------------------------------------------------------------------
// Hugging Face folders

interface IndexCase extends FuzzCase {
  index: {kind: 'valid' | 'self' | 'folder' | 'missing' | 'cache'; shards: number; seed: number}
}

const indexCase: fc.Arbitrary<FuzzCase> = fc.record({kind: fc.constantFrom('valid', 'self', 'folder', 'missing', 'cache'), shards: fc.integer({min: 1, max: 3}), seed: fc.integer()}).map((index) => ({
  what: `an index: ${JSON.stringify(index)}`,
  bytes: new Uint8Array(0),
  viaFile: true,
  expect: index.kind === 'valid' || index.kind === 'cache' ? undefined : ({type: 'reject', why: `index ${index.kind}`} as Expect),
  index,
}) as IndexCase)

let indexCount = 0

export const indexTarget: Target = {
  name: 'index',
  allocFactor: 64,
  arbitrary: indexCase,
  share: 0.05,
  minRuns: 20,
  async parse(c, ctx) {
    const {kind, shards, seed} = (c as IndexCase).index
    const dir = join(ctx.tmp, `hf${indexCount++}`)
    rmSync(dir, {recursive: true, force: true})
    const blobs = join(dir, 'blobs')
    const snap = join(dir, 'snap')
    mkdirSync(blobs, {recursive: true})
    mkdirSync(snap)
    const put = (name: string, data: Uint8Array | string) => {
      if (kind === 'cache') {
        writeFileSync(join(blobs, name), data)
        symlinkSync(join('..', 'blobs', name), join(snap, name))
      } else writeFileSync(join(snap, name), data)
    }
    const weightMap: Record<string, string> = {}
    for (let s = 0; s < shards; s++) {
      const file = `model-0000${s + 1}-of-0000${shards}.safetensors`
      const name = `layers.${s}.weight`
      const data = f32(values(4, seed + s))
      const header = new TextEncoder().encode(JSON.stringify({[name]: {dtype: 'F32', shape: [2, 2], data_offsets: [0, 16]}}))
      const len = new Uint8Array(8)
      new DataView(len.buffer).setUint32(0, header.length, true)
      if (!(kind === 'missing' && s === shards - 1)) put(file, bytes(len, header, data))
      weightMap[name] = file
    }
    if (kind === 'self') weightMap.extra = 'model.safetensors.index.json'
    if (kind === 'folder') {
      mkdirSync(join(snap, 'sub'))
      symlinkSync('../model.safetensors.index.json', join(snap, 'sub', 'model.safetensors.index.json'))
      weightMap.extra = 'sub'
    }
    put('model.safetensors.index.json', JSON.stringify({metadata: {}, weight_map: weightMap}))
    put('config.json', '{}')
    return readAll(snap)
  },
  check(c, result) {
    const {kind, shards, seed} = (c as IndexCase).index
    if (kind !== 'valid' && kind !== 'cache') fail(`accepted an index that must be refused (${kind})`)
    const r = result as Awaited<ReturnType<typeof readAll>>
    checkAgainst({type: 'dense', unsupported: [], tensors: Array.from({length: shards}, (_, s) => ({name: `layers.${s}.weight`, dtype: 'f32', shape: [2, 2], bytes: f32(values(4, seed + s))}))}, r)
  },
}
