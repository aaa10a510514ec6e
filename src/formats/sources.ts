/**
 * Format detection and the two entry points for reading: dense tensor sources
 * (.npy, .npz, .safetensors, stdin) and CSR inputs (.npz from SciPy or us, .smtx, a CSR
 * directory, a 2:4 .npz, stdin).
 */
import {existsSync} from 'node:fs'
import {readdir, stat} from 'node:fs/promises'
import {basename, dirname, extname, isAbsolute, join} from 'node:path'

import {InputError, UsageError} from '../errors.js'
import {halfToFloat32} from '../sparse/half.js'
import {validateCsr} from '../sparse/validate.js'
import type {DenseDType, DenseTensor, NamedCsr} from '../types.js'
import {BufferPool, BufferSource, type ByteSource, FileSource, readStdin, readTextFile, statInput} from './byte-source.js'
import {CSR_MEMBERS, readCsrArchive} from './csr-npz.js'
import {describeDescr, NPY_MAGIC, npyDataOffset, npyToDenseTensor, parseNpy, parseNpyHeader, denseDtypeOfDescr} from './npy.js'
import {NpzArchive} from './npz.js'
import {MANIFEST, type CsrManifest} from './output.js'
import {SafetensorsFile} from './safetensors.js'
import {readSp24Archive, SP24_MEMBERS, sp24ToNamedCsr, type Sp24Matrix} from './sp24-npz.js'
import {isPickleMagic, TorchFile} from './torch.js'
import {readSmtxSource} from './smtx.js'
import {isZipMagic, readZipDirectory} from './zip.js'
import {denseShapeProblem, MAX_MANIFEST_BYTES, safeText} from './limits.js'
import {JsonSplitError, parseJsonObjectSplitting} from './json-split.js'
import {pace} from './pace.js'
import {matrixShape} from '../sparse/dense-to-csr.js'

/**
 * `torch`: a torch.save ZIP file (.pt, .pth, .bin, .ckpt). `sharded`: a model split over
 * several files by a Hugging Face index (`model.safetensors.index.json`,
 * `pytorch_model.bin.index.json`), given as the index or as its folder. `sp24-npz`: the 2:4
 * form of one matrix (sp24-npz.ts), read as CSR.
 */
export type FormatName = 'npy' | 'npz' | 'safetensors' | 'torch' | 'sharded' | 'csr-npz' | 'smtx' | 'csr-dir' | 'sp24-npz'
export const FORMAT_NAMES: readonly FormatName[] = ['npy', 'npz', 'safetensors', 'torch', 'sharded', 'csr-npz', 'smtx', 'csr-dir', 'sp24-npz']
export type DenseFormat = 'npy' | 'npz' | 'safetensors' | 'torch' | 'sharded'
export type SparseFormat = 'csr-npz' | 'smtx' | 'csr-dir' | 'sp24-npz'

export function isDenseFormat(f: FormatName): f is DenseFormat {
  return f === 'npy' || f === 'npz' || f === 'safetensors' || f === 'torch' || f === 'sharded'
}

export function isSparseFormat(f: FormatName): f is SparseFormat {
  return f === 'csr-npz' || f === 'smtx' || f === 'csr-dir' || f === 'sp24-npz'
}

const ALIASES: Record<string, FormatName> = {csr: 'csr-npz', dir: 'csr-dir', st: 'safetensors', pt: 'torch', pytorch: 'torch', '2:4': 'sp24-npz', sp24: 'sp24-npz'}

/** Extensions of torch.save files. */
const TORCH_EXTS = new Set(['.pt', '.pth', '.bin', '.ckpt'])

/**
 * The weight files of a Hugging Face model folder, in the order `from_pretrained` looks for
 * them: the first one present names the model.
 */
export const HF_WEIGHT_FILES = ['model.safetensors.index.json', 'model.safetensors', 'pytorch_model.bin.index.json', 'pytorch_model.bin'] as const

/**
 * What a folder holds: a CSR directory (manifest.json), a Hugging Face model (the path of
 * its index or single weight file), or neither (null).
 */
export async function folderKind(dir: string): Promise<{kind: 'csr-dir'} | {kind: 'model'; file: string} | null> {
  const names = new Set(await readdir(dir))
  if (names.has(MANIFEST)) return {kind: 'csr-dir'}
  for (const f of HF_WEIGHT_FILES) if (names.has(f)) return {kind: 'model', file: join(dir, f)}
  return null
}

/** The file a dense input stands for: a model folder's index or weight file, else the path itself. */
export async function resolveModelPath(path: string): Promise<string> {
  if (path === '-' || !(await isDirectory(path))) return path
  const k = await folderKind(path)
  return k?.kind === 'model' ? k.file : path
}

/** Validate a --from value: one of FORMAT_NAMES (or the aliases csr, dir). */
export function parseFormatName(name: string): FormatName {
  const f = (ALIASES[name] ?? name) as FormatName
  if (!FORMAT_NAMES.includes(f)) {
    throw new UsageError('unknown-format', `unknown format '${name}'`, `use one of: ${FORMAT_NAMES.join(', ')}`)
  }
  return f
}

/** Name a single-tensor file's tensor after the file: basename without extension. */
export function tensorNameFromPath(path: string): string {
  if (path === '-') return 'stdin'
  const base = basename(path)
  const ext = extname(base)
  return ext ? base.slice(0, -ext.length) : base
}

/** Guess a format from the first bytes (npz vs csr-npz is decided by the caller). */
function sniff(head: Uint8Array): FormatName | 'zip' | null {
  if (head.length >= 6 && NPY_MAGIC.every((b, i) => head[i] === b)) return 'npy'
  if (isZipMagic(head)) return 'zip'
  // NOTE: before the pickle check: a .safetensors whose header is 0x280..0x580 bytes long
  // starts with 80 02..80 05, as a pickle does (a legacy torch file's byte 8 is never '{').
  if (head.length >= 9) {
    const n = new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true)
    if (n > 0n && n < 100_000_000n && head[8] === 0x7b) return 'safetensors'
  }
  if (isPickleMagic(head)) return 'torch' // a legacy torch file: the reader explains how to convert it
  if (/^\s*\d+\s*,\s*\d+\s*,\s*\d+\s*(\r?\n|$)/.test(new TextDecoder('latin1').decode(head.subarray(0, 64)))) return 'smtx'
  return null
}

async function zipKind(src: ByteSource): Promise<'npz' | 'csr-npz' | 'sp24-npz' | 'torch'> {
  const entries = await readZipDirectory(src)
  // torch.save: <folder>/data.pkl; TorchScript: <folder>/constants.pkl (refused by the reader).
  // NOTE: any data.pkl makes it a torch file, so that one without the <folder>/ layout gets the
  // torch reader's message rather than "not an .npy file".
  if (entries.some((e) => /(^|\/)(data|constants)\.pkl$/.test(e.name))) return 'torch'
  const names = new Set(entries.map((e) => e.name.replace(/\.npy$/, '')))
  if (CSR_MEMBERS.every((n) => names.has(n))) return 'csr-npz'
  return SP24_MEMBERS.every((n) => names.has(n)) ? 'sp24-npz' : 'npz'
}

async function readHead(path: string, n = 64): Promise<Uint8Array> {
  const src = await FileSource.open(path)
  try {
    return await src.read(0, Math.min(n, src.size))
  } finally {
    await src.close()
  }
}

/**
 * The format of an input: `forced` (a --from value) wins; '-' sniffs stdin; a directory
 * with manifest.json is csr-dir; then the extension (.npy, .npz, .safetensors, .smtx), an
 * `.npz` being csr-npz when its members are data/indices/indptr/shape, sp24-npz when they are
 * format/shape/values/meta; an unknown extension
 * is sniffed from the content.
 */
export async function detectFormat(path: string, forced?: string): Promise<FormatName> {
  if (forced !== undefined && forced !== '') return parseFormatName(forced)
  if (path === '-') {
    const bytes = await readStdin()
    if (bytes.length === 0) throw new InputError('empty-stdin', 'stdin is empty', 'pipe a file in: sparse info - < weights.npy')
    const kind = sniff(bytes.subarray(0, 64))
    if (kind === 'zip') return zipKind(new BufferSource(bytes, 'stdin'))
    if (kind) return kind
    throw new InputError('unknown-format', 'cannot tell the format of stdin (not .npy, .npz, .safetensors or .smtx)', 'pipe a .npy or CSR .npz')
  }
  const st = await statInput(path)
  if (st.isDirectory()) {
    const kind = await folderKind(path)
    if (kind?.kind === 'csr-dir') return 'csr-dir'
    if (kind?.kind === 'model') return detectFormat(kind.file)
    throw new UsageError(
      'not-csr-dir',
      `${path} is a directory without ${MANIFEST} (a CSR directory) or a Hugging Face model's weights (${HF_WEIGHT_FILES.join(', ')})`,
      'pass a file, a Hugging Face model folder, or a directory written by `sparse prune`/`sparse convert`',
    )
  }
  if (/\.index\.json$/i.test(path)) return 'sharded'
  const ext = extname(path).toLowerCase()
  if (TORCH_EXTS.has(ext)) {
    // NOTE: .bin and .ckpt are names other tools use too: the content decides.
    const kind = await sniffFile(path)
    if (kind) return kind
    if (ext === '.pt' || ext === '.pth') return 'torch'
  }
  if (ext === '.npy') return 'npy'
  if (ext === '.safetensors') return 'safetensors'
  if (ext === '.smtx') return 'smtx'
  if (ext === '.npz') return zipFileKind(path)
  const kind = await sniffFile(path)
  if (kind) return kind
  throw new UsageError('unknown-format', `cannot tell the format of ${path} from its name or content`, `name it .npy/.npz/.safetensors/.smtx or pass --from (${FORMAT_NAMES.join(', ')})`)
}

/** The format of a ZIP file from its members (zipKind), the file opened for that alone. */
async function zipFileKind(path: string): Promise<FormatName> {
  const src = await FileSource.open(path)
  try {
    return await zipKind(src)
  } finally {
    await src.close()
  }
}

/** The format its first bytes show (a ZIP by its members), or null. */
async function sniffFile(path: string): Promise<FormatName | null> {
  const kind = sniff(await readHead(path))
  return kind === 'zip' ? zipFileKind(path) : kind
}

// ---------------------------------------------------------------------------------------
// Dense sources

export interface TensorInfo {
  name: string
  shape: number[]
  dtype: DenseDType
}

/** A tensor present in the file that cannot be read as a dense float tensor. */
export interface UnsupportedTensor {
  name: string
  shape: number[]
  /** The file's dtype, in words (e.g. 'int64', 'I64'). */
  dtype: string
  reason: string
  /** For a second name of a tied tensor (torch files): the name it is read and pruned under. */
  tiedTo?: string
}

/** A dense input read tensor by tensor. Call close() when done. */
export interface TensorSource {
  format: DenseFormat
  /** The file actually read (a model folder's weight file or index; '-' for stdin). */
  file?: string
  /** For a sharded model: its files (absolute paths) and their tensors, in reading order. */
  shards?: {path: string; format: DenseFormat; tensors: string[]}[]
  /** The path ('-' for stdin). */
  path: string
  /** Readable tensors, in file order. */
  tensors: TensorInfo[]
  /** Tensors of other dtypes (integer buffers, ...), listed so commands can report them. */
  unsupported: UnsupportedTensor[]
  read(name: string): Promise<DenseTensor>
  /**
   * Hand a tensor returned by read() back when done with it (calling this is optional, and
   * strongly advised when streaming large checkpoints). Its memory is then
   * reused by the next read (much faster than fresh memory for large tensors, see
   * BufferPool), so neither the tensor nor any view of its data may be used afterwards.
   * A no-op for tensors the source cannot reuse.
   */
  release(tensor: DenseTensor): void
  close(): Promise<void>
}

/**
 * Open a dense input: .npy, .npz, .safetensors, a torch.save file, a sharded model (its
 * `*.index.json` or a Hugging Face model folder), or '-' (stdin: .npy, .npz, .safetensors or
 * torch). `path` on the result is the path as given; a folder stands for its weight file.
 */
export async function openTensorSource(path: string, forced?: string): Promise<TensorSource> {
  const format = await detectFormat(path, forced)
  if (!isDenseFormat(format)) {
    throw new UsageError('not-dense', `${path} is a sparse ${format} input; this needs a dense tensor file (.npy, .npz, .safetensors, .pt) or a model folder`, 'use `sparse convert --to dense` first, or pass a dense file')
  }
  const file = await resolveModelPath(path)
  if (format === 'sharded') {
    if (file === '-') throw new UsageError('sharded-stdin', 'a sharded model cannot come from stdin', 'pass its folder or its .index.json')
    const sharded = await openShardedSource(file)
    return {...sharded, path}
  }
  const src: ByteSource = file === '-' ? new BufferSource(await readStdin(), 'stdin') : await FileSource.open(file)
  try {
    let opened: TensorSource
    if (format === 'npy') opened = await openNpySource(path, src)
    else if (format === 'npz') opened = await openNpzSource(path, src)
    else if (format === 'torch') opened = await openTorchSource(path, src)
    else opened = await openSafetensorsSource(path, src)
    opened.file = file
    return opened
  } catch (error) {
    await src.close()
    throw error
  }
}

async function openNpySource(path: string, src: ByteSource): Promise<TensorSource> {
  const label = src.label
  const name = tensorNameFromPath(path)
  // Validate the header (dtype, order, length) before reading the data: exactly the
  // header's bytes, however long it is (see npyDataOffset).
  const first = await src.read(0, Math.min(src.size, 12))
  const head = await src.read(0, Math.min(src.size, npyDataOffset(first, label)))
  const header = parseNpyHeader(head, label)
  const dtype = denseDtypeOfDescr(header.descr)
  if (!dtype) {
    throw new InputError('unsupported-dtype', `${label}: unsupported dtype ${describeDescr(header.descr)}; only float32, float16 and float64 are read`, "convert it with numpy: a.astype('float32') then numpy.save")
  }
  if (header.fortranOrder && header.shape.length > 1) {
    throw new InputError('fortran-order', `${label}: Fortran-ordered arrays are not supported`, 'save it in C order: numpy.save(f, numpy.ascontiguousarray(a))')
  }
  const expected = header.dataOffset + header.numel * header.itemSize
  if (src.size < expected) {
    throw new InputError('truncated', `${label} is truncated: shape (${header.shape.join(', ')}) of ${describeDescr(header.descr)} needs ${expected} bytes but the file has ${src.size}`, 'the file is incomplete; save it again')
  }
  if (src.size > expected) {
    throw new InputError('bad-npy', `${label}: ${src.size - expected} unexpected bytes after the data (shape (${header.shape.join(', ')}) needs ${expected})`, 'the file is not a valid .npy; re-export it with numpy.save')
  }
  const problem = denseShapeProblem(header.shape)
  if (problem) throw new InputError('too-large', `${label}: shape (${header.shape.join(', ')}) cannot be handled: ${problem}`, 'sparse works on 2-D views with fewer than 2^31 rows and columns')
  const pool = new BufferPool(1)
  const owned = new WeakSet<ArrayBufferLike>()
  return {
    format: 'npy',
    path,
    tensors: [{name, shape: header.shape, dtype}],
    unsupported: [],
    async read(n: string) {
      if (n !== name) throw new InputError('missing-tensor', `${label}: no tensor named ${safeText(n)} (the only one is ${name})`, 'run `sparse info` to list the tensors')
      if (src instanceof FileSource) {
        // NOTE: the data straight into a buffer of their own, through the open source (not
        // readFile, which refuses files over 2 GiB): tensors over 4 GiB read too.
        const bytes = header.numel * header.itemSize
        const buffer = await src.readBuffer(header.dataOffset, bytes, pool)
        owned.add(buffer)
        return {name, shape: header.shape.slice(), dtype, data: typedView(buffer, bytes, dtype)}
      }
      return npyToDenseTensor(parseNpy(await src.read(0, src.size), label), name, label)
    },
    release(t: DenseTensor) {
      if (owned.has(t.data.buffer)) {
        owned.delete(t.data.buffer)
        pool.give(t.data.buffer as ArrayBuffer)
      }
    },
    close: () => {
      pool.clear()
      return src.close()
    },
  }
}

/** A typed view of a whole buffer's first `bytes` bytes. */
function typedView(buffer: ArrayBuffer, bytes: number, dtype: DenseDType, byteOffset = 0): DenseTensor['data'] {
  if (dtype === 'f32') return new Float32Array(buffer, byteOffset, bytes / 4)
  if (dtype === 'f64') return new Float64Array(buffer, byteOffset, bytes / 8)
  return new Uint16Array(buffer, byteOffset, bytes / 2)
}

async function openNpzSource(path: string, src: ByteSource): Promise<TensorSource> {
  const npz = await NpzArchive.open(src)
  const tensors: TensorInfo[] = []
  const unsupported: UnsupportedTensor[] = []
  const unsupportedByName = new Map<string, UnsupportedTensor>()
  for (const [i, m] of npz.members.entries()) {
    if ((i & 1023) === 1023) await pace()
    const dtype = denseDtypeOfDescr(m.header.descr)
    if (!dtype) {
      unsupported.push({name: m.name, shape: m.header.shape, dtype: describeDescr(m.header.descr), reason: 'not a float32/float16/float64 array'})
    } else if (m.header.fortranOrder && m.header.shape.length > 1) {
      unsupported.push({name: m.name, shape: m.header.shape, dtype: describeDescr(m.header.descr), reason: 'Fortran order'})
    } else if (denseShapeProblem(m.header.shape)) {
      unsupported.push({name: m.name, shape: m.header.shape, dtype: describeDescr(m.header.descr), reason: denseShapeProblem(m.header.shape)!})
    } else {
      tensors.push({name: m.name, shape: m.header.shape, dtype})
    }
  }
  for (const u of unsupported) unsupportedByName.set(u.name, u)
  return {
    format: 'npz',
    path,
    tensors,
    unsupported,
    async read(name: string) {
      const u = unsupportedByName.get(name)
      if (u) throw new InputError('unsupported-tensor', `${src.label}: ${safeText(name)} cannot be read (${u.reason})`, 'exclude it')
      // The data alone, in a buffer of its own: members over 4 GiB read too.
      const {header, buffer, byteOffset} = await npz.readData(name)
      const dtype = denseDtypeOfDescr(header.descr)!
      const bytes = header.numel * header.itemSize
      // A typed view needs an aligned start (an .npy header not padded as NumPy pads it: copy).
      if (byteOffset % header.itemSize === 0) return {name, shape: header.shape.slice(), dtype, data: typedView(buffer, bytes, dtype, byteOffset)}
      const copy = new Uint8Array(bytes)
      copy.set(new Uint8Array(buffer, byteOffset, bytes))
      return {name, shape: header.shape.slice(), dtype, data: typedView(copy.buffer, bytes, dtype)}
    },
    release() {},
    close: () => npz.close(),
  }
}

async function openSafetensorsSource(path: string, src: ByteSource): Promise<TensorSource> {
  const st = await SafetensorsFile.open(src)
  const tensors: TensorInfo[] = []
  const unsupported: UnsupportedTensor[] = []
  for (const [i, e] of st.entries.entries()) {
    if ((i & 1023) === 1023) await pace()
    if (e.problem === null) tensors.push({name: e.name, shape: e.shape.slice(), dtype: e.dtype!})
    else unsupported.push({name: e.name, shape: e.shape.slice(), dtype: e.fileDtype, reason: e.dtype === null ? 'not F32/F16/BF16/F64' : e.problem!})
  }
  return {
    format: 'safetensors',
    path,
    tensors,
    unsupported,
    read: (name: string) => st.read(name),
    release: (t: DenseTensor) => st.release(t),
    close: () => st.close(),
  }
}

async function openTorchSource(path: string, src: ByteSource): Promise<TensorSource> {
  const tf = await TorchFile.open(src, tensorNameFromPath(path))
  return {
    format: 'torch',
    path,
    tensors: tf.entries.filter((e) => e.problem === null).map((e) => ({name: e.name, shape: e.shape.slice(), dtype: e.dtype!})),
    unsupported: tf.entries
      .filter((e) => e.problem !== null)
      .map((e) => ({name: e.name, shape: e.shape.slice(), dtype: e.dtypeWords, reason: e.problem!, ...(e.tiedTo ? {tiedTo: e.tiedTo} : {})})),
    read: (name: string) => tf.read(name),
    release() {},
    close: () => tf.close(),
  }
}

/** A Hugging Face index: {"metadata": {...}, "weight_map": {tensor: shard file}}. */
export interface ShardIndex {
  metadata?: Record<string, unknown>
  weight_map: Record<string, string>
}

/** Read and check a `*.index.json`: shard names must be plain file names in its folder. */
export async function readShardIndex(indexPath: string): Promise<ShardIndex> {
  const st = await statInput(indexPath)
  const bad = (msg: string): never => {
    throw new InputError('bad-index', `${indexPath}: ${msg}`, 'the index is corrupt; download or save the model again')
  }
  if (st.size > 100_000_000) bad(`${st.size} bytes is too large for an index`)
  // readTextFile opens without blocking and refuses a FIFO or device (issue 12).
  const text = await readTextFile(indexPath, 100_000_000, 'index')
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    if (error instanceof SyntaxError) bad(`not valid JSON (${safeText(error.message, 120)})`)
    throw error
  }
  const idx = json as ShardIndex
  if (typeof idx !== 'object' || idx === null || typeof idx.weight_map !== 'object' || idx.weight_map === null || Array.isArray(idx.weight_map)) bad('expected an object with a "weight_map" object')
  for (const [name, file] of Object.entries(idx.weight_map)) {
    if (typeof file !== 'string' || file === '' || file.includes('/') || file.includes('\\') || file === '.' || file === '..' || isAbsolute(file)) {
      bad(`weight_map[${JSON.stringify(safeText(name))}] must be a plain file name in the index's folder, got ${JSON.stringify(safeText(String(file)))}`)
    }
  }
  return idx
}

/**
 * A model split over shards: one source over all of them, in shard order (the order of the
 * shard file names, which Hugging Face numbers) and each shard's own tensor order. One shard
 * is open at a time, so memory stays one tensor (plus its output) whatever the model size.
 */
async function openShardedSource(indexPath: string): Promise<TensorSource> {
  const idx = await readShardIndex(indexPath)
  const dir = dirname(indexPath)
  const files = [...new Set(Object.values(idx.weight_map))].sort()
  if (files.length === 0) throw new InputError('bad-index', `${indexPath}: the weight_map is empty`, 'the index is corrupt')
  const shards: NonNullable<TensorSource['shards']> = []
  const tensors: TensorInfo[] = []
  const unsupported: UnsupportedTensor[] = []
  const where = new Map<string, number>()
  for (const f of files) {
    const path = join(dir, f)
    if (!existsSync(path)) throw new InputError('missing-shard', `${indexPath} lists shard ${safeText(f)}, which is missing`, 'download every shard of the model')
    // NOTE: checked before opening: an index that names itself (or another index, or a
    // folder holding one) would otherwise open itself without end.
    const kind = await detectFormat(path)
    if (kind === 'sharded' || !isDenseFormat(kind)) {
      throw new InputError('bad-index', `${indexPath}: shard ${safeText(f)} is ${kind === 'sharded' ? 'itself an index (or a folder with one)' : `not a weight file (${kind})`}`, 'the index is corrupt; download or save the model again')
    }
    const s = await openTensorSource(path, kind)
    try {
      if (s.format === 'sharded') throw new InputError('bad-index', `${indexPath}: shard ${safeText(f)} is itself an index`, 'the index is corrupt')
      const names: string[] = []
      for (const t of [...s.tensors, ...s.unsupported]) {
        if (where.has(t.name)) throw new InputError('bad-index', `${indexPath}: tensor ${safeText(t.name)} is in two shards`, 'the model is corrupt; download it again')
        where.set(t.name, shards.length)
        names.push(t.name)
      }
      tensors.push(...s.tensors)
      unsupported.push(...s.unsupported)
      shards.push({path, format: s.format, tensors: names})
    } finally {
      await s.close()
    }
  }
  for (const [name, f] of Object.entries(idx.weight_map)) {
    const i = where.get(name)
    if (i === undefined || shards[i].path !== join(dir, f)) {
      throw new InputError('bad-index', `${indexPath}: weight_map puts ${safeText(name)} in ${safeText(f)}, which does not hold it`, 'the index does not match its shards; download the model again')
    }
  }
  let open: {index: number; source: TensorSource} | undefined
  const sourceOf = async (name: string): Promise<TensorSource> => {
    const i = where.get(name)
    if (i === undefined) throw new InputError('missing-tensor', `${indexPath}: no tensor named ${safeText(name)}`, 'run `sparse info` to list the tensors')
    if (open?.index !== i) {
      await open?.source.close()
      open = undefined
      open = {index: i, source: await openTensorSource(shards[i].path)}
    }
    return open.source
  }
  return {
    format: 'sharded',
    path: indexPath,
    file: indexPath,
    shards,
    tensors,
    unsupported,
    read: async (name: string) => (await sourceOf(name)).read(name),
    release: (t: DenseTensor) => open?.source.release(t),
    close: async () => {
      await open?.source.close()
      open = undefined
    },
  }
}

/** A tensor's values as float32 (a view for f32, decoded for f16/bf16/f64). */
export function toFloat32(t: DenseTensor): Float32Array {
  switch (t.dtype) {
    case 'f32':
      return t.data as Float32Array
    case 'f64':
      return Float32Array.from(t.data as Float64Array)
    default:
      return halfToFloat32(t.data as Uint16Array, t.dtype)
  }
}

// ---------------------------------------------------------------------------------------
// CSR inputs

/**
 * Read a 2:4 `.npz` (one matrix, named after the file; '-' = stdin), checked but not yet
 * decoded (sp24ToNamedCsr decodes it).
 */
export async function readSp24Input(path: string): Promise<Sp24Matrix> {
  const src: ByteSource = path === '-' ? new BufferSource(await readStdin(), 'stdin') : await FileSource.open(path)
  const npz = await NpzArchive.open(src).catch(async (error) => {
    await src.close()
    throw error
  })
  try {
    return await readSp24Archive(npz, tensorNameFromPath(path))
  } finally {
    await npz.close()
  }
}

/**
 * Read a CSR input: a CSR `.npz` (one tensor, named after the file), a `.smtx` (pattern only),
 * a CSR directory (every tensor in its manifest, in order), a 2:4 `.npz` (decoded to CSR by
 * the addon's sp24ToCsr), or '-' (stdin holding a CSR `.npz`, a 2:4 `.npz` or `.smtx`). Every
 * matrix is validated.
 */
export async function readCsrInput(path: string, forced?: string): Promise<NamedCsr[]> {
  const format = await detectFormat(path, forced)
  if (isDenseFormat(format)) {
    throw new UsageError('not-sparse', `${path} is a dense ${format} input; this needs a CSR input (.npz from scipy.sparse.save_npz or sparse, .smtx, a CSR directory or a 2:4 .npz)`, 'make one with `sparse prune` or `sparse convert --to csr`')
  }
  const name = tensorNameFromPath(path)
  if (format === 'sp24-npz') {
    const m = await readSp24Input(path)
    return [sp24ToNamedCsr(m, path === '-' ? 'stdin' : path)]
  }
  if (format === 'csr-npz') {
    const src: ByteSource = path === '-' ? new BufferSource(await readStdin(), 'stdin') : await FileSource.open(path)
    const npz = await NpzArchive.open(src).catch(async (error) => {
      await src.close()
      throw error
    })
    try {
      return [await readCsrArchive(npz, name)]
    } finally {
      await npz.close()
    }
  }
  if (format === 'smtx') {
    // Streamed: the first line is checked before the rest is read, and files over 4 GiB work.
    const src: ByteSource = path === '-' ? new BufferSource(await readStdin(), 'stdin') : await FileSource.open(path)
    try {
      const csr = await readSmtxSource(src)
      return [{name, shape: [csr.rows, csr.cols], csr}]
    } finally {
      await src.close()
    }
  }
  return readCsrDirectory(path)
}

/** Read and check a CSR directory's manifest.json. */
export async function readManifest(dir: string): Promise<CsrManifest> {
  const file = join(dir, MANIFEST)
  let json: unknown
  // A regular file of bounded size only (not a FIFO, not /dev/zero), parsed piece by piece.
  const text = await readTextFile(file, MAX_MANIFEST_BYTES, MANIFEST)
  try {
    json = await parseJsonObjectSplitting(text, 'tensors')
  } catch (error) {
    if (error instanceof JsonSplitError) throw new InputError('bad-manifest', `${file} is not valid JSON (${safeText(error.message, 120)})`, 'the directory is corrupt; write it again')
    throw error
  }
  const m = json as CsrManifest
  const bad = (msg: string): never => {
    throw new InputError('bad-manifest', `${file}: ${msg}`, 'the directory is corrupt; write it again')
  }
  if (typeof m !== 'object' || m === null || !Array.isArray(m.tensors)) bad('expected an object with a "tensors" list')
  const names = new Set<string>()
  const files = new Set<string>()
  for (const [i, t] of m.tensors.entries()) {
    if (typeof t !== 'object' || t === null || typeof t.name !== 'string' || typeof t.file !== 'string' || !Array.isArray(t.shape)) {
      bad(`tensors[${i}] needs name, shape and file`)
    }
    if (t.file === '' || t.file.includes('/') || t.file.includes('\\') || t.file.startsWith('.') || isAbsolute(t.file) || t.file === MANIFEST) {
      bad(`tensors[${i}].file ${JSON.stringify(safeText(t.file))} must be a plain file name inside the directory`)
    }
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) bad(`tensors[${i}].shape must be a list of non-negative integers`)
    if (t.nnz !== undefined && !(Number.isSafeInteger(t.nnz) && t.nnz >= 0)) bad(`tensors[${i}].nnz must be a non-negative integer`)
    if (names.has(t.name)) bad(`tensor name ${JSON.stringify(safeText(t.name))} appears twice`)
    if (files.has(t.file)) bad(`file ${JSON.stringify(safeText(t.file))} appears twice`)
    names.add(t.name)
    files.add(t.file)
    if ((i & 1023) === 1023) await pace()
  }
  return m
}

async function readCsrDirectory(dir: string): Promise<NamedCsr[]> {
  const manifest = await readManifest(dir)
  const out: NamedCsr[] = []
  for (const t of manifest.tensors) {
    const path = join(dir, t.file)
    const src = await FileSource.open(path)
    const npz = await NpzArchive.open(src).catch(async (error) => {
      await src.close()
      throw error
    })
    let named: NamedCsr
    try {
      named = await readCsrArchive(npz, t.name)
    } finally {
      await npz.close()
    }
    const nnz = named.csr.rowOffsets[named.csr.rows]
    const shown = safeText(t.name)
    if (typeof t.nnz === 'number' && t.nnz !== nnz) {
      throw new InputError('bad-manifest', `${join(dir, MANIFEST)}: tensor ${shown} lists nnz ${t.nnz} but ${t.file} holds ${nnz}`, 'the directory is corrupt; write it again')
    }
    // The CSR must be the tensor's 2-D view: [shape[0], product of the rest].
    const [rows, cols] = matrixShape(t.shape as number[])
    if (rows !== named.csr.rows || cols !== named.csr.cols) {
      throw new InputError('bad-manifest', `${join(dir, MANIFEST)}: tensor ${shown} has shape [${t.shape.join(', ')}] (a ${rows}x${cols} matrix) but ${t.file} is ${named.csr.rows}x${named.csr.cols}`, 'the directory is corrupt; write it again')
    }
    named.shape = (t.shape as number[]).slice()
    validateCsr(named.csr, path)
    out.push(named)
    await pace()
  }
  return out
}

/** True when `path` is an existing directory. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}
