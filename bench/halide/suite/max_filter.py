"""Halide's apps/max_filter: a circular-support max filter of radius 26 of an
f32 RGB image (x, y, c) under a repeat-edge boundary, O(radius) per pixel:
`vert_log` vertical max filters of heights 1, 2, 4, ... (an update over the
rows and slices), `slice_for_radius` floor(log2(2t + 1)), `vert` every
vertical max filter of half-height t up to radius + 1 (two overlapping
samples of a slice), `filter_height` the disc's half-height per column
offset, output the max over the disc's columns of `vert` at their heights.

Mirrors apps/src/suite/max_filter.rs.
"""

import math

import numpy as np

from common import repeat_edge

RADIUS = 26


def algorithm(hl, params, app):
    h = app["output"]["region"][1][1]
    x, y, c, t = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("t")
    clamped = repeat_edge(hl, params["input"])
    f = np.float32
    slices = int(math.ceil(f(np.log(f(RADIUS))) / f(np.log(f(2.0))))) + 1
    vert_log = hl.Func("vert_log")
    vert_log[x, y, c, t] = clamped[x, y, c]
    r = hl.RDom([hl.Range(-RADIUS, h + RADIUS), hl.Range(1, slices - 1)], "r")
    step = hl.clamp(1 << (r.y - 1), 0, RADIUS * 2)
    vert_log[x, r.x, c, r.y] = hl.max(vert_log[x, r.x, c, r.y - 1], vert_log[x, r.x + step, c, r.y - 1])
    slice_for_radius = hl.Func("slice_for_radius")
    log2 = hl.log(hl.cast(hl.Float(32), t * 2 + 1)) / hl.f32(float(f(np.log(f(2.0)))))
    slice_for_radius[t] = hl.cast(hl.Int(32), hl.floor(log2))
    vert = hl.Func("vert")
    slice_ = hl.clamp(slice_for_radius[t], 0, slices)
    first_sample = vert_log[x, y - t, c, slice_]
    second_sample = vert_log[x, y + t + 1 - hl.clamp(1 << slice_, 0, 2 * RADIUS), c, slice_]
    vert[x, y, c, t] = hl.max(first_sample, second_sample)
    filter_height = hl.Func("filter_height")
    dy = hl.RDom([hl.Range(0, RADIUS + 1)], "dy")
    bound = hl.f32(float((f(RADIUS) + f(0.25)) * (f(RADIUS) + f(0.25))))
    inside = hl.cast(hl.Float(32), x * x + dy.x * dy.x) < bound
    filter_height[x] = hl.sum(hl.select(inside, 1, 0))
    dx = hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], "dx")
    height = hl.clamp(filter_height[dx.x], 0, RADIUS + 1)
    output = hl.Func("output")
    output[x, y, c] = hl.maximum(vert[x + dx.x, y, c, height])
    return {"input_repeat_edge": clamped, "vert_log": vert_log, "slice_for_radius": slice_for_radius, "vert": vert,
            "filter_height": filter_height, "output": output, "_r": r}
