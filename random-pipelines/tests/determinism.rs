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

/// The reduction lengths of a pipeline's matrix products, from its text
/// (`... over sN_matmul_X_r.x in [0, 0 + depth)`).
fn product_depths(text: &str) -> Vec<i64> {
    text.lines()
        .filter(|line| line.contains("_matmul_") && line.contains(" over "))
        .filter_map(|line| line.rsplit_once("0 + ")?.1.strip_suffix(')')?.parse().ok())
        .collect()
}

/// Version 3 draws what version 2 draws, but lets a product reduce over
/// up to its input's width under a larger budget of multiply-adds (and may
/// fit one where version 2 could not): a pipeline without a product is
/// the same in both.
#[test]
fn version_3_grows_the_products_of_version_2() {
    let (mut depths2, mut depths3, mut with_products) = (vec![], vec![], 0);
    for seed in 0..40 {
        let generated = |vocabulary| generate(&GeneratorParams { seed, max_stages: 10, input_size: (640, 480, 3), vocabulary }).unwrap();
        let (two, three) = (generated(2), generated(3));
        // The texts without their first line, which names the vocabulary.
        let body = |p: &random_pipelines::RandomPipeline| p.text().lines().skip(1).collect::<Vec<_>>().join("\n");
        let (d2, d3) = (product_depths(&body(&two)), product_depths(&body(&three)));
        // Version 3 may fit a product where version 2's limits refused one.
        assert!(d2.is_empty() || !d3.is_empty(), "seed {seed}: a product in version 2 only");
        if d3.is_empty() {
            assert_eq!(body(&two), body(&three), "seed {seed}: no product, yet the versions differ");
            continue;
        }
        if d2.is_empty() {
            continue;
        }
        with_products += 1;
        let first_product = three.stages.iter().position(|s| s.kind == "matrix_product").unwrap();
        let kinds = |p: &random_pipelines::RandomPipeline| p.stages[..=first_product].iter().map(|s| s.kind).collect::<Vec<_>>();
        assert_eq!(kinds(&two), kinds(&three), "seed {seed}: the stages up to the first product differ");
        assert!(
            d2.iter().all(|&d| d <= 512) && d3.iter().all(|&d| d <= 640),
            "seed {seed}: products {d2:?} and {d3:?} exceed their limits"
        );
        depths2.push(d2[0]);
        depths3.push(d3[0]);
    }
    assert!(with_products >= 8, "{with_products} of 40 pipelines hold a product");
    let mean = |d: &[i64]| d.iter().sum::<i64>() as f64 / d.len() as f64;
    assert!(mean(&depths3) > 2.0 * mean(&depths2), "first products {depths2:?} in version 2, {depths3:?} in version 3");
    // Version 2 reduced a product over a whole 640 x 480 x 3 image over at
    // most 145 steps (2^27 multiply-adds).
    assert!(depths3.iter().filter(|&&d| d > 300).count() >= 3, "few long products in version 3: {depths3:?}");
}
