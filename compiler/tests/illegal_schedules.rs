//! Every illegal schedule gets its own clear error, naming the Func and the
//! directive or level at fault, with a typed kind a search can branch on,
//! before any lowering happens.

mod common;

use compiler::error::{LowerError, ScheduleErrorKind, UserError};
use compiler::schedule::{Schedule, TailStrategy};

struct Illegal {
    what: &'static str,
    /// The typed kind a search branches on.
    kind: ScheduleErrorKind,
    case: fn() -> common::Case,
    schedule: fn(&mut Schedule),
    /// Substrings the error message must contain.
    expect: &'static [&'static str],
}

const TABLE: &[Illegal] = &[
    Illegal {
        what: "split of a loop that does not exist",
        kind: ScheduleErrorKind::NoSuchLoop,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("z", "zo", "zi", 4);
        },
        expect: &["blur_y", "split(z, zo, zi, 4)", "no loop z"],
    },
    Illegal {
        what: "split factor below 1",
        kind: ScheduleErrorKind::InvalidSplit,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("x", "xo", "xi", 0);
        },
        expect: &["blur_y", "at least 1"],
    },
    Illegal {
        what: "split into two loops of one name",
        kind: ScheduleErrorKind::InvalidSplit,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("x", "a", "a", 4);
        },
        expect: &["blur_y", "both named a"],
    },
    Illegal {
        what: "split into an existing loop's name",
        kind: ScheduleErrorKind::DuplicateLoopName,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("x", "y", "xi", 4);
        },
        expect: &["blur_y", "loop named y already exists"],
    },
    Illegal {
        what: "vectorize a loop of unknown extent",
        kind: ScheduleErrorKind::NonConstantExtent,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").vectorize("x");
        },
        expect: &["blur_y", "vectorize(x)", "no constant extent"],
    },
    Illegal {
        what: "vectorize a loop that is not innermost",
        kind: ScheduleErrorKind::VectorLoopNotInnermost,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("x", "xo", "xi", 4).split("xo", "xoo", "xoi", 2).vectorize("xoi");
        },
        expect: &["blur_y", "innermost"],
    },
    Illegal {
        what: "reorder listing a loop twice",
        kind: ScheduleErrorKind::DuplicateInReorder,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").reorder(&["x", "x"]);
        },
        expect: &["blur_y", "reorder(x, x)", "listed twice"],
    },
    Illegal {
        what: "reorder of an unknown loop",
        kind: ScheduleErrorKind::NoSuchLoop,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").reorder(&["y", "q"]);
        },
        expect: &["blur_y", "no loop q"],
    },
    Illegal {
        what: "fuse of loops that are not adjacent",
        kind: ScheduleErrorKind::InvalidFuse,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("x", "xo", "xi", 4).fuse("xi", "y", "f");
        },
        expect: &["blur_y", "fuse(xi, y, f)", "directly outside"],
    },
    Illegal {
        what: "compute_at a loop that does not enclose every use",
        kind: ScheduleErrorKind::ComputeLevelDoesNotEncloseUses,
        case: common::diamond_dag,
        schedule: |s| {
            s.func("a").compute_at("b", "x");
            s.func("b").compute_root();
            s.func("c").compute_root();
        },
        expect: &["a", "b.x", "does not enclose its use in c"],
    },
    Illegal {
        what: "compute_at an unknown Func",
        kind: ScheduleErrorKind::NoSuchLevel,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_at("nope", "x");
        },
        expect: &["blur_x", "nope", "not in the pipeline"],
    },
    Illegal {
        what: "compute_at an unknown loop",
        kind: ScheduleErrorKind::NoSuchLevel,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_at("blur_y", "z");
        },
        expect: &["blur_x", "loop z of blur_y", "does not exist"],
    },
    Illegal {
        what: "store_at inside the compute level",
        kind: ScheduleErrorKind::StorageInsideCompute,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_at("blur_y", "y").store_at("blur_y", "x");
        },
        expect: &["blur_x", "stored at blur_y.x", "computed at blur_y.y"],
    },
    Illegal {
        what: "compute_at on an output",
        kind: ScheduleErrorKind::InvalidOutputPlacement,
        case: common::diamond_dag,
        schedule: |s| {
            s.func("out").compute_at("b", "x");
        },
        expect: &["out", "is an output"],
    },
    Illegal {
        what: "store_at on an output",
        kind: ScheduleErrorKind::InvalidOutputPlacement,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").store_at("blur_x", "y");
        },
        expect: &["blur_y", "output", "cannot be store_at"],
    },
    Illegal {
        what: "a schedule for a Func that is not in the pipeline",
        kind: ScheduleErrorKind::UnknownFunc,
        case: common::blur,
        schedule: |s| {
            s.func("ghost").compute_root();
        },
        expect: &["ghost", "not in the pipeline"],
    },
    Illegal {
        what: "loop directives on an inlined Func",
        kind: ScheduleErrorKind::DirectivesOnInlinedFunc,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").split("x", "xo", "xi", 4);
        },
        expect: &["blur_x", "inlined"],
    },
    Illegal {
        what: "parallel reduction loop of a scan",
        kind: ScheduleErrorKind::ReductionOrderChanged,
        case: common::scan,
        schedule: |s| {
            s.func("acc").compute_root().update(0).parallel("r.x");
        },
        expect: &["acc", "r.x", "parallel", "only serial or unrolled"],
    },
    Illegal {
        what: "reordered reduction loops of a histogram",
        kind: ScheduleErrorKind::ReductionOrderChanged,
        case: common::histogram,
        schedule: |s| {
            s.func("hist").compute_root().update(0).reorder(&["r.y", "r.x"]);
        },
        expect: &["hist", "changes the order"],
    },
    Illegal {
        what: "vectorized reduction loop",
        kind: ScheduleErrorKind::ReductionOrderChanged,
        case: common::scan,
        schedule: |s| {
            s.func("acc").compute_root().update(0).vectorize_by("r.x", 4);
        },
        expect: &["acc", "vectorized", "only serial or unrolled"],
    },
    Illegal {
        what: "shift_inwards split of a reduction loop",
        kind: ScheduleErrorKind::TailChangesUpdate,
        case: common::scan,
        schedule: |s| {
            s.func("acc").compute_root().update(0).split_with("r.x", "ro", "ri", 3, TailStrategy::ShiftInwards);
        },
        expect: &["acc", "guard_with_if"],
    },
    Illegal {
        what: "shift_inwards split of an update's pure loop",
        kind: ScheduleErrorKind::TailChangesUpdate,
        case: common::conv1d_update,
        schedule: |s| {
            s.func("conv").compute_root().update(0).split_with("x", "xo", "xi", 3, TailStrategy::ShiftInwards);
        },
        expect: &["conv", "stage 1", "recompute"],
    },
    Illegal {
        what: "schedule for an update that does not exist",
        kind: ScheduleErrorKind::NoSuchUpdate,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").update(0).parallel("y");
        },
        expect: &["blur_y", "update 0", "0 update"],
    },
    Illegal {
        what: "compute inside a vectorized loop",
        kind: ScheduleErrorKind::LevelInsideVectorLoop,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").vectorize_by("x", 4);
            s.func("blur_x").compute_at("blur_y", "x_vi");
        },
        expect: &["blur_x", "vectorized", "inside a vector loop"],
    },
    Illegal {
        what: "bound on a dimension that does not exist",
        kind: ScheduleErrorKind::InvalidBound,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_root().bound("c", 0, 3);
        },
        expect: &["blur_x", "bound(c", "no pure dimension"],
    },
    Illegal {
        what: "bound with an empty extent",
        kind: ScheduleErrorKind::InvalidBound,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_root().bound("x", 0, 0);
        },
        expect: &["blur_x", "extent below 1"],
    },
    Illegal {
        what: "storage order that is not a permutation",
        kind: ScheduleErrorKind::InvalidStorageOrder,
        case: common::blur,
        schedule: |s| {
            s.func("blur_x").compute_root().reorder_storage(&["x", "x"]);
        },
        expect: &["blur_x", "reorder_storage(x, x)", "each dimension"],
    },
    Illegal {
        what: "storage outside the parallel loop it is computed in",
        kind: ScheduleErrorKind::StorageOutsideParallelLoop,
        case: common::blur,
        schedule: |s| {
            s.func("blur_y").split("y", "yo", "yi", 4).parallel("yo");
            s.func("blur_x").store_root().compute_at("blur_y", "yi");
        },
        expect: &["blur_x", "parallel loop blur_y.s0.yo", "race"],
    },
    Illegal {
        what: "compute levels that form a cycle",
        kind: ScheduleErrorKind::ComputeLevelCycle,
        case: common::diamond_dag,
        schedule: |s| {
            s.func("b").compute_at("c", "x");
            s.func("c").compute_at("b", "x");
        },
        expect: &["cycle"],
    },
];

#[test]
fn each_illegal_schedule_gets_its_own_clear_error() {
    let mut checked = 0;
    for (i, row) in TABLE.iter().enumerate() {
        if row.expect.is_empty() {
            continue;
        }
        let case = (row.case)();
        let mut s = Schedule::new();
        (row.schedule)(&mut s);
        let err = match compiler::lower::lower(&case.pipeline, &s) {
            Ok(_) => panic!("row {i} ({}): the schedule was accepted:\n{s:?}", row.what),
            Err(LowerError::User(UserError::Schedule(e))) => {
                assert_eq!(e.kind(), row.kind, "row {i} ({}): {e}", row.what);
                e.to_string()
            }
            Err(e) => panic!("row {i} ({}): not a schedule error: {e}", row.what),
        };
        for needle in row.expect {
            assert!(err.contains(needle), "row {i} ({}): error {err:?} does not mention {needle:?}", row.what);
        }
        checked += 1;
    }
    assert!(checked >= 20, "the table must hold at least 20 illegal schedules, has {checked}");
}

#[test]
fn errors_are_distinct_per_row() {
    let mut seen = std::collections::HashSet::new();
    for row in TABLE.iter().filter(|r| !r.expect.is_empty()) {
        let case = (row.case)();
        let mut s = Schedule::new();
        (row.schedule)(&mut s);
        let err = compiler::lower::lower(&case.pipeline, &s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(seen.insert(err.clone()), "two rows give the same error: {err}");
    }
}
