/**
 * Safe output. Every file the CLI writes goes through `writeAtomically`: the bytes go to a
 * temporary file in the destination's folder, which is moved into place only once complete,
 * so an error or Ctrl-C never leaves a partial file.
 *
 * What may be written over (checked with lstat, before any work and again at the end):
 * - nothing, without `force`: an existing destination, even a dangling symbolic link, is
 *   refused; and the final step cannot replace what appeared meanwhile (a file is linked
 *   into place, which fails if the name exists; a directory claims its name with mkdir),
 *   so of two concurrent runs to one output, one wins and the other gets `output-exists`;
 * - with `force`: a regular file (or a symbolic link: the link is replaced, never its
 *   target), an input (it stays open and is replaced only at the end), and a directory only
 *   if it is a `sparse` CSR directory (its manifest.json says `"format": "sparse-csr-dir"`)
 *   holding nothing but its manifest and the files it lists, or an empty one;
 * - never: a FIFO, a device or a socket (write to those as a stream: `-o -` and a shell
 *   redirect), a directory for a file output, the current folder or one of its parents.
 * A path ending in '/' names a directory, always. `-` writes to stdout.
 *
 * Temporary files and folders are registered (temp-files.ts): on SIGINT/SIGTERM they are
 * removed and the process exits 130/143; on any other exit they are removed too. Those
 * left by a killed run (SIGKILL, power cut) for the same output are removed by the next
 * run once the process that made them is gone.
 */
import {randomBytes} from 'node:crypto'
import {constants as fsConstants, statfsSync, type Stats} from 'node:fs'
import {access, type FileHandle, link, lstat, mkdir, open, readdir, rename, rm, rmdir, stat, unlink, writeFile} from 'node:fs/promises'
import {basename, dirname, join, resolve, sep} from 'node:path'

import {errnoOf, fromSystemError, IoError, SparseError, UsageError} from '../errors.js'
import type {NamedCsr} from '../types.js'
import {csrNnz} from '../sparse/csr.js'
import {readTextFile} from './byte-source.js'
import {writeCsrNpzTo, type CsrNpzWriteOptions} from './csr-npz.js'
import {MAX_MANIFEST_BYTES, safeText} from './limits.js'
import {pace} from './pace.js'
import {forgetMovedAside, markMovedAside, registerTemp, removeTempFilesSync, unregisterTemp} from './temp-files.js'
import type {ByteSink} from './zip.js'

export type {ByteSink}
export {registerTemp, removeTempFilesSync, unregisterTemp}

export interface OutputOptions {
  /** Replace an existing file (or the input). */
  force?: boolean
  /** Input paths: writing onto one of them needs `force`. ('-' entries are ignored.) */
  inputs?: string[]
}

/** Whether an output path names a directory: it ends in '/' (always a directory). */
export function isDirectoryPath(path: string): boolean {
  return path !== '-' && (path.endsWith('/') || path.endsWith(sep))
}

/** A temporary name beside the destination: `.NAME.PID-XXXXXXXX.tmp` in `dir`. */
export function tempName(dir: string, base: string): string {
  return join(dir, `.${base}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
}

/** A temporary name left by a run (ours: `.NAME.PID-XXXXXXXX.tmp` or `.NAME.old.PID-...`). */
export const TEMP_RE = /^\.(.+?)(\.old)?\.(\d+)-[0-9a-f]{8}\.tmp$/

/** A temporary output is stale once its process is gone and it has not changed for this long. */
export const STALE_TEMP_MS = 60_000

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return errnoOf(error) === 'EPERM'
  }
}

/**
 * Remove temporary outputs for `base` in `dir` left by runs that were killed outright
 * (SIGKILL, power cut): those whose process no longer exists on this machine and that have
 * not changed for STALE_TEMP_MS. Best effort; returns the names removed.
 */
export async function removeStaleTemps(dir: string, base: string, now = Date.now()): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const name of names) {
    const m = TEMP_RE.exec(name)
    if (!m || m[1] !== base) continue
    const pid = Number(m[3])
    if (!Number.isSafeInteger(pid) || processAlive(pid)) continue
    const p = join(dir, name)
    try {
      const st = await lstat(p)
      if (now - st.mtimeMs < STALE_TEMP_MS) continue
      await rm(p, {recursive: true, force: true})
      removed.push(name)
    } catch {
      // best effort
    }
  }
  return removed
}

// ---------------------------------------------------------------------------------------
// Checks

async function lstatOrNull(p: string, path: string): Promise<Stats | null> {
  try {
    return await lstat(p)
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null
    throw writeError(error, path)
  }
}

function kindOf(st: Stats): string {
  if (st.isFIFO()) return 'a named pipe (FIFO)'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/** The current folder or one of its parents (replacing it would pull the floor away). */
export function holdsCwd(path: string): boolean {
  const p = resolve(path)
  const cwd = process.cwd()
  return cwd === p || cwd.startsWith(p.endsWith(sep) ? p : p + sep)
}

export type Existing = 'absent' | 'file' | 'link' | 'dir'

/**
 * Refuse a destination that cannot be written (see the module comment); returns what is
 * there now. `kind` is what will be written.
 */
async function checkDestination(path: string, opts: OutputOptions, kind: 'file' | 'dir', owner: FolderOwner = checkCsrDirectory): Promise<Existing> {
  if (kind === 'file' && isDirectoryPath(path)) {
    throw new UsageError('output-is-dir', `cannot write ${path}: a path ending in '/' names a directory, and this output is one file`, 'drop the trailing / (or select several tensors to write a directory)')
  }
  const parent = dirname(resolve(path))
  let pst: Stats | null
  try {
    pst = await stat(parent)
  } catch (error) {
    if (errnoOf(error) !== 'ENOENT' && errnoOf(error) !== 'ENOTDIR') throw writeError(error, path)
    pst = null
  }
  if (!pst) throw new UsageError('output-dir-missing', `cannot write ${path}: folder ${parent} does not exist`, 'create the folder first or choose another -o path')
  if (!pst.isDirectory()) throw new UsageError('output-dir-missing', `cannot write ${path}: ${parent} is not a folder`, 'choose another -o path')
  const st = await lstatOrNull(path, path)
  if (!st) return 'absent'
  if (!st.isFile() && !st.isDirectory() && !st.isSymbolicLink()) {
    throw new UsageError('output-not-regular', `refusing to write ${path}: it is ${kindOf(st)}, and outputs are regular files`, 'to write to a device or a pipe, use -o - and a shell redirect')
  }
  for (const input of opts.inputs ?? []) {
    if (input === '-') continue
    const ist = await stat(input).catch(() => null)
    const target = await stat(path).catch(() => null)
    if (ist && target && ist.dev === target.dev && ist.ino === target.ino && !opts.force) {
      throw new UsageError('overwrite-input', `refusing to overwrite the input ${input}`, 'choose another -o path, or pass --force')
    }
  }
  if (st.isSymbolicLink()) {
    if (kind === 'dir') throw new UsageError('output-is-link', `refusing to replace ${path}: it is a symbolic link`, 'remove the link, or choose another -o path')
    if (!opts.force) throw new UsageError('output-exists', `refusing to overwrite ${path} (a symbolic link)`, 'choose another -o path, or pass --force (which replaces the link, not its target)')
    return 'link'
  }
  if (st.isDirectory()) {
    if (kind === 'file') throw new UsageError('output-is-dir', `cannot write ${path}: it is a directory`, 'choose a file name for -o')
    if (holdsCwd(path)) throw new UsageError('output-is-cwd', `refusing to replace ${path}: it is the current folder or one of its parents`, 'write to a new folder, e.g. -o out/')
    if (!opts.force) throw new UsageError('output-exists', `refusing to overwrite ${path}`, 'choose another -o path, or pass --force')
    await ownedNames(owner, path)
    return 'dir'
  }
  if (kind === 'dir') throw new UsageError('output-is-file', `refusing to replace ${path} with a directory: it is a file`, 'choose another -o path')
  if (!opts.force) throw new UsageError('output-exists', `refusing to overwrite ${path}`, 'choose another -o path, or pass --force')
  return 'file'
}

/**
 * The early check of an output path, before any work (so bad usage fails fast, exit 2,
 * instead of after minutes of pruning): the folder exists and is writable; an existing
 * output (even a dangling symbolic link) needs `force`; a FIFO, a device or a socket is
 * refused. Whether a file or a directory will be written is not known yet: the writers
 * check the rest (and everything again) when they write.
 */
export async function checkOutputPath(output: string | undefined, force = false): Promise<void> {
  if (output === undefined || output === '-') return
  const parent = dirname(resolve(output))
  const pst = await stat(parent).catch(() => null)
  if (!pst || !pst.isDirectory()) {
    throw new UsageError('output-dir-missing', `cannot write ${output}: ${parent} is not an existing folder`, 'create the folder first or choose another -o path')
  }
  try {
    await access(parent, fsConstants.W_OK)
  } catch {
    throw new UsageError('unwritable', `cannot write ${output}: permission denied`, 'choose a writable folder for -o')
  }
  const st = await lstatOrNull(output, output)
  if (!st) return
  if (!st.isFile() && !st.isDirectory() && !st.isSymbolicLink()) {
    throw new UsageError('output-not-regular', `refusing to write ${output}: it is ${kindOf(st)}, and outputs are regular files`, 'to write to a device or a pipe, use -o - and a shell redirect')
  }
  if (!force && st.isDirectory()) {
    // NOTE: --force would not help a single-file output here (issue 22: it then said "it is a directory").
    throw new UsageError('output-exists', `refusing to overwrite ${output}: it is an existing directory`, "choose another -o path; --force replaces a directory only with a directory output (several tensors, or -o ending in '/'), and only an empty one or one sparse wrote")
  }
  if (!force) throw new UsageError('output-exists', `refusing to overwrite ${output}${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`, 'choose another -o path, or pass --force')
}

/**
 * What `--force` may replace in a folder, as one rule for every folder output (a CSR
 * directory, a model folder written with --format dense): an owner looks at the folder and
 * returns the names in it that the output wrote and would write again, or throws a
 * UsageError naming what is not its own. Only a folder whose every entry is the owner's (or
 * an empty one) is replaced, never the current folder or one of its parents
 * (checkDestination), and only the owner's names are deleted (moveFolderIntoPlace), so a
 * file added meanwhile survives. `label` names the folder in messages (it may have been
 * moved aside).
 */
export type FolderOwner = (dir: string, label: string) => Promise<string[]>

/** The owner's names in `dir`; a folder gone meanwhile means another run replaces it (output-exists). */
async function ownedNames(owner: FolderOwner, dir: string, label = dir): Promise<string[]> {
  try {
    return await owner(dir, label)
  } catch (error) {
    // NOTE: the folder (or its manifest) gone while it was checked: another run with
    // --force moved it to replace it; this run yields to that one.
    throw vanished(error) ? changedMeanwhile(label) : error
  }
}

/**
 * An owner for folders of plain files with known names (a model folder: its weight files,
 * index and copied files): a subfolder, a link or any other name is foreign.
 */
export function plainFilesOwner(ours: ReadonlySet<string>, code: string, suggestion: string): FolderOwner {
  return async (dir, label) => {
    const entries = await readdir(dir, {withFileTypes: true}).catch((error) => {
      throw writeError(error, label)
    })
    const foreign = entries.filter((e) => !TEMP_RE.test(e.name) && !(e.isFile() && ours.has(e.name)))
    if (foreign.length > 0) {
      const shown = foreign.slice(0, 3).map((e) => JSON.stringify(safeText(e.name, 40) + (e.isDirectory() ? '/' : ''))).join(', ')
      throw new UsageError(code, `refusing to replace ${label}: it holds ${foreign.length} entr${foreign.length === 1 ? 'y' : 'ies'} this output would not rewrite (${shown}${foreign.length > 3 ? ', ...' : ''})`, suggestion)
    }
    return entries.map((e) => e.name)
  }
}

/**
 * Check a folder destination before any work: the same rule (checkDestination with `owner`)
 * that moveFolderIntoPlace applies again at the end.
 */
export async function checkFolderDestination(dir: string, opts: OutputOptions, owner: FolderOwner): Promise<Existing> {
  return checkDestination(dir, opts, 'dir', owner)
}

/**
 * Move a complete temporary folder into place at `dir`. An existing folder is replaced only
 * when `owner` claims all of it (checked again now, and once more under a private name after
 * it is moved aside, since another run may have changed it); then only the owner's names are
 * deleted. A folder that appears meanwhile is never replaced without --force (mkdir claims the
 * name first). On failure the old folder is put back.
 */
export async function moveFolderIntoPlace(tmp: string, dir: string, opts: OutputOptions, owner: FolderOwner): Promise<void> {
  let aside: string | undefined
  let old: string[] = []
  let claimed = false
  try {
    // Checked again: what is there now may differ from what was there at the start.
    const existing = await checkDestination(dir, opts, 'dir', owner)
    if (existing === 'dir') {
      // NOTE: another run with --force may move or replace the folder meanwhile: a folder
      // gone from under us is its doing, and this run yields (output-exists).
      // Move the old one aside (rename cannot replace a non-empty folder), then ours in.
      aside = tempName(dirname(resolve(dir)), basename(resolve(dir)) + '.old')
      markMovedAside(aside, dir)
      try {
        await rename(dir, aside)
      } catch (error) {
        forgetMovedAside(aside)
        aside = undefined
        throw vanished(error) ? changedMeanwhile(dir) : error
      }
      // What was moved is what gets deleted: checked again under the private name (it may
      // have changed since the check above, e.g. another run's output took its place).
      old = await ownedNames(owner, aside, dir)
      await rename(tmp, dir)
      forgetMovedAside(aside)
      registerTemp(aside)
      await removeOldDirectory(aside, old)
      unregisterTemp(aside)
    } else {
      // Claim the name first: mkdir fails if anything exists there now, so a concurrent
      // run that got there first is never replaced; then rename over our own empty folder.
      await mkdir(dir)
      claimed = true
      await rename(tmp, dir)
    }
  } catch (error) {
    // A failed swap puts the old folder back rather than leave nothing in its place; when
    // another run's output stands there now, the old folder (replaced either way) goes.
    if (aside) {
      const back = await rename(aside, dir).then(
        () => true,
        () => false,
      )
      if (!back && (await lstatOrNull(dir, dir).catch(() => null)) !== null) await removeOldDirectory(aside, old)
      forgetMovedAside(aside)
    }
    if (claimed) await rmdir(dir).catch(() => {})
    throw writeError(error, dir)
  }
}

async function checkCsrDirectory(dir: string, label: string): Promise<string[]> {
  const names = await readdir(dir).catch((error) => {
    throw writeError(error, label)
  })
  if (names.length === 0) return []
  const refuse = (why: string): never => {
    throw new UsageError('output-not-csr-dir', `refusing to replace ${label}: ${why}`, 'choose a new folder name for -o (--force replaces only a CSR directory written by sparse)')
  }
  if (!names.includes(MANIFEST)) refuse(`it is a folder that is not a CSR directory (no ${MANIFEST})`)
  let manifest: unknown
  try {
    manifest = JSON.parse(await readTextFile(join(dir, MANIFEST), MAX_MANIFEST_BYTES, MANIFEST))
  } catch (error) {
    if (error instanceof SparseError && error.kind !== 'input') throw error
    refuse(`its ${MANIFEST} is not one written by sparse`)
  }
  const m = manifest as Partial<CsrManifest> | null
  if (typeof m !== 'object' || m === null || m.format !== 'sparse-csr-dir' || !Array.isArray(m.tensors)) {
    refuse(`it is not a CSR directory written by sparse (its ${MANIFEST} has no "format": "sparse-csr-dir")`)
  }
  const listed = new Set<string>([MANIFEST])
  for (const t of m!.tensors!) if (t && typeof t.file === 'string') listed.add(t.file)
  const extra = names.filter((n) => !listed.has(n) && !TEMP_RE.test(n))
  if (extra.length > 0) {
    refuse(`it holds ${extra.length} file${extra.length === 1 ? '' : 's'} its ${MANIFEST} does not list (${extra.slice(0, 3).map((n) => JSON.stringify(safeText(n, 40))).join(', ')}${extra.length > 3 ? ', ...' : ''})`)
  }
  return names
}

/** proc, sysfs, debugfs, cgroup2 and securityfs (statfs f_type), which refuse new files with ENOENT. */
const PSEUDO_FS = new Set([0x9fa0, 0x62656572, 0x64626720, 0x63677270, 0x73636673])

function isPseudoFs(dir: string): boolean {
  try {
    return PSEUDO_FS.has(Number(statfsSync(dir).type))
  } catch {
    return false
  }
}

/**
 * A system error while writing `path` as a one-line SparseError: permission problems and
 * bad paths are usage errors (exit 2), a full disk or an I/O error exit 74.
 */
function writeError(error: unknown, path: string): Error {
  if (error instanceof SparseError) return error
  const code = errnoOf(error)
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new UsageError('unwritable', `cannot write ${path}: permission denied${code === 'EROFS' ? ' (read-only file system)' : ''}`, 'choose a writable folder for -o')
  }
  if (code === 'ENOENT') {
    // ENOENT in a kernel's pseudo file system (/proc, /sys): the folder is there, and takes no new files.
    const parent = dirname(resolve(path))
    if (isPseudoFs(parent)) return new UsageError('unwritable', `cannot write ${path}: ${parent} does not take new files`, 'choose a regular folder for -o')
    return new UsageError('output-dir-missing', `cannot write ${path}: its folder does not exist`, 'create the folder first')
  }
  if (code === 'EEXIST' || code === 'ENOTEMPTY') return new UsageError('output-exists', `refusing to overwrite ${path}: it appeared while this output was being written`, 'choose another -o path, or pass --force')
  if (code === 'ENOSPC' || code === 'EDQUOT') return new IoError('no-space', `cannot write ${path}: no space left on the device (${code})`, 'free some space, or write elsewhere')
  const mapped = fromSystemError(error, 'write', path)
  return mapped instanceof Error ? mapped : new Error(String(mapped))
}

/**
 * Move the finished temporary file `tmp` to `path` without replacing anything that exists
 * there now: a hard link (fails if the name exists) then unlink of the temporary name; on
 * file systems without hard links, claim the name with an exclusive create and rename over
 * that empty placeholder.
 */
async function moveIntoPlaceNoReplace(tmp: string, path: string): Promise<void> {
  try {
    await link(tmp, path)
  } catch (error) {
    const code = errnoOf(error)
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'EMLINK') throw error
    const fh = await open(path, 'wx')
    await fh.close()
    await rename(tmp, path)
    return
  }
  await unlink(tmp).catch(() => {})
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
        if (err) reject(stdoutError(err))
        else resolvePromise()
      })
    })
  }
}

/**
 * A failed write to stdout: the reader went away (EPIPE) -> `broken-pipe`, which the CLI
 * ends quietly with exit 0, as `head` expects; anything else (ENOSPC on `> /dev/full`, EIO)
 * -> a one-line IoError (exit 74).
 */
export function stdoutError(err: Error): SparseError {
  const code = errnoOf(err)
  if (code === 'EPIPE') return new SparseError('usage', 'broken-pipe', 'stdout was closed by its reader (EPIPE)', undefined, 0)
  const mapped = fromSystemError(err, 'write to', 'stdout')
  return mapped instanceof SparseError ? mapped : new IoError('io-error', `cannot write to stdout (${code ?? err.message})`, 'check where stdout goes')
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
  const existing = await checkDestination(path, opts, 'file')
  const dir = dirname(resolve(path))
  await removeStaleTemps(dir, basename(path))
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
    // Checked again: what is there now may differ from what was there at the start.
    const now = await checkDestination(path, opts, 'file')
    if (existing === 'absent' || now === 'absent') await moveIntoPlaceNoReplace(tmp, path)
    else await rename(tmp, path)
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

/**
 * A file name for a tensor name: '/' and odd characters become '_', made unique. `counters`
 * (optional, kept by the caller across calls) remembers the next suffix per base name, so
 * that a million names that all clean up to the same base cost linear time, not quadratic.
 */
export function safeFileName(name: string, taken: Set<string>, ext = '.npz', counters?: Map<string, number>): string {
  let base = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 200)
  if (base === '' || base.toLowerCase() === 'manifest') base = `_${base}`
  let file = base + ext
  const key = base.toLowerCase()
  let i = counters?.get(key) ?? 2
  while (taken.has(file.toLowerCase())) file = `${base}-${i++}${ext}`
  counters?.set(key, i)
  taken.add(file.toLowerCase())
  return file
}

/**
 * Writes one CSR `.npz` per tensor into a temporary folder beside `dir`, then `commit()`
 * adds manifest.json and moves the folder into place. `abort()` (or an error, or a
 * signal) removes the temporary folder. With `force`, only a CSR directory written by
 * sparse (or an empty folder) is replaced, and only the files its manifest lists are
 * deleted; any other existing folder is refused (see the module comment).
 */
export class CsrDirectoryWriter {
  private readonly taken = new Set<string>()
  private readonly counters = new Map<string, number>()
  private readonly tensors: ManifestTensor[] = []
  private done = false
  /** Bytes written so far (the .npz files; manifest.json not counted). */
  bytes = 0

  private constructor(
    readonly dir: string,
    private readonly tmp: string,
    private readonly opts: OutputOptions,
    private readonly npzOptions: CsrNpzWriteOptions,
  ) {}

  static async open(dir: string, opts: OutputOptions & CsrNpzWriteOptions = {}): Promise<CsrDirectoryWriter> {
    if (dir === '-') throw new UsageError('dir-to-stdout', 'several tensors make a directory of CSR files, which cannot go to stdout', 'give a directory path with -o')
    await checkDestination(dir, opts, 'dir')
    const parent = dirname(resolve(dir))
    const base = basename(resolve(dir))
    await removeStaleTemps(parent, base)
    const tmp = tempName(parent, base)
    try {
      await mkdir(tmp)
    } catch (error) {
      throw writeError(error, dir)
    }
    registerTemp(tmp)
    return new CsrDirectoryWriter(dir, tmp, {force: opts.force, inputs: opts.inputs}, {compress: opts.compress})
  }

  /** Write one tensor's `.npz`; returns its manifest entry. */
  async add(named: NamedCsr): Promise<ManifestTensor> {
    if (this.done) throw new Error('CsrDirectoryWriter: add() after commit()/abort()')
    const file = safeFileName(named.name, this.taken, '.npz', this.counters)
    const fh = await open(join(this.tmp, file), 'wx', 0o666).catch((error) => {
      throw writeError(error, this.dir)
    })
    try {
      const sink = new FileSink(fh)
      await writeCsrNpzTo(sink, named, this.npzOptions)
      this.bytes += sink.bytes
    } catch (error) {
      throw writeError(error, this.dir)
    } finally {
      await fh.close().catch(() => {})
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
      await writeFile(join(this.tmp, MANIFEST), await manifestText(manifest))
      await moveFolderIntoPlace(this.tmp, this.dir, this.opts, checkCsrDirectory)
    } catch (error) {
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

/** Delete a replaced CSR directory moved aside: only the files its manifest listed (checked before it was moved), then the folder. */
async function removeOldDirectory(aside: string, names: string[]): Promise<void> {
  for (const name of names) await unlink(join(aside, name)).catch(() => {})
  await rmdir(aside).catch(() => {})
}

/** Whether an error says the destination folder (or its manifest) is no longer there. */
function vanished(error: unknown): boolean {
  if (error instanceof SparseError) return error.code === 'output-dir-missing' || error.code === 'missing-file'
  return errnoOf(error) === 'ENOENT'
}

/** A destination that another run moved or replaced while this one replaced it. */
function changedMeanwhile(dir: string): UsageError {
  return new UsageError('output-exists', `refusing to overwrite ${dir}: it changed while this output was being written (another run writes it too)`, 'choose another -o path, or run one at a time')
}

/** manifest.json's text: indented, except each tensor on one line (a million tensors stay compact). */
async function manifestText(m: CsrManifest): Promise<string> {
  const {tensors, ...rest} = m
  const head = JSON.stringify(rest, null, 2)
  const parts: string[] = []
  for (let i = 0; i < tensors.length; i++) {
    parts.push('    ' + JSON.stringify(tensors[i]))
    if ((i & 4095) === 4095) await pace()
  }
  const list = parts.length === 0 ? '[]' : `[\n${parts.join(',\n')}\n  ]`
  return `${head.slice(0, -2)},\n  "tensors": ${list}\n}\n`
}
