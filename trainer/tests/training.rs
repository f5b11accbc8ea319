//! Training: the network learns to order a small synthetic set of
//! schedules, deterministically, and refuses samples it cannot use.

mod common;

use common::synthetic_samples;
use trainer::retrain::DEFAULT_RANKING_WEIGHT;
use trainer::{ordering_accuracy, predict, CostNetwork, PipelineSamples, SampleError, TrainError, TrainOptions, Trainer};

fn mean_accuracy(network: &CostNetwork, sets: &[PipelineSamples]) -> f64 {
    let total: f64 = sets
        .iter()
        .map(|s| {
            let measured: Vec<f64> = s.schedules.iter().map(|x| x.runtime_seconds).collect();
            ordering_accuracy(&predict(network, s).expect("predictions"), &measured)
        })
        .sum();
    total / sets.len() as f64
}

/// Steps on each pipeline.
const STEPS_PER_SET: usize = 1000;

/// The random starts trained: one start alone can settle where it orders
/// worse than it began (at learning rate 1e-2, the paper's loss alone
/// took seed 1 from 0.740 to 0.682 on the 2-core EPYC, terms version 2,
/// while seeds 2-4 reached 0.95-0.97), so the test asks every one of
/// several to learn, at a rate that trains them all. Measured there at
/// 3e-3, before → after: the paper's loss alone 0.740 → 0.909, 0.712 →
/// 0.952, 0.474 → 0.948, 0.487 → 0.975; with the ranking term 0.977,
/// 0.973, 0.981, 0.978 after.
const STARTS: std::ops::RangeInclusive<u64> = 1..=4;

#[test]
fn the_network_learns_to_order_a_synthetic_training_set() {
    learns_to_order_with(0.0);
}

#[test]
fn the_network_learns_to_order_with_the_ranking_term() {
    learns_to_order_with(DEFAULT_RANKING_WEIGHT);
}

fn learns_to_order_with(ranking_weight: f64) {
    tch::set_num_threads(1);
    let sets: Vec<PipelineSamples> = (0..4).map(|seed| synthetic_samples(seed, 6, 24)).collect();
    for s in &sets {
        assert!(s.schedules.len() >= 8, "only {} candidates", s.schedules.len());
    }
    let options = TrainOptions { learning_rate: 3e-3, ranking_weight, ..TrainOptions::default() };
    let mut rises = vec![];
    for start in STARTS {
        let mut trainer = Trainer::new(CostNetwork::random(1, start), &options).expect("a trainer");
        let before = mean_accuracy(trainer.network(), &sets);
        let mut losses = vec![];
        for _ in 0..STEPS_PER_SET {
            for s in &sets {
                losses.push(trainer.step(s).expect("a step").loss);
            }
        }
        let after = mean_accuracy(trainer.network(), &sets);
        eprintln!("start {start}: ordering accuracy {before:.3} → {after:.3}; loss {:.4} → {:.4}", losses[0], losses[losses.len() - 1]);
        assert!(after >= 0.8, "start {start}: ordering accuracy after training {after:.3} (before: {before:.3})");
        rises.push(after - before);
    }
    let mean_rise = rises.iter().sum::<f64>() / rises.len() as f64;
    assert!(mean_rise >= 0.15, "ordering accuracy barely rose: by {mean_rise:.3} in mean ({rises:.3?})");
}

#[test]
fn training_is_deterministic() {
    tch::set_num_threads(1);
    let set = synthetic_samples(7, 5, 12);
    let options = TrainOptions { learning_rate: 1e-3, max_batch: 8, seed: 3, ..TrainOptions::default() };
    let run = || {
        let mut trainer = Trainer::new(CostNetwork::random(1, 5), &options).expect("a trainer");
        (0..5).for_each(|_| {
            trainer.step(&set).expect("a step");
        });
        trainer.into_network().values()
    };
    assert_eq!(run(), run());
}

/// The loss of an ensemble is the sum of its members' own losses, so
/// training it trains each member exactly as it would train alone.
#[test]
fn each_member_of_an_ensemble_trains_as_if_alone() {
    tch::set_num_threads(1);
    let sets: Vec<PipelineSamples> = (0..3).map(|seed| synthetic_samples(seed, 5, 12)).collect();
    let options = TrainOptions { learning_rate: 1e-2, ranking_weight: DEFAULT_RANKING_WEIGHT, ..TrainOptions::default() };
    let start = CostNetwork::starting_from_analytical(3, 8);
    let mut alone: Vec<Trainer> = (0..3).map(|k| Trainer::new(start.member(k).unwrap(), &options).unwrap()).collect();
    let mut ensemble = Trainer::new(start, &options).unwrap();
    for _ in 0..20 {
        for s in &sets {
            let together = ensemble.step(s).unwrap().loss;
            let each: f64 = alone.iter_mut().map(|t| t.step(s).unwrap().loss).sum::<f64>() / 3.0;
            assert!((together - each).abs() <= 1e-4 * each.abs().max(1e-12), "loss {together} vs the members' mean {each}");
        }
    }
    for (k, t) in alone.iter().enumerate() {
        let member = ensemble.network().member(k).unwrap().values();
        for (p, (a, b)) in member.iter().zip(t.network().values().iter()).enumerate() {
            let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(worst < 1e-4, "member {k}, parameter {p}: differs by {worst} from the same member trained alone");
        }
    }
}

#[test]
fn samples_that_cannot_be_trained_on_are_refused() {
    let set = synthetic_samples(2, 4, 4);
    let mut trainer = Trainer::new(CostNetwork::random(1, 0), &TrainOptions::default()).expect("a trainer");

    let mut one = set.clone();
    one.schedules.truncate(1);
    assert!(matches!(trainer.step(&one), Err(TrainError::Samples(SampleError::TooFewSchedules(1)))));

    let mut nan = set.clone();
    nan.schedules[1].stages[0][3] = f32::NAN;
    let e = trainer.step(&nan).unwrap_err();
    assert!(e.to_string().contains("schedule feature 3 of stage 0 of schedule 1"), "{e}");

    let mut short = set.clone();
    short.schedules[0].stages.pop();
    assert!(matches!(trainer.step(&short), Err(TrainError::Samples(SampleError::StageCount { schedule: 0, .. }))));

    let mut free = set;
    free.schedules[0].runtime_seconds = 0.0;
    assert!(matches!(trainer.step(&free), Err(TrainError::Samples(SampleError::Runtime { schedule: 0, .. }))));
    assert_eq!(trainer.steps(), 0);
}
