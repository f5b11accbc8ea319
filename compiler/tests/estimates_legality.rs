//! Schedules that validate but would not run at the pipeline's estimates get
//! a typed error naming the Func (or input), stage, dimension and directive;
//! schedules that do run at the estimates pass.

use compiler::error::{LowerError, ScheduleErrorKind, UserError};
use compiler::ir::types::ScalarType;
use compiler::lang::pipeline::PipelineDef;
use compiler::schedule::legality::{check_at_estimates, EstimateError, Limits};
use compiler::schedule::{Schedule, TailStrategy};
use compiler::{Func, ImageParam, Pipeline, Var};

/// `blur_x(x, y) = input(x, y) + input(x + 1, y)`,
/// `out(x, y) = blur_x(x, y) + blur_x(x, y + 1)`: at the output estimate
/// `[0, out_w) x [0, out_h)` it reads exactly `[0, out_w] x [0, out_h]`;
/// the input's estimate is that plus `pad` on the high side.
fn blur(out_w: i64, out_h: i64, pad: i64, with_input_estimate: bool) -> PipelineDef {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let blur_x = Func::new("blur_x");
    blur_x.define(&[&x, &y], input.at([x.expr(), y.expr()]) + input.at([&x + 1, y.expr()]));
    let out = Func::new("out");
    out.define(&[&x, &y], blur_x.at([x.expr(), y.expr()]) + blur_x.at([x.expr(), &y + 1]));
    out.set_estimate(0, 0, out_w).set_estimate(1, 0, out_h);
    if with_input_estimate {
        input.set_estimate(0, 0, out_w + 1 + pad).set_estimate(1, 0, out_h + 1 + pad);
    }
    Pipeline::new(&[&out]).expect("a valid pipeline")
}

fn unpadded() -> PipelineDef {
    blur(99, 99, 0, true)
}

struct Row {
    what: &'static str,
    pipeline: fn() -> PipelineDef,
    schedule: fn(&mut Schedule),
    limits: Limits,
    /// `None`: the schedule runs at the estimates.
    expect: Option<fn(&EstimateError) -> bool>,
}

const DEFAULT: Limits = Limits { max_allocation_bytes: 1 << 31, deadline: None };

const TABLE: &[Row] = &[
    Row { what: "the default schedule", pipeline: unpadded, schedule: |_| {}, limits: DEFAULT, expect: None },
    Row {
        what: "a shift-inwards vector loop of the output, wide enough",
        pipeline: unpadded,
        schedule: |s| {
            s.func("out").vectorize_by("x", 8);
        },
        limits: DEFAULT,
        expect: None,
    },
    Row {
        what: "round-up of an intermediate into a padded input",
        pipeline: || blur(99, 99, 8, true),
        schedule: |s| {
            s.func("blur_x").compute_root().split_with("x", "xo", "xi", 8, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: None,
    },
    Row {
        what: "round-up of an intermediate over-reads an unpadded input",
        pipeline: unpadded,
        schedule: |s| {
            s.func("blur_x").compute_root().split_with("x", "xo", "xi", 8, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: Some(
            |e| matches!(e, EstimateError::InputReadOutsideEstimate { input, dim: 0, read_max: 104, max: 99, .. } if input == "input"),
        ),
    },
    Row {
        what: "shift-inwards of an intermediate per tile over-reads an unpadded input",
        pipeline: unpadded,
        schedule: |s| {
            s.func("out").split_with("x", "xo", "xi", 8, TailStrategy::GuardWithIf);
            s.func("blur_x").compute_at("out", "xo").split_with("x", "bo", "bi", 16, TailStrategy::ShiftInwards);
        },
        limits: DEFAULT,
        expect: Some(|e| matches!(e, EstimateError::InputReadOutsideEstimate { dim: 0, .. })),
    },
    Row {
        what: "round-up of an intermediate's rows over-reads an unpadded input",
        pipeline: unpadded,
        schedule: |s| {
            s.func("blur_x").compute_root().split_with("y", "yo", "yi", 8, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: Some(|e| matches!(e, EstimateError::InputReadOutsideEstimate { dim: 1, read_max: 103, max: 99, .. })),
    },
    Row {
        what: "round-up of the output that does not divide its extent",
        pipeline: unpadded,
        schedule: |s| {
            s.func("out").split_with("x", "xo", "xi", 8, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: Some(
            |e| matches!(e, EstimateError::RoundUpDoesNotDivide { func, stage: 0, var, factor: 8, extent: 99 } if func == "out" && var == "x"),
        ),
    },
    Row {
        what: "round-up of the output that divides its extent",
        pipeline: || blur(96, 99, 0, true),
        schedule: |s| {
            s.func("out").split_with("x", "xo", "xi", 8, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: None,
    },
    Row {
        what: "round-up of a nested split of the output",
        pipeline: || blur(96, 99, 0, true),
        schedule: |s| {
            s.func("out").split_with("x", "xo", "xi", 8, TailStrategy::RoundUp).split_with("xo", "xoo", "xoi", 5, TailStrategy::RoundUp);
        },
        limits: DEFAULT,
        expect: Some(|e| matches!(e, EstimateError::RoundUpDoesNotDivide { var, factor: 5, extent: 12, .. } if var == "xo")),
    },
    Row {
        what: "shift-inwards of the output wider than its extent",
        pipeline: || blur(6, 99, 0, true),
        schedule: |s| {
            s.func("out").vectorize_by("x", 8);
        },
        limits: DEFAULT,
        expect: Some(
            |e| matches!(e, EstimateError::ShiftInwardsExceedsExtent { func, var, factor: 8, extent: 6, .. } if func == "out" && var == "x"),
        ),
    },
    Row {
        what: "an intermediate allocation over the limit",
        pipeline: unpadded,
        schedule: |s| {
            s.func("blur_x").compute_root();
        },
        limits: Limits { max_allocation_bytes: 1000, deadline: None },
        expect: Some(|e| matches!(e, EstimateError::AllocationTooLarge { func, bytes: 39_600, limit: 1000 } if func == "blur_x")),
    },
    Row {
        what: "an intermediate allocation over 2 GiB at huge estimates",
        pipeline: || blur(40_000, 40_000, 0, true),
        schedule: |s| {
            s.func("blur_x").compute_root();
        },
        limits: DEFAULT,
        expect: Some(|e| matches!(e, EstimateError::AllocationTooLarge { func, .. } if func == "blur_x")),
    },
    Row {
        what: "the same intermediate per row fits",
        pipeline: || blur(40_000, 40_000, 0, true),
        schedule: |s| {
            s.func("blur_x").compute_at("out", "y");
        },
        limits: DEFAULT,
        expect: None,
    },
    Row {
        what: "an input without estimates",
        pipeline: || blur(99, 99, 0, false),
        schedule: |_| {},
        limits: DEFAULT,
        expect: Some(|e| matches!(e, EstimateError::MissingEstimate { what } if what.contains("input"))),
    },
    Row {
        what: "a schedule that does not validate",
        pipeline: unpadded,
        schedule: |s| {
            s.func("out").split("z", "zo", "zi", 4);
        },
        limits: DEFAULT,
        expect: Some(
            |e| matches!(e, EstimateError::Lower(LowerError::User(UserError::Schedule(s))) if s.kind() == ScheduleErrorKind::NoSuchLoop),
        ),
    },
];

#[test]
fn each_schedule_gets_its_verdict_at_the_estimates() {
    let (mut errors, mut naming_a_func) = (0, 0);
    for (i, row) in TABLE.iter().enumerate() {
        let p = (row.pipeline)();
        let mut s = Schedule::new();
        (row.schedule)(&mut s);
        let got = check_at_estimates(&p, &s, &row.limits);
        match (row.expect, &got) {
            (None, Ok(_)) => {}
            (None, Err(e)) => panic!("row {i} ({}): expected to run, got: {e}\n{s}", row.what),
            (Some(_), Ok(_)) => panic!("row {i} ({}): expected an error, the schedule passed\n{s}", row.what),
            (Some(is_expected), Err(e)) => {
                assert!(is_expected(e), "row {i} ({}): unexpected error: {e:?}", row.what);
                assert!(!e.to_string().is_empty());
                if let Some(func) = e.func() {
                    assert!(e.to_string().contains(func), "row {i} ({}): {e} does not name {func}", row.what);
                    naming_a_func += 1;
                }
                errors += 1;
            }
        }
    }
    assert!(errors >= 10, "the table must hold at least 10 failing schedules, has {errors}");
    assert!(naming_a_func >= 5, "the Func at fault is data in only {naming_a_func} errors");
}

/// The messages name the input, dimension and the splits that may be at
/// fault.
#[test]
fn an_over_read_names_the_input_dimension_and_suspect_splits() {
    let p = unpadded();
    let mut s = Schedule::new();
    s.func("blur_x").compute_root().split_with("x", "xo", "xi", 8, TailStrategy::RoundUp);
    let e = check_at_estimates(&p, &s, &Limits::default()).unwrap_err().to_string();
    assert!(e.contains("input input") && e.contains("dimension 0") && e.contains("[0, 104]") && e.contains("[0, 99]"), "{e}");
    assert!(e.contains("blur_x.split(x, xo, xi, 8, round_up)"), "{e}");
}

/// Random schedules of a pipeline with estimates run at the estimates,
/// even over an unpadded input (where random round-up and shift-inwards
/// splits of intermediates would over-read).
#[test]
fn random_schedules_run_at_the_estimates() {
    use rand::SeedableRng;
    let p = unpadded();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let options = compiler::schedule::random::RandomScheduleOptions::default();
    for k in 0..60 {
        let s = compiler::schedule::random::random_schedule(&p, &mut rng, &options);
        if let Err(e) = check_at_estimates(&p, &s, &Limits::default()) {
            panic!("random schedule #{k} does not run at the estimates: {e}\n{s}");
        }
    }
}

/// A 1-D pyramid, four levels down (`d{l}(x) = d{l-1}(2x) + d{l-1}(2x + 1)`)
/// and four back up (`u{l}(x) = u{l+1}(x/2) + u{l+1}((x + 1)/2)`), the
/// upsampling levels computed inside ever finer splits of the output.
fn pyramid_1d() -> PipelineDef {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::F32, 1);
    let mut level = Func::new("d0");
    level.define(&[&x], input.at([&x * 2]) + input.at([&x * 2 + 1]));
    for l in 1..4 {
        let d = Func::new(&format!("d{l}"));
        d.define(&[&x], level.at([&x * 2]) + level.at([&x * 2 + 1]));
        level = d;
    }
    for l in (0..4).rev() {
        let u = Func::new(&format!("u{l}"));
        u.define(&[&x], level.at([&x / 2]) + level.at([(&x + 1) / 2]));
        level = u;
    }
    let out = Func::new("out");
    out.define(&[&x], level.at([x.expr()]));
    out.set_estimate(0, 0, 4096);
    input.set_estimate(0, 0, 8192);
    Pipeline::new(&[&out]).expect("a valid pipeline")
}

/// The allocation of a level computed per tile is one tile's region, not
/// the distance the tile moves: its extent, `((b/2 + 1)/2 + 1)/2 - b/8 +
/// 17` for the tile's start `b`, is at most 18 whatever `b` is, and 17 at
/// the starts the tiles take (multiples of 128, the last shifted inwards).
#[test]
fn allocations_per_tile_are_bounded_by_one_tile() {
    let p = pyramid_1d();
    let s: Schedule = "out.split(x, x_l1, x_r1, 384, shift_inwards)
        out.split(x_r1, x_l3, x_r3, 128, shift_inwards)
        out.split(x_r3, x_l4, x_r4, 64, shift_inwards)
        out.split(x_r4, x_l5, x_r5, 16, shift_inwards)
        out.split(x_r5, x_l6, x_r6, 8, shift_inwards)
        u0.compute_at(out, x_l6)
        u1.compute_at(out, x_l5)
        u2.compute_at(out, x_l4)
        u3.compute_at(out, x_l3)
        d3.compute_root()
        d2.compute_root()
        d1.compute_root()
        d0.compute_root()"
        .parse()
        .expect("a schedule");
    let at = check_at_estimates(&p, &s, &Limits::default()).expect("runs at the estimates");
    let bytes = |f: &str| at.allocations.iter().find(|(n, _)| &**n == f).map(|(_, b)| *b).expect("allocated");
    assert_eq!(bytes("u3"), 17 * 4);
    assert_eq!(bytes("u0"), 8 * 4);
    // d3 holds what u3 reads over the whole output: 4096 / 16 points and a few more.
    assert!(bytes("d3") <= 260 * 4, "{}", bytes("d3"));
}

/// A level computed per tile of the output, from levels whose own loops
/// are split with shifted tails, is sized by the tile's region: the hull of
/// a producer's tiles is the producer's region (`[min, max]`), not the sum
/// of the bounds of where a tile starts and of the region's extent, which
/// counted how far the region moves once per level.
#[test]
fn levels_computed_per_tile_from_split_levels_stay_one_tile() {
    let p = pyramid_1d();
    let mut text = String::from(
        "out.split(x, x_l1, x_r1, 512, shift_inwards)
        out.split(x_r1, x_l2, x_r2, 64, shift_inwards)
        u0.compute_at(out, x_l2)
        u1.compute_at(out, x_l1)
        u2.compute_at(out, x_l1)
        u3.compute_at(out, x_l1)\n",
    );
    for f in ["u1", "u2", "u3", "d0", "d1", "d2", "d3"] {
        if f.starts_with('d') {
            text.push_str(&format!("{f}.compute_at(out, x_l1)\n"));
        }
        text.push_str(&format!("{f}.split(x, x_o, x_i, 8, shift_inwards)\n"));
    }
    let s: Schedule = text.parse().expect("a schedule");
    let at = check_at_estimates(&p, &s, &Limits::default()).expect("runs at the estimates");
    let points = |f: &str| at.allocations.iter().find(|(n, _)| &**n == f).map(|(_, b)| *b / 4).expect("allocated");
    // A 512-point tile of the output reads 257 points of u1, 129 of u2, 65
    // of u3 and 33 of d3 (plus the shifted tiles' rounding). Before the
    // split starts were bounded as one range, u3 and d3 took 514 and 258.
    let sizes: Vec<(&str, u64)> = ["u1", "u2", "u3", "d3"].into_iter().map(|f| (f, points(f))).collect();
    for (f, most) in [("u1", 264), ("u2", 136), ("u3", 72), ("d3", 40)] {
        assert!(points(f) <= most, "{f}: {sizes:?}");
    }
}

/// A check whose deadline has passed stops lowering with a typed error.
#[test]
fn a_check_past_its_deadline_stops() {
    let limits = Limits { deadline: Some(std::time::Instant::now()), ..Limits::default() };
    let err = check_at_estimates(&pyramid_1d(), &Schedule::new(), &limits).unwrap_err();
    assert!(matches!(err, EstimateError::Lower(LowerError::Deadline { .. })), "{err}");
}

/// A Func computed per tile of a consumer that reads it through a clamp (a
/// boundary condition) allocates one tile and its halo: interval
/// arithmetic alone bounds `clamp(x0 + 64) - clamp(x0 - 1)` over every
/// tile's `x0` by the whole width (the search refused such candidates as
/// mispriced, and resize_bicubic's nested candidates with them: its search
/// answered from the fallback).
#[test]
fn a_func_read_through_a_clamp_per_tile_allocates_the_tile() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    let p = Func::new("p");
    p.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 2.0f32);
    let last = input.width() - 1;
    let out = Func::new("out");
    out.define(
        &[&x, &y],
        p.at([compiler::lang::ops::clamp(&x - 1, 0, last.clone()), y.expr()])
            + p.at([compiler::lang::ops::clamp(&x + 1, 0, last), y.expr()]),
    );
    out.set_estimate(0, 0, 1000).set_estimate(1, 0, 800);
    input.set_estimate(0, 0, 1000).set_estimate(1, 0, 800);
    let pipeline = Pipeline::new(&[&out]).expect("a valid pipeline");
    let mut s = Schedule::new();
    s.func("out").tile("x", "y", "xo", "yo", "xi", "yi", 64, 32);
    s.func("p").compute_at("out", "xo");
    let at = check_at_estimates(&pipeline, &s, &Limits::default()).expect("runs at the estimates");
    let bytes = at.allocations.iter().find(|(n, _)| &**n == "p").map(|(_, b)| *b).expect("p is allocated");
    // 64 points and one on each side, 32 rows, 4 bytes.
    assert_eq!(bytes, 66 * 32 * 4);
}
