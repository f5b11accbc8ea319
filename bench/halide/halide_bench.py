"""Times four pipelines under Halide 21's JIT and compares them with ours.

The pipelines (blur, stencil_chain, gaussian, matmul) are written with
Halide's Python API, algorithm and hand-written "expert" schedule alike, to
match the ones `hlc bench` measures. Each is compiled with `compile_jit()`
(timed, after a throwaway compile that builds Halide's shared JIT runtime)
and then realized into pre-allocated output buffers under the
benchmarking rule `hlc bench` also uses: 2 warm-up runs, then samples until
there are at least 5 and either 200 samples were taken or 2 s were spent;
the minimum (best of samples) and the median are reported.

Inputs are filled exactly as ours are: at absolute coordinates (x, y),
`v = ((17*31 + x)*31 + y) & 1023`; u16 inputs hold v, f32 inputs v / 1024.

With `--ours` (the JSON of `hlc bench --json`) the script prints a markdown
table of our naive and expert times beside Halide's expert times; with
`--outputs` it also compares Halide's outputs with our expert schedules' raw
outputs (`{pipeline}.bin`). `--self-check` checks Halide's outputs against
plain numpy implementations of the same algorithms (use small sizes).

It is run by `bench/halide/run.sh`; by hand, for example:

    python bench/halide/halide_bench.py --threads 2 \
        --ours ours.json --outputs ours_outputs --markdown table.md
    python bench/halide/halide_bench.py --width 256 --height 256 \
        --matmul-n 128 --self-check

It needs Python 3.11, numpy and the `halide` package (21.x).
"""

import argparse
import importlib.metadata
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WARMUP = 2
MIN_SAMPLES = 5
MAX_SAMPLES = 200
BUDGET_S = 2.0
# f32 outputs differing from ours by more than this, relative to the largest
# magnitude of Halide's output, are flagged as a mismatch.
RELATIVE_TOLERANCE = 1e-3


@dataclass
class Bench:
    """One pipeline, scheduled and ready to realize."""

    name: str
    pipeline: object  # hl.Pipeline
    output: np.ndarray  # (rows, cols) view of the output buffer's memory
    output_buffer: object  # hl.Buffer over the output region
    inputs: list  # the input arrays, kept alive with the buffers over them
    reference: object  # callable computing the output with numpy


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, help="size of Halide's thread pool (HL_NUM_THREADS)")
    p.add_argument("--width", type=int, default=1536)
    p.add_argument("--height", type=int, default=2560)
    p.add_argument("--chain-stages", type=int, default=8)
    p.add_argument("--matmul-n", type=int, default=1024)
    p.add_argument("--ours", type=Path, help="JSON written by `hlc bench --json`")
    p.add_argument("--outputs", type=Path, help="directory of our raw outputs ({pipeline}.bin)")
    p.add_argument("--json", type=Path, help="write Halide's results and the comparison here")
    p.add_argument("--markdown", type=Path, help="also write the tables here")
    p.add_argument("--self-check", action="store_true", help="check Halide's outputs against numpy references")
    return p.parse_args()


# ---------------------------------------------------------------- inputs


def fill(xmin, ymin, width, height, dtype):
    """The input pattern over [xmin, xmin+width) x [ymin, ymin+height),
    as a (height, width) array (x fastest)."""
    x = np.arange(xmin, xmin + width, dtype=np.int64)[None, :]
    y = np.arange(ymin, ymin + height, dtype=np.int64)[:, None]
    v = ((17 * 31 + x) * 31 + y) & 1023
    if dtype == np.uint16:
        return v.astype(np.uint16)
    return (v.astype(np.float64) / 1024.0).astype(np.float32)


def halide_buffer(hl, dtype, xmin, ymin, width, height, values=None):
    """A buffer allocated by Halide's own (aligned) allocator, as Halide
    code would use, over [xmin, xmin+width) x [ymin, ymin+height); returns it
    and a (height, width) numpy view of its memory (x fastest)."""
    buf = hl.Buffer(hl.UInt(16) if dtype == np.uint16 else hl.Float(32), [width, height])
    buf.set_min([xmin, ymin])
    view = np.asarray(buf)
    assert buf.dim(0).stride() == 1 and view.shape == (height, width)
    if values is not None:
        view[...] = values
    return buf, view


def make_input(hl, name, dtype, xmin, ymin, width, height):
    """An ImageParam bound to a filled buffer, and the numpy view of it."""
    buf, view = halide_buffer(hl, dtype, xmin, ymin, width, height, fill(xmin, ymin, width, height, dtype))
    param = hl.ImageParam(hl.UInt(16) if dtype == np.uint16 else hl.Float(32), 2, name)
    param.set(buf)
    return param, view


def make_bench(hl, name, out_func, dtype, width, height, inputs, reference):
    buf, view = halide_buffer(hl, dtype, 0, 0, width, height)
    return Bench(name, hl.Pipeline(out_func), view, buf, inputs, reference)


# ---------------------------------------------------------------- pipelines


def blur(hl, w, h, l16):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp, a = make_input(hl, "input", np.uint16, -1, -1, w + 2, h + 2)
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    blur_x[x, y] = (inp[x - 1, y] + inp[x, y] + inp[x + 1, y]) / 3
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3

    blur_y.split(y, yo, yi, 32).parallel(yo).vectorize(x, l16)
    blur_x.store_at(blur_y, yo).compute_at(blur_y, yi).vectorize(x, l16)

    def reference():
        bx = (a[:, :-2] + a[:, 1:-1] + a[:, 2:]) // np.uint16(3)  # rows -1..h, cols 0..w-1
        return (bx[:-2] + bx[1:-1] + bx[2:]) // np.uint16(3)

    return make_bench(hl, "blur", blur_y, np.uint16, w, h, [a], reference)


def fold(terms):
    """terms[0] + terms[1] + ..., summed left to right."""
    acc = terms[0]
    for t in terms[1:]:
        acc = acc + t
    return acc


def box5_taps():
    """The (dx, dy) taps of the 5x5 box, dy outer, dx inner."""
    return [(dx, dy) for dy in range(-2, 3) for dx in range(-2, 3)]


def stencil_chain(hl, w, h, stages, l32):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    m = 2 * stages
    inp, a = make_input(hl, "input", np.float32, -m, -m, w + 2 * m, h + 2 * m)
    scale = np.float32(1.0 / 25)
    funcs = []
    prev = inp
    for k in range(stages):
        f = hl.Func(f"s{k}")
        f[x, y] = fold([prev[x + dx, y + dy] for dx, dy in box5_taps()]) * hl.f32(float(scale))
        funcs.append(f)
        prev = f

    out = funcs[-1]
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, l32)
    for f in funcs[:-1]:
        f.store_at(out, yo).compute_at(out, yi).vectorize(x, l32)

    def reference():
        cur = a
        for _ in range(stages):
            rows, cols = cur.shape[0] - 4, cur.shape[1] - 4
            taps = [cur[2 + dy : 2 + dy + rows, 2 + dx : 2 + dx + cols] for dx, dy in box5_taps()]
            cur = fold(taps) * scale
        return cur

    return make_bench(hl, "stencil_chain", out, np.float32, w, h, [a], reference)


GAUSSIAN_WEIGHTS = [np.float32(c / 64.0) for c in (1, 6, 15, 20, 15, 6, 1)]


def gaussian(hl, w, h, l32):
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    inp, a = make_input(hl, "input", np.float32, -3, -3, w + 6, h + 6)
    ws = [hl.f32(float(c)) for c in GAUSSIAN_WEIGHTS]
    gx, gy = hl.Func("gx"), hl.Func("gy")
    gx[x, y] = fold([ws[i] * inp[x + i - 3, y] for i in range(7)])
    gy[x, y] = fold([ws[i] * gx[x, y + i - 3] for i in range(7)])

    gy.split(y, yo, yi, 32).parallel(yo).vectorize(x, l32)
    gx.store_at(gy, yo).compute_at(gy, yi).vectorize(x, l32)

    def reference():
        gxa = fold([GAUSSIAN_WEIGHTS[i] * a[:, i : i + w] for i in range(7)])  # rows -3..h+2
        return fold([GAUSSIAN_WEIGHTS[i] * gxa[i : i + h] for i in range(7)])

    return make_bench(hl, "gaussian", gy, np.float32, w, h, [a], reference)


def matmul(hl, n, l32):
    x, y = hl.Var("x"), hl.Var("y")
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    pa, a = make_input(hl, "A", np.float32, 0, 0, n, n)
    pb, b = make_input(hl, "B", np.float32, 0, 0, n, n)
    r = hl.RDom([hl.Range(0, n)], "r")
    c = hl.Func("C")
    c[x, y] = hl.f32(0.0)
    c[x, y] += pa[r.x, y] * pb[x, r.x]

    c.vectorize(x, l32)
    c.update().tile(x, y, xo, yo, xi, yi, l32, 8).reorder(xi, yi, r.x, xo, yo).vectorize(xi).unroll(yi).parallel(yo)

    def reference():
        # C(x, y) = sum_r A(r, y) * B(x, r); rows are y, so this is A @ B.
        return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)

    return make_bench(hl, "matmul", c, np.float32, n, n, [a, b], reference)


# ---------------------------------------------------------------- timing


def warm_up_jit(hl, target):
    """Compiles a trivial pipeline so that building Halide's shared JIT
    runtime (about 0.4 s, once per process) is not charged to the first
    pipeline's compile time."""
    x = hl.Var("x")
    f = hl.Func("jit_warm_up")
    f[x] = x
    hl.Pipeline(f).compile_jit(target)


def time_bench(bench, target):
    """Compiles and times `bench`; returns Halide's row of results."""
    started = time.perf_counter()
    bench.pipeline.compile_jit(target)
    compile_ms = (time.perf_counter() - started) * 1e3

    def run():
        bench.pipeline.realize(bench.output_buffer, target)

    for _ in range(WARMUP):
        run()
    times = []
    started = time.perf_counter()
    while len(times) < MIN_SAMPLES or (len(times) < MAX_SAMPLES and time.perf_counter() - started < BUDGET_S):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    times.sort()
    return {
        "pipeline": bench.name,
        "schedule": "expert",
        "compile_ms": compile_ms,
        "min_ms": times[0] * 1e3,
        "median_ms": times[len(times) // 2] * 1e3,
        "samples": len(times),
    }


# ---------------------------------------------------------------- comparing


def max_abs_diff(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def compare_outputs(halide, ours):
    """How our output compares with Halide's: a dict with `status`
    ("equal", "close" or "mismatch"), `max_abs_diff` and a table cell."""
    if halide.dtype == np.uint16:
        differing = int(np.count_nonzero(halide != ours))
        diff = max_abs_diff(halide, ours)
        if differing == 0:
            return {"status": "equal", "max_abs_diff": 0.0, "cell": "equal"}
        cell = f"MISMATCH: {differing} values differ, max abs diff {diff:g}"
        return {"status": "mismatch", "max_abs_diff": diff, "cell": cell}
    if not np.all(np.isfinite(ours)):
        return {"status": "mismatch", "max_abs_diff": math.inf, "cell": "MISMATCH: non-finite values"}
    diff = max_abs_diff(halide, ours)
    if diff == 0.0:
        return {"status": "equal", "max_abs_diff": 0.0, "cell": "equal"}
    scale = float(np.max(np.abs(halide))) or 1.0
    if diff > RELATIVE_TOLERANCE * scale:
        return {"status": "mismatch", "max_abs_diff": diff, "cell": f"MISMATCH: max abs diff {short(diff)} (max magnitude {short(scale)})"}
    return {"status": "close", "max_abs_diff": diff, "cell": f"max abs diff {short(diff)}"}


def short(v):
    """A float in two significant digits, exponent without padding (3.1e-7)."""
    s = f"{v:.2g}"
    if "e" in s:
        mantissa, exponent = s.split("e")
        s = f"{mantissa}e{int(exponent)}"
    return s


def read_ours_output(directory, bench):
    path = directory / f"{bench.name}.bin"
    if not path.exists():
        return None
    data = np.fromfile(path, dtype=np.dtype(bench.output.dtype).newbyteorder("<"))
    if data.size != bench.output.size:
        sys.exit(f"error: {path} holds {data.size} values, expected {bench.output.size} ({bench.output.shape[1]}x{bench.output.shape[0]})")
    return data.reshape(bench.output.shape).astype(bench.output.dtype)


def load_ours(path, args):
    ours = json.loads(path.read_text())
    expected = {"width": args.width, "height": args.height, "chain_stages": args.chain_stages, "matmul_n": args.matmul_n}
    wrong = [f"{k}: ours {ours.get(k)}, here {v}" for k, v in expected.items() if ours.get(k) != v]
    if wrong:
        sys.exit(f"error: {path} was measured at other sizes ({'; '.join(wrong)}); pass the same sizes to both")
    if args.threads is not None and ours.get("threads") != args.threads:
        print(f"warning: ours ran with {ours.get('threads')} threads, Halide with {args.threads}", file=sys.stderr)
    return ours


# ---------------------------------------------------------------- reporting


def geomean(values):
    values = [v for v in values if v is not None]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v, digits):
    return "–" if v is None else f"{v:.{digits}f}"


def comparison_rows(halide_rows, strict_rows, ours, outputs):
    ours_rows = {(r["pipeline"], r["schedule"]): r for r in (ours or {}).get("rows", [])}
    rows = []
    for h, strict in zip(halide_rows, strict_rows):
        naive = ours_rows.get((h["pipeline"], "naive"))
        expert = ours_rows.get((h["pipeline"], "expert"))
        naive_ms = naive["min_ms"] if naive else None
        expert_ms = expert["min_ms"] if expert else None
        rows.append({
            "pipeline": h["pipeline"],
            "ours_naive_min_ms": naive_ms,
            "ours_expert_min_ms": expert_ms,
            "ours_expert_compile_ms": expert["compile_ms"] if expert else None,
            "halide_expert_min_ms": h["min_ms"],
            "halide_compile_ms": h["compile_ms"],
            "halide_over_ours": h["min_ms"] / expert_ms if expert_ms else None,
            "halide_strict_min_ms": strict["min_ms"],
            "halide_strict_over_ours": strict["min_ms"] / expert_ms if expert_ms else None,
            "naive_over_expert": naive_ms / expert_ms if naive_ms and expert_ms else None,
            "outputs": outputs.get(h["pipeline"]),
        })
    return rows


def markdown(header, rows):
    lines = [header, ""]
    lines.append("| pipeline | ours naive (ms) | ours expert (ms) | Halide 21 expert (ms) | Halide / ours "
                 "| Halide strict_float (ms) | strict / ours | naive / expert (ours) | outputs |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        cell = r["outputs"]["cell"] if r["outputs"] else "not compared"
        lines.append(
            f"| {r['pipeline']} | {fmt(r['ours_naive_min_ms'], 3)} | {fmt(r['ours_expert_min_ms'], 3)} "
            f"| {fmt(r['halide_expert_min_ms'], 3)} | {fmt(r['halide_over_ours'], 2)} "
            f"| {fmt(r['halide_strict_min_ms'], 3)} | {fmt(r['halide_strict_over_ours'], 2)} "
            f"| {fmt(r['naive_over_expert'], 2)} | {cell} |"
        )
    g_halide = geomean([r["halide_over_ours"] for r in rows])
    g_strict = geomean([r["halide_strict_over_ours"] for r in rows])
    g_naive = geomean([r["naive_over_expert"] for r in rows])
    lines.append(f"| geometric mean | | | | {fmt(g_halide, 2)} | | {fmt(g_strict, 2)} | {fmt(g_naive, 2)} | |")
    lines.append("")
    lines.append("Times are the best of the samples. A ratio above 1 means ours is faster. strict_float: Halide")
    lines.append("computes float operations as written (no reassociation or contraction), as ours always does.")
    lines.append("")
    lines.append("| pipeline | Halide 21 compile_jit (ms) | ours expert compile (ms) |")
    lines.append("|---|---:|---:|")
    for r in rows:
        lines.append(f"| {r['pipeline']} | {fmt(r['halide_compile_ms'], 1)} | {fmt(r['ours_expert_compile_ms'], 1)} |")
    return "\n".join(lines) + "\n", g_halide, g_naive


# ---------------------------------------------------------------- checks


def self_check(benches):
    """Asserts Halide's outputs match the numpy references; prints the diffs."""
    for b in benches:
        ref = b.reference()
        assert ref.shape == b.output.shape, (b.name, ref.shape, b.output.shape)
        diff = max_abs_diff(b.output, ref)
        scale = float(np.max(np.abs(ref.astype(np.float64)))) or 1.0
        print(f"self-check {b.name}: max abs diff {diff:g} (max |value| {scale:g})")
        if b.output.dtype == np.uint16:
            assert np.array_equal(b.output, ref), f"{b.name}: differs from the numpy reference"
        else:
            assert diff <= 1e-5 * scale, f"{b.name}: max abs diff {diff} above 1e-5 x {scale}"
    print("self-check passed")


# ---------------------------------------------------------------- main


def main():
    args = parse_args()
    if args.threads is not None:
        # Read by Halide's runtime when its thread pool starts.
        os.environ["HL_NUM_THREADS"] = str(args.threads)
    import halide as hl

    target = hl.get_host_target()
    l16 = target.natural_vector_size(hl.UInt(16))
    l32 = target.natural_vector_size(hl.Float(32))
    ours = load_ours(args.ours, args) if args.ours else None

    w, h = args.width, args.height
    benches = [
        blur(hl, w, h, l16),
        stencil_chain(hl, w, h, args.chain_stages, l32),
        gaussian(hl, w, h, l32),
        matmul(hl, args.matmul_n, l32),
    ]
    warm_up_jit(hl, target)
    # Halide's default float arithmetic may reassociate and contract (its
    # simplifier treats floats as reals); strict_float keeps the operations
    # as written, as our compiler always does.
    strict = target.with_feature(hl.TargetFeature.StrictFloat)
    halide_rows, strict_rows = [], []
    for b in benches:
        for rows, t, label in ((strict_rows, strict, "strict_float"), (halide_rows, target, "default")):
            row = time_bench(b, t)
            print(f"halide {b.name} ({label}): compile {row['compile_ms']:.1f} ms, min {row['min_ms']:.3f} ms, "
                  f"median {row['median_ms']:.3f} ms, {row['samples']} samples", file=sys.stderr)
            rows.append(row)

    if args.self_check:
        self_check(benches)

    outputs = {}
    if args.outputs:
        for b in benches:
            theirs = read_ours_output(args.outputs, b)
            if theirs is not None:
                outputs[b.name] = compare_outputs(b.output, theirs)

    threads = args.threads or int(os.environ.get("HL_NUM_THREADS", 0)) or os.cpu_count()
    version = importlib.metadata.version("halide")
    header = (
        f"Host target `{target}`, {threads} threads, images {w}x{h}, "
        f"{args.chain_stages}-stage chain, matmul {args.matmul_n}x{args.matmul_n}, Halide {version}, "
        f"natural lanes: {l16} (16-bit), {l32} (32-bit)."
    )
    rows = comparison_rows(halide_rows, strict_rows, ours, outputs)
    table, g_halide, g_naive = markdown(header, rows)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        result = {
            "halide_version": version,
            "host": str(target),
            "threads": threads,
            "lanes_16": l16,
            "lanes_32": l32,
            "width": w,
            "height": h,
            "chain_stages": args.chain_stages,
            "matmul_n": args.matmul_n,
            "rows": halide_rows,
            "strict_float_rows": strict_rows,
            "comparison": rows,
            "geomean_halide_over_ours": g_halide,
            "geomean_naive_over_expert": g_naive,
        }
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if any(o["status"] == "mismatch" for o in outputs.values()):
        sys.exit("error: some outputs differ from Halide's")


if __name__ == "__main__":
    main()
