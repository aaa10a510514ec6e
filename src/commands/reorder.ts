import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {dirLabel, plural} from '../cli/text.js'
import {escapeText} from '../formats/limits.js'
import {UsageError} from '../errors.js'
import {reorderFile, type OrderFigures, type ReorderFileResult} from '../reorder/index.js'

export default class Reorder extends BaseCommand<typeof Reorder> {
  static summary = "Store Sputnik's row order (row swizzle) in a CSR file."

  static description = `row_indices = the row numbers ordered by row length descending, ties by row number ascending. Kernels process rows in that order and write each result to its own row; the matrix itself is unchanged. Reports, before and after, the first rows processed and the mean spread (longest - shortest) of row lengths within groups of rows that run side by side. A .smtx input (pattern only) gets seeded values, as a CSR .npz needs values.`

  static examples = [
    '<%= config.bin %> reorder pruned.npz -o pruned-swizzled.npz',
    '<%= config.bin %> reorder fixtures/dlmc-rn50-0.98-initial_conv.smtx -o initial_conv-reordered.npz',
    '<%= config.bin %> reorder model-csr/ -o model-csr-swizzled/',
  ]

  static args = {
    input: Args.string({description: "CSR input: .npz, .smtx, a CSR directory, or '-' (stdin)", required: true}),
  }

  static flags = {
    output: Flags.string({char: 'o', helpValue: 'PATH', description: "output: a CSR .npz (a directory for a directory input; '-' = stdout); omit for a report only"}),
    from: Flags.string({description: 'input format (default: from the name and content)', options: ['csr-npz', 'smtx', 'csr-dir']}),
    group: Flags.integer({description: 'rows that run side by side, for the spread figure', default: 4, min: 1}),
    seed: Flags.integer({description: 'seed of the values filled into pattern-only (.smtx) inputs', default: 0}),
    force: Flags.boolean({char: 'f', description: 'replace an existing output', default: false}),
  }

  public async run(): Promise<ReorderFileResult> {
    const {args, flags} = await this.parse(Reorder)
    if (flags.output === '-' && this.json) {
      throw new UsageError('json-and-stdout', '--json and -o - both write to stdout', 'write the CSR to a file with -o, or drop --json')
    }
    this.spin(`reordering ${args.input}`)
    const result = await reorderFile(args.input, {output: flags.output, force: flags.force, from: flags.from, groupSize: flags.group, seed: flags.seed})
    this.stopSpinner()
    const text = renderReorder(result)
    if (flags.output === '-') this.note(text.trimEnd())
    else this.report(text)
    return result
  }
}

function firstRows(f: OrderFigures): string {
  return f.firstRows.map((r) => `${r.row}(${r.length})`).join(' ')
}

export function renderReorder(r: ReorderFileResult): string {
  const lines: string[] = []
  for (const t of r.tensors) {
    lines.push(
      `${escapeText(t.name)}  ${t.rows}x${t.cols}  nnz ${t.nnz}  row lengths min ${t.rowLengths.min} mean ${t.rowLengths.mean.toFixed(2)} max ${t.rowLengths.max} CV ${t.rowLengths.cv.toFixed(3)}`,
      `  before (${t.hadRowOrder ? 'stored order' : 'natural order'}): first rows ${firstRows(t.before)}; spread within groups of ${r.groupSize}: ${t.before.groupSpread.toFixed(2)}`,
      `  after  (swizzle):      first rows ${firstRows(t.after)}; spread within groups of ${r.groupSize}: ${t.after.groupSpread.toFixed(2)}`,
    )
  }
  lines.push('  (row(length) in processing order)')
  for (const n of r.notes) lines.push(`note: ${escapeText(n)}`)
  if (r.outputKind === 'dir') lines.push(`wrote ${escapeText(dirLabel(r.output!))} (${plural(r.tensors.length, 'CSR .npz file')} + manifest.json)`)
  else if (r.output === '-') lines.push('wrote the CSR .npz to stdout')
  else if (r.output) lines.push(`wrote ${escapeText(r.output)}`)
  return lines.join('\n') + '\n'
}
