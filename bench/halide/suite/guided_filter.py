"""He, Sun and Tang's guided filter (Algorithm 1) of an f32 grayscale image
`input` (p) guided by an f32 grayscale image `guide` (I), radius 8,
eps = 0.01: box means (side 17, inline sums along x then y, times 1/289) of
I, p, I*I, I*p under repeat-edge boundaries; a = cov(I, p) / (var(I) + eps),
b = mean(p) - a mean(I); box means of a and b, each replicated beyond the
image's box; output mean(a) I + mean(b).

Mirrors apps/src/suite/guided_filter.rs.
"""

import numpy as np

from common import repeat_edge

RADIUS = 8
EPS = np.float32(0.01)


def repeat_edge_within(hl, f, name, param):
    v0, v1 = hl.Var("_0"), hl.Var("_1")
    g = hl.Func(name)
    g[v0, v1] = f[hl.clamp(v0, param.dim(0).min(), param.dim(0).min() + param.dim(0).extent() - 1),
                  hl.clamp(v1, param.dim(1).min(), param.dim(1).min() + param.dim(1).extent() - 1)]
    return g


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    guide = params["guide"]
    guide_c = repeat_edge(hl, guide)
    input_c = repeat_edge(hl, params["input"])
    side = np.float32(2 * RADIUS + 1)
    scale = hl.f32(float(np.float32(1.0) / (side * side)))
    funcs = {"guide_repeat_edge": guide_c, "input_repeat_edge": input_c}

    def box_mean(name, f):
        rx = hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], f"{name}_rx")
        sum_x = hl.Func(f"{name}_x")
        sum_x[x, y] = hl.sum(f[x + rx.x, y])
        ry = hl.RDom([hl.Range(-RADIUS, 2 * RADIUS + 1)], f"{name}_ry")
        mean = hl.Func(name)
        mean[x, y] = hl.sum(sum_x[x, y + ry.x]) * scale
        funcs[f"{name}_x"] = sum_x
        funcs[name] = mean
        return mean

    def product(name, a, b):
        f = hl.Func(name)
        f[x, y] = a[x, y] * b[x, y]
        funcs[name] = f
        return f

    guide_sq = product("guide_sq", guide_c, guide_c)
    guide_input = product("guide_input", guide_c, input_c)
    mean_i = box_mean("mean_i", guide_c)
    mean_p = box_mean("mean_p", input_c)
    corr_i = box_mean("corr_i", guide_sq)
    corr_ip = box_mean("corr_ip", guide_input)
    var_i = corr_i[x, y] - mean_i[x, y] * mean_i[x, y]
    cov_ip = corr_ip[x, y] - mean_i[x, y] * mean_p[x, y]
    a = hl.Func("a")
    a[x, y] = cov_ip / (var_i + hl.f32(float(EPS)))
    b = hl.Func("b")
    b[x, y] = mean_p[x, y] - a[x, y] * mean_i[x, y]
    funcs["a"], funcs["b"] = a, b
    a_c = repeat_edge_within(hl, a, "a_repeat_edge", guide)
    b_c = repeat_edge_within(hl, b, "b_repeat_edge", guide)
    funcs["a_repeat_edge"], funcs["b_repeat_edge"] = a_c, b_c
    mean_a = box_mean("mean_a", a_c)
    mean_b = box_mean("mean_b", b_c)
    output = hl.Func("output")
    output[x, y] = mean_a[x, y] * guide_c[x, y] + mean_b[x, y]
    funcs["output"] = output
    return funcs
