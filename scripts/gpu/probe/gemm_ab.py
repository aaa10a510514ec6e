#!/usr/bin/env python3
"""Summarises an A/B of GEMM workbench builds from their `gemm_probe time` outputs (v62).

  python3 scripts/gpu/probe/gemm_ab.py --base FILE [--base FILE ...] [NAME=FILE ...] [--pair A:B ...]

Each FILE is one `time` run's output (lines: variant M K N ev_us graph_us TFLOP/s cublas_ev
cublas_gr ratio_e ratio_g; other lines are ignored). A cell is (variant, M, K, N).

Prints:
- the base runs' spread: per variant, each base run's geomean over the cells against the
  geometric mean of all base runs, and the largest cell's deviation (the noise a build's figure
  must clear);
- per build NAME: per variant, the geomean over the cells the build and every base run share of
  the build's time over the base runs' geometric mean, in events and in graphs, with the smallest
  and largest cell;
- per --pair A:B: variant A's time over variant B's in the base runs (their geometric means),
  cell by cell on the cells both ran, then the geomean.

Exit status 0; 2 on bad usage or a file it cannot read or that holds no cells.
"""
import math
import sys


def fail(msg):
    print(f"gemm_ab.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(path):
    cells = {}
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 11 or p[0] == "variant":
                    continue
                try:
                    key = (p[0], int(p[1]), int(p[2]), int(p[3]))
                    cells[key] = (float(p[4]), float(p[5]))
                except ValueError:
                    continue
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if not cells:
        fail(f"{path}: no `time` lines (variant M K N ev_us graph_us ...)")
    return cells


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main(argv):
    bases, builds, pairs = [], [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--base", "--pair"):
            if i + 1 >= len(argv):
                fail(f"{a} needs a value")
            v = argv[i + 1]
            if a == "--base":
                bases.append(parse(v))
            else:
                if v.count(":") != 1 or not all(v.split(":")):
                    fail(f"--pair {v}: A:B, two variant names")
                pairs.append(tuple(v.split(":")))
            i += 2
            continue
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if "=" not in a or a.startswith("-"):
            fail(f"{a}: NAME=FILE, --base FILE or --pair A:B")
        name, path = a.split("=", 1)
        builds.append((name, parse(path)))
        i += 1
    if not bases:
        fail("no --base run")
    shared = set(bases[0])
    for b in bases[1:]:
        shared &= set(b)
    if not shared:
        fail("the base runs share no cell")
    variants = sorted({k[0] for k in shared})
    # Each shared cell's base time: the geometric mean of the base runs (events, graphs).
    mean = {k: (gm([b[k][0] for b in bases]), gm([b[k][1] for b in bases])) for k in shared}

    print(f"base: {len(bases)} run(s), {len(shared)} cells")
    for v in variants:
        keys = sorted(k for k in shared if k[0] == v)
        runs, worst = [], 0.0
        for b in bases:
            runs.append(gm([b[k][0] / mean[k][0] for k in keys]))
            worst = max(worst, max(abs(b[k][0] / mean[k][0] - 1) for k in keys))
        print(f"  {v}: runs / their mean {' '.join(f'{r:.3f}' for r in runs)}; largest cell {100 * worst:.1f} %")
    for name, cells in builds:
        print(f"{name} / base (events, graphs; cells min-max):")
        for v in variants:
            keys = sorted(k for k in shared if k[0] == v and k in cells)
            if not keys:
                continue
            ev = [cells[k][0] / mean[k][0] for k in keys]
            gr = [cells[k][1] / mean[k][1] for k in keys]
            print(f"  {v}: {gm(ev):.3f} (graphs {gm(gr):.3f}; {min(ev):.3f}-{max(ev):.3f}, {len(keys)} cells)")
    for a, b in pairs:
        keys = sorted(k for k in shared if k[0] == a and (b,) + k[1:] in shared)
        if not keys:
            fail(f"--pair {a}:{b}: no cell both ran in every base run")
        print(f"{a} / {b} (base runs' means, events):")
        ratios = []
        for k in keys:
            ta, tb = mean[k][0], mean[(b,) + k[1:]][0]
            ratios.append(ta / tb)
            print(f"  M {k[1]} K {k[2]} N {k[3]}: {ta:.1f} / {tb:.1f} us = {ta / tb:.3f}")
        print(f"  geomean {gm(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
