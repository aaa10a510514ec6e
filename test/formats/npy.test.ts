import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {InputError} from '../../src/errors.js'
import {openTensorSource, parseNpy, readNpyBytes, toFloat32, writeNpy} from '../../src/formats/index.js'
import {npyHeader} from '../../src/formats/npy.js'
import type {DenseTensor} from '../../src/types.js'
import {expectInputError, expectInputErrorAsync, fixture, makeTmp, py, pyJson, requirePython, sameBits} from './helpers.js'

interface NumpyView {
  shape: number[]
  dtype: string
  hex: string
}

/** numpy's view of files (one Python start): shape, dtype and the raw C-order bytes as hex. */
function numpyRaw(...paths: string[]): NumpyView[] {
  return pyJson(
    `import json,sys,numpy as np
out = []
for p in sys.argv[1:]:
    a = np.load(p)
    out.append({'shape': list(a.shape), 'dtype': a.dtype.str, 'hex': np.ascontiguousarray(a).tobytes().hex()})
print(json.dumps(out))`,
    paths,
  )
}

function hexOf(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex')
}

async function readOne(path: string): Promise<DenseTensor> {
  const src = await openTensorSource(path)
  try {
    expect(src.tensors).to.have.length(1)
    return await src.read(src.tensors[0].name)
  } finally {
    await src.close()
  }
}

describe('formats/npy', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)

  describe('reading files made by numpy', () => {
    it('float32: shape, values (checked without Python)', async () => {
      const t = await readOne(fixture('dense-f32.npy'))
      expect(t.name).to.equal('dense-f32')
      expect(t.shape).to.deep.equal([7, 96])
      expect(t.dtype).to.equal('f32')
      expect(t.data).to.be.instanceOf(Float32Array)
      const d = t.data as Float32Array
      expect(d[1]).to.equal(Math.fround(0.40273216366767883))
      let nnz = 0
      let sum = 0
      for (const v of d) {
        if (v !== 0) nnz++
        sum += v
      }
      expect(nnz).to.equal(405)
      expect(sum).to.be.closeTo(-27.34522444754839, 1e-9)
      for (let c = 0; c < 96; c++) expect(d[3 * 96 + c]).to.equal(0) // the empty row
    })

    it('float16 (kept as bits) and float64: shape and checksums', async () => {
      const h = await readOne(fixture('dense-f16.npy'))
      expect(h.dtype).to.equal('f16')
      expect(h.data).to.be.instanceOf(Uint16Array)
      expect(h.shape).to.deep.equal([16, 40])
      const hf = toFloat32(h)
      expect(hf.reduce((a, b) => a + b, 0)).to.be.closeTo(2.099414825439453, 1e-6)
      expect(hf.filter((v) => v !== 0).length).to.equal(326)
      const d = await readOne(fixture('dense-f64.npy'))
      expect(d.dtype).to.equal('f64')
      expect(d.shape).to.deep.equal([5, 3, 4])
      expect((d.data as Float64Array)[1]).to.equal(-1.3337822028552988)
      expect(Array.from(d.data).reduce((a, b) => a + b, 0)).to.be.closeTo(0.7896097215324358, 1e-12)
    })

    it('every float fixture is bit-identical to what numpy reads', async function () {
      requirePython(this)
      const names = ['dense-f32.npy', 'dense-f16.npy', 'dense-f64.npy', 'nan.npy']
      const refs = numpyRaw(...names.map(fixture))
      for (const [i, name] of names.entries()) {
        const ref = refs[i]
        const t = await readOne(fixture(name))
        expect(t.shape, name).to.deep.equal(ref.shape)
        expect(hexOf(t.data), name).to.equal(ref.hex)
      }
    })
  })

  describe('writing', () => {
    it('float32 and float16 round trip through our reader, bit for bit', async () => {
      const f32 = Float32Array.from([1.5, -0, 0, Number.NaN, Infinity, -3.25e-38, 7])
      const f16 = Uint16Array.from([0x3c00, 0x8000, 0x7c00, 0x7e00, 0x0001, 0xfbff])
      for (const t of [
        {name: 'a', shape: [7], dtype: 'f32', data: f32},
        {name: 'b', shape: [2, 3], dtype: 'f16', data: f16},
        {name: 'c', shape: [], dtype: 'f32', data: Float32Array.of(2)},
        {name: 'd', shape: [0, 5], dtype: 'f32', data: new Float32Array(0)},
      ] as DenseTensor[]) {
        const out = join(tmp.dir, `rt-${t.name}.npy`)
        await writeNpy(t, out)
        const back = await readOne(out)
        expect(back.shape).to.deep.equal(t.shape)
        expect(back.dtype).to.equal(t.dtype)
        expect(sameBits(back.data, t.data)).to.equal(true)
      }
    })

    it('pads the header so the data starts on a multiple of 64 bytes, as numpy does', () => {
      for (const shape of [[3], [7, 96], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]) {
        const h = npyHeader('<f4', shape)
        expect(h.length % 64).to.equal(0)
        expect(h[h.length - 1]).to.equal(0x0a)
      }
    })

    it('numpy loads what we write, exactly', async function () {
      requirePython(this)
      const data = Float32Array.from({length: 7 * 9}, (_, i) => (i % 5 === 0 ? 0 : Math.sin(i) * 10))
      const out = join(tmp.dir, 'for-numpy.npy')
      await writeNpy({name: 'x', shape: [7, 9], dtype: 'f32', data}, out)
      const [ref] = numpyRaw(out)
      expect(ref.shape).to.deep.equal([7, 9])
      expect(ref.dtype).to.equal('<f4')
      expect(ref.hex).to.equal(hexOf(data))
      const h = Uint16Array.from([0x3c00, 0xc000, 0x3555])
      const out16 = join(tmp.dir, 'for-numpy16.npy')
      await writeNpy({name: 'h', shape: [3], dtype: 'f16', data: h}, out16)
      expect(py(`import sys,numpy as np; print(np.load(sys.argv[1]).tolist())`, [out16]).trim()).to.equal('[1.0, -2.0, 0.333251953125]')
    })

    it('refuses bf16 (NumPy has no bfloat16)', async () => {
      try {
        await writeNpy({name: 'b', shape: [1], dtype: 'bf16', data: Uint16Array.of(0x3f80)}, join(tmp.dir, 'bf.npy'))
        expect.fail('expected an error')
      } catch (error) {
        expect((error as Error).message).to.match(/bfloat16/)
      }
    })
  })

  describe('bad inputs give InputError with a clear message', () => {
    it('truncated file', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-truncated.npy')), /truncated.*needs 2816 bytes but the file has 2716/)
    })
    it('wrong magic', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-magic.npy')), /not an \.npy file \(wrong magic/)
    })
    it('unsupported dtype int64, named', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-int64.npy')), /unsupported dtype int64/)
    })
    it('big-endian', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-bigendian.npy')), /big-endian/)
    })
    it('Fortran order', async () => {
      await expectInputErrorAsync(openTensorSource(fixture('bad-fortran.npy')), /Fortran-ordered/)
    })

    const build = (dict: string, data = new Uint8Array(0)) => {
      const padded = dict.padEnd(Math.ceil((dict.length + 11) / 64) * 64 - 11, ' ') + '\n'
      const b = new Uint8Array(10 + padded.length + data.length)
      b.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0])
      new DataView(b.buffer).setUint16(8, padded.length, true)
      for (let i = 0; i < padded.length; i++) b[10 + i] = padded.charCodeAt(i)
      b.set(data, 10 + padded.length)
      return b
    }

    it('object, bool, complex, structured and string dtypes are named', () => {
      expectInputError(() => readNpyBytes(build("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"), 'x', 'o.npy'), /object arrays/)
      expectInputError(() => readNpyBytes(build("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", new Uint8Array(2)), 'x', 'b.npy'), /unsupported dtype bool/)
      expectInputError(() => readNpyBytes(build("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(8)), 'x', 'c.npy'), /complex64/)
      expectInputError(() => readNpyBytes(build("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"), 'x', 's.npy'), /structured/)
      expectInputError(() => readNpyBytes(build("{'descr': '<U3', 'fortran_order': False, 'shape': (), }", new Uint8Array(12)), 'x', 'u.npy'), /unicode string/)
    })

    it('a lying shape is caught before allocating (no huge allocation)', () => {
      // Claims 2^40 float32 elements but holds 16 bytes.
      expectInputError(() => readNpyBytes(build("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", new Uint8Array(16)), 'x', 'lie.npy'), /truncated.*needs 4398046511104 data bytes/)
    })

    it('trailing bytes after the data, malformed headers, unknown versions', () => {
      expectInputError(() => parseNpy(build("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(8)), 'tail.npy'), /4 unexpected bytes/)
      expectInputError(() => parseNpy(build("{'descr': '<f4', 'shape': (1,), }", new Uint8Array(4)), 'keys.npy'), /malformed header/)
      expectInputError(() => parseNpy(build("{'descr': '<f4', 'fortran_order': False, 'shape': (1, -2), }"), 'neg.npy'), /malformed header/)
      const v9 = build("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4))
      v9[6] = 9
      expectInputError(() => parseNpy(v9, 'v9.npy'), /version 9/)
      const big = build("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", new Uint8Array(4))
      new DataView(big.buffer).setUint16(8, 60000, true)
      expectInputError(() => parseNpy(big, 'hdr.npy'), /truncated: its header claims/)
    })

    it('reads format version 2.0 headers', () => {
      const b = readFileSync(fixture('dense-f32.npy'))
      const headerLen = b.readUInt16LE(8)
      const v2 = Buffer.alloc(b.length + 2)
      b.copy(v2, 0, 0, 8)
      v2[6] = 2
      v2.writeUInt32LE(headerLen, 8)
      b.copy(v2, 12, 10)
      const path = join(tmp.dir, 'v2.npy')
      writeFileSync(path, v2)
      const t = readNpyBytes(new Uint8Array(readFileSync(path)), 'v2', path)
      expect(t.shape).to.deep.equal([7, 96])
      expect((t.data as Float32Array)[1]).to.equal(Math.fround(0.40273216366767883))
    })
  })
})
