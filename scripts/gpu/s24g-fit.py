"""The 2:4 GEMM-engine family's tile shape, as a model of a launch's time fitted to `sparse bench
--tune` reports (issue 25, docs/gemm-engine.md "v37"): which of s24g's shapes the selection should
run, checked on shapes held out of the fit.

    python3 scripts/gpu/s24g-fit.py REPORT.json...
    python3 scripts/gpu/s24g-fit.py --model PARAMS.json < problems.jsonl

REPORT is the --json report of a 2:4 f16/bf16 `sparse bench --tune` run (scripts/gpu/s24g-tune.sh
writes them: the suite's three LLM shapes and the three held out of it, N = 128-2048), whose cases
hold every s24g variant's time. v12's rule (Gemm24Rows, native/common/gemm_plan.h) picked the
tile height by how busy it keeps the SMs and always the tail split (_sk2); v12's data say a split
costs a fixed 7-10 us on these kernels (the owner's read of the other pieces' sums), so that whole
128-row tiles win where they fill a wave (6144 x 4096 at N = 256: 23.9 against 26.3 us). Since v38
the selection is this model's pick with constants fitted on v12's records (kGemm24Fitted) and
Gemm24Rows runs with SPARSE_S24G_MODEL=off.

The model, per variant s24g_m<rows>_n<cols>_s<stages>[_sk2|_sk3] (whole tiles, or the ragged
wave's tiles cut into TailSplit pieces by K: _sk2 the first piece adds the others' sums, _sk3 the
pieces reduce the tile together, v37):
  us = T0 + (FX0 if _sk2, FX3 if _sk3) + max(tile cycles, L2 bytes / L2) / 1980
  tile cycles = whole waves x (kb S + store) + the ragged wave: kb S + store, or split into s
                pieces: ceil(kb / s) S + fixup + store  (store = rows cols 2 / F; fixup: the
                owner's s rows cols 4 / F for _sk2, each piece's 2 (s - 1) / s rows cols 4 / F
                for _sk3)
  L2 bytes    = M K 1.125 x column tiles + 2 K N x row tiles  (A's values and metadata, B)
with kb = K stages of 64, S the stage cycles of the tile shape (one per shape), F the fixup's and
store's bytes a cycle, FX0 and FX3 the fixed cost of a split of either kind, L2 the operands'
bytes a cycle through L2. _sk3 is a candidate only where the reports timed it, the 64-column
tiles (v53) only where they were timed (a fit) or PARAMS has both S_m128_n64 and S_m256_n64
(--model), the 128 x 256 tile with A read by wgmma from shared memory (`_ss1`, v55; whole or
_sk2) only where it was timed or PARAMS has S_m128_n256, and the 256 x 192 `_ss1` tile (v56; the
same) only where it was timed or PARAMS has S_m256_n192. Every other kernel a report times (the
128 x 256 tiles of v41 and v54 through registers, the clusters of 2) is fitted for its own stage
cycles with the rest fixed and reported against the rule's fastest, not a candidate.
Fitted by relative least squares (Nelder-Mead, pure Python): on every case, then leaving each
shape out in turn; for each left-out case, the measured time of the fitted model's pick and of the
selection's variant over the fastest of the candidates the rule chooses from. `--model` writes,
for problems {m, k, n, sms?} as JSON lines, each shape's estimate and the pick (with _sk3 where
PARAMS has FX3), as Gemm24Us and Gemm24Pick (native/common/gemm_plan.h) give them through the
addon's gemm24Rows with a model: test/kernels/gemm-plan.test.ts keeps the two in step. A report's
fit also prints SPARSE_S24G_MODEL=..., which replaces the library's constants in `sparse bench`.
Where the reports hold the bench's own median and baselines (cuBLAS; cuSPARSELt with
BASELINE=dense,cusparselt), it prints the held-out picks and the selection against each in the
bench's times (v57): the selection's median as measured, a pick's scaled by its --tune time over
the selection's, since --tune's and the bench's timings differ by a few per cent.
"""
import json
import math
import re
import sys

SMS = 132
MAX_SPLIT = 4
NAME = re.compile(r'^s24g_(m(128|256)_n(64|128|192|256)_s(\d+)(_c2|_ss1)?)(?:_sk([123]))?$')
# The kernels the selection runs, one per tile shape (spmm_24_gemm_sm90a.cu's SelectGemmFamily);
# their stage cycles are the model's S_m<rows>_n<cols>. The 128 x 256 one is `_ss1`'s (v55: A read
# by wgmma from shared memory; since v59 on 5 stages), as the 256 x 192 one (v56); every other
# kernel timed gets S_<stem> of its own (reported, not a candidate).
SELECTED = {'m128_n128_s6': 'S_m128_n128', 'm256_n128_s4': 'S_m256_n128', 'm128_n64_s12': 'S_m128_n64',
            'm256_n64_s8': 'S_m256_n64', 'm128_n256_s5_ss1': 'S_m128_n256', 'm256_n192_s4_ss1': 'S_m256_n192'}
PARAMS = ['S_m128_n128', 'S_m256_n128', 'S_m128_n256', 'F', 'T0', 'FX0', 'FX3', 'L2', 'S_m128_n64', 'S_m256_n64',
          'S_m256_n192']
START = [600.0, 1100.0, 1100.0, 40.0, 2.0, 6.0, 3.0, 5000.0, 380.0, 700.0, 1400.0]
# The `_ss1` tiles (rows, cols), in Gemm24Pick's order and SPARSE_S24G_MODEL's: each a candidate,
# whole or with the owner's split, where its stage cycles S_m<rows>_n<cols> are known.
SS1 = ((128, 256), (256, 192))


def tail_split(tiles, k_blocks, sms=SMS):
    r = tiles % sms
    return 1 if r == 0 else min(sms // r, MAX_SPLIT, k_blocks)


def shape_of(variant):
    """(rows, cols, mode, key) of an s24g variant: mode 0 for whole tiles, 2 or 3 for _sk2 / _sk3,
    key its stage cycles' parameter (SELECTED's, else S_<stem>); None for the others (the hybrid
    _sk1 is not a shape the rule picks)."""
    m = NAME.match(variant)
    if not m or m.group(6) == '1':
        return None
    return int(m.group(2)), int(m.group(3)), int(m.group(6) or 0), SELECTED.get(m.group(1), 'S_' + m.group(1))


def shape(rows, cols, mode):
    """A selection kernel's shape."""
    return rows, cols, mode, 'S_m%d_n%d' % (rows, cols)


def shape_name(s):
    """The addon's estimate name (m<rows>_n<cols>[_sk<mode>]) of a selection kernel; S_<stem>'s
    stem for the others."""
    base = 'm%d_n%d' % (s[0], s[1]) if s[3] in SELECTED.values() else s[3][2:]
    return base + ('_sk%d' % s[2] if s[2] else '')


def splits(m, n, k, rows, cols, sms=SMS):
    tiles = -(-m // rows) * -(-n // cols)
    return tail_split(tiles, -(-k // 64), sms)


def estimate(p, m, k, n, rows, cols, mode, key, sms=SMS):
    s_cycles = p[key]
    tiles = -(-m // rows) * -(-n // cols)
    kb = -(-k // 64)
    store = rows * cols * 2 / p['F']
    cycles = (tiles // sms) * (kb * s_cycles + store)
    fixed = p['T0']
    if tiles % sms:
        s = tail_split(tiles, kb, sms) if mode else 1
        if s < 2:
            cycles += kb * s_cycles + store
        elif mode == 3:
            cycles += -(-kb // s) * s_cycles + 2.0 * (s - 1) / s * rows * cols * 4 / p['F'] + store
            fixed += p['FX3']
        else:
            cycles += -(-kb // s) * s_cycles + s * rows * cols * 4 / p['F'] + store
            fixed += p['FX0']
    l2 = (m * k * 1.125 * -(-n // cols) + 2.0 * k * n * -(-m // rows)) / p['L2']
    return fixed + max(cycles, l2) / 1980.0


def shapes_for(m, n, k, coop=False, sms=SMS, narrow=False, ss1=()):
    """The rule's candidates: both 128-column heights whole, and split where the split splits
    (with coop, both kinds of split); with narrow, the same of 64 columns after them; then each
    `_ss1` tile of ss1 (SS1's (rows, cols)) whole and split with the owner adding (they have no
    _sk3); Gemm24Pick's order."""
    out = []
    for cols in (128, 64) if narrow else (128,):
        for rows in (256, 128):
            out.append(shape(rows, cols, 0))
            if splits(m, n, k, rows, cols, sms) >= 2:
                out += [shape(rows, cols, 2)] + ([shape(rows, cols, 3)] if coop else [])
    for rows, cols in ss1:
        out.append(shape(rows, cols, 0))
        if splits(m, n, k, rows, cols, sms) >= 2:
            out.append(shape(rows, cols, 2))
    return out


def is_narrow(p):
    """Whether the 64-column tiles are candidates: both of their stage cycles given above 0."""
    return p.get('S_m128_n64', 0) > 0 and p.get('S_m256_n64', 0) > 0


def ss1_of(p):
    """The `_ss1` tiles that are candidates: those whose stage cycles p gives above 0."""
    return tuple(t for t in SS1 if p.get(shape(*t, 0)[3], 0) > 0)


def pick(p, m, k, n, coop=False, sms=SMS):
    cands = shapes_for(m, n, k, coop, sms, is_narrow(p), ss1_of(p))
    return min(cands, key=lambda s: (estimate(p, m, k, n, *s, sms=sms), cands.index(s)))


def rms(p, rows):
    return math.sqrt(sum((estimate(p, r['m'], r['k'], r['n'], *r['shape']) / r['us'] - 1) ** 2 for r in rows) / len(rows))


def nelder_mead(f, x0, steps=3000):
    n = len(x0)
    pts = [list(x0)] + [[x * (1.25 if i == j else 1.0) for j, x in enumerate(x0)] for i in range(n)]
    vals = [f(x) for x in pts]
    for _ in range(steps):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < 1e-12:
            break
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i], vals[i]


def fit(rows):
    used = {r['shape'][3] for r in rows}

    def f(x):
        p = dict(zip(PARAMS, x))
        if min(p['F'], p['L2']) <= 1 or min(p['T0'], p['FX0'], p['FX3']) < 0 or min(p[s] for s in used) <= 1:
            return 1e9
        return rms(p, rows)

    best = None
    for fx in (1.0, 6.0, 12.0):
        for t0 in (0.5, 3.0):
            x0 = list(START)
            x0[PARAMS.index('FX0')], x0[PARAMS.index('T0')] = fx, t0
            x, v = nelder_mead(f, x0)
            x, v = nelder_mead(f, x)  # a restart from the first result
            if best is None or v < best[1]:
                best = (x, v)
    return dict(zip(PARAMS, best[0])), best[1]


def fit_one(p, key, rows):
    """A kernel's own stage cycles with the shared constants of p fixed (golden-section search
    of the rms over 1-20000 cycles); (cycles, rms)."""
    def f(x):
        return rms(dict(p, **{key: x}), rows)

    lo, hi = 1.0, 20000.0
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(80):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    x = (lo + hi) / 2
    return x, f(x)


def read_cases(paths):
    cases = []
    for path in paths:
        for c in json.load(open(path))['cases']:
            if c.get('status') != 'ok' or c.get('op') != 'spmm' or 'tuned' not in c:
                continue
            t = c['tuned']
            cand = {}
            for v, ms in t['candidates'].items():
                s = shape_of(v)
                if s and isinstance(ms, (int, float)) and ms > 0:
                    cand[s] = min(cand.get(s, math.inf), ms * 1000)
            if not cand:
                continue
            base = c.get('baselines', {})
            dense, lt = base.get('cublas_' + c['dtype']), base.get('cusparselt')
            bench = c.get('ms', {}).get('median')
            cases.append(dict(m=c['m'], k=c['k'], n=c['n'], dtype=c['dtype'], cand=cand, sel=shape_of(t['defaultVariant']),
                              sel_us=t['defaultMs'] * 1000, cublas=dense * 1000 if dense else None,
                              lt=lt * 1000 if lt else None, bench_us=bench * 1000 if bench else None))
    return cases


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def report(cases):
    every = [dict(m=c['m'], k=c['k'], n=c['n'], shape=s, us=t) for c in cases for s, t in c['cand'].items()]
    # The model is fitted on the selection's kernels; each other kernel timed gets its own stage
    # cycles with the shared constants fixed (how far it is from being worth a candidate).
    rows = [r for r in every if r['shape'][3] in PARAMS]
    extra = sorted({r['shape'][3] for r in every} - set(PARAMS))
    coop = any(r['shape'][2] == 3 for r in rows)
    narrow = any(r['shape'][1] == 64 for r in rows)
    timed = {r['shape'][3] for r in rows}
    ss1 = tuple(t for t in SS1 if shape(*t, 0)[3] in timed)
    untimed_ss1 = {shape(*t, 0)[3] for t in SS1 if t not in ss1}

    def unfitted(q):
        if not narrow:
            q['S_m128_n64'] = q['S_m256_n64'] = 0.0
        for key in untimed_ss1:
            q[key] = 0.0
        return q

    p, err = fit(rows)
    p = unfitted(p)
    print('%d cases, %d candidate times; fitted on all: rms %.3f' % (len(cases), len(rows), err))
    shown = [k for k in PARAMS if (coop or k != 'FX3') and (narrow or not k.endswith('_n64')) and k not in untimed_ss1]
    print('  ' + ', '.join('%s %.4g' % (k, p[k]) for k in shown))
    for key in extra:
        mine = [r for r in every if r['shape'][3] == key]
        x, e = fit_one(p, key, mine)
        ratios = []
        for c in cases:
            rule = [t for s, t in c['cand'].items() if s in shapes_for(c['m'], c['n'], c['k'], coop, narrow=narrow, ss1=ss1)]
            own = [t for s, t in c['cand'].items() if s[3] == key]
            if rule and own:
                ratios.append(min(own) / min(rule))
        print('  other kernel %s: %.4g cycles a stage (rms %.3f over %d times); its best / the rule\'s fastest %.3f geomean '
              '(%.3f-%.3f, faster in %d of %d cases)' % (key, x, e, len(mine), geomean(ratios), min(ratios, default=float('nan')),
                                                        max(ratios, default=float('nan')), sum(1 for r in ratios if r < 1), len(ratios)))
    shapes = sorted({(c['m'], c['k']) for c in cases})
    picked, selected, speed_pick, speed_sel = [], [], {}, {}
    # In the bench's own times (its median for the selection, beside its baselines of the same
    # run): the pick's time is that median scaled by the pick's --tune time over the selection's.
    # (group, baseline) -> [(baseline / pick, baseline / selection)]
    bench = {}
    for held in shapes:
        train = [r for r in rows if (r['m'], r['k']) != held]
        q, qerr = fit(train)
        q = unfitted(q)
        test = [r for r in rows if (r['m'], r['k']) == held]
        print('without %dx%d: rms %.3f on the rest, %.3f on it' % (held + (qerr, rms(q, test))))
        for c in cases:
            if (c['m'], c['k']) != held:
                continue
            rule = {s: t for s, t in c['cand'].items() if s in shapes_for(c['m'], c['n'], c['k'], coop, narrow=narrow, ss1=ss1)}
            if not rule:
                continue
            fastest = min(rule.values())
            s = pick(q, c['m'], c['k'], c['n'], coop)
            got = c['cand'].get(s)
            best = min(c['cand'], key=c['cand'].get)
            line = '  %s N %5d: fastest %.1f us; the fit picks %s %s; the selection %s %.1f us (%.3f)' % (
                c['dtype'], c['n'], fastest, shape_name(s), '%.1f us (%.3f)' % (got, got / fastest) if got else 'untimed',
                shape_name(c['sel']) if c['sel'] else '?', c['sel_us'], c['sel_us'] / fastest)
            if c['cand'][best] < fastest:
                line += '; of every kernel %s %.1f us (%.3f)' % (shape_name(best), c['cand'][best], c['cand'][best] / fastest)
            print(line)
            if got:
                picked.append(got / fastest)
                selected.append(c['sel_us'] / fastest)
                group = 'N=128' if c['n'] < 256 else 'N>=256'
                if c['cublas']:
                    speed_pick.setdefault(group, []).append(c['cublas'] / got)
                    speed_sel.setdefault(group, []).append(c['cublas'] / c['sel_us'])
                if c['bench_us']:
                    scaled = c['bench_us'] * got / c['sel_us']
                    for name in ('cublas', 'lt'):
                        if c[name]:
                            bench.setdefault((group, name), []).append((c[name] / scaled, c[name] / c['bench_us']))
    print('held out by shape, over %d cases: the fit\'s pick / the fastest %.3f geomean (worst %.3f); the selection\'s %.3f (worst %.3f)'
          % (len(picked), geomean(picked), max(picked, default=float('nan')), geomean(selected), max(selected, default=float('nan'))))
    for g in sorted(speed_pick):
        print('x cuBLAS at %s: the fit\'s picks %.3f geomean, the selection %.3f' % (g, geomean(speed_pick[g]), geomean(speed_sel[g])))
    for g, name in sorted(bench):
        xs = bench[(g, name)]
        print('in the bench\'s times, x %s at %s: the fit\'s picks %.3f geomean (min %.3f), the selection %.3f (min %.3f)' % (
            'cuBLAS' if name == 'cublas' else 'cuSPARSELt', g, geomean([a for a, _ in xs]), min(a for a, _ in xs),
            geomean([b for _, b in xs]), min(b for _, b in xs)))
    # FX3 only where _sk3 was timed, the 64-column stages only where those tiles were (else
    # --model would weigh them unfitted). The same as the environment variable that sets
    # Gemm24Model (S128,S256,F,T0,FX0,L2[,FX3[,S128N64,S256N64[,S128N256[,S256N192]]]]) for a
    # measurement (an unfitted tile's stage cycles 0 where later numbers follow).
    print('PARAMS ' + json.dumps({k: round(p[k], 6) for k in shown}))
    # (the `_ss1` tiles' numbers up to the last one timed, 0 for one untimed before it)
    tail = SS1[:max(SS1.index(t) for t in ss1) + 1] if ss1 else ()
    print('SPARSE_S24G_MODEL=' + ','.join('%.6g' % p[k] for k in ('S_m128_n128', 'S_m256_n128', 'F', 'T0', 'FX0', 'L2')) +
          (',%.6g' % (p['FX3'] if coop else -1) if coop or narrow or ss1 else '') +
          (',%.6g,%.6g' % (p['S_m128_n64'], p['S_m256_n64']) if narrow or ss1 else '') +
          ''.join(',%.6g' % p[shape(*t, 0)[3]] for t in tail))


def model(path):
    p = json.load(open(path))
    for line in sys.stdin:
        if not line.strip():
            continue
        q = json.loads(line)
        m, k, n, sms = q['m'], q['k'], q['n'], q.get('sms', SMS)
        coop = 'FX3' in p
        est = {shape_name(s): estimate(p, m, k, n, *s, sms=sms)
               for s in shapes_for(m, n, k, coop, sms, is_narrow(p), ss1_of(p))}
        s = pick(p, m, k, n, coop, sms)
        print(json.dumps(dict(m=m, k=k, n=n, estimates=est, pick=dict(rows=s[0], cols=s[1], mode=s[2]))))


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == '--model':
        return model(args[1])
    if not args or args[0].startswith('-'):
        sys.exit(__doc__)
    cases = read_cases(args)
    if not cases:
        sys.exit('s24g-fit.py: no tuned 2:4 case with s24g candidates in ' + ', '.join(args))
    report(cases)


if __name__ == '__main__':
    main()
