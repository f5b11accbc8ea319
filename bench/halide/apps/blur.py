"""The 3x3 box blur of u16 images, separated: `blur_x` averages three
horizontal neighbours of the input, `blur_y` three vertical neighbours of
`blur_x` (integer division by 3, rounding down). No boundary condition: the
input covers the output plus one pixel on each side.

Expert schedule: strips of 32 rows in parallel, `blur_x` line-buffered per
strip, both vectorized.

Mirrors apps/src/blur.rs (algorithm: compiler/src/demo.rs, blur_pipeline).
"""

from common import line_buffered


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    inp = params["input"]
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    blur_x[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) / 3
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3
    return {"blur_x": blur_x, "blur_y": blur_y}


def expert(hl, funcs, lanes, app):
    line_buffered(hl, funcs, "blur_y", ["blur_x"], 32, lanes(hl.UInt(16)))
