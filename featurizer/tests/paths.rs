//! A pipeline is analysed alike whatever path it took: built in Rust (its
//! author's subexpressions shared in memory), read back from JSON, or
//! decoded from the wire (nothing shared). The DAG (its edges' call counts
//! and Jacobians, which schedule features read) and every stage's pipeline
//! features must agree, or the learned model ranks one request two ways.

use apps::{Set, Size};
use compiler::{PipelineDef, Target};
use featurizer::pipeline_features::PipelineFeatures;
use featurizer::Dag;
use random_pipelines::{generate, GeneratorParams};

fn target() -> Target {
    Target { vector_bytes: 32, threads: 8 }
}

/// The DAG's text and every stage's features.
fn analysis(p: &PipelineDef) -> (String, Vec<PipelineFeatures>) {
    let dag = Dag::new(p, &target()).unwrap_or_else(|e| panic!("{:?}: {e}", p.outputs));
    let features = dag.stages.iter().map(|s| PipelineFeatures::of(&dag, s)).collect();
    (dag.to_string(), features)
}

fn through_json(p: &PipelineDef) -> PipelineDef {
    serde_json::from_str(&serde_json::to_string(p).expect("JSON")).expect("read back")
}

fn through_the_wire(p: &PipelineDef) -> PipelineDef {
    let wire = proto::v1::Pipeline::try_from(p).expect("encodes");
    let bytes = prost::Message::encode_to_vec(&wire);
    let decoded: proto::v1::Pipeline = prost::Message::decode(bytes.as_slice()).expect("decodes");
    PipelineDef::try_from(decoded).expect("converts back")
}

fn assert_same_by_every_path(name: &str, p: &PipelineDef) {
    let (dag, features) = analysis(p);
    for (path, q) in [("JSON", through_json(p)), ("the wire", through_the_wire(p))] {
        let (dag2, features2) = analysis(&q);
        assert_eq!(dag, dag2, "{name}: the DAG differs after {path}");
        assert_eq!(features, features2, "{name}: the features differ after {path}");
    }
}

#[test]
fn every_catalog_pipeline_is_analysed_alike_from_memory_json_and_the_wire() {
    for set in Set::ALL {
        for name in apps::names_in(set) {
            let app = apps::build(name, Size::Paper, &target()).expect("a listed pipeline");
            assert_same_by_every_path(name, &app.pipeline);
        }
    }
}

#[test]
fn random_pipelines_are_analysed_alike_from_memory_json_and_the_wire() {
    for seed in 0..60 {
        let pipeline = generate(&GeneratorParams::for_training(seed)).expect("a pipeline").pipeline;
        assert_same_by_every_path(&format!("random pipeline {seed}"), &pipeline);
    }
}

#[test]
fn equal_terms_count_once_however_they_were_built() {
    use compiler::{Func, ImageParam, Pipeline, ScalarType, Var};
    let build = |shared: bool| {
        let input = ImageParam::new("input", ScalarType::F32, 2);
        let (x, y) = (Var::new("x"), Var::new("y"));
        let f = Func::new("f");
        let term = || input.at([x.expr() + 1, y.expr()]) * 2.0f32;
        let value = if shared {
            let t = term();
            t.clone() + t
        } else {
            term() + term()
        };
        f.define(&[&x, &y], value);
        f.set_estimate(0, 0, 64).set_estimate(1, 0, 64);
        input.set_estimate(0, 0, 66).set_estimate(1, 0, 64);
        Pipeline::new(&[&f]).expect("a pipeline")
    };
    let (shared, unshared) = (build(true), build(false));
    assert_eq!(analysis(&shared), analysis(&unshared));
    let dag = Dag::new(&unshared, &target()).unwrap();
    let f = dag.node_by_name("f").unwrap();
    let edge = dag.edge(dag.stage(f.stages[0]).incoming[0]);
    assert_eq!(edge.calls, 1, "one load of input(x + 1, y), however often it is written");
}
