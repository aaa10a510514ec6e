import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {BufferSource, openTensorSource, SafetensorsFile, toFloat32, writeSafetensors, writeSafetensorsStream, writeSafetensorsTo} from '../../src/formats/index.js'
import type {ByteSource} from '../../src/formats/byte-source.js'
import {bf16BitsToF32} from '../../src/sparse/half.js'
import type {DenseTensor} from '../../src/types.js'
import {expectInputErrorAsync, fixture, makeTmp, MemorySink, sameBits} from './helpers.js'

class RecordingSource implements ByteSource {
  reads: [number, number][] = []
  constructor(private readonly inner: ByteSource) {}
  get label() {
    return this.inner.label
  }
  get size() {
    return this.inner.size
  }
  async read(position: number, length: number) {
    this.reads.push([position, length])
    return this.inner.read(position, length)
  }
  close() {
    return this.inner.close()
  }
}

/** A .safetensors image with a given header object and data bytes. */
function image(header: unknown, data: Uint8Array, rawHeader?: string): Uint8Array {
  const text = new TextEncoder().encode(rawHeader ?? JSON.stringify(header))
  const out = new Uint8Array(8 + text.length + data.length)
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true)
  out.set(text, 8)
  out.set(data, 8 + text.length)
  return out
}

describe('formats/safetensors', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)

  it('reads F32, F16 and BF16 tensors exactly as written by the fixture script (checked against numpy)', async () => {
    const src = await openTensorSource(fixture('mixed.safetensors'))
    expect(src.format).to.equal('safetensors')
    expect(src.tensors.map((t) => [t.name, t.dtype, t.shape])).to.deep.equal([
      ['a.f32', 'f32', [4, 6]],
      ['b.f16', 'f16', [3, 5]],
      ['c.bf16', 'bf16', [2, 7]],
    ])
    expect(src.unsupported).to.deep.equal([{name: 'd.i64', shape: [3], dtype: 'I64', reason: 'not F32/F16/BF16/F64'}])
    // mixed-expected.npz holds the same arrays, saved by numpy.
    const ref = await openTensorSource(fixture('mixed-expected.npz'))
    const a = await src.read('a.f32')
    const b = await src.read('b.f16')
    const c = await src.read('c.bf16')
    expect(sameBits(a.data, (await ref.read('a')).data)).to.equal(true)
    expect(sameBits(b.data, (await ref.read('b')).data)).to.equal(true)
    // c_bits is stored as uint16 in the npz (NumPy has no bfloat16): compare raw bytes.
    const npz = (await import('../../src/formats/index.js')).NpzArchive
    const z = await npz.open(new BufferSource(new Uint8Array(readFileSync(fixture('mixed-expected.npz'))), 'ref'))
    const bits = await z.readRaw('c_bits')
    expect(Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength).equals(Buffer.from(bits.bytes.subarray(bits.dataOffset)))).to.equal(true)
    expect(toFloat32(c)[0]).to.equal(bf16BitsToF32((c.data as Uint16Array)[0]))
    await expectInputErrorAsync(src.read('d.i64'), /unsupported dtype I64/)
    await src.close()
    await ref.close()
  })

  it('reads one tensor by reading only its byte range', async () => {
    const file = new RecordingSource(new BufferSource(new Uint8Array(readFileSync(fixture('tiny-mlp.safetensors'))), 'mlp'))
    const st = await SafetensorsFile.open(file)
    expect(st.entries.map((e) => e.name)).to.deep.equal(['layers.0.weight', 'layers.0.bias', 'layers.1.weight', 'layers.1.bias', 'layers.2.weight', 'layers.2.bias'])
    file.reads = []
    const t = await st.read('layers.1.bias')
    expect(t.shape).to.deep.equal([64])
    const e = st.entry('layers.1.bias')
    expect(file.reads).to.deep.equal([[e.begin, 64 * 4]])
  })

  it('round trips our writer (F32, F16, BF16, F64; empty and scalar tensors)', async () => {
    const tensors: DenseTensor[] = [
      {name: 'w', shape: [3, 2], dtype: 'f32', data: Float32Array.of(1, -2, 0, 3.5, NaN, -0)},
      {name: 'h', shape: [2], dtype: 'f16', data: Uint16Array.of(0x3c00, 0xc000)},
      {name: 'b', shape: [1, 1, 3], dtype: 'bf16', data: Uint16Array.of(0x3f80, 0x4000, 0xbf80)},
      {name: 'd', shape: [], dtype: 'f64', data: Float64Array.of(Math.PI)},
      {name: 'e', shape: [0, 4], dtype: 'f32', data: new Float32Array(0)},
    ]
    const p = join(tmp.dir, 'rt.safetensors')
    await writeSafetensors(tensors, p, {metadata: {format: 'pt'}})
    const src = await openTensorSource(p)
    expect(src.tensors.map((t) => t.name)).to.deep.equal(['w', 'h', 'b', 'd', 'e'])
    for (const t of tensors) {
      const back = await src.read(t.name)
      expect(back.dtype).to.equal(t.dtype)
      expect(back.shape).to.deep.equal(t.shape)
      expect(sameBits(back.data, t.data), t.name).to.equal(true)
    }
    await src.close()
    // The header is padded so the data starts on an 8-byte boundary.
    const bytes = readFileSync(p)
    expect(Number(bytes.readBigUInt64LE(0)) % 8).to.equal(0)
  })

  describe('strict bounds checks', () => {
    const f32 = (n: number) => new Uint8Array(n * 4)
    const open = (bytes: Uint8Array) => SafetensorsFile.open(new BufferSource(bytes, 'bad.safetensors'))

    it('data offsets past the end of the file (the lying-header fixture)', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-lying-header.safetensors')), /ends at data byte 256 but the file holds 64 data bytes/)
    })
    it('a header length larger than the file', async () => {
      const b = image({}, new Uint8Array(0))
      new DataView(b.buffer).setBigUint64(0, 1n << 40n, true)
      await expectInputErrorAsync(open(b), /header length .* exceeds/)
    })
    it('a span that does not match shape × dtype', async () => {
      await expectInputErrorAsync(open(image({w: {dtype: 'F32', shape: [2, 2], data_offsets: [0, 12]}}, f32(4))), /span 12 bytes but shape \[2, 2\] of F32 needs 16/)
    })
    it('overlapping tensors', async () => {
      await expectInputErrorAsync(
        open(image({a: {dtype: 'F32', shape: [2], data_offsets: [0, 8]}, b: {dtype: 'F32', shape: [2], data_offsets: [4, 12]}}, f32(3))),
        /overlap/,
      )
    })
    it('bad JSON, unknown dtype, bad shapes and offsets', async () => {
      await expectInputErrorAsync(open(image(null, f32(1), '{"a": ')), /not valid JSON/)
      await expectInputErrorAsync(open(image({a: {dtype: 'Q7', shape: [1], data_offsets: [0, 4]}}, f32(1))), /unknown dtype Q7/)
      await expectInputErrorAsync(open(image({a: {dtype: 'F32', shape: [-1], data_offsets: [0, 4]}}, f32(1))), /shape must be/)
      await expectInputErrorAsync(open(image({a: {dtype: 'F32', shape: [1], data_offsets: [4, 0]}}, f32(1))), /end before they begin/)
      await expectInputErrorAsync(open(image({a: {dtype: 'F32', shape: [1], data_offsets: [0.5, 4]}}, f32(1))), /two non-negative integers/)
    })
    it('not a safetensors file at all, or too short', async () => {
      await expectInputErrorAsync(open(new Uint8Array(4)), /too short/)
      const npy = new Uint8Array(readFileSync(fixture('dense-f32.npy')))
      await expectInputErrorAsync(open(npy), /exceeds|does not start/)
    })
    it('the streaming writer checks each tensor gets exactly its bytes', async () => {
      const p = join(tmp.dir, 'stream.safetensors')
      await writeSafetensorsStream(
        [
          {name: 'a', shape: [1000, 3], dtype: 'f32'},
          {name: 'b', shape: [5], dtype: 'bf16'},
        ],
        async (i, sink) => {
          if (i === 0) for (let r = 0; r < 1000; r++) await sink.write(new Uint8Array(Float32Array.of(r, -r, 0.5).buffer))
          else await sink.write(new Uint8Array(10))
        },
        p,
      )
      const src = await openTensorSource(p)
      const a = (await src.read('a')).data as Float32Array
      expect([a[0], a[2997], a[2998], a[2999]]).to.deep.equal([0, 999, -999, 0.5])
      await src.close()
      try {
        await writeSafetensorsStream([{name: 'x', shape: [2], dtype: 'f32'}], async (_, sink) => sink.write(new Uint8Array(4)), join(tmp.dir, 'short.safetensors'))
        expect.fail('expected an error')
      } catch (error) {
        expect((error as Error).message).to.match(/needs 8 bytes, got 4/)
      }
    })
    it('the writer output is accepted by the strict reader (sink level)', async () => {
      const sink = new MemorySink()
      await writeSafetensorsTo(sink, [{name: 'x', shape: [2], dtype: 'f32', data: Float32Array.of(1, 2)}])
      const st = await open(sink.bytes())
      expect(Array.from((await st.read('x')).data)).to.deep.equal([1, 2])
    })
  })
})
