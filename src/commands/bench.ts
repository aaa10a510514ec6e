import {Args, Flags, type Interfaces} from '@oclif/core'
import chalk from 'chalk'

import {BaseCommand} from '../cli/base-command.js'
import {benchAndWrite, type BenchRunResult} from '../bench/index.js'
import {parseBaselines, parseDtypes, parseIntList, parseOps, parseSparsityList} from '../bench/options.js'
import {renderCases, renderHeader, renderSummary} from '../bench/output.js'
import {DEFAULT_BENCH_N, DEFAULT_SEED} from '../bench/plan.js'
import {ProgressClock} from '../bench/progress.js'
import type {BenchOptions, FailedCase} from '../bench/types.js'
import {UsageError} from '../errors.js'
import {escapeText} from '../formats/limits.js'

export default class Bench extends BaseCommand<typeof Bench> {
  static summary = 'Time pruned layers with our SpMM/SDDMM against dense cuBLAS and cuSPARSE on the same data (or on the CPU).'

  static description = `Answers "how much faster and how much smaller is my pruned layer than dense, on my GPU?", and reproduces the paper's benchmark (--suite dlmc DIR), an LLM-shaped one (--suite llm) and an attention-shaped one (--suite attention: random seq x seq masks, seq 2048, 4096 and 8192, at --attention-sparsity, exactly the same number of columns per row, head dimension N = 64 and 128; default --op sddmm --dtype f16,bf16).
Timing: CUDA events around each launch after a warm-up; at least --reps launches and more until --min-ms of samples (at most --max-reps); median, p10 and p90. Operands that fit in L2 are rotated among copies (or L2 is flushed) so every launch reads cold memory; tiny problems also get a CUDA-graph time per launch (our streaming kernels launch there with Hopper's programmatic dependent launch; SPARSE_PDL=off: without). Baselines run in the same process on the same data: cuBLAS fp32 (CUDA cores), TF32, fp16/bf16 (tensor cores, fp32 accumulate) and cuSPARSE CSR (descriptors, workspace and preprocess made before timing); a missing library is reported and the run goes on.
INPUT: CSR .npz, 2:4 .npz (sparse convert --to 2:4), .smtx, CSR directories, dense .npy (pruned with -s), whole models (.safetensors, .npz: every 2-D weight pruned with -s; model totals are given), or folders (searched recursively). For SDDMM the m x k pattern is the output mask and n the inner dimension.
--pattern N:M prunes --suite llm's layers and dense inputs to N:M instead of to a sparsity: --suite llm --pattern 2:4 benches the three LLM shapes magnitude-pruned to 2:4 at N = 1, 8, 16, 32, 64, 256, 1024, 2048 (or --n), default --dtype f16,bf16. A 2:4 matrix in f16/bf16 runs one of our three 2:4 kernels: the mma.sp one, or on H100/H200 the streaming engine's at N <= 64 where it is faster and the GEMM engine's from N = 128 on (the case's impls.ours.detail names it, e.g. spmm_f16_i16_s24_w4_m1_s8, spmm_f16_i16_s24e_w8_k256 or spmm_f16_i16_s24g_m256_n128_s4_sk2), and its bytes, %BW and mem saving count the 2:4 tiles that kernel reads (form '2:4'; the bitmap kernel's cases count its bitmap tiles, form 'bitmap', and the tensor-core kernel's its 16 x 32 CSR tiles, form 'tc'); --baseline cusparselt (or all) adds cuSPARSELt.
Kernel variants (SpMM on CUDA): --tune times every variant of our SpMM per case (10 reps and --tune-min-ms each, same cold-L2 timing), uses the fastest and saves it to the tune cache; later runs use a cached winner whose key (GPU, dtype, index width, m, k, n, mean row length as a power of 2) matches, else the built-in selection. Each case's variantSource says which ('tuned', 'cache', 'heuristic', or 'forced' by SPARSE_SPMM_VARIANT). --keep-sparse leaves out the kernels that store every weight (und_*: on H100/H200, large unstructured f16/bf16 layers at N >= 184 run as a dense GEMM, faster, with no memory saving) from all three, and keeps its winners apart in the cache. --tune-only PREFIXES narrows --tune to the variants whose names start with one of them (and the selection's pick), for timing one family (e.g. s24g_) in less time; its winners are not cached. --tune needs a GPU (exit 2 with --device cpu or when --device auto finds none).
Exit codes: 0 when at least one case ran (failed cases are reported with their error), 1 when every case failed, 2 for bad usage, 3 when the addon is missing or --device cuda finds no usable GPU (--device auto, the default, then runs on the CPU).`

  static examples = [
    '<%= config.bin %> bench layer.npz --n 1,16,256',
    '<%= config.bin %> bench model.safetensors -s 0.9 --n 16 --dtype f16',
    '<%= config.bin %> bench --suite dlmc ../shared/dlmc --json --plot bench.svg > bench.json',
    '<%= config.bin %> bench --suite dlmc ../shared/dlmc --op spmm --dtype f32 --compare ../shared/anchors/dlmc_dev_h200.jsonl',
    '<%= config.bin %> bench --suite llm --dtype f16 --n 16 --jsonl llm.jsonl',
    '<%= config.bin %> bench --suite llm --pattern 2:4 --baseline all       # 2:4 layers: our 2:4 kernel against cuBLAS, cuSPARSE and cuSPARSELt',
    '<%= config.bin %> bench --suite attention --attention-sparsity 0.9,0.95 --jsonl attention.jsonl',
    '<%= config.bin %> bench fixtures/dlmc-rn50-0.98-initial_conv.smtx --n 64 --device cpu',
    '<%= config.bin %> bench --suite llm --n 16 --dtype f16 --tune        # tune the SpMM variants, cache the winners',
  ]

  static strict = false

  static args = {
    input: Args.string({description: 'files or folders to bench (with --suite dlmc: the DLMC folder)', required: false}),
  }

  static flags = {
    op: Flags.string({description: 'spmm, sddmm or all (default: spmm; all for --suite dlmc; sddmm for --suite attention)'}),
    n: Flags.string({description: `N values, comma-separated (the dense operand has N columns; default for INPUTs ${DEFAULT_BENCH_N}, as in verify; suites have their own, e.g. the head dimensions 64,128 of --suite attention)`}),
    dtype: Flags.string({description: 'f32, f16, bf16, all, or a list (default: f32; f32,f16 for suites; f16,bf16 for --suite attention)'}),
    baseline: Flags.string({description: 'dense, cusparse, cusparselt (2:4 SpMM, f16/bf16), all or none (a list is fine)', default: 'dense,cusparse'}),
    device: Flags.string({description: "where to run: 'auto' (the GPU when usable, else the CPU; as in verify), cuda, or cpu (our CPU kernels against a dense CPU BLAS product)", options: ['cuda', 'cpu', 'auto'], default: 'auto'}),
    suite: Flags.string({description: "a benchmark suite: 'dlmc' (the DLMC folder is the INPUT), 'llm' or 'attention'", options: ['dlmc', 'llm', 'attention']}),
    batch: Flags.string({description: 'ResNet-50 batch sizes of --suite dlmc', default: '1,8'}),
    'llm-sparsity': Flags.string({description: 'sparsity levels of --suite llm (default 0.5,0.6,0.7,0.8,0.9,0.95; not with --pattern)'}),
    pattern: Flags.string({description: "prune --suite llm's layers and dense inputs to this N:M pattern (e.g. 2:4) instead of to a sparsity", default: 'unstructured'}),
    'attention-sparsity': Flags.string({description: 'sparsity levels of the --suite attention masks', default: '0.9'}),
    sparsity: Flags.string({char: 's', description: 'prune dense inputs to this sparsity first (e.g. 0.9), or to each of a list to sweep them (e.g. 0.5,0.7,0.9: one set of cases and model totals per sparsity)'}),
    include: Flags.string({description: 'only tensors of model files and CSR folders whose name matches this RegExp'}),
    exclude: Flags.string({description: 'skip tensors of model files and CSR folders whose name matches this RegExp'}),
    'include-embeddings': Flags.boolean({description: 'dense models: also prune and bench embeddings and lm_head (left dense by default, as prune does)', default: false}),
    csv: Flags.string({helpValue: 'FILE', description: 'write one CSV row per case to FILE'}),
    jsonl: Flags.string({helpValue: 'FILE', description: 'write one JSON line per case to FILE (what --compare reads)'}),
    plot: Flags.string({helpValue: 'FILE', description: 'write the speedup-vs-sparsity plot to FILE (.svg or .png)'}),
    compare: Flags.string({helpValue: 'FILE', description: 'add the times of an earlier --jsonl run or of an anchors file (matched by file, op, dtype and N)'}),
    force: Flags.boolean({char: 'f', description: 'overwrite existing output files', default: false}),
    reps: Flags.integer({description: 'at least this many timed launches per implementation', default: 50, min: 1}),
    'min-ms': Flags.integer({description: '...and more until the samples add up to this many ms', default: 200, min: 0}),
    'max-reps': Flags.integer({description: '...but at most this many', default: 1000, min: 1}),
    warmup: Flags.integer({description: 'untimed launches first', default: 5, min: 0}),
    threads: Flags.integer({description: 'CPU threads for --device cpu (default: all cores)', min: 1}),
    seed: Flags.integer({description: 'seed of the random values (pattern-only matrices, dense operands, --suite llm and attention); 0 by default in every command', default: DEFAULT_SEED, min: 0}),
    table: Flags.boolean({description: 'print the per-case table (default: on, off with --no-table)', default: true, allowNo: true}),
    tune: Flags.boolean({description: 'SpMM on CUDA: time every kernel variant per case, use the fastest, and save the winners to the tune cache', default: false}),
    'keep-sparse': Flags.boolean({description: 'SpMM on CUDA: keep the weights in a sparse form: no kernel that stores every weight, zeros included (und_*), in the selection, --tune or the cache', default: false}),
    'tune-cache': Flags.string({helpValue: 'FILE', description: 'the tune cache file (default: $XDG_CACHE_HOME/sparse/tune.json or ~/.cache/sparse/tune.json)'}),
    'no-tune-cache': Flags.boolean({description: 'neither read nor write the tune cache (kernel variants: the built-in selection, or --tune\'s winners unsaved)', default: false}),
    'tune-only': Flags.string({helpValue: 'PREFIXES', description: 'with --tune: time only the variants whose names start with one of these comma-separated prefixes (and the selection\'s pick); their winners are not saved to the tune cache'}),
    'tune-min-ms': Flags.integer({description: 'with --tune: each candidate variant is timed for at least 10 reps and this many ms', default: 20, min: 0}),
  }

  public async run(): Promise<BenchRunResult> {
    const {argv, flags} = await this.parse(Bench)
    const inputs = argv as string[]
    const options = buildOptions(inputs, flags)
    // Progress on an interactive stderr only (spin): reading and pruning the inputs and
    // measuring the device come first, then one line per case with the time left.
    this.spin('preparing: reading the inputs and measuring the device')
    const clock = new ProgressClock()
    const result = await benchAndWrite({
      ...options,
      onProgress: (p) => {
        if (p.label !== 'done') this.spin(clock.line(p))
      },
    })
    this.stopSpinner()
    // NOTE: after the run, so that a run that fails prints its error line alone.
    if (result.device.kind === 'cpu') this.note(`note: these are CPU figures (our CPU kernels against a dense CPU product${options.device === 'auto' ? '; --device auto found no usable GPU' : ''}), not GPU ones`)
    const parts = [renderHeader(result)]
    if (flags.table) parts.push('', renderCases(result))
    parts.push('', renderSummary(result))
    if (result.cases.some((c) => c.status === 'ok' && c.recommendation?.use === 'dense')) {
      parts.push('', '* the baseline is faster than sparse there; "DENSE" advice marks cases where dense of the same precision wins.')
    }
    for (const o of result.outputs) parts.push(`wrote ${escapeText(o.path)} (${o.bytes} bytes)`)
    this.report(parts.join('\n'))
    // Warnings name files and tensors: escaped here, as names in a line are (the styling is ours).
    for (const w of result.tune?.warnings ?? []) this.note(`warning: ${escapeText(w)}`)
    for (const w of result.warnings) this.note(`${chalk.yellow('warning:')} ${escapeText(w)}`)
    if (result.allFailed) {
      const first = result.cases.find((c): c is FailedCase => c.status === 'failed')
      this.note(`error: ${result.summary.total === 1 ? 'the only case' : `all ${result.summary.total} cases`} failed (first: ${escapeText(first?.error ?? 'unknown')})`)
      process.exitCode = 1
    }
    return result
  }
}

type BenchFlags = Interfaces.InferredFlags<typeof Bench.flags>

function buildOptions(inputs: string[], flags: BenchFlags): BenchOptions & {csv?: string; jsonl?: string; plot?: string; force: boolean} {
  const device = flags.device as 'cuda' | 'cpu' | 'auto'
  const baselines = parseBaselines(flags.baseline)
  if (device === 'cpu' && baselines.includes('cusparse') && flags.baseline !== 'dense,cusparse') {
    throw new UsageError('cpu-cusparse', '--baseline cusparse needs --device cuda (cuSPARSE is a GPU library)', 'drop cusparse from --baseline, or use --device cuda')
  }
  if (device === 'cpu' && baselines.includes('cusparselt')) {
    throw new UsageError('cpu-cusparselt', '--baseline cusparselt needs --device cuda (cuSPARSELt is a GPU library)', 'drop cusparselt from --baseline, or use --device cuda')
  }
  let suite: BenchOptions['suite']
  let rest = inputs
  if (flags.suite === 'dlmc') {
    if (inputs.length === 0) throw new UsageError('no-suite-dir', '--suite dlmc needs the DLMC folder', 'e.g. sparse bench --suite dlmc ../shared/dlmc')
    suite = {kind: 'dlmc', dir: inputs[0]}
    rest = inputs.slice(1)
  } else if (flags.suite === 'llm') {
    suite = {kind: 'llm'}
  } else if (flags.suite === 'attention') {
    suite = {kind: 'attention'}
  }
  if (!suite && rest.length === 0) throw new UsageError('no-inputs', 'nothing to bench: give INPUT files or folders, or --suite', 'e.g. sparse bench layer.npz --n 16, or sparse bench --suite dlmc ../shared/dlmc')
  if (flags['tune-cache'] !== undefined && flags['no-tune-cache']) {
    throw new UsageError('tune-cache-conflict', '--tune-cache and --no-tune-cache contradict each other', 'give one of them')
  }
  if (flags['tune-cache'] === '' || flags['tune-cache'] === '-') {
    throw new UsageError('bad-tune-cache', `--tune-cache: expected a file name, got ${JSON.stringify(flags['tune-cache'])}`, 'e.g. --tune-cache tune.json')
  }
  const sparsity = flags.sparsity === undefined ? undefined : parseSparsityList('-s', flags.sparsity)
  return {
    inputs: rest,
    suite,
    ops: flags.op ? parseOps(flags.op) : undefined,
    dtypes: flags.dtype ? parseDtypes(flags.dtype) : undefined,
    ns: flags.n ? parseIntList('--n', flags.n) : undefined,
    batches: parseIntList('--batch', flags.batch),
    llmSparsities: flags['llm-sparsity'] === undefined ? undefined : parseSparsityList('--llm-sparsity', flags['llm-sparsity']),
    pattern: flags.pattern,
    attentionSparsities: parseSparsityList('--attention-sparsity', flags['attention-sparsity']),
    baselines: device === 'cpu' ? baselines.filter((b) => b !== 'cusparse' && b !== 'cusparselt') : baselines,
    device,
    sparsity,
    include: flags.include,
    exclude: flags.exclude,
    includeEmbeddings: flags['include-embeddings'],
    timing: {minReps: flags.reps, minMs: flags['min-ms'], maxReps: flags['max-reps'], warmup: flags.warmup, threads: flags.threads ?? 0},
    compare: flags.compare,
    seed: flags.seed,
    tune: flags.tune,
    tuneCache: flags['no-tune-cache'] ? false : flags['tune-cache'],
    tuneMinMs: flags['tune-min-ms'],
    ...(flags['tune-only'] === undefined ? {} : {tuneOnly: flags['tune-only'].split(',').map((p) => p.trim())}),
    ...(flags['keep-sparse'] ? {keepSparse: true} : {}),
    csv: flags.csv,
    jsonl: flags.jsonl,
    plot: flags.plot,
    force: flags.force,
  }
}
