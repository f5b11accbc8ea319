"""Matrix multiply of f32 n x n matrices (1024 at the paper's size):
`C(x, y) = sum_r A(r, y) * B(x, r)`, a pure zero and an update over the
reduction domain `r` = [0, n), summed in order of `r`; n is read off the
output's region.

Expert schedule: the update in register tiles of one vector by 8 rows
(tails rounded up), the reduction inside the tile's columns and rows, rows
of tiles in parallel; the pure zero vectorized.

Mirrors apps/src/matmul.rs.
"""


def algorithm(hl, params, app):
    n = app["output"]["region"][0][1]
    x, y = hl.Var("x"), hl.Var("y")
    a, b = params["A"], params["B"]
    r = hl.RDom([hl.Range(0, n)], "r")
    c = hl.Func("C")
    c[x, y] = hl.f32(0.0)
    c[x, y] = c[x, y] + a[r.x, y] * b[x, r.x]
    return {"C": c, "_r": r}


def expert(hl, funcs, lanes, app):
    x, y = hl.Var("x"), hl.Var("y")
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    r = funcs["_r"]
    c = funcs["C"]
    l32 = lanes(hl.Float(32))
    c.vectorize(x, l32)
    round_up = hl.TailStrategy.RoundUp
    (c.update(0)
        .split(x, xo, xi, l32, round_up)
        .split(y, yo, yi, 8, round_up)
        .reorder(xi, yi, r.x, xo, yo)
        .vectorize(xi)
        .unroll(yi)
        .parallel(yo))
