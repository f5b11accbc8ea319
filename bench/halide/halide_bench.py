"""Times our benchmark apps under Halide 21's JIT and compares them with ours.

Each of the twelve apps (blur, unsharp, harris, camera_pipe,
local_laplacian, bilateral_grid, interpolate, stencil_chain, conv_layer,
iir_blur, hist_eq, matmul) is written with Halide's Python API in
`apps/<name>.py`, mirroring `apps/src/<name>.rs` of our repository: the same
algorithm, and a hand-written "expert" schedule translated directive by
directive from ours. Each pipeline of the suite (the manifest's sets
`development` and `held-out`) is in `suite/<name>.py`, mirroring
`apps/src/suite/<name>.rs`, with no expert schedule.

Every app is scheduled by each of these kinds, each on a fresh definition
of the algorithm (a Func is scheduled once):

  expert         the module's hand-written schedule (skipped for a module
                 that has none);
  naive          every Func computed at root, serially (only when asked
                 for with --kinds: it checks a port's output);
  Mullapudi2016  Halide's autoschedulers, applied with
  Adams2019      `Pipeline.apply_autoscheduler` after estimates are set
  Li2018         on every input and on the output (from the manifest), with
                 parallelism = the thread count.

A schedule kind is compiled with `compile_jit()` (timed, after a throwaway
compile that builds Halide's shared JIT runtime) and realized into a
pre-allocated output buffer under the rule our bench uses: 2 warm-up runs,
then samples until there are at least 5 and either 200 samples were taken
or 2 s were spent; the minimum and the median are reported. Each (app,
kind) runs in its own child process, so that an autoscheduler that raises,
or a schedule that fails to compile or crashes, is recorded as failed
without stopping the run.

Inputs, regions and our times come from the manifest our Rust bench writes
(`--ours ours.json`); inputs are filled with our pattern (see
`common.pattern`). With `--outputs DIR` every kind's output is compared
with ours (`DIR/{app}.bin`): "equal" when bit-identical, else the max
absolute difference (and, for floats, relative to the largest magnitude);
a MISMATCH above 1e-3 relative for floats or above 1 for integers.

It is run by `bench/halide/run.sh`; by hand, for example:

    target/halide-venv/bin/python bench/halide/halide_bench.py \\
        --ours ours.json --outputs outputs --threads 2 \\
        --only blur,matmul --kinds expert,Adams2019 --markdown table.md

It needs Python 3.11, numpy and the `halide` package (21.x).
"""

import argparse
import importlib
import importlib.metadata
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import common  # noqa: E402

WARMUP = 2
MIN_SAMPLES = 5
MAX_SAMPLES = 200
BUDGET_S = 2.0
# Float outputs differing from ours by more than this, relative to the
# largest magnitude of ours, are flagged as a mismatch; integer outputs
# differing by more than INTEGER_TOLERANCE.
RELATIVE_TOLERANCE = 1e-3
INTEGER_TOLERANCE = 1

APPS = [
    "blur", "unsharp", "harris", "camera_pipe", "local_laplacian", "bilateral_grid",
    "interpolate", "stencil_chain", "conv_layer", "iir_blur", "hist_eq", "matmul",
]
AUTOSCHEDULERS = ["Mullapudi2016", "Adams2019", "Li2018"]
KINDS = ["expert"] + AUTOSCHEDULERS
OPTIONAL_KINDS = ["naive"]
PLUGINS = {"Mullapudi2016": "mullapudi2016", "Adams2019": "adams2019", "Li2018": "li2018"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ours", type=Path, required=True, help="manifest (JSON) written by our `bench --json`")
    p.add_argument("--outputs", type=Path, help="directory of our raw outputs ({app}.bin)")
    p.add_argument("--threads", type=int, help="size of Halide's thread pool and the autoschedulers' parallelism "
                   "(default: the manifest's thread count)")
    p.add_argument("--only", help="comma-separated subset of the apps")
    p.add_argument("--kinds", default=",".join(KINDS),
                   help=f"comma-separated subset of {','.join(KINDS + OPTIONAL_KINDS)}")
    p.add_argument("--json", type=Path, help="write all results here")
    p.add_argument("--markdown", type=Path, help="also write the tables here")
    p.add_argument("--strict-float", action="store_true",
                   help="compile with Halide's strict_float (float operations kept exactly as written)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed to one (app, kind) run")
    p.add_argument("--reuse", type=Path, action="append", default=[],
                   help="results (--json of an earlier run on this machine) to take instead of running again; "
                        "repeatable")
    # Internal: one (app, kind) in this process, results written to a file.
    p.add_argument("--worker", nargs=3, metavar=("APP", "KIND", "RESULT"), help=argparse.SUPPRESS)
    args, unknown = p.parse_known_args()
    if unknown:
        print(f"warning: ignoring arguments {' '.join(unknown)}", file=sys.stderr)
    return args


# ---------------------------------------------------------------- one run


def load_halide(threads):
    # Read by Halide's runtime when its thread pool starts.
    os.environ["HL_NUM_THREADS"] = str(threads)
    import halide as hl

    return hl


def load_plugin(hl, name):
    """Loads an autoscheduler's plugin library, which the halide wheel ships
    in its own lib64 directory (not on the loader's search path)."""
    path = Path(hl.install_dir()) / "lib64" / f"libautoschedule_{PLUGINS[name]}.so"
    hl.load_plugin(str(path))


def warm_up_jit(hl, target):
    """Compiles a trivial pipeline so that building Halide's shared JIT
    runtime (about 0.4 s, once per process) is not charged to the app."""
    x = hl.Var("x")
    f = hl.Func("jit_warm_up")
    f[x] = x
    hl.Pipeline(f).compile_jit(target)


def sample(run):
    for _ in range(WARMUP):
        run()
    times = []
    started = time.perf_counter()
    while len(times) < MIN_SAMPLES or (len(times) < MAX_SAMPLES and time.perf_counter() - started < BUDGET_S):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    times.sort()
    return {"min_ms": times[0] * 1e3, "median_ms": times[len(times) // 2] * 1e3, "samples": len(times)}


def module_name(app):
    """The Python module of a manifest app: `apps.<name>` for the twelve,
    `suite.<name>` for the suite's pipelines."""
    folder = "apps" if app.get("set", "apps") == "apps" else "suite"
    return f"{folder}.{app['name']}"


def module_path(app):
    return HERE / (module_name(app).replace(".", "/") + ".py")


def has_expert(app):
    """Whether the app's module has an expert schedule (read from its source,
    without importing Halide)."""
    return "\ndef expert(" in module_path(app).read_text()


def host_target(hl, strict_float):
    target = hl.get_host_target()
    return target.with_feature(hl.TargetFeature.StrictFloat) if strict_float else target


def run_one(app, kind, manifest, outputs_dir, threads, strict_float):
    """Defines, schedules, compiles, times and checks one app under one
    schedule kind, in this process; returns the result dict. Failures are
    recorded with the phase they happened in."""
    hl = load_halide(threads)
    target = host_target(hl, strict_float)
    lanes = common.lanes_function(hl, target)
    app = dict(app, size=manifest.get("size"))
    result = {"app": app["name"], "kind": kind, "ok": False}
    phase = "inputs"
    try:
        module = importlib.import_module(module_name(app))
        params, keep = {}, []
        for salt, inp in enumerate(app["inputs"]):
            region = [tuple(r) for r in inp["region"]]
            buf, view = common.halide_buffer(hl, inp["type"], region, common.pattern(inp["type"], region, salt))
            param = hl.ImageParam(common.halide_type(hl, inp["type"]), len(region), inp["name"])
            param.set(buf)
            params[inp["name"]] = param
            keep.append((buf, view))
        out_spec = app["output"]
        out_region = [tuple(r) for r in out_spec["region"]]
        out_buf, out_view = common.halide_buffer(hl, out_spec["type"], out_region)

        phase = "algorithm"
        funcs = module.algorithm(hl, params, app)
        out = funcs[out_spec["name"]]
        pipeline = hl.Pipeline(out)
        warm_up_jit(hl, target)

        phase = "schedule"
        started = time.perf_counter()
        if kind == "expert":
            module.expert(hl, funcs, lanes, app)
        elif kind == "naive":
            for name, f in funcs.items():
                if not name.startswith("_") and name != out_spec["name"]:
                    f.compute_root()
        else:
            load_plugin(hl, kind)
            for inp in app["inputs"]:
                params[inp["name"]].set_estimates([hl.Range(lo, extent) for lo, extent in inp["region"]])
            for v, (lo, extent) in zip(out.args(), out_region):
                out.set_estimate(v, lo, extent)
            autoscheduled = pipeline.apply_autoscheduler(
                target, hl.AutoschedulerParams(kind, {"parallelism": str(threads)}))
            result["schedule_source"] = autoscheduled.schedule_source
        result["schedule_ms"] = (time.perf_counter() - started) * 1e3

        phase = "compile"
        started = time.perf_counter()
        pipeline.compile_jit(target)
        result["compile_ms"] = (time.perf_counter() - started) * 1e3

        phase = "run"
        print(f"halide {app['name']} {kind}: scheduled in {result['schedule_ms']:.1f} ms, "
              f"compiled in {result['compile_ms']:.1f} ms; timing", file=sys.stderr, flush=True)
        result.update(sample(lambda: pipeline.realize(out_buf, target)))
        result["ok"] = True

        phase = "compare"
        if outputs_dir is not None:
            ours = common.read_raw(outputs_dir / f"{app['name']}.bin", out_spec["type"], out_region)
            if ours is not None:
                result["outputs"] = compare_outputs(out_view, ours, out_spec["type"])
    except Exception as e:  # Halide reports errors as exceptions; record, don't stop.
        result["ok"] = phase == "compare" and result.get("ok", False)
        result["error"] = f"{phase}: {type(e).__name__}: {str(e).strip()}"
    return result


def worker(args):
    app_name, kind, result_path = args.worker
    manifest = json.loads(args.ours.read_text())
    app = next(a for a in manifest["apps"] if a["name"] == app_name)
    result = run_one(app, kind, manifest, args.outputs, args.threads, args.strict_float)
    Path(result_path).write_text(json.dumps(result))


def run_in_child(app_name, kind, args, threads):
    """Runs one (app, kind) in a child process; a crash, a timeout or a
    non-zero exit becomes a failed result."""
    with tempfile.TemporaryDirectory(prefix="halide_bench_") as tmp:
        result_path = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--ours", str(args.ours),
               "--threads", str(threads), "--worker", app_name, kind, str(result_path)]
        if args.outputs:
            cmd += ["--outputs", str(args.outputs)]
        if args.strict_float:
            cmd.append("--strict-float")
        failed = {"app": app_name, "kind": kind, "ok": False}
        try:
            proc = subprocess.run(cmd, stdout=sys.stderr, stderr=subprocess.PIPE, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return failed | {"error": f"timed out after {args.timeout:.0f} s"}
        sys.stderr.write(proc.stderr)
        if result_path.exists():
            return json.loads(result_path.read_text())
        if proc.returncode < 0:
            why = f"killed by {signal.Signals(-proc.returncode).name}"
        else:
            why = f"exited with status {proc.returncode}"
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return failed | {"error": f"child process {why}" + (f": {tail}" if tail else "")}


# ---------------------------------------------------------------- comparing


def short(v):
    """A float in two significant digits, exponent without padding (3.1e-7)."""
    s = f"{v:.2g}"
    if "e" in s:
        mantissa, exponent = s.split("e")
        s = f"{mantissa}e{int(exponent)}"
    return s


def compare_outputs(halide, ours, type_name):
    """How Halide's output compares with ours: `status` is "equal" (bit
    identical), "close" (within tolerance) or "mismatch"; with the max abs
    difference (and for floats relative to ours' largest magnitude) and a
    short table cell."""
    if halide.tobytes() == ours.tobytes():
        return {"status": "equal", "max_abs_diff": 0.0, "relative_diff": 0.0, "differing": 0, "cell": "equal"}
    a, b = halide.astype(np.float64), ours.astype(np.float64)
    differing = int(np.count_nonzero(~((a == b) | (np.isnan(a) & np.isnan(b)))))
    if common.is_float(type_name):
        finite_a, finite_b = np.isfinite(a), np.isfinite(b)
        if np.any(finite_a != finite_b) or np.any(~finite_a & (a != b) & ~(np.isnan(a) & np.isnan(b))):
            return {"status": "mismatch", "max_abs_diff": math.inf, "relative_diff": math.inf,
                    "differing": differing, "cell": f"MISMATCH: non-finite values differ ({differing} values differ)"}
        both = finite_a & finite_b
        diff = float(np.max(np.abs(a[both] - b[both]))) if np.any(both) else 0.0
        scale = float(np.max(np.abs(b[both]))) if np.any(both) else 0.0
        relative = diff / scale if scale else (0.0 if diff == 0 else math.inf)
        text = f"max abs diff {short(diff)} (rel {short(relative)})"
        status = "mismatch" if relative > RELATIVE_TOLERANCE else "close"
    else:
        diff = float(np.max(np.abs(a - b)))
        relative = None
        text = f"max abs diff {short(diff)} ({differing} values)"
        status = "mismatch" if diff > INTEGER_TOLERANCE else "close"
    cell = ("MISMATCH: " if status == "mismatch" else "") + text
    return {"status": status, "max_abs_diff": diff, "relative_diff": relative, "differing": differing, "cell": cell}


# ---------------------------------------------------------------- reporting


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v, digits):
    return "–" if v is None else f"{v:.{digits}f}"


def ours_autos(manifest_apps):
    """Our autoscheduled rows, as `bench` names them, in the order it ran
    them: `auto` (`--auto`, the analytical model), then `learned`, `learned
    2`, ... (one per `--learned W`, a trainer weights file), each with its
    summary key and table label."""
    names = []
    for app in manifest_apps:
        for r in app.get("rows", []):
            name = r.get("schedule", "")
            if (name == "auto" or name.startswith("learned")) and name not in names:
                names.append(name)
    return [(name, name.replace(" ", "_"), f"ours {name}") for name in names]


def ours_row(app, schedule):
    return next((r for r in app.get("rows", []) if r.get("schedule") == schedule), None)


OPENBLAS_PROBE = """
import sys, time
import numpy as np
n = int(sys.argv[1])
rng = np.random.default_rng(0)
a = rng.random((n, n), dtype=np.float32)
b = rng.random((n, n), dtype=np.float32)
a @ b
best = float("inf")
for _ in range(20):
    t = time.perf_counter()
    a @ b
    best = min(best, time.perf_counter() - t)
print(best * 1e3)
"""


def openblas_sgemm_ms(n, threads):
    """Best of 20 f32 n x n products through numpy's OpenBLAS, in a child
    process with `threads` threads and OpenBLAS's own CPU detection (the
    environment's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are dropped for it
    only): the machine's practical limit for matmul."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    done = subprocess.run([sys.executable, "-c", OPENBLAS_PROBE, str(n)], env=env, capture_output=True, text=True,
                          timeout=600, check=True)
    return float(done.stdout.strip())


def openblas_line(rows, apps, threads):
    """The matmul row beside OpenBLAS sgemm, measured now, as a line under
    the table (empty when matmul is not in the run)."""
    app = next((a for a in apps if a["name"] == "matmul"), None)
    row = next((r for r in rows if r["app"] == "matmul"), None)
    if app is None or row is None:
        return ""
    n = app["output"]["region"][0][1]
    ms = openblas_sgemm_ms(n, threads)
    ours = row["ours_expert_min_ms"]
    return (f"\nmatmul beside OpenBLAS sgemm (numpy {np.__version__}, {threads} threads, {n}x{n} f32, best of 20): "
            f"{ms:.3f} ms; ours expert {ours:.3f} ms, OpenBLAS / ours = {ms / ours:.2f}.\n")


def summarize(manifest_apps, results, kinds, autos):
    """One summary row per app: our times, each kind's time and its ratios
    to our expert schedule and to each of our autoscheduled rows (`autos`,
    as `ours_autos` gives them)."""
    rows = []
    for app in manifest_apps:
        naive, expert = ours_row(app, "naive"), ours_row(app, "expert")
        ours_ms = expert["min_ms"] if expert else None
        row = {
            "app": app["name"],
            "ours_naive_min_ms": naive["min_ms"] if naive else None,
            "ours_expert_min_ms": ours_ms,
            "ours_expert_compile_ms": expert.get("compile_ms") if expert else None,
            "halide": {},
        }
        for name, key, _ in autos:
            auto = ours_row(app, name)
            row[f"ours_{key}_min_ms"] = auto["min_ms"] if auto else None
            row[f"ours_{key}_search_ms"] = auto.get("search_ms") if auto else None
            row[f"ours_{key}_compile_ms"] = auto.get("compile_ms") if auto else None
        for kind in kinds:
            r = results.get((app["name"], kind))
            if r is None:
                continue
            ok = r.get("ok")
            row["halide"][kind] = {
                "ok": ok,
                "min_ms": r.get("min_ms") if ok else None,
                "median_ms": r.get("median_ms") if ok else None,
                "over_ours": r["min_ms"] / ours_ms if ok and ours_ms else None,
                "schedule_ms": r.get("schedule_ms"),
                "compile_ms": r.get("compile_ms"),
                "outputs": r.get("outputs"),
                "error": r.get("error"),
            }
            for _, key, _ in autos:
                auto_ms = row[f"ours_{key}_min_ms"]
                row["halide"][kind][f"over_ours_{key}"] = r["min_ms"] / auto_ms if ok and auto_ms else None
        # Halide's best strategy: the fastest of its schedules that ran
        # (its autoschedulers, and the expert schedule where there is one).
        ran = [(h["min_ms"], k) for k, h in row["halide"].items() if h["ok"] and k != "naive"]
        if ran:
            best_ms, best_kind = min(ran)
            row["halide_best"] = {"kind": best_kind, "min_ms": best_ms}
            for _, key, _ in autos:
                auto_ms = row[f"ours_{key}_min_ms"]
                row["halide_best"][f"over_ours_{key}"] = best_ms / auto_ms if auto_ms else None
        rows.append(row)
    return rows


def outputs_cell(row, kinds):
    """"equal" when every kind's output is bit-identical to ours; else the
    kinds grouped by their comparison (e.g. "expert, Li2018: max abs diff
    3e-7 (rel 5.4e-7); Adams2019: equal")."""
    compared = {k: h["outputs"] for k, h in row["halide"].items() if h.get("outputs")}
    if not compared:
        return "not compared"
    groups = {}
    for k in kinds:
        if k in compared:
            groups.setdefault(compared[k]["cell"], []).append(k)
        elif k in row["halide"] and row["halide"][k]["ok"]:
            groups.setdefault("not compared", []).append(k)
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{', '.join(ks)}: {cell}" for cell, ks in groups.items())


def markdown(header, rows, kinds, autos):
    """The side-by-side table; with our autoscheduler's rows (`bench --auto`,
    `--learned`; `autos` as `ours_autos` gives them), also their times, each
    Halide autoscheduler's ratio to them, and the search times side by side."""
    lines = [header, ""]
    columns = [(key, label) for _, key, label in autos]
    head = ["app", "ours naive (ms)", "ours expert (ms)"] + [f"{label} (ms)" for _, label in columns]
    for k in kinds:
        head += [f"Halide {k} (ms)", f"{k} / ours"]
        if k != "expert":
            head += [f"{k} / {label}" for _, label in columns]
    if columns:
        head += ["Halide best (ms)"] + [f"best / {label}" for _, label in columns]
    head.append("outputs")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * (len(head) - 2) + "---|")
    failures = []
    for r in rows:
        cells = [r["app"], fmt(r["ours_naive_min_ms"], 3), fmt(r["ours_expert_min_ms"], 3)]
        cells += [fmt(r.get(f"ours_{key}_min_ms"), 3) for key, _ in columns]
        for k in kinds:
            h = r["halide"].get(k)
            auto_cells = len(columns) if k != "expert" else 0
            if h is None:
                cells += ["–", "–"] + ["–"] * auto_cells
            elif not h["ok"]:
                cells += ["failed", "–"] + ["–"] * auto_cells
                failures.append(f"- {r['app']}, {k}: {h['error']}")
            else:
                cells += [fmt(h["min_ms"], 3), fmt(h["over_ours"], 2)]
                if auto_cells:
                    cells += [fmt(h.get(f"over_ours_{key}"), 2) for key, _ in columns]
        best = r.get("halide_best")
        if columns:
            cells.append(f"{best['min_ms']:.3f} ({best['kind']})" if best else "–")
            cells += [fmt(best.get(f"over_ours_{key}") if best else None, 2) for key, _ in columns]
        cells.append(outputs_cell(r, kinds))
        lines.append("| " + " | ".join(cells) + " |")
    geo = {k: geomean([r["halide"][k]["over_ours"] for r in rows if k in r["halide"]]) for k in kinds}
    cells = ["geometric mean", "", ""] + [""] * len(columns)
    for k in kinds:
        cells += ["", fmt(geo[k], 2)]
        if k != "expert":
            cells += [fmt(geomean([r["halide"][k].get(f"over_ours_{key}") for r in rows if k in r["halide"]]), 2)
                      for key, _ in columns]
    if columns:
        cells.append("")
        cells += [fmt(geomean([r["halide_best"].get(f"over_ours_{key}") for r in rows if r.get("halide_best")]), 2)
                  for key, _ in columns]
    cells.append("")
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Times are the best of the samples. A ratio is Halide's time over ours (expert schedule; "
                 "`/ ours auto`: our autoscheduler's with the analytical model, `/ ours learned`: with the learned "
                 "weights, `/ ours learned 2` and on: with the second and further `--learned` weights); above 1 "
                 "means ours is faster. `Halide best` is the fastest of Halide's schedules that ran (its "
                 "autoschedulers', and its expert schedule where there is one). The geometric mean is over the apps "
                 "where the column succeeded.")
    if failures:
        lines += ["", "Failures:", ""] + [f.replace("\n", " ") for f in failures]
    lines.append("")
    head = ["app", "ours expert compile (ms)"] + [f"{label} search + compile (ms)" for _, label in columns]
    head += [f"Halide {k} (ms)" for k in kinds]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * (len(head) - 1))
    for r in rows:
        cells = [r["app"], fmt(r["ours_expert_compile_ms"], 1)]
        for key, _ in columns:
            search, compile_ms = r.get(f"ours_{key}_search_ms"), r.get(f"ours_{key}_compile_ms")
            cells.append("–" if search is None or compile_ms is None else f"{search:.1f} + {compile_ms:.1f}")
        for k in kinds:
            h = r["halide"].get(k)
            if h is None or h.get("compile_ms") is None:
                cells.append("failed" if h is not None else "–")
            elif k == "expert":
                cells.append(fmt(h["compile_ms"], 1))
            else:
                cells.append(f"{h['schedule_ms']:.1f} + {h['compile_ms']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Halide compile times are `compile_jit()`; for an autoscheduler, the time `apply_autoscheduler` "
                 "took + `compile_jit()`.")
    return "\n".join(lines) + "\n", geo


# ---------------------------------------------------------------- main


def main():
    args = parse_args()
    if args.worker:
        worker(args)
        return
    manifest = json.loads(args.ours.read_text())
    threads = args.threads or manifest.get("threads") or os.cpu_count()
    if args.threads and manifest.get("threads") not in (None, args.threads):
        print(f"warning: ours ran with {manifest.get('threads')} threads, Halide with {args.threads}", file=sys.stderr)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS + OPTIONAL_KINDS]
    if unknown:
        sys.exit(f"error: unknown schedule kinds {unknown}; known: {KINDS + OPTIONAL_KINDS}")
    apps = manifest["apps"]
    if args.only:
        wanted = [a.strip() for a in args.only.split(",") if a.strip()]
        missing = [a for a in wanted if a not in {x["name"] for x in apps}]
        if missing:
            print(f"warning: {args.ours} has no apps {missing}", file=sys.stderr)
        apps = [a for a in apps if a["name"] in wanted]
    ported = [a for a in apps if module_path(a).exists()]
    for a in apps:
        if a not in ported:
            print(f"warning: {a['name']} has no Halide version ({module_path(a).relative_to(HERE)}); skipped",
                  file=sys.stderr)

    results = {}
    for earlier in args.reuse:
        for r in json.loads(earlier.read_text()).get("results", []):
            results[(r["app"], r["kind"])] = r
    for app in ported:
        for kind in kinds:
            if (app["name"], kind) in results or (kind == "expert" and not has_expert(app)):
                continue
            print(f"halide {app['name']} {kind} ...", file=sys.stderr, flush=True)
            r = run_in_child(app["name"], kind, args, threads)
            if r.get("ok"):
                print(f"halide {app['name']} {kind}: min {r['min_ms']:.3f} ms, median {r['median_ms']:.3f} ms, "
                      f"{r['samples']} samples", file=sys.stderr, flush=True)
            if r.get("error"):
                print(f"halide {app['name']} {kind}: FAILED: {r['error']}", file=sys.stderr, flush=True)
            results[(app["name"], kind)] = r

    hl = load_halide(threads)
    target = host_target(hl, args.strict_float)
    version = importlib.metadata.version("halide")
    width = common.vector_bytes(hl, target)
    if manifest.get("vector_bytes") not in (None, width):
        print(f"warning: ours used {manifest['vector_bytes']}-byte vectors, Halide's schedules {width}-byte ones",
              file=sys.stderr)
    halide_mode = "strict" if args.strict_float else "fast"
    ours_mode = manifest.get("float_mode", "strict")
    if ours_mode != halide_mode:
        print(f"warning: ours ran in the {ours_mode} float mode, Halide in the {halide_mode} one", file=sys.stderr)
    header = (f"Host target `{target}`, {threads} threads, size `{manifest.get('size', '?')}`, Halide {version}, "
              f"{width}-byte vectors, float mode: ours {ours_mode}, Halide {halide_mode} "
              f"(fast: multiplies and adds may fuse, a division by a constant may multiply by its reciprocal; strict: every operation rounded as written).")
    autos = ours_autos(apps)
    rows = summarize(apps, results, kinds, autos)
    table, geo = markdown(header, rows, kinds, autos)
    table += openblas_line(rows, apps, threads)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        out = {
            "halide_version": version,
            "host": str(target),
            "threads": threads,
            "size": manifest.get("size"),
            "vector_bytes": width,
            "strict_float": args.strict_float,
            "kinds": kinds,
            "results": [results[k] for k in sorted(results, key=lambda k: ([a["name"] for a in apps].index(k[0]), kinds.index(k[1])))],
            "comparison": rows,
            "geomean_over_ours": geo,
        }
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    mismatches = [f"{a} {k}" for (a, k), r in results.items() if (r.get("outputs") or {}).get("status") == "mismatch"]
    if mismatches:
        sys.exit(f"error: outputs differ from ours: {', '.join(mismatches)}")


if __name__ == "__main__":
    main()
