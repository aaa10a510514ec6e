/**
 * Brute-force references for the pruning definition (full sorts, O(n log n)), and seeded
 * random tensors of every dtype, for comparing against the linear-time implementation.
 */
import {bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits} from '../../src/sparse/half.js'
import type {CsrMatrix, DenseTensor, ValueDType} from '../../src/types.js'

/** mulberry32: a tiny seeded generator for test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
}

export type Kind = 'normal' | 'quantized' | 'zeros' | 'tiny' | 'equal'

/** A seeded tensor of the given dtype and kind. */
export function randomTensor(name: string, shape: number[], dtype: ValueDType | 'f64', kind: Kind, seed: number): DenseTensor {
  const r = rng(seed)
  const n = shape.reduce((a, b) => a * b, 1)
  const v = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    switch (kind) {
      case 'normal':
        v[i] = normal(r)
        break
      case 'quantized': // few distinct magnitudes, both signs, some zeros
        v[i] = (Math.floor(r() * 7) - 3) * 0.25
        break
      case 'zeros':
        v[i] = r() < 0.6 ? (r() < 0.5 ? 0 : -0) : normal(r)
        break
      case 'tiny': // subnormals and normal values mixed
        v[i] = r() < 0.5 ? normal(r) * 1e-40 : normal(r) * 1e-3
        break
      case 'equal':
        v[i] = r() < 0.5 ? 1 : -1
        break
    }
  }
  if (dtype === 'f64') return {name, shape, dtype, data: v}
  if (dtype === 'f32') return {name, shape, dtype, data: Float32Array.from(v)}
  const enc = dtype === 'f16' ? f32ToF16Bits : f32ToBf16Bits
  return {name, shape, dtype, data: Uint16Array.from(v, (x) => enc(x))}
}

/** |w| of every element, as numbers (f64 rounded to f32 first, as the pruner does). */
export function magnitudes(t: DenseTensor): Float64Array {
  const out = new Float64Array(t.data.length)
  for (let i = 0; i < out.length; i++) out[i] = Math.abs(decode(t, i))
  return out
}

export function decode(t: DenseTensor, i: number): number {
  if (t.dtype === 'f16') return f16BitsToF32(t.data[i])
  if (t.dtype === 'bf16') return bf16BitsToF32(t.data[i])
  if (t.dtype === 'f64') return Math.fround(t.data[i])
  return t.data[i]
}

export function dims(shape: number[]): [number, number] {
  if (shape.length === 1) return [1, shape[0]]
  return [shape[0], shape.slice(1).reduce((a, b) => a * b, 1)]
}

/** Python's round(x): half to even, by brute force on the decimal-free double. */
export function pyRound(x: number): number {
  const f = Math.floor(x)
  if (x - f === 0.5) return f % 2 === 0 ? f : f + 1
  return Math.round(x)
}

/**
 * The definition, by full sort: keep-mask of each tensor when the first k entries in the
 * order (|w| asc, tensor asc, row-major index asc) are pruned; zeros are never kept.
 */
export function referenceMasks(tensors: DenseTensor[], k: number): Uint8Array[] {
  const mags = tensors.map(magnitudes)
  const all: Array<[number, number, number]> = []
  mags.forEach((m, t) => m.forEach((x, i) => all.push([x, t, i])))
  all.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
  const masks = mags.map((m) => Uint8Array.from(m, (x) => (x !== 0 ? 1 : 0)))
  for (let j = 0; j < k; j++) masks[all[j][1]][all[j][2]] = 0
  return masks
}

/** N:M reference: in each group of M in a row, prune the first max(0, L - N) by (|w|, index). */
export function referenceNmMask(t: DenseTensor, n: number, m: number): Uint8Array {
  const mag = magnitudes(t)
  const [rows, cols] = dims(t.shape)
  const mask = Uint8Array.from(mag, (x) => (x !== 0 ? 1 : 0))
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < cols; g += m) {
      const idx: number[] = []
      for (let c = g; c < Math.min(cols, g + m); c++) idx.push(r * cols + c)
      idx.sort((a, b) => mag[a] - mag[b] || a - b)
      for (let j = 0; j < Math.max(0, idx.length - n); j++) mask[idx[j]] = 0
    }
  }
  return mask
}

/** The CSR a keep-mask describes, with the tensor's value bits (f64 -> f32). */
export function csrFromMask(t: DenseTensor, mask: Uint8Array): {rowOffsets: number[]; columnIndices: number[]; valueBits: number[]} {
  const [rows, cols] = dims(t.shape)
  const rowOffsets = [0]
  const columnIndices: number[] = []
  const valueBits: number[] = []
  const f = new Float32Array(1)
  const u = new Uint32Array(f.buffer)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c
      if (!mask[i]) continue
      columnIndices.push(c)
      if (t.dtype === 'f32' || t.dtype === 'f64') {
        f[0] = t.data[i]
        valueBits.push(u[0])
      } else valueBits.push(t.data[i])
    }
    rowOffsets.push(columnIndices.length)
  }
  return {rowOffsets, columnIndices, valueBits}
}

/** A CSR's arrays as plain numbers (value bits for comparison). */
export function csrArrays(csr: CsrMatrix): {rowOffsets: number[]; columnIndices: number[]; valueBits: number[]} {
  const v = csr.values!
  const bits = v instanceof Float32Array ? new Uint32Array(v.buffer, v.byteOffset, v.length) : v
  return {rowOffsets: [...csr.rowOffsets], columnIndices: [...csr.columnIndices], valueBits: [...bits]}
}
