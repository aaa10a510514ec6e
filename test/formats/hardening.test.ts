/**
 * Regression tests for the parser bugs the fuzzer (npm run fuzz, test/fuzz) found. Each
 * case is the shrunk counterexample, or a hand-made file of the same class; before the fix
 * each one crashed (an exception other than InputError/UsageError, so exit 70 from the
 * CLI), allocated what the file did not justify, accepted a malformed file, or printed a
 * multi-line error.
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {SparseError} from '../../src/errors.js'
import {BufferPool, openTensorSource, readCsrInput, setStdinForTesting, writeNpy, writeSafetensors} from '../../src/formats/index.js'
import {AllocationViolation, installAllocGuard, uninstallAllocGuard, withAllocBudget} from '../fuzz/alloc-guard.js'
import {buildNpy, buildSafetensors, buildZip, bytesOf, npyDict} from '../fuzz/builders.js'

const MIB = 1 << 20

/** The error `fn` throws, which must be a clean one-line SparseError; no allocation over 1 MiB. */
async function cleanError(fn: () => Promise<unknown>): Promise<SparseError> {
  try {
    await withAllocBudget(MIB, 8 * MIB, fn)
  } catch (error) {
    if (error instanceof AllocationViolation) throw new Error(`allocated before checking: ${error.message}`)
    expect(error, String((error as Error)?.stack)).to.be.instanceOf(SparseError)
    const e = error as SparseError
    expect(['input', 'usage']).to.include(e.kind)
    expect(e.message, 'one line').to.not.match(/[\n\r]/)
    return e
  }
  throw new Error('expected an error')
}

const stdin = (b: Uint8Array) => {
  setStdinForTesting(b)
  return '-'
}

async function readAll(path: string, format?: string) {
  const src = await openTensorSource(path, format)
  try {
    const out = []
    for (const t of src.tensors) out.push(await src.read(t.name))
    return out
  } finally {
    await src.close()
  }
}

const i64 = (v: bigint[], descr = '<i8') => buildNpy({descr, shape: [v.length], data: bytesOf(BigInt64Array.from(v))}).bytes
const i32 = (v: number[], descr = '<i4') => buildNpy({descr, shape: [v.length], data: bytesOf(Int32Array.from(v))}).bytes
const f32 = (v: number[]) => buildNpy({descr: '<f4', shape: [v.length], data: bytesOf(Float32Array.from(v))}).bytes
const u3 = (codes: number[]) => buildNpy({descr: `<U${codes.length}`, shape: [], data: bytesOf(Uint32Array.from(codes))}).bytes

function csrNpz(over: Record<string, Uint8Array> = {}): Uint8Array {
  const members: Record<string, Uint8Array> = {
    indices: i32([1, 0]),
    indptr: i32([0, 1, 2]),
    format: u3([0x63, 0x73, 0x72]),
    shape: i64([2n, 3n]),
    data: f32([1, 2]),
    ...over,
  }
  return buildZip(Object.entries(members).map(([n, d]) => ({name: `${n}.npy`, data: d}))).bytes
}

describe('formats: hardening regressions (found by the fuzzer)', () => {
  let dir: string
  before(() => {
    installAllocGuard()
    dir = mkdtempSync(join(tmpdir(), 'sparse-hard-'))
  })
  after(() => {
    uninstallAllocGuard()
    setStdinForTesting(undefined)
    rmSync(dir, {recursive: true, force: true})
  })

  describe('.npy', () => {
    it('a header with double-quoted keys (valid for numpy) is read from a file, not a crash in npyjs', async () => {
      const data = bytesOf(Float32Array.from([1, 2, 3, 4, 5, 6]))
      const p = join(dir, 'dq.npy')
      writeFileSync(p, buildNpy({dict: `{"descr": "<f4", "fortran_order": False, "shape": (2, 3), }`, data}).bytes)
      const [t] = await readAll(p)
      expect(t.shape).to.deep.equal([2, 3])
      expect(Array.from(t.data)).to.deep.equal([1, 2, 3, 4, 5, 6])
    })

    it('a header with a key twice is refused as ambiguous (numpy and npyjs would read different dtypes)', async () => {
      const p = join(dir, 'dup.npy')
      writeFileSync(p, buildNpy({dict: `{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }`, data: new Uint8Array(8)}).bytes)
      const e = await cleanError(() => readAll(p))
      expect(e.message).to.match(/key descr appears twice/)
    })

    it('zero-byte dtypes are refused before a CSR member of 2^31 of them is allocated', async () => {
      const zero = buildNpy({descr: '<i0', shape: [2 ** 31], data: new Uint8Array(0)}).bytes
      const e = await cleanError(() => readCsrInput(stdin(csrNpz({indices: zero})), 'csr-npz'))
      expect(e.message).to.match(/zero-byte elements/)
      const v0 = buildNpy({descr: '<V0', shape: [2 ** 40], data: new Uint8Array(0)}).bytes
      expect((await cleanError(() => readAll(stdin(v0), 'npy'))).message).to.match(/zero-byte elements/)
    })

    it('integer widths other than 1, 2, 4, 8 bytes are refused (they were read as bytes)', async () => {
      const e = await cleanError(() => readCsrInput(stdin(csrNpz({indptr: buildNpy({descr: '<i3', shape: [3], data: new Uint8Array(9)}).bytes})), 'csr-npz'))
      expect(e.message).to.match(/indptr has dtype int24, expected int32 or int64/)
    })

    it('header text from the file never breaks the one-line message', async () => {
      const e = await cleanError(() => readAll(stdin(buildNpy({dict: `{'\nescr': '<f4', 'fortran_order': False, 'shape': (1,), }`, data: new Uint8Array(4)}).bytes), 'npy'))
      expect(e.message).to.include('\\nescr')
      const e2 = await cleanError(() => readAll(stdin(buildNpy({descr: "<f4\n'", shape: [1], data: new Uint8Array(4)}).bytes), 'npy'))
      expect(e2.code).to.match(/bad-npy|unsupported-dtype/)
    })
  })

  describe('.npz / ZIP', () => {
    it('an empty zip64 archive (it starts with the zip64 end record) is an empty .npz, not "wrong magic"', async () => {
      const src = await openTensorSource(stdin(buildZip([], {zip64: true}).bytes), 'npz')
      expect(src.tensors).to.deep.equal([])
      await src.close()
    })

    it('a zip64 value beyond 2^53 is a clean error (it was a RangeError)', async () => {
      const b = buildZip([{name: 'w.npy', data: f32([1])}], {zip64: true})
      const dv = new DataView(b.bytes.buffer)
      dv.setBigUint64(b.fields.find((f) => f.what === 'zip64 entry count')!.offset, 2n ** 63n, true)
      const e = await cleanError(() => readAll(stdin(b.bytes), 'npz'))
      expect(e.message).to.match(/zip64 field value 9223372036854775808 is out of range/)
    })

    it('a zip64 extra field longer than its entry is a clean error (it read past the central directory)', async () => {
      const b = buildZip([{name: 'w.npy', data: f32([1])}], {zip64: true})
      const dv = new DataView(b.bytes.buffer)
      dv.setUint16(b.fields.find((f) => f.what === 'w.npy zip64 extra length')!.offset, 0xfff0, true)
      const e = await cleanError(() => readAll(stdin(b.bytes), 'npz'))
      expect(e.message).to.match(/extra field of entry w\.npy overruns/)
    })

    it('member names with control characters are escaped in messages', async () => {
      const b = buildZip([{name: 'bad\nname.npy', data: buildNpy({descr: '<f4', shape: [9], data: new Uint8Array(4)}).bytes}]).bytes
      const e = await cleanError(() => readAll(stdin(b), 'npz'))
      expect(e.message).to.include('bad\\nname.npy')
    })
  })

  describe('.safetensors', () => {
    const st = (h: unknown, data = new Uint8Array(16)) => stdin(buildSafetensors(JSON.stringify(h), data).bytes)

    it('dtype names that are Object.prototype properties are unknown dtypes (they gave "needs NaN bytes")', async () => {
      for (const dtype of ['constructor', 'toString', '__proto__']) {
        const e = await cleanError(() => readAll(st({w: {dtype, shape: [4], data_offsets: [0, 16]}}), 'safetensors'))
        expect(e.message).to.match(new RegExp(`unknown dtype ${dtype}`))
      }
    })

    it('__metadata__ must be a map of strings', async () => {
      for (const meta of [3, [], null, {a: 1}, {a: {b: 'c'}}]) {
        const e = await cleanError(() => readAll(st({__metadata__: meta, w: {dtype: 'F32', shape: [4], data_offsets: [0, 16]}}), 'safetensors'))
        expect(e.message).to.match(/__metadata__ must be an object of strings/)
      }
      expect(await readAll(st({__metadata__: {format: 'pt'}, w: {dtype: 'F32', shape: [4], data_offsets: [0, 16]}}), 'safetensors')).to.have.length(1)
    })

    it('tensor names and JSON errors with line breaks stay on one line', async () => {
      const e = await cleanError(() => readAll(st({'a\nb': {dtype: 'F32', shape: [5], data_offsets: [0, 16]}}), 'safetensors'))
      expect(e.message).to.include('a\\nb')
      await cleanError(() => readAll(stdin(buildSafetensors('{"w":\n\n\u0000}', new Uint8Array(0)).bytes), 'safetensors'))
    })
  })

  describe('CSR .npz', () => {
    it('a <U string member with an invalid code point is a clean error (it was a RangeError)', async () => {
      const e = await cleanError(() => readCsrInput(stdin(csrNpz({format: u3([0xffffffff, 0x73, 0x72])})), 'csr-npz'))
      expect(e.message).to.match(/format holds an invalid character code 4294967295/)
    })

    it('tensor_shape must be the CSR\'s 2-D view with non-negative dimensions', async () => {
      const ts = (v: number[]) => buildNpy({descr: '<i4', shape: [v.length], data: bytesOf(Int32Array.from(v))}).bytes
      // [2, -1, -3] has the right product and first dimension: it was accepted.
      let e = await cleanError(() => readCsrInput(stdin(csrNpz({tensor_shape: ts([2, -1, -3])})), 'csr-npz'))
      expect(e.message).to.match(/tensor_shape\[1\] = -1 is negative/)
      // [6] is a 1 x 6 matrix, not 2 x 3.
      e = await cleanError(() => readCsrInput(stdin(csrNpz({tensor_shape: ts([6])})), 'csr-npz'))
      expect(e.message).to.match(/tensor_shape \(6\) is a 1x6 matrix, but the CSR shape is 2x3/)
      const [ok] = await readCsrInput(stdin(csrNpz({tensor_shape: ts([2, 1, 3])})), 'csr-npz')
      expect(ok.shape).to.deep.equal([2, 1, 3])
    })

    it('an int32 shape with a negative dimension is named as such', async () => {
      const e = await cleanError(() => readCsrInput(stdin(csrNpz({shape: i32([-1, 3]), indptr: i32([])})), 'csr-npz'))
      expect(e.message).to.match(/shape\[0\] = -1 is negative/)
    })
  })

  describe('CSR directory manifests', () => {
    const npz = csrNpz()
    function dirWith(manifest: unknown, name: string): string {
      const d = join(dir, name)
      mkdirSync(d)
      writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest))
      writeFileSync(join(d, 'a.npz'), npz)
      writeFileSync(join(d, 'b.npz'), npz)
      return d
    }
    const entry = (o: Record<string, unknown>) => ({name: 'a', shape: [2, 3], nnz: 2, file: 'a.npz', ...o})

    const bad: [string, unknown, RegExp][] = [
      ['duplicate names', {tensors: [entry({}), entry({file: 'b.npz'})]}, /tensor name "a" appears twice/],
      ['duplicate files', {tensors: [entry({}), entry({name: 'b'})]}, /file "a\.npz" appears twice/],
      ['negative dimensions', {tensors: [entry({shape: [-2, -3]})]}, /shape must be a list of non-negative integers/],
      ['the manifest as a tensor file', {tensors: [entry({file: 'manifest.json'})]}, /must be a plain file name/],
      ['an empty file name', {tensors: [entry({file: ''})]}, /must be a plain file name/],
      ['a null entry', {tensors: [null]}, /needs name, shape and file/],
      ['a shape whose 2-D view differs', {tensors: [entry({shape: [6]})]}, /shape \[6\] \(a 1x6 matrix\) but a\.npz is 2x3/],
      ['nnz that is not a count', {tensors: [entry({nnz: -1})]}, /nnz must be a non-negative integer/],
    ]
    for (const [what, manifest, message] of bad) {
      it(`refuses ${what}`, async () => {
        const e = await cleanError(() => readCsrInput(dirWith(manifest, what.replace(/\W+/g, '-'))))
        expect(e.code).to.equal('bad-manifest')
        expect(e.message).to.match(message)
      })
    }

    it('a manifest that is not JSON gets a one-line message', async () => {
      const d = join(dir, 'notjson')
      mkdirSync(d)
      writeFileSync(join(d, 'manifest.json'), '\n\u0000{')
      const e = await cleanError(() => readCsrInput(d))
      expect(e.message).to.match(/is not valid JSON/)
    })
  })

  it('npyDict helper sanity (the builders write what numpy writes)', () => {
    expect(npyDict('<f4', false, [3])).to.equal("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }")
  })
})

describe('formats: buffer reuse (TensorSource.release)', () => {
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sparse-pool-'))
  })
  after(() => rmSync(dir, {recursive: true, force: true}))

  it('BufferPool: best fit, only large buffers, at most maxBuffers (dropping the smallest)', () => {
    const pool = new BufferPool(2, 1024)
    pool.give(new ArrayBuffer(100)) // too small to keep
    expect(pool.bytes).to.equal(0)
    const a = new ArrayBuffer(4096)
    const b = new ArrayBuffer(2048)
    const c = new ArrayBuffer(8192)
    pool.give(a)
    pool.give(b)
    pool.give(c) // drops b
    expect(pool.bytes).to.equal(4096 + 8192)
    expect(pool.take(3000)).to.equal(a)
    expect(pool.take(3000)).to.equal(c)
    expect(pool.take(3000)).to.equal(undefined)
    expect(pool.take(100)).to.equal(undefined)
  })

  it('a released safetensors tensor lends its buffer to the next read, which still reads exactly its own bytes', async () => {
    const n = 1 << 19 // 2 MiB of f32 per tensor
    const a = Float32Array.from({length: n}, (_, i) => i)
    const b = Float32Array.from({length: n}, (_, i) => -i)
    const c = Float32Array.from({length: n / 2}, (_, i) => i * 0.5)
    const p = join(dir, 'pool.safetensors')
    await writeSafetensors([
      {name: 'a', shape: [n], dtype: 'f32', data: a},
      {name: 'b', shape: [n], dtype: 'f32', data: b},
      {name: 'c', shape: [n / 2], dtype: 'f32', data: c},
    ], p)
    const src = await openTensorSource(p)
    try {
      const ta = await src.read('a')
      const bufA = ta.data.buffer
      expect(ta.data[123]).to.equal(123)
      src.release(ta)
      const tb = await src.read('b')
      expect(tb.data.buffer).to.equal(bufA)
      expect(tb.data[123]).to.equal(-123)
      expect(tb.data.length).to.equal(n)
      src.release(tb)
      // A smaller tensor gets an exact view over the larger pooled buffer.
      const tc = await src.read('c')
      expect(tc.data.buffer).to.equal(bufA)
      expect(tc.data.length).to.equal(n / 2)
      expect(Array.from(tc.data.subarray(0, 3))).to.deep.equal([0, 0.5, 1])
      // Without release, reads get fresh buffers; releasing a foreign tensor is a no-op.
      const td = await src.read('a')
      expect(td.data.buffer).to.not.equal(bufA)
      src.release({name: 'x', shape: [4], dtype: 'f32', data: new Float32Array(1 << 20)})
      const te = await src.read('b')
      expect(te.data.buffer.byteLength).to.equal(n * 4)
    } finally {
      await src.close()
    }
  })

  it('an .npy source reuses its buffer after release', async () => {
    const p = join(dir, 'pool.npy')
    await writeNpy({name: 'w', shape: [512, 1024], dtype: 'f32', data: Float32Array.from({length: 512 * 1024}, (_, i) => i % 7)}, p)
    const src = await openTensorSource(p)
    try {
      const t1 = await src.read('pool')
      const buf = t1.data.buffer
      src.release(t1)
      const t2 = await src.read('pool')
      expect(t2.data.buffer).to.equal(buf)
      expect(t2.data[13]).to.equal(13 % 7)
    } finally {
      await src.close()
    }
  })
})
