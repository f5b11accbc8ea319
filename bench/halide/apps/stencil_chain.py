"""A chain of 5x5 box stencils over an f32 image (32 stages at the paper's
size, 6 at the small one): `s0` reads the input, `s{k}` reads `s{k-1}`;
each stage sums its window row by row (dy outer, dx inner), left to right,
and scales by 1/25 (an f32 constant). No boundary condition: the input
covers the output plus two pixels per stage on each side, so the number of
stages is read off the input's region.

Expert schedule: the stages in groups of 8 (counted back from the
output; the first group may be shorter); the last stage of each group
computed at root in parallel strips of rows (128 rows at the paper's size,
16 at the small one), the others line-buffered per strip, all vectorized.

Mirrors apps/src/stencil_chain.rs.
"""

import numpy as np

from common import fold, input_region, line_buffered

RADIUS = 2


def stages(app):
    margin = -input_region(app, "input")[0][0]
    return max(1, margin // RADIUS)


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    side = 2 * RADIUS + 1
    scale = float(np.float32(1.0) / np.float32(side * side))  # computed in f32, as ours
    funcs = {}
    prev = params["input"]
    for k in range(stages(app)):
        f = hl.Func(f"s{k}")
        window = [(dx, dy) for dy in range(-RADIUS, RADIUS + 1) for dx in range(-RADIUS, RADIUS + 1)]
        f[x, y] = fold(prev[x + dx, y + dy] for dx, dy in window) * hl.f32(scale)
        funcs[f"s{k}"] = f
        prev = f
    return funcs


GROUP = 8


def expert(hl, funcs, lanes, app):
    names = [f"s{k}" for k in range(stages(app))]
    strip = 128 if app.get("size") == "paper" else 16
    # Groups end at the output and every GROUP stages before it.
    end = len(names)
    while end > 0:
        group = names[max(0, end - GROUP):end]
        last, producers = group[-1], group[:-1]
        funcs[last].compute_root()
        line_buffered(hl, funcs, last, producers, strip, lanes(hl.Float(32)))
        end -= GROUP
