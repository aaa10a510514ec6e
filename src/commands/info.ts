import {Args, Flags} from '@oclif/core'

import {BaseCommand, jsonText} from '../cli/base-command.js'
import {TextChunks, writeChunks} from '../cli/chunks.js'
import {fmtBytes} from '../cli/text.js'
import {escapeReport, escapeText} from '../formats/limits.js'
import {SAVING_NOTE} from '../sparse/memory.js'
import {pace} from '../formats/pace.js'
import {detectFormat, expandInputs, FORMAT_NAMES, infoTotals, inspectEach, type FormatName, type HistogramBin, type InfoResult, type InfoTensor} from '../formats/index.js'

export default class Info extends BaseCommand<typeof Info> {
  static summary = 'Describe a dense or CSR file: shape, dtype, nnz, sparsity, row lengths, bytes per encoding.'

  static description = `For each tensor of a dense (.npy, .npz, .safetensors) or CSR (.npz, .smtx, CSR directory) input, or of a 2:4 .npz (its tiles and bytes per element too): shape, dtype, nnz, sparsity, row-length statistics (min, mean, max, coefficient of variation) with a histogram, bytes as dense and as CSR in fp32 (int32 indices) and fp16 (16-bit indices when the column count allows), and of the bitmap, 2:4 and tc (16 x 32 CSR tiles) tensor-core forms (16-bit values; 2:4 only for a 2:4 matrix), each with its memory saving against the dense matrix of the same value dtype, and whether a row order is stored. Tensors with more than two dimensions are viewed as [shape[0], product of the rest]. '-' reads stdin (.npy, .npz or a CSR .npz). --json prints {files: [...], totals}: one entry per input file, one or several, and the totals over them.`

  static examples = [
    '<%= config.bin %> info fixtures/tiny-mlp.safetensors',
    '<%= config.bin %> info fixtures/scipy-csr.npz --json',
    '<%= config.bin %> prune - -s 0.9 -o - < w.npy | <%= config.bin %> info -',
  ]

  static args = {
    input: Args.string({description: "input file, CSR directory, model folder, or a folder of these ('-' = stdin); several may be given", required: true}),
  }

  // Several inputs, like bench.
  static strict = false

  static flags = {
    from: Flags.string({description: 'input format (default: from the name and content)', options: [...FORMAT_NAMES]}),
    bins: Flags.integer({description: 'row-length histogram bins (--long)', default: 10, min: 1, max: 100}),
    summary: Flags.boolean({description: 'one line per tensor (name, shape, dtype, nnz, sparsity, 2:4 pattern) and totals; the default for models (.safetensors, torch.save files, Hugging Face folders, CSR folders)', exclusive: ['long']}),
    long: Flags.boolean({description: 'every figure of each tensor (row lengths, histogram, bytes per encoding); the default for single matrices (.npy, .npz, .smtx)', exclusive: ['summary']}),
  }

  /**
   * Under --json: {files: [...], totals}, one entry per input file whatever their number (the
   * library's inspectInputs() returns the same object). The report (text or --json) is made
   * tensor by tensor and written at the end, and nothing is kept of a tensor but its text: a
   * file of a million tensors is described in the memory of its report. So run() writes the
   * --json text itself (the same text as jsonText(inspectInputs(...))) and returns nothing.
   */
  public async run(): Promise<void> {
    const {argv, flags} = await this.parse(Info)
    const inputs = argv as string[]
    this.spin(`reading ${inputs.join(' ')}`)
    const paths = await expandInputs(inputs)
    const out = new TextChunks()
    if (this.json) out.push('{\n  "files": [')
    const all = {tensors: 0, numel: 0, nnz: 0}
    const opts = {from: flags.from, bins: flags.bins}
    for (const [i, path] of paths.entries()) {
      // The format and the count are known once the input is read: they go in front.
      const head = out.mark()
      let count = 0
      if (this.json) {
        // Indented as jsonText() indents the whole report: a file is 2 levels deep, its tensors 4.
        let numel = 0
        let nnz = 0
        const {format, skipped} = await inspectEach(path, opts, (t) => {
          out.push((count++ === 0 ? '\n' : ',\n') + '        ' + indented(jsonText(t), 4))
          numel += t.numel
          nnz += t.nnz
        })
        out.insertAt(head, `${i === 0 ? '\n' : ',\n'}    {\n      "file": ${jsonText(path)},\n      "format": ${jsonText(format)},\n      "tensors": [`)
        const totals = infoTotals(count, numel, nnz)
        out.push(`${count === 0 ? '' : '\n      '}],\n      "skipped": ${indented(jsonText(skipped), 3)},\n      "totals": ${indented(jsonText(totals), 3)}\n    }`)
        all.tensors += count
        all.numel += numel
        all.nnz += nnz
      } else if (flags.summary || (!flags.long && MODEL_FORMATS.has(await detectFormat(path, flags.from)))) {
        // One line per tensor and the totals: the rows are kept (a few short strings each)
        // and drawn when the widths are known.
        const rows: string[][] = []
        const totals = {numel: 0, nnz: 0}
        const {format, skipped} = await inspectEach(path, opts, (t) => {
          count++
          rows.push(summaryRow(t))
          totals.numel += t.numel
          totals.nnz += t.nnz
        })
        out.push(escapeReport(`${i > 0 ? '\n' : ''}${renderHead(path, format, count)}\n`))
        if (count > 0) {
          const {sparsity} = infoTotals(count, totals.numel, totals.nnz)
          const footer = ['total', `${totals.numel} weights`, '', String(totals.nnz), `${(100 * sparsity).toFixed(2)}%`, '']
          for await (const piece of boxTable(SUMMARY_HEAD, rows, footer, SUMMARY_RIGHT)) out.push(piece)
          out.push('pattern: 2:4 when every group of 4 consecutive weights in a row has at most 2 nonzeros; --long for row lengths and bytes per encoding\n')
        }
        const tail = renderTail(skipped, 0).join('\n').trimEnd()
        if (tail !== '') out.push(escapeReport(tail + '\n'))
      } else {
        // The text renderInfo() makes, piece by piece (a blank line between inputs).
        const {format, skipped} = await inspectEach(path, opts, (t) => {
          count++
          out.push(escapeReport('\n' + renderTensor(t).join('\n') + '\n'))
        })
        out.insertAt(head, escapeReport(`${i > 0 ? '\n' : ''}${renderHead(path, format, count)}\n`))
        const tail = renderTail(skipped, count).join('\n').trimEnd()
        if (tail !== '') out.push(escapeReport('\n' + tail + '\n'))
      }
    }
    if (this.json) out.push(`\n  ],\n  "totals": ${indented(jsonText(infoTotals(all.tensors, all.numel, all.nnz)), 1)}\n}\n`)
    this.stopSpinner()
    await writeChunks(process.stdout, out.done())
  }
}

/** Inputs described one line per tensor by default: models of many tensors. */
const MODEL_FORMATS = new Set<FormatName>(['safetensors', 'torch', 'sharded', 'csr-dir'])

const SUMMARY_HEAD = ['tensor', 'shape', 'dtype', 'nnz', 'sparsity', 'pattern']
const SUMMARY_RIGHT = [false, false, false, true, true, false]

function summaryRow(t: InfoTensor): string[] {
  return [escapeText(t.name), t.shape.join('x') || 'scalar', t.dtype, String(t.nnz), `${(100 * t.sparsity).toFixed(2)}%`, t.twoFourBytes === null ? '' : '2:4']
}

/**
 * A box table like the other commands' (cli-table3's compact style), drawn in pieces that
 * yield to the event loop: a model of a million tensors is a million rows.
 */
async function* boxTable(head: string[], rows: string[][], footer: string[], right: boolean[]): AsyncGenerator<string> {
  const widths = head.map((h, i) => h.length)
  for (const r of [...rows, footer]) for (let i = 0; i < r.length; i++) if (r[i].length > widths[i]) widths[i] = r[i].length
  const rule = (l: string, m: string, r: string) => l + widths.map((w) => '─'.repeat(w + 2)).join(m) + r + '\n'
  const line = (cells: string[]) => '│' + cells.map((c, i) => ' ' + (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])) + ' ').join('│') + '│\n'
  let piece = rule('┌', '┬', '┐') + line(head) + rule('├', '┼', '┤')
  for (const r of rows) {
    piece += line(r)
    if (piece.length > 1 << 16) {
      yield piece
      piece = ''
      await pace()
    }
  }
  yield piece + line(footer) + rule('└', '┴', '┘')
}

/** JSON text placed at `depth` levels of two spaces (its first line is placed by the caller). */
function indented(text: string, depth: number): string {
  return depth === 0 ? text : text.replaceAll('\n', '\n' + '  '.repeat(depth))
}

function fmtRatio(x: number): string {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : 'inf'
}

/** A text histogram: one line per bin, bars scaled to `width` characters. */
export function renderHistogram(bins: HistogramBin[], width = 40): string[] {
  const max = Math.max(1, ...bins.map((b) => b.count))
  const labels = bins.map((b) => (b.lo === b.hi ? `${b.lo}` : `${b.lo}-${b.hi}`))
  const lw = Math.max(...labels.map((l) => l.length))
  return bins.map((b, i) => {
    const len = Math.round((b.count / max) * width)
    const bar = '#'.repeat(len) || (b.count > 0 ? '.' : '')
    return `    ${labels[i].padStart(lw)} | ${bar} ${b.count}`
  })
}

function renderTensor(t: InfoTensor): string[] {
  const view = t.shape.length === 2 ? '' : ` (as ${t.rows}x${t.cols})`
  const lines = [
    `${escapeText(t.name)}  [${t.shape.join(', ')}]${view}  ${t.dtype}  ${t.storage}`,
    `  nnz ${t.nnz} of ${t.numel}  sparsity ${(100 * t.sparsity).toFixed(2)}%`,
    `  row lengths  min ${t.rowLengths.min}  mean ${t.rowLengths.mean.toFixed(2)}  max ${t.rowLengths.max}  CV ${t.rowLengths.cv.toFixed(3)}`,
    `  bytes f32  dense ${fmtBytes(t.denseBytes.f32)}  CSR ${fmtBytes(t.csrBytes.f32)} (saving ${fmtRatio(t.memorySaving.f32)})`,
    `  bytes f16  dense ${fmtBytes(t.denseBytes.f16)}  CSR ${fmtBytes(t.csrBytes.f16)} (saving ${fmtRatio(t.memorySaving.f16)}${t.indices16 ? ', 16-bit indices' : ', int32 indices: too many columns for 16-bit'})  bitmap ${fmtBytes(t.bitmapBytes)} (saving ${fmtRatio(t.memorySaving.bitmap)})  2:4 ${t.twoFourBytes === null ? 'n/a (not 2:4)' : `${fmtBytes(t.twoFourBytes)} (saving ${fmtRatio(t.memorySaving.twoFour!)})`}  tc ${fmtBytes(t.tcBytes)} (saving ${fmtRatio(t.memorySaving.tc)})`,
    `  row order  ${t.rowOrder ? 'stored' : 'none'}`,
  ]
  if (t.sp24) {
    const s = t.sp24
    lines.splice(
      1,
      0,
      `  format  2:4 tiles (${s.strips} x ${s.ksteps} tiles of 16 x 32)  ${fmtBytes(s.bytes)}  ${s.bytesPerElement.toFixed(3)} bytes per element vs ${s.denseF16BytesPerElement} for dense ${t.dtype} (saving ${fmtRatio(s.savingVsF16)})`,
    )
  }
  if (t.histogram.length > 0) lines.push('  row-length histogram (rows per length bin)', ...renderHistogram(t.histogram))
  return lines
}

export function renderInfo(r: InfoResult): string {
  const out = [renderHead(r.file, r.format, r.tensors.length), '']
  for (const t of r.tensors) out.push(...renderTensor(t), '')
  for (const line of renderTail(r.skipped, r.tensors.length)) out.push(line)
  return out.join('\n').trimEnd() + '\n'
}

/** A file's first line: its name, format and tensor count. */
function renderHead(file: string, format: string, count: number): string {
  return `${file === '-' ? 'stdin' : file}  (${format}, ${count} tensor${count === 1 ? '' : 's'})`
}

/** The lines after the tensors: the skipped ones and the note on savings. */
function renderTail(skipped: InfoResult['skipped'], count: number): string[] {
  const out: string[] = []
  for (const s of skipped) out.push(`skipped ${escapeText(s.name)} [${s.shape.join(', ')}] ${escapeText(s.dtype)}: ${escapeText(s.reason)}`)
  if (count > 0) out.push(SAVING_NOTE)
  return out
}
