"""Histogram equalization of a u8 RGB image (x, y, c): the luminance `Y`
(f32) of the channels cast to f32, its 256-bin histogram per row
(`hist_rows`, i32, a data-dependent update over x with bin
u8(clamp(Y, 0, 255))), summed over the rows (`hist`), the cumulative
distribution (`cdf`, a scan over bins 1..255), the equalized luminance
`eq = clamp(f32(cdf(bin)) * (255 / pixels), 0, 255)`, and the chroma `Cr`,
`Cb` recombined with it into RGB, clamped to [0, 255] and cast to u8. The
image's width and height (read off the output's region) are part of the
algorithm.

Expert schedule: row histograms at root, rows in parallel; the sum of rows
vectorized across bins; the scan serial; the output in parallel strips of
8 rows, rows outside channels, vectorized, with the colour conversions
inlined.

Mirrors apps/src/hist_eq.rs.
"""

from common import f32_ratio, update_tail


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    f32 = hl.Float(32)

    def channel(k, x, y):
        return hl.cast(f32, inp[x, y, k])

    luma = hl.Func("Y")
    luma[x, y] = channel(0, x, y) * hl.f32(0.299) + channel(1, x, y) * hl.f32(0.587) + channel(2, x, y) * hl.f32(0.114)

    def bin_(x, y):
        return hl.cast(hl.UInt(8), hl.clamp(luma[x, y], hl.f32(0.0), hl.f32(255.0)))

    hist_rows = hl.Func("hist_rows")
    hist_rows[x, y] = hl.i32(0)
    rx = hl.RDom([hl.Range(0, w)], "rx")
    b = hl.cast(hl.Int(32), bin_(rx.x, y))
    hist_rows[b, y] = hist_rows[b, y] + 1
    hist = hl.Func("hist")
    hist[x] = hl.i32(0)
    ry = hl.RDom([hl.Range(0, h)], "ry")
    hist[x] = hist[x] + hist_rows[x, ry.x]
    cdf = hl.Func("cdf")
    cdf[x] = hist[0]
    rb = hl.RDom([hl.Range(1, 255)], "rb")
    cdf[rb.x] = cdf[rb.x - 1] + hist[rb.x]
    eq = hl.Func("eq")
    scale = f32_ratio(hl, 255.0, float(w * h))
    eq[x, y] = hl.clamp(hl.cast(f32, cdf[hl.cast(hl.Int(32), bin_(x, y))]) * scale, hl.f32(0.0), hl.f32(255.0))
    cr = hl.Func("Cr")
    cr[x, y] = (channel(0, x, y) - luma[x, y]) * hl.f32(0.713) + hl.f32(128.0)
    cb = hl.Func("Cb")
    cb[x, y] = (channel(2, x, y) - luma[x, y]) * hl.f32(0.564) + hl.f32(128.0)
    e, r, bl = eq[x, y], cr[x, y] - hl.f32(128.0), cb[x, y] - hl.f32(128.0)
    red = e + r * hl.f32(1.4)
    green = e - bl * hl.f32(0.343) - r * hl.f32(0.711)
    blue = e + bl * hl.f32(1.765)
    output = hl.Func("output")
    rgb = hl.select(c == 0, red, hl.select(c == 1, green, blue))
    output[x, y, c] = hl.cast(hl.UInt(8), hl.clamp(rgb, hl.f32(0.0), hl.f32(255.0)))
    return {"Y": luma, "hist_rows": hist_rows, "hist": hist, "cdf": cdf, "eq": eq, "Cr": cr, "Cb": cb,
            "output": output, "_ry": ry}


def expert(hl, funcs, lanes, app):
    x, y, c, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("yo"), hl.Var("yi")
    l32 = lanes(hl.Float(32))
    funcs["hist_rows"].compute_root().parallel(y)
    funcs["hist_rows"].update(0).parallel(y)
    funcs["hist"].compute_root().vectorize(x, l32)
    funcs["hist"].update(0).reorder(x, funcs["_ry"].x).vectorize(x, l32, update_tail(hl))
    funcs["cdf"].compute_root()
    funcs["output"].reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, l32)
