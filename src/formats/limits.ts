/**
 * Limits that every reader enforces before allocating, and a helper that keeps text taken
 * from a file (tensor names, dtype strings, member names) printable on one line.
 *
 *   MAX_INDEX        2^31 - 1: rows, columns, nnz and every offset/index of a CSR matrix are
 *                    int32 (Sputnik's and SciPy's default encoding); larger is an InputError.
 *   MAX_ELEMENTS     2^32: the most elements one host array can hold in Node (V8's typed
 *                    array limit); a larger dense tensor is listed as unsupported, not read.
 *   MAX_EMPTY_ROWS   2^16: a tensor with no elements may still claim billions of rows, and
 *                    its CSR would need 4 bytes per row that the file does not justify.
 */
export const MAX_INDEX = 2 ** 31 - 1
export const MAX_ELEMENTS = 2 ** 32
export const MAX_EMPTY_ROWS = 2 ** 16

/** The 2-D matrix [rows, cols] of a tensor shape (see src/sparse/dense-to-csr.ts matrixShape). */
function matrixOf(shape: readonly number[]): [number, number] {
  if (shape.length === 0) return [1, 1]
  if (shape.length === 1) return [1, shape[0]]
  let cols = 1
  for (let i = 1; i < shape.length; i++) cols *= shape[i]
  return [shape[0], cols]
}

/**
 * Why a dense tensor of this shape (non-negative safe integers, numel already checked against
 * the bytes) cannot be handled, or null. Checked when a file is opened, before any tensor
 * data is read.
 */
export function denseShapeProblem(shape: readonly number[]): string | null {
  let numel = 1
  for (const d of shape) numel *= d
  const [rows, cols] = matrixOf(shape)
  if (rows > MAX_INDEX || cols > MAX_INDEX) {
    return `its 2-D view is ${rows}x${cols}, beyond the int32 limit (${MAX_INDEX}) on CSR rows and columns`
  }
  if (numel > MAX_ELEMENTS) return `it has ${numel} elements, more than the ${MAX_ELEMENTS} one array can hold`
  if (numel === 0 && rows > MAX_EMPTY_ROWS) return `it has no elements but claims ${rows} rows (more than ${MAX_EMPTY_ROWS})`
  return null
}

/**
 * Text from a file, made safe for a one-line message: control and line-separator characters
 * escaped, and at most `max` characters (then an ellipsis).
 */
export function safeText(s: string, max = 80): string {
  let t = s.length > max ? s.slice(0, max) + '…' : s
  // eslint-disable-next-line no-control-regex
  t = t.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0)
    if (c === '\n') return '\\n'
    if (c === '\r') return '\\r'
    if (c === '\t') return '\\t'
    return `\\u${code.toString(16).padStart(4, '0')}`
  })
  return t
}
