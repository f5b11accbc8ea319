"""Multi-head scaled dot-product attention (Vaswani et al. 2017, equation 1),
softmax(Q K^T / sqrt(d)) V per head, in f32, with the head's features
innermost (q(e, i, h): feature, token, head; likewise k and v): the dot
products dot(j, i, h) of query i with key j, scaled by 1 / sqrt(d); a
numerically stable softmax over the keys (row_max, exps, row_sum, weights);
and the weighted sum of the values,
output(e, i, h) = sum_j weights(j, i, h) * v(e, j, h). The feature count
and sequence length are read off the inputs' region.

Mirrors apps/src/suite/attention.rs.
"""

import math

import numpy as np

from common import input_region


def algorithm(hl, params, app):
    region = input_region(app, "q")
    d, s = region[0][1], region[1][1]
    e, i, j, h = hl.Var("e"), hl.Var("i"), hl.Var("j"), hl.Var("h")
    q, k, v = params["q"], params["k"], params["v"]
    f32 = hl.f32
    rd = hl.RDom([hl.Range(0, d)], "rd")
    rj = hl.RDom([hl.Range(0, s)], "rj")
    dot = hl.Func("dot")
    dot[j, i, h] = f32(0.0)
    dot[j, i, h] = dot[j, i, h] + q[rd.x, i, h] * k[rd.x, j, h]
    scale = f32(float(np.float32(1.0) / np.sqrt(np.float32(d))))
    scores = hl.Func("scores")
    scores[j, i, h] = dot[j, i, h] * scale
    row_max = hl.Func("row_max")
    row_max[i, h] = f32(-math.inf)
    row_max[i, h] = hl.max(row_max[i, h], scores[rj.x, i, h])
    exps = hl.Func("exps")
    exps[j, i, h] = hl.exp(scores[j, i, h] - row_max[i, h])
    row_sum = hl.Func("row_sum")
    row_sum[i, h] = f32(0.0)
    row_sum[i, h] = row_sum[i, h] + exps[rj.x, i, h]
    weights = hl.Func("weights")
    weights[j, i, h] = exps[j, i, h] / row_sum[i, h]
    output = hl.Func("output")
    output[e, i, h] = f32(0.0)
    output[e, i, h] = output[e, i, h] + weights[rj.x, i, h] * v[e, rj.x, h]
    return {"dot": dot, "scores": scores, "row_max": row_max, "exps": exps, "row_sum": row_sum,
            "weights": weights, "output": output, "_rd": rd, "_rj": rj}
