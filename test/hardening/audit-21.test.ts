/**
 * Regression tests for the second hostile-input audit (issue 21: pickles, Hugging Face
 * indexes and folders, sparsity maps, names). One `describe` per finding; every hostile
 * file is built here, by hand (no PyTorch), and must give a one-line error or a correct
 * result well within a second.
 */
import {expect} from 'chai'
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {InputError} from '../../src/errors.js'
import {BufferSource, openTensorSource, unpickle} from '../../src/formats/index.js'
import {MAX_PICKLE_MEMO, MAX_PICKLE_VALUES} from '../../src/formats/limits.js'
import {TorchFile} from '../../src/formats/torch.js'
import {makeTmp} from '../formats/helpers.js'
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
      await expectRefused(torchZip(pickle(bytes('N', new Uint8Array(MAX_PICKLE_MEMO + 1).fill(0x94)))), /more than 1048576 memo entries/)
      // Deflated, a memo bomb is 16 KB: the ZIP member is refused on its declared size or the memo.
      await expectRefused(torchZip(pickle(bytes('N', new Uint8Array(16 << 20).fill(0x94))), {}, {level: 9}), /memo entries/, 2000)
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
      let last = performance.now()
      let worst = 0
      let ticking = true
      const tick = () => {
        const now = performance.now()
        worst = Math.max(worst, now - last)
        last = now
        if (ticking) setImmediate(tick)
      }
      setImmediate(tick)
      const {unpickleAsync} = await import('../../src/formats/pickle.js')
      expect(await unpickleAsync(p, 'm', hooks)).to.equal(null)
      ticking = false
      // The bound is meaningful only when one synchronous read would break it.
      const bound = 120
      expect(syncMs, 'the synchronous read is too fast on this machine for the test to mean anything').to.be.above(bound)
      expect(worst, `worst gap ${worst.toFixed(0)} ms (a synchronous read takes ${syncMs.toFixed(0)} ms)`).to.be.below(bound)
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
})
