"""Pyramid blending of two f32 RGB images (x, y, c) under an f32 mask
(x, y), from PolyMage's pyramid blending benchmark (Burt and Adelson's
multiresolution spline): 4-level Gaussian pyramids of both images and of
the mask (the 5-tap [1 4 6 4 1]/16 filter along x then y, keeping every
second pixel), Laplacian pyramids of the images (each level minus the
expansion of the next: even pixels [1 6 1]/8, odd pixels [1 1]/2 of the
coarser level, along x then y), each level of the two blended by the
mask's level (`mask * img1 + (1 - mask) * img2`), and the blended pyramid
collapsed from the coarsest level up (each level plus the expansion of the
one below), clamped to [0, 1]. Repeat-edge boundary on the inputs.

Mirrors apps/src/suite/pyramid_blend.rs.
"""

from common import repeat_edge

LEVELS = 4


class Dims:
    def __init__(self, hl, funcs, x, y, rest):
        self.hl, self.funcs, self.x, self.y, self.rest = hl, funcs, x, y, rest

    def vars(self):
        return [self.x, self.y] + self.rest

    def at(self, f, x, y):
        hl = self.hl
        return f[[e if isinstance(e, hl.Expr) else hl.Expr(e) for e in [x, y] + self.rest]]

    def down(self, f, name, along_x):
        hl = self.hl

        def tap(d):
            return self.at(f, self.x * 2 + d, self.y) if along_x else self.at(f, self.x, self.y * 2 + d)

        g = hl.Func(name)
        g[self.vars()] = (tap(-2) + tap(-1) * hl.f32(4.0) + tap(0) * hl.f32(6.0) + tap(1) * hl.f32(4.0) + tap(2)) \
            * hl.f32(0.0625)
        self.funcs[name] = g
        return g

    def up(self, f, along_x):
        hl = self.hl
        v = self.x if along_x else self.y

        def tap(d):
            return self.at(f, self.x / 2 + d, self.y) if along_x else self.at(f, self.x, self.y / 2 + d)

        return hl.select((v % 2) == 0, (tap(-1) + tap(0) * hl.f32(6.0) + tap(1)) * hl.f32(0.125),
                         (tap(0) + tap(1)) * hl.f32(0.5))

    def expand(self, f, name):
        ux = self.hl.Func(name)
        ux[self.vars()] = self.up(f, True)
        self.funcs[name] = ux
        return self.up(ux, False)

    def gaussian(self, base, prefix):
        levels = [base]
        for l in range(1, LEVELS):
            dx = self.down(levels[l - 1], f"{prefix}_downx{l}", True)
            levels.append(self.down(dx, f"{prefix}_gauss{l}", False))
        return levels

    def laplacian(self, gauss, prefix):
        levels = []
        for l in range(LEVELS - 1):
            up = self.expand(gauss[l + 1], f"{prefix}_upx{l}")
            lap = self.hl.Func(f"{prefix}_lap{l}")
            lap[self.vars()] = self.at(gauss[l], self.x, self.y) - up
            self.funcs[f"{prefix}_lap{l}"] = lap
            levels.append(lap)
        levels.append(gauss[LEVELS - 1])
        return levels


def algorithm(hl, params, app):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    funcs = {}
    rgb = Dims(hl, funcs, x, y, [c])
    gray = Dims(hl, funcs, x, y, [])
    edges = {name: repeat_edge(hl, params[name]) for name in ["img1", "img2", "mask"]}
    for name, f in edges.items():
        funcs[f"{name}_repeat_edge"] = f
    lap1 = rgb.laplacian(rgb.gaussian(edges["img1"], "img1"), "img1")
    lap2 = rgb.laplacian(rgb.gaussian(edges["img2"], "img2"), "img2")
    weights = gray.gaussian(edges["mask"], "mask")
    blend = []
    for l in range(LEVELS):
        m = weights[l][x, y]
        b = hl.Func(f"blend{l}")
        b[x, y, c] = lap1[l][x, y, c] * m + lap2[l][x, y, c] * (hl.f32(1.0) - m)
        funcs[f"blend{l}"] = b
        blend.append(b)
    collapsed = blend[LEVELS - 1]
    for l in reversed(range(LEVELS - 1)):
        up = rgb.expand(collapsed, f"collapse_upx{l}")
        f = hl.Func(f"collapse{l}")
        f[x, y, c] = blend[l][x, y, c] + up
        funcs[f"collapse{l}"] = f
        collapsed = f
    output = hl.Func("output")
    output[x, y, c] = hl.clamp(collapsed[x, y, c], hl.f32(0.0), hl.f32(1.0))
    funcs["output"] = output
    return funcs
