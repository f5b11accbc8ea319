"""A first-order recursive (IIR) blur of an f32 RGB image (x, y, c), four
scans in all: down the columns and back up (`blur_cols`), transposed
(`blur_cols_t`), then down and up the columns of the transpose
(`blur_rows`, the original rows), transposed back (`blur_rows_t`), copied
to `output`. Each column blur copies its input, then
`b(x, y) = b(x, y-1) * (1 - a) + in(x, y) * a` for y = 1 .. height-1, and
`b(x, y) = b(x, y+1) * (1 - a) + b(x, y) * a` for y = height-2 .. 0, with
a = 0.1 (f32; 1 - a computed in f32). The scans run over the image's
height (then width), read off the output's region.

Expert schedule: each column blur computed at root, its columns in
parallel vector strips, each scan stepping down (or up) all the columns of
a strip at once; the transposes inlined; the output in parallel strips of
8 rows, vectorized.

Mirrors apps/src/iir_blur.rs.
"""

import numpy as np

from common import update_tail

ALPHA = np.float32(0.1)


def blur_columns_transposed(hl, name, inp, height):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    a = hl.f32(float(ALPHA))
    one_minus_a = hl.f32(float(np.float32(1.0) - ALPHA))
    blur = hl.Func(name)
    blur[x, y, c] = inp(x, y, c)
    down = hl.RDom([hl.Range(1, height - 1)], f"{name}_down")
    ry = down.x
    blur[x, ry, c] = blur[x, ry - 1, c] * one_minus_a + inp(x, ry, c) * a
    up = hl.RDom([hl.Range(1, height - 1)], f"{name}_up")
    flipped = (height - 1) - up.x
    blur[x, flipped, c] = blur[x, flipped + 1, c] * one_minus_a + blur[x, flipped, c] * a
    transposed = hl.Func(f"{name}_t")
    transposed[x, y, c] = blur[y, x, c]
    return blur, transposed, down, up


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    inp = params["input"]
    cols, cols_t, cols_down, cols_up = blur_columns_transposed(hl, "blur_cols", lambda x, y, c: inp[x, y, c], h)
    rows, rows_t, rows_down, rows_up = blur_columns_transposed(hl, "blur_rows", lambda x, y, c: cols_t[x, y, c], w)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    output = hl.Func("output")
    output[x, y, c] = rows_t[x, y, c]
    return {"blur_cols": cols, "blur_cols_t": cols_t, "blur_rows": rows, "blur_rows_t": rows_t, "output": output,
            "_scans": {"blur_cols": (cols_down, cols_up), "blur_rows": (rows_down, rows_up)}}


def expert(hl, funcs, lanes, app):
    x, y, c, xo, xi, yo, yi = (hl.Var(n) for n in ("x", "y", "c", "xo", "xi", "yo", "yi"))
    l32 = lanes(hl.Float(32))
    for name in ["blur_cols", "blur_rows"]:
        f = funcs[name]
        f.compute_root().split(x, xo, xi, l32).reorder(xi, y, xo, c).vectorize(xi).parallel(xo)
        for update, scan in enumerate(funcs["_scans"][name]):
            (f.update(update).split(x, xo, xi, l32, update_tail(hl))
                .reorder(xi, scan.x, xo, c).vectorize(xi).parallel(xo))
    funcs["output"].split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)
