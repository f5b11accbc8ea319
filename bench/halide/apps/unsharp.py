"""Unsharp masking of an f32 RGB image (x, y, c): the luminance `gray` of
the input under a repeat-edge boundary, a separable 7-tap Gaussian of it
(`blur_y` along y, then `blur_x` along x; sigma 1.5, weights
exp(-i^2 / (2 sigma^2)) / (sqrt(2 pi) sigma) computed in f64 and rounded to
f32, symmetric taps added in pairs), `sharpen = 2 gray - blur_x`,
`ratio = sharpen / gray`, and the output scales each channel of the input
by `ratio`.

Expert schedule: strips of 32 rows in parallel, rows outside channels;
`gray` line-buffered per strip, `blur_y` and `ratio` (with `blur_x` and
`sharpen` inlined) computed per row, all vectorized.

Mirrors apps/src/unsharp.rs.
"""

import math

import numpy as np

from common import repeat_edge


def weights():
    sigma = 1.5
    return [float(np.float32(math.exp(-(i * i) / (2.0 * sigma * sigma)) / (math.sqrt(2.0 * math.pi) * sigma)))
            for i in range(4)]


def symmetric_taps(hl, f):
    """k0 f(0) + k1 (f(-1) + f(1)) + k2 (f(-2) + f(2)) + k3 (f(-3) + f(3))."""
    k = weights()
    acc = f(0) * hl.f32(k[0])
    for i in range(1, 4):
        acc = acc + (f(-i) + f(i)) * hl.f32(k[i])
    return acc


def algorithm(hl, params, app):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    clamped = repeat_edge(hl, inp)
    gray = hl.Func("gray")
    gray[x, y] = (clamped[x, y, 0] * hl.f32(0.299) + clamped[x, y, 1] * hl.f32(0.587)
                  + clamped[x, y, 2] * hl.f32(0.114))
    blur_y = hl.Func("blur_y")
    blur_y[x, y] = symmetric_taps(hl, lambda i: gray[x, y + i])
    blur_x = hl.Func("blur_x")
    blur_x[x, y] = symmetric_taps(hl, lambda i: blur_y[x + i, y])
    sharpen = hl.Func("sharpen")
    sharpen[x, y] = gray[x, y] * hl.f32(2.0) - blur_x[x, y]
    ratio = hl.Func("ratio")
    ratio[x, y] = sharpen[x, y] / gray[x, y]
    output = hl.Func("output")
    output[x, y, c] = ratio[x, y] * inp[x, y, c]
    return {"input_repeat_edge": clamped, "gray": gray, "blur_y": blur_y, "blur_x": blur_x,
            "sharpen": sharpen, "ratio": ratio, "output": output}


def expert(hl, funcs, lanes, app):
    x, y, c, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("yo"), hl.Var("yi")
    l32 = lanes(hl.Float(32))
    out = funcs["output"]
    out.reorder(x, c, y).split(y, yo, yi, 32).parallel(yo).vectorize(x, l32)
    funcs["gray"].store_at(out, yo).compute_at(out, yi).vectorize(x, l32)
    for f in ["blur_y", "ratio"]:
        funcs[f].compute_at(out, yi).vectorize(x, l32)
