"""The non-recursive part of Canny's edge detector on an 8-bit grayscale
image, as OpenCV's `Canny` computes it (without the hysteresis flood
fill): a 5x5 Gaussian blur ([1 4 6 4 1] along x then y, rounded back to 8
bits), the 3x3 Sobel derivatives, the gradient magnitude
`sqrt(gx^2 + gy^2)`, its direction quantized to four sectors with OpenCV's
fixed-point tangent test (tan 22.5 in 15-bit fixed point), non-maximum
suppression against the two neighbours across the edge (OpenCV's
comparisons, strict on one side), and the double threshold: 255 for a
local maximum above 100, 128 above 40, else 0. Repeat-edge boundary.

Halide's `abs` of an i32 is a u32 (ours stays i32): it is cast back.

Mirrors apps/src/suite/canny.rs.
"""

from common import repeat_edge

TG22 = 13573
LOW, HIGH = 40.0, 100.0


def algorithm(hl, params, app):
    x, y = hl.Var("x"), hl.Var("y")
    i32, u8, f32 = hl.Int(32), hl.UInt(8), hl.Float(32)
    clamped = repeat_edge(hl, params["input"])

    def at(f, dx, dy):
        return f[x + dx, y + dy]

    def c(dx):
        return hl.cast(i32, clamped[x + dx, y])

    blur_x = hl.Func("blur_x")
    blur_x[x, y] = c(-2) + c(-1) * 4 + c(0) * 6 + c(1) * 4 + c(2)

    def b(dy):
        return at(blur_x, 0, dy)

    blurred = hl.Func("blurred")
    blurred[x, y] = (b(-2) + b(-1) * 4 + b(0) * 6 + b(1) * 4 + b(2) + 128) >> 8

    def column(dx):
        return at(blurred, dx, -1) + at(blurred, dx, 0) * 2 + at(blurred, dx, 1)

    def row(dy):
        return at(blurred, -1, dy) + at(blurred, 0, dy) * 2 + at(blurred, 1, dy)

    gx = hl.Func("gx")
    gx[x, y] = column(1) - column(-1)
    gy = hl.Func("gy")
    gy[x, y] = row(1) - row(-1)
    dx, dy = gx[x, y], gy[x, y]
    magnitude = hl.Func("magnitude")
    magnitude[x, y] = hl.sqrt(hl.cast(f32, dx * dx + dy * dy))
    ax = hl.cast(i32, hl.abs(dx))
    ay = hl.cast(i32, hl.abs(dy)) << 15
    tg22 = ax * TG22
    tg67 = tg22 + (ax << 16)
    direction = hl.Func("direction")
    direction[x, y] = hl.cast(u8, hl.select(ay < tg22, 0, hl.select(ay > tg67, 2, hl.select((dx ^ dy) < 0, 3, 1))))

    def m():
        return at(magnitude, 0, 0)

    def beats(dx, dy):
        return m() > at(magnitude, dx, dy)

    def holds(dx, dy):
        return m() >= at(magnitude, dx, dy)

    d = at(direction, 0, 0)
    local_max = hl.select(d == 0, beats(-1, 0) & holds(1, 0),
                          hl.select(d == 2, beats(0, -1) & holds(0, 1),
                                    hl.select(d == 1, beats(-1, -1) & beats(1, 1), beats(1, -1) & beats(-1, 1))))
    output = hl.Func("output")
    output[x, y] = hl.cast(u8, hl.select(local_max & (m() > hl.f32(HIGH)), 255,
                                         hl.select(local_max & (m() > hl.f32(LOW)), 128, 0)))
    return {"input_repeat_edge": clamped, "blur_x": blur_x, "blurred": blurred, "gx": gx, "gy": gy,
            "magnitude": magnitude, "direction": direction, "output": output}
