//! Compiles `proto/scheduler/v1/*.proto` with protox (a pure-Rust protobuf
//! compiler: no protoc needed), generates the prost messages and the tonic
//! client and server, and writes the encoded descriptor set that
//! reflection serves (`$OUT_DIR/scheduler_descriptor.bin`).

use prost::Message;
use std::path::PathBuf;

const FILES: [&str; 6] = [
    "proto/scheduler/v1/types.proto",
    "proto/scheduler/v1/pipeline.proto",
    "proto/scheduler/v1/schedule.proto",
    "proto/scheduler/v1/target.proto",
    "proto/scheduler/v1/scheduler.proto",
    "proto/scheduler/v1/agent.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(FILES, ["proto"])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("scheduler_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
