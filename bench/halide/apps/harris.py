"""Harris corner response of an f32 RGB image (x, y, c): luminance `gray`,
Sobel-like gradients `Ix`, `Iy` (taps scaled by 1/12, an f32 constant),
their products `Ixx`, `Iyy`, `Ixy` summed over 3x3 boxes (`Sxx`, `Syy`,
`Sxy`, rows top to bottom, left to right), and `det - trace * trace * 0.04`
of the structure tensor. No boundary condition: the output starts 3 pixels
inside the input and stops 3 short of its far edges.

Expert schedule: strips of 32 rows in parallel; `gray`, `Ix` and `Iy`
line-buffered per strip, the products and box sums inlined into the
output; all vectorized.

Mirrors apps/src/harris.rs.
"""

from common import f32_ratio, fold, line_buffered


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    inp = params["input"]
    gray = hl.Func("gray")
    gray[x, y] = inp[x, y, 0] * hl.f32(0.299) + inp[x, y, 1] * hl.f32(0.587) + inp[x, y, 2] * hl.f32(0.114)

    def g(dx, dy):
        return gray[x + dx, y + dy]

    def k(n):
        return f32_ratio(hl, n, 12.0)

    iy = hl.Func("Iy")
    iy[x, y] = (g(-1, -1) * k(-1) + g(-1, 1) * k(1) + g(0, -1) * k(-2) + g(0, 1) * k(2)
                + g(1, -1) * k(-1) + g(1, 1) * k(1))
    ix = hl.Func("Ix")
    ix[x, y] = (g(-1, -1) * k(-1) + g(1, -1) * k(1) + g(-1, 0) * k(-2) + g(1, 0) * k(2)
                + g(-1, 1) * k(-1) + g(1, 1) * k(1))
    funcs = {"gray": gray, "Iy": iy, "Ix": ix}

    def product(name, a, b):
        f = hl.Func(name)
        f[x, y] = a[x, y] * b[x, y]
        funcs[name] = f
        return f

    ixx, iyy, ixy = product("Ixx", ix, ix), product("Iyy", iy, iy), product("Ixy", ix, iy)

    def box_sum(name, f):
        s = hl.Func(name)
        s[x, y] = fold(f[x + dx, y + dy] for dy in range(-1, 2) for dx in range(-1, 2))
        funcs[name] = s
        return s

    sxx, syy, sxy = box_sum("Sxx", ixx), box_sum("Syy", iyy), box_sum("Sxy", ixy)
    det = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace = sxx[x, y] + syy[x, y]
    output = hl.Func("output")
    output[x, y] = det - trace * trace * hl.f32(0.04)
    funcs["output"] = output
    return funcs


def expert(hl, funcs, lanes, app):
    line_buffered(hl, funcs, "output", ["gray", "Ix", "Iy"], 32, lanes(hl.Float(32)))
