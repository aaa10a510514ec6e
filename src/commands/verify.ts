import {Args, Flags} from '@oclif/core'
import Table from 'cli-table3'

import {parseDtypes, parseIntList} from '../bench/options.js'
import {BaseCommand} from '../cli/base-command.js'
import {plural} from '../cli/text.js'
import {escapeText} from '../formats/limits.js'
import {forcedSpmmLine} from '../kernels/variant.js'
import {DEFAULT_N, MAX_N, verifyInputs, type VerifyCase, type VerifyOp, type VerifyResult} from '../verify/index.js'

export default class Verify extends BaseCommand<typeof Verify> {
  static summary = 'Check the SpMM/SDDMM kernels on a matrix against a float64 reference.'

  static description = `Runs the kernels on INPUT's sparsity pattern (a CSR .npz, .smtx, CSR directory, or a dense .npy/.npz/.safetensors whose zeros are dropped) with seeded random dense operands, and compares each output with a float64 reference computed from the same rounded inputs. Values come from the file, or are seeded random normals for a pattern-only .smtx.

SpMM: C[M x N] = A[M x K] * B[K x N]. SDDMM uses A as the output mask with N as the inner dimension: out = (L[M x N] * R[K x N]^T) at A's nonzeros.

Each case reports the kernel that ran it (on CUDA, SpMM's variant and whether SPARSE_SPMM_VARIANT forced it or the built-in selection chose it; a forced variant that cannot run a case is said in the table and in a warning), the relative error ||out - ref|| / ||ref||, the relative tolerance that bounds it (f32 1e-5; f16 and bf16 1e-2), the max absolute error (for information: it has no bound of its own) and pass/fail. Several inputs and folders may be given, and --n and --dtype take comma-separated lists, like bench: every matrix is checked at every N, in every dtype, by every op, one case each. Outputs are poisoned with NaN before each run, so an element a kernel does not write fails. Exit code 0 only when every case passes (1 otherwise); --device cuda without a usable GPU exits with 3.`

  static examples = [
    '<%= config.bin %> verify fixtures/dlmc-rn50-0.98-initial_conv.smtx --device cpu',
    '<%= config.bin %> verify model-csr/ other-layer.npz --op spmm',
    '<%= config.bin %> verify weights-csr.npz --op spmm --dtype bf16 --n 2048 --device cuda',
    '<%= config.bin %> verify layer.npz --op spmm --dtype f16,bf16 --n 1,8,16,64 --device cuda',
    '<%= config.bin %> verify layer.smtx --device cpu --json',
  ]

  static args = {
    input: Args.string({description: 'CSR .npz, .smtx, CSR directory, dense .npy/.npz/.safetensors/.pt, a model folder, or a folder of these; several may be given', required: true}),
  }

  // Several inputs, like bench.
  static strict = false

  static flags = {
    op: Flags.string({description: 'operation(s) to check', options: ['spmm', 'sddmm', 'all'], default: 'all'}),
    // NOTE: lists are strings parsed in run() by bench's parsers, so both commands take and refuse the same lists.
    n: Flags.string({description: `N values, comma-separated (1 to ${MAX_N}): columns of B and C (SpMM), inner dimension (SDDMM); default ${DEFAULT_N}, the paper's Transformer size`, default: String(DEFAULT_N)}),
    dtype: Flags.string({description: 'element types, comma-separated: f32, f16, bf16 (fp16/bf16 with fp32 accumulation), or all', default: 'all'}),
    device: Flags.string({description: "where to run the kernels ('auto': the GPU when usable, else the CPU)", options: ['cuda', 'cpu', 'auto'], default: 'auto'}),
    seed: Flags.integer({description: 'seed of the random operands', default: 0, min: 0}),
    threads: Flags.integer({description: 'CPU threads for the CPU kernels and the reference (default: all cores)', min: 1}),
    'keep-sparse': Flags.boolean({description: "SpMM on CUDA: check the kernels bench --keep-sparse runs (none that stores every weight, zeros included: und_*)", default: false}),
  }

  public async run(): Promise<VerifyResult> {
    const {argv, flags} = await this.parse(Verify)
    const inputs = argv as string[]
    const label = inputs.join(' ')
    const ops: VerifyOp[] = flags.op === 'all' ? ['spmm', 'sddmm'] : [flags.op as VerifyOp]
    const dtypes = parseDtypes(flags.dtype)
    const ns = parseIntList('--n', flags.n)
    this.spin(`verifying ${label}`)
    const result = await verifyInputs(inputs, {
      ops,
      dtypes,
      ns,
      device: flags.device as 'cuda' | 'cpu' | 'auto',
      seed: flags.seed,
      threads: flags.threads,
      ...(flags['keep-sparse'] ? {keepSparse: true} : {}),
      onCase: (c, done, total) => this.spin(`verifying ${label}: ${done}/${total} (${c.op} ${c.dtype}${ns.length > 1 ? ` N=${c.n}` : ''} ${c.passed ? 'ok' : 'FAILED'})`),
    })
    this.stopSpinner()
    this.report(renderVerify(result))
    for (const w of result.warnings) this.note(`warning: ${escapeText(w)}`)
    if (!result.ok) {
      // NOTE: the result (table or JSON) is printed in full; the exit code and one line on
      // stderr carry the failure.
      process.exitCode = 1
      const worst = result.cases.filter((c) => !c.passed).map((c) => describeFailure(c, result.ns.length > 1))
      const more = worst.length > 3 ? `, and ${worst.length - 3} more` : ''
      process.stderr.write(`error: ${result.failed} of ${plural(result.cases.length, 'verify case')} failed: ${worst.slice(0, 3).join('; ')}${more}\n`)
    }
    return result
  }
}

function fmtError(x: number | null): string {
  if (x === null) return 'NaN'
  if (x === 0) return '0'
  return Number.isFinite(x) ? x.toExponential(2) : 'inf'
}

/** One failed case in the error line; `withN` where several N ran (else the summary line says N). */
function describeFailure(c: VerifyCase, withN: boolean): string {
  const where = `${c.matrix ? c.matrix + ' ' : ''}${c.op} ${c.dtype}${withN ? ` N=${c.n}` : ''} on ${c.device}${c.variant ? ` (${c.variant})` : ''}`
  if (c.nonFinite > 0) return `${where}: ${c.nonFinite} outputs NaN/inf (unwritten?)`
  return `${where}: relative error ${fmtError(c.relativeError)} > ${c.tolerance}`
}

/**
 * The kernel column: SpMM's variant on CUDA and where it came from ('forced', 'selection',
 * or 'selection, not forced' where a forced variant could not run), else the kernel's name
 * ('CudaSddmm (tc forced?)' where the addon cannot confirm a forced SDDMM kernel).
 */
export function kernelCell(c: VerifyCase): string {
  if (c.variant) return `${c.variant} (${c.variantSource === 'forced' ? 'forced' : c.forcedVariant ? 'selection, not forced' : 'selection'})`
  return c.forcedVariant && c.device === 'cuda' ? `${c.kernel} (${c.forcedVariant} forced?)` : c.kernel
}

/** The human report: one table row per case, then a summary line. */
export function renderVerify(r: VerifyResult): string {
  const multi = new Set(r.cases.map((c) => c.matrix)).size > 1
  // NOTE: the tolerance bounds the relative error, so it stands beside it.
  const header = [...(multi ? ['matrix'] : []), 'op', 'dtype', 'device', 'kernel', 'M x K', 'nnz', 'N', 'rel. error', 'rel. tolerance', 'max abs error', 'ms', 'result']
  const rows = r.cases.map((c) => [
    ...(multi ? [c.matrix] : []),
    c.op,
    c.dtype,
    c.device,
    kernelCell(c),
    `${c.m} x ${c.k}`,
    String(c.nnz),
    String(c.n),
    fmtError(c.relativeError),
    c.tolerance.toExponential(0),
    fmtError(c.maxAbsError),
    c.ms.toFixed(1),
    c.passed ? 'pass' : c.nonFinite > 0 ? `FAIL (${c.nonFinite} NaN/inf)` : 'FAIL',
  ])
  // A box table, as prune and bench draw (cli-table3, borders uncoloured: see STACK.md).
  const numeric = new Set(['nnz', 'N', 'rel. error', 'rel. tolerance', 'max abs error', 'ms'])
  const table = new Table({head: header, style: {head: [], border: [], compact: true}, colAligns: header.map((h) => (numeric.has(h) ? 'right' : 'left'))})
  for (const row of rows) table.push(row.map((c) => escapeText(c)))
  const out = [table.toString(), '']
  // As bench's header says it: how many CUDA SpMM cases the forced variant ran.
  const spmmCuda = r.cases.filter((c) => c.op === 'spmm' && c.device === 'cuda')
  const forced = spmmCuda.find((c) => c.forcedVariant)?.forcedVariant
  if (forced) out.push(escapeText(forcedSpmmLine(forced, spmmCuda.filter((c) => c.variantSource === 'forced').length, spmmCuda.length)))
  const status = r.ok ? 'all passed' : `${r.failed} FAILED`
  out.push(`${escapeText(r.input)}: ${r.passed} of ${plural(r.cases.length, 'case')} passed (${status}) on ${r.device} (${r.deviceName}), N=${r.ns.join(',')}, seed ${r.seed}`)
  return out.join('\n')
}
