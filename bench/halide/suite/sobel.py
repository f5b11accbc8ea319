"""Sobel edge magnitude of an 8-bit grayscale image (OpenCV's `Sobel` then
`magnitude`): repeat-edge boundary, 3x3 Sobel derivatives as separable i16
filters, output sqrt(gx^2 + gy^2) saturated to u8.

Mirrors apps/src/suite/sobel.rs.
"""

from common import repeat_edge


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    clamped = repeat_edge(hl, params["input"])
    wide = hl.Func("wide")
    wide[x, y] = hl.cast(hl.Int(16), clamped[x, y])
    smooth_y = hl.Func("smooth_y")
    smooth_y[x, y] = wide[x, y - 1] + wide[x, y] * 2 + wide[x, y + 1]
    gx = hl.Func("gx")
    gx[x, y] = smooth_y[x + 1, y] - smooth_y[x - 1, y]
    smooth_x = hl.Func("smooth_x")
    smooth_x[x, y] = wide[x - 1, y] + wide[x, y] * 2 + wide[x + 1, y]
    gy = hl.Func("gy")
    gy[x, y] = smooth_x[x, y + 1] - smooth_x[x, y - 1]

    def square(g):
        v = hl.cast(hl.Float(32), g[x, y])
        return v * v

    magnitude = hl.Func("magnitude")
    magnitude[x, y] = hl.sqrt(square(gx) + square(gy))
    output = hl.Func("output")
    output[x, y] = hl.cast(hl.UInt(8), hl.min(magnitude[x, y], hl.f32(255.0)))
    return {"input_repeat_edge": clamped, "wide": wide, "smooth_y": smooth_y, "gx": gx, "smooth_x": smooth_x,
            "gy": gy, "magnitude": magnitude, "output": output}
