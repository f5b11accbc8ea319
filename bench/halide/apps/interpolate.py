"""Multi-scale interpolation of an f32 RGBA image (x, y, c) over 10 levels,
under a repeat-edge boundary: alpha is premultiplied (`down0`), a pyramid
of [1 2 1]/4 downsamplings is built (`downx{l}` along x, then `down{l}`
along y), and from the coarsest level up (`interp9 = down9`) each level is
composited over the [1 1]/2 upsampling of the level below (`upx{l}` along
x, then inline along y): `interp{l} = down{l} + (1 - down{l}.alpha) * up`;
the output divides the finest level's colour by its alpha (3 channels).

Expert schedule: every level of both pyramids at root, rows outside
channels, rows in parallel strips of 8, vectorized along x; the horizontal
halves of the down- and upsamplings computed per row of their level; the
output likewise in parallel strips.

The number of levels is not in our manifest; it is 10 unless the manifest
app carries "levels" (for checking against a build of ours with another
count).

Mirrors apps/src/interpolate.rs.
"""

from common import repeat_edge

LEVELS = 10


def levels(app):
    return int(app.get("levels", LEVELS))


def algorithm(hl, params, app):
    LEVELS = levels(app)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    clamped = repeat_edge(hl, inp)
    funcs = {"input_repeat_edge": clamped}
    half, quarter, two, one = hl.f32(0.5), hl.f32(0.25), hl.f32(2.0), hl.f32(1.0)

    down = [hl.Func("down0")]
    alpha = clamped[x, y, 3]
    down[0][x, y, c] = hl.select(c < 3, clamped[x, y, c] * alpha, alpha)
    funcs["down0"] = down[0]
    for l in range(1, LEVELS):
        prev = down[l - 1]
        dx = hl.Func(f"downx{l}")
        dx[x, y, c] = (prev[x * 2 - 1, y, c] + prev[x * 2, y, c] * two + prev[x * 2 + 1, y, c]) * quarter
        d = hl.Func(f"down{l}")
        d[x, y, c] = (dx[x, y * 2 - 1, c] + dx[x, y * 2, c] * two + dx[x, y * 2 + 1, c]) * quarter
        down.append(d)
        funcs[f"downx{l}"], funcs[f"down{l}"] = dx, d

    interp = [None] * LEVELS
    top = hl.Func(f"interp{LEVELS - 1}")
    top[x, y, c] = down[LEVELS - 1][x, y, c]
    interp[LEVELS - 1] = top
    funcs[f"interp{LEVELS - 1}"] = top
    for l in reversed(range(LEVELS - 1)):
        below = interp[l + 1]
        ux = hl.Func(f"upx{l}")
        ux[x, y, c] = (below[x / 2, y, c] + below[(x + 1) / 2, y, c]) * half
        up = (ux[x, y / 2, c] + ux[x, (y + 1) / 2, c]) * half
        f = hl.Func(f"interp{l}")
        d = down[l]
        f[x, y, c] = d[x, y, c] + (one - d[x, y, 3]) * up
        interp[l] = f
        funcs[f"upx{l}"], funcs[f"interp{l}"] = ux, f
    output = hl.Func("output")
    output[x, y, c] = interp[0][x, y, c] / interp[0][x, y, 3]
    funcs["output"] = output
    return funcs


def expert(hl, funcs, lanes, app):
    LEVELS = levels(app)
    x, y, c, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("yo"), hl.Var("yi")
    l32 = lanes(hl.Float(32))
    for l in range(LEVELS):
        for name in [f"down{l}", f"interp{l}"]:
            funcs[name].compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)
        if l > 0:
            funcs[f"downx{l}"].compute_at(funcs[f"down{l}"], yi).vectorize(x, l32)
        if l < LEVELS - 1:
            funcs[f"upx{l}"].compute_at(funcs[f"interp{l}"], yi).vectorize(x, l32)
    funcs["output"].reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)
