//! Schedules a Halide user writes that used to be refused or to fail in
//! lowering, each now lowered and computing what the reference evaluator
//! computes: a vectorize written before the reorder that makes its loop
//! innermost, an unroll of a loop whose extent bounds inference proves
//! constant, a Func with update definitions used by several stages left
//! at its default placement. And the errors that remain say what, where
//! and how much: a vectorized loop that ends up outside another, an
//! unroll of an extent known only at run time, an unbounded read (the
//! consumer, dimension and index), a buffer too small (the concrete
//! ranges needed and given).

mod common;

use compiler::error::{LowerError, ScheduleErrorKind, UserError};
use compiler::exec::realize::realize;
use compiler::ir::stmt::{ForKind, Stmt, StmtNode};
use compiler::ir::visit::{walk_stmt, Visitor};
use compiler::*;
use std::collections::BTreeMap;

/// Lowers `case` under `s` (checked accesses) and runs it on the
/// interpreter; it must compute exactly what the reference computes.
fn agrees(case: &common::Case, s: &Schedule) -> Lowered {
    let lowered = lower_with(&case.pipeline, s, &LowerOptions::checked()).unwrap_or_else(|e| panic!("{e}\n{s}"));
    let want = compiler::exec::reference::realize(&case.pipeline, &case.inputs, &case.params, &case.output, &case.region).unwrap();
    let got = realize(&lowered, &case.inputs, &case.params, &[(&case.output, case.region.clone())]).unwrap();
    assert_eq!(got[&case.output], want, "{s}");
    lowered
}

/// The loops of `s` of the given kind, by name.
fn loops(s: &Stmt, kind: ForKind) -> Vec<String> {
    struct Loops(ForKind, Vec<String>);
    impl Visitor for Loops {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::For { name, kind, .. } = s.node() {
                if *kind == self.0 {
                    self.1.push(name.to_string());
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut l = Loops(kind, vec![]);
    l.visit_stmt(s);
    l.1
}

/// The loops of other Funcs around the first store to `func`, outermost
/// first: where `func` is computed.
fn placement(s: &Stmt, func: &str) -> Vec<String> {
    struct Find<'a> {
        func: &'a str,
        stack: Vec<String>,
        found: Option<Vec<String>>,
    }
    impl Visitor for Find<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::For { name, .. } => {
                    self.stack.push(name.to_string());
                    walk_stmt(self, s);
                    self.stack.pop();
                }
                StmtNode::Store { buffer, .. } if &**buffer == self.func && self.found.is_none() => {
                    let prefix = format!("{}.", self.func);
                    self.found = Some(self.stack.iter().filter(|l| !l.starts_with(&prefix)).cloned().collect());
                }
                _ => walk_stmt(self, s),
            }
        }
    }
    let mut f = Find { func, stack: vec![], found: None };
    f.visit_stmt(s);
    f.found.unwrap_or_else(|| panic!("no store to {func} in\n{s}"))
}

#[test]
fn vectorize_may_come_before_the_reorder_that_makes_its_loop_innermost() {
    let case = common::blur();
    // After the split the loops are x, yi, yo: yi is vectorized while x is
    // still inside it, and the reorder then makes yi innermost.
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 8).vectorize("yi").reorder(&["yi", "x", "yo"]);
    let lowered = agrees(&case, &s);
    assert!(loops(&lowered.stmt, ForKind::Serial).iter().all(|l| !l.ends_with(".yi")), "{}", lowered.stmt);
    // The same directives with the reorder first give the same statement.
    let mut first = Schedule::new();
    first.func("blur_y").split("y", "yo", "yi", 8).reorder(&["yi", "x", "yo"]).vectorize("yi");
    assert_eq!(lower(&case.pipeline, &first).unwrap().stmt, lower(&case.pipeline, &s).unwrap().stmt);
}

#[test]
fn a_vectorized_loop_a_later_reorder_moves_outwards_is_named() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").split("x", "xo", "xi", 8).vectorize("xi").reorder(&["y", "xi"]);
    let err = lower(&case.pipeline, &s).unwrap_err();
    let LowerError::User(UserError::Schedule(e)) = &err else { panic!("{err}") };
    assert_eq!(e.kind(), ScheduleErrorKind::VectorLoopNotInnermost, "{err}");
    let msg = err.to_string();
    for part in ["blur_y", "vectorize(xi)", "xi is not innermost", "y, xo, xi"] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
}

/// `out(x) = f(x, 0) + 2 f(x, 1) + 3 f(x, 2)` with `f(x, c) = input(x + c)
/// * (c + 1)`: bounds inference proves `f`'s loop over `c` has extent 3.
fn channels() -> common::Case {
    let (x, c) = (Var::new("x"), Var::new("c"));
    let input = ImageParam::new("input", ScalarType::I32, 1);
    let f = Func::new("f");
    f.define(&[&x, &c], input.at([x.expr() + c.expr()]) * (c.expr() + 1));
    let out = Func::new("out");
    out.define(&[&x], f.at([x.expr(), Expr::i32(0)]) + f.at([x.expr(), Expr::i32(1)]) * 2 + f.at([x.expr(), Expr::i32(2)]) * 3);
    common::Case {
        name: "channels",
        pipeline: Pipeline::new(&[&out]).unwrap(),
        inputs: BTreeMap::from([("input".to_string(), common::input_buffer("input", ScalarType::I32, &[(-8, 64)], 1000))]),
        params: BTreeMap::new(),
        output: "out".into(),
        region: vec![(0, 32)],
    }
}

#[test]
fn unroll_accepts_an_extent_bounds_inference_proves_constant() {
    let case = channels();
    for at_root in [true, false] {
        let mut s = Schedule::new();
        let f = s.func("f").reorder(&["c", "x"]).unroll("c");
        if at_root {
            f.compute_root();
        } else {
            f.compute_at("out", "x");
        }
        let lowered = agrees(&case, &s);
        let serial = loops(&lowered.stmt, ForKind::Serial);
        assert!(serial.iter().all(|l| !l.starts_with("f.s0.c")), "{serial:?}\n{}", lowered.stmt);
    }
}

#[test]
fn unroll_of_an_extent_known_only_at_run_time_names_the_func_stage_and_loop() {
    let case = common::blur();
    let mut s = Schedule::new();
    s.func("blur_y").unroll("y");
    let err = lower(&case.pipeline, &s).unwrap_err();
    assert!(
        matches!(&err, LowerError::User(UserError::UnrollExtent { func, stage: 0, var, .. }) if func == "blur_y" && var == "y"),
        "{err}"
    );
    let msg = err.to_string();
    for part in ["Func blur_y, stage 0", "unroll(y)", "loop y has extent", "split it by a constant factor"] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
}

/// `h` (a Func with an update) read by both stages of `out`, and by two
/// Funcs `g1`, `g2` computed at `out`'s `y` loop.
fn shared_update(through_consumers: bool) -> common::Case {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::I32, 2);
    let h = Func::new("h");
    h.define(&[&x, &y], input.at([x.expr(), y.expr()]));
    h.update([x.expr(), y.expr()], h.at([x.expr(), y.expr()]) * 3 + 1);
    let out = Func::new("out");
    if through_consumers {
        let (g1, g2) = (Func::new("g1"), Func::new("g2"));
        g1.define(&[&x, &y], h.at([x.expr(), y.expr()]) + 1);
        g1.update([x.expr(), y.expr()], g1.at([x.expr(), y.expr()]) * 2);
        g2.define(&[&x, &y], h.at([x.expr() + 1, y.expr()]) - 1);
        g2.update([x.expr(), y.expr()], g2.at([x.expr(), y.expr()]) * 5);
        out.define(&[&x, &y], g1.at([x.expr(), y.expr()]) + g2.at([x.expr(), y.expr()]));
    } else {
        out.define(&[&x, &y], h.at([x.expr(), y.expr()]));
        out.update([x.expr(), y.expr()], out.at([x.expr(), y.expr()]) + h.at([x.expr() + 2, y.expr()]));
    }
    common::Case {
        name: "shared_update",
        pipeline: Pipeline::new(&[&out]).unwrap(),
        inputs: BTreeMap::from([("input".to_string(), common::input_buffer("input", ScalarType::I32, &[(-8, 64), (-8, 64)], 1000))]),
        params: BTreeMap::new(),
        output: "out".into(),
        region: vec![(0, 24), (0, 16)],
    }
}

#[test]
fn a_func_with_updates_used_by_several_stages_is_computed_where_all_uses_meet() {
    // Both stages of the output read h: only the root encloses both.
    let case = shared_update(false);
    let lowered = agrees(&case, &Schedule::new());
    assert_eq!(placement(&lowered.stmt, "h"), Vec::<String>::new());
    // g1 and g2, computed inside out's y loop, read h: h goes there too.
    let case = shared_update(true);
    let mut s = Schedule::new();
    s.func("g1").compute_at("out", "y");
    s.func("g2").compute_at("out", "y");
    let lowered = agrees(&case, &s);
    assert_eq!(placement(&lowered.stmt, "h"), ["out.s0.y"]);
    // At the default placement of g1 and g2 (each inside out's x loop)
    // the innermost loop enclosing both is out's x loop.
    let lowered = agrees(&case, &Schedule::new());
    assert_eq!(placement(&lowered.stmt, "h"), ["out.s0.y", "out.s0.x"]);
}

#[test]
fn an_unbounded_read_names_the_consumer_the_dimension_and_the_index() {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::I32, 1);
    let g = Func::new("g");
    g.define(&[&x], input.at([x.expr()]) * 2);
    let out = Func::new("out");
    out.define(&[&x], g.at([input.at([x.expr()])]));
    let p = Pipeline::new(&[&out]).unwrap();
    let mut s = Schedule::new();
    s.func("g").compute_root();
    let err = lower(&p, &s).unwrap_err();
    assert!(
        matches!(&err, LowerError::User(UserError::UnboundedRead { func, consumer, dim, index })
            if func == "g" && consumer == "out" && dim == "x" && index.contains("input(")),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("the region of g that out reads in dimension x: its index input("), "{msg}");
}

#[test]
fn a_buffer_too_small_gives_the_ranges_needed_and_given() {
    let case = common::blur();
    let lowered = lower(&case.pipeline, &Schedule::new()).unwrap();
    let small = BTreeMap::from([("input".to_string(), Buffer::new("input", ScalarType::U16, &[(0, 10), (0, 10)]).unwrap())]);
    let err = realize(&lowered, &small, &BTreeMap::new(), &[("blur_y", vec![(0, 10), (0, 10)])]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("buffer input is too small: the pipeline reads [-1, 10] in dimension 0, but the buffer holds [0, 9]"), "{msg}");
}
