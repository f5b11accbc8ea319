"""Reinhard et al.'s global tone-mapping operator ("Photographic Tone
Reproduction for Digital Images", SIGGRAPH 2002, equations 1-4) on a planar
f32 RGB high-dynamic-range image input(x, y, c): the luminance
L = 0.2126 R + 0.7152 G + 0.0722 B (Rec. 709); the log-average luminance
exp(mean(log(delta + L))) over the whole image (a full reduction,
delta = 1e-4); the luminance scaled to the key a = 0.18,
Ls = a L / log_average; the white point L_white the largest scaled
luminance of the image (a second full reduction); the mapped luminance
Ld = Ls (1 + Ls / L_white^2) / (1 + Ls); each channel scaled by Ld / L (L
kept above 1e-6), then gamma-encoded with exponent 1/2.2 and rounded to u8.
The image's size is read off the output's region.

Mirrors apps/src/suite/tone_map_reinhard.rs.
"""

from common import f32_ratio


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = params["input"]
    f32 = hl.f32

    def channel(k):
        return inp[x, y, k]

    lum = hl.Func("lum")
    lum[x, y] = channel(0) * f32(0.2126) + channel(1) * f32(0.7152) + channel(2) * f32(0.0722)
    r = hl.RDom([hl.Range(0, w), hl.Range(0, h)], "r")
    lum_r = lum[r.x, r.y]
    log_sum = hl.Func("log_sum")
    log_sum[()] = f32(0.0)
    log_sum[()] = log_sum[()] + hl.log(lum_r + f32(1e-4))
    max_lum = hl.Func("max_lum")
    max_lum[()] = f32(0.0)
    max_lum[()] = hl.max(max_lum[()], lum_r)
    log_average = hl.Func("log_average")
    log_average[()] = hl.exp(log_sum[()] / f32(float(w * h)))
    exposure = hl.Func("exposure")
    exposure[()] = f32(0.18) / log_average[()]
    white_sq = hl.Func("white_sq")
    white = max_lum[()] * exposure[()]
    white_sq[()] = white * white
    mapped = hl.Func("mapped")
    scaled = lum[x, y] * exposure[()]
    mapped[x, y] = scaled * (scaled / white_sq[()] + f32(1.0)) / (scaled + f32(1.0))
    output = hl.Func("output")
    ratio = mapped[x, y] / hl.max(lum[x, y], f32(1e-6))
    linear = inp[x, y, c] * ratio
    encoded = hl.pow(linear, f32_ratio(hl, 1.0, 2.2)) * f32(255.0) + f32(0.5)
    output[x, y, c] = hl.cast(hl.UInt(8), hl.clamp(encoded, f32(0.0), f32(255.0)))
    return {"lum": lum, "log_sum": log_sum, "max_lum": max_lum, "log_average": log_average, "exposure": exposure,
            "white_sq": white_sq, "mapped": mapped, "output": output, "_r": r}
