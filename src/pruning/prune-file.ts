/**
 * Pruning a file: tensors stream from `openTensorSource` through the pruner to the CSR
 * writer one at a time, so a checkpoint larger than memory is fine as long as its largest
 * tensor (plus that tensor's CSR) fits.
 *
 * Output: one selected tensor -> a CSR `.npz` at `output` ('-' = stdout); several -> a
 * directory with one `.npz` per tensor and manifest.json. No output -> report only.
 * Output is atomic (temporary name, then rename): an error leaves nothing behind.
 */
import {UsageError} from '../errors.js'
import {CsrDirectoryWriter, openTensorSource, writeCsrNpz} from '../formats/index.js'
import {isDirectoryPath} from '../formats/output.js'
import type {PrunedTensor, PruneOptions, PruneProgress} from './magnitude.js'
import {pruneTensors, resolveOptions, skipReason} from './magnitude.js'
import {checkOutputPath} from './preflight.js'
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
}

export interface PruneFileResult extends PruneReport {
  input: string
  /** Where the CSR went ('-' for stdout), or null when nothing was written. */
  output: string | null
  /** 'npz': one CSR file; 'dir': a directory with manifest.json; null: report only. */
  outputKind: 'npz' | 'dir' | null
}

export async function pruneFile(
  input: string,
  options: PruneFileOptions,
  onProgress?: (p: PruneProgress) => void,
): Promise<PruneFileResult> {
  // Bad usage fails before any data is read.
  const resolved = resolveOptions(options)
  const output = options.output
  await checkOutputPath(output, options.force)
  const source = await openTensorSource(input, options.from)
  try {
    const selected = source.tensors.filter((t) => skipReason(t.name, t.shape, resolved) === undefined)
    const entries = source.tensors.map((t) => ({...t, load: () => source.read(t.name), release: (x: DenseTensor) => source.release(x)}))
    let outputKind: PruneFileResult['outputKind'] = null
    let sink: (p: PrunedTensor) => Promise<void> = async () => {}
    let dir: CsrDirectoryWriter | undefined
    const writeOpts = {force: options.force, inputs: [input], compress: options.compress}
    if (output !== undefined) {
      if (selected.length === 0) {
        throw new UsageError('nothing-selected', `no tensor of ${input} is selected for pruning, so there is nothing to write`, 'check --include/--exclude (1-D tensors need --include-1d)')
      }
      // A trailing '/' names a directory, always (even for one tensor).
      if (selected.length === 1 && !isDirectoryPath(output)) {
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
    try {
      report = await pruneTensors(entries, options, sink, onProgress)
      if (dir) {
        await dir.commit({
          source: input,
          pruning: {sparsity: report.sparsity, scope: report.scope, pattern: report.pattern, reorder: resolved.reorder},
        })
      }
    } catch (error) {
      await dir?.abort()
      throw error
    }
    for (const u of source.unsupported) {
      report.skipped.push({name: u.name, shape: u.shape, reason: `unsupported dtype ${u.dtype} (${u.reason})`})
    }
    if (source.unsupported.length > 0) {
      report.notes.push(`skipped ${source.unsupported.length} tensor(s) of unsupported dtype: ${source.unsupported.map((u) => `${u.name} (${u.dtype})`).join(', ')}`)
    }
    return {input, output: outputKind ? output! : null, outputKind, ...report}
  } finally {
    await source.close()
  }
}

