#!/usr/bin/env python3
"""Where a kernel's warps wait, by instruction: ncu's source page (SASS) of one profile.

    python3 scripts/gpu/sass-stalls.py KERNEL.sass.csv [MORE.sass.csv ...] [--top N]

Reads what `ncu --import R.ncu-rep --page source --print-source sass --csv` writes
(s24g-ncu.sh with NCU_SOURCE=1: ours and cuSPARSELt's on one problem) and prints, per file:
- the warp samples and the instructions executed;
- the samples by what the instruction does (v59):
    mbarrier wait: a SYNCS.PHASECHK (try_wait), a NANOSLEEP, or a branch on the predicate a
                   try_wait set (a warp waiting for a stage's bytes, or for a free slot);
    wgmma wait:    WARPGROUP.DEPBAR (waiting for the tensor cores' earlier groups);
    wgmma issue:   WARPGROUP.ARRIVE and the GMMA instructions themselves;
    other:         the rest (addresses, descriptors, loads of metadata, the epilogue);
- the N instructions (default 12) with the most samples, each with its two commonest stall reasons
  and its executions.
A consumer that waits at the mbarrier waits for data (the loads are late); one that waits at the
DEPBAR waits for the tensor cores (the loads are early enough): docs/gemm-engine.md "v59".
Exit status 1 when a file has no source table (ncu failed, or printed another page).
"""
import csv
import re
import sys

SAMPLES = 'Warp Stall Sampling (All Samples)'
EXECUTED = 'Instructions Executed'
CLASSES = ('mbarrier wait', 'wgmma wait', 'wgmma issue', 'other')
# A predicate an instruction writes: the first operand after the opcode (ISETP P0, ..., PHASECHK P0, ...).
WRITES_PRED = re.compile(r'^(?:@!?U?P\w+\s+)?[A-Z0-9_.]+\s+(U?P\d+),')
GUARD = re.compile(r'^@!?(U?P\d+)\s+(\S+)')


def number(text):
    text = text.replace(',', '').strip()
    return float(text) if text else 0.0


def read(path):
    """The source table's rows as dicts (SASS text, samples, executions, stall counts), or None."""
    rows = list(csv.reader(open(path, encoding='utf-8', errors='replace')))
    start = next((i for i, r in enumerate(rows) if r and r[0] == 'Address'), None)
    if start is None:
        return None
    head = rows[start]
    if 'Source' not in head or SAMPLES not in head:
        return None
    stalls = [k for k in head if k.startswith('stall_') and 'Not Issued' not in k]
    out = []
    for r in rows[start + 1:]:
        if len(r) != len(head):
            continue
        d = dict(zip(head, r))
        out.append(dict(sass=d['Source'].strip(), samples=number(d[SAMPLES]), executed=number(d.get(EXECUTED, '')),
                        stalls={k[len('stall_'):]: number(d[k]) for k in stalls}))
    return out


def classify(rows):
    """Each row's class (CLASSES), in order: a branch guarded by a predicate that a try_wait set
    (and nothing wrote since) is part of the wait."""
    from_wait = set()
    out = []
    for r in rows:
        sass = r['sass']
        guard = GUARD.match(sass)
        opcode = (guard.group(2) if guard else sass.split()[0] if sass else '')
        if 'SYNCS.PHASECHK' in opcode or opcode.startswith('NANOSLEEP'):
            kind = 'mbarrier wait'
        elif opcode.startswith('BRA') and guard and guard.group(1) in from_wait:
            kind = 'mbarrier wait'
        elif opcode.startswith('WARPGROUP.DEPBAR'):
            kind = 'wgmma wait'
        elif opcode.startswith('WARPGROUP.ARRIVE') or 'GMMA' in opcode:
            kind = 'wgmma issue'
        else:
            kind = 'other'
        w = WRITES_PRED.match(sass)
        if w:
            if 'SYNCS.PHASECHK' in opcode:
                from_wait.add(w.group(1))
            else:
                from_wait.discard(w.group(1))
        out.append(kind)
    return out


def report(path, top):
    rows = read(path)
    if rows is None:
        print('%s: no source table' % path)
        return False
    kinds = classify(rows)
    total = sum(r['samples'] for r in rows) or 1.0
    by = {k: 0.0 for k in CLASSES}
    for r, k in zip(rows, kinds):
        by[k] += r['samples']
    gmma = sum(r['executed'] for r in rows if 'GMMA' in r['sass'])
    executed = sum(r['executed'] for r in rows)
    print('%s: %d samples, %d instructions executed (%s a GMMA)' % (
        path, total, executed, '%.1f' % (executed / gmma) if gmma else 'no GMMA'))
    print('  ' + ', '.join('%s %.1f %%' % (k, 100 * by[k] / total) for k in CLASSES))
    order = sorted(range(len(rows)), key=lambda i: -rows[i]['samples'])[:top]
    for i in order:
        r = rows[i]
        if r['samples'] <= 0:
            break
        reasons = sorted(((v, k) for k, v in r['stalls'].items() if v > 0), reverse=True)[:2]
        print('  %5.1f %%  %-13s %-58s x%-8d %s' % (100 * r['samples'] / total, kinds[i], r['sass'][:58], r['executed'],
                                                 ', '.join('%s %d' % (k, v) for v, k in reasons)))
    return True


def main(argv):
    top = 12
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == '--top' and i + 1 < len(argv):
            top = int(argv[i + 1])
            i += 2
            continue
        paths.append(argv[i])
        i += 1
    if not paths:
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    ok = True
    for p in paths:
        ok = report(p, top) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
