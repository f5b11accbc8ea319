"""Census-transform stereo matching of two 8-bit grayscale images (left
and right views), as Zabih and Woodfill's census transform is used in
stereo pipelines (the matching cost of semi-global matching, without its
path aggregation): each pixel's 7x7 census signature (one bit per
neighbour, set where the neighbour is darker than the centre; 48 bits in a
u64, in raster order), the Hamming distance (popcount of the xor) between
the left signature and the right one `d` pixels to the left for 64
disparities, the costs summed over a 5x5 window (along x then y), and the
winner-take-all disparity: the first of the smallest aggregated costs (an
inline `argmin`). Repeat-edge boundary.

Mirrors apps/src/suite/census_stereo.rs.
"""

from common import repeat_edge

DISPARITIES = 64


def census(hl, image, x, y, funcs):
    name = image.name()
    clamped = repeat_edge(hl, image)
    win = hl.RDom([hl.Range(-3, 7), hl.Range(-3, 7)], f"win_{name}")
    win.where((win.x != 0) | (win.y != 0))
    f = hl.Func(f"census_{name}")
    f[x, y] = hl.u64(0)
    darker = clamped[x + win.x, y + win.y] < clamped[x, y]
    f[x, y] = (f[x, y] << 1) | hl.select(darker, hl.u64(1), hl.u64(0))
    funcs[f"{name}_repeat_edge"], funcs[f"census_{name}"] = clamped, f
    return f


def algorithm(hl, params, app):
    x, y, d = hl.Var("x"), hl.Var("y"), hl.Var("d")
    funcs = {}
    census_left = census(hl, params["left"], x, y, funcs)
    census_right = census(hl, params["right"], x, y, funcs)
    cost = hl.Func("cost")
    cost[x, y, d] = hl.cast(hl.UInt(16), hl.popcount(census_left[x, y] ^ census_right[x - d, y]))

    def c(f, dx, dy):
        return f[x + dx, y + dy, d]

    cost_x = hl.Func("cost_x")
    cost_x[x, y, d] = c(cost, -2, 0) + c(cost, -1, 0) + c(cost, 0, 0) + c(cost, 1, 0) + c(cost, 2, 0)
    aggregated = hl.Func("aggregated")
    aggregated[x, y, d] = c(cost_x, 0, -2) + c(cost_x, 0, -1) + c(cost_x, 0, 0) + c(cost_x, 0, 1) + c(cost_x, 0, 2)
    rd = hl.RDom([hl.Range(0, DISPARITIES)], "rd")
    best = hl.argmin(aggregated[x, y, rd.x])
    output = hl.Func("output")
    output[x, y] = hl.cast(hl.UInt(8), best[0])
    funcs.update({"cost": cost, "cost_x": cost_x, "aggregated": aggregated, "output": output, "_rd": rd})
    return funcs
