import type {ValueDType} from '../types.js'

/**
 * A dense matrix in host memory, row-major: element (r, c) is `data[r * cols + c]`.
 * `data` is a Float32Array for f32 and a Uint16Array of bit patterns for f16/bf16
 * (see src/sparse/half.ts), of length rows * cols.
 */
export interface DenseMatrix {
  rows: number
  cols: number
  dtype: ValueDType
  data: Float32Array | Uint16Array
}

/** Where a kernel runs. */
export type Device = 'cuda' | 'cpu'

/** What a caller asks for: a device, or 'auto' (the GPU when one is usable, else the CPU). */
export type DeviceChoice = Device | 'auto'
