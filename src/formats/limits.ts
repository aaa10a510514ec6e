/**
 * Limits that every reader enforces before allocating, and a helper that keeps text taken
 * from a file (tensor names, dtype strings, member names) printable on one line.
 *
 *   MAX_INDEX        2^31 - 1: rows, columns, nnz and every offset/index of a CSR matrix are
 *                    int32 (Sputnik's and SciPy's default encoding); larger is an InputError.
 *   MAX_ELEMENTS     2^32: the most elements one host array can hold in Node (V8's typed
 *                    array limit); a larger dense tensor is listed as unsupported, not read.
 *                    Bytes are not limited to 4 GiB: a float32 tensor of up to 2^32
 *                    elements (16 GiB) is read into one buffer of its own.
 *   MAX_EMPTY_ROWS   2^16: a tensor with no elements may still claim billions of rows, and
 *                    its CSR would need 4 bytes per row that the file does not justify.
 */
export const MAX_INDEX = 2 ** 31 - 1
/** The largest manifest.json read (about 1,000,000 tensors' entries; sparse writes ~200 bytes each). */
export const MAX_MANIFEST_BYTES = 256 << 20
export const MAX_ELEMENTS = 2 ** 32
/**
 * The largest of the small text files a flag names, each read whole (readTextFile: a
 * regular file only, its size checked before a byte is read), with room to spare:
 *   --compare FILE.jsonl: the DLMC anchors file is 100 KB; a --jsonl run writes ~1 KB a case.
 */
export const MAX_COMPARE_BYTES = 256 << 20
/** The tune cache (--tune-cache): ~400 bytes an entry, so about 150,000 tuned shapes. */
export const MAX_TUNE_CACHE_BYTES = 64 << 20
/** A --sparsity-map recipe (JSON or YAML): a few patterns, or one per tensor of a large model. */
export const MAX_SPARSITY_MAP_BYTES = 16 << 20
/** The DLMC suite's rn50_batchsizes.txt (2 KB: one line per ResNet-50 layer). */
export const MAX_BATCH_SIZES_BYTES = 1 << 20
export const MAX_EMPTY_ROWS = 2 ** 16

/**
 * Bounds on a torch.save pickle (data.pkl), each refused with one line before memory grows.
 * A real state_dict's pickle is ~150 bytes, ~25 values and ~7 memo entries a tensor, nested
 * 2-5 deep: the bounds allow about 150,000 tensors in one file.
 *   MAX_PICKLE_BYTES    data.pkl itself (checked on the ZIP's declared size, before inflating).
 *   MAX_PICKLE_VALUES   values the unpickler makes (every opcode that pushes one).
 *   MAX_PICKLE_MEMO     memo entries (PUT, MEMOIZE).
 *   MAX_PICKLE_DEPTH    nested MARKs, and the nesting of containers in the object.
 *   MAX_PICKLE_OBJECTS  containers and values reached when the object is walked, counting a
 *                       shared container once per path to it (so a DAG of shared lists, which
 *                       a few bytes make, cannot expand to 2^100 tensors).
 *   MAX_PICKLE_INT_BYTES / MAX_PICKLE_INT_DIGITS  the longest integer (LONG4; text INT/LONG).
 */
export const MAX_PICKLE_BYTES = 64 << 20
export const MAX_PICKLE_VALUES = 1 << 22
export const MAX_PICKLE_MEMO = 1 << 20
export const MAX_PICKLE_DEPTH = 256
export const MAX_PICKLE_OBJECTS = 1 << 20
export const MAX_PICKLE_INT_BYTES = 64
export const MAX_PICKLE_INT_DIGITS = 150
/**
 * The longest tensor name read (characters): names are matched against patterns and printed,
 * and real ones are under 200 characters.
 */
export const MAX_NAME_CHARS = 4096
/** All tensor names of one torch file together (characters): 1M paths of 4,096 would be 4 GB. */
export const MAX_TORCH_NAME_CHARS = 1 << 26

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
 * Characters that can change what a terminal shows or does: C0 controls (ESC starts colour
 * and cursor sequences, CR/LF break the line), DEL, C1 controls (U+009B is a one-character
 * CSI, U+0085 a line break), the Unicode line and paragraph separators, and the
 * bidirectional overrides and isolates (which reorder what is displayed).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
// eslint-disable-next-line no-control-regex
const UNSAFE_KEEP_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

function escapeChar(c: string): string {
  if (c === '\n') return '\\n'
  if (c === '\r') return '\\r'
  if (c === '\t') return '\\t'
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * Text from a file, made safe for a one-line message: control, line-separator and
 * bidirectional-override characters escaped (`\u001b`), and at most `max` characters (then
 * an ellipsis).
 */
export function safeText(s: string, max = 80): string {
  const t = s.length > max ? s.slice(0, max) + '…' : s
  return t.replace(UNSAFE, escapeChar)
}

/** `safeText` without the length limit: every unsafe character escaped, nothing cut. */
export function escapeText(s: string): string {
  return s.replace(UNSAFE, escapeChar)
}

/**
 * Escape unsafe characters in a whole report, keeping its own line breaks and tabs (the
 * last line of defence of the CLI's text output: names are escaped where they are put in
 * the text, so a name cannot add a line either).
 */
export function escapeReport(s: string): string {
  return s.replace(UNSAFE_KEEP_LINES, escapeChar)
}
