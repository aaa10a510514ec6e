/**
 * The tensor-core kernels' formats, built by the addon on the host (CPU: runs everywhere):
 * the SpMM tiles (native/common/tc_tiles.h), decoded back to the matrix entry by entry, and
 * the SDDMM chunk starts, against a direct search of each row.
 */
import {expect} from 'chai'

import {loadAddon} from '../../src/kernels/binding.js'
import {createRng} from '../../src/sparse/random.js'
import {randomPattern} from './helpers.js'

const TILE_ROWS = 16
const TILE_COLS = 32
const TILE_ELEMS = TILE_ROWS * TILE_COLS
const CHUNK = 256

/** Position in the tile image -> (row in strip, column in tile); the inverse of TcPosition. */
function decode(pos: number): [number, number] {
  const blk = pos >> 6
  const r = (blk & 1) * 8 + ((pos >> 3) & 7)
  const c = (blk >> 2) * 16 + ((blk >> 1) & 1) * 8 + (pos & 7)
  return [r, c]
}

describe('tensor-core formats (built on the host)', () => {
  const addon = loadAddon()

  for (const [m, k, nnz, seed] of [
    [45, 300, 45 * 270, 1], // tiles 90% dense
    [300, 1000, 30_000, 2], // several strips and k-tiles, a partial last tile
    [17, 129, 5, 3], // nearly empty: most tiles have no entries
    [1, 1, 1, 4],
  ] as const) {
    it(`SpMM tiles decode back to the CSR matrix: M=${m} K=${k} nnz=${nnz}`, () => {
      const csr = randomPattern(m, k, nnz, seed)
      const rng = createRng(seed + 100)
      const values = new Uint16Array(nnz).map(() => 1 + (rng.nextUint32() % 60000))
      const t = addon.tcFormat({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values})
      const strips = Math.ceil(m / TILE_ROWS)
      const ktiles = Math.ceil(k / TILE_COLS)
      expect(t.offsets.length).to.equal(strips * ktiles + 1)
      expect(t.offsets[0]).to.equal(0)
      expect(t.entries.length).to.equal(t.offsets[strips * ktiles])
      // Every entry lands where the CSR has it, with its value; padding only at tile ends.
      const expected = new Map<number, number>()
      for (let r = 0; r < m; r++) for (let i = csr.rowOffsets[r]; i < csr.rowOffsets[r + 1]; i++) expected.set(r * k + csr.columnIndices[i], values[i])
      const seen = new Map<number, number>()
      for (let s = 0; s < strips; s++) {
        for (let kt = 0; kt < ktiles; kt++) {
          const beg = t.offsets[s * ktiles + kt]
          const end = t.offsets[s * ktiles + kt + 1]
          expect((end - beg) % 4, 'tile lists are whole 16-byte vectors').to.equal(0)
          let padding = 0
          for (let i = beg; i < end; i++) {
            const e = t.entries[i]
            const pos = e & 0xffff
            if (pos === TILE_ELEMS) {
              expect(e >>> 16, 'padding carries a zero').to.equal(0)
              padding++
              continue
            }
            expect(pos).to.be.below(TILE_ELEMS)
            const [r, c] = decode(pos)
            const key = (s * TILE_ROWS + r) * k + kt * TILE_COLS + c
            expect(seen.has(key), `entry ${key} twice`).to.equal(false)
            seen.set(key, e >>> 16)
          }
          expect(padding).to.be.below(4)
        }
      }
      expect(seen).to.deep.equal(expected)
    })
  }

  it('SpMM tiles reject a repeated column and a column out of range, with the row', () => {
    const rowOffsets = Int32Array.from([0, 2, 3])
    const values = new Uint16Array(3)
    expect(() => addon.tcFormat({m: 2, k: 10, rowOffsets, columnIndices: Int32Array.from([4, 4, 1]), values})).to.throw(/repeated column 4 in row 0/)
    expect(() => addon.tcFormat({m: 2, k: 10, rowOffsets, columnIndices: Int32Array.from([0, 1, 10]), values})).to.throw(/column index 10 out of range in row 1/)
    // Offsets that decrease would send a row past the arrays: refused before any read.
    expect(() => addon.tcFormat({m: 2, k: 10, rowOffsets: Int32Array.from([0, 3, 2]), columnIndices: Int32Array.from([1, 2]), values: new Uint16Array(2)})).to.throw(/must not decrease/)
  })

  for (const [m, n, nnz, seed] of [
    [40, 1000, 8000, 5],
    [3, 256, 256 * 3, 6], // full rows, exactly one chunk
    [9, 700, 4, 7],
  ] as const) {
    it(`SDDMM chunk starts match a search of each row: M=${m} N=${n} nnz=${nnz}`, () => {
      const csr = randomPattern(m, n, nnz, seed)
      const starts = addon.sddmmChunkStarts({m, n, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices})
      const chunks = Math.ceil(n / CHUNK)
      expect(starts.length).to.equal(m * (chunks + 1))
      for (let r = 0; r < m; r++) {
        for (let j = 0; j <= chunks; j++) {
          let i = csr.rowOffsets[r]
          while (i < csr.rowOffsets[r + 1] && csr.columnIndices[i] < j * CHUNK) i++
          expect(starts[r * (chunks + 1) + j], `row ${r} chunk ${j}`).to.equal(i)
        }
      }
    })
  }

  it('SDDMM chunk starts reject columns that are not ascending', () => {
    expect(() => addon.sddmmChunkStarts({m: 1, n: 10, rowOffsets: Int32Array.from([0, 2]), columnIndices: Int32Array.from([5, 3])})).to.throw(/not ascending in row 0/)
  })
})
