//! Prints a random pipeline: `random-pipeline --seed N [--max-stages K]`,
//! or with `--training` the one data generation times for the seed.

use clap::Parser;
use random_pipelines::{generate, GeneratorParams, VOCABULARY};

#[derive(Parser)]
#[command(about = "Generate and print a deterministic random pipeline")]
struct Args {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stages including the input read and the final resample.
    #[arg(long, default_value_t = 20)]
    max_stages: usize,
    #[arg(long, default_value_t = 2000)]
    width: i64,
    #[arg(long, default_value_t = 2000)]
    height: i64,
    #[arg(long, default_value_t = 3)]
    channels: i64,
    /// The stage vocabulary (1: the original; 2 adds matrix products; 3
    /// lets them grow larger).
    #[arg(long, default_value_t = VOCABULARY)]
    vocabulary: u32,
    /// The stages and input size data generation draws for the seed
    /// (`GeneratorParams::for_training`) instead of the ones given.
    #[arg(long, conflicts_with_all = ["max_stages", "width", "height", "channels"])]
    training: bool,
}

fn main() -> anyhow::Result<()> {
    // Piped into `head` and the like: end quietly when the reader goes.
    sigpipe::reset();
    let a = Args::parse();
    let params = if a.training {
        GeneratorParams { vocabulary: a.vocabulary, ..GeneratorParams::for_training(a.seed) }
    } else {
        GeneratorParams { seed: a.seed, max_stages: a.max_stages, input_size: (a.width, a.height, a.channels), vocabulary: a.vocabulary }
    };
    let p = generate(&params)?;
    print!("{}", p.text());
    Ok(())
}
