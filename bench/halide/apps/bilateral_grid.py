"""The bilateral grid (Chen et al.) over an f32 grey image: the image under
a repeat-edge boundary, clamped to [0, 1], is splatted into a coarse 3-D
grid (8x8 pixel cells by intensity bins of r_sigma = 0.1) of (value sum,
count) pairs in `histogram` (a data-dependent update over each cell's 8x8
pixels, cells offset by half a cell), the grid is blurred with a 5-tap
[1 4 6 4 1] filter along intensity (`blurz`), x (`blurx`) and y (`blury`),
and each pixel takes the trilinear interpolation (`interpolated`) of the
blurred grid at its position and its (unbounded-input, clamped) intensity;
the output `bilateral_grid` is the interpolated sum over the interpolated
count.

Expert schedule: the histogram computed per row of `blurz`, its update
with channels innermost; the three blurs at root with rows (or intensity
planes) in parallel, vectorized along x, channels bounded to 2 and
unrolled; the output in parallel strips of 16 rows, vectorized.

Mirrors apps/src/bilateral_grid.rs.
"""

from common import f32_ratio, lerp, repeat_edge

S_SIGMA = 8
R_SIGMA = 0.1


def algorithm(hl, params, app):
    x, y, z, c = hl.Var("x"), hl.Var("y"), hl.Var("z"), hl.Var("c")
    inp = params["input"]
    clamped = repeat_edge(hl, inp)
    inv_r = f32_ratio(hl, 1.0, R_SIGMA)

    r = hl.RDom([hl.Range(0, S_SIGMA), hl.Range(0, S_SIGMA)], "r")
    val = hl.clamp(clamped[x * S_SIGMA + r.x - S_SIGMA // 2, y * S_SIGMA + r.y - S_SIGMA // 2],
                   hl.f32(0.0), hl.f32(1.0))
    zi = hl.cast(hl.Int(32), val * inv_r + hl.f32(0.5))
    histogram = hl.Func("histogram")
    histogram[x, y, z, c] = hl.f32(0.0)
    histogram[x, y, zi, c] = histogram[x, y, zi, c] + hl.select(c == 0, val, hl.f32(1.0))

    def five_tap(name, f, shift):
        g = hl.Func(name)

        def tap(d):
            return f[shift(d)]

        g[x, y, z, c] = tap(-2) + tap(-1) * hl.f32(4.0) + tap(0) * hl.f32(6.0) + tap(1) * hl.f32(4.0) + tap(2)
        return g

    blurz = five_tap("blurz", histogram, lambda d: (x, y, z + d, c))
    blurx = five_tap("blurx", blurz, lambda d: (x + d, y, z, c))
    blury = five_tap("blury", blurx, lambda d: (x, y + d, z, c))

    v = hl.clamp(inp[x, y], hl.f32(0.0), hl.f32(1.0))
    zv = v * inv_r
    zi = hl.cast(hl.Int(32), zv)
    zf = zv - hl.cast(hl.Float(32), zi)
    inv_s = f32_ratio(hl, 1.0, float(S_SIGMA))
    xf = hl.cast(hl.Float(32), x % S_SIGMA) * inv_s
    yf = hl.cast(hl.Float(32), y % S_SIGMA) * inv_s
    xi, yi = x / S_SIGMA, y / S_SIGMA

    def grid(dx, dy, dz):
        return blury[xi + dx, yi + dy, zi + dz, c]

    def plane(dz):
        return lerp(lerp(grid(0, 0, dz), grid(1, 0, dz), xf), lerp(grid(0, 1, dz), grid(1, 1, dz), xf), yf)

    interpolated = hl.Func("interpolated")
    interpolated[x, y, c] = lerp(plane(0), plane(1), zf)
    output = hl.Func("bilateral_grid")
    output[x, y] = interpolated[x, y, 0] / interpolated[x, y, 1]
    return {"input_repeat_edge": clamped, "histogram": histogram, "blurz": blurz, "blurx": blurx, "blury": blury,
            "interpolated": interpolated, "bilateral_grid": output, "_r": r}


def expert(hl, funcs, lanes, app):
    x, y, z, c, yo, yi = (hl.Var(n) for n in ("x", "y", "z", "c", "yo", "yi"))
    r = funcs["_r"]
    l32 = lanes(hl.Float(32))
    funcs["histogram"].compute_at(funcs["blurz"], y)
    funcs["histogram"].update(0).reorder(c, r.x, r.y, x, y)
    funcs["blurz"].compute_root().reorder(x, c, z, y).bound(c, 0, 2).unroll(c).parallel(y).vectorize(x, l32)
    for name in ["blurx", "blury"]:
        funcs[name].compute_root().reorder(x, c, y, z).bound(c, 0, 2).unroll(c).parallel(z).vectorize(x, l32)
    funcs["bilateral_grid"].split(y, yo, yi, 16).parallel(yo).vectorize(x, l32)
