"""Morphological opening of an 8-bit grayscale image by a 7x7 square
structuring element (OpenCV's `morphologyEx(MORPH_OPEN)` with
BORDER_REPLICATE): erosion (minimum over the square, separably along x then
y, inline reductions over 7 points) of the repeat-edge image, then dilation
(maximum, the same way) of the eroded image under its own repeat-edge
boundary over the image's box.

Mirrors apps/src/suite/morphology_open.rs.
"""

from common import repeat_edge

RADIUS = 3


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    inp = params["input"]
    clamped = repeat_edge(hl, inp)

    def window(name):
        return hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], name)

    def along_x(name, f, reduce):
        r = window(f"{name}_r")
        g = hl.Func(name)
        g[x, y] = reduce(f[x + r.x, y])
        return g

    def along_y(name, f, reduce):
        r = window(f"{name}_r")
        g = hl.Func(name)
        g[x, y] = reduce(f[x, y + r.x])
        return g

    erode_x = along_x("erode_x", clamped, hl.minimum)
    erode = along_y("erode", erode_x, hl.minimum)
    v0, v1 = hl.Var("_0"), hl.Var("_1")
    eroded = hl.Func("erode_repeat_edge")
    eroded[v0, v1] = erode[hl.clamp(v0, inp.dim(0).min(), inp.dim(0).min() + inp.dim(0).extent() - 1),
                           hl.clamp(v1, inp.dim(1).min(), inp.dim(1).min() + inp.dim(1).extent() - 1)]
    dilate_x = along_x("dilate_x", eroded, hl.maximum)
    output = along_y("output", dilate_x, hl.maximum)
    return {"input_repeat_edge": clamped, "erode_x": erode_x, "erode": erode, "erode_repeat_edge": eroded,
            "dilate_x": dilate_x, "output": output}
