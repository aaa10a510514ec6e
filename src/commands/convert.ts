import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {escapeText} from '../formats/limits.js'
import {UsageError} from '../errors.js'
import {convertFile, FORMAT_NAMES, type ConvertResult, type ConvertTarget} from '../formats/index.js'
import type {ValueDType} from '../types.js'

export default class Convert extends BaseCommand<typeof Convert> {
  static summary = 'Convert between dense and sparse formats, without pruning.'

  static description = `Dense .npy/.npz/.safetensors -> CSR .npz (zeros dropped; several tensors -> a directory of CSR files plus manifest.json), CSR -> dense .npy, .smtx <-> CSR .npz, and value dtype changes.
--to 2:4 writes a 2:4 matrix (a CSR, or a dense tensor whose zeros make it 2:4: at most 2 nonzeros in every group of 4 columns of a row) as the 2:4 .npz the 2:4 SpMM kernel reads (f16 or bf16 values, 1.125 bytes per weight); an f32 input needs --dtype f16 or bf16. A matrix that is not 2:4 is refused (exit 1) naming the first group that breaks it. A 2:4 .npz is read back like a CSR anywhere (convert, info, verify, bench). A stored row order is kept (.smtx and dense outputs have no place for it and say so). Pattern-only .smtx inputs get standard-normal values from a seeded generator (--seed).
The input format comes from the file name or content (--from forces it); what to write comes from the output name (.npz: CSR, .npy: dense, .smtx, a directory) or --to. '-' reads stdin / writes stdout (one tensor).`

  static examples = [
    '<%= config.bin %> convert fixtures/dense-f32.npy -o w.npz',
    '<%= config.bin %> convert w.npz -o w.npy',
    '<%= config.bin %> convert fixtures/dlmc-rn50-0.98-initial_conv.smtx -o conv.npz --dtype f16 --seed 1',
    '<%= config.bin %> convert fixtures/tiny-mlp.safetensors -o mlp-csr/',
    '<%= config.bin %> convert w-2to4.npz -o w-sp24.npz --to 2:4          # a 2:4 CSR (from prune --pattern 2:4) as 2:4 tiles',
    '<%= config.bin %> convert - -o - < w.npy > w.npz',
  ]

  static args = {
    input: Args.string({description: "input file or CSR directory ('-' = stdin)", required: true}),
  }

  static flags = {
    output: Flags.string({char: 'o', helpValue: 'PATH', description: "output file or directory ('-' = stdout)", required: true}),
    to: Flags.string({description: 'what to write (default: from the output name; 2:4 = the 2:4 tiles .npz)', options: ['csr', 'dense', 'smtx', '2:4']}),
    dtype: Flags.string({description: 'value dtype of the output (default: the input dtype; f64 becomes f32)', options: ['f32', 'f16', 'bf16']}),
    from: Flags.string({description: 'input format (default: from the name and content)', options: [...FORMAT_NAMES]}),
    seed: Flags.integer({description: 'seed for the values of pattern-only (.smtx) inputs', default: 0}),
    force: Flags.boolean({char: 'f', description: 'overwrite an existing output (or the input)', default: false}),
  }

  public async run(): Promise<ConvertResult> {
    const {args, flags} = await this.parse(Convert)
    if (flags.output === '-' && this.json) {
      throw new UsageError('json-with-stdout', '--json and -o - both write to stdout', 'write the output to a file, or drop --json')
    }
    this.spin(`converting ${args.input}`)
    const result = await convertFile({
      input: args.input,
      output: flags.output,
      to: flags.to as ConvertTarget | undefined,
      dtype: flags.dtype as ValueDType | undefined,
      from: flags.from,
      seed: flags.seed,
      force: flags.force,
    })
    this.stopSpinner()
    // With -o -, stdout carries the data: the human summary goes to stderr.
    const lines: string[] = []
    const where = result.output === '-' ? 'stdout' : escapeText(result.output)
    const from = result.input === '-' ? 'stdin' : escapeText(result.input)
    lines.push(`${from} (${result.from}) -> ${where} (${result.outputFormat}, ${result.tensors.length} tensor${result.tensors.length === 1 ? '' : 's'}, ${result.bytes} bytes)`)
    for (const t of result.tensors) {
      const order = t.rowOrder ? ', row order kept' : ''
      const file = t.file ? ` -> ${t.file}` : ''
      lines.push(`  ${escapeText(t.name)} [${t.shape.join(', ')}] ${t.dtype}  nnz ${t.nnz}  sparsity ${(100 * t.sparsity).toFixed(2)}%${order}${file}`)
    }
    for (const n of result.notes) lines.push(`note: ${escapeText(n)}`)
    if (result.output === '-') this.note(lines.join('\n'))
    else this.report(lines.join('\n'))
    return result
  }
}
