/**
 * Limits on the formats side (see src/formats/limits.ts and the README's "Limits and
 * guarantees"): nnz and M×N beyond 2^31, K beyond the 16-bit index limit, N = 0, absurd
 * claimed sizes. Each either works or is a clear error raised before any allocation: the
 * allocation guard (test/fuzz/alloc-guard.ts) fails a test whose parser asks for more than
 * 1 MiB at once while reading a few hundred bytes. Files "larger" than the disk are sparse
 * files (truncate), so their size is real to the reader but costs no space.
 */
import {closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {InputError, SparseError, UsageError} from '../../src/errors.js'
import {
  convertFile,
  inspectCsr,
  inspectInput,
  openTensorSource,
  readCsrInput,
  setStdinForTesting,
  writeCsrNpz,
} from '../../src/formats/index.js'
import {MAX_EMPTY_ROWS} from '../../src/formats/limits.js'
import type {NamedCsr} from '../../src/types.js'
import {AllocationViolation, installAllocGuard, uninstallAllocGuard, withAllocBudget} from '../fuzz/alloc-guard.js'
import {buildNpy, buildSafetensors, buildZip, bytesOf, npyDict} from '../fuzz/builders.js'
import {runCli} from '../helpers/cli.js'

const MIB = 1 << 20

/** Run `fn` allowing at most 1 MiB per allocation; return the error it throws (or null). */
async function guarded(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await withAllocBudget(MIB, 8 * MIB, fn)
    return null
  } catch (error) {
    if (error instanceof AllocationViolation) throw new Error(`allocated before checking: ${error.message}`)
    return error
  }
}

function expectClean(e: unknown, code?: string | RegExp, message?: RegExp): void {
  expect(e, 'expected an error').to.be.instanceOf(SparseError)
  const s = e as SparseError
  expect(['input', 'usage']).to.include(s.kind)
  expect(s.message).to.not.include('\n')
  if (typeof code === 'string') expect(s.code).to.equal(code)
  else if (code) expect(s.code).to.match(code)
  if (message) expect(s.message).to.match(message)
}

const int64 = (v: bigint[]) => buildNpy({descr: '<i8', shape: [v.length], data: bytesOf(BigInt64Array.from(v))}).bytes
const int32 = (v: number[], shape?: (number | string)[]) => buildNpy({descr: '<i4', shape: shape ?? [v.length], data: bytesOf(Int32Array.from(v))}).bytes
const f32 = (v: number[], shape?: (number | string)[]) => buildNpy({descr: '<f4', shape: shape ?? [v.length], data: bytesOf(Float32Array.from(v))}).bytes
const fmt = buildNpy({descr: '<U3', shape: [], data: bytesOf(Uint32Array.from([0x63, 0x73, 0x72]))}).bytes

function csrZip(m: {indices: Uint8Array; indptr: Uint8Array; shape: Uint8Array; data: Uint8Array}): Uint8Array {
  return buildZip([
    {name: 'indices.npy', data: m.indices},
    {name: 'indptr.npy', data: m.indptr},
    {name: 'format.npy', data: fmt},
    {name: 'shape.npy', data: m.shape},
    {name: 'data.npy', data: m.data},
  ]).bytes
}

/** A sparse file of `size` bytes starting with `head`. */
function sparseFile(path: string, head: Uint8Array, size: number): void {
  const fd = openSync(path, 'w')
  writeSync(fd, head)
  closeSync(fd)
  truncateSync(path, size)
}

describe('hardening: size limits of the formats', function () {
  this.timeout(60_000)
  let dir: string
  before(() => {
    installAllocGuard()
    dir = mkdtempSync(join(tmpdir(), 'sparse-limits-'))
  })
  after(() => {
    uninstallAllocGuard()
    setStdinForTesting(undefined)
    rmSync(dir, {recursive: true, force: true})
  })

  const viaStdin = (bytes: Uint8Array) => {
    setStdinForTesting(bytes)
    return '-'
  }

  describe('nnz beyond 2^31', () => {
    it('a CSR .npz whose int64 indptr goes past 2^31 is refused, naming the int32 limit', async () => {
      const zip = csrZip({indices: int32([0]), indptr: int64([0n, 2n ** 31n + 5n]), shape: int64([1n, 4n]), data: f32([1])})
      const e = await guarded(() => readCsrInput(viaStdin(zip), 'csr-npz'))
      expectClean(e, 'bad-csr-npz', /indptr\[1\] = 2147483653 is beyond the int32 range/)
    })

    it('a member whose header claims 2^31 + 5 indices that are not there is refused before reading them', async () => {
      const lying = buildNpy({descr: '<i4', shape: [2 ** 31 + 5], data: new Uint8Array(8)}).bytes
      const zip = csrZip({indices: lying, indptr: int64([0n, 2n]), shape: int64([1n, 4n]), data: f32([1, 2])})
      const e = await guarded(() => readCsrInput(viaStdin(zip), 'csr-npz'))
      expectClean(e, 'truncated', /its \.npy header declares 8589934740 bytes \(shape \(2147483653\) of int32\) but the member holds 136/)
    })

    it('an .smtx claiming nnz = 2^31 - 1 is refused from the line lengths, before allocating', async () => {
      const e = await guarded(() => readCsrInput(viaStdin(new TextEncoder().encode('2, 2147483647, 2147483647\n0 1 2147483647\n0\n')), 'smtx'))
      expectClean(e, 'truncated', /column indices \(line 3\) should hold 2147483647 numbers/)
      const e2 = await guarded(() => readCsrInput(viaStdin(new TextEncoder().encode('2, 5, 2147483648\n0 1 2\n0 1\n')), 'smtx'))
      expectClean(e2, 'bad-smtx', /nnz = 2147483648 exceeds the int32 range/)
    })
  })

  describe('M×N beyond 2^31', () => {
    const big: NamedCsr = {name: 'big', shape: [100_000, 100_000], csr: {rows: 100_000, cols: 100_000, rowOffsets: new Int32Array(100_001), columnIndices: Int32Array.from([5, 99_999, 7]), values: Float32Array.from([1, 2, 3]), dtype: 'f32'}}
    for (let r = 1; r <= 100_000; r++) big.csr.rowOffsets[r] = r === 1 ? 2 : 3
    let path: string

    before(async () => {
      path = join(dir, 'big.npz')
      await writeCsrNpz(big, path)
    })

    it('a 100000 x 100000 CSR (10^10 cells, nnz 3) is read, validated and inspected', async () => {
      const [m] = await readCsrInput(path)
      expect(m.csr.rows).to.equal(100_000)
      expect(m.csr.cols).to.equal(100_000)
      expect(Array.from(m.csr.columnIndices)).to.deep.equal([5, 99_999, 7])
      const info = inspectCsr(m)
      expect(info.numel).to.equal(1e10)
      expect(info.denseBytes).to.deep.equal({f32: 4e10, f16: 2e10})
      expect(info.sparsity).to.be.closeTo(1 - 3e-10, 1e-15)
      expect(info.indices16).to.equal(false)
    })

    it('converting it to dense is a clear error before anything is allocated', async () => {
      const e = await guarded(() => convertFile({input: path, output: join(dir, 'big-dense.npy')}))
      expectClean(e, 'too-large', /a dense 100000x100000 matrix has 10000000000 elements, more than the 4294967296/)
    })

    it('a dense .npy of more than 2^32 elements (a 9.8 GB sparse file) is refused at open, before reading', async () => {
      const p = join(dir, 'huge.npy')
      const head = buildNpy({descr: '<f2', shape: [70_000, 70_000], data: new Uint8Array(0)}).bytes
      sparseFile(p, head, head.length + 70_000 * 70_000 * 2)
      const e = await guarded(() => openTensorSource(p))
      expectClean(e, 'too-large', /4900000000 elements, more than the 4294967296/)
    })

    it('a dense .npy of 2^31 + 2^20 elements (a 4.3 GB sparse f16 file) opens without reading its data', async () => {
      const p = join(dir, 'large.npy')
      const rows = 2 ** 11 + 1
      const cols = 2 ** 20
      const head = buildNpy({descr: '<f2', shape: [rows, cols], data: new Uint8Array(0)}).bytes
      sparseFile(p, head, head.length + rows * cols * 2)
      const src = (await withAllocBudget(MIB, 8 * MIB, () => openTensorSource(p))).value
      try {
        expect(src.tensors).to.deep.equal([{name: 'large', shape: [rows, cols], dtype: 'f16'}])
      } finally {
        await src.close()
      }
    })

    it('a .safetensors tensor of more than 2^32 elements is listed as unsupported; the others still read', async () => {
      const p = join(dir, 'huge.safetensors')
      const header = JSON.stringify({small: {dtype: 'F32', shape: [2, 2], data_offsets: [0, 16]}, huge: {dtype: 'F16', shape: [70_000, 70_000], data_offsets: [16, 16 + 9.8e9]}})
      const built = buildSafetensors(header, Uint8Array.from(bytesOf(Float32Array.from([1, 2, 3, 4]))))
      sparseFile(p, built.bytes, built.bytes.length + 9.8e9)
      const src = (await withAllocBudget(MIB, 8 * MIB, () => openTensorSource(p))).value
      try {
        expect(src.tensors.map((t) => t.name)).to.deep.equal(['small'])
        expect(src.unsupported).to.have.length(1)
        expect(src.unsupported[0].name).to.equal('huge')
        expect(src.unsupported[0].reason).to.match(/4900000000 elements/)
        expect(Array.from((await src.read('small')).data)).to.deep.equal([1, 2, 3, 4])
      } finally {
        await src.close()
      }
    })

    it('a dense shape whose 2-D view has more than 2^31 - 1 columns is refused, even when empty', async () => {
      const e = await guarded(() => openTensorSource(viaStdin(buildNpy({descr: '<f4', shape: [0, 2 ** 31], data: new Uint8Array(0)}).bytes)))
      expectClean(e, 'too-large', /0x2147483648, beyond the int32 limit/)
    })
  })

  describe('K beyond the 16-bit index limit', () => {
    for (const cols of [32_768, 32_769, 65_537, 1_000_000]) {
      it(`K = ${cols}: indices up to K - 1 round-trip; 16-bit indices only when K <= 32768`, async () => {
        const named: NamedCsr = {name: 'k', shape: [2, cols], csr: {rows: 2, cols, rowOffsets: Int32Array.from([0, 2, 3]), columnIndices: Int32Array.from([0, cols - 1, cols - 1]), values: Float32Array.from([1, 2, 3]), dtype: 'f32'}}
        const p = join(dir, `k${cols}.npz`)
        await writeCsrNpz(named, p)
        const [m] = await readCsrInput(p)
        expect(Array.from(m.csr.columnIndices)).to.deep.equal([0, cols - 1, cols - 1])
        const info = inspectCsr(m)
        expect(info.indices16).to.equal(cols <= 32_768)
        // f16 encoding: 2-byte values + 2- or 4-byte indices, plus int32 offsets.
        expect(info.csrBytes.f16).to.equal(3 * (2 + (cols <= 32_768 ? 2 : 4)) + 4 * 3)
      })
    }

    it('an index equal to K is refused', async () => {
      const zip = csrZip({indices: int32([0, 40_000]), indptr: int32([0, 2]), shape: int64([1n, 40_000n]), data: f32([1, 2])})
      const e = await guarded(() => readCsrInput(viaStdin(zip), 'csr-npz'))
      expectClean(e, 'invalid-csr', /columnIndices\[1\] = 40000 is out of range \[0, 40000\)/)
    })
  })

  describe('N = 0 and other empty shapes', () => {
    for (const shape of [[5, 0], [0, 5], [0, 0], [3, 0, 4], [0]]) {
      it(`a dense .npy of shape (${shape.join(', ')}) reads and inspects`, async () => {
        const bytes = buildNpy({descr: '<f4', shape, data: new Uint8Array(0)}).bytes
        const info = (await withAllocBudget(MIB, 8 * MIB, () => inspectInput(viaStdin(bytes)))).value
        const t = info.tensors[0]
        expect(t.shape).to.deep.equal(shape)
        expect(t.numel).to.equal(0)
        expect(t.nnz).to.equal(0)
        expect(t.sparsity).to.equal(0)
      })
    }

    it('CSR with N = 0 (5 x 0, nnz 0) round-trips through .npz and .smtx', async () => {
      const named: NamedCsr = {name: 'n0', shape: [5, 0], csr: {rows: 5, cols: 0, rowOffsets: new Int32Array(6), columnIndices: new Int32Array(0), values: new Float32Array(0), dtype: 'f32'}}
      const p = join(dir, 'n0.npz')
      await writeCsrNpz(named, p)
      const [m] = await readCsrInput(p)
      expect([m.csr.rows, m.csr.cols, m.csr.columnIndices.length]).to.deep.equal([5, 0, 0])
      const s = join(dir, 'n0.smtx')
      await convertFile({input: p, output: s})
      const [ms] = await readCsrInput(s)
      expect([ms.csr.rows, ms.csr.cols]).to.deep.equal([5, 0])
      const dense = join(dir, 'n0.npy')
      await convertFile({input: p, output: dense})
      const src = await openTensorSource(dense)
      expect(src.tensors[0].shape).to.deep.equal([5, 0])
      await src.close()
    })

    it('an .smtx with N = 0 and nnz > 0 is refused', async () => {
      const e = await guarded(() => readCsrInput(viaStdin(new TextEncoder().encode('1, 0, 1\n0 1\n0\n')), 'smtx'))
      expectClean(e, 'invalid-csr', /out of range \[0, 0\)/)
    })

    it(`an empty tensor may not claim more than ${MAX_EMPTY_ROWS} rows (its CSR offsets would not be justified by the file)`, async () => {
      const ok = buildNpy({descr: '<f4', shape: [MAX_EMPTY_ROWS, 0], data: new Uint8Array(0)}).bytes
      expect((await guarded(() => inspectInput(viaStdin(ok))))).to.equal(null)
      const e = await guarded(() => openTensorSource(viaStdin(buildNpy({descr: '<f4', shape: [2 ** 31 - 1, 0], data: new Uint8Array(0)}).bytes)))
      expectClean(e, 'too-large', /no elements but claims 2147483647 rows/)
    })

    it('`sparse prune` on a (6, 0) tensor: a report or a clean error, never a crash', async () => {
      const p = join(dir, 'n0-prune.npy')
      writeFileSync(p, buildNpy({descr: '<f4', shape: [6, 0], data: new Uint8Array(0)}).bytes)
      const r = await runCli(['prune', p, '-s', '0.5', '-o', join(dir, 'n0-pruned.npz')])
      expect([0, 1, 2], r.stderr).to.include(r.code)
      expect(r.stderr).to.not.match(/internal error|at .*\.js:\d+/)
      if (r.code === 0) {
        const [m] = await readCsrInput(join(dir, 'n0-pruned.npz'))
        expect([m.csr.rows, m.csr.cols]).to.deep.equal([6, 0])
      }
    })
  })

  describe('absurd claimed sizes: clean errors, no allocation', () => {
    const enc = (s: string) => new TextEncoder().encode(s)
    const cases: [string, string, () => Uint8Array, RegExp][] = [
      ['npy', '.npy claiming 10^12 float32 elements', () => buildNpy({descr: '<f4', shape: [1_000_000, 1_000_000], data: new Uint8Array(16)}).bytes, /truncated: shape \(1000000, 1000000\) of float32 needs 4000000000128 bytes but the file has 144/],
      ['npy', '.npy whose shape product overflows 2^53', () => buildNpy({descr: '<f4', shape: [2 ** 31, 2 ** 31, 2 ** 31], data: new Uint8Array(16)}).bytes, /is too large/],
      ['npy', '.npy with a negative dimension', () => buildNpy({dict: npyDict('<f4', false, ['-1', 4]), data: new Uint8Array(16)}).bytes, /malformed header/],
      ['npy', '.npy v2 whose header length claims 4 GiB', () => buildNpy({descr: '<f4', shape: [4], version: 2, headerLenDelta: 0xfffff000, data: new Uint8Array(16)}).bytes, /header claims \d+ bytes/],
      ['npy', '.npy with zero-byte elements claiming 2^40 of them', () => buildNpy({descr: '<V0', shape: [2 ** 40], data: new Uint8Array(0)}).bytes, /zero-byte elements/],
      ['safetensors', '.safetensors whose header length is 2^63', () => buildSafetensors('{}', new Uint8Array(0), {lenOverride: 2n ** 63n}).bytes, /header length 9223372036854775808 exceeds/],
      ['safetensors', '.safetensors claiming 10^12 elements', () => buildSafetensors(JSON.stringify({w: {dtype: 'F32', shape: [1_000_000, 1_000_000], data_offsets: [0, 4e12]}}), new Uint8Array(16)).bytes, /ends at data byte 4000000000000 but the file holds 16/],
      ['safetensors', '.safetensors whose shape product overflows', () => buildSafetensors(JSON.stringify({w: {dtype: 'F32', shape: [2 ** 40, 2 ** 40], data_offsets: [0, 16]}}), new Uint8Array(16)).bytes, /is too large/],
      ['safetensors', '.safetensors with a negative dimension', () => buildSafetensors(JSON.stringify({w: {dtype: 'F32', shape: [-2, -2], data_offsets: [0, 16]}}), new Uint8Array(16)).bytes, /non-negative integers/],
      ['safetensors', '.safetensors whose data offsets lie past the end', () => buildSafetensors(JSON.stringify({w: {dtype: 'F32', shape: [2], data_offsets: [2 ** 40, 2 ** 40 + 8]}}), new Uint8Array(16)).bytes, /ends at data byte/],
      ['smtx', '.smtx claiming 2^31 - 1 rows', () => enc('2147483647, 5, 0\n0 0\n\n'), /row offsets \(line 2\) should hold 2147483648 numbers/],
      ['csr-npz', 'CSR .npz whose shape claims 2^31 - 1 rows with a 2-entry indptr', () => csrZip({indices: int32([]), indptr: int32([0, 0]), shape: int64([2n ** 31n - 1n, 5n]), data: f32([])}), /indptr has 2 entries, expected rows \+ 1 = 2147483648/],
      ['csr-npz', 'CSR .npz whose shape is negative', () => csrZip({indices: int32([]), indptr: int32([0]), shape: int64([-1n, 5n]), data: f32([])}), /shape\[0\] = -1 is negative/],
      ['npz', '.npz whose zip64 member size claims 10^12 bytes', () => {
        const b = buildZip([{name: 'w.npy', data: f32([1, 2])}], {zip64: true})
        const dv = new DataView(b.bytes.buffer)
        for (const f of b.fields.filter((x) => /zip64 (compressed )?size/.test(x.what))) dv.setBigUint64(f.offset, 10n ** 12n, true)
        return b.bytes
      }, /lies outside the archive's data area/],
      ['npz', '.npz whose deflated member claims 2^31 bytes from a few', () => {
        const b = buildZip([{name: 'w.npy', data: f32([1, 2]), deflate: true}])
        const dv = new DataView(b.bytes.buffer)
        for (const f of b.fields.filter((x) => x.what === 'w.npy size')) dv.setUint32(f.offset, 2 ** 31, true)
        return b.bytes
      }, /more than DEFLATE can produce|declares \d+ bytes/],
    ]
    for (const [format, what, make, message] of cases) {
      it(`${what}`, async () => {
        const bytes = make()
        const e = await guarded(async () => {
          if (format === 'smtx' || format === 'csr-npz') return readCsrInput(viaStdin(bytes), format)
          const src = await openTensorSource(viaStdin(bytes), format)
          for (const t of src.tensors) await src.read(t.name)
          await src.close()
        })
        expectClean(e, undefined, message)
        expect(e).to.satisfy((x: unknown) => x instanceof InputError || x instanceof UsageError)
      })
    }
  })
})
