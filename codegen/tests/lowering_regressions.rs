//! Lowering defects found beyond the tested corpus, each kept as a
//! regression test: on all three executors (reference, interpreter, checked
//! JIT) the pipeline computes the same values, and the lowered bounds are
//! what the schedule asks for.

use codegen::{compile, RunError};
use compiler::exec::buffer::Buffer;
use compiler::ir::stmt::{Stmt, StmtNode};
use compiler::ir::types::ScalarType;
use compiler::ir::value::Scalar;
use compiler::ir::visit::{mutate_stmt_children, Mutator};
use compiler::lang::ops::{clamp, select, CompareExt};
use compiler::lang::pipeline::PipelineDef;
use compiler::lang::reductions::{maximum, sum};
use compiler::lower::{lower, lower_with, LowerOptions, Lowered};
use compiler::schedule::Schedule;
use compiler::{Func, ImageParam, Pipeline, RDom, Var};
use std::collections::BTreeMap;

#[path = "support/split_naming.rs"]
mod split_naming;

type Inputs = BTreeMap<String, Buffer>;

fn input(name: &str, ty: ScalarType, region: &[(i64, i64)]) -> Buffer {
    let mut b = Buffer::new(name, ty, region).unwrap();
    b.fill(|c| {
        let h = c.iter().fold(7i64, |h, &x| h.wrapping_mul(131).wrapping_add(x)) & 255;
        if ty.is_float() {
            Scalar::Float(h as f64 / 16.0)
        } else {
            Scalar::Int(h)
        }
    });
    b
}

/// Runs `s` on the interpreter and the JIT, both lowered in checked mode,
/// and compares each with the reference evaluator.
fn agree(p: &PipelineDef, s: &Schedule, inputs: &Inputs, output: &str, region: &[(i64, i64)]) {
    let expected = compiler::exec::reference::realize(p, inputs, &BTreeMap::new(), output, region).expect("reference");
    let lowered = lower_with(p, s, &LowerOptions::checked()).unwrap_or_else(|e| panic!("failed to lower: {e}\n{s}"));
    let regions = [(output, region.to_vec())];
    let interpreted = compiler::exec::realize::realize(&lowered, inputs, &BTreeMap::new(), &regions)
        .unwrap_or_else(|e| panic!("interpreter: {e}\n{s}\n{}", lowered.stmt));
    assert_eq!(interpreted[output], expected, "interpreter\n{s}");
    let compiled = compile(&lowered).expect("compiles");
    let run = compiled.run(inputs, &BTreeMap::new(), &regions).unwrap_or_else(|e| panic!("JIT: {e}\n{s}"));
    assert_eq!(run[output], expected, "JIT\n{s}");
}

/// `vl(x, t) = input(clamp(x, 0, 15)); vl(x, 0) += 1`, and an output whose
/// index into `vl` depends on the values of `fh`, a Func with an inline
/// reduction (the helper Func `fh_sum`): the bounds of `vl` read `fh`.
fn value_dependent_bounds() -> (PipelineDef, Inputs) {
    let (x, t) = (Var::new("x"), Var::new("t"));
    let input_image = ImageParam::new("input", ScalarType::F32, 1);
    let vl = Func::new("vl");
    vl.define(&[&x, &t], input_image.at([clamp(&x, 0, 15)]));
    vl.update([x.expr(), 0.into()], vl.at([x.expr(), 0.into()]) + 1.0f32);
    let fh = Func::new("fh");
    let r = RDom::new("r", &[(0.into(), 3.into())]);
    fh.define(&[&x], sum(&x + r.x()));
    let d = RDom::new("d", &[(0.into(), 3.into())]);
    let out = Func::new("out");
    out.define(&[&x], maximum(vl.at([&x + select(fh.at([d.x().expr()]).eq_(0), 1, 2), 0.into()])));
    let p = Pipeline::new(&[&out]).expect("a valid pipeline");
    let inputs = BTreeMap::from([("input".to_string(), input("input", ScalarType::F32, &[(0, 16)]))]);
    (p, inputs)
}

#[test]
fn bounds_that_read_a_func_are_computed_after_it_under_the_default_schedule() {
    let (p, inputs) = value_dependent_bounds();
    agree(&p, &Schedule::new(), &inputs, "out", &[(0, 8)]);
}

#[test]
fn bounds_that_read_a_func_stored_at_root_are_computed_after_it() {
    let (p, inputs) = value_dependent_bounds();
    // The inline reduction's Func, named after its caller.
    assert!(p.func("fh_sum").is_some(), "{:?}", p.funcs.iter().map(|f| &f.name).collect::<Vec<_>>());
    let mut s = Schedule::new();
    s.func("fh_sum").store_root();
    agree(&p, &s, &inputs, "out", &[(0, 8)]);
}

/// The accumulation pipeline with its inputs.
fn accumulation() -> (PipelineDef, Inputs) {
    let inputs = BTreeMap::from([("input".to_string(), input("input", ScalarType::F32, &[(0, 1024), (0, 256)]))]);
    (split_naming::pipeline(), inputs)
}

fn tiled(outer_x: &str, outer_y: &str) -> Schedule {
    split_naming::schedule(outer_x, outer_y)
}

/// The `Allocate` size of `buffer` in `s`, if it is a constant.
fn allocation_size(s: &Stmt, buffer: &str) -> Option<i64> {
    struct Find<'a>(&'a str, Option<i64>);
    impl Mutator for Find<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            if let StmtNode::Allocate { buffer, size, .. } = s.node() {
                if &**buffer == self.0 {
                    self.1 = compiler::simplify::simplify(size).as_int();
                }
            }
            mutate_stmt_children(self, s)
        }
    }
    let mut find = Find(buffer, None);
    find.mutate_stmt(s);
    find.1
}

fn lowered(p: &PipelineDef, s: &Schedule) -> Lowered {
    lower(p, s).unwrap_or_else(|e| panic!("failed to lower: {e}\n{s}"))
}

#[test]
fn a_split_whose_outer_loop_keeps_the_name_computes_only_the_tile() {
    let (p, inputs) = accumulation();
    let region = [(512, 512), (120, 120)];
    for (ox, oy) in [("x", "y"), ("xo", "yo")] {
        let s = tiled(ox, oy);
        agree(&p, &s, &inputs, "out", &region);
        // One 64x3 tile of f per iteration of out's outer x loop: the
        // allocation is the tile, not everything from coordinate 0.
        let l = lowered(&p, &s);
        assert_eq!(allocation_size(&l.stmt, "f"), Some(64 * 3), "outer loops named {ox}, {oy}:\n{}", l.stmt);
    }
}

/// Lowers the accumulation with `f` at root, then shrinks `f`'s extent in
/// dimension 0 by one: a deliberately undersized realization (the
/// allocation, its strides and the checks all read the let).
fn undersized(options: &LowerOptions) -> (Lowered, Inputs) {
    let (p, inputs) = accumulation();
    let mut s = Schedule::new();
    s.func("f").compute_root().vectorize_by("x", 8);
    let mut l = lower_with(&p, &s, options).unwrap();
    struct Shrink(usize);
    impl Mutator for Shrink {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::LetStmt { name, value, body } if &**name == "f.extent.0" => {
                    self.0 += 1;
                    Stmt::let_stmt(name.clone(), value.clone() - 1, self.mutate_stmt(body))
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    let mut shrink = Shrink(0);
    l.stmt = shrink.mutate_stmt(&l.stmt);
    assert_eq!(shrink.0, 1, "f.extent.0 is a let of the lowered statement:\n{}", l.stmt);
    (l, inputs)
}

const UNDERSIZED_REGION: [(i64, i64); 2] = [(512, 512), (120, 120)];

#[test]
fn checked_mode_turns_an_undersized_realization_into_an_error() {
    let (l, inputs) = undersized(&LowerOptions::checked());
    let regions = [("out", UNDERSIZED_REGION.to_vec())];
    let err = compiler::exec::realize::realize(&l, &inputs, &BTreeMap::new(), &regions).unwrap_err().to_string();
    assert!(err.contains("Func f is accessed outside its storage in dimension 0 (x)"), "{err}");
    let compiled = compile(&l).expect("compiles");
    match compiled.run(&inputs, &BTreeMap::new(), &regions) {
        Err(RunError::AssertionFailed(msg)) => assert!(msg.contains("Func f is accessed outside its storage in dimension 0 (x)"), "{msg}"),
        other => panic!("expected an access check to fail, got {other:?}"),
    }
}

/// Runs the undersized realization unchecked, in a child process (this
/// test binary again) under the guard-page debug allocator: the write past
/// the end of `f`'s allocation must fault at once.
#[test]
fn the_guard_page_allocator_faults_on_an_overrun() {
    const CHILD: &str = "LOWERING_REGRESSIONS_GUARD_CHILD";
    if std::env::var(CHILD).is_ok() {
        let (l, inputs) = undersized(&LowerOptions::default());
        let result = compile(&l).expect("compiles").run(&inputs, &BTreeMap::new(), &[("out", UNDERSIZED_REGION.to_vec())]);
        println!("the overrun did not fault: {:?}", result.map(|_| ()));
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let run = |guard: &str| {
        std::process::Command::new(&exe)
            .args(["--exact", "the_guard_page_allocator_faults_on_an_overrun", "--nocapture", "--test-threads", "1"])
            .env(CHILD, "1")
            .env("HL_GUARD_PAGES", guard)
            .output()
            .expect("the child runs")
    };
    let guarded = run("end");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(guarded.status.signal(), Some(libc::SIGSEGV), "{:?}\n{}", guarded.status, String::from_utf8_lossy(&guarded.stdout));
}

/// A chain of inlined stencils grows as the product of their footprints:
/// past the limit, lowering fails at once with an error naming the Func to
/// compute, instead of overflowing its stack or running for minutes; with
/// that Func at root the pipeline lowers and computes the reference's
/// values.
#[test]
fn an_inlined_expansion_past_the_limit_names_the_func_to_compute() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input_image = ImageParam::new("input", ScalarType::F32, 2);
    let mut previous = Func::new("s0");
    previous.define(&[&x, &y], input_image.at([clamp(&x, 0, 63), clamp(&y, 0, 63)]));
    for k in 1..=5 {
        let next = Func::new(&format!("s{k}"));
        let mut sum = previous.at([&x - 1, &y - 1]);
        for (dx, dy) in [(0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
            sum = sum + previous.at([&x + dx, &y + dy]);
        }
        next.define(&[&x, &y], sum);
        previous = next;
    }
    let p = Pipeline::new(&[&previous]).expect("a valid pipeline");
    let err = lower(&p, &Schedule::new()).unwrap_err();
    let compiler::LowerError::User(compiler::UserError::InlinedTooLarge { func, inlined, nodes, .. }) = &err else { panic!("{err}") };
    assert_eq!((func.as_str(), inlined.as_str()), ("s4", "s3"), "{err}");
    assert!(*nodes > compiler::lower::MAX_INLINED_NODES);
    let mut s = Schedule::new();
    s.func("s2").compute_root();
    let inputs = BTreeMap::from([("input".to_string(), input("input", ScalarType::F32, &[(0, 64), (0, 64)]))]);
    agree(&p, &s, &inputs, "s5", &[(0, 16), (0, 16)]);
}

/// `f(x, y) = 0; f(x, y) += w(r) * input(x + r, y)` over 16 taps: a
/// reduction whose point stays put along its loop.
fn row_convolution() -> (PipelineDef, Inputs) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let image = ImageParam::new("input", ScalarType::F32, 2);
    let weights = ImageParam::new("w", ScalarType::F32, 1);
    let r = RDom::new("r", &[(0.into(), 16.into())]);
    let f = Func::new("f");
    f.define(&[&x, &y], 0.0f32);
    f.update([x.expr(), y.expr()], f.at([x.expr(), y.expr()]) + weights.at([r.x().expr()]) * image.at([&x + r.x().expr(), y.expr()]));
    let p = Pipeline::new(&[&f]).unwrap();
    let inputs = BTreeMap::from([
        ("input".to_string(), input("input", ScalarType::F32, &[(0, 64), (0, 16)])),
        ("w".to_string(), input("w", ScalarType::F32, &[(0, 16)])),
    ]);
    (p, inputs)
}

/// The names of the buffers `s` allocates.
fn allocations(s: &Stmt) -> Vec<String> {
    struct Allocations(Vec<String>);
    impl compiler::ir::visit::Visitor for Allocations {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Allocate { buffer, .. } = s.node() {
                self.0.push(buffer.to_string());
            }
            compiler::ir::visit::walk_stmt(self, s);
        }
    }
    let mut v = Allocations(vec![]);
    compiler::ir::visit::Visitor::visit_stmt(&mut v, s);
    v.0
}

#[test]
fn a_register_tile_accumulates_in_a_stack_buffer() {
    // Two vectors of x by 3 rows, unrolled inside the reduction loop; 37 x
    // 10 points leave a partial tile in both dimensions, so the rows' tail
    // is guarded and only the steady state keeps its accumulators apart.
    let (p, inputs) = row_convolution();
    let mut s = Schedule::new();
    s.func("f")
        .update(0)
        .split("x", "xo", "xi", 16)
        .split("y", "yo", "yi", 3)
        .reorder(&["xi", "yi", "r.x", "xo", "yo"])
        .vectorize("xi")
        .unroll("yi");
    let region = [(0, 37), (0, 10)];
    agree(&p, &s, &inputs, "f", &region);
    let lowered = lower(&p, &s).unwrap();
    assert!(allocations(&lowered.stmt).iter().any(|a| a.starts_with("f.accumulators")), "{}", lowered.stmt);
    let compiled = compile(&lowered).unwrap();
    let expected = compiler::exec::reference::realize(&p, &inputs, &BTreeMap::new(), "f", &region).unwrap();
    assert_eq!(compiled.run(&inputs, &BTreeMap::new(), &[("f", region.to_vec())]).unwrap()["f"], expected);
}

#[test]
fn a_reduction_whose_point_moves_keeps_it_in_its_buffer() {
    // A histogram: the point updated is read from the input, so it changes
    // along the reduction loop and nothing is promoted.
    let (x, r) = (Var::new("x"), RDom::new("r", &[(0.into(), 64.into())]));
    let image = ImageParam::new("input", ScalarType::I32, 1);
    let h = Func::new("h");
    h.define(&[&x], 0i32);
    h.update([clamp(image.at([r.x().expr()]), 0, 15)], h.at([clamp(image.at([r.x().expr()]), 0, 15)]) + 1i32);
    let p = Pipeline::new(&[&h]).unwrap();
    let inputs = BTreeMap::from([("input".to_string(), input("input", ScalarType::I32, &[(0, 64)]))]);
    let s = Schedule::new();
    agree(&p, &s, &inputs, "h", &[(0, 16)]);
    let lowered = lower(&p, &s).unwrap();
    assert!(!allocations(&lowered.stmt).iter().any(|a| a.contains("accumulators")), "{}", lowered.stmt);
}
