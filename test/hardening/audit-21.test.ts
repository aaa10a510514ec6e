/**
 * Regression tests for the second hostile-input audit (issue 21: pickles, Hugging Face
 * indexes and folders, sparsity maps, names). One `describe` per finding; every hostile
 * file is built here, by hand (no PyTorch), and must give a one-line error or a correct
 * result well within a second.
 */
import {expect} from 'chai'
import {cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {join} from 'node:path'

import {InputError, UsageError} from '../../src/errors.js'
import {BufferSource, openMaskedDenseWriter, openTensorSource, unpickle} from '../../src/formats/index.js'
import {MAX_PICKLE_MEMO, MAX_PICKLE_VALUES} from '../../src/formats/limits.js'
import {TorchFile} from '../../src/formats/torch.js'
import {renderTable} from '../../src/cli/table.js'
import {matchRule, readSparsityMap} from '../../src/pruning/sparsity-map.js'
import {fixture, makeTmp, MemorySink} from '../formats/helpers.js'
import {BIN, runCli} from '../helpers/cli.js'
import {timed} from '../fuzz/oracle.js'
import {writeSafetensorsTo} from '../../src/formats/safetensors.js'
import {bytes, dict, f32, int, PROTO, STOP, str, tensor, torchZip} from './pickles.js'

/** Open a .pt from memory; resolves to the error (or the file), with the time it took. */
async function openPt(zip: Uint8Array): Promise<{error?: unknown; file?: TorchFile; ms: number}> {
  const t0 = performance.now()
  try {
    const file = await TorchFile.open(new BufferSource(zip, 'm.pt'), 'm')
    return {file, ms: performance.now() - t0}
  } catch (error) {
    return {error, ms: performance.now() - t0}
  }
}

async function expectRefused(zip: Uint8Array, pattern: RegExp, maxMs = 1000): Promise<void> {
  const r = await openPt(zip)
  expect(r.error, r.error ? String(r.error) : 'no error').to.be.instanceOf(InputError)
  const msg = (r.error as Error).message
  expect(msg).to.match(pattern)
  expect(msg).to.not.include('\n')
  expect(r.ms, `took ${r.ms.toFixed(0)} ms`).to.be.below(maxMs)
}

const pickle = (...parts: Uint8Array[]) => bytes(PROTO, ...parts, STOP)

describe('audit (issue 21): hostile pickles, indexes, maps and names', function () {
  this.timeout(60_000)
  const tmp = makeTmp('sparse-audit21-')
  after(() => tmp.cleanup())

  describe('pickles are bounded by construction (items 2, 3, 4, 9)', () => {
    it('a DAG of shared tuples (2^100 paths in 200 bytes) is refused at once, not walked', async () => {
      // [] then 100 x (DUP, TUPLE2): each level holds the one below twice.
      const dag = bytes(']', ...Array.from({length: 100}, () => bytes('2', 0x86)))
      await expectRefused(torchZip(pickle(dict([['a', dag]]))), /expand to more than 1048576 objects/)
    })

    it('a DAG with a tensor leaf (2^40 tensors) is refused before a single entry is made', async () => {
      const leaf = tensor({key: '0', numel: 1, size: [1]})
      const dag = bytes(leaf, ...Array.from({length: 40}, () => bytes('2', 0x86)))
      await expectRefused(torchZip(pickle(dict([['a', dag]])), {'0': f32([1])}), /expand to more than/)
    })

    it('a list that holds itself, and lists nested 3000 deep, are one-line errors (not a stack overflow)', async () => {
      await expectRefused(torchZip(pickle(bytes(']q', 0, 'h', 0, 'a'))), /holds itself \(a cycle\)/)
      const deep = bytes(']'.repeat(3001), 'a'.repeat(3000))
      await expectRefused(torchZip(pickle(deep)), /nested more than 256 deep/)
    })

    it('a LONG4 of 300 KB and a text INT of 100,000 digits are refused before decoding (quadratic)', async () => {
      const n = 300_000
      const long4 = bytes(0x8b, [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, 0], new Uint8Array(n).fill(7))
      await expectRefused(torchZip(pickle(long4)), /an integer of 300000 bytes; at most 64/)
      await expectRefused(torchZip(pickle(bytes('I', '1'.repeat(100_000), '\n'))), /an integer of 100000 digits/)
      // Python's own long integers up to 64 bytes still read.
      const ok = unpickle(pickle(bytes(0x8a, 9, new Uint8Array(8), 1)), 'm', {allowGlobal: () => false, call: () => null})
      expect(ok).to.equal(1n << 64n)
    })

    it('nested MARKs, the memo and the values made are bounded (MARK and memo bombs)', async () => {
      await expectRefused(torchZip(pickle(bytes('('.repeat(300), 'N'))), /more than 256 nested MARKs/)
      // (a million opcodes: about 0.15 s on an idle 2-core machine; the bound allows for a loaded one)
      await expectRefused(torchZip(pickle(bytes('N', new Uint8Array(MAX_PICKLE_MEMO + 1).fill(0x94)))), /more than 1048576 memo entries/, 2000)
      // Deflated, a memo bomb is 16 KB: the ZIP member is refused on its declared size or the memo.
      await expectRefused(torchZip(pickle(bytes('N', new Uint8Array(16 << 20).fill(0x94))), {}, {level: 9}), /memo entries/, 3000)
      const pushPop = new Uint8Array(2 * (MAX_PICKLE_VALUES + 1))
      for (let i = 0; i < pushPop.length; i += 2) (pushPop[i] = 0x4e), (pushPop[i + 1] = 0x30)
      await expectRefused(torchZip(pickle(pushPop, bytes('N'))), /more than 4194304 values/, 3000)
    })

    it('a data.pkl that inflates past 64 MiB is refused on its declared size, before inflating', async () => {
      await expectRefused(torchZip(pickle(new Uint8Array(65 << 20).fill(0x4e)), {}, {level: 1}), /data\.pkl claims \d+ bytes, more than the 67108864 read/)
    })

    it('a dict key that is a container is refused (it would become a name of unbounded size)', async () => {
      const key = bytes(']', ...Array.from({length: 60}, () => bytes('2', 0x86)))
      await expectRefused(torchZip(pickle(bytes('}', key, 'N', 's'))), /dict key that is not a string or a number/)
    })

    it('the reader yields while it reads a large pickle: the event loop gets a turn every ~40 ms', async () => {
      // 30M opcodes that make no value (PROTO), then None: the longest pickle the bounds allow.
      const body = new Uint8Array(60 << 20)
      for (let i = 0; i < body.length; i += 2) (body[i] = 0x80), (body[i + 1] = 2)
      const p = pickle(body, bytes('N'))
      const hooks = {allowGlobal: () => false, call: () => null}
      const t0 = performance.now()
      expect(unpickle(p, 'm', hooks)).to.equal(null)
      const syncMs = performance.now() - t0
      const {unpickleAsync} = await import('../../src/formats/pickle.js')
      // The bound is meaningful only when one synchronous read would break it.
      const bound = 120
      expect(syncMs, 'the synchronous read is too fast on this machine for the test to mean anything').to.be.above(bound)
      // Best of three reads, as the defect-2 audit's: one garbage collection or a busy CI core can
      // stretch one gap of one read, while a reader that never yields fails every read.
      const gaps: number[] = []
      let yielded = false
      for (let attempt = 0; attempt < 3 && !yielded; attempt++) {
        const run = await timed(() => unpickleAsync(p, 'm', hooks))
        expect(run.error, String(run.error)).to.equal(undefined)
        expect(run.value).to.equal(null)
        gaps.push(run.stallMs)
        yielded = run.stallMs < bound
      }
      expect(Math.min(...gaps), `worst gap of each read ${gaps.map((g) => g.toFixed(0)).join(', ')} ms (a synchronous read takes ${syncMs.toFixed(0)} ms)`).to.be.below(bound)
    })
  })

  describe('overlapping views of one torch storage (item 7)', () => {
    it('two views sharing elements are both listed as not pruned, naming each other; disjoint views still read', async () => {
      const p = pickle(
        dict([
          ['a', tensor({key: '0', numel: 12, offset: 0, size: [2, 2]})],
          ['b', tensor({key: '0', numel: 12, offset: 2, size: [4]})],
          ['c', tensor({key: '0', numel: 12, offset: 8, size: [4]})],
        ]),
      )
      const r = await openPt(torchZip(p, {'0': f32([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])}))
      expect(r.error, String(r.error)).to.equal(undefined)
      const problems = Object.fromEntries(r.file!.entries.map((e) => [e.name, e.problem]))
      expect(problems.a).to.match(/shares storage elements with b/)
      expect(problems.b).to.match(/shares storage elements with a/)
      expect(problems.c).to.equal(null)
    })
  })

  describe('ZIP layout of a .pt (item 9)', () => {
    it('a member named twice is refused (Python reads the last, we read the first)', async () => {
      // fflate refuses duplicate names, so rename a member in the bytes.
      const zip = torchZip(pickle(dict([['w', tensor({key: '0', numel: 1, size: [1]})]])), {'0': f32([1]), '1': f32([2])})
      const text = Buffer.from(zip)
      let i = -1
      while ((i = text.indexOf('archive/data/1', i + 1)) >= 0) text.write('archive/data/0', i, 'latin1')
      await expectRefused(new Uint8Array(text), /member archive\/data\/0 appears twice/)
    })

    it('a ZIP .pt with data.pkl outside a top folder gets the torch message, not "not an .npy file"', async () => {
      const p = join(tmp.dir, 'flat.pt')
      writeFileSync(p, torchZip(pickle(dict([])), {}, {folder: ''}))
      const e = await openTensorSource(p).catch((error: unknown) => error)
      expect(e).to.be.instanceOf(InputError)
      expect((e as Error).message).to.match(/data\.pkl but not in torch\.save's layout/)
    })
  })

  describe('Hugging Face indexes (item 5)', () => {
    it('an index whose weight_map names the index itself is refused at once', async () => {
      const dir = join(tmp.dir, 'self-index')
      mkdirSync(dir)
      writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({weight_map: {w: 'model.safetensors.index.json'}}))
      const t0 = performance.now()
      const e = await openTensorSource(dir).catch((error: unknown) => error)
      expect(e).to.be.instanceOf(InputError)
      expect((e as Error).message).to.match(/shard model\.safetensors\.index\.json is itself an index/)
      expect(performance.now() - t0).to.be.below(1000)
    })

    it('an index naming a folder that holds an index is refused too', async () => {
      const dir = join(tmp.dir, 'folder-index')
      mkdirSync(join(dir, 'sub'), {recursive: true})
      writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({weight_map: {w: 'sub'}}))
      symlinkSync('../model.safetensors.index.json', join(dir, 'sub', 'model.safetensors.index.json'))
      const e = await openTensorSource(dir).catch((error: unknown) => error)
      expect(e).to.be.instanceOf(InputError)
      expect((e as Error).message).to.match(/shard sub is itself an index/)
    })
  })

  describe('sparsity maps: hostile sizes, patterns and YAML (items 2, 3, 4, 8)', () => {
    const map = (name: string, text: string) => {
      const p = join(tmp.dir, name)
      writeFileSync(p, text)
      return p
    }
    async function expectUsage(path: string, pattern: RegExp, maxMs = 1000): Promise<void> {
      const t0 = performance.now()
      const e = await readSparsityMap(path).catch((error: unknown) => error)
      const ms = performance.now() - t0
      expect(e, String(e)).to.be.instanceOf(UsageError)
      expect((e as Error).message).to.match(pattern).and.not.include('\n')
      expect(ms, `took ${ms.toFixed(0)} ms`).to.be.below(maxMs)
    }

    it('a 1.4 MB YAML map of 100k keys is refused at once (the YAML parser was quadratic: > 60 s)', async () => {
      const text = Array.from({length: 100_000}, (_, i) => `l${i}.w: 0.5`).join('\n')
      await expectUsage(map('big.yaml', text), /more than the 524288 read as YAML/)
    })

    it('a JSON map of 1,050,000 patterns is refused before compiling any (was: heap out of memory)', async () => {
      const entries = Array.from({length: 1_050_000}, (_, i) => `"*${i}": 0.5`).join(',')
      await expectUsage(map('many.json', `{${entries}}`), /more than 262144 rules/)
    })

    it('a map of 100k exact names (one per tensor) matches by lookup, in linear time', async () => {
      const entries = Array.from({length: 100_000}, (_, i) => `"model.layers.${i}.weight": 0.${(i % 9) + 1}`).join(',')
      const rules = await readSparsityMap(map('exact.json', `{"re:^never$": 0.1, ${entries}, "*": 0.2}`))
      const t0 = performance.now()
      for (let i = 0; i < 100_000; i += 7) expect(matchRule(rules, `model.layers.${i}.weight`)!.sparsity).to.equal(Number(`0.${(i % 9) + 1}`))
      expect(matchRule(rules, 'other')!.sparsity).to.equal(0.2)
      expect(performance.now() - t0).to.be.below(2000)
    })

    it('re:(a+)+$ and a plain glob against long names finish at once', async () => {
      const rules = await readSparsityMap(map('hostile.json', JSON.stringify({'re:(a+)+$': 0.5, '*mlp*proj*': 0.6})))
      const t0 = performance.now()
      expect(matchRule(rules, 'a'.repeat(30) + 'b')).to.equal(undefined)
      expect(matchRule(rules, 'mlp'.repeat(300_000))).to.equal(undefined)
      expect(performance.now() - t0).to.be.below(1000)
    })

    it('a deeply nested value is a one-line usage error (was: exit 70, stack overflow)', async () => {
      await expectUsage(map('deep.json', `{"*": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`), /must be a number in \[0, 1\), got a list/)
    })

    it('an unknown YAML tag with escape sequences: one escaped line, nothing printed by the YAML library', async () => {
      const warnings: unknown[] = []
      const emit = process.emitWarning
      const warn = console.warn
      process.emitWarning = ((w: unknown) => void warnings.push(w)) as typeof process.emitWarning
      console.warn = (...a: unknown[]) => void warnings.push(a)
      try {
        await expectUsage(map('tag.yaml', '"*": !foo\u001b]0;pwned\u0007\u001b[31m 0.5\n'), /not valid YAML/)
        await expectUsage(map('tag2.yaml', '"*": !x 0.5\n'), /Unresolved tag: !x/)
        const e = await readSparsityMap(join(tmp.dir, 'tag.yaml')).catch((error: unknown) => error)
        expect((e as Error).message).to.not.match(/\u001b/)
      } finally {
        process.emitWarning = emit
        console.warn = warn
      }
      expect(warnings).to.deep.equal([])
    })

    it('a YAML map nested 5000 deep is refused before the YAML parser recurses (it aborted the process: a fatal V8 error)', async () => {
      const p = map('deep.yaml', `"*": ${'['.repeat(5000)}${']'.repeat(5000)}\n`)
      const r = await runCli(['prune', 'fixtures/tiny-mlp.safetensors', '--sparsity-map', p])
      expect(r.code, r.stderr).to.equal(2)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
      expect(r.stderr).to.match(/collections nested more than 64 deep/)
    })

    it("a YAML key given twice is refused (the library's own check is quadratic and was turned off)", async () => {
      await expectUsage(map('dup.yaml', '"a*": 0.5\nb: 0.1\n"a*": 0.7\n'), /the key "a\*" appears twice/)
    })
  })

  describe('reports (item 2)', () => {
    it('the table of 40,000 rows is drawn in linear time, as cli-table3 drew it', async () => {
      const {default: Table} = await import('cli-table3')
      const head = ['tensor', 'shape', 'nnz']
      const rows = [['a.weight', '4x4', '12'], ['bé 中文', '1x2', '3000'], ['total', 'x', '1']]
      const t = new Table({head, style: {head: [], border: [], compact: true}, colAligns: ['left', 'left', 'right']})
      for (const r of rows) t.push(r)
      expect(renderTable(head, rows, ['left', 'left', 'right'])).to.equal(t.toString())
      const many = Array.from({length: 40_000}, (_, i) => [`model.layers.${i}.weight`, '4x4', String(i)])
      const t0 = performance.now()
      const text = renderTable(head, many, ['left', 'left', 'right'])
      expect(text.split('\n')).to.have.length(40_004)
      expect(performance.now() - t0).to.be.below(1000)
    })
  })

  describe('the CLI on these inputs (items 2, 6, 7)', () => {
    async function safetensors(path: string, tensors: {name: string; shape: number[]; values: number[]}[]): Promise<void> {
      const sink = new MemorySink()
      await writeSafetensorsTo(sink, tensors.map((t) => ({name: t.name, shape: t.shape, dtype: 'f32' as const, data: Float32Array.from(t.values)})))
      writeFileSync(path, sink.bytes())
    }

    it('a tensor named __proto__ keeps its place in the dense output header (was: dropped, its bytes a gap)', async () => {
      const input = join(tmp.dir, 'proto.safetensors')
      await safetensors(input, [
        {name: '__proto__', shape: [2, 2], values: [1, -2, 3, -4]},
        {name: 'b', shape: [2, 2], values: [5, 6, 7, 8]},
      ])
      const out = join(tmp.dir, 'proto-out.safetensors')
      const r = await runCli(['prune', input, '-s', '0.5', '--format', 'dense', '-o', out])
      expect(r.code, r.stderr).to.equal(0)
      const src = await openTensorSource(out)
      try {
        expect(src.tensors.map((t) => t.name)).to.deep.equal(['__proto__', 'b'])
        expect([...(await src.read('__proto__')).data]).to.deep.equal([0, 0, 3, -4])
        expect([...(await src.read('b')).data]).to.deep.equal([0, 0, 7, 8])
      } finally {
        await src.close()
      }
    })

    it('a Hugging Face cache snapshot (every file a link into blobs/) is written whole: index, config and tokenizer too', async () => {
      const cache = join(tmp.dir, 'hub')
      const blobs = join(cache, 'blobs')
      const snap = join(cache, 'snapshots', 'abc123')
      mkdirSync(blobs, {recursive: true})
      mkdirSync(snap, {recursive: true})
      const files = readdirSync(fixture('hf-tiny'))
      for (const [i, f] of [...files, 'tokenizer.json'].entries()) {
        if (f === 'tokenizer.json') writeFileSync(join(blobs, `b${i}`), '{"model": {}}')
        else cpSync(join(fixture('hf-tiny'), f), join(blobs, `b${i}`))
        symlinkSync(`../../blobs/b${i}`, join(snap, f))
      }
      const out = join(tmp.dir, 'snap-out')
      const r = await runCli(['prune', snap, '-s', '0.5', '--format', 'dense', '-o', out])
      expect(r.code, r.stderr).to.equal(0)
      expect(readdirSync(out).sort()).to.deep.equal([...files, 'tokenizer.json'].sort())
      for (const f of readdirSync(out)) expect(lstatSync(join(out, f)).isFile(), f).to.equal(true)
      expect(readFileSync(join(out, 'model.safetensors.index.json'), 'utf8')).to.equal(readFileSync(fixture('hf-tiny/model.safetensors.index.json'), 'utf8'))
    })

    it('overlapping views of one storage: neither is pruned, the storage is written unchanged', async () => {
      const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
      const p = pickle(
        dict([
          ['a', tensor({key: '0', numel: 12, offset: 0, size: [2, 3]})],
          ['b', tensor({key: '0', numel: 12, offset: 3, size: [3, 3]})],
          ['c', tensor({key: '1', numel: 4, size: [2, 2]})],
        ]),
      )
      const input = join(tmp.dir, 'overlap.pt')
      writeFileSync(input, torchZip(p, {'0': f32(values), '1': f32([1, -2, 3, -4])}))
      const out = join(tmp.dir, 'overlap-out.pt')
      const r = await runCli(['prune', input, '-s', '0.5', '--format', 'dense', '-o', out, '--json'])
      expect(r.code, r.stderr).to.equal(0)
      const j = JSON.parse(r.stdout)
      expect(j.tensors.map((t: {name: string}) => t.name)).to.deep.equal(['c'])
      expect(j.skipped.map((t: {name: string}) => t.name).sort()).to.deep.equal(['a', 'b'])
      const tf = await TorchFile.open(new BufferSource(readFileSync(out), 'out.pt'))
      expect([...new Float32Array((await tf.storageBytes('0')).slice().buffer)]).to.deep.equal(values)
      expect([...(await tf.read('c')).data]).to.deep.equal([0, 0, 3, -4])
    })

    it('--format dense of a .pt whose storage member appears twice: exit 1, one line (was: exit 70, "Cannot read properties of undefined")', async () => {
      const p = pickle(dict([['a', tensor({key: '0', numel: 4, size: [2, 2]})]]))
      const b = Buffer.from(torchZip(p, {'0': f32([1, 2, 3, 4]), '1': new Uint8Array(16)}))
      for (let i = b.indexOf('archive/data/1'); i >= 0; i = b.indexOf('archive/data/1', i + 1)) b.write('archive/data/0', i, 'latin1')
      const input = join(tmp.dir, 'dup-storage.pt')
      writeFileSync(input, b)
      const r = await runCli(['prune', input, '-s', '0.5', '--format', 'dense', '-o', join(tmp.dir, 'dup-out.pt')])
      expect(r.code, r.stderr).to.equal(1)
      expect(r.stderr.trim().split('\n')).to.have.length(1)
      expect(r.stderr).to.match(/member archive\/data\/0 appears twice/)
    })

    it('prune --json on 10,000 tensors builds no table and takes seconds, not half a minute', async () => {
      const input = join(tmp.dir, 'ten-k.safetensors')
      await safetensors(input, Array.from({length: 10_000}, (_, i) => ({name: `model.layers.${i}.weight`, shape: [2, 2], values: [1, 2, 3, i]})))
      const t0 = performance.now()
      const r = await runCli(['prune', input, '-s', '0.5', '--json'])
      const ms = performance.now() - t0
      expect(r.code, r.stderr).to.equal(0)
      expect(JSON.parse(r.stdout).tensors).to.have.length(10_000)
      // The table build this guards against took about half a minute; 15 s leaves room for a
      // loaded 2-core machine (10.3 s seen there with a compiler running beside the tests).
      expect(ms, `took ${ms.toFixed(0)} ms`).to.be.below(15_000)
    })
  })

  describe('one --force rule for every folder output (item 1, brief item 5)', () => {
    it('a model folder that appears while the dense output is written is not replaced without --force (it was, by rename)', async () => {
      const dest = join(tmp.dir, 'appears')
      const src = await openTensorSource(fixture('hf-tiny'))
      try {
        const w = await openMaskedDenseWriter(src, fixture('hf-tiny'), dest, new Set(), {force: false})
        mkdirSync(dest)
        const e = await w.commit().catch((error: unknown) => error)
        expect(e).to.be.instanceOf(UsageError)
        expect((e as UsageError).code).to.equal('output-exists')
        expect(readdirSync(dest)).to.deep.equal([])
        expect(readdirSync(tmp.dir).filter((f) => f.includes('appears') && f !== 'appears')).to.deep.equal([])
      } finally {
        await src.close()
      }
    })

    it('with --force, a file added to the folder after the first check survives: the folder is put back, the run refused', async () => {
      const dest = join(tmp.dir, 'added')
      const first = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--format', 'dense', '-o', dest])
      expect(first.code, first.stderr).to.equal(0)
      const src = await openTensorSource(fixture('hf-tiny'))
      try {
        const w = await openMaskedDenseWriter(src, fixture('hf-tiny'), dest, new Set(), {force: true})
        writeFileSync(join(dest, 'notes.txt'), 'mine')
        const e = await w.commit().catch((error: unknown) => error)
        expect(e).to.be.instanceOf(UsageError)
        expect((e as Error).message).to.match(/"notes\.txt"/)
        expect(readFileSync(join(dest, 'notes.txt'), 'utf8')).to.equal('mine')
        expect(readdirSync(dest)).to.include('model.safetensors.index.json')
      } finally {
        await src.close()
      }
    })

    it('a link to a model folder is not followed: refused like a link for a CSR directory', async () => {
      const real = join(tmp.dir, 'real-model')
      const r0 = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--format', 'dense', '-o', real])
      expect(r0.code, r0.stderr).to.equal(0)
      const link = join(tmp.dir, 'link-model')
      symlinkSync(real, link)
      const r = await runCli(['prune', 'fixtures/hf-tiny', '-s', '0.5', '--format', 'dense', '-o', link, '--force'])
      expect(r.code, r.stderr).to.equal(2)
      expect(r.stderr).to.match(/it is a symbolic link/)
      expect(lstatSync(link).isSymbolicLink()).to.equal(true)
    })
  })

  describe('bounded names and prompt interrupts (items 2, 3 of "what to build")', () => {
    it('a safetensors name of 1 MB and a torch path past 4096 characters are refused at once', async () => {
      const name = 'mlp'.repeat(350_000)
      const header = new TextEncoder().encode(JSON.stringify({[name]: {dtype: 'F32', shape: [1], data_offsets: [0, 4]}}))
      const len = new Uint8Array(8)
      new DataView(len.buffer).setUint32(0, header.length, true)
      const p = join(tmp.dir, 'long-name.safetensors')
      writeFileSync(p, bytes(len, header, f32([1])))
      const t0 = performance.now()
      const e = await openTensorSource(p).catch((error: unknown) => error)
      expect(e).to.be.instanceOf(InputError)
      expect((e as Error).message).to.match(/a tensor name of 1050000 characters .*names have at most 4096/)
      expect(performance.now() - t0).to.be.below(1000)
      const nested = bytes(...Array.from({length: 100}, () => bytes('}', str('k'.repeat(50)))), dict([['w', tensor({key: '0', numel: 1, size: [1]})]]), 's'.repeat(100))
      await expectRefused(torchZip(pickle(nested), {'0': f32([1])}), /a tensor path of more than 4096 characters/)
      // 2^19 tensors under a 4,000-character key: each name within the bound, 2 G characters together.
      const wide = dict([['k'.repeat(4000), bytes(tensor({key: '0', numel: 1, size: [1]}), ...Array.from({length: 18}, () => bytes('2', 0x86)))]])
      await expectRefused(torchZip(pickle(wide), {'0': f32([1])}), /tensor names add up to more than 67108864 characters/, 3000)
    })

    it("end to end: SIGINT while large pickles are read ends the run within a second (exit 130, one line; the reader's own yielding is tested above)", async () => {
      const body = new Uint8Array(60 << 20)
      for (let i = 0; i < body.length; i += 2) (body[i] = 0x80), (body[i + 1] = 2)
      const p = join(tmp.dir, 'slow.pt')
      writeFileSync(p, torchZip(pickle(body, dict([])), {}))
      const child = spawn(process.execPath, [BIN, 'info', ...Array.from({length: 12}, () => p)], {stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      const done = new Promise<{code: number | null; at: number}>((res) => child.on('close', (code) => res({code, at: Date.now()})))
      await new Promise((r) => setTimeout(r, 2000))
      const sent = Date.now()
      child.kill('SIGINT')
      const {code, at} = await done
      expect(code, stderr).to.equal(130)
      expect(at - sent, 'exit latency').to.be.lessThan(1000)
      expect(stderr.trim().split('\n')).to.have.length(1)
      expect(stderr).to.match(/interrupted by SIGINT/)
    })
  })
})

