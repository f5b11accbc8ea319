"""Bicubic resampling of an f32 RGB image (x, y, c) by the non-integer
factor 0.7, as Halide's `apps/resize` computes it with its cubic kernel
(Keys' kernel, a = -0.5): each output pixel's centre is mapped to a float
source coordinate, `(x + 0.5) / 0.7`; the taps covering the kernel's
support (widened by 1 / 0.7 when downscaling, so that it also filters)
start at the first source pixel inside it; each tap's weight is the kernel
at the tap's distance (scaled by 0.7), normalized by the sum of the
weights; the image is resampled along x, then along y, separably, reading
the source under a repeat-edge boundary, and the result clamped to [0, 1].

Mirrors apps/src/suite/resize_bicubic.rs.
"""

import math

from common import repeat_edge

SCALE = 0.7


def cubic(hl, t):
    a = -0.5
    xx = hl.abs(t)
    xx2 = xx * xx
    xx3 = xx2 * xx
    near = xx3 * hl.f32(a + 2.0) - xx2 * hl.f32(a + 3.0) + hl.f32(1.0)
    far = xx3 * hl.f32(a) - xx2 * hl.f32(5.0 * a) + xx * hl.f32(8.0 * a) - hl.f32(4.0 * a)
    return hl.select(xx < hl.f32(1.0), near, hl.select(xx < hl.f32(2.0), far, hl.f32(0.0)))


def algorithm(hl, params, app):
    x, y, c, k = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("k")
    f32, i32 = hl.Float(32), hl.Int(32)
    clamped = repeat_edge(hl, params["input"])
    funcs = {"input_repeat_edge": clamped}

    scaling = min(SCALE, 1.0)
    radius = 2.0 / scaling
    taps = math.floor(2.0 * radius) + 1
    inv_scale = hl.f32(1.0 / SCALE)
    first = hl.f32(0.5 + radius)

    def source(v):
        return (hl.cast(f32, v) + hl.f32(0.5)) * inv_scale

    def axis(suffix, v):
        begin = hl.cast(i32, hl.ceil(source(v) - first))
        weight = hl.Func(f"weight_{suffix}")
        distance = hl.cast(f32, begin + k) + hl.f32(0.5) - source(v)
        weight[v, k] = cubic(hl, distance * hl.f32(scaling))
        weight_sum = hl.Func(f"weight_sum_{suffix}")
        weight_sum[v] = hl.f32(0.0)
        r = hl.RDom([hl.Range(0, taps)], f"r{suffix}")
        weight_sum[v] = weight_sum[v] + weight[v, r.x]
        kernel = hl.Func(f"kernel_{suffix}")
        kernel[v, k] = weight[v, k] / weight_sum[v]
        funcs.update({f"weight_{suffix}": weight, f"weight_sum_{suffix}": weight_sum,
                      f"kernel_{suffix}": kernel})
        return begin, kernel

    begin_x, kernel_x = axis("x", x)
    begin_y, kernel_y = axis("y", y)

    resized_x = hl.Func("resized_x")
    resized_x[x, y, c] = hl.f32(0.0)
    tx = hl.RDom([hl.Range(0, taps)], "tx").x
    resized_x[x, y, c] = resized_x[x, y, c] + kernel_x[x, tx] * clamped[begin_x + tx, y, c]
    resized_y = hl.Func("resized_y")
    resized_y[x, y, c] = hl.f32(0.0)
    ty = hl.RDom([hl.Range(0, taps)], "ty").x
    resized_y[x, y, c] = resized_y[x, y, c] + kernel_y[y, ty] * resized_x[x, begin_y + ty, c]
    output = hl.Func("output")
    output[x, y, c] = hl.clamp(resized_y[x, y, c], hl.f32(0.0), hl.f32(1.0))
    funcs.update({"resized_x": resized_x, "resized_y": resized_y, "output": output})
    return funcs
