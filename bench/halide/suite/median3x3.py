"""3x3 median of an 8-bit grayscale image (OpenCV's `medianBlur` with
ksize 3, replicated borders) by a min/max sorting network: each column of
three sorted (min_y, mid_y, max_y), then the median of the largest minimum,
the middle middle and the smallest maximum of the three columns (Paeth's
network); median3(a, b, c) = max(min(a, b), min(max(a, b), c)).

Mirrors apps/src/suite/median3x3.rs.
"""

from common import repeat_edge


def median3(hl, a, b, c):
    return hl.max(hl.min(a, b), hl.min(hl.max(a, b), c))


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    clamped = repeat_edge(hl, params["input"])
    above, here, below = clamped[x, y - 1], clamped[x, y], clamped[x, y + 1]
    min_y = hl.Func("min_y")
    min_y[x, y] = hl.min(hl.min(above, here), below)
    mid_y = hl.Func("mid_y")
    mid_y[x, y] = median3(hl, above, here, below)
    max_y = hl.Func("max_y")
    max_y[x, y] = hl.max(hl.max(above, here), below)
    max_of_min = hl.Func("max_of_min")
    max_of_min[x, y] = hl.max(hl.max(min_y[x - 1, y], min_y[x, y]), min_y[x + 1, y])
    mid_of_mid = hl.Func("mid_of_mid")
    mid_of_mid[x, y] = median3(hl, mid_y[x - 1, y], mid_y[x, y], mid_y[x + 1, y])
    min_of_max = hl.Func("min_of_max")
    min_of_max[x, y] = hl.min(hl.min(max_y[x - 1, y], max_y[x, y]), max_y[x + 1, y])
    output = hl.Func("output")
    output[x, y] = median3(hl, max_of_min[x, y], mid_of_mid[x, y], min_of_max[x, y])
    return {"input_repeat_edge": clamped, "min_y": min_y, "mid_y": mid_y, "max_y": max_y, "max_of_min": max_of_min,
            "mid_of_mid": mid_of_mid, "min_of_max": min_of_max, "output": output}
