//! Round trips through the wire: random pipelines (the `random-pipelines`
//! generator at small sizes) and random legal schedules
//! (`compiler::schedule::random`) go compiler → wire → bytes → wire →
//! compiler and come back equal; their fingerprints are stable.

use compiler::schedule::random::{random_schedule, RandomScheduleOptions};
use compiler::{PipelineDef, Schedule};
use proptest::prelude::*;
use prost::Message;
use proto::v1;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use random_pipelines::{generate, GeneratorParams};

fn pipeline_through_bytes(p: &PipelineDef) -> PipelineDef {
    let bytes = v1::Pipeline::try_from(p).expect("an algorithm has a wire form").encode_to_vec();
    let wire = v1::Pipeline::decode(bytes.as_slice()).expect("the bytes decode");
    PipelineDef::try_from(&wire).unwrap_or_else(|e| panic!("the pipeline comes back: {e}"))
}

fn schedule_through_bytes(s: &Schedule) -> Schedule {
    let bytes = v1::Schedule::from(s).encode_to_vec();
    let wire = v1::Schedule::decode(bytes.as_slice()).expect("the bytes decode");
    Schedule::try_from(&wire).unwrap_or_else(|e| panic!("the schedule comes back: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_pipelines_and_schedules_round_trip(seed in 0u64..1_000_000, stages in 2usize..8, side in 16i64..96, schedule_seed in any::<u64>()) {
        let params = GeneratorParams { seed, max_stages: stages, input_size: (side, side, 3) };
        let Ok(generated) = generate(&params) else { return Ok(()) };
        let p = generated.pipeline;
        let back = pipeline_through_bytes(&p);
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(proto::fingerprint(&back).unwrap(), proto::fingerprint(&p).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(schedule_seed);
        let s = random_schedule(&p, &mut rng, &RandomScheduleOptions::default());
        prop_assert_eq!(schedule_through_bytes(&s), s);
    }
}

#[test]
fn fingerprints_differ_between_pipelines() {
    let a = generate(&GeneratorParams { seed: 1, max_stages: 4, input_size: (32, 32, 3) }).unwrap().pipeline;
    let b = generate(&GeneratorParams { seed: 2, max_stages: 4, input_size: (32, 32, 3) }).unwrap().pipeline;
    assert_ne!(proto::fingerprint(&a).unwrap(), proto::fingerprint(&b).unwrap());
    assert_eq!(proto::fingerprint(&a).unwrap().to_string().len(), 64);
}
