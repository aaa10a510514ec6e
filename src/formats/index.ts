/**
 * The formats library: reading and writing every file `sparse` handles. No CLI code.
 *
 * Types
 *   FormatName = 'npy' | 'npz' | 'safetensors' | 'torch' | 'sharded' | 'csr-npz' | 'smtx' | 'csr-dir' | 'sp24-npz'
 *   TensorSource {format, path, tensors: TensorInfo[], unsupported, read(name), release(tensor), close()}
 *     release(tensor): hand a tensor back when done; its buffer is reused by the next read
 *     (much faster than fresh memory for large tensors; see BufferPool in byte-source.ts)
 *   TensorInfo {name, shape, dtype}        UnsupportedTensor {name, shape, dtype, reason}
 *   OutputOptions {force?, inputs?}        WrittenFile {path, bytes}
 *   CsrManifest / ManifestTensor (manifest.json of a CSR directory)
 *
 * Detecting and reading
 *   detectFormat(path, forced?)          -> FormatName ('-' sniffs stdin)
 *   isDenseFormat(f), isSparseFormat(f), parseFormatName(s), tensorNameFromPath(path)
 *   openTensorSource(path, forced?)      -> TensorSource, dense inputs: .npy, .npz, .safetensors,
 *                                           torch.save .pt/.bin, a sharded model's index or its
 *                                           Hugging Face folder, '-'
 *   TorchFile.open(src)                  torch.save ZIP files (restricted unpickler, pickle.ts)
 *   openMaskedDenseWriter(...)           the pruned model in its own format (prune --format dense)
 *   toFloat32(tensor)                    -> Float32Array (view for f32; decodes f16/bf16/f64)
 *   readCsrInput(path, forced?)          -> NamedCsr[]: CSR .npz, .smtx, CSR directory, 2:4 .npz, '-'
 *   readSp24Input(path)                  -> Sp24Matrix: a 2:4 .npz, checked, not decoded
 *   readManifest(dir)                    -> CsrManifest
 *
 * Writing (all atomic: temp file + rename; '-' = stdout; refuse to overwrite without force)
 *   writeCsrNpz(named, out, opts)        SciPy-compatible CSR .npz (+ row_indices, tensor_shape, dtype)
 *   writeNpy(tensor, out, opts)          f32 / f16 (/ f64) .npy
 *   writeNpz(tensors, out, opts)         dense tensors as an .npz
 *   writeSmtx(csr, out, opts)            DLMC .smtx (pattern only)
 *   writeSp24Npz(matrix, out, opts)      the 2:4 tiles .npz (encodeSp24(named) makes the matrix;
 *                                        sp24ToNamedCsr(matrix) decodes it; both through the addon)
 *   writeSafetensors(tensors, out, opts) for tests, fixtures and scripts
 *   writeSafetensorsStream(specs, produce, out, opts)  large files, one tensor at a time
 *   CsrDirectoryWriter.open(dir, opts) -> add(named) ... commit(extra) | abort()
 *   writeAtomically(path, opts, sink => ...), removeTempFilesSync()
 *   checkOutputPath(out, force), isDirectoryPath(out) (a trailing '/'), removeStaleTemps(dir, base)
 *   What may be replaced: see output.ts (regular files and links with force; a directory only
 *   when it is a sparse CSR directory holding just its listed files; never devices or FIFOs)
 *
 * Commands' cores
 *   convertFile(opts) -> ConvertResult      (`sparse convert`)
 *   inspectInputs(paths, opts) -> InfoReport  (`sparse info`: {files, totals}); inspectInput(path, opts)
 *   -> InfoResult (one file); inspectEach(path, opts, each) tensor by tensor; inspectDense(t),
 *   inspectCsr(named)
 *
 * Conversions and values (re-exported from src/sparse/)
 *   denseToCsr(tensor, dtype?), csrToDense(named, dtype?), matrixShape(shape), convertValues(...)
 *   createRng(seed), fillNormal(array, seed), randomValues(n, dtype, seed)
 *
 * Limits (limits.ts): MAX_INDEX (int32 CSR), MAX_ELEMENTS (2^32 per dense tensor),
 * MAX_EMPTY_ROWS; denseShapeProblem(shape); safeText(s) for file text in messages.
 *
 * Errors: InputError (exit 1) for bad file contents, UsageError (exit 2) for missing inputs,
 * unknown formats, refused or unwritable outputs. Every reader checks sizes claimed by a
 * file against the bytes present before allocating (fuzzed: npm run fuzz, test/fuzz).
 */
import type {CsrMatrix, DenseTensor, NamedCsr} from '../types.js'
import {writeCsrNpzTo, type CsrNpzWriteOptions} from './csr-npz.js'
import {descrFor, npyChunks} from './npy.js'
import {writeNpzTo} from './npz.js'
import {type ByteSink, type OutputOptions, writeAtomically, type WrittenFile} from './output.js'
import {type SafetensorsSpec, writeSafetensorsStreamTo, writeSafetensorsTo} from './safetensors.js'
import {writeSmtxTo} from './smtx.js'
import {type Sp24Matrix, writeSp24NpzTo} from './sp24-npz.js'

export {
  detectFormat,
  folderKind,
  FORMAT_NAMES,
  HF_WEIGHT_FILES,
  isDirectory,
  isDenseFormat,
  isSparseFormat,
  openTensorSource,
  parseFormatName,
  readCsrInput,
  readManifest,
  readSp24Input,
  readShardIndex,
  resolveModelPath,
  tensorNameFromPath,
  toFloat32,
  type DenseFormat,
  type FormatName,
  type SparseFormat,
  type TensorInfo,
  type TensorSource,
  type UnsupportedTensor,
} from './sources.js'
export {
  checkOutputPath,
  CsrDirectoryWriter,
  isDirectoryPath,
  MANIFEST,
  removeStaleTemps,
  removeTempFilesSync,
  safeFileName,
  writeAtomically,
  type ByteSink,
  type CsrManifest,
  type ManifestTensor,
  type OutputOptions,
  type WrittenFile,
} from './output.js'
export {denseOutputExtensions, maskDense, openMaskedDenseWriter, type MaskedDenseWriter} from './masked-dense.js'
export {expandInputs, INPUT_EXTENSIONS} from './inputs.js'
export {TorchFile, type TorchEntry} from './torch.js'
export {PyDict, PyGlobal, PyList, PyTuple, unpickle, type UnpickleHooks} from './pickle.js'
export {csrNpzArrays, readCsrNpz, writeCsrNpzTo, type CsrNpzWriteOptions} from './csr-npz.js'
export {parseNpy, parseNpyHeader, readNpyBytes, npyHeader} from './npy.js'
export {NpzArchive, writeNpzTo} from './npz.js'
export {SafetensorsFile, writeSafetensorsStreamTo, writeSafetensorsTo, type SafetensorsSpec} from './safetensors.js'
export {parseSmtx, writeSmtxTo} from './smtx.js'
export {
  encodeSp24,
  isSp24Archive,
  readSp24Archive,
  readSp24Npz,
  SP24_FORMAT,
  SP24_MEMBERS,
  SP24_TILE_BYTES,
  sp24NpzArrays,
  sp24Size,
  sp24ToNamedCsr,
  writeSp24NpzTo,
  type Sp24Matrix,
} from './sp24-npz.js'
export {BufferPool, BufferSource, checkTextFile, FileSource, openRegularFile, readStdin, readTextFile, setStdinForTesting, type ByteSource} from './byte-source.js'
export {
  denseShapeProblem,
  escapeText,
  MAX_BATCH_SIZES_BYTES,
  MAX_COMPARE_BYTES,
  MAX_ELEMENTS,
  MAX_EMPTY_ROWS,
  MAX_INDEX,
  MAX_MANIFEST_BYTES,
  MAX_SPARSITY_MAP_BYTES,
  MAX_TUNE_CACHE_BYTES,
  safeText,
} from './limits.js'
export {csrToDense, convertValues, defaultValueDtype, denseToCsr, matrixShape} from '../sparse/dense-to-csr.js'
export {convertFile, type ConvertOptions, type ConvertResult, type ConvertTarget, type ConvertedTensor} from './convert.js'
export {
  infoTotals,
  inspectCsr,
  inspectDense,
  inspectEach,
  inspectInput,
  inspectInputs,
  inspectSp24,
  rowLengthHistogram,
  type HistogramBin,
  type InfoOptions,
  type InfoReport,
  type InfoResult,
  type InfoTensor,
  type InfoTotals,
  type Sp24Info,
} from './info.js'
export {createRng, fillNormal, randomValues, type Rng} from '../sparse/random.js'

/** Write a CSR matrix as a SciPy-compatible `.npz` (validated; `out` '-' = stdout). */
export function writeCsrNpz(named: NamedCsr, out: string, opts: OutputOptions & CsrNpzWriteOptions = {}): Promise<WrittenFile> {
  return writeAtomically(out, opts, (sink) => writeCsrNpzTo(sink, named, opts))
}

/** Write a dense tensor as `.npy` (f32, f16 or f64; bf16 is refused: NumPy has no bfloat16). */
export function writeNpy(tensor: DenseTensor, out: string, opts: OutputOptions = {}): Promise<WrittenFile> {
  const descr = descrFor(tensor.dtype)
  return writeAtomically(out, opts, async (sink) => {
    for (const c of npyChunks(descr, tensor.shape, tensor.data)) await sink.write(c)
  })
}

/** Write dense tensors as an `.npz` (members named after the tensors). */
export function writeNpz(tensors: DenseTensor[], out: string, opts: OutputOptions & {compress?: boolean} = {}): Promise<WrittenFile> {
  const arrays = tensors.map((t) => ({name: t.name, descr: descrFor(t.dtype), shape: t.shape, data: t.data}))
  return writeAtomically(out, opts, (sink) => writeNpzTo(sink, arrays, opts.compress ?? false))
}

/** Write a matrix's pattern as DLMC `.smtx`. */
export function writeSmtx(csr: CsrMatrix, out: string, opts: OutputOptions = {}): Promise<WrittenFile> {
  return writeAtomically(out, opts, (sink) => writeSmtxTo(sink, csr))
}

/** Write dense tensors as `.safetensors` (for tests, fixtures and scripts). */
export function writeSafetensors(tensors: DenseTensor[], out: string, opts: OutputOptions & {metadata?: Record<string, string>} = {}): Promise<WrittenFile> {
  return writeAtomically(out, opts, (sink) => writeSafetensorsTo(sink, tensors, opts.metadata))
}

/**
 * Write `.safetensors` tensor by tensor without holding them in memory: `produce(i, sink)`
 * writes tensor i's little-endian bytes (exactly numel × itemsize).
 */
export function writeSafetensorsStream(
  specs: SafetensorsSpec[],
  produce: (index: number, sink: ByteSink) => Promise<void>,
  out: string,
  opts: OutputOptions & {metadata?: Record<string, string>} = {},
): Promise<WrittenFile> {
  return writeAtomically(out, opts, (sink) => writeSafetensorsStreamTo(sink, specs, produce, opts.metadata))
}

/** Write a matrix's 2:4 tiles as the 2:4 `.npz` (see sp24-npz.ts; make them with encodeSp24). */
export function writeSp24Npz(matrix: Sp24Matrix, out: string, opts: OutputOptions = {}): Promise<WrittenFile> {
  return writeAtomically(out, opts, (sink) => writeSp24NpzTo(sink, matrix))
}
