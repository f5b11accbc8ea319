//! The differential suite in the fast float mode: every catalog pipeline
//! under random legal schedules, compiled with multiply-adds allowed to
//! fuse, must compute what the reference evaluator computes within
//! `codegen::float_mode::FAST_FLOAT_TOLERANCE` (floats, relative) and 1
//! (integers computed through floats). Fewer schedules than the strict
//! suite; `HL_JIT_SCHEDULES=140` runs as many.

#[path = "../../compiler/tests/common/mod.rs"]
#[macro_use]
mod common;

use codegen::float_mode::agrees_within_fast_float;
use codegen::{compile_with, CompileOptions};
use common::differential::check_schedules_with;

fn schedules_per_pipeline() -> usize {
    std::env::var("HL_JIT_SCHEDULES").ok().and_then(|v| v.parse().ok()).unwrap_or(8)
}

fn jit_fast(case: &common::Case) -> usize {
    check_schedules_with(case, schedules_per_pipeline(), agrees_within_fast_float, |lowered| {
        let compiled = compile_with(lowered, &CompileOptions { fast_float: true, ..Default::default() }).map_err(|e| e.to_string())?;
        let mut outputs = compiled.run(&case.inputs, &case.params, &[(&case.output, case.region.clone())]).map_err(|e| e.to_string())?;
        Ok(outputs.remove(&case.output).expect("the output is realized"))
    })
}

macro_rules! differential_fast_float {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            assert_eq!(jit_fast(&common::$name()), schedules_per_pipeline());
        }
    )*};
}

for_each_case!(differential_fast_float);
