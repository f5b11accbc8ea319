"""Local Laplacian filtering (Paris et al.; Aubry et al.'s fast version) of
a u16 RGB image (x, y, c) with 8 pyramid levels (J) and 8 intensity levels
(K), under a repeat-edge boundary: `floating` = input / 65535, `gray` its
luminance; a lookup table `remap(x) = f * alpha * exp(f * f * -0.5)` with
f = x / 256; for each intensity level k the remapped image
`g0(x, y, k) = (gray - level) * beta + level + remap(idx - 256 k)` (level =
k / (K-1), idx = clamp(i32(gray * (K-1) * 256), 0, (K-1) * 256)) gets a
Gaussian pyramid (`g{j}`, [1 3 3 1]/8 downsamplings along x in
`g{j}_dx`, then y) and a Laplacian pyramid (`l{j}`, differences with the
[1 3]/4 upsampling of the next level, along x in `l{j}_ux`, then y
inline); the input's Gaussian pyramid (`in{j}`, in0 = gray) picks, per
pixel, the two intensity levels to interpolate the output's Laplacian
pyramid (`outl{j}`) from; it is collapsed back up (`out{j}` = upsampling
of out{j+1}, along x in `out{j}_ux`, + outl{j}), and the colour is
reintroduced by the ratio to the input luminance (eps = 0.01), clamped to
[0, 1], scaled by 65535 and cast to u16. alpha = beta = 1.

Expert schedule: the lookup table at root; `gray`, every level of the
processed (`g{j}`), input (`in{j}`) and output (`out{j}`) pyramids at
root, rows in parallel strips of 8, vectorized along x; the Laplacian
levels and the resampling halves inlined; the output in parallel strips,
rows outside channels, vectorized.

Mirrors apps/src/local_laplacian.rs.
"""

from common import f32_ratio, repeat_edge

DEFAULT_LEVELS = 8
K = 8
ALPHA = 1.0
BETA = 1.0


def levels(app):
    """Pyramid levels: the manifest's `levels` (our small size uses fewer)."""
    return int(app.get("levels", DEFAULT_LEVELS))


def downsample(hl, funcs, name, args, f):
    """[1 3 3 1] / 8 along x (Func `{name}_dx`) then y (Func `name`), at
    half resolution; args[2:] pass through."""
    x, y, rest = args[0], args[1], list(args[2:])
    three, eight = hl.f32(3.0), hl.f32(8.0)
    dx = hl.Func(f"{name}_dx")
    dx[args] = (f(x * 2 - 1, y) + (f(x * 2, y) + f(x * 2 + 1, y)) * three + f(x * 2 + 2, y)) / eight

    def at(xx, yy):
        return dx[[xx, yy] + rest]

    d = hl.Func(name)
    d[args] = (at(x, y * 2 - 1) + (at(x, y * 2) + at(x, y * 2 + 1)) * three + at(x, y * 2 + 2)) / eight
    funcs[f"{name}_dx"], funcs[name] = dx, d
    return d


def upsample(hl, funcs, name, args, f):
    """[1 3] / 4 upsampling along x (Func `{name}_ux`) then y, as an
    expression at `args`."""
    x, y, rest = args[0], args[1], list(args[2:])
    quarter, three_quarters = hl.f32(0.25), hl.f32(0.75)
    ux = hl.Func(f"{name}_ux")
    ux[args] = f(x / 2 - 1 + (x % 2) * 2, y) * quarter + f(x / 2, y) * three_quarters
    funcs[f"{name}_ux"] = ux

    def at(yy):
        return ux[[x, yy] + rest]

    return at(y / 2 - 1 + (y % 2) * 2) * quarter + at(y / 2) * three_quarters


def algorithm(hl, params, app):
    J = levels(app)
    x, y, c, k = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("k")
    f32 = hl.Float(32)
    inp = params["input"]
    clamped = repeat_edge(hl, inp)
    funcs = {"input_repeat_edge": clamped}

    remap = hl.Func("remap")
    fx = hl.cast(f32, x) / hl.f32(256.0)
    remap[x] = fx * hl.f32(ALPHA) * hl.exp(fx * fx * hl.f32(-0.5))
    floating = hl.Func("floating")
    floating[x, y, c] = hl.cast(f32, clamped[x, y, c]) / hl.f32(65535.0)
    gray = hl.Func("gray")
    gray[x, y] = floating[x, y, 0] * hl.f32(0.299) + floating[x, y, 1] * hl.f32(0.587) + floating[x, y, 2] * hl.f32(0.114)
    funcs.update(remap=remap, floating=floating, gray=gray)

    # The processed Gaussian pyramids, one per intensity level k.
    level = hl.cast(f32, k) * f32_ratio(hl, 1.0, float(K - 1))
    g_here = gray[x, y]
    idx = hl.clamp(hl.cast(hl.Int(32), g_here * hl.f32((K - 1) * 256.0)), 0, (K - 1) * 256)
    g = [hl.Func("g0")]
    g[0][x, y, k] = (g_here - level) * hl.f32(BETA) + level + remap[idx - k * 256]
    funcs["g0"] = g[0]
    for j in range(1, J):
        prev = g[j - 1]
        g.append(downsample(hl, funcs, f"g{j}", [x, y, k], lambda xx, yy, prev=prev: prev[xx, yy, k]))
    # Their Laplacian pyramids.
    lap = []
    for j in range(J):
        f = hl.Func(f"l{j}")
        here = g[j][x, y, k]
        if j == J - 1:
            f[x, y, k] = here
        else:
            nxt = g[j + 1]
            f[x, y, k] = here - upsample(hl, funcs, f"l{j}", [x, y, k], lambda xx, yy, nxt=nxt: nxt[xx, yy, k])
        funcs[f"l{j}"] = f
        lap.append(f)
    # The input's Gaussian pyramid.
    inp_pyr = [gray]
    for j in range(1, J):
        prev = inp_pyr[j - 1]
        inp_pyr.append(downsample(hl, funcs, f"in{j}", [x, y], lambda xx, yy, prev=prev: prev[xx, yy]))
    # The output's Laplacian pyramid, then its collapse.
    out_l = []
    for j in range(J):
        lv = inp_pyr[j][x, y] * hl.f32(float(K - 1))
        li = hl.clamp(hl.cast(hl.Int(32), lv), 0, K - 2)
        lf = lv - hl.cast(f32, li)
        f = hl.Func(f"outl{j}")
        f[x, y] = (hl.f32(1.0) - lf) * lap[j][x, y, li] + lf * lap[j][x, y, li + 1]
        funcs[f"outl{j}"] = f
        out_l.append(f)
    out_g = [None] * J
    out_g[J - 1] = out_l[J - 1]
    for j in reversed(range(J - 1)):
        nxt = out_g[j + 1]
        f = hl.Func(f"out{j}")
        f[x, y] = upsample(hl, funcs, f"out{j}", [x, y], lambda xx, yy, nxt=nxt: nxt[xx, yy]) + out_l[j][x, y]
        funcs[f"out{j}"] = f
        out_g[j] = f
    eps = hl.f32(0.01)
    color = (out_g[0][x, y] * (floating[x, y, c] + eps)) / (gray[x, y] + eps)
    output = hl.Func("output")
    output[x, y, c] = hl.cast(hl.UInt(16), hl.clamp(color, hl.f32(0.0), hl.f32(1.0)) * hl.f32(65535.0))
    funcs["output"] = output
    return funcs


def expert(hl, funcs, lanes, app):
    J = levels(app)
    x, y, c, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("yo"), hl.Var("yi")
    l32 = lanes(hl.Float(32))

    def strips(name):
        funcs[name].compute_root().split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)

    funcs["remap"].compute_root()
    strips("gray")
    for j in range(J):
        strips(f"g{j}")
        if j > 0:
            strips(f"in{j}")
        if j < J - 1:
            strips(f"out{j}")
    funcs["output"].reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)
