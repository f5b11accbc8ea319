"""Shared pieces of the Halide side of the benchmark: element types, the
input pattern, buffers allocated by Halide, vector widths, and small
expression helpers the app modules use (fold, lerp, clamped access).

Everything here mirrors what our Rust bench (`apps/`, binary `bench`) does,
so that Halide sees exactly the inputs ours sees and writes outputs that can
be compared bit for bit with ours.
"""

import numpy as np

# Manifest type names -> (numpy dtype, bits, kind) where kind is
# "u" (unsigned), "i" (signed) or "f" (float).
TYPES = {
    "u8": (np.uint8, 8, "u"),
    "u16": (np.uint16, 16, "u"),
    "u32": (np.uint32, 32, "u"),
    "i8": (np.int8, 8, "i"),
    "i16": (np.int16, 16, "i"),
    "i32": (np.int32, 32, "i"),
    "f32": (np.float32, 32, "f"),
    "f64": (np.float64, 64, "f"),
}


def numpy_type(name):
    return np.dtype(TYPES[name][0])


def halide_type(hl, name):
    """The Halide type for a manifest type name (u8, ..., f64)."""
    _, bits, kind = TYPES[name]
    return {"u": hl.UInt, "i": hl.Int, "f": hl.Float}[kind](bits)


def is_float(name):
    return TYPES[name][2] == "f"


# ---------------------------------------------------------------- inputs


def pattern(type_name, region, salt=0):
    """Our input pattern over `region` ([[min, extent], ...], dim 0 first),
    as a numpy array in C order (so its shape is the extents reversed and
    dim 0 is the last, contiguous axis).

    At absolute coordinates c0..cn: h = 17 + 7919 * salt (the input's
    position among the pipeline's inputs), then h = h*31 + c for each
    coordinate, dim 0 first; v = h & 1023 for 16-bit and wider integers,
    h & 255 for 8-bit types; floats hold v / 1024 (computed in f64, then
    cast)."""
    dtype, bits, kind = TYPES[type_name]
    h = np.array(17 + 7919 * salt, dtype=np.int64)
    for d, (lo, extent) in enumerate(region):
        shape = [1] * len(region)
        shape[len(region) - 1 - d] = extent
        c = np.arange(lo, lo + extent, dtype=np.int64).reshape(shape)
        h = h * 31 + c
    v = h & (255 if bits == 8 else 1023)
    if kind == "f":
        return (v.astype(np.float64) / 1024.0).astype(dtype)
    return v.astype(dtype)


def halide_buffer(hl, type_name, region, values=None):
    """A buffer from Halide's own (aligned) allocator over `region` (mins
    set), and a numpy view of its memory in C order (dim 0 last)."""
    buf = hl.Buffer(halide_type(hl, type_name), [extent for _, extent in region])
    buf.set_min([lo for lo, _ in region])
    view = np.asarray(buf)
    expected = tuple(extent for _, extent in reversed(region))
    assert buf.dim(0).stride() == 1 and view.shape == expected, (view.shape, expected)
    if values is not None:
        view[...] = values
    return buf, view


def read_raw(path, type_name, region):
    """One of our raw outputs (little-endian, dim 0 fastest) as a C-order
    array; None if the file is missing; raises if its size is wrong."""
    if not path.exists():
        return None
    dtype = numpy_type(type_name).newbyteorder("<")
    data = np.fromfile(path, dtype=dtype)
    shape = tuple(extent for _, extent in reversed(region))
    expected = int(np.prod(shape)) if shape else 1
    if data.size != expected:
        raise ValueError(f"{path} holds {data.size} values, expected {expected} (region {region})")
    return data.reshape(shape).astype(numpy_type(type_name))


def input_region(app, name):
    """The region ([[min, extent], ...]) of input `name` in a manifest app."""
    return next(i["region"] for i in app["inputs"] if i["name"] == name)


# ---------------------------------------------------------------- vectors


def vector_bytes(hl, target):
    """The width of the host's widest vector registers in bytes, as our Rust
    side decides it from the CPU features LLVM reports: 64 with AVX-512, 32
    with AVX or AVX2, else 16."""
    f = hl.TargetFeature
    if target.has_feature(f.AVX512) or target.has_feature(f.AVX512_Skylake):
        return 64
    if target.has_feature(f.AVX2) or target.has_feature(f.AVX):
        return 32
    return 16


def lanes_function(hl, target):
    """`lanes(t)`: the natural vector lanes of Halide type `t` on the host
    (vector bytes / element bytes, at least 1)."""
    width = vector_bytes(hl, target)

    def lanes(t):
        return max(1, width // max(1, t.bytes()))

    return lanes


# ---------------------------------------------------------------- helpers


def fold(terms):
    """terms[0] + terms[1] + ..., summed left to right (as our
    `.reduce(|a, b| a + b)`)."""
    terms = list(terms)
    acc = terms[0]
    for t in terms[1:]:
        acc = acc + t
    return acc


def lerp(a, b, w):
    """a + (b - a) * w, written out (the form our apps use for a float lerp)."""
    return a + (b - a) * w


def f32_ratio(hl, a, b):
    """The f32 constant a / b with the division done in f32 (as Rust's
    `a as f32 / b as f32`)."""
    return hl.f32(float(np.float32(a) / np.float32(b)))


def repeat_edge(hl, param):
    """Our `boundary::repeat_edge`: a Func named `{input}_repeat_edge` over
    vars `_0, _1, ...` reading `param` with every coordinate clamped to
    [min, min + extent - 1] of its buffer."""
    dims = param.dimensions()
    vs = [hl.Var(f"_{d}") for d in range(dims)]
    f = hl.Func(f"{param.name()}_repeat_edge")
    f[vs] = param[[hl.clamp(v, param.dim(d).min(), param.dim(d).min() + param.dim(d).extent() - 1)
                   for d, v in enumerate(vs)]]
    return f


# ---------------------------------------------------------------- schedules


def line_buffered(hl, funcs, output, producers, strip, lanes):
    """Strips of `strip` rows of `output` in parallel, vectorized along x by
    `lanes`; each of `producers` stored per strip and computed per row, so
    that it slides down the strip (a line buffer). Our `idioms::line_buffered`."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    out = funcs[output]
    out.split(y, yo, yi, strip).parallel(yo).vectorize(x, lanes)
    for p in producers:
        funcs[p].store_at(out, yo).compute_at(out, yi).vectorize(x, lanes)


def root_strips(hl, func, strip, lanes):
    """`func` computed at root, rows in parallel strips of `strip`,
    vectorized along x by `lanes`. Our `idioms::root_strips`."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    func.compute_root().split(y, yo, yi, strip).parallel(yo).vectorize(x, lanes)


def update_tail(hl):
    """The tail strategy our `Auto` picks for a split of an update
    definition's loop: guard_with_if (Halide's own default there is
    round_up; we pass ours explicitly so both compute the same points)."""
    return hl.TailStrategy.GuardWithIf
