import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {InputError, UsageError} from '../../src/errors.js'
import {
  BufferSource,
  denseToCsr,
  detectFormat,
  encodeSp24,
  inspectInput,
  readCsrInput,
  readSp24Npz,
  SP24_FORMAT,
  sp24NpzArrays,
  sp24Size,
  sp24ToNamedCsr,
  writeNpz,
  writeSp24Npz,
} from '../../src/formats/index.js'
import {writeNpzTo} from '../../src/formats/npz.js'
import {f32ToBf16Bits, f32ToF16Bits} from '../../src/sparse/half.js'
import {createRng} from '../../src/sparse/random.js'
import type {NamedCsr} from '../../src/types.js'
import {makeTmp, MemorySink, py, requirePython} from './helpers.js'

/**
 * A random rows x cols matrix that is 2:4 (each group of four keeps 0, 1 or 2 random
 * columns), as dense half bits and as CSR. Partial last groups and padding included.
 */
function random24(rows: number, cols: number, dtype: 'f16' | 'bf16', seed: number): {dense: Uint16Array; named: NamedCsr} {
  const rng = createRng(seed)
  const dense = new Uint16Array(rows * cols)
  const enc = dtype === 'f16' ? f32ToF16Bits : f32ToBf16Bits
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < cols; g += 4) {
      const len = Math.min(4, cols - g)
      const keep = rng.nextUint32() % 3
      const picks = new Set<number>()
      while (picks.size < Math.min(keep, len)) picks.add(rng.nextUint32() % len)
      for (const j of picks) dense[r * cols + g + j] = enc(rng.normal() || 1)
    }
  }
  return {dense, named: denseToCsr({name: 'w', shape: [rows, cols], dtype, data: dense})}
}

/** The same bits in both arrays. */
function same(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The documented layout (docs/formats.md, docs/half-precision-kernels.md), decoded with NumPy
 * independently of the addon: the file's dense matrix as uint16 bits, as a JSON list.
 */
const PY_DECODE = `
import json, sys
import numpy as np
z = np.load(sys.argv[1])
assert str(z['format']) == 'sparse-2to4-v1', z['format']
m, k = (int(x) for x in z['shape'])
V, M = z['values'], z['meta']
assert V.dtype == np.uint16 and M.dtype == np.uint32, (V.dtype, M.dtype)
strips, ksteps = V.shape[0], V.shape[1]
dense = np.zeros((strips * 16, ksteps * 32), dtype=np.uint16)
for s in range(strips):
    for j in range(ksteps):
        comp = np.zeros((16, 16), dtype=np.uint16)
        for l in range(32):
            g, t = l // 4, l % 4
            order = [(g, 2*t), (g, 2*t+1), (g+8, 2*t), (g+8, 2*t+1), (g, 2*t+8), (g, 2*t+9), (g+8, 2*t+8), (g+8, 2*t+9)]
            for i, (r, c) in enumerate(order):
                comp[r, c] = V[s, j, 8*l + i]
        for r in range(16):
            for grp in range(8):
                word = int(M[s, j, 2*(r % 8) + grp // 4])
                nib = (word >> ((r // 8) * 16 + (grp % 4) * 4)) & 15
                i0, i1 = nib & 3, nib >> 2
                assert i0 < i1, (s, j, r, grp, nib)
                dense[s*16 + r, j*32 + grp*4 + i0] = comp[r, 2*grp]
                dense[s*16 + r, j*32 + grp*4 + i1] = comp[r, 2*grp + 1]
print(json.dumps({'dtype': str(z['dtype']), 'shape': [m, k], 'values': list(V.shape), 'meta': list(M.shape),
                  'dense': dense[:m, :k].flatten().tolist(), 'padding': int(np.count_nonzero(dense[m:, :]) + np.count_nonzero(dense[:, k:]))}))
`

describe('the 2:4 .npz (sparse-2to4-v1)', () => {
  const tmp = makeTmp('sparse-sp24-')
  after(tmp.cleanup)
  const out = (name: string) => join(tmp.dir, name)

  for (const [rows, cols, dtype] of [
    [7, 38, 'f16'],
    [33, 100, 'bf16'],
    [16, 64, 'f16'],
    [1, 3, 'bf16'],
  ] as const) {
    it(`round-trips a ${rows}x${cols} ${dtype} 2:4 matrix bit for bit (file, then CSR)`, async () => {
      const {named} = random24(rows, cols, dtype, rows * 1000 + cols)
      const m = encodeSp24(named)
      const size = sp24Size(rows, cols)
      expect(m).to.deep.include({rows, cols, dtype, strips: size.strips, ksteps: size.ksteps})
      expect(m.values.length).to.equal(size.tiles * 256)
      expect(m.meta.length).to.equal(size.tiles * 16)
      const file = out(`rt-${rows}x${cols}.npz`)
      const w = await writeSp24Npz(m, file)
      // The archive holds the tiles and about 1.2 kB of zip and .npy headers.
      expect(w.bytes).to.be.within(size.bytes, size.bytes + 1400)
      expect(await detectFormat(file)).to.equal('sp24-npz')
      const [back] = await readCsrInput(file)
      expect(back.name).to.equal(`rt-${rows}x${cols}`)
      expect(back.shape).to.deep.equal([rows, cols])
      expect(back.csr.dtype).to.equal(dtype)
      expect(same(back.csr.rowOffsets, named.csr.rowOffsets)).to.equal(true)
      expect(same(back.csr.columnIndices, named.csr.columnIndices)).to.equal(true)
      expect(same(back.csr.values!, named.csr.values!)).to.equal(true)
    })
  }

  it('is what the docs say: NumPy opens it and an independent decoder of the documented layout gets the matrix back', async function () {
    requirePython(this)
    for (const [rows, cols, dtype] of [
      [21, 70, 'f16'],
      [16, 32, 'bf16'],
    ] as const) {
      const {dense, named} = random24(rows, cols, dtype, 9)
      const file = out(`doc-${rows}.npz`)
      await writeSp24Npz(encodeSp24(named), file)
      const r = JSON.parse(py(PY_DECODE, [file]))
      expect(r.dtype).to.equal(dtype)
      expect(r.shape).to.deep.equal([rows, cols])
      expect(r.values).to.deep.equal([Math.ceil(rows / 16), Math.ceil(cols / 32), 256])
      expect(r.meta).to.deep.equal([Math.ceil(rows / 16), Math.ceil(cols / 32), 16])
      expect(r.padding).to.equal(0)
      expect(same(r.dense, dense)).to.equal(true)
    }
  })

  it('keeps a tensor shape that is not the 2-D view (tensor_shape), and an empty matrix', async () => {
    const {named} = random24(6, 12, 'f16', 3)
    const m = encodeSp24({...named, shape: [6, 3, 2, 2]})
    await writeSp24Npz(m, out('conv.npz'))
    const [back] = await readCsrInput(out('conv.npz'))
    expect(back.shape).to.deep.equal([6, 3, 2, 2])
    const empty = encodeSp24({name: 'e', shape: [5, 9], csr: {rows: 5, cols: 9, rowOffsets: new Int32Array(6), columnIndices: new Int32Array(0), values: new Uint16Array(0), dtype: 'bf16'}})
    await writeSp24Npz(empty, out('empty.npz'))
    const [e] = await readCsrInput(out('empty.npz'))
    expect(e.csr.rowOffsets[5]).to.equal(0)
    expect(e.csr.dtype).to.equal('bf16')
  })

  it('refuses a matrix that is not 2:4, naming the first group (InputError, exit 1); f32 values are a usage error', () => {
    const csr = {rows: 2, cols: 8, rowOffsets: Int32Array.from([0, 2, 5]), columnIndices: Int32Array.from([0, 1, 4, 5, 7]), values: Uint16Array.from([1, 2, 3, 4, 5]), dtype: 'f16' as const}
    const err = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return error as Error & {exitCode: number}
      }
      throw new Error('expected an error')
    }
    const e = err(() => encodeSp24({name: 'w', shape: [2, 8], csr}))
    expect(e).to.be.instanceOf(InputError)
    expect(e.exitCode).to.equal(1)
    expect(e.message).to.equal('w: not 2:4: row 1, columns 4..7 hold 3 nonzeros (at most 2)')
    const f = err(() => encodeSp24({name: 'w', shape: [2, 8], csr: {...csr, values: Float32Array.from([1, 2, 3, 4, 5]), dtype: 'f32'}}))
    expect(f).to.be.instanceOf(UsageError)
    expect(f.message).to.match(/f16 or bf16/)
  })

  it('is described by info: 2:4 tiles, bytes, 1.125 bytes per element against 2 for dense f16', async () => {
    const {named} = random24(32, 64, 'f16', 4)
    await writeSp24Npz(encodeSp24(named), out('info.npz'))
    const r = await inspectInput(out('info.npz'))
    expect(r.format).to.equal('sp24-npz')
    const t = r.tensors[0]
    expect(t).to.deep.include({storage: '2:4', dtype: 'f16', rows: 32, cols: 64, nnz: named.csr.rowOffsets[32]})
    expect(t.sp24).to.deep.equal({strips: 2, ksteps: 2, bytes: 4 * 576, bytesPerElement: 1.125, denseF16BytesPerElement: 2, savingVsF16: 2 / 1.125})
  })

  describe('a corrupt file is an InputError naming the problem', () => {
    const {named} = random24(20, 40, 'f16', 8)
    const good = encodeSp24(named)

    /** Writes the members of `m`, each replaced or dropped by `edit` (name -> array or null). */
    async function variant(edit: Record<string, Partial<ReturnType<typeof sp24NpzArrays>[number]> | null>): Promise<Error> {
      const arrays = sp24NpzArrays(good)
        .filter((a) => edit[a.name] !== null)
        .map((a) => ({...a, ...(edit[a.name] ?? {})}))
      const sink = new MemorySink()
      await writeNpzTo(sink, arrays)
      try {
        await readSp24Npz(new BufferSource(sink.bytes(), 'bad.npz'), 'bad')
          .then((m) => sp24ToNamedCsr(m, 'bad.npz'))
      } catch (error) {
        return error as Error
      }
      throw new Error('expected an error')
    }
    const cases: Array<[string, Parameters<typeof variant>[0], RegExp]> = [
      ['values of the wrong size', {values: {shape: [2, 2, 255], data: good.values.subarray(0, 4 * 255)}}, /values has shape \(2, 2, 255\), expected \(2, 2, 256\) for a 20x40 matrix/],
      ['meta of the wrong size', {meta: {shape: [2, 1, 16], data: good.meta.subarray(0, 32)}}, /meta has shape \(2, 1, 16\), expected \(2, 2, 16\)/],
      ['values of the wrong dtype', {values: {descr: '<f2'}}, /values has dtype float16, expected uint16/],
      ['another format', {format: {descr: '<U14', data: Uint32Array.from('sparse-2to4-v9', (c) => c.codePointAt(0)!)}}, /format is 'sparse-2to4-v9', expected 'sparse-2to4-v1'/],
      ['an unknown dtype', {dtype: {descr: '<U3', data: Uint32Array.from('f32', (c) => c.codePointAt(0)!)}}, /dtype is 'f32', expected 'f16' or 'bf16'/],
      ['no dtype', {dtype: null}, /the 'dtype' member is missing/],
      ['a shape of three entries', {shape: {shape: [3], data: BigInt64Array.from([20n, 40n, 1n])}}, /shape must hold 2 entries/],
      ['a negative shape', {shape: {data: BigInt64Array.from([-20n, 40n])}}, /shape\[0\] = -20 is negative/],
      ['metadata indices that are not ascending', {meta: {data: new Uint32Array(good.meta.length).fill(0xffffffff)}}, /not ascending/],
    ]
    for (const [what, edit, re] of cases) {
      it(what, async () => {
        const e = await variant(edit)
        expect(e, e.stack).to.be.instanceOf(InputError)
        expect(e.message).to.match(/^bad\.npz: /)
        expect(e.message).to.match(re)
      })
    }

    it('a nonzero value in a padding column or a padding row', async () => {
      // k = 40: tile (0, 1) covers columns 32..63. Lane 0, register 2 holds its compressed
      // element (0, 8): group 4 of the tile, columns 48..51, empty there (indices 0, 1).
      const values = good.values.slice()
      values[1 * 256 + 0 * 8 + 4] = 0x3c00
      let e = await variant({values: {data: values}})
      expect(e).to.be.instanceOf(InputError)
      expect(e.message).to.match(/a nonzero value in padding column 48 \(the matrix has 40 columns\)/)
      const v2 = good.values.slice()
      // Row 20 (m = 20) is row 4 of strip 1: lane 16 (g 4), register 0: element (4, 0).
      v2[(1 * 2 + 0) * 256 + 16 * 8] = 0x3c00
      e = await variant({values: {data: v2}})
      expect(e).to.be.instanceOf(InputError)
      expect(e.message).to.match(/a nonzero value in padding row 20 \(the matrix has 20 rows\)/)
    })
  })

  it('is not taken for a dense .npz with other member names', async () => {
    await writeNpz([{name: 'values', shape: [2], dtype: 'f32', data: Float32Array.from([1, 2])}], out('dense.npz'))
    expect(await detectFormat(out('dense.npz'))).to.equal('npz')
    expect(SP24_FORMAT).to.equal('sparse-2to4-v1')
    // --from 2:4 on it says what is missing.
    try {
      await readCsrInput(out('dense.npz'), '2:4')
      throw new Error('expected an error')
    } catch (error) {
      expect(error).to.be.instanceOf(InputError)
      expect((error as Error).message).to.match(/not a 2:4 \.npz \(members: values; expected format, shape, values, meta\)/)
    }
  })

  it('reads the file NumPy writes back (np.savez of the loaded members)', async function () {
    requirePython(this)
    const {named} = random24(18, 50, 'bf16', 12)
    await writeSp24Npz(encodeSp24(named), out('np-in.npz'))
    py(`import sys, numpy as np\nz = np.load(sys.argv[1])\nnp.savez_compressed(sys.argv[2], **{k: z[k] for k in z.files})`, [out('np-in.npz'), out('np-out.npz')])
    const [back] = await readCsrInput(out('np-out.npz'))
    expect(same(back.csr.values!, named.csr.values!)).to.equal(true)
    expect(same(back.csr.columnIndices, named.csr.columnIndices)).to.equal(true)
    expect(readFileSync(out('np-out.npz')).length).to.be.greaterThan(0)
  })
})
