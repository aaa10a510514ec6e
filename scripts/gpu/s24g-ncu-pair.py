#!/usr/bin/env python3
"""Two kernels' ncu details pages side by side (s24g-ncu.sh: ours and cuSPARSELt's on one problem).

    python3 scripts/gpu/s24g-ncu-pair.py OURS.details.txt THEIRS.details.txt

For each: elapsed cycles, SM active cycles, the busy share of the tensor pipe and of the L1 data
pipe (its LSU wavefronts: in these kernels nearly all shared memory's) over the elapsed cycles
(ncu's percentages) and over the SM active cycles, the work each did (busy share x elapsed
cycles, in cycles a unit), and the three commonest stall reasons of the warp samples. Where two
kernels do the same work in different times, the busy share of the active cycles says how much
of the difference is idle time (docs/gemm-engine.md "v58").
Exit status 1 when a page lacks one of the figures (ncu failed, or another section set).
"""
import re
import sys

FIGURES = {
    'elapsed': r'^\s+Elapsed Cycles\s+cycle\s+([\d,.]+)',
    'active': r'^\s+SM Active Cycles\s+cycle\s+([\d,.]+)',
    'tensor': r'^\s+SM: Pipe Tensor Cycles Active\s+%\s+([\d,.]+)',
    'l1': r'^\s+L1: Data Pipe Lsu Wavefronts\s+%\s+([\d,.]+)',
}
STALL = re.compile(r'^\s+smsp__pcsamp_warps_issue_stalled_([a-z_]+)\s+\S+\s+([\d,]+)\s*$')


def number(text):
    return float(text.replace(',', ''))


def read(path):
    """The figures of one details page: a dict, or the name of the first one missing."""
    text = open(path, encoding='utf-8', errors='replace').read()
    out = {}
    for key, pattern in FIGURES.items():
        m = re.search(pattern, text, re.M)
        if not m:
            return key
        out[key] = number(m.group(1))
    stalls = {}
    for line in text.splitlines():
        m = STALL.match(line)
        if m and not m.group(1).endswith('not_issued'):
            stalls.setdefault(m.group(1), number(m.group(2)))  # (the first table: all samples)
    total = sum(stalls.values()) or 1
    out['stalls'] = sorted(((v / total, k) for k, v in stalls.items()), reverse=True)[:3]
    return out


def row(name, f):
    el, act = f['elapsed'], f['active']
    cells = [name, '%.0f' % el, '%.0f' % act]
    for pipe in ('tensor', 'l1'):
        pct = f[pipe] / 100
        cells += ['%.1f %%' % f[pipe], '%.1f %%' % (100 * pct * el / act), '%.0f' % (pct * el)]
    cells.append(', '.join('%s %.0f %%' % (k, 100 * v) for v, k in f['stalls']))
    return '| ' + ' | '.join(cells) + ' |'


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    figures = []
    for path in argv[1:]:
        f = read(path)
        if isinstance(f, str):
            print(f'{path}: no {f} figure (not a `--set full` details page?)', file=sys.stderr)
            return 1
        figures.append(f)
    print('| kernel | elapsed cycles | SM active cycles | tensor pipe | of active | tensor work | '
          'L1 data pipe | of active | L1 work | stalls |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for name, f in zip(('ours', 'theirs'), figures):
        print(row(name, f))
    ours, theirs = figures
    print('ours / theirs: elapsed %.3f, SM active %.3f, tensor work %.3f, L1 work %.3f' % (
        ours['elapsed'] / theirs['elapsed'], ours['active'] / theirs['active'],
        ours['tensor'] * ours['elapsed'] / (theirs['tensor'] * theirs['elapsed']),
        ours['l1'] * ours['elapsed'] / (theirs['l1'] * theirs['elapsed'])))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
