/**
 * The bitmap and 2:4 formats, built by the addon on the host (CPU: runs everywhere), decoded
 * here independently from their documented layouts (native/common/bitmap_tiles.h,
 * native/common/sparse24.h) back to the matrix, entry by entry.
 */
import {expect} from 'chai'

import {loadAddon} from '../../src/kernels/binding.js'
import {csrTileStats} from '../../src/sparse/memory.js'
import {createRng} from '../../src/sparse/random.js'
import {randomPattern, twoFourPattern} from './helpers.js'

function popcount(x: number): number {
  let c = 0
  for (let v = x >>> 0; v; v &= v - 1) c++
  return c
}

/** A random 2:4 CSR (columns ascending, twoFourPattern) with random nonzero f16 bit patterns. */
function random24(m: number, k: number, seed: number, keep: (row: number, group: number) => number) {
  const rng = createRng(seed)
  const {rowOffsets, columnIndices} = twoFourPattern(m, k, () => rng.nextUint32(), keep)
  const values = new Uint16Array(columnIndices.length).map(() => 1 + (rng.nextUint32() % 0x7bff))
  return {rowOffsets, columnIndices, values}
}

describe('bitmap and 2:4 formats (built on the host)', () => {
  const addon = loadAddon()

  for (const [m, k, nnz, seed] of [
    [45, 300, 45 * 290, 1], // almost dense tiles (values run past 512 bytes)
    [300, 1000, 30_000, 2], // several strips, a partial last k-tile
    [17, 129, 5, 3], // nearly empty
    [1, 1, 1, 4],
    [16, 16, 256, 5], // one completely dense tile
  ] as const) {
    it(`bitmap tiles decode back to the CSR matrix: M=${m} K=${k} nnz=${nnz}`, () => {
      const csr = randomPattern(m, k, nnz, seed)
      const rng = createRng(seed + 100)
      const values = new Uint16Array(nnz).map(() => 1 + (rng.nextUint32() % 60000))
      const t = addon.bitmapFormat({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values})
      const strips = Math.ceil(m / 16)
      const ktiles = Math.ceil(k / 16)
      expect([t.strips, t.ktiles]).to.deep.equal([strips, ktiles])
      expect(t.offsets.length).to.equal(strips * ktiles + 1)
      expect(t.data.length).to.equal(4 * t.offsets[strips * ktiles])
      const expected = new Map<number, number>()
      for (let r = 0; r < m; r++) for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) expected.set(r * k + csr.columnIndices[i], values[i])
      const seen = new Map<number, number>()
      const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)
      const halves = new Uint16Array(t.data.buffer, t.data.byteOffset, t.data.length * 2)
      for (let s = 0; s < strips; s++) {
        for (let kt = 0; kt < ktiles; kt++) {
          const w = 4 * t.offsets[s * ktiles + kt]
          const size = 16 * (t.offsets[s * ktiles + kt + 1] - t.offsets[s * ktiles + kt])
          let count = 0
          for (let q = 0; q < 4; q++) {
            const lo = t.data[w + q]
            const hi = t.data[w + 4 + q]
            const start = bytes[4 * w + 32 + q]
            expect(start, 'the low half-block starts where the blocks before it end').to.equal(count)
            expect(bytes[4 * w + 36 + q], 'the high half-block starts after the low one').to.equal(start + popcount(lo))
            for (let bit = 0; bit < 64; bit++) {
              const set = bit < 32 ? (lo >>> bit) & 1 : (hi >>> (bit - 32)) & 1
              if (!set) continue
              // Block q: rows 8 (q % 2) + bit / 8, columns 8 (q / 2) + bit % 8 of the tile.
              const row = s * 16 + (q & 1) * 8 + (bit >> 3)
              const col = kt * 16 + (q >> 1) * 8 + (bit & 7)
              expect(row < m && col < k, 'no bits past M or K').to.equal(true)
              seen.set(row * k + col, halves[2 * w + 20 + count])
              count++
            }
          }
          expect(size, 'a tile is its header and values, padded to 16 bytes').to.equal(Math.ceil((40 + 2 * count) / 16) * 16)
        }
      }
      expect(seen).to.deep.equal(expected)
    })
  }

  it('bitmap: a repeated column is an error', () => {
    const rowOffsets = Int32Array.from([0, 2])
    expect(() => addon.bitmapFormat({m: 1, k: 10, rowOffsets, columnIndices: Int32Array.from([4, 4]), values: new Uint16Array([1, 2])})).to.throw(
      /repeated column 4 in row 0/,
    )
  })

  for (const [m, k, strips, steps] of [
    [45, 300, 2, 3],
    [16, 32, 1, 1],
    [130, 1000, 8, 8],
  ] as const) {
    it(`2:4 tiles staged for the streaming engine: M=${m} K=${k}, ${strips} strips x ${steps} k-steps per stage`, () => {
      const csr = random24(m, k, 11, (r: number, g: number) => (r + g) % 3)
      const t = addon.sp24Format({m, k, ...csr})
      const staged = addon.sp24Staged({m, k, ...csr, strips, steps})
      const rbs = Math.ceil(t.strips / strips)
      const kst = Math.ceil(t.ksteps / steps)
      expect(staged.length).to.equal(rbs * kst * strips * steps * 576)
      const words = new DataView(staged.buffer, staged.byteOffset, staged.byteLength)
      for (let rb = 0; rb < rbs; rb++)
        for (let ks = 0; ks < kst; ks++)
          for (let q = 0; q < strips; q++)
            for (let kt = 0; kt < steps; kt++) {
              const at = (((rb * kst + ks) * strips + q) * steps + kt) * 576
              const strip = rb * strips + q
              const step = ks * steps + kt
              const inside = strip < t.strips && step < t.ksteps
              const tile = strip * t.ksteps + step
              for (let i = 0; i < 256; i++) expect(words.getUint16(at + 2 * i, true)).to.equal(inside ? t.values[tile * 256 + i] : 0)
              for (let w = 0; w < 16; w++) expect(words.getUint32(at + 512 + 4 * w, true)).to.equal(inside ? t.meta[tile * 16 + w] : 0x44444444)
            }
    })
  }

  it('sp24Staged refuses stage shapes out of range and matrices that are not 2:4', () => {
    const csr = random24(16, 32, 5, () => 2)
    expect(() => addon.sp24Staged({m: 16, k: 32, ...csr, strips: 0, steps: 8})).to.throw(RangeError, /strips and steps/)
    const rowOffsets = Int32Array.from([0, 3])
    const columnIndices = Int32Array.from([0, 1, 2])
    const values = Uint16Array.from([0x3c00, 0x3c00, 0x3c00])
    expect(() => addon.sp24Staged({m: 1, k: 4, rowOffsets, columnIndices, values, strips: 1, steps: 1})).to.throw(RangeError, /not 2:4/)
  })

  for (const [m, k, seed, label, keep] of [
    [16, 32, 1, 'one tile, exactly two per group', () => 2],
    [45, 300, 2, 'M and K not multiples of 16 and 32', () => 2],
    [33, 70, 3, 'groups with 0, 1 or 2 nonzeros', (r: number, g: number) => (r * 7 + g) % 3],
    [1, 1, 4, 'one element', () => 1],
  ] as const) {
    it(`2:4 tiles round-trip to the CSR matrix: ${label}`, () => {
      const csr = random24(m, k, seed, keep)
      const t = addon.sp24Format({m, k, ...csr})
      const strips = Math.ceil(m / 16)
      const ksteps = Math.ceil(k / 32)
      expect([t.strips, t.ksteps]).to.deep.equal([strips, ksteps])
      expect(t.values.length).to.equal(strips * ksteps * 256)
      expect(t.meta.length).to.equal(strips * ksteps * 16)
      // Independent decode of one element: lane (r % 8) * 4 + (cc % 8) / 2, register
      // 2 (cc / 8) + r / 8, half cc % 2; metadata word 2 (r % 8) + g / 4, bits 16 (r / 8) + 4 (g % 4).
      const rows: number[][] = Array.from({length: m}, () => [])
      for (let row = 0; row < m; row++) {
        const s = Math.floor(row / 16)
        const r = row % 16
        for (let j = 0; j < ksteps; j++) {
          const tile = s * ksteps + j
          for (let cc = 0; cc < 16; cc++) {
            const slot = ((r & 7) * 4 + ((cc & 7) >> 1)) * 8 + ((cc >> 3) * 2 + (r >> 3)) * 2 + (cc & 1)
            const v = t.values[tile * 256 + slot]
            const g = cc >> 1
            const nib = (t.meta[tile * 16 + (r & 7) * 2 + (g >> 2)] >>> ((r >> 3) * 16 + (g & 3) * 4)) & 15
            expect(nib & 3, 'indices ascend within a group').to.be.lessThan(nib >> 2)
            if ((v & 0x7fff) === 0) continue
            rows[row].push(j * 32 + g * 4 + ((nib >> (2 * (cc & 1))) & 3), v)
          }
        }
      }
      const flat: number[] = []
      for (let row = 0; row < m; row++) for (let i = csr.rowOffsets[row]; i < csr.rowOffsets[row + 1]; i++) flat.push(row, csr.columnIndices[i], csr.values[i])
      const got: number[] = []
      rows.forEach((pairs, row) => {
        for (let i = 0; i < pairs.length; i += 2) got.push(row, pairs[i], pairs[i + 1])
      })
      expect(got).to.deep.equal(flat)
      const back = addon.sp24ToCsr({m, k, values: t.values, meta: t.meta})
      expect(Array.from(back.rowOffsets)).to.deep.equal(Array.from(csr.rowOffsets))
      expect(Array.from(back.columnIndices)).to.deep.equal(Array.from(csr.columnIndices))
      expect(Array.from(back.values)).to.deep.equal(Array.from(csr.values))
    })
  }

  // The GEMM engine's `_ss` runs (v61), decoded here from their documented layout
  // (native/common/sparse24.h, StageSp24Runs) back to the CSR matrix; every byte outside the
  // matrix checked to be padding (values zero, metadata 0x44444444).
  for (const [m, k, unitMultiple, seed, label, keep] of [
    [16, 32, 1, 1, 'one tile, exactly two per group', () => 2],
    [45, 300, 1, 2, 'M and K not multiples of 16 and 64', (r: number, g: number) => (r * 7 + g) % 3],
    [130, 70, 1, 3, 'two units; an odd number of k-steps (the last stage half padding)', () => 2],
    [800, 96, 2, 4, '7 units padded to 8 (tiles of 256 rows)', (r: number, g: number) => (r + g) % 3],
    [800, 96, 6, 5, '7 units padded to 12 (the workbench: tiles of 128, 256 and 384 rows)', () => 2],
    [1, 1, 1, 6, 'one element', () => 1],
  ] as const) {
    it(`2:4 runs for the GEMM engine's _ss kernels decode to the CSR matrix: ${label}`, () => {
      const csr = random24(m, k, seed, keep)
      const runs = addon.sp24Runs({m, k, ...csr, unitMultiple})
      const ksteps = Math.ceil(k / 32)
      const kstages = Math.ceil(ksteps / 2)
      const units = Math.ceil(Math.ceil(m / 128) / unitMultiple) * unitMultiple
      const runBytes = 128 * 64 + 128 * 8
      expect(runs.length).to.equal(units * kstages * runBytes)
      const view = new DataView(runs.buffer, runs.byteOffset, runs.byteLength)
      const got: number[][] = Array.from({length: m}, () => [])
      for (let u = 0; u < units; u++)
        for (let ks = 0; ks < kstages; ks++) {
          const run = (u * kstages + ks) * runBytes
          for (let r = 0; r < 128; r++) {
            const row = 128 * u + r
            for (let kt = 0; kt < 2; kt++) {
              const inside = row < m && 2 * ks + kt < ksteps
              const meta = run + 128 * 64 + Math.floor(r / 16) * 128 + kt * 64
              for (let cc = 0; cc < 16; cc++) {
                const c = 16 * kt + cc
                const v = view.getUint16(run + 64 * r + 16 * ((c >> 3) ^ ((r >> 1) & 3)) + 2 * (c & 7), true)
                const g = cc >> 1
                const word = view.getUint32(meta + 4 * (2 * (r & 7) + (g >> 2)), true)
                const nib = (word >>> (16 * ((r & 15) >> 3) + 4 * (g & 3))) & 15
                if (!inside) {
                  expect(v, `padding value at row ${row}`).to.equal(0)
                  if (Math.floor(row / 16) * 16 >= m || 2 * ks + kt >= ksteps) expect(word, 'padding metadata').to.equal(0x44444444)
                  continue
                }
                expect(nib & 3, 'indices ascend within a group').to.be.lessThan(nib >> 2)
                if ((v & 0x7fff) === 0) continue
                got[row].push(64 * ks + 32 * kt + 4 * g + ((nib >> (2 * (cc & 1))) & 3), v)
              }
            }
          }
        }
      const flat: number[] = []
      for (let row = 0; row < m; row++) for (let i = csr.rowOffsets[row]; i < csr.rowOffsets[row + 1]; i++) flat.push(row, csr.columnIndices[i], csr.values[i])
      const back: number[] = []
      got.forEach((pairs, row) => {
        const order = Array.from({length: pairs.length / 2}, (_, i) => i).sort((a, b) => pairs[2 * a] - pairs[2 * b])
        for (const i of order) back.push(row, pairs[2 * i], pairs[2 * i + 1])
      })
      expect(back).to.deep.equal(flat)
    })
  }

  it('sp24Runs refuses a matrix that is not 2:4, and a unit multiple out of range', () => {
    const rowOffsets = Int32Array.from([0, 3])
    const columnIndices = Int32Array.from([0, 1, 2])
    const values = Uint16Array.from([0x3c00, 0x3c00, 0x3c00])
    expect(() => addon.sp24Runs({m: 1, k: 4, rowOffsets, columnIndices, values, unitMultiple: 1})).to.throw(RangeError, /not 2:4/)
    const csr = random24(16, 32, 7, () => 2)
    expect(() => addon.sp24Runs({m: 16, k: 32, ...csr, unitMultiple: 0})).to.throw(RangeError, /unitMultiple/)
    expect(() => addon.sp24Runs({m: 16, k: 32, ...csr, unitMultiple: 9})).to.throw(RangeError, /unitMultiple/)
  })

  it('2:4: a matrix that is not 2:4 is refused, naming the first offending group', () => {
    // Row 1 has three nonzeros in columns 4..7.
    const rowOffsets = Int32Array.from([0, 2, 5])
    const columnIndices = Int32Array.from([0, 1, 4, 5, 7])
    const values = new Uint16Array([1, 2, 3, 4, 5])
    expect(() => addon.sp24Format({m: 2, k: 8, rowOffsets, columnIndices, values})).to.throw(RangeError, 'not 2:4: row 1, columns 4..7 hold 3 nonzeros (at most 2)')
  })

  it('2:4: stored zeros do not count as nonzeros', () => {
    const rowOffsets = Int32Array.from([0, 4])
    const columnIndices = Int32Array.from([0, 1, 2, 3])
    const values = new Uint16Array([0x3c00, 0, 0x8000, 0x4000])
    const t = addon.sp24Format({m: 1, k: 4, rowOffsets, columnIndices, values})
    const back = addon.sp24ToCsr({m: 1, k: 4, values: t.values, meta: t.meta})
    expect(Array.from(back.columnIndices)).to.deep.equal([0, 3])
  })

  it('2:4: metadata with repeated indices is refused when decoding', () => {
    expect(() => addon.sp24ToCsr({m: 16, k: 32, values: new Uint16Array(256), meta: new Uint32Array(16)})).to.throw(RangeError, /not ascending/)
  })
})

// The streaming engine's launch plan (native/common/stream_plan.h), pure C++: the resident
// counts are an H200's for the 2:4 engine kernel measured on 2026-12-01 (132 blocks, and 66 /
// 30 clusters of 2 / 4), the rest made up where they do not change the answer.
describe("the streaming engine's launch plan (host)", () => {
  const addon = loadAddon()
  const h200 = Int32Array.from([132, 66, 44, 30, 26, 22, 18, 16])
  const plan = (rowBlocks: number, kstages: number, resident = h200) => addon.streamPlan({rowBlocks, kstages, resident})

  it('picks what the H200 measured: one block per row block, split-K clusters, or stream-K', () => {
    // 11008 rows of 128: 86 row blocks fit one block each, 2-clusters do not (66): no partial sums.
    expect(plan(86, 16)).to.deep.equal({grid: 86, cluster: 0})
    // 4096 rows (32 row blocks): clusters of 4 do not all fit at once (30), of 3 do: 16 stages -> 6.
    expect(plan(32, 16)).to.deep.equal({grid: 96, cluster: 3})
    expect(plan(32, 43)).to.deep.equal({grid: 96, cluster: 3})
    // 64-row blocks of 4096 rows: clusters of 2 (64 of 66 resident).
    expect(plan(64, 16)).to.deep.equal({grid: 128, cluster: 2})
    // More row blocks than blocks at once: stream-K over every resident block.
    expect(plan(172, 16)).to.deep.equal({grid: 132, cluster: 0})
  })

  it('prefers the smaller cluster on a tie and skips sizes that cannot run', () => {
    expect(plan(10, 2)).to.deep.equal({grid: 20, cluster: 2})
    expect(plan(10, 1)).to.deep.equal({grid: 10, cluster: 0})
    expect(plan(10, 16, Int32Array.from([132, 0, 0, 0, 0, 0, 0, 0]))).to.deep.equal({grid: 10, cluster: 0})
    expect(plan(200, 4, Int32Array.from([0, 0, 0, 0, 0, 0, 0, 0]))).to.deep.equal({grid: 1, cluster: 0})
  })

  it('is always one wave, with the fewest stages per block a one-wave choice allows', () => {
    const rng = createRng(23)
    for (let t = 0; t < 2000; t++) {
      const resident = Int32Array.from({length: 8}, (_, i) => (rng.nextUint32() % 5 === 0 ? 0 : 1 + (rng.nextUint32() % (264 >> i))))
      const rowBlocks = 1 + (rng.nextUint32() % 300)
      const kstages = 1 + (rng.nextUint32() % 64)
      const p = plan(rowBlocks, kstages, resident)
      const fits = [1, 2, 3, 4, 5, 6, 7, 8].filter((c) => rowBlocks <= resident[c - 1])
      if (fits.length === 0) {
        expect(p.cluster, 'stream-K').to.equal(0)
        expect(p.grid).to.equal(Math.max(1, Math.min(rowBlocks * kstages, resident[0])))
        continue
      }
      const best = Math.min(...fits.map((c) => Math.ceil(kstages / c)))
      const c = p.cluster > 1 ? p.cluster : 1
      expect(fits, `cluster ${c} fits at once`).to.include(c)
      expect(p.grid).to.equal(rowBlocks * c)
      expect(Math.ceil(kstages / c)).to.equal(best)
    }
  })

  it('prefers the engine to the mma.sp 2:4 kernel except at N <= 8 on small, short matrices', () => {
    const wins = (m: number, k: number, n: number) => addon.stream24Wins({m, k, n})
    // v18 (both forced, N = 1 and 8): the mma.sp kernel faster or within 1 % on the 8 shapes of
    // at most 4096 rows and 2560 columns measured, the engine faster on the 14 others (up to
    // 1.51x: 1024 x 8192).
    for (const [m, k] of [[256, 1024], [1024, 1024], [2048, 2048], [4096, 2048], [4096, 2560], [2560, 2560]])
      expect([1, 8, 9, 16, 64].map((n) => wins(m, k, n)), `${m} x ${k}`).to.deep.equal([false, false, true, true, true])
    for (const [m, k] of [[4097, 2048], [4096, 2561], [1024, 8192], [8192, 1024], [5120, 1536], [4096, 4096], [11008, 4096]])
      expect([1, 3, 8, 16, 64].map((n) => wins(m, k, n)), `${m} x ${k}`).to.deep.equal([true, true, true, true, true])
    expect(() => addon.stream24Wins({m: 0, k: 4, n: 1})).to.throw(RangeError, /at least 1/)
  })

  it('runs the 2:4 engine on 64-row blocks where their plan splits K or their blocks are short', () => {
    // The H200's residency of the 64-row kernel (one block per SM; clusters of 3 fit 39 times, of
    // 4 fewer than 32: the plans v17-v18 traced), and a GPU of 100 SMs.
    const h200 = Int32Array.from([132, 66, 39, 31, 24, 18, 16, 14])
    const small = Int32Array.from([100, 50, 30, 24, 18, 14, 12, 10])
    const rows = (m: number, k: number, n: number, resident = h200, pad?: 'auto' | 'all' | 'off') => addon.stream24Rows({m, k, n, resident, pad})
    // 4096^2: 64 row blocks of 64 in clusters of 2; never at N 9-15 (N = 1 since v19); at N = 16
    // its clusters' shares are 8 K stages each (v22); never at N 33-63 not a multiple of 8 where
    // the consumers lay out B's rows ('off'; v41). With B padded to 64 columns there ('auto', the
    // default since v44) N = 64's rule; with every N padded ('all'), N 9-15 as N = 16.
    const ns = [1, 3, 8, 9, 15, 16, 17, 29, 32, 33, 40, 56, 57, 63, 64]
    const off = [64, 64, 64, 128, 128, 64, 64, 64, 64, 128, 64, 64, 128, 128, 64]
    const auto = [64, 64, 64, 128, 128, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64]
    expect(ns.map((n) => rows(4096, 4096, n)), 'the default: auto').to.deep.equal(auto)
    expect(ns.map((n) => rows(4096, 4096, n, h200, 'off'))).to.deep.equal(off)
    expect(ns.map((n) => rows(4096, 4096, n, h200, 'auto'))).to.deep.equal(auto)
    expect(ns.map((n) => rows(4096, 4096, n, h200, 'all'))).to.deep.equal(ns.map(() => 64))
    for (const [m, k] of [[4096, 11008], [3072, 4096], [2048, 8192]]) {
      expect(rows(m, k, 63, h200, 'off'), `${m} x ${k} at N = 63`).to.equal(128)
      expect(rows(m, k, 63), `${m} x ${k} at N = 63, B padded`).to.equal(rows(m, k, 64))
    }
    // Where N = 64 runs 128 rows, so does a padded N = 63 (6144 x 4096: 96 row blocks of 16 stages alone).
    expect([33, 63, 64].map((n) => rows(6144, 4096, n, h200, 'auto'))).to.deep.equal([128, 128, 128])
    // N = 16: 64 rows only where each block streams at most 8 K stages: 4096 x 11008's clusters
    // of 2 share 43 stages (22 a block), 2048 x 8192's of 3 share 32 (11); 8192 x 2048 runs one
    // block per row block of 8, 6144 x 4096 one of 16.
    for (const [m, k, want] of [[4096, 2048, 64], [8192, 2048, 64], [1024, 4096, 64], [4096, 11008, 128], [4096, 14336, 128], [2048, 8192, 128], [6144, 4096, 128], [11008, 4096, 128]])
      expect(rows(m, k, 16), `${m} x ${k} at N = 16`).to.equal(want)
    // N = 1 as N = 8: 6144 x 4096's 96 row blocks of 16 stages alone stay on 128 rows.
    expect([1, 8].map((n) => rows(6144, 4096, n))).to.deep.equal([128, 128])
    // N 17-31 (padded to 32 on the 64-row kernel by default): the rule's answer is N = 32's either way.
    for (const [m, k] of [[4096, 4096], [4096, 11008], [6144, 4096], [11008, 4096], [2048, 8192]])
      for (const mode of ['auto', 'off', 'all'] as const)
        expect([17, 20, 27, 31].map((n) => rows(m, k, n, h200, mode)), `${m} x ${k}, ${mode}`).to.deep.equal([17, 20, 27, 31].map(() => rows(m, k, 32)))
    // Split K: 2048 x 8192 (clusters of 3), 4096 x 11008 (2), 1024 x 4096 (6).
    for (const [m, k] of [[2048, 8192], [4096, 11008], [4096, 14336], [1024, 4096], [2048, 2048]])
      expect([8, 32, 64].map((n) => rows(m, k, n)), `${m} x ${k}`).to.deep.equal([64, 64, 64])
    // One block per row block: of 8 K stages (K = 2048) yes, of 16 (K = 4096) no; 172 row blocks
    // of 11008 x 4096 run stream-K: no.
    for (const m of [5120, 6144, 8192]) expect(rows(m, 2048, 64), `${m} x 2048`).to.equal(64)
    expect(rows(6144, 2049, 64), '9 stages').to.equal(128)
    for (const m of [5120, 6144, 11008, 14336]) expect([8, 32, 64].map((n) => rows(m, 4096, n)), `${m} x 4096`).to.deep.equal([128, 128, 128])
    expect(rows(11008, 2048, 64), 'stream-K').to.equal(128)
    // The residency decides: on 100 SMs 4096^2's 64 row blocks of 64 fit only one a block (16 stages).
    expect(rows(4096, 4096, 64, small)).to.equal(128)
    expect(rows(4096, 2048, 64, small)).to.equal(64)
    const none = Int32Array.from([132, 0, 0, 0, 0, 0, 0, 0])
    expect(rows(4096, 4096, 64, none), 'no clusters').to.equal(128)
    expect(() => addon.stream24Rows({m: 4096, k: 0, n: 8, resident: h200})).to.throw(RangeError, /at least 1/)
    expect(() => addon.stream24Rows({m: 4096, k: 4096, n: 8, resident: h200, pad: 'some' as 'all'})).to.throw(RangeError, /pad must be one of auto\|all\|off/)
    expect(() => addon.stream24Rows({m: 64, k: 64, n: 8, resident: Int32Array.from([-1, 0, 0, 0, 0, 0, 0, 0])})).to.throw(RangeError, /negative/)
  })

  // B padded to its instruction N before the engine streams it (v43; Stream24PadColumns, the
  // default 'auto' since v44's A/B on the H100): N 33-63 not a multiple of 8 on both kernels (to 64
  // columns: padded / unpadded 0.68-0.92), N 17-31 not a multiple of 8 on the 64-row kernel only
  // (to 32: 0.70-0.95 on w4, 0.95-1.08 on w8); never N 9-15 or N = 24, 40, 48, 56 (the copy kernel
  // costs more than it saves there). 'all' pads every N 9-63 narrower than its box, for A/B runs;
  // 'off' none. N <= 8 (B copied whole, or N = 1's kernel) and N = 16, 32, 64 never.
  it('pads B by default at N 33-63 not a multiple of 8, and at N 17-31 not one on the 64-row kernel; every N 9-63 narrower than its box with pad: all', () => {
    const pad = (n: number, mode?: 'auto' | 'all' | 'off', rows?: 64 | 128) => addon.stream24Pad({n, pad: mode, rows})
    const ns = [1, 5, 8, 9, 13, 15, 16, 17, 20, 24, 29, 31, 32, 33, 39, 40, 41, 48, 56, 57, 63, 64, 65]
    const w8 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 64, 0, 64, 0, 0, 64, 64, 0, 0]
    const w4 = [0, 0, 0, 0, 0, 0, 0, 32, 32, 0, 32, 32, 0, 64, 64, 0, 64, 0, 0, 64, 64, 0, 0]
    expect(ns.map((n) => pad(n, 'auto'))).to.deep.equal(w8)
    expect(ns.map((n) => pad(n, 'auto', 128))).to.deep.equal(w8)
    expect(ns.map((n) => pad(n, 'auto', 64))).to.deep.equal(w4)
    expect(ns.map((n) => pad(n)), 'the default: auto').to.deep.equal(w8)
    expect(ns.map((n) => pad(n, undefined, 64)), 'the default: auto (64 rows)').to.deep.equal(w4)
    const all = [0, 0, 0, 16, 16, 16, 0, 32, 32, 32, 32, 32, 0, 64, 64, 64, 64, 64, 64, 64, 64, 0, 0]
    for (const rows of [64, 128] as const) {
      expect(ns.map((n) => pad(n, 'all', rows))).to.deep.equal(all)
      expect(ns.map((n) => pad(n, 'off', rows))).to.deep.equal(ns.map(() => 0))
    }
    expect(() => addon.stream24Pad({n: 0})).to.throw(RangeError, /at least 1/)
    expect(() => addon.stream24Pad({n: 40, pad: 'on' as 'all'})).to.throw(RangeError, /pad must be one of/)
    expect(() => addon.stream24Pad({n: 40, rows: 96 as 64})).to.throw(RangeError, /rows must be 64 or 128/)
  })

  // The L2 prefetch of the next stage past the ring (v46, v47: Stream24L2Ahead): one stage on plans
  // of one block per row block and on split-K clusters at every N, and on stream-K plans (fewer
  // blocks than row blocks) unless their shares pass 25 stages a block at N > 16 (H100, K = 4096:
  // 20480 x 4096, 19.4 stages, 0.82-0.92x the time at N 16-64 but 48; 24576 x 4096, 23.3, 0.85-0.91x
  // at N 16-32, 0.98-1.015x at 48-64; 28672 x 4096, 27.2, 1.02-1.06x at N 48-64).
  it('keeps one stage ahead in L2 except on long stream-K shares at N > 16, and none on DRAM of 4000 GB/s or more', () => {
    const ahead = (grid: number, cluster: number, rowBlocks: number, kstages: number, n: number) =>
      addon.stream24L2Ahead({grid, cluster, rowBlocks, kstages, n})
    const ns = [1, 8, 9, 16, 17, 24, 32, 33, 63, 64]
    const ones = ns.map(() => 1)
    // 14336 x 4096 on w8: 112 row blocks, one block each (however long the K walk).
    expect(ns.map((n) => ahead(112, 0, 112, 16, n))).to.deep.equal(ones)
    expect(ns.map((n) => ahead(112, 0, 112, 64, n))).to.deep.equal(ones)
    // 4096^2 on w4: 64 row blocks in clusters of 2.
    expect(ns.map((n) => ahead(128, 2, 64, 16, n))).to.deep.equal(ones)
    // Stream-K on 132 blocks: 20480 and 24576 x 4096 (160 and 192 row blocks of 16 stages: 19.4 and
    // 23.3 a block) keep it; 28672 x 4096 (224: 27.2) and 20480 x 8192 (160 of 32: 38.8) drop it
    // past N = 16.
    expect(ns.map((n) => ahead(132, 0, 160, 16, n))).to.deep.equal(ones)
    expect(ns.map((n) => ahead(132, 0, 192, 16, n))).to.deep.equal(ones)
    expect(ns.map((n) => ahead(132, 0, 224, 16, n))).to.deep.equal([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    expect(ns.map((n) => ahead(132, 0, 160, 32, n))).to.deep.equal([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    // The boundary: 25 stages a block keeps it, one stage more drops it.
    expect(ahead(132, 0, 165, 20, 64)).to.equal(1)
    expect(ahead(132, 0, 3301, 1, 64)).to.equal(0)
    // The same plans checked against the binding's own planner: stream-K where the row blocks do not fit.
    const h200 = Int32Array.from([132, 66, 44, 32, 26, 22, 18, 16])
    const long = addon.streamPlan({rowBlocks: 224, kstages: 16, resident: h200})
    expect(long).to.deep.equal({grid: 132, cluster: 0})
    expect(ahead(long.grid, long.cluster, 224, 16, 64)).to.equal(0)
    const short = addon.streamPlan({rowBlocks: 160, kstages: 16, resident: h200})
    expect(short).to.deep.equal({grid: 132, cluster: 0})
    expect(ahead(short.grid, short.cluster, 160, 16, 64)).to.equal(1)
    // The GPU's DRAM bandwidth (v49): none at all from 4000 GB/s (the H200's 4917: one stage cost
    // 1.019x the time there, where it saved 0.91x on the H100's 3352); unknown (0, or absent) and
    // below: the rule above.
    const on = (dramGBps: number, grid: number, cluster: number, rowBlocks: number, kstages: number, n: number) =>
      addon.stream24L2Ahead({grid, cluster, rowBlocks, kstages, n, dramGBps})
    for (const [grid, cluster, rowBlocks, kstages] of [[112, 0, 112, 16], [128, 2, 64, 16], [132, 0, 160, 16], [132, 0, 224, 16]]) {
      const rule = ns.map((n) => ahead(grid, cluster, rowBlocks, kstages, n))
      expect(ns.map((n) => on(4917, grid, cluster, rowBlocks, kstages, n)), 'H200').to.deep.equal(ns.map(() => 0))
      expect(ns.map((n) => on(4000, grid, cluster, rowBlocks, kstages, n)), 'the boundary').to.deep.equal(ns.map(() => 0))
      expect(ns.map((n) => on(3999, grid, cluster, rowBlocks, kstages, n)), 'below it').to.deep.equal(rule)
      expect(ns.map((n) => on(3352, grid, cluster, rowBlocks, kstages, n)), 'H100').to.deep.equal(rule)
      expect(ns.map((n) => on(0, grid, cluster, rowBlocks, kstages, n)), 'unknown').to.deep.equal(rule)
    }
    expect(() => on(-1, 112, 0, 112, 16, 8)).to.throw(RangeError, /dramGBps must be an integer/)
    expect(() => addon.stream24L2Ahead({grid: 0, cluster: 0, rowBlocks: 1, kstages: 1, n: 8})).to.throw(RangeError, /at least 1/)
    expect(() => addon.stream24L2Ahead({grid: 1, cluster: 0, rowBlocks: 1, kstages: 0, n: 8})).to.throw(RangeError, /at least 1/)
    expect(() => addon.stream24L2Ahead({grid: 2, cluster: 1, rowBlocks: 1, kstages: 1, n: 8})).to.throw(RangeError, /cluster must be 0 or 2 to 8/)
  })

  // The Hopper unstructured family (ube, spmm_unst_engine_sm90a.cu): its rule (UnstStreamWins:
  // N <= 64, density at least 15 % at N < 8, 7.5 % at N 8-16 and 5 % above: where the CSR kernels
  // stop being faster, v25), the warps by N, and the bitmap stream it prepares: its bytes as
  // src/sparse/memory.ts counts them, and the smallest ring capacity that holds its densest stage.
  it('runs unstructured f16/bf16 on the stream at N <= 64 above a density that falls with N, w8 up to N = 32', () => {
    const at = (m: number, k: number, nnz: number, n: number) => addon.unstStream({m, k, nnz, n})
    const d = 4096 * 4096
    expect([1, 8, 32, 33, 64, 65, 128].map((n) => at(4096, 4096, d / 2, n).wins)).to.deep.equal([true, true, true, true, true, false, false])
    expect([1, 8, 16, 32, 33, 40, 64].map((n) => at(4096, 4096, d / 2, n).warps)).to.deep.equal([8, 8, 8, 8, 4, 4, 4])
    // Each threshold is in, one nonzero fewer is out: 15 % at N 1-7, 7.5 % at N 8-16, 5 % at N 17-64.
    const atLeast = (permille: number) => Math.ceil((d * permille) / 1000)
    for (const [n, permille] of [[1, 150], [7, 150], [8, 75], [16, 75], [17, 50], [64, 50]]) {
      expect(at(4096, 4096, atLeast(permille), n).wins, `N = ${n}, ${permille / 10} %`).to.equal(true)
      expect(at(4096, 4096, atLeast(permille) - 1, n).wins, `N = ${n}, under ${permille / 10} %`).to.equal(false)
    }
    // 90 % sparse: the stream at N 8-64, the CSR kernels at N = 1; dense in, empty out.
    expect([1, 8, 16, 32, 64].map((n) => at(4096, 4096, Math.round(d / 10), n).wins)).to.deep.equal([false, true, true, true, true])
    expect([d, 0].map((nnz) => at(4096, 4096, nnz, 16).wins)).to.deep.equal([true, false])
    expect(at(100, 1, 15, 1).wins, '15 of 100 weights at N = 1').to.equal(true)
    expect(at(100, 1, 14, 1).wins, '14 of 100 weights at N = 1').to.equal(false)
    expect(() => addon.unstStream({m: 0, k: 4, nnz: 0, n: 1})).to.throw(RangeError, /at least 1/)
  })

  // The form (UnstPairsWins): the pair stream where at least 60 % of the weights are zeros (the
  // workbench: 1 % slower at 50 %, 5 % faster at 70 %), 8 warps at every N; the bitmap below.
  it('runs the pair stream from 60 % sparsity on, 8 warps at every N, the bitmap stream below', () => {
    const at = (m: number, k: number, nnz: number, n: number) => addon.unstStream({m, k, nnz, n})
    const d = 1000 * 1000
    expect(at(1000, 1000, 0.4 * d, 8)).to.deep.equal({wins: true, pairs: true, warps: 8})
    expect(at(1000, 1000, 0.4 * d + 1, 8), 'one nonzero more').to.deep.equal({wins: true, pairs: false, warps: 8})
    expect([1, 32, 33, 64].map((n) => at(1000, 1000, 0.1 * d, n).warps), '90 %').to.deep.equal([8, 8, 8, 8])
    expect(at(1000, 1000, 0.5 * d, 40), '50 %').to.deep.equal({wins: true, pairs: false, warps: 4})
    expect(at(1000, 1000, 0.3 * d, 40), '70 %').to.deep.equal({wins: true, pairs: true, warps: 8})
    expect(at(10, 10, 40, 1).pairs, '60 of 100 zeros').to.equal(true)
    expect(at(10, 10, 41, 1).pairs, '59 of 100').to.equal(false)
    expect(at(1000, 1000, d, 8).pairs, 'dense').to.equal(false)
    expect(at(1000, 1000, 0, 8), 'empty: pairs, but the family declines').to.deep.equal({wins: false, pairs: true, warps: 8})
  })

  for (const [m, k, nnz, seed] of [
    [300, 1000, 30_000, 31], // 10 %: row blocks past M, a partial last stage (K % 128, K % 16)
    [129, 257, 129 * 257, 32], // dense: every stage at capacity 256
    [7, 96, 333, 33], // one row block, one stage
    [1000, 3000, 1500, 34], // 0.05 %: mostly empty stages
  ] as const) {
    it(`sizes the bitmap and pair streams as the encoder builds them: M=${m} K=${k} nnz=${nnz}`, () => {
      const csr = randomPattern(m, k, nnz, seed)
      const rng = createRng(seed + 100)
      const values = new Uint16Array(nnz).map((_, i) => (i % 97 === 5 ? 0x8000 : 1 + (rng.nextUint32() % 60000))) // some -0: left out
      const stats = csrTileStats({rows: m, cols: k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values})
      for (const warps of [8, 4] as const) {
        const s = addon.unstBitmapStream({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values, warps})
        expect(stats.bitmapStream?.[`w${warps}`], `w${warps}`).to.equal(s.bytes)
        // The smallest capacity (values per tile on average over a stage's warps x 8 tiles) that holds it.
        const caps = [16, 32, 88, 144, 256]
        const want = caps.find((c) => c * warps * 8 >= s.maxStageWords)
        expect(s.capacity, `w${warps}: ${s.maxStageWords} values in the densest stage`).to.equal(want)
      }
      // The pair stream (ube_p8): 4 bytes a stored register, the smallest capacity in registers.
      const p = addon.unstPairStream({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values})
      expect(stats.pairStream, 'pair stream').to.equal(p.bytes)
      const want = [16, 32, 72, 100, 128].find((c) => c * 8 * 8 >= p.maxStageWords)
      expect(p.capacity, `pairs: ${p.maxStageWords} registers in the densest stage`).to.equal(want)
      // The GEMM engine's cut (ung): stages of 64 columns (32 tiles a stage), slots of 120 or 128
      // registers a tile.
      const g = addon.unstPairStream({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values, kstage: 64})
      expect(stats.pairStreamGemm, 'pair stream, 64-column stages').to.equal(g.bytes)
      expect(g.capacity, `ung: ${g.maxStageWords} registers in the densest stage`).to.equal([120, 128].find((c) => c * 32 >= g.maxStageWords))
      expect(() => addon.unstPairStream({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values, kstage: 32 as 64})).to.throw(RangeError, /kstage must be 128 or 64/)
    })
  }

  it('picks the GEMM engine\'s 2:4 tile height by waves, and splits only the ragged wave (Gemm24Rows: the model off)', () => {
    const pick = (m: number, k: number, n: number, sms = 132) => {
      const {rows, split} = addon.gemm24Rows({m, k, n, sms, model: 'off'})
      return {rows, split}
    }
    // 4096 x 4096: 32 tiles of 128 rows x 128 at N = 128, each cut in 4 (128 blocks busy) against
    // 16 of 256 rows in 4 (64 busy); from N = 256 the 256-row tiles fill as well and win.
    expect(pick(4096, 4096, 128)).to.deep.equal({rows: 128, split: 4})
    expect(pick(4096, 4096, 256)).to.deep.equal({rows: 256, split: 4})
    expect(pick(4096, 4096, 1024), '128 tiles: one wave, whole').to.deep.equal({rows: 256, split: 1})
    // 11008 x 4096, N = 256: 172 tiles of 128 rows are a wave and 40 tiles in thirds (97 % busy);
    // 86 of 256 rows leave a third of the SMs idle (65 %, even at 1.15x).
    expect(pick(11008, 4096, 256)).to.deep.equal({rows: 128, split: 3})
    expect(pick(14336, 4096, 256), '112 tiles of 256 rows').to.deep.equal({rows: 256, split: 1})
    // The density gate of every 2:4 family (2.5 %): a full 2:4 pattern and anything down to 2.5 %
    // dense run the 2:4 kernels; DLMC's 64 x 256 ResNet-50 matrix at 98 % (327 nonzeros, 2:4 by chance) does not.
    const dense = (m: number, k: number, nnz?: number) => addon.gemm24Rows({m, k, n: 256, sms: 132, nnz}).denseEnough
    expect(dense(4096, 4096), 'the pattern full').to.equal(true)
    expect(dense(64, 256, 410), '410 of 16384: 2.50 %').to.equal(true)
    expect(dense(64, 256, 409), '409 of 16384: 2.496 %').to.equal(false)
    expect(dense(64, 256, 327), 'DLMC rn50 at 98 %').to.equal(false)
    expect(dense(64, 256, 0)).to.equal(false)
    expect(() => addon.gemm24Rows({m: 64, k: 256, n: 256, sms: 132, nnz: 8193}), 'more than half').to.throw(RangeError, /nnz must be from 0/)
    // A wave's worth of pieces at most, at most 4 per tile, never more than K's stages.
    expect(pick(256, 64, 128).split, 'one tile, one K stage').to.equal(1)
    expect(pick(256, 4096, 128).split, 'one tile: 4 pieces').to.equal(4)
    for (const [m, k, n, sms] of [[4096, 4096, 2048, 132], [5000, 3000, 640, 114], [300, 100, 4096, 132], [77, 4104, 136, 8]]) {
      const {rows, split} = pick(m, k, n, sms)
      expect([128, 256]).to.include(rows)
      const tiles = Math.ceil(m / rows) * Math.ceil(n / 128)
      const r = tiles < sms ? tiles : tiles % sms
      expect(split, `${m} x ${k}, N = ${n}`).to.be.at.least(1).and.at.most(Math.min(4, Math.ceil(k / 64)))
      if (split >= 2) expect(r * split, `${m} x ${k}, N = ${n}: one wave of pieces`).to.be.at.most(sms)
    }
    expect(() => addon.gemm24Rows({m: 64, k: 64, n: 128, sms: 0})).to.throw(RangeError, /at least 1/)
  })

  it('rejects a resident list of the wrong length or with negative counts', () => {
    expect(() => addon.streamPlan({rowBlocks: 4, kstages: 4, resident: new Int32Array(7)})).to.throw(/resident/)
    expect(() => plan(4, 4, Int32Array.from([1, -1, 0, 0, 0, 0, 0, 0]))).to.throw(RangeError, /negative/)
    expect(() => plan(0, 4)).to.throw(RangeError, /at least 1/)
  })
})
