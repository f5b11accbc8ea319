//! The benchmark set at small sizes: each expert schedule computes what the
//! reference evaluator computes (and what the naive schedule computes,
//! which `measure` checks itself).

use compiler::bench::{cases, measure, pattern_input, BenchSizes, SamplingOptions};
use compiler::codegen::HostTarget;
use std::collections::BTreeMap;
use std::time::Duration;

#[test]
fn every_benchmark_computes_what_its_algorithm_says() {
    let sizes = BenchSizes { width: 70, height: 45, chain_stages: 3, matmul_n: 64 };
    let once = SamplingOptions { warmup: 0, min_samples: 1, max_samples: 1, budget: Duration::ZERO };
    let all = cases(sizes, &HostTarget::detect());
    assert_eq!(all.iter().map(|c| c.name).collect::<Vec<_>>(), ["blur", "stencil_chain", "gaussian", "matmul"]);
    for case in &all {
        let measured = measure(case, &once).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(measured.rows.len(), 2);
        let p = &case.pipeline;
        let inputs: BTreeMap<String, _> = p.inputs.iter().map(|i| (i.name.to_string(), pattern_input(&i.name, i.ty, &case.input_region[..i.dims]).unwrap())).collect();
        let expected = compiler::reference::realize(p, &inputs, &BTreeMap::new(), &p.outputs[0], &case.region).unwrap();
        assert!(measured.output == expected, "{}: the expert schedule's output differs from the reference", case.name);
    }
}
