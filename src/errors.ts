/**
 * Errors the library throws on purpose. Each carries a stable `code`, the process exit
 * code the CLI uses for it, and a suggested action. Anything else that escapes is a bug.
 *
 * Exit codes (documented in the README):
 *   1  bad input data (corrupt file, NaN weights, invalid CSR, ...)
 *   2  bad usage (flags out of range, unknown format, refusing to overwrite)
 *   3  a GPU or the native addon is required but missing
 *   130 / 143  interrupted by SIGINT / SIGTERM
 */
export type ErrorKind = 'input' | 'usage' | 'device' | 'interrupted' | 'internal'

export const EXIT_CODES: Record<ErrorKind, number> = {
  input: 1,
  usage: 2,
  device: 3,
  interrupted: 130,
  internal: 70,
}

export class SparseError extends Error {
  readonly kind: ErrorKind
  readonly code: string
  readonly suggestion?: string
  readonly exitCode: number

  constructor(kind: ErrorKind, code: string, message: string, suggestion?: string, exitCode?: number) {
    super(message)
    this.name = 'SparseError'
    this.kind = kind
    this.code = code
    this.suggestion = suggestion
    this.exitCode = exitCode ?? EXIT_CODES[kind]
  }
}

/** The file's contents are wrong: truncated, corrupt, unsupported dtype, NaN weights, bad CSR. */
export class InputError extends SparseError {
  constructor(code: string, message: string, suggestion?: string) {
    super('input', code, message, suggestion)
    this.name = 'InputError'
  }
}

/** The caller asked for something impossible: a flag out of range, an existing output, ... */
export class UsageError extends SparseError {
  constructor(code: string, message: string, suggestion?: string) {
    super('usage', code, message, suggestion)
    this.name = 'UsageError'
  }
}

/** A GPU, the CUDA driver, a CUDA library or the native addon is required but unavailable. */
export class DeviceError extends SparseError {
  constructor(code: string, message: string, suggestion?: string) {
    super('device', code, message, suggestion)
    this.name = 'DeviceError'
  }
}

/** The process received SIGINT (exit 130) or SIGTERM (exit 143). */
export class InterruptedError extends SparseError {
  constructor(signal: 'SIGINT' | 'SIGTERM') {
    super('interrupted', 'interrupted', `interrupted by ${signal}`, undefined, signal === 'SIGINT' ? 130 : 143)
    this.name = 'InterruptedError'
  }
}

export function isSparseError(e: unknown): e is SparseError {
  return e instanceof SparseError
}
