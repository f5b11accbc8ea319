//! `hl-runner`: the child process of [`codegen::runner::Runner`]. Reads run
//! request frames (see `codegen::runner::protocol`) on stdin and answers
//! each on stdout.

use clap::Parser;

#[derive(Parser)]
#[command(name = "hl-runner", about = "Lower, compile and time schedules sent as frames on stdin")]
struct Args {
    /// Cap the address space at this many bytes.
    #[arg(long)]
    memory_limit: Option<u64>,
    /// Compiled pipelines to keep.
    #[arg(long, default_value_t = codegen::cache::DEFAULT_CAPACITY)]
    cache_capacity: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    codegen::runner::child::serve(args.memory_limit, args.cache_capacity)?;
    Ok(())
}
