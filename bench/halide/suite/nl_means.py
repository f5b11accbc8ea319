"""Non-local means denoising of an f32 RGB image, as Halide's apps/nl_means
with its defaults (patch size 7, search area 7, sigma 0.12): repeat-edge
boundary; squared differences of the image and its shifts (`dc`), summed
over channels (`d`), box-summed over the patch along y then x (`blur_d_y`,
`blur_d`); weights fast_exp(-blur_d / (sigma^2 patch^2)) (`w`); the image
with an alpha channel of 1 (`clamped_with_alpha`); the weighted sum over
the search area (`non_local_means_sum`); output colour / alpha, clamped to
[0, 1] (`non_local_means`).

Our fast_exp is our own polynomial and Halide's its own, so outputs compare
"close".

Mirrors apps/src/suite/nl_means.rs.
"""

import numpy as np

from common import repeat_edge

PATCH_SIZE = 7
SEARCH_AREA = 7
SIGMA = np.float32(0.12)


def algorithm(hl, params, app):
    x, y, c, dx, dy = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("dx"), hl.Var("dy")
    p = np.float32(PATCH_SIZE)
    inv_sigma_sq = hl.f32(float(np.float32(-1.0) / (SIGMA * SIGMA * p * p)))
    clamped = repeat_edge(hl, params["input"])
    dc = hl.Func("dc")
    diff = clamped[x, y, c] - clamped[x + dx, y + dy, c]
    dc[x, y, dx, dy, c] = diff * diff
    channels = hl.RDom([hl.Range(0, 3)], "channels")
    d = hl.Func("d")
    d[x, y, dx, dy] = hl.sum(dc[x, y, dx, dy, channels.x])
    patch_dom = hl.RDom([hl.Range(-(PATCH_SIZE // 2), PATCH_SIZE)], "patch_dom")
    blur_d_y = hl.Func("blur_d_y")
    blur_d_y[x, y, dx, dy] = hl.sum(d[x, y + patch_dom.x, dx, dy])
    blur_d = hl.Func("blur_d")
    blur_d[x, y, dx, dy] = hl.sum(blur_d_y[x + patch_dom.x, y, dx, dy])
    w = hl.Func("w")
    w[x, y, dx, dy] = hl.fast_exp(blur_d[x, y, dx, dy] * inv_sigma_sq)
    clamped_with_alpha = hl.Func("clamped_with_alpha")
    clamped_with_alpha[x, y, c] = hl.select(c == 0, clamped[x, y, 0],
                                            hl.select(c == 1, clamped[x, y, 1],
                                                      hl.select(c == 2, clamped[x, y, 2], hl.f32(1.0))))
    half = -(SEARCH_AREA // 2)
    s_dom = hl.RDom([hl.Range(half, SEARCH_AREA), hl.Range(half, SEARCH_AREA)], "s_dom")
    nl_sum = hl.Func("non_local_means_sum")
    nl_sum[x, y, c] = hl.f32(0.0)
    nl_sum[x, y, c] = nl_sum[x, y, c] + w[x, y, s_dom.x, s_dom.y] * clamped_with_alpha[x + s_dom.x, y + s_dom.y, c]
    output = hl.Func("non_local_means")
    output[x, y, c] = hl.clamp(nl_sum[x, y, c] / nl_sum[x, y, 3], hl.f32(0.0), hl.f32(1.0))
    return {"input_repeat_edge": clamped, "dc": dc, "d": d, "blur_d_y": blur_d_y, "blur_d": blur_d, "w": w,
            "clamped_with_alpha": clamped_with_alpha, "non_local_means_sum": nl_sum, "non_local_means": output,
            "_s_dom": s_dom}
