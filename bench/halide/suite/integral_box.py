"""A box filter through an integral image (summed-area table; OpenCV's
`integral`): i32 prefix sums of the u8 image along x (`row_sum`, a scan
over the width) then down y (`integral`, a scan over the height); each
output pixel is the sum over the square of radius 32 around it, cropped to
the image, from four corners of the table (a corner before the first row
or column reads 0), divided by the cropped area, rounded to nearest, as u8.

Mirrors apps/src/suite/integral_box.rs.
"""

RADIUS = 32


def algorithm(hl, params, app):
    w, h = app["output"]["region"][0][1], app["output"]["region"][1][1]
    x, y = hl.Var("x"), hl.Var("y")
    inp = params["input"]
    row_sum = hl.Func("row_sum")
    row_sum[x, y] = hl.cast(hl.Int(32), inp[x, y])
    rx = hl.RDom([hl.Range(1, w - 1)], "rx")
    row_sum[rx.x, y] = row_sum[rx.x - 1, y] + row_sum[rx.x, y]
    integral = hl.Func("integral")
    integral[x, y] = row_sum[x, y]
    ry = hl.RDom([hl.Range(1, h - 1)], "ry")
    integral[x, ry.x] = integral[x, ry.x - 1] + integral[x, ry.x]
    x0, x1 = hl.max(x - (RADIUS + 1), -1), hl.min(x + RADIUS, w - 1)
    y0, y1 = hl.max(y - (RADIUS + 1), -1), hl.min(y + RADIUS, h - 1)

    def corner(cx, cy):
        inside = (cx >= 0) & (cy >= 0)
        return hl.select(inside, integral[hl.max(cx, 0), hl.max(cy, 0)], 0)

    box_sum = hl.Func("box_sum")
    box_sum[x, y] = corner(x1, y1) - corner(x0, y1) - corner(x1, y0) + corner(x0, y0)
    area = (x1 - x0) * (y1 - y0)
    output = hl.Func("output")
    output[x, y] = hl.cast(hl.UInt(8), (box_sum[x, y] + area / 2) / area)
    return {"row_sum": row_sum, "integral": integral, "box_sum": box_sum, "output": output,
            "_scans": {"row_sum": rx, "integral": ry}}
