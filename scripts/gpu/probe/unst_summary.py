#!/usr/bin/env python3
"""Summarises the unstructured workbench's `time` output (unst_probe time; run.sh's unst task).

  python3 scripts/gpu/probe/unst_summary.py LOG... [--rule KIND:N,N;KIND:N] [--base KIND]

Prints, per kind, the geomean of "x cuBLAS" (events, and graph) by sparsity over every case
the kind ran, then the same for each rule (a kind per N; the cases where every kind of the rule
ran), and with --base the geomean of each kind's time over the base kind's on the cases both
ran. A case is (type, shape, sparsity, N); the kind is the variant name's first field.
"""
import collections
import math
import sys


def parse(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 18 or parts[4] != "|" or "_" not in parts[0]:
                    continue
                name = parts[0]
                kind, dtype = name.split("_")[0], name.split("_")[1]
                try:
                    rows.append(dict(kind=kind, dtype=dtype, shape=parts[1], sp=float(parts[2]), n=int(parts[3]),
                                     cub_ev=float(parts[5]), cub_gr=float(parts[6]), ev=float(parts[8]),
                                     gr=float(parts[9]), floor=float(parts[17])))
                except (ValueError, IndexError):
                    continue
    return rows


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    paths, rules, base = [], [], None
    i = 0
    while i < len(argv):
        if argv[i] == "--rule":
            rules.append(argv[i + 1])
            i += 2
        elif argv[i] == "--base":
            base = argv[i + 1]
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    rows = parse(paths)
    if not rows:
        print("no timing rows")
        return 1
    sps = sorted({r["sp"] for r in rows})
    case = lambda r: (r["dtype"], r["shape"], r["sp"], r["n"])
    by = collections.defaultdict(dict)
    for r in rows:
        by[case(r)][r["kind"]] = r
    kinds = sorted({r["kind"] for r in rows})
    head = " ".join(f"{s:>11.2f}" for s in sps)
    print(f"{'kind (x cuBLAS ev / graph)':<28} {head}   cases")
    for kd in kinds:
        cells = []
        for s in sps:
            rs = [r for r in rows if r["kind"] == kd and r["sp"] == s]
            cells.append(f"{geomean([r['cub_ev'] / r['ev'] for r in rs]):5.3f}/{geomean([r['cub_gr'] / r['gr'] for r in rs]):5.3f}")
        print(f"{kd:<28} {' '.join(cells)}   {sum(1 for r in rows if r['kind'] == kd)}")
    for rule in rules:
        pick = {}
        for part in rule.split(";"):
            kd, ns = part.split(":")
            for n in ns.split(","):
                pick[int(n)] = kd
        cells, per_n = [], collections.defaultdict(list)
        for s in sps:
            ev, gr = [], []
            for c, ks in by.items():
                if c[2] != s or c[3] not in pick or pick[c[3]] not in ks:
                    continue
                r = ks[pick[c[3]]]
                ev.append(r["cub_ev"] / r["ev"])
                gr.append(r["cub_gr"] / r["gr"])
                per_n[c[3]].append(r["cub_ev"] / r["ev"])
            cells.append(f"{geomean(ev):5.3f}/{geomean(gr):5.3f}")
        print(f"rule {rule:<23} {' '.join(cells)}   by N: " +
              " ".join(f"{n}:{geomean(v):.3f}" for n, v in sorted(per_n.items())))
    if base:
        print(f"time / {base}'s (geomean over the cases both ran; by N)")
        for kd in kinds:
            if kd == base:
                continue
            ratios, per_n = [], collections.defaultdict(list)
            for c, ks in by.items():
                if kd in ks and base in ks:
                    x = ks[kd]["ev"] / ks[base]["ev"]
                    ratios.append(x)
                    per_n[c[3]].append(x)
            if ratios:
                print(f"  {kd:<10} {geomean(ratios):.3f} ({len(ratios)} cases; " +
                      " ".join(f"{n}:{geomean(v):.3f}" for n, v in sorted(per_n.items())) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
