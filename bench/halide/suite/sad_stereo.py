"""Block-matching stereo of two 8-bit grayscale images (left and right
views), as OpenCV's `StereoBM` matches blocks (without its prefilter,
texture and uniqueness checks): for each of 64 disparities `d`, the sum of
absolute differences between the left view and the right view shifted `d`
pixels, over a 9x9 window (summed along x, then y, each an update over a
reduction domain), and for each pixel the disparity of the smallest sum,
the first one on ties (a Tuple reduction of the disparity and its cost
over the disparities). Repeat-edge boundary.

Mirrors apps/src/suite/sad_stereo.rs.
"""

from common import repeat_edge

DISPARITIES = 64
RADIUS = 4


def algorithm(hl, params, app):
    x, y, d = hl.Var("x"), hl.Var("y"), hl.Var("d")
    u16 = hl.UInt(16)
    left = repeat_edge(hl, params["left"])
    right = repeat_edge(hl, params["right"])
    diff = hl.Func("diff")
    diff[x, y, d] = hl.cast(u16, hl.absd(left[x, y], right[x - d, y]))
    sad_x = hl.Func("sad_x")
    sad_x[x, y, d] = hl.u16(0)
    rx = hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], "rx")
    sad_x[x, y, d] = sad_x[x, y, d] + diff[x + rx.x, y, d]
    sad = hl.Func("sad")
    sad[x, y, d] = hl.u16(0)
    ry = hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], "ry")
    sad[x, y, d] = sad[x, y, d] + sad_x[x, y + ry.x, d]
    best = hl.Func("best")
    best[x, y] = (hl.i32(0), hl.u16(65535))
    rd = hl.RDom([hl.Range(0, DISPARITIES)], "rd")
    cost = sad[x, y, rd.x]
    better = cost < best[x, y][1]
    best[x, y] = (hl.select(better, rd.x, best[x, y][0]), hl.select(better, cost, best[x, y][1]))
    output = hl.Func("output")
    output[x, y] = hl.cast(hl.UInt(8), best[x, y][0])
    return {"left_repeat_edge": left, "right_repeat_edge": right, "diff": diff, "sad_x": sad_x, "sad": sad,
            "best": best, "output": output, "_rx": rx, "_ry": ry, "_rd": rd}
