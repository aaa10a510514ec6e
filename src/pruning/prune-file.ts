/**
 * Pruning a file: tensors stream from `openTensorSource` through the pruner to the CSR
 * writer one at a time, so a checkpoint larger than memory is fine as long as its largest
 * tensor (plus that tensor's CSR) fits.
 *
 * Output: one selected tensor -> a CSR `.npz` at `output` ('-' = stdout); several -> a
 * directory with one `.npz` per tensor and manifest.json. No output -> report only.
 * Output is atomic (temporary name, then rename): an error leaves nothing behind.
 */
import {extname} from 'node:path'

import {UsageError} from '../errors.js'
import {CsrDirectoryWriter, isDirectory, openTensorSource, writeCsrNpz, type TensorSource} from '../formats/index.js'
import {denseOutputExtensions, maskDense, openMaskedDenseWriter, type MaskedDenseWriter} from '../formats/masked-dense.js'
import {sparsityConfigFor, withSparsityConfig} from '../formats/serving-config.js'
import {readSparsityMap} from './sparsity-map.js'
import {checkOutputPath, isDirectoryPath} from '../formats/output.js'
import type {PrunedTensor, PruneOptions, PruneProgress} from './magnitude.js'
import {pruneTensors, resolveOptions, skipReason, type ResolvedOptions} from './magnitude.js'
import type {PruneReport} from './report.js'
import type {DenseTensor} from '../types.js'

export interface PruneFileOptions extends PruneOptions {
  /** Output path: a `.npz` for one tensor, a directory for several, '-' for stdout. */
  output?: string
  /** Replace an existing output. */
  force?: boolean
  /** Force the input format (npy, npz, safetensors) instead of inferring it. */
  from?: string
  /** Deflate the output members (like scipy.sparse.save_npz's default). */
  compress?: boolean
  /**
   * 'csr' (default): SciPy CSR files. 'dense': the masked model in the input's own format,
   * dtype, names and metadata (see formats/masked-dense.ts).
   */
  format?: 'csr' | 'dense'
  /** A JSON or YAML sparsity map file (read here; `sparsityMap` takes rules already read). */
  sparsityMapFile?: string
  /**
   * --format dense of a model folder: record the sparsity in its config.json as
   * compressed-tensors' sparsity_config (default false: recent vLLM releases refuse a config with
   * one, and transformers then needs the compressed-tensors package; see formats/serving-config.ts).
   */
  servingConfig?: boolean
}

/** Extensions that name dense files, never a CSR result. */
const DENSE_EXTS = new Set(['.npy', '.safetensors', '.pt', '.pth', '.bin', '.ckpt'])

/** -o must name what --format writes: refuse a mismatch (exit 2) before anything is read. */
function checkOutputName(output: string, format: 'csr' | 'dense', source: TensorSource, folderIn: boolean, several: boolean): void {
  if (output === '-') return
  const ext = extname(output.replace(/\/+$/, '')).toLowerCase()
  if (format === 'csr') {
    if (DENSE_EXTS.has(ext)) {
      throw new UsageError(
        'output-format-mismatch',
        `-o ${output} names a dense ${ext} file, but the result is CSR (${several ? 'a directory of SciPy .npz files' : 'a SciPy .npz'})`,
        `give -o ${several ? 'a directory' : 'NAME.npz'}, or pass --format dense to write the masked model in the input's format`,
      )
    }
    return
  }
  if (folderIn) {
    if (ext !== '' && (DENSE_EXTS.has(ext) || ext === '.npz')) {
      throw new UsageError('output-format-mismatch', `-o ${output} names a ${ext} file, but --format dense of a model folder writes a folder`, 'give -o a folder name')
    }
    return
  }
  const allowed = denseOutputExtensions(source.format)
  if (!allowed.includes(ext)) {
    throw new UsageError(
      'output-format-mismatch',
      `--format dense writes the input's own format (${source.format}), but -o ${output} ${ext ? `names a ${ext} file` : 'has no extension'}`,
      `give -o NAME${allowed[0]}`,
    )
  }
}

export interface PruneFileResult extends PruneReport {
  input: string
  /** Where the CSR went ('-' for stdout), or null when nothing was written. */
  output: string | null
  /**
   * 'npz': one CSR file; 'dir': a directory with manifest.json; 'dense': the masked model in
   * the input's format (a file, or a folder for a folder input); null: report only.
   */
  outputKind: 'npz' | 'dir' | 'dense' | null
  /** For 'dense': the input's format, and the files written (a folder's are relative to it). */
  outputFormat?: string
  outputFiles?: string[]
}

/** The options pruneTensors gets: the map already read, so the file is read once. */
function resolvedInput(options: PruneFileOptions, resolved: ResolvedOptions): PruneOptions {
  return {...options, sparsityMap: resolved.sparsityMap}
}

export async function pruneFile(
  input: string,
  options: PruneFileOptions,
  onProgress?: (p: PruneProgress) => void,
): Promise<PruneFileResult> {
  // Bad usage fails before any data is read.
  const format = options.format ?? 'csr'
  if (format !== 'csr' && format !== 'dense') throw new UsageError('bad-format', `--format must be csr or dense, got '${String(format)}'`)
  if (format === 'dense' && options.dtype) {
    throw new UsageError('dense-dtype', "--dtype sets the CSR value dtype; --format dense keeps the input's dtype", 'leave out --dtype, or write CSR')
  }
  if (options.sparsityMapFile !== undefined) options = {...options, sparsityMap: await readSparsityMap(options.sparsityMapFile)}
  const resolved = resolveOptions(options)
  const output = options.output
  await checkOutputPath(output, options.force)
  const source = await openTensorSource(input, options.from)
  try {
    const selected = source.tensors.filter((t) => skipReason(t.name, t.shape, resolved) === undefined)
    const entries = source.tensors.map((t) => ({...t, load: () => source.read(t.name), release: (x: DenseTensor) => source.release(x)}))
    let outputKind: PruneFileResult['outputKind'] = null
    let sink: (p: PrunedTensor, dense: DenseTensor) => Promise<void> = async () => {}
    let dir: CsrDirectoryWriter | undefined
    let dense: MaskedDenseWriter | undefined
    let modelFolder = false
    const writeOpts = {force: options.force, inputs: [input], compress: options.compress}
    if (output !== undefined) {
      if (selected.length === 0) {
        const missedByMap = resolved.sparsityMap !== undefined && source.tensors.some((t) => skipReason(t.name, t.shape, resolved)?.startsWith('matched by no --sparsity-map pattern'))
        if (missedByMap) {
          const patterns = resolved.sparsityMap!.map((r) => JSON.stringify(r.pattern)).join(', ')
          throw new UsageError('nothing-selected', `no tensor of ${input} matches a --sparsity-map pattern (${patterns}) and no -s is given, so there is nothing to write`, "compare the patterns with the names 'sparse info' lists (a glob matches the whole name, re: a regular expression anywhere in it), or add -s for the tensors no pattern matches")
        }
        throw new UsageError('nothing-selected', `no tensor of ${input} is selected for pruning, so there is nothing to write`, 'check --include/--exclude (1-D tensors need --include-1d, embeddings and lm_head --include-embeddings)')
      }
      // A shard index (model.safetensors.index.json) stands for its model folder.
      const folderIn = source.format === 'sharded' || (input !== '-' && (await isDirectory(input)))
      modelFolder = folderIn
      checkOutputName(output, format, source, folderIn, selected.length > 1)
      if (format === 'dense') {
        outputKind = 'dense'
        dense = await openMaskedDenseWriter(source, input, output, new Set(selected.map((t) => t.name)), writeOpts)
        const writer = dense
        sink = async (p, t) => {
          await writer.put({name: t.name, shape: t.shape, dtype: t.dtype, data: maskDense(t, p.csr)})
          p.report.file = output
        }
      } else if (selected.length === 1 && !isDirectoryPath(output)) {
        // A trailing '/' names a directory, always (even for one tensor).
        outputKind = 'npz'
        sink = async (p) => {
          await writeCsrNpz({name: p.name, shape: p.shape, csr: p.csr}, output, writeOpts)
          p.report.file = output
        }
      } else {
        if (output === '-') {
          throw new UsageError('several-to-stdout', `${input} has ${selected.length} tensors to prune; -o - (stdout) takes exactly one`, 'give a directory with -o, or select one tensor with --include')
        }
        if (/\.npz$/i.test(output)) {
          throw new UsageError('several-to-npz', `${input} has ${selected.length} tensors to prune, which make a directory, but -o ${output} names an .npz file`, 'give a directory name with -o, or select one tensor with --include')
        }
        outputKind = 'dir'
        dir = await CsrDirectoryWriter.open(output, writeOpts)
        const writer = dir
        sink = async (p) => {
          const entry = await writer.add({name: p.name, shape: p.shape, csr: p.csr})
          p.report.file = entry.file
        }
      }
    }
    let report: PruneReport
    let written: {files: string[]} | undefined
    const servingNotes: string[] = []
    try {
      report = await pruneTensors(entries, resolvedInput(options, resolved), sink, onProgress)
      if (dir) {
        await dir.commit({
          source: input,
          pruning: {sparsity: report.sparsity, scope: report.scope, pattern: report.pattern, reorder: resolved.reorder},
        })
      }
      if (dense) {
        // Asked for (--serving-config): a model folder's config.json records the sparsity as
        // compressed-tensors defines it.
        const all = {...report, skipped: [...report.skipped, ...source.unsupported.map((u) => ({name: u.name, shape: u.shape, reason: u.reason}))]}
        const sparsity = modelFolder && options.servingConfig === true ? sparsityConfigFor(all) : undefined
        written = await dense.commit(
          sparsity &&
            ((text) => {
              const r = withSparsityConfig(text, sparsity)
              servingNotes.push(r.note ?? `config.json records the sparsity for serving stacks (compressed-tensors sparsity_config: ${sparsity.sparsity_structure}, global_sparsity ${sparsity.global_sparsity}, as --serving-config asked)`)
              return r.text
            }),
        )
      }
    } catch (error) {
      await dir?.abort()
      await dense?.abort()
      throw error
    }
    report.notes.push(...servingNotes)
    const tied = source.unsupported.filter((u) => u.tiedTo !== undefined)
    const unsupported = source.unsupported.filter((u) => u.tiedTo === undefined)
    for (const u of tied) report.skipped.push({name: u.name, shape: u.shape, reason: u.reason})
    // A dtype we do not read, or a tensor we cannot take as it is stored (a layout, a limit):
    // each is named for what it is (issue 22: an overlapping view was "unsupported dtype float32").
    const byDtype = (u: (typeof unsupported)[number]) => /^(not a|not F|unknown storage)/.test(u.reason)
    for (const u of unsupported) {
      report.skipped.push({name: u.name, shape: u.shape, reason: byDtype(u) ? `unsupported dtype ${u.dtype} (${u.reason})` : `${u.dtype} tensor that cannot be read: ${u.reason}`})
    }
    const dtypes = unsupported.filter(byDtype)
    if (dtypes.length > 0) {
      const n = dtypes.length
      report.notes.push(`skipped ${n} tensor${n === 1 ? '' : 's'} of unsupported dtype: ${dtypes.map((u) => `${u.name} (${u.dtype})`).join(', ')}`)
    }
    if (format === 'csr' && outputKind !== null && report.tensors.some((t) => t.dtype === 'f16' || t.dtype === 'bf16')) {
      report.notes.push('the CSR values are 16-bit: SciPy cannot call toarray() on float16 and reads bfloat16 as raw uint16 bits; --dtype f32 (alias --value-dtype) writes float32 values (see docs/checkpoints.md)')
    }
    return {
      input,
      output: outputKind ? output! : null,
      outputKind,
      ...(written ? {outputFormat: source.format, outputFiles: written.files} : {}),
      ...report,
    }
  } finally {
    await source.close()
  }
}

