"""Halide's apps/linear_blur: a box blur of an f32 sRGB image (x, y, c; four
channels) in linear light: sRGB to linear (`linear`: v / 12.92 up to
0.04045, else ((v + 0.055) / 1.055)^2.4), a 3x3 box blur looking right and
down (`blur_x` then `blurred`, three taps each divided by 3) of the linear
image under a repeat-edge boundary over the image's width and height
(`linear_repeat_edge`), back to sRGB (`srgb`: 12.92 v up to 0.0031308, else
1.055 v^(1/2.4) - 0.055), copied to `output`.

Halide's pow is its own, so outputs compare "close".

Mirrors apps/src/suite/linear_blur.rs.
"""

import numpy as np


def algorithm(hl, params, app):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    f = np.float32
    v = inp[x, y, c]
    linear = hl.Func("linear")
    linear[x, y, c] = hl.select(v <= hl.f32(0.04045), v / hl.f32(12.92),
                                hl.pow((v + hl.f32(0.055)) / hl.f32(float(f(1.0) + f(0.055))), hl.f32(2.4)))
    v0, v1, v2 = hl.Var("_0"), hl.Var("_1"), hl.Var("_2")
    clamped = hl.Func("linear_repeat_edge")
    clamped[v0, v1, v2] = linear[hl.clamp(v0, 0, inp.width() - 1), hl.clamp(v1, 0, inp.height() - 1), v2]
    blur_x = hl.Func("blur_x")
    blur_x[x, y, c] = (clamped[x, y, c] + clamped[x + 1, y, c] + clamped[x + 2, y, c]) / hl.f32(3.0)
    blurred = hl.Func("blurred")
    blurred[x, y, c] = (blur_x[x, y, c] + blur_x[x, y + 1, c] + blur_x[x, y + 2, c]) / hl.f32(3.0)
    lin = blurred[x, y, c]
    srgb = hl.Func("srgb")
    srgb[x, y, c] = hl.select(lin <= hl.f32(0.0031308), lin * hl.f32(12.92),
                              hl.f32(float(f(1.0) + f(0.055))) * hl.pow(lin, hl.f32(float(f(1.0) / f(2.4)))) - hl.f32(0.055))
    output = hl.Func("output")
    output[x, y, c] = srgb[x, y, c]
    return {"linear": linear, "linear_repeat_edge": clamped, "blur_x": blur_x, "blurred": blurred, "srgb": srgb,
            "output": output}
