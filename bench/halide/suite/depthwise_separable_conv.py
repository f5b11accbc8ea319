"""A depthwise-separable convolution, the block MobileNet is built of, as
Halide's apps/depthwise_separable_conv computes it (channels innermost:
input(c, x, y, n)), with the MobileNet block's bias and ReLU6 after each
convolution (Howard et al. 2017, figure 3): a 3x3 depthwise convolution,
stride 1, the image padded with zeros, depthwise(c, x, y, n) = dw_bias(c) +
sum_r dw_filter(c, r.x, r.y) * input(c, x + r.x - 1, y + r.y - 1, n),
clamped to [0, 6]; then a 1x1 pointwise convolution across the channels,
pointwise(c, x, y, n) = pw_bias(c) + sum_k pw_filter(c, k) *
dw_relu6(k, x, y, n), clamped to [0, 6]. The number of input channels is
read off the input's region.

Mirrors apps/src/suite/depthwise_separable_conv.rs.
"""

from common import input_region


def relu6(hl, e):
    return hl.min(hl.max(e, hl.f32(0.0)), hl.f32(6.0))


def algorithm(hl, params, app):
    ci = input_region(app, "input")[0][1]
    c, x, y, b = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    inp, dw_filter, dw_bias = params["input"], params["dw_filter"], params["dw_bias"]
    pw_filter, pw_bias = params["pw_filter"], params["pw_bias"]
    padded = hl.BoundaryConditions.constant_exterior(inp, hl.f32(0.0))
    r = hl.RDom([hl.Range(0, 3), hl.Range(0, 3)], "r")
    depthwise = hl.Func("depthwise")
    depthwise[c, x, y, b] = dw_bias[c]
    depthwise[c, x, y, b] = depthwise[c, x, y, b] + dw_filter[c, r.x, r.y] * padded[c, x + r.x - 1, y + r.y - 1, b]
    dw_relu6 = hl.Func("dw_relu6")
    dw_relu6[c, x, y, b] = relu6(hl, depthwise[c, x, y, b])
    k = hl.RDom([hl.Range(0, ci)], "k")
    pointwise = hl.Func("pointwise")
    pointwise[c, x, y, b] = pw_bias[c]
    pointwise[c, x, y, b] = pointwise[c, x, y, b] + pw_filter[c, k.x] * dw_relu6[k.x, x, y, b]
    output = hl.Func("output")
    output[c, x, y, b] = relu6(hl, pointwise[c, x, y, b])
    return {"input_constant_exterior": padded, "depthwise": depthwise, "dw_relu6": dw_relu6,
            "pointwise": pointwise, "output": output, "_r": r, "_k": k}
