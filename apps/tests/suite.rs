//! The suite's catalog: the split it records is the rule's (sorted by the
//! SHA-256 of the names, alternately development and held-out), every
//! pipeline builds at both sizes with estimates and no expert schedule, no
//! two pipelines of the catalog share a name, and any pipeline with
//! estimates is an app to time at them.

use apps::{Set, Size};
use compiler::target::Target;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

fn suite() -> Vec<&'static str> {
    apps::names_in(Set::Development).chain(apps::names_in(Set::HeldOut)).collect()
}

#[test]
fn the_split_is_the_rules() {
    let mut names = suite();
    names.sort_by_key(|n| Sha256::digest(n.as_bytes()));
    for (i, name) in names.iter().enumerate() {
        let expected = if i % 2 == 0 { Set::Development } else { Set::HeldOut };
        assert_eq!(apps::set_of(name), Some(expected), "{name} is the {i}th by digest");
    }
}

#[test]
fn names_are_unique() {
    let all: Vec<_> = Set::ALL.into_iter().flat_map(apps::names_in).collect();
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), all.len(), "{all:?}");
}

#[test]
fn every_pipeline_builds_with_estimates_and_no_expert() {
    let host = Target::host();
    for name in suite() {
        for size in [Size::Small, Size::Paper] {
            let app = apps::build(name, size, &host).expect("a listed pipeline");
            assert_eq!(app.name, name);
            assert!(app.expert.is_none(), "{name} has an expert schedule");
            let p = &app.pipeline;
            assert!(p.inputs.iter().all(|i| i.estimates.iter().all(Option::is_some)), "{name}: an input without estimates");
            let out = p.func(app.output_name()).expect("the output");
            assert!(out.estimates.iter().all(Option::is_some), "{name}: the output has no estimates");
        }
    }
}

#[test]
fn any_pipeline_is_an_app_at_its_estimates() {
    let host = Target::host();
    for set in Set::ALL {
        for name in apps::names_in(set) {
            let app = apps::build(name, Size::Small, &host).unwrap();
            let at = apps::App::at_estimates(app.pipeline_estimated_as_run()).expect("estimates everywhere");
            let sorted = |inputs: &[(String, apps::Region)]| inputs.iter().cloned().collect::<std::collections::BTreeMap<_, _>>();
            assert_eq!((sorted(&at.inputs), &at.output), (sorted(&app.inputs), &app.output), "{name}");
            assert!(at.expert.is_none());
        }
    }
    let mut p = apps::build("blur", Size::Small, &host).unwrap().pipeline;
    p.inputs[0].estimates[1] = None;
    let e = apps::App::at_estimates(p).unwrap_err();
    assert_eq!(e, apps::MissingEstimate::Input { input: "input".into(), dim: 1 });
    assert!(e.to_string().contains("`input` has no estimate for dimension 1"), "{e}");
}
