//! A sampled schedule's loop nest is found again from its text alone, and
//! featurizes exactly as the nest the search chose (what lets a training
//! store be featurized again in a new layout without timing anything), and
//! is priced as the search priced it.

use compiler::Target;
use featurizer::Dag;
use random_pipelines::{generate, GeneratorParams};
use search::expand::Placements;
use search::featurize::{featurize, StageFeatures};
use search::replay::{replay, Miss, Phase};
use search::{autoschedule, price, Analytical, BeamOptions, CostModel, Machine, PriceError, RandomModel};
use std::time::Duration;

/// Every stage's features as numbers, by stage.
fn values(f: &StageFeatures) -> Vec<(u32, Vec<f64>)> {
    f.iter().map(|(s, x)| (s.0, x.to_array().to_vec())).collect()
}

#[test]
fn sampled_schedules_are_replayed_to_the_nests_they_came_from() {
    let target = Target::host();
    let (mut found, mut total) = (0, 0);
    for seed in 0..6u64 {
        let p = generate(&GeneratorParams { seed, max_stages: 6 + (seed % 3) as usize, input_size: (64, 48, 3), ..Default::default() })
            .expect("generates");
        let dag = Dag::new(&p.pipeline, &target).expect("analyses");
        // The model's answer, and probes ranked at random with dropout, as
        // data generation samples them, line buffers offered.
        let mut models: Vec<(Box<dyn CostModel>, BeamOptions)> = vec![(
            Box::new(Analytical::new(Machine::typical(target.threads))),
            BeamOptions { beam: 8, passes: 2, ..BeamOptions::default() },
        )];
        for probe in 0..3 {
            let options = BeamOptions { beam: 1, passes: 1, random_dropout: 50, seed: probe, ..BeamOptions::default() };
            models.push((Box::new(RandomModel::new(seed * 10 + probe)), options));
        }
        for (mut model, options) in models {
            let options = BeamOptions { budget: Duration::from_secs(20), sliding: true, ..options };
            let result =
                autoschedule(&p.pipeline, &target, model.as_mut(), &options, 0).expect("a schedule").answer().expect("not abandoned");
            let text = result.schedule.to_string();
            total += 1;
            let Ok(nest) = replay(&dag, &text, Placements::ALL) else { continue };
            found += 1;
            assert_eq!(search::apply::to_schedule(&dag, &nest).to_string(), text, "seed {seed}: the replayed nest spells another schedule");
            assert_eq!(
                values(&featurize(&dag, &nest)),
                values(&result.features),
                "seed {seed}: the replayed nest featurizes otherwise\n{text}"
            );
        }
    }
    // The replay's beam may lose a nest; it must find nearly all.
    assert!(found * 10 >= total * 9, "found {found} of {total}");
}

#[test]
fn a_schedule_no_nest_spells_is_not_found_and_the_miss_says_where() {
    let target = Target::host();
    let p = generate(&GeneratorParams { seed: 3, max_stages: 6, input_size: (64, 48, 3), ..Default::default() }).expect("generates");
    let dag = Dag::new(&p.pipeline, &target).expect("analyses");
    let mut model = Analytical::new(Machine::typical(target.threads));
    let text = autoschedule(&p.pipeline, &target, &mut model, &BeamOptions::default(), 0)
        .expect("a schedule")
        .answer()
        .expect("not abandoned")
        .schedule
        .to_string();
    // A split factor the search never chooses: every decision agrees, and
    // the nearest nest lacks just that line.
    let split = format!("{}.split(x, x_a, x_b, 7919, guard_with_if)", p.output);
    let odd = format!("{text}{split}\n");
    // Where the replay finds the pick itself (its beam may lose a nest),
    // the nearest nest is the pick, which lacks just that line.
    let pick_found = replay(&dag, &text, Placements::ALL).is_ok();
    match replay(&dag, &odd, Placements::ALL) {
        Err(Miss::Directives { only_wanted, only_found }) if pick_found => {
            assert_eq!(only_wanted, vec![split.clone()]);
            assert!(only_found.is_empty(), "{only_found:?}");
        }
        Err(Miss::Directives { only_wanted, .. }) => assert!(only_wanted.contains(&split), "{only_wanted:?}"),
        other => panic!("{other:?}"),
    }
    // A loop unrolled that the search never unrolls: the output's tiling,
    // its first decision of loops, has no candidate that agrees.
    let unrolled = format!("{text}{}.unroll(x_never)\n", p.output);
    let miss = replay(&dag, &unrolled, Placements::ALL).expect_err("no nest unrolls x_never");
    assert_eq!(miss, Miss::Decision { func: p.output.to_string(), phase: Phase::Tiles });
    assert!(miss.to_string().contains(&format!("`{}`", p.output)), "{miss}");
    assert_eq!(replay(&dag, "not a schedule", Placements::ALL).unwrap_err(), Miss::NotASchedule);
}

#[test]
fn a_schedule_given_as_text_is_priced_as_the_search_priced_it() {
    let target = Target::host();
    let p = generate(&GeneratorParams { seed: 4, max_stages: 6, input_size: (64, 48, 3), ..Default::default() }).expect("generates");
    let mut model = Analytical::new(Machine::typical(target.threads));
    let options = BeamOptions { sliding: true, ..BeamOptions::default() };
    let result = autoschedule(&p.pipeline, &target, &mut model, &options, 3).expect("a schedule").answer().expect("not abandoned");
    let mut priced = 0;
    for (schedule, predicted) in std::iter::once((&result.schedule, result.predicted_seconds))
        .chain(result.alternatives.iter().map(|a| (&a.schedule, a.predicted_seconds)))
    {
        let text = schedule.to_string();
        match price(&p.pipeline, &target, &mut model, &text) {
            Ok(found) => {
                assert_eq!(found.schedule.to_string(), text);
                assert_eq!(found.predicted_seconds, predicted, "priced otherwise than the search did\n{text}");
                let stages: f64 = found.per_stage.iter().map(|s| s.seconds).sum();
                assert!((stages - predicted).abs() <= 1e-9 * predicted, "the stages' shares add up to {stages}, not {predicted}");
                priced += 1;
            }
            Err(PriceError::OutsideSearchSpace(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert!(priced >= 3, "priced {priced} of the pick and its alternatives");
    // The same schedule laid out by hand, its Funcs in another order, is
    // the same schedule.
    let text = result.schedule.to_string();
    let mut blocks: Vec<Vec<&str>> = vec![];
    for line in text.lines() {
        let func = line.split('.').next();
        match blocks.last_mut() {
            Some(b) if b[0].split('.').next() == func => b.push(line),
            _ => blocks.push(vec![line]),
        }
    }
    assert!(blocks.len() > 1, "{text}");
    blocks.reverse();
    let reordered: String = blocks.concat().iter().map(|l| format!("{l}\n")).collect();
    assert_ne!(reordered, text);
    let as_laid_out = price(&p.pipeline, &target, &mut model, &reordered).map(|r| r.predicted_seconds);
    let as_printed = price(&p.pipeline, &target, &mut model, &text).map(|r| r.predicted_seconds);
    assert_eq!(as_laid_out.ok(), as_printed.ok(), "the pick laid out otherwise is priced otherwise");
    let odd = format!("{}{}.split(x, x_a, x_b, 7919, guard_with_if)\n", result.schedule, p.output);
    assert!(matches!(price(&p.pipeline, &target, &mut model, &odd), Err(PriceError::OutsideSearchSpace(Miss::Directives { .. }))));
    assert!(matches!(price(&p.pipeline, &target, &mut model, "not a schedule"), Err(PriceError::Parse(_))));
}
