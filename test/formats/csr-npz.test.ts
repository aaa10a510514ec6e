import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {InputError} from '../../src/errors.js'
import {BufferSource, readCsrInput, readCsrNpz, writeCsrNpz, writeNpzTo} from '../../src/formats/index.js'
import {denseToCsr} from '../../src/sparse/dense-to-csr.js'
import {createRng} from '../../src/sparse/random.js'
import {float32ToHalf} from '../../src/sparse/half.js'
import type {CsrMatrix, NamedCsr} from '../../src/types.js'
import {fixture, makeTmp, MemorySink, pyJson, requirePython, sameBits} from './helpers.js'

/** A random CSR with empty rows, seeded. */
function randomCsr(rows: number, cols: number, density: number, seed: number): CsrMatrix {
  const rng = createRng(seed)
  const offsets = new Int32Array(rows + 1)
  const cols_: number[] = []
  const vals: number[] = []
  for (let r = 0; r < rows; r++) {
    if (r % 5 !== 2) {
      for (let c = 0; c < cols; c++) {
        if (rng.nextFloat() < density) {
          cols_.push(c)
          vals.push(rng.normal())
        }
      }
    }
    offsets[r + 1] = cols_.length
  }
  return {rows, cols, rowOffsets: offsets, columnIndices: Int32Array.from(cols_), values: Float32Array.from(vals), dtype: 'f32'}
}

interface ScipyView {
  shape: number[]
  format: string
  data: string
  indices: number[]
  indptr: number[]
  dtype: string
  extra: Record<string, unknown>
}

const SCIPY_LOAD = `import json,sys,numpy as np,scipy.sparse as s
out = []
for p in sys.argv[1:]:
    m = s.load_npz(p)
    z = np.load(p)
    extra = {k: z[k].tolist() for k in z.files if k not in ('data','indices','indptr','shape','format')}
    out.append({'shape': list(m.shape), 'format': m.format, 'data': np.ascontiguousarray(m.data).tobytes().hex(),
                'indices': m.indices.tolist(), 'indptr': m.indptr.tolist(), 'dtype': m.data.dtype.str, 'extra': extra})
print(json.dumps(out))`

function hexOf(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex')
}

describe('formats/csr-npz', () => {
  const tmp = makeTmp()
  after(tmp.cleanup)

  it('reads the scipy.sparse.save_npz fixture (deflated, format |S3)', async () => {
    const [m] = await readCsrInput(fixture('scipy-csr.npz'))
    expect(m.name).to.equal('scipy-csr')
    expect(m.shape).to.deep.equal([33, 50])
    expect(m.csr.dtype).to.equal('f32')
    expect(m.csr.rowOffsets[33]).to.equal(323)
    expect(m.csr.rowOffsets[6] - m.csr.rowOffsets[5]).to.equal(0) // the empty row
    expect(m.csr.rowIndices).to.equal(undefined)
  })

  it('reads int64 indices/indptr, float64 values and K > 32767 (scipy fixture)', async () => {
    const [m] = await readCsrInput(fixture('scipy-csr-int64.npz'))
    expect(m.csr.rows).to.equal(20)
    expect(m.csr.cols).to.equal(70000)
    expect(m.csr.columnIndices).to.be.instanceOf(Int32Array)
    expect(m.csr.rowOffsets[20]).to.equal(700)
    expect(m.csr.dtype).to.equal('f32')
  })

  it('the SciPy fixtures match scipy.sparse.load_npz exactly', async function () {
    requirePython(this)
    const [ref, ref64] = pyJson<ScipyView[]>(SCIPY_LOAD, [fixture('scipy-csr.npz'), fixture('scipy-csr-int64.npz')])
    const [m] = await readCsrInput(fixture('scipy-csr.npz'))
    expect(Array.from(m.csr.rowOffsets)).to.deep.equal(ref.indptr)
    expect(Array.from(m.csr.columnIndices)).to.deep.equal(ref.indices)
    expect(hexOf(m.csr.values!)).to.equal(ref.data)
    const [m64] = await readCsrInput(fixture('scipy-csr-int64.npz'))
    expect(Array.from(m64.csr.rowOffsets)).to.deep.equal(ref64.indptr)
    expect(Array.from(m64.csr.columnIndices)).to.deep.equal(ref64.indices)
    const f64 = new Float64Array(Buffer.from(ref64.data, 'hex').buffer.slice(0))
    expect(Array.from(m64.csr.values!)).to.deep.equal(Array.from(f64, Math.fround))
  })

  it('round trips f32, f16 and bf16 values, the row order and an N-D tensor shape', async () => {
    const base = randomCsr(7, 96, 0.3, 1)
    const order = Int32Array.from([3, 0, 6, 1, 5, 2, 4])
    const cases: NamedCsr[] = [
      {name: 'f32', shape: [7, 96], csr: {...base, rowIndices: order}},
      {name: 'f16', shape: [7, 96], csr: {...base, values: float32ToHalf(base.values!, 'f16'), dtype: 'f16'}},
      {name: 'bf16', shape: [7, 4, 4, 6], csr: {...base, values: float32ToHalf(base.values!, 'bf16'), dtype: 'bf16', rowIndices: order}},
    ]
    for (const c of cases) {
      const p = join(tmp.dir, `${c.name}.npz`)
      await writeCsrNpz(c, p)
      const [back] = await readCsrInput(p)
      expect(back.shape, c.name).to.deep.equal(c.shape)
      expect(back.csr.dtype).to.equal(c.csr.dtype)
      expect(sameBits(back.csr.values!, c.csr.values!)).to.equal(true)
      expect(Array.from(back.csr.rowOffsets)).to.deep.equal(Array.from(c.csr.rowOffsets))
      expect(Array.from(back.csr.columnIndices)).to.deep.equal(Array.from(c.csr.columnIndices))
      expect(back.csr.rowIndices ? Array.from(back.csr.rowIndices) : undefined).to.deep.equal(c.csr.rowIndices ? Array.from(c.csr.rowIndices) : undefined)
    }
  })

  it('nnz = 0 and 0-row matrices round trip', async () => {
    for (const [rows, cols] of [[4, 5], [0, 3]]) {
      const csr: CsrMatrix = {rows, cols, rowOffsets: new Int32Array(rows + 1), columnIndices: new Int32Array(0), values: new Float32Array(0), dtype: 'f32'}
      const p = join(tmp.dir, `empty-${rows}.npz`)
      await writeCsrNpz({name: 'e', shape: [rows, cols], csr}, p)
      const [back] = await readCsrInput(p)
      expect(back.csr.rows).to.equal(rows)
      expect(back.csr.columnIndices.length).to.equal(0)
    }
  })

  it('scipy.sparse.load_npz opens what we write, with exactly our entries', async function () {
    requirePython(this)
    const base = randomCsr(33, 40, 0.25, 2)
    const order = Int32Array.from({length: 33}, (_, i) => 32 - i)
    const f32: NamedCsr = {name: 'a', shape: [33, 40], csr: {...base, rowIndices: order}}
    const f16: NamedCsr = {name: 'b', shape: [33, 40], csr: {...base, values: float32ToHalf(base.values!, 'f16'), dtype: 'f16'}}
    const bf16: NamedCsr = {name: 'c', shape: [33, 2, 20], csr: {...base, values: float32ToHalf(base.values!, 'bf16'), dtype: 'bf16'}}
    const paths = [join(tmp.dir, 'sp-f32.npz'), join(tmp.dir, 'sp-f16.npz'), join(tmp.dir, 'sp-bf16.npz')]
    await writeCsrNpz(f32, paths[0])
    await writeCsrNpz(f16, paths[1])
    await writeCsrNpz(bf16, paths[2])
    const refs = pyJson<ScipyView[]>(SCIPY_LOAD, paths)
    for (const [i, n] of [f32, f16, bf16].entries()) {
      const r = refs[i]
      expect(r.format).to.equal('csr')
      expect(r.shape).to.deep.equal([33, 40])
      expect(r.indptr).to.deep.equal(Array.from(n.csr.rowOffsets))
      expect(r.indices).to.deep.equal(Array.from(n.csr.columnIndices))
      expect(r.data, n.name).to.equal(hexOf(n.csr.values!))
    }
    expect(refs[0].dtype).to.equal('<f4')
    expect(refs[0].extra.row_indices).to.deep.equal(Array.from(order))
    expect(refs[1].dtype).to.equal('<f2')
    expect(refs[2].dtype).to.equal('<u2') // bf16 bits, tagged:
    expect(refs[2].extra.dtype).to.equal('bfloat16')
    expect(refs[2].extra.tensor_shape).to.deep.equal([33, 2, 20])
  })

  it('a dense -> CSR conversion matches scipy.sparse.csr_matrix(dense)', async function () {
    requirePython(this)
    const rng = createRng(3)
    const data = Float32Array.from({length: 9 * 13}, () => (rng.nextFloat() < 0.6 ? 0 : rng.normal()))
    const p = join(tmp.dir, 'dense-ref.npz')
    await writeCsrNpz(denseToCsr({name: 'x', shape: [9, 13], dtype: 'f32', data}), p)
    const ok = pyJson<boolean>(
      `import json,sys,numpy as np,scipy.sparse as s
m = s.load_npz(sys.argv[1])
d = np.frombuffer(bytes.fromhex(sys.argv[2]), dtype='<f4').reshape(9, 13)
r = s.csr_matrix(d)
print(json.dumps(bool((m != r).nnz == 0 and np.array_equal(m.indptr, r.indptr) and np.array_equal(m.indices, r.indices))))`,
      [p, hexOf(data)],
    )
    expect(ok).to.equal(true)
  })

  describe('bad CSR archives', () => {
    const archive = async (members: {name: string; descr: string; shape: number[]; data: ArrayBufferView}[]) => {
      const sink = new MemorySink()
      await writeNpzTo(sink, members)
      return new BufferSource(sink.bytes(), 'bad.npz')
    }
    const fmt = (s: string) => ({name: 'format', descr: `<U${s.length}`, shape: [], data: Uint32Array.from(s, (c) => c.codePointAt(0)!)})
    const good = () => [
      {name: 'data', descr: '<f4', shape: [3], data: Float32Array.of(1, 2, 3)},
      {name: 'indices', descr: '<i4', shape: [3], data: Int32Array.of(0, 2, 1)},
      {name: 'indptr', descr: '<i4', shape: [3], data: Int32Array.of(0, 2, 3)},
      {name: 'shape', descr: '<i8', shape: [2], data: BigInt64Array.of(2n, 3n)},
      fmt('csr'),
    ]
    const expectErr = async (src: BufferSource, re: RegExp) => {
      try {
        await readCsrNpz(src, 'x')
      } catch (error) {
        expect(error).to.be.instanceOf(InputError)
        expect((error as Error).message).to.match(re)
        return
      }
      expect.fail('expected an InputError')
    }

    it('the good one reads', async () => {
      const m = await readCsrNpz(await archive(good()), 'x')
      expect(Array.from(m.csr.columnIndices)).to.deep.equal([0, 2, 1])
    })
    it('unsorted column indices, with a SciPy hint', async () => {
      const g = good()
      g[1] = {name: 'indices', descr: '<i4', shape: [3], data: Int32Array.of(2, 0, 1)}
      try {
        await readCsrNpz(await archive(g), 'x')
        expect.fail('expected an error')
      } catch (error) {
        expect((error as InputError).message).to.match(/not sorted/)
        expect((error as InputError).suggestion).to.match(/sum_duplicates/)
      }
    })
    it('a CSC matrix', async () => {
      const g = good()
      g[4] = fmt('csc')
      await expectErr(await archive(g), /'csc' matrix; only CSR/)
    })
    it('indptr of the wrong length, out-of-range int64 values, integer data', async () => {
      const g = good()
      g[2] = {name: 'indptr', descr: '<i4', shape: [2], data: Int32Array.of(0, 3)}
      await expectErr(await archive(g), /indptr has 2 entries, expected rows \+ 1 = 3/)
      const h = good()
      h[1] = {name: 'indices', descr: '<i8', shape: [3], data: BigInt64Array.of(0n, 1n << 40n, 1n)}
      await expectErr(await archive(h), /indices\[1\] = 1099511627776 is beyond the int32 range/)
      const k = good()
      k[0] = {name: 'data', descr: '<i4', shape: [3], data: Int32Array.of(1, 2, 3)}
      await expectErr(await archive(k), /values of dtype int32 are not supported/)
    })
    it('a plain npz is not CSR', async () => {
      await expectErr(await archive([{name: 'w', descr: '<f4', shape: [1], data: Float32Array.of(1)}]), /not a SciPy sparse/)
    })
  })

  it('writing refuses a pattern-only matrix', async () => {
    const csr: CsrMatrix = {rows: 1, cols: 1, rowOffsets: Int32Array.of(0, 0), columnIndices: new Int32Array(0), values: null, dtype: 'f32'}
    try {
      await writeCsrNpz({name: 'p', shape: [1, 1], csr}, join(tmp.dir, 'p.npz'))
      expect.fail('expected an error')
    } catch (error) {
      expect((error as Error).message).to.match(/pattern-only/)
    }
    writeFileSync(join(tmp.dir, 'touch'), '')
  })
})
