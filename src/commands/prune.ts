import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {renderTable} from '../cli/table.js'
import {dirLabel, fmtBytes, plural} from '../cli/text.js'
import {parseDecimal} from '../numbers.js'
import {escapeText} from '../formats/limits.js'
import {UsageError} from '../errors.js'
import {SAVING_NOTE} from '../sparse/memory.js'
import {pruneFile, type PruneFileResult, type PruneProgress} from '../pruning/index.js'

export default class Prune extends BaseCommand<typeof Prune> {
  static summary = 'Magnitude-prune dense weights to CSR (unstructured or N:M), with Sputnik\'s row order.'

  static description = `Prunes round(S x numel) weights of each selected tensor: the smallest |w| first, ties by row-major index (see the README for the exact definition). A tensor with more than two dimensions is pruned as [shape[0], product of the rest]. Zeros are never stored. One selected tensor is written as a SciPy-compatible CSR .npz (-o - writes it to stdout); several make a directory with one .npz per tensor and manifest.json. With --format dense the masked model is written back in the input's own format (the same names, dtypes and metadata; unpruned tensors unchanged), so the framework it came from loads it. Without -o, only the report is printed. Inputs: .npy, .npz, .safetensors, torch.save files (.pt/.pth/.bin/.ckpt, read without running code), and Hugging Face model folders (sharded or not).`

  static examples = [
    '<%= config.bin %> prune weights.npy -s 0.9 -o weights-csr.npz',
    '<%= config.bin %> prune model.safetensors -s 0.8 --scope global -o model-csr/',
    '<%= config.bin %> prune model.safetensors --pattern 2:4 --include "mlp" -o mlp-2to4/',
    '<%= config.bin %> prune - -s 0.9 -o - < w.npy | <%= config.bin %> info -',
    '<%= config.bin %> prune ./Llama-3.2-1B -s 0.5 --scope global --min-density 0.05 --format dense -o Llama-3.2-1B-pruned/',
    '<%= config.bin %> prune pytorch_model.bin --sparsity-map recipe.yaml --format dense -o pruned.bin',
  ]

  static args = {
    input: Args.string({description: "dense input: .npy, .npz, .safetensors, a torch.save .pt/.bin, a Hugging Face model folder or its *.index.json ('-' = a file on stdin)", required: true}),
  }

  static flags = {
    sparsity: Flags.string({char: 's', description: 'target sparsity S in [0, 1) (required unless --pattern N:M, which implies 1 - N/M, or --sparsity-map, whose patterns give each tensor its own; with a map, -s is for the tensors no pattern matches)'}),
    output: Flags.string({char: 'o', helpValue: 'PATH', description: "output: a .npz for one tensor, a directory for several, '-' = stdout (omit for a report only)"}),
    scope: Flags.string({description: 'one threshold per tensor, or one across all selected tensors', options: ['tensor', 'global'], default: 'tensor'}),
    pattern: Flags.string({description: "'unstructured' or N:M (keep the N largest of every M consecutive weights in a row, e.g. 2:4)", default: 'unstructured'}),
    include: Flags.string({description: 'prune only tensors whose name matches this regular expression'}),
    exclude: Flags.string({description: 'skip tensors whose name matches this regular expression'}),
    'include-1d': Flags.boolean({description: 'also prune 1-D tensors (biases, norms), as one row each', default: false}),
    'include-embeddings': Flags.boolean({description: 'also prune embeddings and the output head (lm_head, embed_tokens, wte, ...), which are left dense by default', default: false}),
    reorder: Flags.boolean({description: "store Sputnik's row order (row_indices)", allowNo: true, default: true}),
    dtype: Flags.string({aliases: ['value-dtype'], description: "value dtype of the CSR output (default: the input's; f64 becomes f32); f32 for SciPy, which cannot densify float16 (alias --value-dtype)", options: ['f32', 'f16', 'bf16']}),
    format: Flags.string({description: "output: 'csr' (SciPy CSR .npz files) or 'dense' (the masked model in the input's own format, dtype and names)", options: ['csr', 'dense'], default: 'csr'}),
    'sparsity-map': Flags.string({helpValue: 'FILE', description: 'JSON or YAML file: name pattern -> sparsity, first match wins; unmatched tensors are skipped, or pruned to -s when given (docs/recipes.md)'}),
    'min-density': Flags.string({description: 'with --scope global: every tensor keeps at least this fraction of its weights (a floor against layer collapse), in [0, 1]'}),
    from: Flags.string({description: 'input format (default: from the name and content)', options: ['npy', 'npz', 'safetensors', 'torch', 'sharded']}),
    compress: Flags.boolean({description: 'deflate the .npz members (smaller, slower)', default: false}),
    force: Flags.boolean({char: 'f', description: 'replace an existing output', default: false}),
    'serving-config': Flags.boolean({description: "--format dense of a Hugging Face folder: also record the sparsity in config.json as compressed-tensors' sparsity_config (off by default: vLLM 0.22 and later refuse to load a config that has one, and transformers then needs the compressed-tensors package)", allowNo: true, default: false}),
  }

  public async run(): Promise<PruneFileResult> {
    const {args, flags} = await this.parse(Prune)
    const toStdout = flags.output === '-'
    if (toStdout && this.json) {
      throw new UsageError('json-and-stdout', '--json and -o - both write to stdout', 'write the CSR to a file with -o, or drop --json')
    }
    const result = await pruneFile(
      args.input,
      {
        sparsity: parseSparsity(flags.sparsity),
        scope: flags.scope as 'tensor' | 'global',
        pattern: flags.pattern,
        include: flags.include,
        exclude: flags.exclude,
        include1d: flags['include-1d'],
        includeEmbeddings: flags['include-embeddings'],
        reorder: flags.reorder,
        dtype: flags.dtype as 'f32' | 'f16' | 'bf16' | undefined,
        output: flags.output,
        force: flags.force,
        from: flags.from,
        compress: flags.compress,
        format: flags.format as 'csr' | 'dense',
        sparsityMapFile: flags['sparsity-map'],
        servingConfig: flags['serving-config'],
        minDensity: parseFraction('--min-density', flags['min-density']),
      },
      (p) => this.spin(progressText(p)),
    )
    this.stopSpinner()
    // Warnings name tensors and patterns from files: escaped here, as names in a line are.
    for (const w of result.warnings) this.note(`warning: ${escapeText(w)}`)
    // NOTE: under --json no human report is built at all (it was half the time of a run).
    if (!this.json) {
      const text = renderPrune(result)
      // With -o -, stdout carries the CSR: the human report goes to stderr.
      if (toStdout) this.note(text.trimEnd())
      else this.report(text)
    }
    return result
  }
}

function parseSparsity(s: string | undefined): number | undefined {
  if (s === undefined) return undefined
  const x = parseDecimal(s)
  if (Number.isNaN(x)) {
    throw new UsageError('bad-sparsity', `sparsity must be a number in [0, 1), got '${s}'`, 'pass for example -s 0.9 to prune 90% of the weights')
  }
  return x
}

function parseFraction(flag: string, s: string | undefined): number | undefined {
  if (s === undefined) return undefined
  const x = Number(s)
  if (s.trim() === '' || !(x >= 0 && x <= 1)) throw new UsageError('bad-fraction', `${flag} must be a number in [0, 1], got '${s}'`, `e.g. ${flag} 0.02`)
  return x
}

function progressText(p: PruneProgress): string {
  const what = p.phase === 'scan' ? 'scanning magnitudes of' : p.phase === 'refine' ? 'refining the global threshold on' : 'pruning'
  return `${what} ${escapeText(p.name)} (${p.index + 1}/${p.count})`
}

const pct = (x: number) => `${(100 * x).toFixed(2)}%`
const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'inf')
const num = (x: number) => (x === 0 ? '0' : x.toPrecision(4))

/** The human report: one table row per pruned tensor, a total row, then notes. */
export function renderPrune(r: PruneFileResult): string {
  const input = r.input === '-' ? 'stdin' : r.input
  const scope = r.pattern === 'unstructured' ? `, ${r.scope} scope` : ''
  const target = r.sparsity === null ? 'the sparsities of the sparsity map' : `sparsity ${r.sparsity}`
  const lines = [`${escapeText(input)}: ${r.pattern} pruning to ${target}${scope}; ${plural(r.tensors.length, 'tensor')} pruned, ${r.skipped.length} skipped`]
  if (r.tensors.length > 0) {
    // The sparsity-map pattern that gave each tensor its target, when a map was used.
    const rules = r.tensors.some((t) => t.rule !== undefined)
    // Under global scope a tensor's "target" is its share of the one cut, which is its
    // achieved sparsity: the target stands in the total row only.
    const global = r.scope === 'global' && r.pattern === 'unstructured'
    const table: string[][] = []
    for (const t of r.tensors) {
      const shape = t.shape.length === 2 ? `${t.rows}x${t.cols}` : `[${t.shape.join(', ')}] as ${t.rows}x${t.cols}`
      table.push([
        escapeText(t.name) + (t.overSparse ? ' *' : '') + (t.floored ? ' (floor)' : ''),
        ...(rules ? [t.rule === undefined ? '-s' : escapeText(t.rule)] : []),
        shape,
        String(t.nnz),
        pct(t.sparsity),
        global && !t.floored ? '' : pct(t.targetSparsity),
        num(t.threshold),
        fmtBytes(t.denseBytes.f32),
        `${fmtBytes(t.csrBytes.f32)} (${ratio(t.memorySaving.f32)})`,
        `${fmtBytes(t.csrBytes.f16)} (${ratio(t.memorySaving.f16)})`,
        `${fmtBytes(t.bitmapBytes)} (${ratio(t.memorySaving.bitmap)})`,
        t.twoFourBytes === null ? 'n/a' : `${fmtBytes(t.twoFourBytes)} (${ratio(t.memorySaving.twoFour!)})`,
        `${fmtBytes(t.tcBytes)} (${ratio(t.memorySaving.tc)})`,
      ])
    }
    const s = r.totals
    if (r.tensors.length > 1) {
      table.push([
        'total',
        ...(rules ? [''] : []),
        `${s.numel} weights`,
        String(s.nnz),
        pct(s.sparsity),
        pct(s.targetSparsity),
        s.threshold === null ? '' : num(s.threshold),
        fmtBytes(s.denseBytes.f32),
        `${fmtBytes(s.csrBytes.f32)} (${ratio(s.memorySaving.f32)})`,
        `${fmtBytes(s.csrBytes.f16)} (${ratio(s.memorySaving.f16)})`,
        `${fmtBytes(s.bitmapBytes)} (${ratio(s.memorySaving.bitmap)})`,
        s.twoFourBytes === null ? 'n/a' : `${fmtBytes(s.twoFourBytes)} (${ratio(s.memorySaving.twoFour!)})`,
        `${fmtBytes(s.tcBytes)} (${ratio(s.memorySaving.tc)})`,
      ])
    }
    lines.push(
      renderTable(
        ['tensor', ...(rules ? ['rule'] : []), 'shape', 'nnz', 'sparsity', 'target', 'threshold', 'dense f32', 'CSR f32', 'CSR f16', 'bitmap f16', '2:4 f16', 'tc f16'],
        table,
        ['left', ...(rules ? ['left' as const] : []), 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
      ),
    )
    const na = r.tensors.some((t) => t.twoFourBytes === null)
    lines.push(`(x) ${SAVING_NOTE}${na ? '; 2:4 n/a: not a 2:4 matrix' : ''}`)
    if (rules) lines.push("rule: the --sparsity-map pattern that gave the tensor its target ('-s': none matched, -s applied)")
    if (r.tensors.some((t) => t.overSparse)) lines.push('* the input already had more zeros than the target: the achieved sparsity is higher (zeros are never stored)')
  }
  for (const s of r.skipped) lines.push(`skipped ${escapeText(s.name)} [${s.shape.join(', ')}]: ${escapeText(s.reason)}`)
  for (const n of r.notes) if (!n.startsWith('skipped ')) lines.push(`note: ${escapeText(n)}`)
  if (r.outputKind === null) lines.push('no -o given: report only, nothing written')
  else if (r.output === '-') lines.push('wrote the CSR .npz to stdout')
  else if (r.outputKind === 'dense') {
    const files = r.outputFiles ?? []
    const folder = files.length > 1 || (files.length === 1 && files[0] !== r.output)
    const kind = ({sharded: 'sharded model', torch: 'torch.save file'} as Record<string, string>)[r.outputFormat ?? ''] ?? r.outputFormat
    lines.push(folder ? `wrote ${escapeText(dirLabel(r.output!))} (the masked model, ${kind}: ${escapeText(files.join(', '))})` : `wrote ${escapeText(r.output!)} (the masked model, ${kind})`)
  } else if (r.outputKind === 'dir') lines.push(`wrote ${escapeText(dirLabel(r.output!))} (${plural(r.tensors.length, 'CSR .npz file')} + manifest.json)`)
  else lines.push(`wrote ${escapeText(r.output!)}`)
  return lines.join('\n') + '\n'
}
