"""SIFT's difference-of-Gaussians scale space (Lowe 2004) of an f32
grayscale image: two octaves of five Gaussian levels (two intervals per
octave, so the scale grows by sqrt(2) from level to level, from sigma 1.6
over an input assumed blurred by 0.5), each level blurred from the
previous one by the incremental sigma (separable, along x then y,
normalized taps out to 3 sigma, computed once in f64 and rounded to f32);
the second octave starts from the first octave's level 2 (twice the base
sigma) keeping every second pixel. The output is the DoG stack (x, y, s):
the four differences of adjacent levels of the first octave (s = 0..3),
then those of the second octave (s = 4..7) at its own resolution in the
top-left quarter, zero elsewhere. Repeat-edge boundary. The image size is
read off the output's region.

Mirrors apps/src/suite/dog_pyramid.rs.
"""

import math

from common import repeat_edge

LEVELS = 5
OCTAVES = 2


def increments():
    k = math.sqrt(2.0)
    sigma = 1.6
    incs = [math.sqrt(sigma * sigma - 0.25)]
    for _ in range(1, LEVELS):
        nxt = sigma * k
        incs.append(math.sqrt(nxt * nxt - sigma * sigma))
        sigma = nxt
    return incs


def taps(sigma):
    radius = math.ceil(3.0 * sigma)
    raw = [math.exp(-float(i * i) / (2.0 * sigma * sigma)) for i in range(-radius, radius + 1)]
    total = 0.0
    for v in raw:
        total += v
    return [v / total for v in raw]


def blur(hl, source, sigma, name, x, y, funcs):
    weights = taps(sigma)
    radius = len(weights) // 2

    def along(f, horizontal):
        acc = None
        for i, w in zip(range(-radius, radius + 1), weights):
            term = (f[x + i, y] if horizontal else f[x, y + i]) * hl.f32(w)
            acc = term if acc is None else acc + term
        return acc

    bx = hl.Func(f"{name}_x")
    bx[x, y] = along(source, True)
    g = hl.Func(name)
    g[x, y] = along(bx, False)
    funcs[f"{name}_x"], funcs[name] = bx, g
    return g


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y, s = hl.Var("x"), hl.Var("y"), hl.Var("s")
    funcs = {}
    incs = increments()
    dogs = []
    base = repeat_edge(hl, params["input"])
    funcs["input_repeat_edge"] = base
    for o in range(OCTAVES):
        gauss = []
        if o == 0:
            gauss.append(blur(hl, base, incs[0], "gauss0_0", x, y, funcs))
        else:
            g = hl.Func(f"gauss{o}_0")
            g[x, y] = base[x * 2, y * 2]
            funcs[f"gauss{o}_0"] = g
            gauss.append(g)
        for l in range(1, LEVELS):
            gauss.append(blur(hl, gauss[l - 1], incs[l], f"gauss{o}_{l}", x, y, funcs))
        for l in range(LEVELS - 1):
            dog = hl.Func(f"dog{o}_{l}")
            dog[x, y] = gauss[l + 1][x, y] - gauss[l][x, y]
            funcs[f"dog{o}_{l}"] = dog
            dogs.append(dog)
        base = gauss[2]
    w1, h1 = w // 2, h // 2
    inside = (x < w1) & (y < h1)
    per_level = LEVELS - 1
    value = None
    for i in reversed(range(len(dogs))):
        dog = dogs[i]
        here = dog[x, y] if i < per_level else hl.select(inside, dog[hl.min(x, w1 - 1), hl.min(y, h1 - 1)], hl.f32(0.0))
        value = here if i == len(dogs) - 1 else hl.select(s == i, here, value)
    output = hl.Func("output")
    output[x, y, s] = value
    funcs["output"] = output
    return funcs
