/**
 * Independent checks of what a parser returned (written apart from src/sparse/validate.ts,
 * so the validator itself is under test). A failed check throws FuzzViolation.
 */
import type {CsrMatrix, DenseTensor, NamedCsr} from '../../src/types.js'

export class FuzzViolation extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FuzzViolation'
  }
}

export function fail(msg: string): never {
  throw new FuzzViolation(msg)
}

const INT32_MAX = 2 ** 31 - 1

/** Why these CSR arrays are not canonical CSR, or null when they are. Plain loops over plain numbers. */
export function csrProblem(rows: number, cols: number, offsets: ArrayLike<number>, indices: ArrayLike<number>, nValues: number | null, rowOrder?: ArrayLike<number>): string | null {
  if (!Number.isInteger(rows) || rows < 0 || rows > INT32_MAX) return `rows ${rows}`
  if (!Number.isInteger(cols) || cols < 0 || cols > INT32_MAX) return `cols ${cols}`
  if (offsets.length !== rows + 1) return `offsets length ${offsets.length} != rows + 1`
  const nnz = indices.length
  if (nValues !== null && nValues !== nnz) return `values length ${nValues} != nnz ${nnz}`
  if (offsets[0] !== 0) return 'offsets[0] != 0'
  if (offsets[rows] !== nnz) return `offsets[rows] = ${offsets[rows]} != nnz ${nnz}`
  for (let r = 0; r < rows; r++) {
    const a = offsets[r]
    const b = offsets[r + 1]
    if (!(b >= a)) return `offsets decrease at row ${r}`
    if (b > nnz) return `offsets[${r + 1}] past nnz`
    for (let i = a; i < b; i++) {
      const c = indices[i]
      if (!Number.isInteger(c) || c < 0 || c >= cols) return `index ${c} out of range at ${i}`
      if (i > a && !(c > indices[i - 1])) return `indices of row ${r} not strictly ascending at ${i}`
    }
  }
  if (rowOrder !== undefined) {
    if (rowOrder.length !== rows) return `row order length ${rowOrder.length} != rows`
    const seen = new Set<number>()
    for (let i = 0; i < rowOrder.length; i++) {
      const r = rowOrder[i]
      if (!Number.isInteger(r) || r < 0 || r >= rows || seen.has(r)) return `row order not a permutation at ${i}`
      seen.add(r)
    }
  }
  return null
}

function shapeProblem(shape: unknown): string | null {
  if (!Array.isArray(shape)) return 'shape is not an array'
  for (const d of shape) if (!Number.isSafeInteger(d) || d < 0) return `shape has dimension ${String(d)}`
  return null
}

const product = (s: number[]) => s.reduce((a, b) => a * b, 1)

/** The matrix view of a tensor shape: [shape[0], prod(rest)]; 1-D is one row; scalar 1x1. */
export function matrixOf(shape: number[]): [number, number] {
  if (shape.length === 0) return [1, 1]
  if (shape.length === 1) return [1, shape[0]]
  return [shape[0], product(shape.slice(1))]
}

/** A CSR result: canonical, typed as promised, consistent with its tensor shape. */
export function checkCsrResult(named: NamedCsr): void {
  const {csr, shape} = named
  if (typeof named.name !== 'string') fail('name is not a string')
  const sp = shapeProblem(shape)
  if (sp) fail(`${named.name}: ${sp}`)
  checkCsr(csr, named.name)
  const [r, c] = matrixOf(shape)
  if (r !== csr.rows || c !== csr.cols) fail(`${named.name}: tensor shape [${shape.join(', ')}] is a ${r}x${c} matrix but the CSR is ${csr.rows}x${csr.cols}`)
}

export function checkCsr(csr: CsrMatrix, what: string): void {
  if (!(csr.rowOffsets instanceof Int32Array)) fail(`${what}: rowOffsets is not an Int32Array`)
  if (!(csr.columnIndices instanceof Int32Array)) fail(`${what}: columnIndices is not an Int32Array`)
  if (csr.values !== null) {
    const ok = csr.dtype === 'f32' ? csr.values instanceof Float32Array : csr.values instanceof Uint16Array
    if (!ok || !['f32', 'f16', 'bf16'].includes(csr.dtype)) fail(`${what}: values of dtype ${csr.dtype} held in ${csr.values?.constructor.name}`)
  }
  if (csr.rowIndices !== undefined && !(csr.rowIndices instanceof Int32Array)) fail(`${what}: rowIndices is not an Int32Array`)
  const p = csrProblem(csr.rows, csr.cols, csr.rowOffsets, csr.columnIndices, csr.values === null ? null : csr.values.length, csr.rowIndices)
  if (p) fail(`${what}: accepted a non-canonical CSR (${p})`)
}

const DENSE_CLASS: Record<string, string> = {f32: 'Float32Array', f64: 'Float64Array', f16: 'Uint16Array', bf16: 'Uint16Array'}
const ITEM: Record<string, number> = {f32: 4, f64: 8, f16: 2, bf16: 2}

/** A dense result: shape of non-negative integers whose product is the data length, the right array class. */
export function checkDenseResult(t: DenseTensor, expectedName?: string): void {
  if (expectedName !== undefined && t.name !== expectedName) fail(`name ${t.name} != ${expectedName}`)
  const sp = shapeProblem(t.shape)
  if (sp) fail(`${t.name}: ${sp}`)
  const cls = DENSE_CLASS[t.dtype]
  if (!cls) fail(`${t.name}: unknown dtype ${t.dtype}`)
  if (t.data?.constructor?.name !== cls) fail(`${t.name}: dtype ${t.dtype} held in ${t.data?.constructor?.name}`)
  if (t.data.length !== product(t.shape)) fail(`${t.name}: shape [${t.shape.join(', ')}] has ${product(t.shape)} elements but data has ${t.data.length}`)
  const [r, c] = matrixOf(t.shape)
  if (r > INT32_MAX || c > INT32_MAX) fail(`${t.name}: accepted shape [${t.shape.join(', ')}] whose matrix ${r}x${c} exceeds int32`)
}

/** The bytes of a typed array's view. */
export function viewBytes(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The data of a dense result must be exactly the last bytes of the (member) file. */
export function checkDataIsTail(t: DenseTensor, file: Uint8Array): void {
  const d = viewBytes(t.data)
  if (d.length !== ITEM[t.dtype] * t.data.length) fail('data byte length mismatch')
  const tail = file.subarray(file.length - d.length)
  if (!sameBytes(d, tail)) fail(`${t.name}: returned data differ from the file's data bytes`)
}
