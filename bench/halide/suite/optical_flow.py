"""Horn and Schunck's optical flow ("Determining Optical Flow", 1981)
between two f32 grayscale frames of a clip, frames(x, y, t) with t in
{0, 1} (under a repeat-edge boundary): the brightness derivatives ix, iy, it
estimated over the 2x2x2 cube of the paper's section 7; then a fixed number
of Jacobi iterations (10, unrolled as Funcs) of the paper's update from the
flow (u, v) of the previous iteration (zero to start): the local averages
ubar, vbar with the paper's weights (1/6 on the four edge neighbours, 1/12
on the corners) of the previous flow under a repeat-edge boundary at the
image's edges (Funcs named `<flow>_repeat_edge`, as ours), and u = ubar - ix * t,
v = vbar - iy * t with t = (ix ubar + iy vbar + it) / (ix^2 + iy^2 +
alpha^2), alpha = 0.1 for intensities in [0, 1). The output is the flow,
flow(x, y, c) with c = 0 for u and 1 for v. The frames' size is read off
their region.

Mirrors apps/src/suite/optical_flow.rs.
"""

from common import input_region, repeat_edge

ITERATIONS = 10


def algorithm(hl, params, app):
    region = input_region(app, "frames")
    w, h = region[0][1], region[1][1]
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f32 = hl.f32
    frames = repeat_edge(hl, params["frames"])
    funcs = {"frames_repeat_edge": frames}

    def func(name):
        f = hl.Func(name)
        funcs[name] = f
        return f

    e0, e1 = func("frame0"), func("frame1")
    e0[x, y] = frames[x, y, 0]
    e1[x, y] = frames[x, y, 1]

    def at(f, dx, dy):
        return f[x + dx, y + dy]

    ix = func("ix")
    ix[x, y] = (at(e0, 1, 0) - at(e0, 0, 0) + at(e0, 1, 1) - at(e0, 0, 1) + at(e1, 1, 0) - at(e1, 0, 0)
                + at(e1, 1, 1) - at(e1, 0, 1)) * f32(0.25)
    iy = func("iy")
    iy[x, y] = (at(e0, 0, 1) - at(e0, 0, 0) + at(e0, 1, 1) - at(e0, 1, 0) + at(e1, 0, 1) - at(e1, 0, 0)
                + at(e1, 1, 1) - at(e1, 1, 0)) * f32(0.25)
    it = func("it")
    it[x, y] = (at(e1, 0, 0) - at(e0, 0, 0) + at(e1, 1, 0) - at(e0, 1, 0) + at(e1, 0, 1) - at(e0, 0, 1)
                + at(e1, 1, 1) - at(e0, 1, 1)) * f32(0.25)

    def here(f):
        return f[x, y]

    denom = func("denom")
    denom[x, y] = here(ix) * here(ix) + here(iy) * here(iy) + f32(0.01)

    def repeat_edge_within(f):
        # Our boundary::repeat_edge_within(f, [(0, w), (0, h)]).
        g = func(f"{f.name()}_repeat_edge")
        vx, vy = hl.Var("_0"), hl.Var("_1")
        g[vx, vy] = f[hl.clamp(vx, 0, w - 1), hl.clamp(vy, 0, h - 1)]
        return g

    def average(f):
        f = repeat_edge_within(f)
        edges = at(f, -1, 0) + at(f, 1, 0) + at(f, 0, -1) + at(f, 0, 1)
        corners = at(f, -1, -1) + at(f, 1, -1) + at(f, -1, 1) + at(f, 1, 1)
        return (edges * f32(2.0) + corners) / f32(12.0)

    u, v = func("u_0"), func("v_0")
    u[x, y] = f32(0.0)
    v[x, y] = f32(0.0)
    for k in range(1, ITERATIONS + 1):
        ubar, vbar = func(f"ubar_{k}"), func(f"vbar_{k}")
        ubar[x, y] = average(u)
        vbar[x, y] = average(v)
        t = (here(ix) * here(ubar) + here(iy) * here(vbar) + here(it)) / here(denom)
        next_u, next_v = func(f"u_{k}"), func(f"v_{k}")
        next_u[x, y] = here(ubar) - here(ix) * t
        next_v[x, y] = here(vbar) - here(iy) * t
        u, v = next_u, next_v
    flow = func("flow")
    # hl.Expr(...): a select of two FuncRefs would be a Tuple select.
    flow[x, y, c] = hl.select(c == 0, hl.Expr(here(u)), hl.Expr(here(v)))
    return funcs
