"""A ResNet convolution unit at inference (He et al. 2016; batch
normalization, Ioffe and Szegedy 2015, with its running statistics): a 3x3
convolution, stride 1, the image padded with zeros and no bias, over
channels-innermost activations input(k, x, y, n) and an HWIO filter
filter(c, k, r.x, r.y) (output channel innermost),
conv(c, x, y, n) = sum_{k, r} filter(c, k, r.x, r.y) *
input(k, x + r.x - 1, y + r.y - 1, n); batch normalization folded into a
scale and shift per channel, bn_scale = gamma / sqrt(variance + 1e-5) and
bn_shift = beta - mean * bn_scale; then ReLU,
max(conv * bn_scale + bn_shift, 0). The number of input channels is read
off the input's region.

Mirrors apps/src/suite/conv_bn_relu.rs.
"""

from common import input_region


def algorithm(hl, params, app):
    ci = input_region(app, "input")[0][1]
    c, x, y, b = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    inp, filt = params["input"], params["filter"]
    mean, variance, gamma, beta = params["mean"], params["variance"], params["gamma"], params["beta"]
    f32 = hl.f32
    padded = hl.BoundaryConditions.constant_exterior(inp, f32(0.0))
    r = hl.RDom([hl.Range(0, ci), hl.Range(0, 3), hl.Range(0, 3)], "r")
    rk, rx, ry = r.x, r.y, r.z
    conv = hl.Func("conv")
    conv[c, x, y, b] = f32(0.0)
    conv[c, x, y, b] = conv[c, x, y, b] + filt[c, rk, rx, ry] * padded[rk, x + rx - 1, y + ry - 1, b]
    bn_scale = hl.Func("bn_scale")
    bn_scale[c] = gamma[c] / hl.sqrt(variance[c] + f32(1e-5))
    bn_shift = hl.Func("bn_shift")
    bn_shift[c] = beta[c] - mean[c] * bn_scale[c]
    output = hl.Func("output")
    output[c, x, y, b] = hl.max(conv[c, x, y, b] * bn_scale[c] + bn_shift[c], f32(0.0))
    return {"input_constant_exterior": padded, "conv": conv, "bn_scale": bn_scale, "bn_shift": bn_shift,
            "output": output, "_r": r}
