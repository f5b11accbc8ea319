//! The shape of the generated code: what the schedule asks for is what LLVM
//! emits (dense loads and shuffles for strides up to 8, lane-by-lane
//! loads from one base address beyond and at strides known only at run
//! time, gathers for other indices, scalar loops for a serial scalar schedule), and the results stay
//! those of the reference.

use codegen::float_mode::agrees_within_fast_float;
use codegen::{compile_with, CompileOptions};
use compiler::exec::buffer::Buffer;
use compiler::ir::expr::Expr;
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::lang::{Func, ImageParam, Pipeline, Var};
use compiler::lower::lower;
use compiler::schedule::Schedule;
use std::collections::BTreeMap;

fn every_other_column() -> (compiler::lang::pipeline::PipelineDef, BTreeMap<String, Buffer>) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    out.define(&[&x, &y], input.at([&x * 2, y.expr()]) + input.at([&x * 2 + 1, y.expr()]) * 0.5f32);
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 64), (0, 8)]).unwrap();
    b.fill(|c| Scalar::Float((c[0] * 7 + c[1] * 3) as f64 / 16.0));
    (Pipeline::new(&[&out]).unwrap(), BTreeMap::from([("input".to_string(), b)]))
}

fn run_and_check(p: &compiler::lang::pipeline::PipelineDef, inputs: &BTreeMap<String, Buffer>, s: &Schedule) -> String {
    let compiled = compile_with(&lower(p, s).unwrap(), &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    let region = vec![(0, 32), (0, 8)];
    agrees_with_reference(&compiled, p, inputs, "out", &region, "");
    compiled.text.as_ref().expect("kept").llvm_ir.clone()
}

/// A read at stride 2 (a downsampling) is two dense vector loads and a
/// shuffle, not a load per lane; the results are the reference's.
/// Runs `compiled` over `region` of `output` and checks every point against
/// the reference evaluator (`what` names the case in the failure).
fn agrees_with_reference(
    compiled: &codegen::CompiledPipeline,
    p: &compiler::lang::pipeline::PipelineDef,
    inputs: &BTreeMap<String, Buffer>,
    output: &str,
    region: &[(i64, i64)],
    what: &str,
) {
    let got = compiled.run(inputs, &BTreeMap::new(), &[(output, region.to_vec())]).unwrap().remove(output).unwrap();
    let expected = compiler::exec::reference::realize(p, inputs, &BTreeMap::new(), output, region).unwrap();
    assert_eq!(got, expected, "{what}");
}

#[test]
fn short_strided_vector_reads_are_dense_loads_and_a_shuffle() {
    let (p, inputs) = every_other_column();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let ir = run_and_check(&p, &inputs, &s);
    assert!(!ir.contains("llvm.masked.gather") && ir.contains("shufflevector"), "a stride-2 vector read is two loads and a shuffle:\n{ir}");
    assert!(ir.contains("load <8 x float>"), "the two loads are dense vectors:\n{ir}");
}

/// A read at stride 8 (a pooling by 8) is dense loads and shuffles; one
/// at stride 9 is a scalar load per lane at one base address plus a
/// multiple of the stride, not a gather (whose vector of indices costs
/// more than the loads).
#[test]
fn strided_reads_shuffle_up_to_stride_8_and_load_lane_by_lane_beyond() {
    for (stride, by_lane) in [(8, false), (9, true)] {
        let ir = ir_of_strided_read(stride);
        assert!(!ir.contains("llvm.masked.gather"), "stride {stride}: no gather:\n{ir}");
        assert_eq!(ir.contains("load <8 x float>"), !by_lane, "stride {stride}: dense vector loads:\n{ir}");
        assert_eq!(ir.contains("insertelement <8 x float>"), by_lane, "stride {stride}: lanes loaded one by one:\n{ir}");
    }
}

/// Vectors across a dimension whose stride is known only at run time (a
/// transpose vectorized along either side), and at a negative constant
/// stride (a mirror): reads and writes lane by lane from one base address,
/// no gather emitted, the reference's results for several types and
/// widths, tails included.
#[test]
fn run_time_strides_read_and_write_lane_by_lane() {
    for ty in [ScalarType::F32, ScalarType::U8, ScalarType::I16, ScalarType::F64, ScalarType::Bool] {
        for lanes in [3, 4, 8, 16] {
            for (what, mirror, write_across) in [("read across", false, false), ("write across", false, true), ("mirror", true, false)] {
                let (x, y) = (Var::new("x"), Var::new("y"));
                let input = ImageParam::new("input", ty, 2);
                let out = Func::new("out");
                let (w, h) = (lanes * 3 + 1, lanes * 2 + 3);
                let read = if mirror { input.at([Expr::i32(w - 1) - x.expr(), y.expr()]) } else { input.at([y.expr(), x.expr()]) };
                out.define(&[&x, &y], read);
                let extent = if mirror { [(0, w), (0, h)] } else { [(0, h), (0, w)] };
                let mut b = Buffer::new("input", ty, &extent).unwrap();
                b.fill(|c| match ty {
                    ScalarType::F32 | ScalarType::F64 => Scalar::Float((c[0] * 7 - c[1] * 3) as f64 / 16.0),
                    ScalarType::Bool => Scalar::from_bool((c[0] * 3 + c[1]) % 5 < 2),
                    ScalarType::I16 => Scalar::Int(c[0] * 131 - c[1] * 17),
                    _ => Scalar::UInt(((c[0] * 31 + c[1] * 7) % 256) as u64),
                });
                let p = Pipeline::new(&[&out]).unwrap();
                let mut s = Schedule::new();
                if write_across {
                    s.func("out").reorder(&["y", "x"]).vectorize_by("y", lanes);
                } else {
                    s.func("out").vectorize_by("x", lanes);
                }
                let options = CompileOptions { keep_text: true, ..Default::default() };
                let compiled = compile_with(&lower(&p, &s).unwrap(), &options).unwrap();
                let case = format!("{what}, {ty:?}, {lanes} lanes");
                // What code generation emits (LLVM's passes may still form
                // a gather from the lanes where the target prefers one: AVX-512
                // for 8 f64 lanes).
                let ir = &compiled.text.as_ref().expect("kept").emitted_ir;
                assert!(!ir.contains("llvm.masked.gather"), "{case}: no gather emitted:\n{ir}");
                let inputs = BTreeMap::from([("input".to_string(), b)]);
                agrees_with_reference(&compiled, &p, &inputs, "out", &[(0, w), (0, h)], &case);
            }
        }
    }
}

/// The LLVM IR of `out(x, y) = input(stride * x, y) / 2`, vectorized by 8,
/// after checking its results against the reference.
fn ir_of_strided_read(stride: i32) -> String {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    out.define(&[&x, &y], input.at([&x * stride, y.expr()]) * 0.5f32);
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 32 * stride as i64), (0, 8)]).unwrap();
    b.fill(|c| Scalar::Float((c[0] * 7 + c[1] * 3) as f64 / 16.0));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    run_and_check(&p, &BTreeMap::from([("input".to_string(), b)]), &s)
}

/// Strided reads at strides 2 to 8 and several vector widths, up to the
/// very end of a buffer that holds nothing past the last lane's element
/// (the dense loads read nothing beyond it; `valgrind` on this test
/// binary reports no invalid read).
#[test]
fn strided_reads_stay_inside_the_elements_they_read() {
    for stride in 2..=8i64 {
        for lanes in [2, 3, 4, 8, 16, 32] {
            let (x, y) = (Var::new("x"), Var::new("y"));
            let input = ImageParam::new("input", ScalarType::U16, 2);
            let out = Func::new("out");
            out.define(&[&x, &y], input.at([x.expr() * stride as i32 + 1, y.expr()]));
            let width = lanes * 3;
            // Exactly the elements read: columns 1, 1 + stride, ..., of each row.
            let mut b = Buffer::new("input", ScalarType::U16, &[(0, stride * (width - 1) + 2), (0, 3)]).unwrap();
            b.fill(|c| Scalar::UInt((c[0] * 31 + c[1] * 7) as u64 % 65536));
            let p = Pipeline::new(&[&out]).unwrap();
            let mut s = Schedule::new();
            s.func("out").vectorize_by("x", lanes);
            let compiled = codegen::compile(&lower(&p, &s).unwrap()).unwrap();
            let inputs = BTreeMap::from([("input".to_string(), b)]);
            let region = vec![(0, width), (0, 3)];
            agrees_with_reference(&compiled, &p, &inputs, "out", &region, &format!("stride {stride}, {lanes} lanes"));
        }
    }
}

#[test]
fn a_serial_scalar_schedule_stays_scalar() {
    let (p, inputs) = every_other_column();
    let ir = run_and_check(&p, &inputs, &Schedule::new());
    assert!(!ir.contains("vector.body") && !ir.contains("x float>"), "LLVM did not vectorize a loop the schedule left scalar");
    assert!(ir.contains("llvm.loop.vectorize.enable"), "loops carry the hint that keeps LLVM's vectorizer off");
}

/// A reduction in register tiles whose splits guard their tails: the tiles
/// of the steady state run without the guards (loop partitioning), the
/// steady state is every whole tile (all of them when the tile divides the
/// size), a partial last row and column of tiles keep the guards (the
/// partial row in the same parallel loop as the whole ones), and every
/// size computes what the reference does, including sizes the tiles do not
/// divide and sizes smaller than one tile.
#[test]
fn guarded_tiles_run_unguarded_in_the_steady_state() {
    use compiler::ir::expr::Expr;
    use compiler::ir::types::Type;
    use compiler::lang::RDom;
    use compiler::schedule::TailStrategy;
    let (x, y) = (Var::new("x"), Var::new("y"));
    let a = ImageParam::new("A", ScalarType::F32, 2);
    let b = ImageParam::new("B", ScalarType::F32, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(16))]);
    let c = Func::new("C");
    c.define(&[&x, &y], Expr::float(0.0, Type::f32()));
    c.update([x.expr(), y.expr()], c.at([x.expr(), y.expr()]) + a.at([r.x().expr(), y.expr()]) * b.at([x.expr(), r.x().expr()]));
    let p = Pipeline::new(&[&c]).unwrap();
    let mut s = Schedule::new();
    s.func("C")
        .update(0)
        .split_with("x", "xo", "xi", 8, TailStrategy::GuardWithIf)
        .split_with("y", "yo", "yi", 4, TailStrategy::GuardWithIf)
        .reorder(&["xi", "yi", "r.x", "xo", "yo"])
        .vectorize("xi")
        .unroll("yi")
        .parallel("yo");
    let lowered = lower(&p, &s).unwrap();
    let text = lowered.stmt.to_string();
    let steady = text.split("for C.s1.r.x").nth(1).expect("a reduction loop");
    let steady = &steady[..steady.find("\n    }").unwrap_or(steady.len())];
    assert!(!steady.contains("if ("), "the first reduction loop (steady state) still has guards:\n{text}");
    assert!(
        text.contains("for C.s1.yo in [0, 0 + ((C.s1.y.loop_extent + 3) / 4)) parallel")
            && text.contains("if (C.s1.yo < max((C.s1.y.loop_extent / 4), 0))"),
        "the rows of tiles are not one parallel loop whose steady state is every whole row:\n{text}"
    );
    let compiled = codegen::compile(&lowered).unwrap();
    for n in [3, 8, 13, 32, 35] {
        let mut inputs = BTreeMap::new();
        for name in ["A", "B"] {
            let mut buf = Buffer::new(name, ScalarType::F32, &[(0, n.max(16)), (0, n.max(16))]).unwrap();
            buf.fill(|k| Scalar::Float(((k[0] * 5 + k[1] * 3) % 11) as f64 / 4.0));
            inputs.insert(name.to_string(), buf);
        }
        let region = vec![(0, n), (0, n)];
        agrees_with_reference(&compiled, &p, &inputs, "C", &region, &format!("{n}x{n}"));
    }
}

/// A reduction computed per register tile of its consumer (conv_layer's
/// shape): the tile's region has a constant width, so its loops have
/// constant extents, its unrolled vector loops read and write dense
/// vectors (no per-lane gathers), and no guard or scalar tail survives in
/// the reduction loop. Before its region was written as `min + width`, the
/// whole tile ran in a guarded tail with gathers, 13x slower on conv_layer.
#[test]
fn a_reduction_per_register_tile_has_constant_extents_and_dense_vectors() {
    use compiler::ir::expr::Expr;
    use compiler::lang::RDom;
    let (c, x) = (Var::new("c"), Var::new("x"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let weights = ImageParam::new("weights", ScalarType::F32, 2);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(8))]);
    let acc = Func::new("acc");
    acc.define(&[&c, &x], weights.at([c.expr(), Expr::i32(0)]));
    acc.update(
        [c.expr(), x.expr()],
        acc.at([c.expr(), x.expr()]) + weights.at([c.expr(), r.x().expr()]) * input.at([r.x().expr(), x.expr()]),
    );
    let out = Func::new("out");
    out.define(&[&c, &x], compiler::lang::ops::max(acc.at([c.expr(), x.expr()]), 0.0f32));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("out")
        .split("c", "co", "ci", 16)
        .split("x", "xo", "xi", 4)
        .reorder(&["ci", "xi", "xo", "co"])
        .vectorize_by("ci", 8)
        .unroll("ci")
        .unroll("xi");
    s.func("acc").compute_at("out", "xo");
    for stage in 0..2 {
        let f = if stage == 0 { s.func("acc") } else { s.func("acc").update(0) };
        let f = f.split("c", "co", "ci", 16).split("x", "xo", "xi", 4);
        let f = if stage == 0 { f } else { f.reorder(&["ci", "xi", "r.x", "co", "xo"]) };
        f.vectorize_by("ci", 8).unroll("ci").unroll("xi");
    }
    let lowered = lower(&p, &s).unwrap();
    let text = lowered.stmt.to_string();
    let reduction = text.split("for acc.s1.r.x").nth(1).expect("a reduction loop");
    assert!(!reduction.contains("if (") && !reduction.contains("_vi"), "guards or scalar tails in the reduction:\n{text}");
    assert!(!text.contains("for acc.s1.co") && !text.contains("for acc.s1.xo"), "the tile's outer loops have one iteration:\n{text}");
    let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    let ir = &compiled.text.as_ref().expect("kept").llvm_ir;
    assert!(!ir.contains("llvm.masked.gather"), "dense vector reads became gathers");
    let mut inputs = BTreeMap::new();
    for (name, extents) in [("input", [8, 12]), ("weights", [32, 8])] {
        let mut buf = Buffer::new(name, ScalarType::F32, &[(0, extents[0]), (0, extents[1])]).unwrap();
        buf.fill(|k| Scalar::Float(((k[0] * 5 + k[1] * 3) % 11) as f64 / 4.0 - 1.0));
        inputs.insert(name.to_string(), buf);
    }
    let region = vec![(0, 32), (0, 12)];
    agrees_with_reference(&compiled, &p, &inputs, "out", &region, "");
}

/// The float modes: strict code rounds every multiply and add (no fused
/// multiply-add anywhere, results bit-identical to the reference); the fast
/// mode marks them contractible, and on a host with FMA the multiply-adds
/// fuse, within a rounding of the reference.
#[test]
fn multiply_adds_fuse_only_in_the_fast_float_mode() {
    let (p, inputs) = every_other_column();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let lowered = lower(&p, &s).unwrap();
    let region = vec![(0, 32), (0, 8)];
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &region).unwrap();
    let has_fma = codegen::HostTarget::detect().features.contains("+fma");
    for fast_float in [false, true] {
        let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, fast_float }).unwrap();
        let text = compiled.text.as_ref().expect("kept");
        let got = compiled.run(&inputs, &BTreeMap::new(), &[("out", region.clone())]).unwrap().remove("out").unwrap();
        let fused = text.assembly.lines().any(|l| l.trim_start().starts_with("vfmadd") || l.trim_start().starts_with("vfmsub"));
        if fast_float {
            assert!(text.llvm_ir.contains("fmul contract") || text.llvm_ir.contains("llvm.fma"), "fast mode marks multiplies contractible");
            assert_eq!(fused, has_fma, "fused multiply-adds on a host with FMA, none without");
            for i in 0..expected.len() as i64 {
                let (a, b) = (expected.read(i).unwrap().as_f64(), got.read(i).unwrap().as_f64());
                assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{a} vs {b}");
            }
        } else {
            assert!(!fused && !text.llvm_ir.contains("contract"), "strict code has no fused multiply-adds");
            assert_eq!(got, expected);
        }
    }
}

/// A division by a constant multiplies by the constant's reciprocal in the
/// fast mode only; a division by a variable divides in both modes.
#[test]
fn divisions_by_a_constant_multiply_by_its_reciprocal_only_in_the_fast_float_mode() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    let (here, next) = (input.at([&x, &y]), input.at([&x + 1, y.expr()]));
    out.define(&[&x, &y], here.clone() / 12.92f32 + here / (next + 1.0f32));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 33), (0, 8)]).unwrap();
    b.fill(|c| Scalar::Float((c[0] * 7 + c[1] * 3) as f64 / 16.0));
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let lowered = lower(&p, &s).unwrap();
    let region = vec![(0, 32), (0, 8)];
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "out", &region).unwrap();
    let mut divisions = Vec::new();
    for fast_float in [false, true] {
        let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, fast_float }).unwrap();
        let text = compiled.text.as_ref().expect("kept");
        divisions
            .push(text.assembly.lines().filter(|l| l.trim_start().starts_with("vdivps") || l.trim_start().starts_with("divps")).count());
        let got = compiled.run(&inputs, &BTreeMap::new(), &[("out", region.clone())]).unwrap().remove("out").unwrap();
        for i in 0..expected.len() as i64 {
            let (a, b) = (expected.read(i).unwrap(), got.read(i).unwrap());
            if fast_float {
                assert!(agrees_within_fast_float(a, b), "{a:?} vs {b:?}");
            } else {
                assert_eq!(a, b);
            }
        }
    }
    // Each vector of the strict code divides twice, the fast code's once.
    assert!(divisions[1] >= 1 && divisions[0] == 2 * divisions[1], "vector divisions, strict and fast: {divisions:?}");
}

/// An upsampling read (`input(x / c)`, each element read by c neighbouring
/// lanes) is dense loads and shuffles up to a factor of 8, not a gather;
/// one by 9 is a gather.
#[test]
fn upsampling_vector_reads_are_dense_loads_and_shuffles_up_to_a_factor_of_8() {
    for (factor, gathers) in [(2, false), (8, false), (9, true)] {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let input = ImageParam::new("input", ScalarType::F32, 2);
        let out = Func::new("out");
        out.define(&[&x, &y], input.at([x.expr() / factor, y.expr()]) * 0.5f32);
        let mut b = Buffer::new("input", ScalarType::F32, &[(0, 64), (0, 8)]).unwrap();
        b.fill(|c| Scalar::Float((c[0] * 7 + c[1] * 3) as f64 / 16.0));
        let p = Pipeline::new(&[&out]).unwrap();
        let mut s = Schedule::new();
        s.func("out").vectorize_by("x", 8);
        let ir = run_and_check(&p, &BTreeMap::from([("input".to_string(), b)]), &s);
        assert_eq!(ir.contains("llvm.masked.gather"), gathers, "factor {factor}:\n{ir}");
        assert!(gathers || ir.contains("shufflevector"), "factor {factor}: loads and shuffles:\n{ir}");
    }
}

/// Upsampling reads by factors 2 to 8 at several vector widths, from
/// regions starting at every remainder (negative coordinates included), up
/// to both ends of an input holding exactly the elements read (`valgrind`
/// on this test binary reports no invalid read).
#[test]
fn upsampling_reads_stay_inside_the_elements_they_read() {
    let floor_div = |a: i64, c: i64| a.div_euclid(c);
    for factor in 2..=8i64 {
        for lanes in [2, 4, 8, 16, 32] {
            for start in [-9, -7, -2, 0, 1, 3, 4, 5, 7, 10] {
                let (x, y) = (Var::new("x"), Var::new("y"));
                let input = ImageParam::new("input", ScalarType::U8, 2);
                let out = Func::new("out");
                out.define(&[&x, &y], input.at([x.expr() / factor as i32 + 1, y.expr()]));
                let width = lanes * 2;
                let (first, last) = (floor_div(start, factor) + 1, floor_div(start + width - 1, factor) + 1);
                let mut b = Buffer::new("input", ScalarType::U8, &[(first, last - first + 1), (0, 2)]).unwrap();
                b.fill(|c| Scalar::UInt((c[0] * 37 + c[1] * 11).rem_euclid(256) as u64));
                let p = Pipeline::new(&[&out]).unwrap();
                let mut s = Schedule::new();
                s.func("out").vectorize_by("x", lanes);
                let compiled = codegen::compile(&lower(&p, &s).unwrap()).unwrap();
                let inputs = BTreeMap::from([("input".to_string(), b)]);
                let region = vec![(start, width), (0, 2)];
                agrees_with_reference(&compiled, &p, &inputs, "out", &region, &format!("factor {factor}, {lanes} lanes, from {start}"));
            }
        }
    }
}

/// A select on the colour channel (the same for every lane of a vector
/// over x) whose values read memory is a branch: each vector computes the
/// chosen value's loads only, not every channel's.
#[test]
fn a_select_on_a_uniform_condition_computes_one_side() {
    use compiler::lang::ops::{select, CompareExt};
    let (x, c) = (Var::new("x"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    let channel = |k: i32| input.at([x.expr(), compiler::ir::expr::Expr::i32(k as i64)]);
    out.define(
        &[&x, &c],
        select(c.expr().eq_(0), channel(0) * 2.0f32, select(c.expr().eq_(1), channel(1) + 1.0f32, channel(2) - channel(0))),
    );
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 64), (0, 3)]).unwrap();
    b.fill(|k| Scalar::Float((k[0] * 7 + k[1] * 3) as f64 / 16.0));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let lowered = lower(&p, &s).unwrap();
    let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    let ir = &compiled.text.as_ref().expect("kept").llvm_ir;
    assert!(!ir.contains("select <8 x i1>") && !ir.contains("select i1 %"), "the channel select stayed a select:\n{ir}");
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    let region = vec![(0, 64), (0, 3)];
    agrees_with_reference(&compiled, &p, &inputs, "out", &region, "");
}

/// Compiles `out` (which reads `input` of 37 x 4 floats) vectorized by 8
/// along `x`, asserts that the code has a dense vector load (`what` says
/// of what), and that it computes what the reference evaluator computes
/// over each of `regions`.
fn dense_reads_agree(out: &Func, what: &str, regions: &[Vec<(i64, i64)>]) {
    let mut b = Buffer::new("input", ScalarType::F32, &[(0, 37), (0, 4)]).unwrap();
    b.fill(|k| Scalar::Float((k[0] * 7 + k[1] * 3) as f64 / 16.0));
    let p = Pipeline::new(&[out]).unwrap();
    let mut s = Schedule::new();
    s.func("out").vectorize_by("x", 8);
    let lowered = lower(&p, &s).unwrap();
    let compiled = compile_with(&lowered, &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
    let ir = &compiled.text.as_ref().expect("kept").llvm_ir;
    assert!(ir.contains("load <8 x float>"), "no dense load {what}:\n{ir}");
    let inputs = BTreeMap::from([("input".to_string(), b)]);
    for region in regions {
        agrees_with_reference(&compiled, &p, &inputs, "out", region, &format!("{region:?}"));
    }
}

/// A read through a clamp to the edge is one dense load wherever the clamp
/// does not bite (a gather remains for the vectors that straddle an edge),
/// and right on both sides of both edges.
#[test]
fn clamped_reads_are_dense_inside_the_clamp() {
    use compiler::lang::ops::clamp;
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let out = Func::new("out");
    let last = input.min(0) + input.extent(0) - 1;
    out.define(&[&x, &y], input.at([clamp(x.expr() - 3, input.min(0), last), y.expr()]) * 2.0f32);
    dense_reads_agree(&out, "inside the clamp", &[vec![(-20, 80), (0, 4)], vec![(5, 24), (0, 4)], vec![(30, 16), (1, 3)]]);
}

/// A read through two clamps with a shift between them (a boundary
/// condition inlined into a Func that clamps its own coordinates, as a
/// padding stage does) is one dense load wherever neither clamp bites, and
/// right on both sides of every edge.
#[test]
fn reads_through_nested_clamps_are_dense_inside_them() {
    use compiler::lang::ops::{clamp, select, CompareExt};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let edge = Func::new("edge");
    let last = input.min(0) + input.extent(0) - 1;
    edge.define(&[&x, &y], input.at([clamp(x.expr(), input.min(0), last), y.expr()]));
    let out = Func::new("out");
    let inside = compiler::ir::expr::Expr::and(x.expr().ge(0), x.expr().lt(30));
    out.define(&[&x, &y], select(inside, edge.at([clamp(x.expr() + 2, 0, 29), y.expr()]), 0.0f32) * 2.0f32);
    let regions = [vec![(-20, 80), (0, 4)], vec![(5, 24), (0, 4)], vec![(25, 16), (1, 3)], vec![(-3, 8), (0, 1)]];
    dense_reads_agree(&out, "inside the clamps", &regions);
}

/// A vector of floats cast to an integer type saturates in vector
/// registers, not lane by lane (LLVM scalarizes its saturating conversions
/// of vectors on x86): to 8 or 16 bits clamped as floats, converted to
/// 32-bit integers and truncated; to 32 or 64 bits the lanes in range
/// converted and the others replaced by the bound they passed. NaN,
/// infinities, values out of range, the bounds' neighbours and halves give
/// the reference's results, from f32 and f64.
#[test]
fn saturating_casts_stay_vector_code() {
    use compiler::ir::types::Type;
    use compiler::lang::ops::cast;
    let x = Var::new("x");
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.5,
        -0.99,
        255.5,
        256.0,
        -129.0,
        127.9,
        32767.5,
        -32769.0,
        65535.9,
        1e10,
        2147483647.0,
        2147483648.0,
        -2147483648.0,
        -2147483649.0,
        -2147483904.0,
        4294967295.0,
        4294967296.0,
        9223372036854775807.0,
        -9223372036854775808.0,
        -9.3e18,
        1.8446744073709552e19,
        1e30,
        -1e30,
    ];
    for from in [ScalarType::F32, ScalarType::F64] {
        let input = ImageParam::new("input", from, 1);
        let mut b = Buffer::new("input", from, &[(0, 64)]).unwrap();
        b.fill(|c| Scalar::Float(specials.get(c[0] as usize).copied().unwrap_or((c[0] as f64 - 40.0) * 1111.37)));
        let inputs = BTreeMap::from([("input".to_string(), b)]);
        for ty in [Type::u8(), Type::i8(), Type::u16(), Type::i16(), Type::u32(), Type::i32(), Type::u64(), Type::i64()] {
            let out = Func::new("out");
            out.define(&[&x], cast(ty, input.at([x.expr()])));
            let p = Pipeline::new(&[&out]).unwrap();
            let mut s = Schedule::new();
            s.func("out").vectorize_by("x", 16);
            let compiled = compile_with(&lower(&p, &s).unwrap(), &CompileOptions { keep_text: true, ..Default::default() }).unwrap();
            agrees_with_reference(&compiled, &p, &inputs, "out", &[(0, 64)], &format!("{from} to {ty}"));
            let asm = &compiled.text.as_ref().expect("kept").assembly;
            // Every x86 vector unit converts f32 and f64 to i32 (64-bit and
            // unsigned targets need AVX-512).
            if cfg!(target_arch = "x86_64") && ty.scalar.bits() <= 32 && (ty.scalar.is_signed_int() || ty.scalar.bits() < 32) {
                assert!(!asm.contains("cvttss2si") && !asm.contains("cvttsd2si"), "no per-lane conversion of {from} to {ty}:\n{asm}");
            }
        }
    }
}
