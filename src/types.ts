/** Element types of values. f16 and bf16 are stored on the host as raw 16-bit patterns. */
export type ValueDType = 'f32' | 'f16' | 'bf16'

/** Element types of dense tensors read from files. */
export type DenseDType = ValueDType | 'f64'

/** The typed array that holds values of a given dtype on the host. */
export type HostArray = Float32Array | Float64Array | Uint16Array

/**
 * A dense tensor in host memory, C order (row-major).
 * `data.length` equals the product of `shape` (1 for a scalar).
 * For f16/bf16, `data` is a Uint16Array of bit patterns (see src/sparse/half.ts).
 */
export interface DenseTensor {
  name: string
  shape: number[]
  dtype: DenseDType
  data: HostArray
}

/**
 * A compressed-sparse-row matrix, with Sputnik's names for its arrays.
 * - `rowOffsets`: rows + 1 int32, from 0 to nnz, non-decreasing.
 * - `columnIndices`: nnz int32, ascending and unique within each row, each in [0, cols).
 * - `values`: nnz values (Float32Array for f32; Uint16Array bit patterns for f16/bf16),
 *   or null for a pattern-only matrix (DLMC `.smtx`), whose values a command fills from a
 *   seeded generator when it needs them.
 * - `rowIndices`: optional row processing order (Sputnik's row swizzle), a permutation of
 *   0..rows-1. Kernels process rows in this order and write each result to its own row.
 */
export interface CsrMatrix {
  rows: number
  cols: number
  rowOffsets: Int32Array
  columnIndices: Int32Array
  values: Float32Array | Uint16Array | null
  dtype: ValueDType
  rowIndices?: Int32Array
}

/** A named CSR matrix, e.g. one tensor of a pruned model. `shape` is the original tensor's shape. */
export interface NamedCsr {
  name: string
  shape: number[]
  csr: CsrMatrix
}
