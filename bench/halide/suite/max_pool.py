"""Max pooling as ResNet's stem applies it after its first convolution (He
et al. 2016, table 1: 3x3 max pool, stride 2; padding 1): over an f32
activation tensor with channels innermost, input(c, x, y, n), padded with
-inf (so the padding never wins),
pool(c, x, y, n) = max over r in 3x3 of input(c, 2x + r.x - 1, 2y + r.y - 1, n).

Mirrors apps/src/suite/max_pool.rs.
"""

import math


def algorithm(hl, params, app):
    c, x, y, b = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    padded = hl.BoundaryConditions.constant_exterior(params["input"], hl.f32(-math.inf))
    r = hl.RDom([hl.Range(0, 3), hl.Range(0, 3)], "r")
    pool = hl.Func("pool")
    pool[c, x, y, b] = hl.f32(-math.inf)
    pool[c, x, y, b] = hl.max(pool[c, x, y, b], padded[c, x * 2 + r.x - 1, y * 2 + r.y - 1, b])
    return {"input_constant_exterior": padded, "pool": pool, "_r": r}
