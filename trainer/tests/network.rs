//! The network's shapes, the invariants of its cost terms, and ensembles.

use featurizer::schedule_features::SCHEDULE_FEATURES;
use tch::Tensor;
use trainer::network::{NetworkInput, CONV1_CHANNELS, PARAMETERS};
use trainer::terms::DEPENDENT_STEPS_TERM;
use trainer::{CostNetwork, NetworkShape};

const CPU_F32: (tch::Kind, tch::Device) = (tch::Kind::Float, tch::Device::Cpu);

/// A batch of random features (or none: all zero).
fn input(batch: i64, stages: i64, random: bool) -> NetworkInput {
    let values = |shape: [i64; 3], scale: f64| if random { Tensor::rand(shape, CPU_F32) * scale } else { Tensor::zeros(shape, CPU_F32) };
    NetworkInput {
        pipeline: Tensor::ones([stages, NetworkShape::CURRENT.pipeline_features as i64], CPU_F32),
        schedule: values([batch, stages, SCHEDULE_FEATURES as i64], 1000.0),
        terms: values([batch, stages, CONV1_CHANNELS as i64], 1e-6),
    }
}

#[test]
fn a_batch_gives_a_cost_per_candidate_and_stage() {
    let (batch, stages) = (3, 5);
    let network = CostNetwork::random(1, 0);
    let out = network.forward(&input(batch, stages, true));
    assert_eq!(out.per_stage.size(), [batch, stages]);
    assert_eq!(out.total.size(), [batch]);
    assert_eq!(out.member_totals.size(), [1, batch]);
    assert_eq!(out.conv1_preactivation.size(), [1, batch, stages, CONV1_CHANNELS as i64]);
    let sums = out.per_stage.sum_dim_intlist(1, false, tch::Kind::Float);
    assert!(out.total.allclose(&sums, 1e-6, 0.0, false));
    assert!(out.per_stage.min().double_value(&[]) >= 0.0, "costs are non-negative");
}

#[test]
fn a_stage_without_features_costs_nothing() {
    let network = CostNetwork::random(1, 3);
    let out = network.forward(&input(2, 4, false));
    assert_eq!(out.total.abs().max().double_value(&[]), 0.0);
}

#[test]
fn the_parameters_match_the_paper_sizes() {
    let total: i64 = PARAMETERS.iter().map(|(_, shape)| shape.iter().product::<i64>()).sum();
    assert_eq!(total, 4264, "Adams et al.'s 4,264 weights");
    let values = CostNetwork::random(1, 9).values();
    assert!(values.iter().flatten().all(|v| (-0.5..0.5).contains(v)));
    assert_eq!(CostNetwork::random(1, 9).values(), values, "a seed fixes the initial weights");
}

#[test]
fn an_ensemble_predicts_the_mean_of_its_members() {
    let network = CostNetwork::random(3, 4);
    assert_eq!(network.members(), 3);
    let x = input(4, 5, true);
    let out = network.forward(&x);
    assert_eq!(out.member_totals.size(), [3, 4]);
    assert_eq!(out.conv1_preactivation.size(), [3, 4, 5, CONV1_CHANNELS as i64]);
    let members: Vec<_> = (0..3).map(|k| network.member(k).expect("a member").forward(&x)).collect();
    assert!(network.member(3).is_none());
    let mean_total = members.iter().map(|m| &m.total).fold(Tensor::zeros([4], CPU_F32), |sum, t| sum + t) / 3.0;
    let mean_per_stage = members.iter().map(|m| &m.per_stage).fold(Tensor::zeros([4, 5], CPU_F32), |sum, t| sum + t) / 3.0;
    assert!(out.total.allclose(&mean_total, 1e-5, 0.0, false), "{out:?} vs {mean_total:?}", out = out.total);
    assert!(out.per_stage.allclose(&mean_per_stage, 1e-5, 0.0, false));
    for (k, m) in members.iter().enumerate() {
        assert!(out.member_totals.get(k as i64).allclose(&m.total, 1e-5, 0.0, false), "member {k}");
    }
    // Members start different: each draws its own weights.
    assert_ne!(network.member(0).unwrap().values(), network.member(1).unwrap().values());
}

/// A network of terms version 1 (weights trained before the dependent
/// steps existed) prices as if that term were zero; one of this build's
/// terms weights it.
#[test]
fn a_network_weights_only_the_terms_of_its_version() {
    let current = CostNetwork::starting_from_analytical(1, 5);
    let old = current.clone().with_terms_version(1);
    assert_eq!((current.terms_version(), old.terms_version()), (trainer::terms::TERMS_VERSION, 1));
    assert_eq!(old.member(0).expect("a member").terms_version(), 1, "a member keeps the network's version");
    let x = input(3, 2, true);
    let without = NetworkInput { pipeline: x.pipeline.shallow_clone(), schedule: x.schedule.shallow_clone(), terms: x.terms.copy() };
    let _ = without.terms.narrow(2, DEPENDENT_STEPS_TERM as i64, 1).fill_(0.0);
    let total = |n: &CostNetwork, i: &NetworkInput| n.forward(i).total;
    assert!(total(&old, &x).allclose(&total(&old, &without), 1e-9, 0.0, false), "version 1 has no dependent steps");
    assert!(total(&old, &x).allclose(&total(&current, &without), 1e-9, 0.0, false));
    assert!(!total(&current, &x).allclose(&total(&current, &without), 1e-9, 0.0, false), "this build's terms weight them");
}

/// Bringing a network of terms version 1 to this build's terms keeps what
/// it learned of every old term and starts the new one as training from
/// scratch does: where that term is zero it prices exactly as before, and
/// the new coefficient is the small starting constant whatever the
/// features.
#[test]
fn a_network_brought_to_the_current_terms_keeps_the_old_ones() {
    let old = CostNetwork::random(2, 7).with_terms_version(1);
    let upgraded = old.with_current_terms();
    assert_eq!(upgraded.terms_version(), trainer::terms::TERMS_VERSION);
    assert_eq!(upgraded.members(), 2);
    let x = input(3, 2, true);
    let without = NetworkInput { pipeline: x.pipeline.shallow_clone(), schedule: x.schedule.shallow_clone(), terms: x.terms.copy() };
    let _ = without.terms.narrow(2, DEPENDENT_STEPS_TERM as i64, 1).fill_(0.0);
    let (before, after) = (old.forward(&x), upgraded.forward(&without));
    assert!(before.total.allclose(&after.total, 1e-6, 0.0, false), "the old terms price as before");
    let kept = |o: &trainer::network::NetworkOutput| {
        Tensor::cat(
            &[
                o.conv1_preactivation.narrow(3, 0, DEPENDENT_STEPS_TERM as i64),
                o.conv1_preactivation.narrow(3, DEPENDENT_STEPS_TERM as i64 + 1, (CONV1_CHANNELS - DEPENDENT_STEPS_TERM - 1) as i64),
            ],
            3,
        )
    };
    assert!(kept(&before).allclose(&kept(&after), 1e-6, 0.0, false), "every old coefficient is kept");
    let new = after.conv1_preactivation.narrow(3, DEPENDENT_STEPS_TERM as i64, 1);
    assert!(new.allclose(&new.ones_like().g_mul_scalar(1e-3), 1e-6, 0.0, false), "the new coefficient starts as from scratch");
    assert!(!upgraded.forward(&x).total.allclose(&after.total, 1e-9, 0.0, false), "the new term is weighted");
    let current = CostNetwork::random(1, 3);
    assert_eq!(current.with_current_terms().values(), current.values(), "a network of this build's terms is unchanged");
}

/// Joining networks (the runs of one retraining) makes one ensemble of
/// all their members, in order, predicting their members' mean; networks
/// of different terms versions, or too many members, do not join.
#[test]
fn joined_networks_hold_every_member_in_order() {
    let (two, three) = (CostNetwork::random(2, 1), CostNetwork::random(3, 2));
    let joined = CostNetwork::joined([&two, &three]).expect("networks of one terms version");
    assert_eq!((joined.members(), joined.terms_version()), (5, two.terms_version()));
    let originals = [two.member(0), two.member(1), three.member(0), three.member(1), three.member(2)];
    for (k, original) in originals.iter().enumerate() {
        assert_eq!(joined.member(k).map(|m| m.values()), original.as_ref().map(|m| m.values()), "member {k}");
    }
    let x = input(4, 3, true);
    let weighted_mean = (two.forward(&x).total * 2.0 + three.forward(&x).total * 3.0) / 5.0;
    assert!(joined.forward(&x).total.allclose(&weighted_mean, 1e-5, 0.0, false));

    assert!(CostNetwork::joined([&two, &three.clone().with_terms_version(1)]).is_none(), "one terms version");
    assert!(CostNetwork::joined(std::iter::empty()).is_none());
    let big = CostNetwork::random(trainer::network::MAX_MEMBERS, 3);
    assert!(CostNetwork::joined([&big, &two]).is_none(), "at most MAX_MEMBERS members");
}
