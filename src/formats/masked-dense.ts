/**
 * Writing a pruned model back in its own format (`sparse prune --format dense`): the same
 * file type, tensor names, order, shapes, dtypes and metadata as the input, with the pruned
 * weights set to zero; every tensor that was not pruned (skipped, unsupported dtypes, 1-D)
 * is copied byte for byte. So the framework the model came from loads it as before.
 *
 * - `.npy` -> `.npy`; `.npz` -> `.npz` (every member, in order);
 * - `.safetensors` -> `.safetensors` (header order, dtype strings and `__metadata__` kept);
 * - a torch.save file -> the same ZIP: every member copied (the pickle unchanged), the
 *   storages of pruned tensors rewritten;
 * - a model folder (Hugging Face: a single weight file or shards with an index) -> a folder
 *   with the same weight files and index, plus copies of the folder's other files (config,
 *   tokenizer); other weight formats in the folder (.bin beside .safetensors, .h5, .msgpack,
 *   .onnx, .gguf) are not copied.
 *
 * Pruned tensors arrive through `put()` in source order, while the pruner streams the model,
 * so memory stays one tensor (a torch storage) at a time. Files are written atomically; a
 * folder is assembled in a temporary folder and renamed at the end.
 */
import type {Dirent} from 'node:fs'
import {copyFile, mkdir, open, readdir, readFile, rm, stat, writeFile} from 'node:fs/promises'
import {basename, dirname, extname, join, resolve} from 'node:path'

import {UsageError} from '../errors.js'
import type {CsrMatrix, DenseTensor, HostArray} from '../types.js'
import {BufferSource, FileSource, readStdin, type ByteSource} from './byte-source.js'
import {NpzArchive} from './npz.js'
import {bytesOf, descrFor, npyChunks} from './npy.js'
import {checkFolderDestination, FileSink, moveFolderIntoPlace, plainFilesOwner, registerTemp, tempName, unregisterTemp, writeAtomically, type FolderOwner, type OutputOptions} from './output.js'
import {SafetensorsFile} from './safetensors.js'
import {isDirectory, readShardIndex, type DenseFormat, type TensorSource} from './sources.js'
import {placeView, TorchFile} from './torch.js'
import {readZipMember, ZipWriter, type ByteSink} from './zip.js'

/** The dense tensor with every entry outside the CSR's pattern set to zero (same dtype and shape). */
export function maskDense(t: DenseTensor, csr: CsrMatrix): HostArray {
  const src = t.data
  const out = new (src.constructor as {new (n: number): HostArray})(src.length)
  const {rows, cols, rowOffsets, columnIndices} = csr
  for (let r = 0; r < rows; r++) {
    const base = r * cols
    for (let j = rowOffsets[r]; j < rowOffsets[r + 1]; j++) {
      const i = base + columnIndices[j]
      out[i] = src[i]
    }
  }
  return out
}

export interface MaskedDenseWriter {
  /** A pruned tensor's masked values (the name, shape and dtype read from the source), in source order. */
  put(t: DenseTensor): Promise<void>
  /**
   * Copy what remains and move the output into place. A folder's config.json is copied
   * through `editConfig` when given (the serving metadata: serving-config.ts).
   */
  commit(editConfig?: (text: string) => string): Promise<{path: string; bytes: number; files: string[]}>
  abort(): Promise<void>
}

/** Extensions a dense output may have for each input format (a folder input: no extension). */
export function denseOutputExtensions(format: DenseFormat): string[] {
  switch (format) {
    case 'npy':
      return ['.npy']
    case 'npz':
      return ['.npz']
    case 'safetensors':
      return ['.safetensors']
    case 'torch':
      return ['.pt', '.pth', '.bin', '.ckpt']
    default:
      return []
  }
}

/**
 * A sink that stays open across calls (writeAtomically wants one callback): `done()` moves the
 * file into place, `fail()` removes it.
 */
async function openPushSink(path: string, opts: OutputOptions): Promise<{sink: ByteSink & {bytes: number}; done(): Promise<number>; fail(): Promise<void>}> {
  let finish!: () => void
  let cancel!: (e: Error) => void
  const finished = new Promise<void>((res, rej) => {
    finish = res
    cancel = rej
  })
  let gotSink!: (s: ByteSink) => void
  const ready = new Promise<ByteSink>((res) => (gotSink = res))
  const result = writeAtomically(path, opts, async (sink) => {
    gotSink(sink)
    await finished
  })
  const inner = await Promise.race([ready, result.then(() => null)])
  if (inner === null) throw new Error('internal: the output finished before it was written')
  const counting = {
    bytes: 0,
    async write(chunk: Uint8Array) {
      counting.bytes += chunk.byteLength
      await inner.write(chunk)
    },
  }
  return {
    sink: counting,
    async done() {
      finish()
      await result
      return counting.bytes
    },
    async fail() {
      cancel(new Error('aborted'))
      await result.catch(() => {})
    },
  }
}

/** Copy `length` bytes at `offset` of a source to a sink, 16 MiB at a time. */
async function copyRange(src: ByteSource, offset: number, length: number, sink: ByteSink): Promise<void> {
  const step = 16 << 20
  for (let done = 0; done < length; done += step) await sink.write(await src.read(offset + done, Math.min(step, length - done)))
}

/** The input again, for copying what is not pruned ('-': the memoised stdin bytes). */
async function reopen(file: string): Promise<ByteSource> {
  return file === '-' ? new BufferSource(await readStdin(), 'stdin') : FileSource.open(file)
}

/** One weight file's writer: pruned tensors in, the whole file out. */
interface FileWriter {
  put(t: DenseTensor): Promise<void>
  finish(): Promise<void>
}

async function safetensorsWriter(inputFile: string, sink: ByteSink, selected: Set<string>): Promise<FileWriter & {close(): Promise<void>}> {
  const st = await SafetensorsFile.open(await reopen(inputFile))
  // NOTE: no prototype, so that a tensor named __proto__ is a key like any other (on a
  // plain object, assigning it would set the prototype and drop the tensor from the header).
  const header = Object.create(null) as Record<string, unknown>
  if (st.metadata) header.__metadata__ = st.metadata
  let offset = 0
  for (const e of st.entries) {
    header[e.name] = {dtype: e.fileDtype, shape: e.shape, data_offsets: [offset, offset + e.end - e.begin]}
    offset += e.end - e.begin
  }
  const json = new TextEncoder().encode(JSON.stringify(header))
  const pad = (8 - (json.length % 8)) % 8
  const head = new Uint8Array(8 + json.length + pad).fill(0x20)
  new DataView(head.buffer).setBigUint64(0, BigInt(json.length + pad), true)
  head.set(json, 8)
  await sink.write(head)
  let next = 0
  const flushUntil = async (name?: string) => {
    for (; next < st.entries.length; next++) {
      const e = st.entries[next]
      if (e.name === name) return e
      if (selected.has(e.name)) throw new Error(`internal: pruned tensor ${e.name} was not written before ${name ?? 'the end'}`)
      await copyRange(st.src, e.begin, e.end - e.begin, sink)
    }
    if (name !== undefined) throw new Error(`internal: tensor ${name} arrived out of order`)
    return undefined
  }
  return {
    async put(t) {
      const e = (await flushUntil(t.name))!
      const bytes = bytesOf(t.data)
      if (bytes.byteLength !== e.end - e.begin) throw new Error(`internal: tensor ${t.name} has ${bytes.byteLength} bytes, the file ${e.end - e.begin}`)
      await sink.write(bytes)
      next++
    },
    finish: async () => void (await flushUntil()),
    close: () => st.close(),
  }
}

async function npzWriter(inputFile: string, sink: ByteSink, selected: Set<string>): Promise<FileWriter & {close(): Promise<void>}> {
  const npz = await NpzArchive.open(await reopen(inputFile))
  const zip = new ZipWriter(sink)
  let next = 0
  const flushUntil = async (name?: string) => {
    for (; next < npz.members.length; next++) {
      const m = npz.members[next]
      if (m.name === name) return m
      if (selected.has(m.name)) throw new Error(`internal: pruned tensor ${m.name} was not written before ${name ?? 'the end'}`)
      await zip.add(m.entry.name, [await readZipMember(npz.src, m.entry)])
    }
    if (name !== undefined) throw new Error(`internal: tensor ${name} arrived out of order`)
    return undefined
  }
  return {
    async put(t) {
      const m = (await flushUntil(t.name))!
      await zip.add(m.entry.name, npyChunks(descrFor(t.dtype), t.shape, t.data))
      next++
    },
    async finish() {
      await flushUntil()
      await zip.finish()
    },
    close: () => npz.close(),
  }
}

async function torchWriter(inputFile: string, sink: ByteSink, selected: Set<string>): Promise<FileWriter & {close(): Promise<void>}> {
  const tf = await TorchFile.open(await reopen(inputFile))
  // Storage key -> the pruned tensors still to come in it.
  const waiting = new Map<string, Set<string>>()
  for (const e of tf.entries) {
    if (!selected.has(e.name)) continue
    if (!waiting.has(e.storageKey)) waiting.set(e.storageKey, new Set())
    waiting.get(e.storageKey)!.add(e.name)
  }
  const pending = new Map<string, Uint8Array>()
  const memberKey = (name: string) => (name.startsWith(`${tf.prefix}data/`) ? name.slice(tf.prefix.length + 5) : undefined)
  const zip = new ZipWriter(sink)
  let next = 0
  /** Write members in order while each is either untouched or complete. */
  const flush = async (all: boolean) => {
    for (; next < tf.members.length; next++) {
      const m = tf.members[next]
      const key = memberKey(m.name)
      if (key !== undefined && waiting.has(key)) {
        if (waiting.get(key)!.size > 0) {
          if (all) throw new Error(`internal: storage ${key} still waits for ${[...waiting.get(key)!].join(', ')}`)
          return
        }
        await zip.add(m.name, [pending.get(key)!])
        pending.delete(key)
        continue
      }
      await zip.add(m.name, [await readZipMember(tf.src, m)])
    }
  }
  return {
    async put(t) {
      const e = tf.entry(t.name)
      let storage = pending.get(e.storageKey)
      if (!storage) {
        // A copy: the bytes read may be a view of the input (stdin's memoised Buffer, whose
        // slice() is a view too, hence the constructor).
        storage = new Uint8Array(await tf.storageBytes(e.storageKey))
        pending.set(e.storageKey, storage)
      }
      placeView(e, storage, bytesOf(t.data))
      waiting.get(e.storageKey)!.delete(t.name)
      await flush(false)
    },
    async finish() {
      await flush(true)
      await zip.finish()
    },
    close: () => tf.close(),
  }
}

async function fileWriter(format: DenseFormat, inputFile: string, sink: ByteSink, selected: Set<string>, onlyTensor?: string): Promise<FileWriter & {close(): Promise<void>}> {
  if (format === 'safetensors') return safetensorsWriter(inputFile, sink, selected)
  if (format === 'npz') return npzWriter(inputFile, sink, selected)
  if (format === 'torch') return torchWriter(inputFile, sink, selected)
  if (format === 'npy') {
    let written = false
    return {
      async put(t) {
        for (const c of npyChunks(descrFor(t.dtype), t.shape, t.data)) await sink.write(c)
        written = true
      },
      async finish() {
        if (!written) throw new Error(`internal: the .npy tensor ${onlyTensor ?? ''} was not written`)
      },
      close: async () => {},
    }
  }
  throw new Error(`internal: no single-file writer for ${format}`)
}

/**
 * A regular file, or a symbolic link to one (a Hugging Face cache snapshot links every file
 * into blobs/): copied by content. Links to anything else, and dangling ones, are not.
 */
async function isFileOrLinkToFile(dir: string, e: Dirent): Promise<boolean> {
  if (e.isFile()) return true
  if (!e.isSymbolicLink()) return false
  try {
    return (await stat(join(dir, e.name))).isFile()
  } catch {
    return false
  }
}

/** Files of a model folder that are weights in other formats (not copied to the output). */
const OTHER_WEIGHTS = new Set(['.safetensors', '.bin', '.pt', '.pth', '.ckpt', '.h5', '.msgpack', '.onnx', '.gguf', '.npz', '.npy'])

/**
 * Open the writer for `--format dense`. `inputPath` is what the user gave (a folder makes a
 * folder); `selected` names the tensors that will arrive through put().
 */
export async function openMaskedDenseWriter(source: TensorSource, inputPath: string, output: string, selected: Set<string>, opts: OutputOptions): Promise<MaskedDenseWriter> {
  const folderIn = inputPath !== '-' && (await isDirectory(inputPath))
  // A shard index (model.safetensors.index.json) given as the input stands for its folder.
  if (!folderIn && source.format === 'sharded') return FolderWriter.open(source, dirname(inputPath), output, selected, opts)
  if (!folderIn) {
    const push = await openPushSink(output, opts)
    let w: (FileWriter & {close(): Promise<void>}) | undefined
    try {
      w = source.format === 'npy' ? await fileWriter('npy', '', push.sink, selected, source.tensors[0]?.name) : await fileWriter(source.format, source.file ?? inputPath, push.sink, selected)
    } catch (error) {
      await push.fail()
      throw error
    }
    const writer = w
    return {
      put: (t) => writer.put(t),
      async commit() {
        await writer.finish()
        await writer.close()
        const bytes = await push.done()
        return {path: output, bytes, files: [output]}
      },
      async abort() {
        await writer.close().catch(() => {})
        await push.fail()
      },
    }
  }
  return FolderWriter.open(source, inputPath, output, selected, opts)
}

/** The dense writer's owner of a model folder: its own file names, as plain files (output.ts). */
function modelFolderOwner(ours: Set<string>): FolderOwner {
  return plainFilesOwner(ours, 'output-not-model-dir', 'choose a new folder name for -o (--force replaces only a folder that this output rewrites whole)')
}

/** A model folder: its weight files rewritten, its index and other files copied. */
class FolderWriter implements MaskedDenseWriter {
  private current?: {index: number; writer: FileWriter & {close(): Promise<void>}; fh: Awaited<ReturnType<typeof open>>}
  private next = 0
  private bytes = 0

  private constructor(
    private readonly dest: string,
    private readonly tmp: string,
    private readonly opts: OutputOptions,
    private readonly owner: FolderOwner,
    private readonly weightFiles: {path: string; format: DenseFormat; tensors: string[]}[],
    private readonly copies: string[],
    private readonly selected: Set<string>,
  ) {}

  static async open(source: TensorSource, inputDir: string, dest: string, selected: Set<string>, opts: OutputOptions): Promise<FolderWriter> {
    if (dest === '-') throw new UsageError('dir-to-stdout', 'a model folder cannot go to stdout', 'give a folder path with -o')
    const weightFiles = source.shards ?? [{path: source.file ?? inputDir, format: source.format, tensors: [...source.tensors.map((t) => t.name), ...source.unsupported.map((u) => u.name)]}]
    const index = source.format === 'sharded' ? source.file : undefined
    if (index) await readShardIndex(index)
    const weightNames = new Set(weightFiles.map((w) => basename(w.path)))
    const copies: string[] = []
    for (const e of await readdir(inputDir, {withFileTypes: true})) {
      if (e.name.startsWith('.') || weightNames.has(e.name) || !(await isFileOrLinkToFile(inputDir, e))) continue
      if (index !== undefined && e.name === basename(index)) {
        copies.push(e.name)
        continue
      }
      if (OTHER_WEIGHTS.has(extname(e.name).toLowerCase()) || /\.index\.json$/.test(e.name)) continue
      copies.push(e.name)
    }
    if (resolve(dest) === resolve(inputDir)) throw new UsageError('overwrite-input', `refusing to overwrite the input ${inputDir}`, 'choose another -o folder')
    // --force replaces only a folder this output would rewrite whole (the rule every folder
    // output shares, output.ts): every entry in it is a plain file that the new folder also
    // holds (a weight file, the index or a copied file), or a temporary name of ours; never
    // the current folder or one of its parents. Anything else (a subfolder, a link, a file
    // of the user's) means the folder is not ours to delete, whatever model files sit there.
    const owner = modelFolderOwner(new Set<string>([...weightNames, ...copies]))
    await checkFolderDestination(dest, {force: opts.force}, owner)
    const parent = dirname(resolve(dest))
    if (!(await isDirectory(parent))) throw new UsageError('output-dir-missing', `cannot write ${dest}: folder ${parent} does not exist`, 'create the folder first or choose another -o path')
    const tmp = tempName(parent, basename(resolve(dest)))
    await mkdir(tmp)
    registerTemp(tmp)
    return new FolderWriter(dest, tmp, {force: opts.force}, owner, weightFiles, copies, selected)
  }

  /** Finish weight files up to (not including) file `index`, opening it. */
  private async advance(index: number): Promise<void> {
    while (this.next <= index) {
      if (this.current) {
        await this.current.writer.finish()
        await this.current.writer.close()
        await this.current.fh.close()
        this.current = undefined
      }
      if (this.next === this.weightFiles.length) return
      const w = this.weightFiles[this.next]
      const fh = await open(join(this.tmp, basename(w.path)), 'wx', 0o666)
      const sink = new FileSink(fh)
      const counting: ByteSink = {write: async (c) => ((this.bytes += c.byteLength), sink.write(c))}
      this.current = {index: this.next, fh, writer: await fileWriter(w.format, w.path, counting, this.selected)}
      this.next++
    }
  }

  async put(t: DenseTensor): Promise<void> {
    const i = this.weightFiles.findIndex((w) => w.tensors.includes(t.name))
    if (i < 0) throw new Error(`internal: tensor ${t.name} is in no weight file`)
    if (this.current?.index !== i) await this.advance(i)
    await this.current!.writer.put(t)
  }

  async commit(editConfig?: (text: string) => string): Promise<{path: string; bytes: number; files: string[]}> {
    try {
      await this.advance(this.weightFiles.length)
      for (const f of this.copies) {
        const from = join(dirname(this.weightFiles[0].path), f)
        if (f === 'config.json' && editConfig) await writeFile(join(this.tmp, f), editConfig(await readFile(from, 'utf8')), {flag: 'wx'})
        else await copyFile(from, join(this.tmp, f))
      }
      await moveFolderIntoPlace(this.tmp, this.dest, this.opts, this.owner)
      unregisterTemp(this.tmp)
    } catch (error) {
      await this.abort()
      throw error
    }
    return {path: this.dest, bytes: this.bytes, files: [...this.weightFiles.map((w) => basename(w.path)), ...this.copies]}
  }

  async abort(): Promise<void> {
    if (this.current) {
      await this.current.writer.close().catch(() => {})
      await this.current.fh.close().catch(() => {})
      this.current = undefined
    }
    await rm(this.tmp, {recursive: true, force: true}).catch(() => {})
    unregisterTemp(this.tmp)
  }
}
