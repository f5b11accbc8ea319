//! The learned model behind the search's trait: it agrees with the
//! training path's predictions, and the search finds legal schedules with
//! it.

mod common;

use common::{candidates, dag, pipeline, target};
use search::featurize::StageFeatures;
use search::{autoschedule, BeamOptions, CostModel};
use std::time::Duration;
use trainer::{predict, schedule_rows, CostNetwork, LearnedModel, PipelineInputs, PipelineSamples, ScheduleSample};

#[test]
fn evaluate_agrees_with_the_training_path() {
    tch::set_num_threads(1);
    let dag = dag(&pipeline(5, 7));
    let schedules = candidates(&dag, 16);
    let network = CostNetwork::random(1, 2);
    let samples = PipelineSamples {
        pipeline: PipelineInputs::of(&dag),
        schedules: schedules.iter().map(|f| ScheduleSample { stages: schedule_rows(dag.stages.len(), f), runtime_seconds: 1.0 }).collect(),
    };
    let trained_path = predict(&network, &samples).expect("predictions");
    let mut model = LearnedModel::new(network, "test");
    model.set_pipeline(&dag);
    let batch: Vec<&StageFeatures> = schedules.iter().collect();
    let costs = model.evaluate(&batch);
    assert_eq!(costs.len(), schedules.len());
    for ((cost, features), want) in costs.iter().zip(&schedules).zip(&trained_path) {
        assert!(cost.per_stage.iter().map(|(s, _)| *s).eq(features.keys()), "one cost per placed stage");
        assert!((cost.total - want).abs() <= 1e-5 * want.abs().max(1e-12), "{} vs {want}", cost.total);
    }
    // Partial candidates: only their placed stages are costed.
    let partial: StageFeatures = schedules[0].iter().take(2).collect();
    let costs = model.evaluate(&[&partial, &schedules[1]]);
    assert_eq!(costs[0].per_stage.len(), 2);
    assert!(costs[1].per_stage.iter().map(|(s, _)| *s).eq(schedules[1].keys()));
}

/// A batch larger than one forward pass (over 1,024 rows) is priced in
/// several, each candidate as it is alone.
#[test]
fn a_batch_of_several_passes_prices_each_candidate_as_alone() {
    tch::set_num_threads(1);
    let dag = dag(&pipeline(5, 7));
    let schedules = candidates(&dag, 400);
    assert!(schedules.len() * dag.stages.len() > 2 * 1024, "{} candidates of {} stages", schedules.len(), dag.stages.len());
    let mut model = LearnedModel::new(CostNetwork::random(3, 4), "test");
    model.set_pipeline(&dag);
    let batch: Vec<&StageFeatures> = schedules.iter().collect();
    let costs = model.evaluate(&batch);
    assert_eq!(costs.len(), schedules.len());
    let mut fresh = LearnedModel::new(CostNetwork::random(3, 4), "test");
    for (cost, features) in costs.iter().zip(&schedules) {
        // A model that has priced nothing yet (setting the pipeline forgets
        // every row priced).
        fresh.set_pipeline(&dag);
        let alone = &fresh.evaluate(&[features])[0];
        assert_eq!(fresh.rows_priced(), features.len(), "a fresh model prices each of the candidate's rows");
        assert!(cost.per_stage.iter().map(|(s, _)| *s).eq(alone.per_stage.iter().map(|(s, _)| *s)));
        assert!((cost.total - alone.total).abs() <= 1e-5 * alone.total.abs().max(1e-12), "{} vs {}", cost.total, alone.total);
    }
}

/// Each distinct stage row is priced by the network once per pipeline: a
/// batch priced again runs no row, a candidate that changes one stage's
/// row runs that row alone, and remembered rows give the costs a fresh
/// model gives.
#[test]
fn each_row_is_priced_once_per_pipeline() {
    tch::set_num_threads(1);
    let dag = dag(&pipeline(5, 7));
    let schedules = candidates(&dag, 12);
    let batch: Vec<&StageFeatures> = schedules.iter().collect();
    let mut model = LearnedModel::new(CostNetwork::random(3, 8), "test");
    model.set_pipeline(&dag);
    let first = model.evaluate(&batch);
    let distinct: std::collections::HashSet<_> =
        schedules.iter().flat_map(|f| f.iter().map(|(s, f)| (s, f.to_array().map(|v| (v as f32).to_bits())))).collect();
    assert_eq!(model.rows_priced(), distinct.len(), "each distinct row once");
    let again = model.evaluate(&batch);
    assert_eq!(model.rows_priced(), distinct.len(), "nothing priced again");
    assert!(first.iter().zip(&again).all(|(a, b)| a.total == b.total && a.disagreement == b.disagreement));
    // One stage's row changed: only it is priced.
    let changed: StageFeatures = schedules[0]
        .iter()
        .enumerate()
        .map(|(i, (s, mut f))| {
            if i == 0 {
                f.points_computed_total = 3.0 * f.points_computed_total + 1.0;
            }
            (s, f)
        })
        .collect();
    model.evaluate(&[&changed]);
    assert_eq!(model.rows_priced(), distinct.len() + 1, "the changed row alone");
    let mut fresh = LearnedModel::new(CostNetwork::random(3, 8), "test");
    fresh.set_pipeline(&dag);
    for (cost, want) in again.iter().zip(fresh.evaluate(&batch)) {
        assert!((cost.total - want.total).abs() <= 1e-5 * want.total.abs().max(1e-12), "{} vs {}", cost.total, want.total);
    }
    model.set_pipeline(&dag);
    assert_eq!(model.rows_priced(), 0, "setting the pipeline forgets every row");
}

/// An ensemble's cost says how far its members disagree: the standard
/// deviation of the logarithms of what each member alone predicts for the
/// stages the candidate placed, partial candidates too; one member has no
/// disagreement.
#[test]
fn an_ensembles_disagreement_is_that_of_its_members_alone() {
    tch::set_num_threads(1);
    let dag = dag(&pipeline(5, 7));
    let schedules = candidates(&dag, 8);
    let partial: StageFeatures = schedules[0].iter().take(2).collect();
    let batch: Vec<&StageFeatures> = schedules.iter().chain([&partial]).collect();
    let network = CostNetwork::random(3, 5);
    let members: Vec<LearnedModel> = (0..3)
        .map(|k| {
            let mut m = LearnedModel::new(network.member(k).expect("a member"), "member");
            m.set_pipeline(&dag);
            m
        })
        .collect();
    let mut model = LearnedModel::new(network, "ensemble");
    model.set_pipeline(&dag);
    let alone: Vec<Vec<f64>> = members.iter().map(|m| m.evaluate(&batch).iter().map(|c| c.total).collect()).collect();
    for (i, cost) in model.evaluate(&batch).iter().enumerate() {
        let want = trainer::trust::disagreement(alone.iter().map(|a| a[i])).expect("three members");
        let got = cost.disagreement.expect("an ensemble's cost has a disagreement");
        assert!((got - want).abs() <= 1e-4 * want.max(1e-3), "candidate {i}: {got} vs {want}");
    }
    assert!(model.evaluate(&batch).iter().any(|c| c.disagreement.unwrap() > 0.0), "members of different starting weights differ");
    assert_eq!(members[0].evaluate(&batch)[0].disagreement, None);
}

#[test]
fn a_model_without_a_pipeline_prices_nothing_as_cheap() {
    let model = LearnedModel::new(CostNetwork::random(1, 0), "none");
    let dag = dag(&pipeline(1, 4));
    let schedules = candidates(&dag, 1);
    assert!(model.evaluate(&[&schedules[0]])[0].total.is_infinite());
    assert!(model.evaluate(&[]).is_empty());
}

#[test]
fn the_search_finds_a_legal_schedule_with_the_learned_model() {
    tch::set_num_threads(1);
    let p = pipeline(3, 6);
    let mut model = LearnedModel::new(CostNetwork::random(1, 6), "random-6");
    let options = BeamOptions { beam: 4, passes: 2, budget: Duration::from_secs(20), ..BeamOptions::default() };
    let result = autoschedule(&p.pipeline, &target(), &mut model, &options, 0).expect("a schedule").answer().expect("not abandoned");
    assert_eq!(result.model, "learned (weights random-6)");
    assert!(result.predicted_seconds.is_finite() && result.predicted_seconds >= 0.0);
    compiler::schedule::legality::check_at_estimates(&p.pipeline, &result.schedule, &Default::default()).expect("runs at the estimates");
    compiler::lower(&p.pipeline, &result.schedule).expect("lowers");
}
