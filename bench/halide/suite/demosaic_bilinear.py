"""Bilinear demosaicking of an RGGB Bayer mosaic (u16, 10-bit values) into
a u16 RGB image (x, y, c), the textbook interpolation (as OpenCV's
`COLOR_BayerRG2RGB` computes it): each pixel keeps the colour it sampled
and takes each missing one as the rounded mean of its nearest samples of
that colour: the four sides for green at red and blue sites, the four
diagonals for red at blue sites and blue at red sites, the two horizontal
or two vertical neighbours for red and blue at green sites. The mosaic is
mirrored about its edges (a mirror keeps the colour pattern), in u32
arithmetic.

Mirrors apps/src/suite/demosaic_bilinear.rs.
"""


def mirror_interior(hl, param):
    """Our `boundary::mirror_interior`: a Func named `{input}_mirror_interior`
    reading `param` with every coordinate reflected about the buffer's
    edges (..., 2, 1, 0, 1, 2, ...)."""
    dims = param.dimensions()
    vs = [hl.Var(f"_{d}") for d in range(dims)]
    f = hl.Func(f"{param.name()}_mirror_interior")

    def reflect(v, d):
        lo, extent = param.dim(d).min(), param.dim(d).extent()
        period = extent * 2 - 2
        m = (v - lo) % period
        return hl.clamp(hl.select(m < extent, m, period - m) + lo, lo, lo + extent - 1)

    f[vs] = param[[reflect(v, d) for d, v in enumerate(vs)]]
    return f


def algorithm(hl, params, app):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    u32 = hl.UInt(32)
    mirrored = mirror_interior(hl, params["raw"])
    funcs = {"raw_mirror_interior": mirrored}

    def d(dx, dy):
        return hl.cast(u32, mirrored[x + dx, y + dy])

    def mean(name, taps):
        f = hl.Func(name)
        n = len(taps)
        total = None
        for dx, dy in taps:
            total = d(dx, dy) if total is None else total + d(dx, dy)
        f[x, y] = (total + n // 2) / n
        funcs[name] = f
        return f

    sides = mean("sides", [(-1, 0), (1, 0), (0, -1), (0, 1)])
    diagonals = mean("diagonals", [(-1, -1), (1, -1), (-1, 1), (1, 1)])
    horizontal = mean("horizontal", [(-1, 0), (1, 0)])
    vertical = mean("vertical", [(0, -1), (0, 1)])
    even_x, even_y = (x % 2) == 0, (y % 2) == 0

    def by_site(name, *values):
        # FuncRefs as Exprs, or select takes them for Tuples.
        r, gr, gb, b = (v if isinstance(v, hl.Expr) else hl.Expr(v) for v in values)
        f = hl.Func(name)
        f[x, y] = hl.select(even_y, hl.select(even_x, r, gr), hl.select(even_x, gb, b))
        funcs[name] = f
        return f

    red = by_site("red", d(0, 0), horizontal[x, y], vertical[x, y], diagonals[x, y])
    green = by_site("green", sides[x, y], d(0, 0), d(0, 0), sides[x, y])
    blue = by_site("blue", diagonals[x, y], vertical[x, y], horizontal[x, y], d(0, 0))
    output = hl.Func("output")
    output[x, y, c] = hl.cast(hl.UInt(16), hl.select(c == 0, hl.Expr(red[x, y]), hl.select(c == 1, hl.Expr(green[x, y]), hl.Expr(blue[x, y]))))
    funcs["output"] = output
    return funcs
