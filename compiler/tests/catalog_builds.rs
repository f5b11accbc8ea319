mod common;

#[test]
fn every_catalog_pipeline_builds_and_lowers_under_the_default_schedule() {
    for case in common::all_cases() {
        let l = compiler::lower::lower(&case.pipeline, &compiler::schedule::Schedule::new());
        assert!(l.is_ok(), "{}: {:?}", case.name, l.err());
    }
}
