import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {BufferSource, NpzArchive, openTensorSource, writeNpz, writeNpzTo} from '../../src/formats/index.js'
import type {ByteSource} from '../../src/formats/byte-source.js'
import {readZipDirectory, readZipMember} from '../../src/formats/zip.js'
import {expectInputErrorAsync, fixture, makeTmp, MemorySink, pyJson, pythonMissing, requirePython} from './helpers.js'

function hexOf(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex')
}

/** A ByteSource that counts the bytes read through it. */
class CountingSource implements ByteSource {
  readBytes = 0
  constructor(private readonly inner: ByteSource) {}
  get label() {
    return this.inner.label
  }
  get size() {
    return this.inner.size
  }
  async read(position: number, length: number) {
    this.readBytes += length
    return this.inner.read(position, length)
  }
  close() {
    return this.inner.close()
  }
}

describe('formats/npz', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)

  it('reads numpy.savez and numpy.savez_compressed archives member by member, the same tensors', async () => {
    const results: Record<string, string>[] = []
    for (const f of ['multi.npz', 'multi-compressed.npz']) {
      const src = await openTensorSource(fixture(f))
      expect(src.format).to.equal('npz')
      expect(src.tensors.map((t) => [t.name, t.dtype, t.shape])).to.deep.equal([
        ['layers.0.weight', 'f32', [32, 48]],
        ['layers.0.bias', 'f32', [32]],
        ['half', 'f16', [8, 8]],
      ])
      expect(src.unsupported).to.deep.equal([{name: 'steps', shape: [], dtype: 'int64', reason: 'not a float32/float16/float64 array'}])
      const hex: Record<string, string> = {}
      for (const t of src.tensors) hex[t.name] = hexOf((await src.read(t.name)).data)
      await src.close()
      results.push(hex)
    }
    expect(results[0]).to.deep.equal(results[1])
  })

  it('matches numpy bit for bit', async function () {
    requirePython(this)
    const ref = pyJson<Record<string, string>>(
      `import json,sys,numpy as np
z = np.load(sys.argv[1])
print(json.dumps({k: np.ascontiguousarray(z[k]).tobytes().hex() for k in z.files if z[k].dtype.kind == 'f'}))`,
      [fixture('multi-compressed.npz')],
    )
    const src = await openTensorSource(fixture('multi-compressed.npz'))
    for (const t of src.tensors) expect(hexOf((await src.read(t.name)).data), t.name).to.equal(ref[t.name])
    await src.close()
  })

  it('writes archives numpy reads: stored, deflated, and with zip64 records', async () => {
    const a = Float32Array.from({length: 30}, (_, i) => i / 7)
    const b = Uint16Array.from([0x3c00, 0x4000, 0x4200])
    const paths: string[] = []
    for (const [name, compress, zip64] of [
      ['stored.npz', false, false],
      ['deflated.npz', true, false],
      ['zip64.npz', false, true],
    ] as const) {
      const sink = new MemorySink()
      await writeNpzTo(
        sink,
        [
          {name: 'a', descr: '<f4', shape: [5, 6], data: a},
          {name: 'b.x/y', descr: '<f2', shape: [3], data: b},
        ],
        compress,
        zip64,
      )
      const bytes = sink.bytes()
      // Our reader.
      const npz = await NpzArchive.open(new BufferSource(bytes, name))
      expect(npz.members.map((m) => m.name)).to.deep.equal(['a', 'b.x/y'])
      const ra = await npz.readRaw('a')
      expect(hexOf(ra.bytes.subarray(ra.dataOffset))).to.equal(hexOf(a))
      const p = join(tmp.dir, name)
      writeFileSync(p, bytes)
      paths.push(p)
    }
    const why = pythonMissing()
    if (why) {
      console.log(`      (numpy check skipped: ${why})`)
      return
    }
    const ref = pyJson<{a: string; b: number[]}[]>(
      `import json,sys,numpy as np
out = []
for p in sys.argv[1:]:
    z = np.load(p)
    out.append({'a': z['a'].tobytes().hex(), 'b': z['b.x/y'].tolist()})
print(json.dumps(out))`,
      paths,
    )
    for (const r of ref) {
      expect(r.a).to.equal(hexOf(a))
      expect(r.b).to.deep.equal([1, 2, 3])
    }
  })

  it('reads one member without reading the others (bounded memory)', async () => {
    const big = new Float32Array(1 << 20) // 4 MiB
    const sink = new MemorySink()
    await writeNpzTo(sink, [
      {name: 'small', descr: '<f4', shape: [3], data: Float32Array.of(1, 2, 3)},
      {name: 'big', descr: '<f4', shape: [1 << 20], data: big},
    ])
    const counting = new CountingSource(new BufferSource(sink.bytes(), 'mem.npz'))
    const npz = await NpzArchive.open(counting)
    const raw = await npz.readRaw('small')
    expect(Array.from(new Float32Array(raw.bytes.buffer, raw.bytes.byteOffset + raw.dataOffset, 3))).to.deep.equal([1, 2, 3])
    expect(counting.readBytes).to.be.lessThan(200_000)
  })

  it('writeNpz writes dense tensors atomically', async () => {
    const p = join(tmp.dir, 'dense.npz')
    await writeNpz([{name: 'w', shape: [2, 2], dtype: 'f32', data: Float32Array.of(1, 0, 0, 4)}], p)
    const src = await openTensorSource(p)
    expect(Array.from((await src.read('w')).data)).to.deep.equal([1, 0, 0, 4])
    await src.close()
  })

  describe('bad archives', () => {
    it('truncated', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-truncated.npz')), /truncated/)
    })

    it('a corrupt member fails its CRC check', async () => {
      const b = Buffer.from(readFileSync(fixture('multi.npz')))
      const npz = await NpzArchive.open(new BufferSource(new Uint8Array(b), 'x'))
      const m = npz.member('layers.0.weight')
      b[m.entry.localHeaderOffset + 30 + 'layers.0.weight.npy'.length + 300] ^= 0xff
      const p = join(tmp.dir, 'crc.npz')
      writeFileSync(p, b)
      const src = await openTensorSource(p)
      await expectInputErrorAsync(src.read('layers.0.weight'), /CRC-32/)
      await src.close()
    })

    it('a member claiming more than DEFLATE can produce is refused before allocating', async () => {
      const src = new BufferSource(new Uint8Array(readFileSync(fixture('multi-compressed.npz'))), 'bomb.npz')
      const [entry] = await readZipDirectory(src)
      await expectInputErrorAsync(readZipMember(src, {...entry, size: entry.compressedSize * 5000}), /more than DEFLATE can produce/)
    })

    it('a header that disagrees with the member size', async () => {
      const sink = new MemorySink()
      // Member holds 3 floats, but we patch the .npy header to claim (4,).
      await writeNpzTo(sink, [{name: 'a', descr: '<f4', shape: [3], data: Float32Array.of(1, 2, 3)}])
      const bytes = sink.bytes()
      const text = Buffer.from(bytes).toString('latin1')
      const at = text.indexOf("'shape': (3,)")
      bytes[at + 10] = '4'.charCodeAt(0)
      await expectInputErrorAsync(NpzArchive.open(new BufferSource(bytes, 'lie.npz')), /declares .* but the member holds/)
    })

    it('not a zip at all', async () => {
      await expectInputErrorAsync(NpzArchive.open(new BufferSource(new TextEncoder().encode('PK but not really a zip file at all, no'), 'fake.npz')), /no end-of-central-directory|wrong magic/)
      await expectInputErrorAsync(NpzArchive.open(new BufferSource(new Uint8Array(100), 'zeros.npz')), /not a ZIP/)
    })
  })
})
