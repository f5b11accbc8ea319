//! The messages between a parent and its runner child: a [`RunRequest`]
//! down, an [`Outcome`] back, each one frame (a little-endian `u64` length,
//! then the bincode encoding, exact for every float constant, NaN and
//! infinities included).

use crate::timing::Sampling;
use compiler::error::ScheduleErrorKind;
use compiler::lang::pipeline::PipelineDef;
use compiler::schedule::Schedule;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// The largest frame accepted (a pipeline of a million expression nodes
/// encodes to far less).
const MAX_FRAME_BYTES: u64 = 1 << 30;

/// Writes `message` as one frame and flushes.
pub fn write_frame<T: Serialize>(w: &mut impl Write, message: &T) -> std::io::Result<()> {
    let bytes = bincode::serialize(message).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    w.write_all(&(bytes.len() as u64).to_le_bytes())?;
    w.write_all(&bytes)?;
    w.flush()
}

/// Reads one frame; `None` at the end of the stream.
pub fn read_frame<T: DeserializeOwned>(r: &mut impl Read) -> std::io::Result<Option<T>> {
    let mut len = [0u8; 8];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME_BYTES {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a frame of {len} bytes")));
    }
    let mut bytes = vec![0u8; len as usize];
    r.read_exact(&mut bytes)?;
    bincode::deserialize(&bytes).map(Some).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// One schedule to lower, compile and time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRequest {
    /// The algorithm.
    pub pipeline: PipelineDef,
    /// The schedule to lower it with.
    pub schedule: Schedule,
    /// The region of each input (by name), filled with
    /// [`crate::timing::pattern_input`].
    pub inputs: Vec<(String, Vec<(i64, i64)>)>,
    /// The value of each param (by name).
    pub params: Vec<(String, f64)>,
    /// The region of the (first) output computed.
    pub output: Vec<(i64, i64)>,
    /// How to time the compiled pipeline.
    pub sampling: Sampling,
    /// Lower in checked mode (every access asserted).
    pub check_accesses: bool,
    /// Compare the output with the reference evaluator's (for small regions:
    /// the evaluator is slow).
    pub verify: bool,
    /// For testing the runner itself: make the child fail this way.
    pub fault: Option<Fault>,
}

/// A failure a test of the runner asks the child for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// The child dies of a segmentation fault.
    Segfault,
    /// The child never answers.
    Hang,
    /// The child allocates until memory runs out.
    ExhaustMemory,
}

/// What became of one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// Compiled and timed (milliseconds).
    Measured {
        /// Time to compile the lowered pipeline (near 0 when the child had it
        /// cached).
        compile_ms: f64,
        /// The fastest run.
        min_ms: f64,
        /// The median run.
        median_ms: f64,
        /// Runs timed.
        samples: usize,
    },
    /// The schedule is illegal (`kind` for an illegal schedule; `None` for
    /// another failure of the algorithm or schedule to lower, such as an
    /// unbounded region).
    Illegal {
        /// The kind of schedule error, when the schedule is at fault.
        kind: Option<ScheduleErrorKind>,
        /// The error's message.
        message: String,
    },
    /// Code generation failed, or lowering with an internal error (a bug
    /// of the compiler).
    CompileError {
        /// The error's message.
        message: String,
    },
    /// The compiled pipeline returned an error (an assertion, bad arguments).
    RunFailed {
        /// The error's message.
        message: String,
    },
    /// The output differs from the reference evaluator's.
    OutputMismatch {
        /// Which output buffer differs.
        message: String,
    },
    /// Memory ran out (an allocation of the pipeline or of the child failed).
    OutOfMemory,
    /// The child died of a signal (`None`: it exited without answering).
    Crash {
        /// The signal's number; `None` if the child exited.
        signal: Option<i32>,
    },
    /// No answer within the time limit; the child was killed.
    Timeout,
}
