//! The storage optimizations fire where the thesis says they should: a Func
//! stored outside the serial loop it is computed in slides its window (each
//! iteration computes only new rows) and folds its storage (a circular
//! buffer of a power-of-two number of rows), and the result still matches the
//! reference evaluator.

use codegen::demo::{blur_schedule, run_demo};
use compiler::ir::expr::{Expr, ExprNode};
use compiler::ir::stmt::{Stmt, StmtNode};
use compiler::ir::visit::{walk_stmt, Visitor};
use compiler::lower::{lower_with, LowerOptions, Pass};
use compiler::schedule::Schedule;

/// Every `LetStmt` value bound to `name` in `s`.
fn lets_named(s: &Stmt, name: &str) -> Vec<Expr> {
    struct Lets<'a>(&'a str, Vec<Expr>);
    impl Visitor for Lets<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::LetStmt { name, value, .. } = s.node() {
                if &**name == self.0 {
                    self.1.push(value.clone());
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut v = Lets(name, vec![]);
    v.visit_stmt(s);
    v.1
}

/// The bounds of every `Realize` of `func` in `s`, as constant extents.
fn realize_extents(s: &Stmt, func: &str) -> Vec<Vec<Option<i64>>> {
    struct Realizes<'a>(&'a str, Vec<Vec<Option<i64>>>);
    impl Visitor for Realizes<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Realize { func, bounds, .. } = s.node() {
                if &**func == self.0 {
                    self.1.push(bounds.iter().map(|r| r.extent.as_int()).collect());
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut v = Realizes(func, vec![]);
    v.visit_stmt(s);
    v.1
}

fn pass(passes: &[(Pass, Stmt)], which: Pass) -> &Stmt {
    &passes.iter().find(|(p, _)| *p == which).unwrap_or_else(|| panic!("no pass {which}")).1
}

#[test]
fn blur_slides_and_folds_its_row_buffer() {
    let lowered =
        lower_with(&compiler::examples::blur(), &blur_schedule(), &LowerOptions { keep_passes: true, ..Default::default() }).unwrap();
    let slid = pass(&lowered.passes, Pass::BoundsAndSliding);
    let mins = lets_named(slid, "blur_x.s0.y.min");
    assert_eq!(mins.len(), 1, "{slid}");
    assert!(
        matches!(mins[0].node(), ExprNode::Select { .. }),
        "blur_x's row loop should start past the rows already computed: {}",
        mins[0]
    );

    let folded = pass(&lowered.passes, Pass::StorageFolding);
    assert_eq!(realize_extents(folded, "blur_x"), vec![vec![None, Some(4)]], "blur_x should keep a circular buffer of 4 rows:\n{folded}");

    let report = run_demo(&blur_schedule(), 37, 29).unwrap();
    assert_eq!(report.points_checked, 37 * 29);
}

#[test]
fn no_sliding_when_storage_is_at_the_compute_level() {
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 8);
    s.func("blur_x").compute_at("blur_y", "yi");
    let lowered = lower_with(&compiler::examples::blur(), &s, &LowerOptions { keep_passes: true, ..Default::default() }).unwrap();
    let slid = pass(&lowered.passes, Pass::BoundsAndSliding);
    for min in lets_named(slid, "blur_x.s0.y.min") {
        assert!(!matches!(min.node(), ExprNode::Select { .. }), "nothing to slide: {min}");
    }
    let report = run_demo(&s, 23, 17).unwrap();
    assert_eq!(report.points_checked, 23 * 17);
}

#[test]
fn each_parallel_strip_slides_its_own_window() {
    // Storage inside the parallel loop: each strip has its own rows and
    // slides over its serial inner loop (storage outside a parallel loop
    // that computes it is rejected as a race; see the illegal table).
    let mut s = Schedule::new();
    s.func("blur_y").split("y", "yo", "yi", 8).parallel("yo");
    s.func("blur_x").store_at("blur_y", "yo").compute_at("blur_y", "yi");
    let lowered = lower_with(&compiler::examples::blur(), &s, &LowerOptions { keep_passes: true, ..Default::default() }).unwrap();
    let slid = pass(&lowered.passes, Pass::BoundsAndSliding);
    let mins = lets_named(slid, "blur_x.s0.y.min");
    assert!(mins.iter().any(|m| matches!(m.node(), ExprNode::Select { .. })), "the row buffer should slide within a strip: {mins:?}");
    let report = run_demo(&s, 19, 21).unwrap();
    assert_eq!(report.points_checked, 19 * 21);
}
