/**
 * Memory saving, defined once (src/sparse/memory.ts): every form against the dense matrix of
 * the same value dtype; and the sizes of the tensor-core forms, computed in TypeScript from
 * the pattern, against the bytes of the forms the addon really builds.
 */
import {expect} from 'chai'

import {memoryFigures} from '../../src/bench/metrics.js'
import {inspectCsr} from '../../src/formats/info.js'
import {loadAddon} from '../../src/kernels/binding.js'
import {pruneMagnitude} from '../../src/pruning/index.js'
import {BITMAP_HEADER_BYTES, csrTileStats, GEMM_STAGE_COLS, memorySizes, pairStreamFixedBytes, pairStreamGemmFixedBytes, tcTileBytes, tileStats, twoFourBytes} from '../../src/sparse/memory.js'
import {createRng} from '../../src/sparse/random.js'
import type {CsrMatrix} from '../../src/types.js'
import {installAllocGuard, uninstallAllocGuard, withAllocBudget} from '../fuzz/alloc-guard.js'
import {randomPattern} from '../kernels/helpers.js'
import {TC_EXAMPLE_BYTES, tcExample} from './tc-example.js'

function withValues(csr: CsrMatrix, seed: number): CsrMatrix & {values: Uint16Array} {
  const rng = createRng(seed)
  const values = new Uint16Array(csr.rowOffsets[csr.rows]).map(() => 1 + (rng.nextUint32() % 0x7bff))
  return {...csr, values, dtype: 'f16'}
}

/** A random 2:4 matrix: at most two nonzeros in each group of four columns. */
function random24(m: number, k: number, seed: number): CsrMatrix & {values: Uint16Array} {
  const rng = createRng(seed)
  const offsets = [0]
  const cols: number[] = []
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < k; c += 4) {
      const pick = [0, 1, 2, 3].filter((i) => c + i < k && rng.nextUint32() % 2 === 0).slice(0, 2)
      for (const i of pick) cols.push(c + i)
    }
    offsets.push(cols.length)
  }
  return withValues({rows: m, cols: k, rowOffsets: Int32Array.from(offsets), columnIndices: Int32Array.from(cols), values: null, dtype: 'f16'}, seed)
}

describe('memory sizes and saving (one definition)', () => {
  it('sizes a 2^20 x 2^20 matrix of three entries in linear time (2^32 empty tiles are counted, not visited)', () => {
    const n = 1 << 20
    const rowOffsets = new Int32Array(n + 1)
    for (let r = 5; r <= n; r++) rowOffsets[r] = r >= 900_000 ? 3 : r >= 17 ? 2 : 1
    const csr = {rows: n, cols: n, rowOffsets, columnIndices: Int32Array.from([3, 70_000, n - 1]), values: null}
    const t0 = Date.now()
    const st = csrTileStats(csr)
    expect(Date.now() - t0).to.be.lessThan(5000)
    const tiles = (n / 16) * (n / 16)
    const empty = (BITMAP_HEADER_BYTES + 15) & ~15
    // three tiles of one entry each, every other tile empty
    expect(st.bitmapBytes).to.equal(4 * (tiles + 1) + tiles * empty + 3 * ((((BITMAP_HEADER_BYTES + 2) + 15) & ~15) - empty))
    // tc: an offset per 16 x 32 tile and one more, and three tiles of one entry padded to 4
    expect(st.tcBytes).to.equal(4 * ((n / 16) * (n / 32) + 1) + 3 * 16)
    expect(st.twoFour).to.equal(true)
    // The pair stream: 2^13 row blocks x 2^14 stages of 64 columns (2^13 of 128), 1024 (2048)
    // bytes of records each, and three stages of one register (16 bytes each).
    expect(st.pairStreamGemm).to.equal(2 ** 27 * 1024 + 4 * (2 ** 27 + 1) + 3 * 16)
    expect(st.pairStream).to.equal(2 ** 26 * 2048 + 4 * (2 ** 26 + 1) + 3 * 16)
  })

  it('scratch memory follows the entries, not the columns: a 1 x 5,967,296 matrix of one entry sizes within 256 KiB (found by npm run fuzz)', async () => {
    // The full fuzz run's 'detect' case: "1, 5967296, 1\n0 1\n0\n" as .smtx. Sizing its
    // bitmap form made a Uint32Array of one count per 16 columns (1.5 MB for a 20-byte file).
    const wide = {rows: 1, cols: 5_967_296, rowOffsets: Int32Array.from([0, 1]), columnIndices: Int32Array.from([1]), values: null}
    installAllocGuard()
    try {
      const {value} = await withAllocBudget(256 << 10, 1 << 20, async () => csrTileStats(wide))
      const empty = (BITMAP_HEADER_BYTES + 15) & ~15
      const tiles = Math.ceil(5_967_296 / 16)
      expect(value.bitmapBytes).to.equal(4 * (tiles + 1) + tiles * empty + ((BITMAP_HEADER_BYTES + 2 + 15) & ~15) - empty)
      expect(value.tcBytes).to.equal(4 * (5_967_296 / 32 + 1) + 16)
      expect(value.twoFour).to.equal(true)
    } finally {
      uninstallAllocGuard()
    }
  })

  it('the map path (few entries, many columns) gives the same sizes as the array path', () => {
    // 40 rows x 300,000 columns, 2:4 broken in row 7 only; sized once with the entries bound
    // (maps) and once with the default bound rows x cols (arrays).
    const rng = createRng(7)
    const rows: number[][] = []
    for (let r = 0; r < 40; r++) {
      const cols = new Set<number>()
      while (cols.size < 30) cols.add(rng.nextUint32() % 300_000)
      if (r === 7) [1000, 1001, 1002].forEach((c) => cols.add(c))
      rows.push([...cols].sort((a, b) => a - b))
    }
    const nnz = rows.reduce((a, r) => a + r.length, 0)
    const visit = (r: number, v: (c: number, nz: boolean) => void): void => rows[r].forEach((c) => v(c, true))
    const viaMaps = tileStats(40, 300_000, visit, nnz)
    const viaArrays = tileStats(40, 300_000, visit)
    expect(viaMaps).to.deep.equal(viaArrays)
    expect(viaMaps.twoFour).to.equal(false)
    const noRow7 = (r: number, v: (c: number, nz: boolean) => void): void => rows[r].forEach((c) => v(c, r !== 7))
    expect(tileStats(40, 300_000, noRow7, nnz)).to.deep.equal({...tileStats(40, 300_000, noRow7), twoFour: true})
  })

  it('sizes the bitmap form exactly: 40-byte header + 2 bytes a value, to 16 bytes, per 16 x 16 tile, + 4 per tile + 4', () => {
    // 20 x 20: 2 x 2 tiles. Tile (0, 0) holds 5 entries, tile (1, 1) one, the others none.
    const entries: Record<number, number[]> = {0: [0, 1, 5], 3: [15, 4], 19: [19]}
    const s = tileStats(20, 20, (row, visit) => {
      for (const c of entries[row] ?? []) visit(c, true)
    })
    // (40 + 10 -> 64) + (40 -> 48) + (40 -> 48) + (40 + 2 -> 48) + offsets 4 x (4 + 1)
    expect(s.bitmapBytes).to.equal(64 + 48 + 48 + 48 + 20)
    expect(s.twoFour).to.equal(true)
  })

  describe("the pair stream in the GEMM engine's cut (ung_*): 128-row blocks, 64-column stages", () => {
    /** tileStats of a rows x cols matrix whose nonzeros are `nz` (row -> columns) and whose stored zeros are `zeros`. */
    const stats = (rows: number, cols: number, nz: Record<number, number[]>, zeros: Record<number, number[]> = {}) =>
      tileStats(rows, cols, (row, visit) => {
        for (const c of nz[row] ?? []) visit(c, true)
        for (const c of zeros[row] ?? []) visit(c, false)
      })

    it('counts a record per tile of every stage and a 4-byte offset per stage and one more', () => {
      expect(GEMM_STAGE_COLS).to.equal(64)
      // A stage: 8 strips x 4 tiles x 32 bytes = 1024, past M and K too.
      expect(pairStreamGemmFixedBytes(1, 1)).to.equal(1024 + 4 * 2)
      expect(pairStreamGemmFixedBytes(128, 64)).to.equal(1024 + 4 * 2)
      // 129 rows: 2 row blocks; 65 columns: 2 stages; 4 stages in all.
      expect(pairStreamGemmFixedBytes(129, 65)).to.equal(4 * 1024 + 4 * 5)
      // 16 x 130: 3 stages of 64 columns against ube_p8's 2 of 128 (64 tiles x 32 bytes each).
      expect(pairStreamGemmFixedBytes(16, 130)).to.equal(3 * 1024 + 4 * 4)
      expect(pairStreamFixedBytes(16, 130)).to.equal(2 * 2048 + 4 * 3)
      expect(pairStreamGemmFixedBytes(0, 70)).to.equal(4)
      expect(pairStreamGemmFixedBytes(20, 0)).to.equal(4)
    })

    it('an empty matrix is its fixed part: records of empty tiles and the offsets', () => {
      // 20 x 200: 1 row block x 4 stages = 4 x 1024 + 4 x 5; ube_p8: 2 stages = 2 x 2048 + 4 x 3.
      const s = stats(20, 200, {})
      expect(s.pairStreamGemm).to.equal(4116)
      expect(s.pairStream).to.equal(4108)
      expect(stats(0, 0, {}).pairStreamGemm).to.equal(4)
      expect(stats(0, 70, {}).pairStreamGemm).to.equal(4)
      // Stored zeros are not nonzeros: no register is stored.
      expect(stats(20, 200, {}, {0: [0, 1, 64], 19: [199]}).pairStreamGemm).to.equal(4116)
    })

    it('16 x 130: registers by 64-column stage, each stage padded to 16 bytes', () => {
      // Fixed: 3 stages x 1024 + 4 x 4 = 3088 (ube_p8: 2 x 2048 + 4 x 3 = 4108).
      // Row 0: columns 0 and 1 (one register, pair 0) and 63 (pair 31); row 2: columns 0, 2, 4,
      // 6, 8 (five registers); row 3: a stored zero at 10; row 5: column 64; row 15: column 129.
      // 64-column stages: stage 0 holds 2 + 5 = 7 registers (28 -> 32 bytes), stage 1 one
      // (row 5, 4 -> 16), stage 2 one (row 15, 4 -> 16): 3088 + 64 = 3152.
      // 128-column stages: stage 0 holds 8 (32 bytes), stage 1 one (16): 4108 + 48 = 4156.
      const s = stats(16, 130, {0: [0, 1, 63], 2: [0, 2, 4, 6, 8], 5: [64], 15: [129]}, {3: [10]})
      expect(s.pairStreamGemm).to.equal(3152)
      expect(s.pairStream).to.equal(4156)
    })

    it('129 x 64: a second row block for row 128, its own stage and padding', () => {
      // Fixed: 2 row blocks x 1 stage = 2 x 1024 + 4 x 3 = 2060. Block 0: rows 0-4 at column 0
      // and row 127 at column 63, six registers (24 -> 32 bytes); block 1: row 128 at column 62,
      // one (4 -> 16): 2060 + 48 = 2108. (ube_p8: 2 x 2048 + 4 x 3 = 4108, + 48 = 4156.)
      const s = stats(129, 64, {0: [0], 1: [0], 2: [0], 3: [0], 4: [0], 127: [63], 128: [62]})
      expect(s.pairStreamGemm).to.equal(2108)
      expect(s.pairStream).to.equal(4156)
    })

    it('stores a register once when both of its columns are nonzero', () => {
      // 2 x 16, one stage (1024 + 4 x 2 = 1032). Row 0: all 16 columns, eight registers; row 1:
      // columns 1 and 2, two registers (pairs 0 and 1). Ten registers, 40 -> 48 bytes: 1080
      // (at 4 bytes per nonzero, 18 x 4 = 72 -> 80, it would be 1112).
      const s = stats(2, 16, {0: Array.from({length: 16}, (_, c) => c), 1: [1, 2]})
      expect(s.pairStreamGemm).to.equal(1080)
      // Both halves of one register: 1032 + 16.
      expect(stats(1, 2, {0: [0, 1]}).pairStreamGemm).to.equal(1048)
      // Row 0 columns 0-7 (four registers) and row 1 column 0 (one more: a register never spans
      // two rows): 20 -> 32 bytes.
      expect(stats(2, 16, {0: [0, 1, 2, 3, 4, 5, 6, 7], 1: [0]}).pairStreamGemm).to.equal(1032 + 32)
    })
  })

  it('sizes the tc form exactly: 4 bytes an entry, padded to 4 entries, per 16 x 32 tile, + 4 per tile + 4', () => {
    expect([0, 1, 3, 4, 5, 8, 512].map(tcTileBytes)).to.deep.equal([0, 16, 16, 16, 32, 32, 2048])
    // Worked out by hand in tc-example.ts: padding, an empty tile, a partial tile, a stored zero.
    const csr = tcExample()
    expect(csrTileStats(csr).tcBytes).to.equal(TC_EXAMPLE_BYTES)
    // The same pattern through the generic walk, and an empty matrix: the offsets' total only.
    const entries = (row: number, visit: (col: number, nonzero: boolean) => void): void => {
      for (let i = csr.rowOffsets[row]; i < csr.rowOffsets[row + 1]; i++) visit(csr.columnIndices[i], true)
    }
    expect(tileStats(20, 70, entries, 10).tcBytes).to.equal(TC_EXAMPLE_BYTES)
    expect(tileStats(20, 70, () => {}).tcBytes).to.equal(4 * (6 + 1))
    expect(tileStats(0, 70, () => {}).tcBytes).to.equal(4)
  })

  it('sizes the 2:4 form as 576 bytes per 16 x 32 tile of the padded matrix', () => {
    expect(twoFourBytes(16, 32)).to.equal(576)
    expect(twoFourBytes(7, 40)).to.equal(2 * 576)
    expect(twoFourBytes(33, 64)).to.equal(3 * 2 * 576)
    expect(twoFourBytes(4096, 4096)).to.equal(4096 * 4096 * 1.125)
  })

  it('tells a 2:4 matrix from one with three nonzeros in a group; zeros do not count', () => {
    const three = tileStats(1, 8, (_r, visit) => [4, 5, 6].forEach((c) => visit(c, true)))
    expect(three.twoFour).to.equal(false)
    const zero = tileStats(1, 8, (_r, visit) => [4, 5, 6].forEach((c) => visit(c, c !== 6)))
    expect(zero.twoFour).to.equal(true)
    const csr: CsrMatrix = {rows: 1, cols: 8, rowOffsets: Int32Array.from([0, 3]), columnIndices: Int32Array.from([0, 1, 2]), values: Uint16Array.from([1, 0x8000, 2]), dtype: 'f16'}
    expect(csrTileStats(csr).twoFour).to.equal(true) // -0 is a zero
  })

  describe('against the forms the addon builds', () => {
    const addon = loadAddon()
    for (const [m, k, nnz, seed] of [
      [45, 300, 45 * 290, 1],
      [300, 1000, 30_000, 2],
      [17, 129, 5, 3],
      [7, 96, 333, 4],
      [0, 16, 0, 5],
    ] as const) {
      it(`bitmap bytes = the addon's bitmapFormat: M=${m} K=${k} nnz=${nnz}`, () => {
        const csr = withValues(randomPattern(m, k, nnz, seed), seed)
        const t = addon.bitmapFormat({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values})
        expect(csrTileStats(csr).bitmapBytes).to.equal(4 * (t.offsets.length + t.data.length))
      })
      it(`tc bytes = the addon's tcFormat: M=${m} K=${k} nnz=${nnz}`, () => {
        const csr = withValues(randomPattern(m, k, nnz, seed), seed)
        const t = addon.tcFormat({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values})
        expect(csrTileStats(csr).tcBytes).to.equal(4 * (t.offsets.length + t.entries.length))
      })
    }
    it("tc bytes = the addon's tcFormat: the hand-sized example", () => {
      const csr = tcExample()
      const t = addon.tcFormat({m: 20, k: 70, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values})
      expect(4 * (t.offsets.length + t.entries.length)).to.equal(TC_EXAMPLE_BYTES)
    })
    for (const [m, k, seed] of [
      [16, 32, 1],
      [45, 300, 2],
      [7, 96, 3],
    ] as const) {
      it(`2:4 bytes = the addon's sp24Format: M=${m} K=${k}`, () => {
        const csr = random24(m, k, seed)
        const t = addon.sp24Format({m, k, rowOffsets: csr.rowOffsets, columnIndices: csr.columnIndices, values: csr.values})
        const stats = csrTileStats(csr)
        expect(stats.twoFour).to.equal(true)
        expect(memorySizes(m, k, csr.rowOffsets[m], stats).twoFourBytes).to.equal(2 * t.values.length + 4 * t.meta.length)
      })
    }
  })

  it('gives the same saving in prune, info and bench for the same matrix and dtype', () => {
    const rows = 64
    const cols = 96
    const rng = createRng(7)
    const data = new Float32Array(rows * cols).map(() => rng.nextUint32() / 2 ** 32 - 0.5)
    const {csr, report} = pruneMagnitude({name: 'w', shape: [rows, cols], dtype: 'f32', data}, {sparsity: 0.75, reorder: true})
    const nnz = csr.rowOffsets[rows]
    // f32: dense f32 / CSR f32; f16: dense f16 / CSR f16 (not dense f32 / CSR f16).
    expect(report.denseBytes).to.deep.equal({f32: rows * cols * 4, f16: rows * cols * 2})
    expect(report.memorySaving.f32).to.equal((rows * cols * 4) / (nnz * 8 + 4 * (rows + 1) + 4 * rows))
    expect(report.memorySaving.f16).to.equal((rows * cols * 2) / (nnz * 4 + 4 * (rows + 1) + 4 * rows))
    const info = inspectCsr({name: 'w', shape: [rows, cols], csr})
    expect(info.memorySaving).to.deep.equal(report.memorySaving)
    expect(info.bitmapBytes).to.equal(report.bitmapBytes)
    expect(info.tcBytes).to.equal(report.tcBytes)
    const bench16 = memoryFigures(rows, cols, nnz, 'f16', csrTileStats(csr))
    const bench32 = memoryFigures(rows, cols, nnz, 'f32', csrTileStats(csr))
    // Both count the row order (bench runs rows in Sputnik's order; prune stored it).
    expect(bench32.saving).to.equal(report.memorySaving.f32)
    expect(bench16.bitmapSaving).to.equal(report.memorySaving.bitmap)
    expect(bench16.twoFourBytes).to.equal(null) // 75 % unstructured is not 2:4
    expect(bench16.tcSaving).to.equal((rows * cols * 2) / csrTileStats(csr).tcBytes)
    expect([bench16.tcBytes, bench16.tcSaving]).to.deep.equal([report.tcBytes, report.memorySaving.tc])
    expect(bench32.bitmapBytes).to.equal(null) // the tensor-core forms hold 16-bit values
    expect(bench32.tcBytes).to.equal(null)
  })
})
