//! Lowering grows linearly with the length of a chain of Funcs that each
//! read the one before at two clamped offsets. Each Func's bounds are
//! those of the next through a clamp, twice: written out in full, the
//! statement doubled with every Func (ten at the root: 2.5 MB in 4.4 s;
//! sixteen computed per tile did not lower in minutes, and the search's
//! legality checks met such candidates in the suite's pipelines). The
//! interval ends of lets too large to write out stay behind names, defined
//! by let statements in front of what uses them, and a register
//! accumulator's index that would grow past a limit is not expanded. That
//! still left growth quadratic: each Func's walk expanded, down to the
//! loops, the bounds of every consumer realized inside it at the same
//! loop level; those bounds now move out in front of the producer and its
//! realization, and its walk reads them by name.
//!
//! Measured in statement size, not time: a chain twice as long must make
//! statements at most 2.5 times larger in every pass (linear growth gives
//! two, quadratic four; the quadratic walk measured 3.0 and 3.4, and
//! doubling per Func would give 256 from 8 to 16).

use compiler::ir::types::ScalarType;
use compiler::lang::ops::clamp;
use compiler::lower::{lower_with, LowerOptions};
use compiler::schedule::Schedule;
use compiler::{Func, ImageParam, Pipeline, Var};

/// Where the chain's Funcs are computed.
#[derive(Clone, Copy, Debug)]
enum Placement {
    /// Every Func at the root.
    Root,
    /// Every Func per 32x32 tile of the output.
    PerTile,
}

/// The size of the largest statement lowering a chain of `levels` Funcs
/// after the input makes (bounds inference's, before the simplifier folds
/// it), in characters.
fn lowered_size(levels: usize, placement: Placement) -> usize {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let (w, h) = (input.width(), input.height());
    let first = Func::new("f0");
    first.define(&[&x, &y], input.at([x.expr(), y.expr()]));
    let mut prev = first;
    for k in 1..=levels {
        let f = Func::new(&format!("f{k}"));
        let at = |dx: i32, dy: i32| prev.at([clamp(&x + dx, 0, w.clone() - 1), clamp(&y + dy, 0, h.clone() - 1)]);
        f.define(&[&x, &y], at(-1, 0) + at(1, 1));
        prev = f;
    }
    let output = format!("f{levels}");
    let mut s = Schedule::new();
    if let Placement::PerTile = placement {
        s.func(&output).tile("x", "y", "xo", "yo", "xi", "yi", 32, 32);
    }
    for k in 0..levels {
        match placement {
            Placement::Root => s.func(&format!("f{k}")).compute_root(),
            Placement::PerTile => s.func(&format!("f{k}")).compute_at(&output, "xo"),
        };
    }
    let p = Pipeline::new(&[&prev]).expect("a valid pipeline");
    let options = LowerOptions { keep_passes: true, ..LowerOptions::default() };
    let lowered = lower_with(&p, &s, &options).unwrap_or_else(|e| panic!("{levels} levels, {placement:?}: {e}"));
    if let Ok(path) = std::env::var("SCALE_OUT") {
        std::fs::write(format!("{path}-{levels}-{placement:?}"), lowered.stmt.to_string()).unwrap();
    }
    // The largest statement any pass made (bounds inference's is the largest).
    compiler::stack::on_large_stack(|| lowered.passes.iter().map(|(_, stmt)| stmt.to_string().len()).max().unwrap_or(0))
}

#[test]
fn a_chain_of_clamped_reads_lowers_to_a_statement_linear_in_its_length() {
    for placement in [Placement::Root, Placement::PerTile] {
        let (short, long) = (lowered_size(8, placement), lowered_size(16, placement));
        eprintln!("{placement:?}: 8 levels {short} chars, 16 levels {long} chars");
        assert!(2 * long <= 5 * short, "{placement:?}: 8 levels lower to {short} characters, 16 to {long}");
    }
}
