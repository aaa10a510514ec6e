/**
 * PyTorch `torch.save` files in the ZIP format (PyTorch >= 1.6; `.pt`, `.pth`, `.bin`,
 * `.ckpt`), read without PyTorch and without running any code.
 *
 * Layout (torch/serialization.py, `_save` and `_load`): a ZIP of stored members under one top
 * folder (`archive/` or the file's stem): `data.pkl` (the object, pickled), `data/<key>` (each
 * storage's raw bytes), `byteorder` (`little`/`big`; absent means little), `version`. In the
 * pickle a tensor is `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
 * requires_grad, backward_hooks[, metadata])` and a storage is the persistent id
 * `('storage', torch.<Type>Storage, key, location, numel)`.
 *
 * The unpickler (pickle.ts) accepts only those names plus plain containers
 * (`collections.OrderedDict`, `torch._utils._rebuild_parameter` for nn.Parameter,
 * `_codecs.encode` for bytes): the same policy as `torch.load(weights_only=True)` without
 * its numpy extras. Anything else (a pickled nn.Module, numpy arrays, arbitrary classes) is
 * refused with the global's name. Legacy (pre-1.6, non-ZIP) files and TorchScript archives
 * are recognised and refused with how to convert them.
 *
 * Tensors are named by their path in the object: a state_dict's keys as they are, nested
 * containers joined with '.' (`{'model': {'fc.weight': t}}` -> `model.fc.weight`, lists by
 * index). Float32/16, bfloat16 and float64 tensors are read; others (int64, bool, ...),
 * non-contiguous views, and second names of one tied tensor are listed as unsupported.
 */
import {InputError} from '../errors.js'
import type {DenseDType, DenseTensor, HostArray} from '../types.js'
import type {ByteSource} from './byte-source.js'
import {denseShapeProblem, MAX_NAME_CHARS, MAX_PICKLE_BYTES, MAX_TORCH_NAME_CHARS, safeText} from './limits.js'
import {pace} from './pace.js'
import {objectTree, PyDict, PyGlobal, PyList, PyTuple, unpickleAsync} from './pickle.js'
import {readZipDirectory, readZipMember, type ZipEntry} from './zip.js'

/** Storage classes: element size and our dtype (null: listed as unsupported). */
const STORAGES: Record<string, {size: number; dtype: DenseDType | null; words: string}> = {
  FloatStorage: {size: 4, dtype: 'f32', words: 'float32'},
  HalfStorage: {size: 2, dtype: 'f16', words: 'float16'},
  BFloat16Storage: {size: 2, dtype: 'bf16', words: 'bfloat16'},
  DoubleStorage: {size: 8, dtype: 'f64', words: 'float64'},
  LongStorage: {size: 8, dtype: null, words: 'int64'},
  IntStorage: {size: 4, dtype: null, words: 'int32'},
  ShortStorage: {size: 2, dtype: null, words: 'int16'},
  CharStorage: {size: 1, dtype: null, words: 'int8'},
  ByteStorage: {size: 1, dtype: null, words: 'uint8'},
  BoolStorage: {size: 1, dtype: null, words: 'bool'},
  ComplexFloatStorage: {size: 8, dtype: null, words: 'complex64'},
  ComplexDoubleStorage: {size: 16, dtype: null, words: 'complex128'},
  UntypedStorage: {size: 1, dtype: null, words: 'untyped bytes'},
}

/** The pickle's global names this reader understands. */
const ALLOWED = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  'torch._utils._rebuild_parameter_with_state',
  '_codecs.encode',
])


interface StorageRef {
  key: string
  type: string
  /** Elements of the storage's type. */
  numel: number
}

class TensorRef {
  constructor(
    readonly storage: StorageRef,
    readonly offset: number,
    readonly shape: number[],
    readonly stride: number[],
  ) {}
}

export interface TorchEntry {
  name: string
  shape: number[]
  /** Our dtype, or null when the storage type is not a float type we read. */
  dtype: DenseDType | null
  /** The storage type in words (float32, int64, ...). */
  dtypeWords: string
  /** Why the tensor cannot be read (dtype, layout, limits), or null. */
  problem: string | null
  /** A tensor listed under an earlier name (the same storage, offset, shape and stride). */
  tiedTo?: string
  storageKey: string
  /** Element offset into the storage, and the element size. */
  offset: number
  itemSize: number
  numel: number
  /** Storage elements the view spans, from its first element to its last (0 when empty). */
  span: number
  /**
   * A non-contiguous view that does not overlap itself (a transposed or sliced tensor): its
   * element strides. read() gathers it into a contiguous tensor (row-major over `shape`), and
   * placeView() writes one back through them.
   */
  strides?: number[]
}

export const LEGACY_SUGGESTION =
  "convert it with PyTorch: torch.save(torch.load('old.pt', weights_only=True), 'new.pt') writes the ZIP format (or save it as .safetensors)"

/** True when the first bytes look like a pickle (a legacy torch file starts with one). */
export function isPickleMagic(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x80 && head[1] >= 2 && head[1] <= 5
}

export class TorchFile {
  private constructor(
    readonly src: ByteSource,
    /** The top folder of the archive's members ('archive/'), with its slash. */
    readonly prefix: string,
    /** Every ZIP member, in the archive's order (for rewriting the file). */
    readonly members: ZipEntry[],
    /** Every tensor found in the object, in pickle order. */
    readonly entries: TorchEntry[],
    /** Storage key -> its ZIP member and size in bytes. */
    readonly storages: Map<string, {member: ZipEntry; bytes: number; itemSize: number}>,
  ) {}

  static async open(src: ByteSource, stem = 'tensor'): Promise<TorchFile> {
    const label = src.label
    const head = await src.read(0, Math.min(src.size, 8))
    if (isPickleMagic(head)) {
      throw new InputError('legacy-torch', `${label} is a legacy (pre-1.6, non-ZIP) PyTorch file, which is not read`, LEGACY_SUGGESTION)
    }
    const members = await readZipDirectory(src)
    // NOTE: a TorchScript archive has a data.pkl too (its module's state), beside
    // constants.pkl and code/: it is named for what it is before data.pkl is looked at
    // (issue 22: it was refused for a global its pickle names, never as TorchScript).
    if (members.some((m) => /^[^/]+\/constants\.pkl$/.test(m.name) || /^[^/]+\/code\//.test(m.name))) {
      throw new InputError('torchscript', `${label} is a TorchScript archive (torch.jit.save), not a torch.save file`, "save the weights instead: torch.save(model.state_dict(), 'model.pt')")
    }
    const pkls = members.filter((m) => /^[^/]+\/data\.pkl$/.test(m.name))
    const pkl = pkls[0]
    if (!pkl) {
      const stray = members.find((m) => /(^|\/)data\.pkl$/.test(m.name))
      if (stray) {
        throw new InputError('bad-torch', `${label}: a ZIP archive with ${safeText(stray.name)} but not in torch.save's layout (<folder>/data.pkl beside <folder>/data/), so not a torch.save file`, 'save it again with torch.save')
      }
      throw new InputError('bad-torch', `${label}: a ZIP archive without data.pkl, so not a torch.save file`, 'save it with torch.save, or pass a .npz/.safetensors')
    }
    if (pkls.length > 1) throw new InputError('bad-torch', `${label}: a ZIP archive with ${pkls.length} top folders holding data.pkl (${safeText(pkls[0].name)}, ${safeText(pkls[1].name)}), so which one PyTorch loads is unclear`, 'save it again with torch.save')
    const prefix = pkl.name.slice(0, pkl.name.length - 'data.pkl'.length)
    const byteorder = members.find((m) => m.name === `${prefix}byteorder`)
    if (byteorder) {
      const order = new TextDecoder().decode(await readZipMember(src, byteorder)).trim()
      if (order !== 'little') {
        throw new InputError('big-endian', `${label}: a ${safeText(order, 20)}-endian checkpoint; only little-endian is read`, 'load and save it again with PyTorch on a little-endian machine')
      }
    }
    if (pkl.size > MAX_PICKLE_BYTES) throw new InputError('bad-torch', `${label}: data.pkl claims ${pkl.size} bytes, more than the ${MAX_PICKLE_BYTES} read (a checkpoint's pickle is about 150 bytes a tensor)`, 'the file is corrupt, or not a plain state_dict: save the tensors with torch.save(model.state_dict(), path)')
    const pickle = await readZipMember(src, pkl)
    const byName = new Map(members.map((m) => [m.name, m]))
    const storages = new Map<string, {member: ZipEntry; bytes: number; itemSize: number}>()
    const refs = new Map<string, StorageRef>()
    const bad = (msg: string): never => {
      throw new InputError('bad-torch', `${label}: ${msg}`, 'the file is corrupt or not a torch.save checkpoint; save it again')
    }
    const obj = await unpickleAsync(pickle, `${label}:data.pkl`, {
      allowGlobal: (module, name) => ALLOWED.has(`${module}.${name}`) || (module === 'torch' && name.endsWith('Storage')),
      refusal: (module, name) => {
        if (module === '__main__' || module.startsWith('torch.nn')) {
          return {message: 'the file holds a whole pickled model (a Python class), not just its weights', suggestion: "save the state_dict instead: torch.save(model.state_dict(), 'model.pt')"}
        }
        if (module.startsWith('numpy')) return {message: 'numpy objects are not read', suggestion: 'save only the tensors: torch.save(model.state_dict(), path)'}
        return undefined
      },
      call: (fn: PyGlobal, args: PyTuple) => {
        switch (fn.qualified) {
          case 'collections.OrderedDict':
            if (args.length !== 0) bad('OrderedDict with arguments')
            return new PyDict()
          case 'torch._utils._rebuild_tensor_v2': {
            const [storage, offset, size, stride] = args
            if (!isStorageRef(storage)) bad('_rebuild_tensor_v2 without a storage')
            if (!isIntTuple(size) || !isIntTuple(stride) || size.length !== stride.length || !isInt(offset)) bad('_rebuild_tensor_v2 with a bad size, stride or offset')
            return new TensorRef(storage as StorageRef, offset as number, [...(size as number[])], [...(stride as number[])])
          }
          case 'torch._utils._rebuild_parameter':
          case 'torch._utils._rebuild_parameter_with_state':
            return args[0]
          case '_codecs.encode': {
            const [text] = args
            if (typeof text !== 'string') bad('_codecs.encode of a non-string')
            return Uint8Array.from(text as string, (c) => c.charCodeAt(0) & 0xff)
          }
          default:
            if (fn.module === 'torch' && fn.name.endsWith('Storage')) return bad(`${fn.qualified} called as a function`)
            return bad(`unexpected call of ${fn.qualified}`)
        }
      },
      persistentLoad: (pid) => {
        if (!(pid instanceof PyTuple) || pid.length < 5 || pid[0] !== 'storage') bad('a persistent id that is not a storage')
        const [, type, key, , numel] = pid as PyTuple
        if (!(type instanceof PyGlobal) || type.module !== 'torch') bad('a storage without a torch storage type')
        const typeName = (type as PyGlobal).name
        if (typeof key !== 'string' || !isInt(numel)) bad('a storage with a bad key or size')
        const info = STORAGES[typeName]
        const existing = refs.get(key as string)
        if (existing) {
          if (existing.type !== typeName) bad(`storage ${safeText(key as string)} is used with two types`)
          return existing
        }
        const ref: StorageRef = {key: key as string, type: typeName, numel: numel as number}
        refs.set(ref.key, ref)
        if (info) {
          const member = byName.get(`${prefix}data/${ref.key}`)
          if (!member) bad(`storage ${safeText(ref.key)} has no data/${safeText(ref.key)} member`)
          const bytes = ref.numel * info.size
          if (member!.size !== bytes) {
            throw new InputError('truncated', `${label}: storage data/${safeText(ref.key)} holds ${member!.size} bytes but ${ref.numel} ${info.words} elements need ${bytes}`, 'the file is incomplete or corrupt; save it again')
          }
          storages.set(ref.key, {member: member!, bytes, itemSize: info.size})
        }
        return ref
      },
    })
    // Measured before it is walked: a DAG of shared containers, a cycle or deep nesting is
    // refused here with one line, so the walk below is bounded by MAX_PICKLE_OBJECTS.
    await objectTree(obj, `${label}:data.pkl`)
    const entries: TorchEntry[] = []
    const seen = new Map<string, string>()
    // Depth first, in the pickle's order (an explicit stack: no recursion on file data).
    const todo: [unknown, string][] = [[obj, '']]
    let steps = 0
    let nameChars = 0
    while (todo.length > 0) {
      if ((++steps & 0xfff) === 0) await pace()
      const [v, path] = todo.pop()!
      if (path.length > MAX_NAME_CHARS) bad(`a tensor path of more than ${MAX_NAME_CHARS} characters (${safeText(path, 60)})`)
      const join = (k: string) => (path ? `${path}.${k}` : k)
      if (v instanceof TensorRef) {
        nameChars += path.length
        if (nameChars > MAX_TORCH_NAME_CHARS) bad(`its tensor names add up to more than ${MAX_TORCH_NAME_CHARS} characters`)
        entries.push(describe(v, path || stem, seen))
      } else if (v instanceof PyDict) {
        const kids: [unknown, string][] = []
        for (const [k, x] of v.map) kids.push([x, join(keyText(k, bad))])
        for (let i = kids.length - 1; i >= 0; i--) todo.push(kids[i])
      } else if (v instanceof PyList || v instanceof PyTuple) {
        for (let i = v.length - 1; i >= 0; i--) todo.push([v[i], join(String(i))])
      }
    }
    const names = new Set<string>()
    for (const e of entries) {
      if (names.has(e.name)) bad(`two tensors are named ${safeText(e.name)}`)
      names.add(e.name)
    }
    markOverlaps(entries)
    return new TorchFile(src, prefix, members, entries, storages)
  }

  entry(name: string): TorchEntry {
    const e = this.entries.find((x) => x.name === name)
    if (!e) throw new InputError('missing-tensor', `${this.src.label}: no tensor named ${safeText(name)}`, 'run `sparse info` to list the tensors')
    return e
  }

  /** The raw bytes of a storage (CRC-checked). */
  async storageBytes(key: string): Promise<Uint8Array> {
    const s = this.storages.get(key)
    if (!s) throw new InputError('missing-tensor', `${this.src.label}: no readable storage ${safeText(key)}`, 'the file is corrupt')
    return readZipMember(this.src, s.member)
  }

  /** Read one tensor (its storage is read whole and CRC-checked, then the view is taken). */
  async read(name: string): Promise<DenseTensor> {
    const e = this.entry(name)
    if (!e.dtype || e.problem) {
      throw new InputError('unsupported-tensor', `${this.src.label}: tensor ${safeText(name)} cannot be read (${e.problem ?? `unsupported dtype ${e.dtypeWords}`})`, 'exclude it')
    }
    const bytes = await this.storageBytes(e.storageKey)
    if (e.strides) {
      const out = new Uint8Array(e.numel * e.itemSize)
      forEachElement(e, (i, at) => out.set(bytes.subarray(at * e.itemSize, (at + 1) * e.itemSize), i * e.itemSize))
      return {name, shape: e.shape.slice(), dtype: e.dtype, data: viewAs(out, e.dtype)}
    }
    const begin = e.offset * e.itemSize
    const view = bytes.subarray(begin, begin + e.numel * e.itemSize)
    return {name, shape: e.shape.slice(), dtype: e.dtype, data: viewAs(view, e.dtype)}
  }

  close(): Promise<void> {
    return this.src.close()
  }
}

function describe(t: TensorRef, name: string, seen: Map<string, string>): TorchEntry {
  const info = STORAGES[t.storage.type]
  let numel = 1
  for (const d of t.shape) numel *= d
  const entry: TorchEntry = {
    name,
    shape: t.shape,
    dtype: info?.dtype ?? null,
    dtypeWords: info?.words ?? t.storage.type,
    problem: null,
    storageKey: t.storage.key,
    offset: t.offset,
    itemSize: info?.size ?? 1,
    numel,
    span: spanOf(t.shape, t.stride),
  }
  const id = `${t.storage.key}|${t.offset}|${t.shape.join(',')}|${t.stride.join(',')}`
  const first = seen.get(id)
  if (first !== undefined) {
    entry.tiedTo = first
    entry.problem = `tied to ${first} (the same storage): pruned with it`
    return entry
  }
  seen.set(id, name)
  if (!info) entry.problem = `unknown storage type torch.${t.storage.type}`
  else if (!info.dtype) entry.problem = 'not a float32/float16/bfloat16/float64 tensor'
  else if (!isContiguous(t.shape, t.stride)) {
    // A layout, not a dtype: a view that does not overlap itself (a transpose, a slice) is
    // read through its strides; one that does (expand, as_strided) is refused by name.
    const last = numel === 0 ? t.offset : t.offset + t.shape.reduce((a, d, i) => a + (d - 1) * t.stride[i], 0)
    if (!nonOverlapping(t.shape, t.stride)) entry.problem = `a view whose elements overlap (stride [${t.stride.join(', ')}], e.g. expand()); save tensor.contiguous()`
    else if (!Number.isSafeInteger(numel) || !Number.isSafeInteger(last) || (numel > 0 && last >= t.storage.numel)) entry.problem = `its strided view (offset ${t.offset}, stride [${t.stride.join(', ')}]) runs past its storage of ${t.storage.numel}`
    else {
      entry.strides = [...t.stride]
      entry.problem = denseShapeProblem(t.shape)
    }
  } else if (!Number.isSafeInteger(numel) || t.offset + numel > t.storage.numel) entry.problem = `its view (offset ${t.offset}, ${numel} elements) runs past its storage of ${t.storage.numel}`
  else entry.problem = denseShapeProblem(t.shape)
  return entry
}

/**
 * A dict key as part of a tensor's name, as String() writes it (a state_dict's keys are
 * strings); a container is refused: its text could be as large as the object it expands to.
 */
function keyText(k: unknown, bad: (msg: string) => never): string {
  if (k === null || typeof k !== 'object' || k instanceof Uint8Array) return String(k)
  return bad('a dict key that is not a string or a number')
}

/** Elements a view spans in its storage: 1 + sum((size - 1) * stride), 0 when empty. */
function spanOf(shape: number[], stride: number[]): number {
  let span = 1
  for (let i = 0; i < shape.length; i++) {
    if (shape[i] === 0) return 0
    span += (shape[i] - 1) * stride[i]
  }
  return span
}

/**
 * Views of one storage that share elements without being the same view (tied names are
 * already listed as such): pruning one would change the other, and pruning both one after
 * the other would prune the shared part twice, so neither is pruned; each is listed with
 * the other's name and its storage is copied unchanged.
 */
function markOverlaps(entries: TorchEntry[]): void {
  const byStorage = new Map<string, {e: TorchEntry; begin: number; end: number}[]>()
  for (const e of entries) {
    if (e.tiedTo !== undefined || e.span === 0) continue
    const span = e.span
    const list = byStorage.get(e.storageKey) ?? []
    list.push({e, begin: e.offset, end: e.offset + span})
    byStorage.set(e.storageKey, list)
  }
  for (const list of byStorage.values()) {
    if (list.length < 2) continue
    list.sort((a, b) => a.begin - b.begin || a.end - b.end)
    // A sweep: each view against the furthest-reaching one before it.
    let reach = list[0]
    for (let i = 1; i < list.length; i++) {
      const cur = list[i]
      if (cur.begin < reach.end) {
        const why = (other: TorchEntry) => `it shares storage elements with ${safeText(other.name)} (overlapping views of one storage), so neither is pruned`
        if (cur.e.problem === null) cur.e.problem = why(reach.e)
        if (reach.e.problem === null) reach.e.problem = why(cur.e)
      }
      if (cur.end > reach.end) reach = cur
    }
  }
}

function isContiguous(shape: number[], stride: number[]): boolean {
  let expected = 1
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] !== 1 && stride[i] !== expected) return false
    expected *= shape[i]
  }
  return true
}

/**
 * True when no two indices of the view reach one element: with the dimensions of size > 1
 * sorted by stride, each stride is at least the extent of the smaller ones (a sufficient
 * condition that holds for transposes, permutations and slices).
 */
function nonOverlapping(shape: number[], stride: number[]): boolean {
  const dims = shape.map((d, i) => ({d, s: stride[i]})).filter((x) => x.d > 1).sort((a, b) => a.s - b.s)
  let extent = 1
  for (const {d, s} of dims) {
    if (s < extent) return false
    extent = s * (d - 1) + 1
  }
  return true
}

/** Calls fn(i, at) for each element of a strided entry: i its row-major index, at its element index in the storage. */
function forEachElement(e: TorchEntry, fn: (i: number, at: number) => void): void {
  const shape = e.shape
  const strides = e.strides!
  const nd = shape.length
  const idx = new Array<number>(nd).fill(0)
  let at = e.offset
  for (let i = 0; i < e.numel; i++) {
    fn(i, at)
    for (let k = nd - 1; k >= 0; k--) {
      idx[k]++
      at += strides[k]
      if (idx[k] < shape[k]) break
      at -= strides[k] * shape[k]
      idx[k] = 0
    }
  }
}

/**
 * Writes a tensor's bytes (row-major over its shape) into its storage's bytes where the
 * entry's view lies: contiguous at its offset, or through its strides.
 */
export function placeView(e: TorchEntry, storage: Uint8Array, data: Uint8Array): void {
  if (!e.strides) {
    storage.set(data, e.offset * e.itemSize)
    return
  }
  forEachElement(e, (i, at) => storage.set(data.subarray(i * e.itemSize, (i + 1) * e.itemSize), at * e.itemSize))
}

function isInt(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0
}

function isIntTuple(x: unknown): x is number[] {
  return x instanceof PyTuple && x.every(isInt)
}

function isStorageRef(x: unknown): x is StorageRef {
  return typeof x === 'object' && x !== null && 'key' in x && 'type' in x && 'numel' in x
}

function viewAs(b: Uint8Array, dtype: DenseDType): HostArray {
  // readZipMember returns a fresh aligned buffer; a view at offset*itemsize stays aligned.
  switch (dtype) {
    case 'f32':
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4)
    case 'f64':
      return new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8)
    default:
      return new Uint16Array(b.buffer, b.byteOffset, b.byteLength / 2)
  }
}
