/**
 * Safe output. Every file the CLI writes goes through `writeAtomically`: the bytes go to a
 * temporary file in the destination's folder, which is renamed over the destination only
 * once complete, so an error or Ctrl-C never leaves a partial file.
 *
 * Refusals (UsageError, exit 2): an existing destination without `force`; a destination that
 * is one of the inputs without `force` (with `force` it is safe: the input stays open and the
 * rename replaces it only at the end); a destination that is a directory; a missing or
 * unwritable folder; binary output to a terminal. `-` writes to stdout.
 *
 * Temporary files and folders are registered: on SIGINT/SIGTERM they are removed and the
 * process exits 130/143; on any other exit they are removed too (`removeTempFilesSync`).
 */
import {randomBytes} from 'node:crypto'
import {type FileHandle, mkdir, open, readdir, rename, rm, stat, writeFile} from 'node:fs/promises'
import {existsSync, renameSync, rmSync} from 'node:fs'
import {basename, dirname, join, resolve} from 'node:path'

import {SparseError, UsageError} from '../errors.js'
import type {NamedCsr} from '../types.js'
import {csrNnz} from '../sparse/csr.js'
import {writeCsrNpzTo, type CsrNpzWriteOptions} from './csr-npz.js'
import type {ByteSink} from './zip.js'

export type {ByteSink}

export interface OutputOptions {
  /** Replace an existing file (or the input). */
  force?: boolean
  /** Input paths: writing onto one of them needs `force`. ('-' entries are ignored.) */
  inputs?: string[]
}

// ---------------------------------------------------------------------------------------
// Temp-file registry and signal cleanup

const temps = new Set<string>()
/**
 * Folders moved aside while a replacement is renamed into place (old -> destination): if
 * the process is interrupted between the two renames, the old one is put back.
 */
const movedAside = new Map<string, string>()
let handlersInstalled = false

const onSignal = (signal: NodeJS.Signals) => {
  removeTempFilesSync()
  process.exit(signal === 'SIGINT' ? 130 : 143)
}
const onSigint = () => onSignal('SIGINT')
const onSigterm = () => onSignal('SIGTERM')
const onExit = () => removeTempFilesSync()

/** Register a temporary file or folder for removal on a signal or exit (see removeTempFilesSync). */
export function registerTemp(path: string): void {
  temps.add(path)
  if (!handlersInstalled) {
    process.on('SIGINT', onSigint)
    process.on('SIGTERM', onSigterm)
    process.on('exit', onExit)
    handlersInstalled = true
  }
}

export function unregisterTemp(path: string): void {
  temps.delete(path)
  if (temps.size === 0 && handlersInstalled) {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
    process.off('exit', onExit)
    handlersInstalled = false
  }
}

/** Remove every temporary file/folder still registered (synchronous: safe in exit handlers). */
export function removeTempFilesSync(): void {
  for (const [old, dest] of movedAside) {
    try {
      if (!existsSync(dest) && existsSync(old)) {
        renameSync(old, dest)
        temps.delete(old)
      }
    } catch {
      // best effort
    }
  }
  movedAside.clear()
  for (const p of temps) {
    try {
      rmSync(p, {recursive: true, force: true})
    } catch {
      // best effort
    }
  }
  temps.clear()
}

/** A temporary name beside the destination: `.NAME.PID-XXXXXXXX.tmp` in `dir`. */
export function tempName(dir: string, base: string): string {
  return join(dir, `.${base}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
}

// ---------------------------------------------------------------------------------------
// Checks

async function statOrNull(p: string) {
  try {
    return await stat(p)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/** Refuse a destination that exists (without force) or is an input (without force). */
async function checkDestination(path: string, opts: OutputOptions, kind: 'file' | 'dir'): Promise<'absent' | 'file' | 'dir'> {
  const st = await statOrNull(path)
  const parent = dirname(resolve(path))
  const pst = await statOrNull(parent)
  if (!pst) throw new UsageError('output-dir-missing', `cannot write ${path}: folder ${parent} does not exist`, 'create the folder first or choose another -o path')
  if (!pst.isDirectory()) throw new UsageError('output-dir-missing', `cannot write ${path}: ${parent} is not a folder`, 'choose another -o path')
  if (!st) return 'absent'
  for (const input of opts.inputs ?? []) {
    if (input === '-') continue
    const ist = await statOrNull(input)
    if (ist && ist.dev === st.dev && ist.ino === st.ino && !opts.force) {
      throw new UsageError('overwrite-input', `refusing to overwrite the input ${input}`, 'choose another -o path, or pass --force')
    }
  }
  if (kind === 'file' && st.isDirectory()) throw new UsageError('output-is-dir', `cannot write ${path}: it is a directory`, 'choose a file name for -o')
  if (!opts.force) throw new UsageError('output-exists', `refusing to overwrite ${path}`, 'choose another -o path, or pass --force')
  return st.isDirectory() ? 'dir' : 'file'
}

function writeError(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new UsageError('unwritable', `cannot write ${path}: permission denied`, 'choose a writable folder for -o')
  }
  if (code === 'ENOSPC') return new SparseError('input', 'no-space', `cannot write ${path}: no space left on the device`, 'free some space or write elsewhere')
  if (code === 'ENOENT') return new UsageError('output-dir-missing', `cannot write ${path}: its folder does not exist`, 'create the folder first')
  return error instanceof Error ? error : new Error(String(error))
}

// ---------------------------------------------------------------------------------------
// Sinks

/** A sink over an open file handle. */
export class FileSink implements ByteSink {
  bytes = 0
  constructor(private readonly fh: FileHandle) {}
  async write(chunk: Uint8Array): Promise<void> {
    let done = 0
    while (done < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - done, 1 << 30)
      const {bytesWritten} = await this.fh.write(chunk, done, n)
      done += bytesWritten
    }
    this.bytes += chunk.byteLength
  }
}

/** A sink over stdout, honouring back-pressure. */
export class StdoutSink implements ByteSink {
  bytes = 0
  write(chunk: Uint8Array): Promise<void> {
    if (chunk.byteLength === 0) return Promise.resolve()
    this.bytes += chunk.byteLength
    return new Promise((resolvePromise, reject) => {
      process.stdout.write(chunk, (err) => {
        if (err) reject(new UsageError('broken-pipe', `cannot write to stdout (${(err as NodeJS.ErrnoException).code ?? err.message})`, 'the reading end of the pipe closed early'))
        else resolvePromise()
      })
    })
  }
}

/** Where the output went and how many bytes. */
export interface WrittenFile {
  path: string
  bytes: number
}

/**
 * Write a file atomically (see the module comment). `writer` receives a sink; the file
 * appears at `path` only if it resolves. `path` '-' streams to stdout instead.
 */
export async function writeAtomically(path: string, opts: OutputOptions, writer: (sink: ByteSink) => Promise<void>): Promise<WrittenFile> {
  if (path === '-') {
    if (process.stdout.isTTY) {
      throw new UsageError('stdout-tty', 'refusing to write binary output to a terminal', 'redirect stdout (> out.npz) or give a file with -o')
    }
    const sink = new StdoutSink()
    await writer(sink)
    return {path: '-', bytes: sink.bytes}
  }
  await checkDestination(path, opts, 'file')
  const dir = dirname(resolve(path))
  const tmp = tempName(dir, basename(path))
  let fh: FileHandle | undefined
  try {
    fh = await open(tmp, 'wx', 0o666)
  } catch (error) {
    throw writeError(error, path)
  }
  registerTemp(tmp)
  try {
    const sink = new FileSink(fh)
    await writer(sink)
    await fh.close()
    fh = undefined
    await rename(tmp, path).catch((error) => {
      throw writeError(error, path)
    })
    unregisterTemp(tmp)
    return {path, bytes: sink.bytes}
  } catch (error) {
    await fh?.close().catch(() => {})
    await rm(tmp, {force: true}).catch(() => {})
    unregisterTemp(tmp)
    throw writeError(error, path)
  }
}

// ---------------------------------------------------------------------------------------
// A directory of CSR files

/** One tensor in a CSR directory's manifest.json. */
export interface ManifestTensor {
  name: string
  /** The original tensor's shape. */
  shape: number[]
  /** The 2-D CSR shape. */
  rows: number
  cols: number
  nnz: number
  /** 1 - nnz / numel (0 for an empty tensor). */
  sparsity: number
  dtype: string
  /** Whether the file stores a row order (`row_indices`). */
  rowOrder: boolean
  /** The .npz file, relative to the directory. */
  file: string
}

export interface CsrManifest {
  format: 'sparse-csr-dir'
  version: 1
  tensors: ManifestTensor[]
  [key: string]: unknown
}

export const MANIFEST = 'manifest.json'

/** A file name for a tensor name: '/' and odd characters become '_', made unique. */
export function safeFileName(name: string, taken: Set<string>, ext = '.npz'): string {
  let base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 200)
  if (base === '' || base.toLowerCase() === 'manifest') base = `_${base}`
  let file = base + ext
  for (let i = 2; taken.has(file.toLowerCase()); i++) file = `${base}-${i}${ext}`
  taken.add(file.toLowerCase())
  return file
}

/**
 * Writes one CSR `.npz` per tensor into a temporary folder beside `dir`, then `commit()`
 * adds manifest.json and renames the folder into place. `abort()` (or an error, or a
 * signal) removes the temporary folder. With `force`, an existing CSR directory (one with a
 * manifest.json) or an empty folder is replaced; any other existing folder is refused.
 */
export class CsrDirectoryWriter {
  private readonly taken = new Set<string>()
  private readonly tensors: ManifestTensor[] = []
  private done = false
  /** Bytes written so far (the .npz files; manifest.json not counted). */
  bytes = 0

  private constructor(
    readonly dir: string,
    private readonly tmp: string,
    private readonly existing: 'absent' | 'file' | 'dir',
    private readonly npzOptions: CsrNpzWriteOptions,
  ) {}

  static async open(dir: string, opts: OutputOptions & CsrNpzWriteOptions = {}): Promise<CsrDirectoryWriter> {
    if (dir === '-') throw new UsageError('dir-to-stdout', 'several tensors make a directory of CSR files, which cannot go to stdout', 'give a directory path with -o')
    const existing = await checkDestination(dir, opts, 'dir')
    if (existing === 'dir') {
      const names = await readdir(dir)
      if (names.length > 0 && !names.includes(MANIFEST)) {
        throw new UsageError('output-not-csr-dir', `refusing to replace ${dir}: it is a folder that is not a CSR directory (no ${MANIFEST})`, 'choose a new folder name for -o')
      }
    }
    const parent = dirname(resolve(dir))
    const tmp = tempName(parent, basename(dir))
    try {
      await mkdir(tmp)
    } catch (error) {
      throw writeError(error, dir)
    }
    registerTemp(tmp)
    return new CsrDirectoryWriter(dir, tmp, existing, {compress: opts.compress})
  }

  /** Write one tensor's `.npz`; returns its manifest entry. */
  async add(named: NamedCsr): Promise<ManifestTensor> {
    if (this.done) throw new Error('CsrDirectoryWriter: add() after commit()/abort()')
    const file = safeFileName(named.name, this.taken)
    const fh = await open(join(this.tmp, file), 'wx', 0o666).catch((error) => {
      throw writeError(error, this.dir)
    })
    try {
      const sink = new FileSink(fh)
      await writeCsrNpzTo(sink, named, this.npzOptions)
      this.bytes += sink.bytes
    } finally {
      await fh.close()
    }
    const {csr} = named
    const nnz = csrNnz(csr)
    const numel = named.shape.reduce((a, b) => a * b, 1)
    const entry: ManifestTensor = {
      name: named.name,
      shape: named.shape.slice(),
      rows: csr.rows,
      cols: csr.cols,
      nnz,
      sparsity: numel === 0 ? 0 : 1 - nnz / numel,
      dtype: csr.values === null ? 'pattern' : csr.dtype,
      rowOrder: csr.rowIndices !== undefined,
      file,
    }
    this.tensors.push(entry)
    return entry
  }

  /** Write manifest.json (with `extra` top-level fields) and move the folder into place. */
  async commit(extra: Record<string, unknown> = {}): Promise<CsrManifest> {
    if (this.done) throw new Error('CsrDirectoryWriter: commit() twice')
    const manifest: CsrManifest = {...extra, format: 'sparse-csr-dir', version: 1, tensors: this.tensors}
    try {
      await writeFile(join(this.tmp, MANIFEST), JSON.stringify(manifest, null, 2) + '\n')
      if (this.existing !== 'absent') {
        // Move the old one aside first; rename cannot replace a non-empty folder.
        const old = tempName(dirname(resolve(this.dir)), basename(this.dir) + '.old')
        registerTemp(old)
        movedAside.set(old, this.dir)
        await rename(this.dir, old)
        await rename(this.tmp, this.dir)
        movedAside.delete(old)
        await rm(old, {recursive: true, force: true})
        unregisterTemp(old)
      } else {
        await rename(this.tmp, this.dir)
      }
    } catch (error) {
      // A failed swap puts the old folder back rather than leave nothing in its place.
      for (const [old, dest] of movedAside) {
        if (dest !== this.dir) continue
        if (!existsSync(dest) && existsSync(old)) await rename(old, dest).catch(() => {})
        movedAside.delete(old)
        unregisterTemp(old)
      }
      await this.abort()
      throw writeError(error, this.dir)
    }
    unregisterTemp(this.tmp)
    this.done = true
    return manifest
  }

  async abort(): Promise<void> {
    this.done = true
    await rm(this.tmp, {recursive: true, force: true}).catch(() => {})
    unregisterTemp(this.tmp)
  }
}
