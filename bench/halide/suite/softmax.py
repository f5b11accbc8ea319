"""Numerically stable softmax over the last (innermost) dimension of an f32
tensor, as a transformer's attention applies it to its scores
(input(k, q, h): key, query, head): the largest value of each row,
exps = exp(input - row_max), their sum, and exps / row_sum. The row length
is read off the input's region.

Mirrors apps/src/suite/softmax.rs.
"""

import math

from common import input_region


def algorithm(hl, params, app):
    length = input_region(app, "input")[0][1]
    k, q, h = hl.Var("k"), hl.Var("q"), hl.Var("h")
    inp = params["input"]
    r = hl.RDom([hl.Range(0, length)], "r")
    row_max = hl.Func("row_max")
    row_max[q, h] = hl.f32(-math.inf)
    row_max[q, h] = hl.max(row_max[q, h], inp[r.x, q, h])
    exps = hl.Func("exps")
    exps[k, q, h] = hl.exp(inp[k, q, h] - row_max[q, h])
    row_sum = hl.Func("row_sum")
    row_sum[q, h] = hl.f32(0.0)
    row_sum[q, h] = row_sum[q, h] + exps[r.x, q, h]
    output = hl.Func("output")
    output[k, q, h] = exps[k, q, h] / row_sum[q, h]
    return {"row_max": row_max, "exps": exps, "row_sum": row_sum, "output": output, "_r": r}
