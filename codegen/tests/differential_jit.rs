//! The differential suite through the LLVM JIT: every catalog pipeline
//! under random legal schedules, compiled to machine code for the host and
//! run, must compute exactly what the reference evaluator computes (see
//! `common::differential`). Fewer schedules than the interpreter suite run
//! in CI (each one is a JIT compile); `HL_JIT_SCHEDULES=140` runs them all.

#[path = "../../compiler/tests/common/mod.rs"]
#[macro_use]
mod common;

use codegen::compile;
use common::differential::check_schedules;

fn schedules_per_pipeline() -> usize {
    std::env::var("HL_JIT_SCHEDULES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

fn jit(case: &common::Case) -> usize {
    check_schedules(case, schedules_per_pipeline(), |lowered| {
        let compiled = compile(lowered).map_err(|e| e.to_string())?;
        let mut outputs = compiled.run(&case.inputs, &case.params, &[(&case.output, case.region.clone())]).map_err(|e| e.to_string())?;
        Ok(outputs.remove(&case.output).expect("the output is realized"))
    })
}

macro_rules! differential_jit {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            assert_eq!(jit(&common::$name()), schedules_per_pipeline());
        }
    )*};
}

for_each_case!(differential_jit);
