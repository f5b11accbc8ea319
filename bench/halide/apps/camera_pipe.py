"""A raw camera pipeline: a u16 Bayer mosaic (GRBG, 10-bit values) in, an
8-bit RGB image (x, y, c) out. The raw image is shifted so the output
starts 16 columns and 12 rows into it; hot pixels are suppressed (each
value clamped to the largest of its four same-colour neighbours); the
mosaic is demosaiced bilinearly in i32; a fixed 3x4 colour matrix (1/256
units) corrects the colour; a 1024-entry tone curve (gamma 2 blended with
an S-curve) maps each channel to 8 bits; a 3x3 unsharp mask sharpens it.

Expert schedule: the curve at root; the output in parallel strips of 32
rows, vectorized; the denoised mosaic, the demosaiced and the curved image
computed per strip, vectorized; the colour correction inlined.

Mirrors apps/src/camera_pipe.rs.
"""

MATRIX = [[400, -96, -48, -200], [-64, 360, -40, -200], [-16, -112, 384, -200]]


def algorithm(hl, params, app):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    i32, f32 = hl.Int(32), hl.Float(32)
    inp = params["input"]
    shifted = hl.Func("shifted")
    shifted[x, y] = inp[x + 16, y + 12]

    def s(dx, dy):
        return shifted[x + dx, y + dy]

    denoised = hl.Func("denoised")
    denoised[x, y] = hl.min(s(0, 0), hl.max(hl.max(s(-2, 0), s(2, 0)), hl.max(s(0, -2), s(0, 2))))

    def d(dx, dy):
        return hl.cast(i32, denoised[x + dx, y + dy])

    sides = (d(-1, 0) + d(1, 0) + d(0, -1) + d(0, 1)) / 4
    horizontal = (d(-1, 0) + d(1, 0)) / 2
    vertical = (d(0, -1) + d(0, 1)) / 2
    diagonals = (d(-1, -1) + d(1, -1) + d(-1, 1) + d(1, 1)) / 4
    red_row = (y % 2) == 0
    green_site = ((x + y) % 2) == 0
    green = hl.select(green_site, d(0, 0), sides)
    red = hl.select(green_site, hl.select(red_row, horizontal, vertical), hl.select(red_row, d(0, 0), diagonals))
    blue = hl.select(green_site, hl.select(red_row, vertical, horizontal), hl.select(red_row, diagonals, d(0, 0)))
    demosaiced = hl.Func("demosaiced")
    demosaiced[x, y, c] = hl.select(c == 0, red, hl.select(c == 1, green, blue))

    def row(i):
        m = MATRIX[i]
        return hl.i32(m[0]) * demosaiced[x, y, 0] + hl.i32(m[1]) * demosaiced[x, y, 1] + hl.i32(m[2]) * demosaiced[x, y, 2] + m[3]

    corrected = hl.Func("corrected")
    corrected[x, y, c] = hl.select(c == 0, row(0), hl.select(c == 1, row(1), row(2))) / 256

    curve = hl.Func("curve")
    f = hl.cast(f32, x) / hl.f32(1023.0)
    g = hl.sqrt(f)
    s_curve = g * g * (hl.f32(3.0) - g * hl.f32(2.0))
    curve[x] = hl.cast(hl.UInt(8), hl.clamp((g + s_curve) * hl.f32(0.5) * hl.f32(255.0) + hl.f32(0.5), hl.f32(0.0), hl.f32(255.0)))
    curved = hl.Func("curved")
    curved[x, y, c] = curve[hl.clamp(corrected[x, y, c], 0, 1023)]

    def k(dx, dy):
        return hl.cast(i32, curved[x + dx, y + dy, c])

    blurred = (k(-1, -1) + k(0, -1) * 2 + k(1, -1) + k(-1, 0) * 2 + k(0, 0) * 4 + k(1, 0) * 2 + k(-1, 1) + k(0, 1) * 2 + k(1, 1)) / 16
    processed = hl.Func("processed")
    processed[x, y, c] = hl.cast(hl.UInt(8), hl.clamp(k(0, 0) * 2 - blurred, 0, 255))
    return {"shifted": shifted, "denoised": denoised, "demosaiced": demosaiced, "corrected": corrected,
            "curve": curve, "curved": curved, "processed": processed}


def expert(hl, funcs, lanes, app):
    x, y, c, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("c"), hl.Var("yo"), hl.Var("yi")
    l32 = lanes(hl.Int(32))
    out = funcs["processed"]
    funcs["curve"].compute_root()
    out.reorder(x, c, y).split(y, yo, yi, 32).parallel(yo).vectorize(x, l32)
    funcs["denoised"].compute_at(out, yo).vectorize(x, l32)
    for name in ["demosaiced", "curved"]:
        funcs[name].compute_at(out, yo).reorder(x, c, y).vectorize(x, l32)
