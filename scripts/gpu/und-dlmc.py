"""Unstructured A stored dense (the family und) on the DLMC problems below 2^31 multiply-adds
(issue 25, docs/gemm-engine.md "v36"): what the selection would gain if und also ran there.

    python3 scripts/gpu/und-dlmc.py FILE
    python3 scripts/gpu/und-dlmc.py --plan < problems.jsonl

FILE is a `sparse bench` report of the DLMC SpMM problems in f16:
- `dlmc.jsonl` of a plain run (run.sh bench-dlmc): the model alone. For each problem the
  selection gave to ung with N >= 184 and N, K multiples of 8, the estimates of
  native/common/gemm_plan.h (UnstGemmWins' fixed cost and cost per modelled cycle) with und's
  cycles (UndGemmCycles of UndGemmPick's shape) against ung's (UnGemmCycles of UnGemmPick's),
  and the geomean over Sputnik if each such problem ran that much faster.
- `dlmc.json` of a --tune run (run.sh bench-dlmc --op spmm --dtype f16 --tune --no-tune-cache):
  the measured times. und's time fitted as FIXED + PER_CYCLE x its modelled cycles (relative
  least squares), on all problems and held out by model family (fitted on one family, the rule
  "und where its estimate is below both of UnstGemmWins' estimates, ung's and the CSR
  kernels'" checked on the other), and the geomean over Sputnik of the selection, of the
  selection with und where it was faster, and of the rule.
The model mirrors gemm_plan.h (TailSplit, GemmTileCycles, UnGemmCycles, UndGemmCycles, the
cheapest shape, UnstGemmWins' estimates, UnstGemmWins and UndGemmWins with its branch below 2^31
multiply-adds, UndSmallModel, kUndSmallFitted). `--plan` reads problems {m, k, n, nnz, sms,
undSmall?: {fixedUs, usPerCycle} | 'off'} (absent: the library's fitted constants) as JSON lines
and writes the model's figures for each in the form of the addon's `unstGemmPlan`, which
test/kernels/gemm-plan.test.ts compares with the C++ on a grid of shapes: keep them in step. A
--tune report also prints the line SPARSE_UND_SMALL=FIXED,PER_CYCLE of the fit on every problem:
in the environment of `sparse bench` it replaces the library's constants below 2^31 ('off' turns
the branch off).
"""
import json
import math
import re
import sys

SMS = 132
MAX_SPLIT = 4
UNG_FIXED_US, UNG_US_PER_CYCLE = 6.18, 0.000584  # kUnGemmFixedUs, kUnGemmUsPerCycle
CSR_FIXED_US, CSR_US_PER_MAC = 8.26, 2.17e-7  # kCsrFixedUs, kCsrUsPerMac
UND_MIN_N = 177.5  # kUndMinFlopsPerByte
MIN_WORK = 1 << 31  # kUnGemmMinWork
MIN_N = 128  # kUnGemmMinN
UND_SMALL_FITTED = (5.669, 0.0006903)  # kUndSmallFitted (v38)
SHAPES = [(256, True), (128, True), (256, False), (128, False)]  # CheapestGemmShape's order


def tail_split(tiles, grid, k_blocks):
    r = tiles % grid
    return 1 if r == 0 else min(grid // r, MAX_SPLIT, k_blocks)


def tile_cycles(m, n, k, n_tile, split, stage, bytes_per_cycle, sms=SMS):
    tiles = (m + 127) // 128 * ((n + n_tile - 1) // n_tile)
    k_blocks = (k + 63) // 64
    store = 256.0 * n_tile / bytes_per_cycle
    whole = (tiles // sms) * (k_blocks * stage + store)
    if tiles % sms == 0:
        return whole
    s = tail_split(tiles, sms, k_blocks) if split else 1
    if s < 2:
        return whole + k_blocks * stage + store
    return whole + (k_blocks + s - 1) // s * stage + 2.0 * (s - 1) / s * 512.0 * n_tile / bytes_per_cycle + store


def ung_cycles(m, n, k, n_tile, split, sms=SMS):
    return tile_cycles(m, n, k, n_tile, split, 1220 if n_tile == 256 else 950, 15, sms)


def und_cycles(m, n, k, n_tile, split, sms=SMS):
    tiles = tile_cycles(m, n, k, n_tile, split, 1110 if n_tile == 256 else 600, 14, sms)
    l2 = 2.0 * m * k * ((n + n_tile - 1) // n_tile) + 2.0 * k * n * ((m + 127) // 128)
    return max(tiles, l2 / 4900)


def cheapest(cycles, m, n, k, sms=SMS):
    return min((cycles(m, n, k, *s, sms=sms), i) for i, s in enumerate(SHAPES))


def ung_us(m, n, k, sms=SMS):
    return UNG_FIXED_US + UNG_US_PER_CYCLE * cheapest(ung_cycles, m, n, k, sms)[0]


def csr_us(nnz, n):
    return CSR_FIXED_US + CSR_US_PER_MAC * nnz * n


def dense_work_pays(m, k, nnz):
    return m >= 1 and k >= 1 and 1000 * nnz >= 25 * m * k  # kUnGemmMinDensityPermille


def unst_gemm_wins(m, k, nnz, n, sms):
    if n < MIN_N or m < 1 or k < 1 or sms < 1:
        return False
    if m * k * n >= MIN_WORK and dense_work_pays(m, k, nnz):
        return True
    return ung_us(m, n, k, sms) < csr_us(nnz, n)


def und_wins(m, k, nnz, n, sms, small=None):
    """UndGemmWins; small = (FIXED, PER_CYCLE), its branch below 2^31 (UndSmallModel); None: off."""
    if not (n >= UND_MIN_N and n % 8 == 0 and k % 8 == 0 and m >= 1):
        return False
    if m * k * n >= MIN_WORK:
        return dense_work_pays(m, k, nnz)
    if not small or sms < 1:
        return False
    und = small[0] + small[1] * cheapest(und_cycles, m, n, k, sms)[0]
    return und < ung_us(m, n, k, sms) and und < csr_us(nnz, n)


def plan(p):
    """The model's figures for one problem, as the addon's unstGemmPlan gives them."""
    m, k, n, nnz, sms = p['m'], p['k'], p['n'], p['nnz'], p['sms']
    out = {}
    for name, cycles in (('ung', ung_cycles), ('und', und_cycles)):
        c, i = cheapest(cycles, m, n, k, sms)
        out[name] = dict(nTile=SHAPES[i][0], split=SHAPES[i][1], cycles=c)
    given = p.get('undSmall')
    small = None if given == 'off' else UND_SMALL_FITTED if given is None else (given['fixedUs'], given['usPerCycle'])
    out.update(ungUs=ung_us(m, n, k, sms), csrUs=csr_us(nnz, n), unstGemmWins=unst_gemm_wins(m, k, nnz, n, sms),
               undGemmWins=und_wins(m, k, nnz, n, sms, small),
               undSmall=small and dict(fixedUs=small[0], usPerCycle=small[1]))
    return out


def und_name(i):
    n_tile, split = SHAPES[i]
    return 'und_n%d%s' % (n_tile, '_sk3' if split else '')


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def und_may_run(c):
    return c['n'] >= UND_MIN_N and c['n'] % 8 == 0 and c['k'] % 8 == 0


def variant_of(c):
    m = re.search(r'spmm_(?:f16|bf16|f32)_i\d+_([a-z0-9_]+)', c['impls']['ours'].get('detail', ''))
    return m.group(1) if m else ''


def model_only(cases):
    gains, logs = [], []
    for c in cases:
        ratio = c['speedup']['sputnik']
        if variant_of(c).startswith('ung_') and und_may_run(c):
            m, n, k = c['m'], c['n'], c['k']
            ung = ung_us(m, n, k)
            und = UNG_FIXED_US + UNG_US_PER_CYCLE * cheapest(und_cycles, m, n, k)[0]
            gains.append(ung / und)
            ratio *= max(ung / und, 1.0)
        logs.append(ratio)
    print('%d problems; %d on ung that und could run: modelled ung / und %.3f geomean (%.3f to %.3f)'
          % (len(cases), len(gains), geomean(gains), min(gains), max(gains)))
    print('geomean over Sputnik: %.3f now, %.3f modelled with und where faster'
          % (geomean([c['speedup']['sputnik'] for c in cases]), geomean(logs)))


def fit(rows):
    # time = a + b cycles, least squares on relative error
    s00 = s01 = s11 = v0 = v1 = 0.0
    for r in rows:
        f0, f1 = 1 / r['und'], r['cycles'] / r['und']
        s00, s01, s11, v0, v1 = s00 + f0 * f0, s01 + f0 * f1, s11 + f1 * f1, v0 + f0, v1 + f1
    det = s00 * s11 - s01 * s01
    a, b = (v0 * s11 - v1 * s01) / det, (s00 * v1 - s01 * v0) / det
    rms = math.sqrt(sum(((a + b * r['cycles']) / r['und'] - 1) ** 2 for r in rows) / len(rows))
    return a, b, rms


def tuned(cases):
    rows = []
    for c in cases:
        t = c['tuned']
        cand = {v: ms * 1000 for v, ms in t['candidates'].items() if isinstance(ms, (int, float)) and ms > 0}
        sel = t['defaultMs'] * 1000
        m, n, k = c['m'], c['n'], c['k']
        others = min(ung_us(m, n, k), csr_us(c['nnz'], n))
        row = dict(file=c['file'], family=c['file'].split('/')[0], m=m, k=k, n=n, sparsity=c['sparsity'], sel=sel,
                   selv=t['defaultVariant'], sput=c['baselines']['sputnik'] * 1000, others=others)
        if und_may_run(c):
            cycles, i = cheapest(und_cycles, c['m'], c['n'], c['k'])
            if und_name(i) in cand:
                row.update(und=cand[und_name(i)], cycles=cycles, undv=und_name(i))
        rows.append(row)
    timed = [r for r in rows if 'und' in r]
    print('%d problems, %d with und (its modelled shape) timed' % (len(rows), len(timed)))
    if not timed:
        return
    a, b, rms = fit(timed)
    print('und = %.2f us + %.3g us a modelled cycle (relative rms %.3f; ung: %.2f + %.3g)' % (a, b, rms, UNG_FIXED_US, UNG_US_PER_CYCLE))
    # The rule fitted on every problem, for a measurement of it without a rebuild
    # (UndSmallModel, common/gemm_plan.h): `SPARSE_UND_SMALL=... sparse bench ...`.
    print('SPARSE_UND_SMALL=%.4g,%.4g' % (max(a, 0.0), b))
    base = [r['sput'] / r['sel'] for r in rows]
    best = [r['sput'] / min(r['sel'], r.get('und', math.inf)) for r in rows]
    print('over Sputnik: selection %.3f, with und wherever it was faster %.3f' % (geomean(base), geomean(best)))

    def rule_time(r, fa, fb):
        return r['und'] if 'und' in r and fa + fb * r['cycles'] < r['others'] else r['sel']

    print('the rule fitted on all: geomean over Sputnik %.3f' % geomean([r['sput'] / rule_time(r, a, b) for r in rows]))
    families = sorted({r['family'] for r in timed})
    held_out = []
    for held in families:
        fa, fb, frms = fit([r for r in timed if r['family'] != held])
        picked, right = [], 0
        for r in rows:
            if r['family'] != held:
                continue
            t = rule_time(r, fa, fb)
            right += 'und' in r and (t == min(r['sel'], r['und']) or abs(t / min(r['sel'], r['und']) - 1) < 0.03)
            picked.append(r['sput'] / t)
        held_out += picked
        n_held = sum(1 for r in rows if r['family'] == held and 'und' in r)
        print('fitted without %s (%.2f + %.3g, rms %.3f): on %s the rule picks the faster (within 3 %%) on %d of %d; '
              'geomean over Sputnik %.3f (selection %.3f)'
              % (held, fa, fb, frms, held, right, n_held, geomean(picked),
                 geomean([r['sput'] / r['sel'] for r in rows if r['family'] == held])))
    if len(families) > 1:
        print('held out by family, every problem: geomean over Sputnik %.3f (selection %.3f)'
              % (geomean(held_out), geomean([r['sput'] / r['sel'] for r in rows if r['family'] in families])))
    for r in sorted(timed, key=lambda r: r['und'] / r['sel'])[:12] + sorted(timed, key=lambda r: r['und'] / r['sel'])[-6:]:
        print('  %5d x %5d N %6d %.2f: %s %.1f us, %s %.1f us (%.2fx), model %.1f'
              % (r['m'], r['k'], r['n'], r['sparsity'], r['selv'], r['sel'], r['undv'], r['und'], r['sel'] / r['und'],
                 a + b * r['cycles']))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    if path == '--plan':
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(plan(json.loads(line))))
        return
    if path.endswith('.jsonl'):
        cases = [json.loads(line) for line in open(path)]
    else:
        cases = json.load(open(path))['cases']
    cases = [c for c in cases if c.get('status') == 'ok' and c.get('op') == 'spmm' and 'sputnik' in c.get('baselines', {})]
    if any('tuned' in c for c in cases):
        tuned([c for c in cases if 'tuned' in c])
    else:
        model_only(cases)


if __name__ == '__main__':
    main()
