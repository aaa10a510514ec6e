/**
 * Errors the library throws on purpose. Each carries a stable `code`, the process exit
 * code the CLI uses for it, and a suggested action. Anything else that escapes is a bug.
 *
 * Exit codes (documented in the README):
 *   1  bad input data (corrupt file, NaN weights, invalid CSR, ...)
 *   2  bad usage (flags out of range, unknown format, refusing to overwrite)
 *   3  a GPU or the native addon is required but missing
 *   74 the system failed an input/output operation: no space left, a disk error (EX_IOERR)
 *   130 / 143  interrupted by SIGINT / SIGTERM
 */
export type ErrorKind = 'input' | 'usage' | 'device' | 'io' | 'interrupted' | 'internal'

export const EXIT_CODES: Record<ErrorKind, number> = {
  input: 1,
  usage: 2,
  device: 3,
  io: 74,
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

/**
 * The system failed a read or write that should have worked: no space left on the device,
 * a disk quota, a file too large for the file system, an I/O error (exit 74, EX_IOERR).
 */
export class IoError extends SparseError {
  constructor(code: string, message: string, suggestion?: string) {
    super('io', code, message, suggestion)
    this.name = 'IoError'
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

/** Error codes of the system (errno names) that say the path or the request is wrong. */
const USAGE_ERRNO: Record<string, [string, string, string]> = {
  ENOENT: ['not-found', 'no such file or folder', 'check the path'],
  EACCES: ['permission-denied', 'permission denied', 'check the permissions, or choose another path'],
  EPERM: ['permission-denied', 'operation not permitted', 'check the permissions, or choose another path'],
  EROFS: ['permission-denied', 'read-only file system', 'choose a writable folder'],
  EISDIR: ['is-directory', 'it is a directory', 'give a file path'],
  ENOTDIR: ['bad-path', 'a part of the path is not a folder', 'check the path'],
  ENAMETOOLONG: ['bad-path', 'the path is too long', 'use a shorter path'],
  ELOOP: ['bad-path', 'too many levels of symbolic links', 'check the path'],
  EBUSY: ['bad-path', 'it is busy (in use as a mount point or the current folder)', 'choose another path'],
  EXDEV: ['bad-path', 'it is on another file system', 'choose a path in the same folder'],
  EEXIST: ['output-exists', 'it already exists', 'choose another path, or pass --force'],
  ENOTEMPTY: ['output-exists', 'it already exists and is not empty', 'choose another path'],
  ETXTBSY: ['bad-path', 'the file is busy', 'choose another path'],
}
/** ...and those that say the system could not do it (exit 74). */
const IO_ERRNO: Record<string, [string, string, string]> = {
  ENOSPC: ['no-space', 'no space left on the device', 'free some space, or write elsewhere'],
  EDQUOT: ['no-space', 'disk quota exceeded', 'free some space, or write elsewhere'],
  EFBIG: ['no-space', 'the file is too large for the file system', 'write elsewhere'],
  EIO: ['io-error', 'input/output error (a failing disk or network file system)', 'check the device'],
  EMFILE: ['io-error', 'too many open files', 'raise the limit (ulimit -n) or close other programs'],
  ENFILE: ['io-error', 'too many open files in the system', 'close other programs'],
  ENOMEM: ['io-error', 'out of memory', 'free some memory'],
}

/** The errno name of a Node system error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined
}

/**
 * A system error (ENOSPC, EACCES, ENAMETOOLONG, ...) as a SparseError with a one-line
 * message `cannot <action> <path>: <reason>`: the path or request is wrong -> UsageError
 * (exit 2); the system could not do it -> IoError (exit 74). Anything else is returned as is.
 */
export function fromSystemError(error: unknown, action: string, path?: string): unknown {
  if (error instanceof SparseError) return error
  const code = errnoOf(error)
  if (!code) return error
  const what = path === undefined ? action : `${action} ${path}`
  const usage = USAGE_ERRNO[code]
  if (usage) return new UsageError(usage[0], `cannot ${what}: ${usage[1]} (${code})`, usage[2])
  const io = IO_ERRNO[code] ?? ['io-error', `the system refused it`, 'check the device and try again']
  return new IoError(io[0], `cannot ${what}: ${io[1]} (${code})`, io[2])
}

/**
 * The same error said about a flag's file: `prefix: ` before the message (e.g.
 * `--compare: x.jsonl is a named pipe (FIFO), not a regular file`) and, for a usage or input
 * error, `suggestion` in place of its own (a reader's generic advice, such as streaming the
 * file through stdin, does not fit every flag). Anything else is returned as is.
 */
export function errorAbout(error: unknown, prefix: string, suggestion?: string): unknown {
  if (!(error instanceof SparseError)) return error
  const message = `${prefix}: ${error.message}`
  if (error instanceof UsageError) return new UsageError(error.code, message, suggestion ?? error.suggestion)
  if (error instanceof InputError) return new InputError(error.code, message, suggestion ?? error.suggestion)
  if (error instanceof IoError) return new IoError(error.code, message, error.suggestion)
  return error
}
