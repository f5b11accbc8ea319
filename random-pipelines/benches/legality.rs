//! What the search's legality check costs: random pipelines under random
//! schedules, each checked at its estimates
//! (`compiler::check_at_estimates`: lowered, every read, write and
//! allocation evaluated), the time of each check recorded. Prints the
//! total, median, 90th percentile and largest time, how many checks passed,
//! and the sum of the allocations of those that did (what bounds inference
//! and the allocation walk made of them, to compare two builds by).
//!
//! `cargo bench -p random-pipelines --bench legality -- [FIRST [SEEDS]]`
//! (seeds 5000 to 5099 by default, six schedules each).

use rand::SeedableRng;
use std::time::Instant;

/// Random schedules checked per pipeline.
const SCHEDULES: u64 = 6;

fn main() {
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let first = args.first().copied().unwrap_or(5000);
    let seeds = args.get(1).copied().unwrap_or(100);
    let (mut times, mut passed, mut bytes) = (vec![], 0usize, 0u128);
    for seed in first..first + seeds {
        let Ok(p) = random_pipelines::generate(&random_pipelines::GeneratorParams { seed, ..Default::default() }) else {
            continue;
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xA110C);
        for _ in 0..SCHEDULES {
            let s = compiler::schedule::random::random_schedule(&p.pipeline, &mut rng, &Default::default());
            let t = Instant::now();
            let checked = compiler::check_at_estimates(&p.pipeline, &s, &Default::default());
            times.push(t.elapsed().as_secs_f64());
            if let Ok(at) = checked {
                passed += 1;
                bytes += at.allocations.iter().map(|(_, b)| u128::from(*b)).sum::<u128>();
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0) * 1e3;
    println!(
        "seeds {first}..{}: {} checks in {:.2} s (median {:.1} ms, 90th percentile {:.1} ms, largest {:.1} ms); {passed} passed, allocating {bytes} bytes in all",
        first + seeds,
        times.len(),
        times.iter().sum::<f64>(),
        at(0.5),
        at(0.9),
        at(1.0),
    );
}
