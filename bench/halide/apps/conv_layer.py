"""A convolution layer with ReLU, as in a CNN: `conv(c, x, y, n) = bias(c)
+ sum_r filter(c, r.y, r.z, r.x) * input(r.x, x + r.y, y + r.z, n)` over
3x3 windows and every input channel (r.x innermost, r = [0, ci) x [0, 3) x
[0, 3), the number of input channels ci read off the input's region), then
`relu = max(conv, 0)`. Channels are innermost in memory.

Expert schedule: the output in register tiles of two vectors of channels
by 4 columns, rows in parallel; `conv` computed per tile, its reduction
inside the tile so the 8 accumulators stay in registers.

Mirrors apps/src/conv_layer.rs.
"""

from common import input_region, update_tail


def algorithm(hl, params, app):
    ci = input_region(app, "input")[0][1]
    c, x, y, b = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    inp, filt, bias = params["input"], params["filter"], params["bias"]
    r = hl.RDom([hl.Range(0, ci), hl.Range(0, 3), hl.Range(0, 3)], "r")
    rc, rx, ry = r.x, r.y, r.z
    conv = hl.Func("conv")
    conv[c, x, y, b] = bias[c]
    conv[c, x, y, b] = conv[c, x, y, b] + filt[c, rx, ry, rc] * inp[rc, x + rx, y + ry, b]
    relu = hl.Func("relu")
    relu[c, x, y, b] = hl.max(conv[c, x, y, b], hl.f32(0.0))
    return {"conv": conv, "relu": relu, "_r": r}


def expert(hl, funcs, lanes, app):
    c, x, y, b = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    co, ci, xo, xi = hl.Var("co"), hl.Var("ci"), hl.Var("xo"), hl.Var("xi")
    r = funcs["_r"]
    l32 = lanes(hl.Float(32))
    relu, conv = funcs["relu"], funcs["conv"]
    (relu.split(c, co, ci, 2 * l32)
        .split(x, xo, xi, 4)
        .reorder(ci, xi, xo, y, b, co)
        .vectorize(ci, l32)
        .unroll(ci)
        .unroll(xi)
        .parallel(y))
    # Per tile, conv covers 2 vectors of channels by 4 columns: split so
    # that the unrolled loops have those constant extents.
    conv.compute_at(relu, xo)
    conv.split(c, co, ci, 2 * l32).split(x, xo, xi, 4).vectorize(ci, l32).unroll(ci).unroll(xi)
    tail = update_tail(hl)
    (conv.update(0)
        .split(c, co, ci, 2 * l32, tail)
        .split(x, xo, xi, 4, tail)
        .reorder(ci, xi, r.x, r.y, r.z, co, xo, y, b)
        .vectorize(ci, l32, tail)
        .unroll(ci)
        .unroll(xi))
