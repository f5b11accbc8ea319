//! Autoscheduled pipelines that read at coordinates computed in floats
//! (resampling by float factors) compute, compiled, what the reference
//! evaluator computes.

use compiler::exec::reference;
use compiler::{Buffer, Scalar, ScalarType, Target};
use search::{autoschedule, Analytical, BeamOptions, Machine, RandomModel, Searched};
use std::collections::BTreeMap;
use std::time::Duration;

#[test]
fn resampling_by_float_factors_computes_the_algorithm() {
    let (width, height) = (200, 48);
    let p = compiler::examples::resampling(width, height);
    let target = Target::host();
    let mut input = Buffer::new("input", ScalarType::U16, &[(0, width * 3 / 2 + 2), (0, height)]).unwrap();
    input.fill(|c| Scalar::UInt(((c[0] * 37 + c[1] * 11) % 1000) as u64));
    let inputs = BTreeMap::from([("input".to_string(), input)]);
    let region = vec![(0, width), (0, height)];
    let expected = reference::realize(&p, &inputs, &BTreeMap::new(), "g", &region).unwrap();
    let options = BeamOptions { budget: Duration::from_millis(500), ..BeamOptions::default() };
    let mut analytical = Analytical::new(Machine::typical(target.threads));
    for seed in 0..4u64 {
        let mut random = RandomModel::new(seed);
        let model: &mut dyn search::CostModel = if seed == 0 { &mut analytical } else { &mut random };
        let schedule = match autoschedule(&p, &target, model, &BeamOptions { seed, ..options.clone() }, 0) {
            Ok(Searched::Answered(a)) => a.schedule,
            other => panic!("seed {seed}: {other:?}"),
        };
        let lowered = compiler::lower_with(&p, &schedule, &compiler::LowerOptions::checked()).unwrap();
        let out = codegen::compile(&lowered).unwrap().run(&inputs, &BTreeMap::new(), &[("g", region.clone())]).unwrap();
        assert!(out["g"] == expected, "seed {seed}: the output differs under\n{schedule}");
    }
}
