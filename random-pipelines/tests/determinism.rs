//! The same parameters give the same pipeline; different seeds differ.

use random_pipelines::{generate, GeneratorParams, VOCABULARY};

fn text(seed: u64, max_stages: usize) -> String {
    generate(&GeneratorParams { seed, max_stages, input_size: (24, 20, 3), ..Default::default() }).expect("generates").text()
}

#[test]
fn same_seed_same_pipeline() {
    for seed in 0..40 {
        let a = text(seed, 8);
        // Generate something else in between: anonymous Func counters move on.
        let _ = text(seed + 1000, 12);
        let b = text(seed, 8);
        assert_eq!(a, b, "seed {seed} printed two different pipelines");
    }
}

#[test]
fn same_seed_same_pipeline_at_default_size() {
    let p = GeneratorParams { seed: 7, ..Default::default() };
    let a = generate(&p).unwrap();
    let b = generate(&p).unwrap();
    assert_eq!(a.text(), b.text());
    assert_eq!(a.pipeline, b.pipeline);
}

#[test]
fn different_seeds_differ() {
    let texts: Vec<String> = (0..40).map(|s| text(s, 8)).collect();
    let mut distinct = texts.clone();
    distinct.sort();
    distinct.dedup();
    // Seeds print their own number, so compare the bodies too.
    let bodies: std::collections::BTreeSet<String> =
        texts.iter().map(|t| t.lines().filter(|l| !l.starts_with("# random pipeline")).collect::<Vec<_>>().join("\n")).collect();
    assert!(bodies.len() >= 36, "only {} distinct pipelines among 40 seeds", bodies.len());
}

#[test]
fn names_are_readable_and_unique() {
    for seed in 0..40 {
        let p = generate(&GeneratorParams { seed, max_stages: 10, input_size: (24, 20, 3), ..Default::default() }).unwrap();
        let mut names: Vec<&str> = p.pipeline.funcs.iter().map(|f| &*f.name).collect();
        assert!(names.iter().all(|n| !n.contains('$')), "seed {seed}: anonymous name left in {names:?}");
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len(), "seed {seed}: duplicate Func names");
        assert_eq!(p.output, "output");
        assert!(p.inputs.iter().any(|i| i.name == "input"));
    }
}

#[test]
fn rejects_bad_params() {
    assert!(generate(&GeneratorParams { seed: 1, max_stages: 1, input_size: (8, 8, 3), ..Default::default() }).is_err());
    assert!(generate(&GeneratorParams { seed: 1, max_stages: 5, input_size: (0, 8, 3), ..Default::default() }).is_err());
}

/// Parameters stored before the vocabulary had a version read as the
/// original one and rebuild its pipelines, which never hold a matrix
/// product; the newest vocabulary draws them.
#[test]
fn stored_parameters_keep_their_vocabulary() {
    let stored: GeneratorParams =
        serde_json::from_value(serde_json::json!({ "seed": 5, "max_stages": 10, "input_size": [320, 256, 3] })).unwrap();
    assert_eq!(stored.vocabulary, 1);
    let kinds = |vocabulary: u32| -> Vec<Vec<&'static str>> {
        (0..40)
            .map(|seed| {
                let p = GeneratorParams { seed, max_stages: 10, input_size: (320, 256, 3), vocabulary };
                generate(&p).unwrap().stages.iter().map(|s| s.kind).collect()
            })
            .collect()
    };
    let (original, newest) = (kinds(1), kinds(VOCABULARY));
    assert!(original.iter().flatten().all(|&k| k != "matrix_product"));
    let with_products = newest.iter().filter(|stages| stages.contains(&"matrix_product")).count();
    assert!((8..=32).contains(&with_products), "{with_products} of 40 pipelines hold a matrix product");
    // Most pipelines never draw a new kind: their stages are the same in both.
    let unchanged = original.iter().zip(&newest).filter(|(a, b)| a == b).count();
    assert!(unchanged >= 10, "only {unchanged} of 40 pipelines are the same in both vocabularies");
    assert_eq!(generate(&stored).unwrap().text(), generate(&GeneratorParams { vocabulary: 1, ..stored.clone() }).unwrap().text());
    let unknown = GeneratorParams { vocabulary: VOCABULARY + 1, ..stored };
    assert!(generate(&unknown).unwrap_err().to_string().contains("vocabulary"));
}
