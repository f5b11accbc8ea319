"""The forward two-level 2D Haar wavelet transform of an f32 grayscale
image, from Halide's `apps/wavelet` (its `haar_x`: the sum and the
difference of each pair of pixels, halved, as two bands of a 3D Func)
applied along x and then along y, and again to the low-low band. The
output is the packed (Mallat) layout of the image's size: the second
level's four bands (low-low, high-low, low-high, high-high) in the
top-left quarter's quarters, the first level's three detail bands in the
other quarters. The image size is read off the output's region.

Mirrors apps/src/suite/wavelet_haar.rs.
"""


def level(hl, source, l, x, y, c, funcs):
    haar_x = hl.Func(f"haar_x{l}")
    even, odd = source(x * 2, y), source(x * 2 + 1, y)
    haar_x[x, y, c] = hl.select(c == 0, even + odd, even - odd) * hl.f32(0.5)
    haar_y = hl.Func(f"haar_y{l}")

    def row(dy):
        return haar_x[x, y * 2 + dy, c % 2]

    haar_y[x, y, c] = hl.select((c / 2) == 0, row(0) + row(1), row(0) - row(1)) * hl.f32(0.5)
    funcs[f"haar_x{l}"], funcs[f"haar_y{l}"] = haar_x, haar_y
    return haar_y


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    funcs = {}
    first = level(hl, lambda x, y: inp[x, y], 1, x, y, c, funcs)
    second = level(hl, lambda x, y: first[x, y, 0], 2, x, y, c, funcs)
    w1, h1, w2, h2 = w // 2, h // 2, w // 4, h // 4

    def band(bw, bh):
        return hl.select(x >= bw, 1, 0) + hl.select(y >= bh, 2, 0)

    output = hl.Func("output")
    output[x, y] = hl.select((x < w1) & (y < h1), second[x % w2, y % h2, band(w2, h2)],
                             first[x % w1, y % h1, band(w1, h1)])
    funcs["output"] = output
    return funcs
