/**
 * Numbers typed on the command line or given to the library as text. `Number()` accepts
 * hexadecimal, binary and octal ("0x1" is 1), "Infinity" and surrounding whitespace; a
 * sparsity (prune's and bench's -s, bench's --llm-sparsity and --attention-sparsity lists)
 * is a plain decimal number only, so `-s 0x1` is an error rather than a sparsity of 1.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** The value of a plain decimal number (e.g. 0.9, .5, 1e-3), or NaN for anything else. */
export function parseDecimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN
}
