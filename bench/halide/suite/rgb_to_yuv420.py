"""Colour conversion of an 8-bit packed RGB image (RGB24: channels
interleaved, input(c, x, y)) to planar YUV 4:2:0, with the BT.601
limited-range integer arithmetic of libyuv's RGB24ToI420 and ffmpeg's
swscale: Y = (66 R + 129 G + 25 B + 0x1080) >> 8 at every pixel; the chroma
from the rounded mean of each 2x2 block of RGB values,
U = (112 B - 74 G - 38 R + 0x8080) >> 8 and V = (112 R - 94 G - 18 B +
0x8080) >> 8 (all in i32).

The single output is the frame as one u8 buffer of W x 3H/2: the Y plane in
rows [0, H), then the U plane (W/2 x H/2) and the V plane side by side below
it (Microsoft's IMC4 layout). Reads of the planes are clamped to their
boxes. The image's size is read off the input's region.

Mirrors apps/src/suite/rgb_to_yuv420.rs.
"""

from common import input_region


def algorithm(hl, params, app):
    region = input_region(app, "input")
    w, h = region[1][1], region[2][1]
    c, x, y = hl.Var("c"), hl.Var("x"), hl.Var("y")
    inp = params["input"]

    def px(k, x, y):
        return hl.cast(hl.Int(32), inp[k, x, y])

    r, g, b = 0, 1, 2
    luma = hl.Func("luma")
    luma[x, y] = (px(r, x, y) * 66 + px(g, x, y) * 129 + px(b, x, y) * 25 + 0x1080) >> 8
    average = hl.Func("average")
    x2, y2 = x * 2, y * 2
    average[c, x, y] = (px(c, x2, y2) + px(c, x2 + 1, y2) + px(c, x2, y2 + 1) + px(c, x2 + 1, y2 + 1) + 2) >> 2

    def avg(k):
        return average[k, x, y]

    u = hl.Func("u")
    u[x, y] = (avg(b) * 112 - avg(g) * 74 - avg(r) * 38 + 0x8080) >> 8
    v = hl.Func("v")
    v[x, y] = (avg(r) * 112 - avg(g) * 94 - avg(b) * 18 + 0x8080) >> 8
    cw, ch = w // 2, h // 2
    chroma_y = hl.clamp(y - h, 0, ch - 1)
    # hl.Expr(...): a select of two FuncRefs would be a Tuple select.
    chroma = hl.select(x < cw, hl.Expr(u[hl.clamp(x, 0, cw - 1), chroma_y]),
                       hl.Expr(v[hl.clamp(x - cw, 0, cw - 1), chroma_y]))
    output = hl.Func("output")
    output[x, y] = hl.cast(hl.UInt(8), hl.select(y < h, hl.Expr(luma[x, hl.clamp(y, 0, h - 1)]), chroma))
    return {"luma": luma, "average": average, "u": u, "v": v, "output": output}
