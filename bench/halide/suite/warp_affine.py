"""Affine warp of an f32 grayscale image with bilinear interpolation, as
OpenCV's `warpAffine` computes it (`INTER_LINEAR`, `BORDER_REPLICATE`) for
the matrix `getRotationMatrix2D` gives: a rotation by 30 degrees about the
image centre with a scale of 1.25. Each output pixel is mapped back
through the inverse transform to a float source coordinate (computed in
f32 from the output coordinates); the four source pixels around it,
clamped to the image (a replicated border), are blended by the fractional
parts, along x and then along y. The image size (read off the output's
region) places the centre.

Mirrors apps/src/suite/warp_affine.rs.
"""

import numpy as np

from common import lerp, repeat_edge

INVERSE_COS = 0.8660254037844386 / 1.25
INVERSE_SIN = 0.5 / 1.25


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y = hl.Var("x"), hl.Var("y")
    f32, i32 = hl.Float(32), hl.Int(32)
    clamped = repeat_edge(hl, params["input"])
    a, b = hl.f32(INVERSE_COS), hl.f32(INVERSE_SIN)
    cx = hl.f32(float(np.float32(w - 1.0) * np.float32(0.5)))
    cy = hl.f32(float(np.float32(h - 1.0) * np.float32(0.5)))

    def dx():
        return hl.cast(f32, x) - cx

    def dy():
        return hl.cast(f32, y) - cy

    src_x = hl.Func("src_x")
    src_x[x, y] = dx() * a + dy() * b + cx
    src_y = hl.Func("src_y")
    src_y[x, y] = dy() * a - dx() * b + cy
    ix = hl.Func("ix")
    ix[x, y] = hl.clamp(hl.cast(i32, hl.floor(src_x[x, y])), -1, w - 1)
    iy = hl.Func("iy")
    iy[x, y] = hl.clamp(hl.cast(i32, hl.floor(src_y[x, y])), -1, h - 1)
    fx = src_x[x, y] - hl.floor(src_x[x, y])
    fy = src_y[x, y] - hl.floor(src_y[x, y])

    def at(ddx, ddy):
        return clamped[ix[x, y] + ddx, iy[x, y] + ddy]

    top = lerp(at(0, 0), at(1, 0), fx)
    bottom = lerp(at(0, 1), at(1, 1), fx)
    output = hl.Func("output")
    output[x, y] = lerp(top, bottom, fy)
    return {"input_repeat_edge": clamped, "src_x": src_x, "src_y": src_y, "ix": ix, "iy": iy, "output": output}
