"""Writes device-check weights as f16 .npy files (issue 23's 2:4 streaming engine, issue 25's GEMM engine).

    python3 scripts/gpu/stream24-weights.py DIR SEED SHAPE...

SHAPE is wMxK (dense normal weights, for the bench, which prunes them 2:4 itself) or pMxK
(weights pruned 2:4 here: the two smallest magnitudes of every four along K set to zero, for
`sparse verify`, which takes them as they are). The file is DIR/<SHAPE>.npy. One generator
seeded with SEED draws the shapes in the order given, so a script that keeps its seed and its
order writes the same matrices every run. Used by stream24-heldout.sh, stream24-streamk.sh and ungemm-heldout.sh.
"""
import sys

import numpy as np


def prune24(a):
    m, k = a.shape
    g = a.reshape(m, k // 4, 4).copy()
    np.put_along_axis(g, np.argsort(np.abs(g), axis=2)[:, :, :2], 0, axis=2)
    return g.reshape(m, k)


def main(argv):
    if len(argv) < 3:
        sys.exit('usage: stream24-weights.py DIR SEED wMxK|pMxK...')
    out, seed = argv[0], int(argv[1])
    rng = np.random.default_rng(seed)
    for shape in argv[2:]:
        kind, dims = shape[0], shape[1:]
        m, k = (int(x) for x in dims.split('x'))
        if kind not in 'wp' or k % 4:
            sys.exit(f'stream24-weights.py: bad shape {shape} (wMxK or pMxK, K a multiple of 4)')
        a = rng.standard_normal((m, k), dtype=np.float32)
        np.save(f'{out}/{shape}.npy', (prune24(a) if kind == 'p' else a).astype(np.float16))


if __name__ == '__main__':
    main(sys.argv[1:])
