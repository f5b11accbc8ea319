"""Layer normalization (Ba et al. 2016) over the hidden dimension of an f32
tensor, as BERT applies it after each sublayer (input(i, t, b): hidden unit,
token, sequence of the batch): the mean and the (biased) variance of each
token's hidden vector, two reductions, then
(input - mean) * inv_std * gamma(i) + beta(i) with
inv_std = 1 / sqrt(variance + 1e-12) (BERT's epsilon). The hidden size is
read off the input's region.

Mirrors apps/src/suite/layer_norm.rs.
"""

from common import input_region


def algorithm(hl, params, app):
    hidden = input_region(app, "input")[0][1]
    i, t, b = hl.Var("i"), hl.Var("t"), hl.Var("b")
    inp, gamma, beta = params["input"], params["gamma"], params["beta"]
    f32 = hl.f32
    r = hl.RDom([hl.Range(0, hidden)], "r")
    row_sum = hl.Func("row_sum")
    row_sum[t, b] = f32(0.0)
    row_sum[t, b] = row_sum[t, b] + inp[r.x, t, b]
    mean = hl.Func("mean")
    mean[t, b] = row_sum[t, b] / f32(float(hidden))
    sq_sum = hl.Func("sq_sum")
    sq_sum[t, b] = f32(0.0)
    centered = inp[r.x, t, b] - mean[t, b]
    sq_sum[t, b] = sq_sum[t, b] + centered * centered
    inv_std = hl.Func("inv_std")
    inv_std[t, b] = f32(1.0) / hl.sqrt(sq_sum[t, b] / f32(float(hidden)) + f32(1e-12))
    output = hl.Func("output")
    output[i, t, b] = (inp[i, t, b] - mean[t, b]) * inv_std[t, b] * gamma[i] + beta[i]
    return {"row_sum": row_sum, "mean": mean, "sq_sum": sq_sum, "inv_std": inv_std, "output": output, "_r": r}
