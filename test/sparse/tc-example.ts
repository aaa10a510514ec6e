/**
 * A 20 x 70 f16 matrix whose tensor-core CSR tiles (native/common/tc_tiles.h) are sized by
 * hand: 2 strips of 16 rows x ceil(70 / 32) = 3 k-tiles of 32 columns = 6 tiles.
 *   tile (0, 0): rows 0, 3, 15 -- columns 17 | 0 5 31 | 16, both 16-column halves, the odd
 *                half seen first: 5 entries, padded to 8: 32 bytes
 *   tile (0, 1): empty: 0 bytes
 *   tile (0, 2): row 2, column 69 (the 6 columns past 64 of a partial tile): 1 entry,
 *                padded to 4: 16 bytes
 *   tile (1, 0): empty
 *   tile (1, 1): row 19, columns 48..51 (the odd half only), one value a stored zero (it is
 *                stored all the same): 4 entries, no padding: 16 bytes
 *   tile (1, 2): empty
 *   offsets: 6 tiles + 1, 4 bytes each: 28 bytes
 * In all 32 + 16 + 16 + 28 = 92 bytes.
 */
import type {CsrMatrix} from '../../src/types.js'

export const TC_EXAMPLE_BYTES = 92

export function tcExample(): CsrMatrix & {values: Uint16Array} {
  const rows: Record<number, number[]> = {0: [17], 2: [69], 3: [0, 5, 31], 15: [16], 19: [48, 49, 50, 51]}
  const rowOffsets = new Int32Array(21)
  const cols: number[] = []
  for (let r = 0; r < 20; r++) {
    cols.push(...(rows[r] ?? []))
    rowOffsets[r + 1] = cols.length
  }
  // f16 1.0 everywhere but row 19, column 50: +0.
  const values = Uint16Array.from(cols, (_c, i) => (i === 8 ? 0 : 0x3c00))
  return {rows: 20, cols: 70, rowOffsets, columnIndices: Int32Array.from(cols), values, dtype: 'f16'}
}
