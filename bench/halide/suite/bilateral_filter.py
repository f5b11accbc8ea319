"""The direct (brute-force) bilateral filter (Tomasi and Manduchi 1998) of
an f32 grayscale image, as OpenCV's `bilateralFilter` with d = 9: every
pixel within distance 4 of the centre (an RDom over the 9x9 square with a
`where` predicate) weighted by a spatial Gaussian (the table `spatial`,
sigma_s = 3) times a range Gaussian (sigma_r = 0.1); the weighted sum and
the sum of weights accumulated together in a Tuple (`accum`), the output
their quotient. The image extended by reflection about its edges (OpenCV's
BORDER_REFLECT_101, our `mirror_interior`).

Mirrors apps/src/suite/bilateral_filter.rs.
"""

import numpy as np

RADIUS = 4
SIGMA_SPACE = np.float32(3.0)
SIGMA_COLOR = np.float32(0.1)


def mirror_interior(hl, param):
    """Our `boundary::mirror_interior`: `{input}_mirror_interior` over vars
    `_0, _1, ...`, each coordinate reflected about the buffer's edges
    (Euclidean modulo of period 2 * extent - 2), then clamped."""
    dims = param.dimensions()
    vs = [hl.Var(f"_{d}") for d in range(dims)]
    coords = []
    for d, v in enumerate(vs):
        lo, extent = param.dim(d).min(), param.dim(d).extent()
        period = extent * 2 - 2
        m = (v - lo) % period
        coords.append(hl.clamp(hl.select(m < extent, m, period - m) + lo, lo, lo + extent - 1))
    f = hl.Func(f"{param.name()}_mirror_interior")
    f[vs] = param[coords]
    return f


def algorithm(hl, params, app):
    x, y, dx, dy = hl.Var("x"), hl.Var("y"), hl.Var("dx"), hl.Var("dy")
    clamped = mirror_interior(hl, params["input"])
    space_coeff = hl.f32(float(np.float32(-0.5) / (SIGMA_SPACE * SIGMA_SPACE)))
    color_coeff = hl.f32(float(np.float32(-0.5) / (SIGMA_COLOR * SIGMA_COLOR)))
    spatial = hl.Func("spatial")
    spatial[dx, dy] = hl.exp(hl.cast(hl.Float(32), dx * dx + dy * dy) * space_coeff)
    side = 2 * RADIUS + 1
    r = hl.RDom([hl.Range(-RADIUS, side), hl.Range(-RADIUS, side)], "r")
    r.where(r.x * r.x + r.y * r.y <= RADIUS * RADIUS)
    centre = clamped[x, y]
    value = clamped[x + r.x, y + r.y]
    diff = value - centre
    weight = spatial[r.x, r.y] * hl.exp(diff * diff * color_coeff)
    accum = hl.Func("accum")
    accum[x, y] = (hl.f32(0.0), hl.f32(0.0))
    accum[x, y] = (accum[x, y][0] + weight * value, accum[x, y][1] + weight)
    output = hl.Func("output")
    output[x, y] = accum[x, y][0] / accum[x, y][1]
    return {"input_mirror_interior": clamped, "spatial": spatial, "accum": accum, "output": output, "_r": r}
