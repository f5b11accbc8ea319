//! Targets on the wire. A wire target names its vector width, thread
//! count and host fingerprint key (which promoted weights apply); the
//! compiler's `Target` is the first two.

use crate::error::FromWireError;
use crate::v1;
use compiler::Target;

/// The most threads a target may claim.
const MAX_THREADS: u32 = 4096;

/// The wire form of `target` on the host with fingerprint key `host_key`.
pub fn target_to_wire(target: &Target, host_key: &str) -> v1::Target {
    v1::Target { vector_bytes: target.vector_bytes as u32, threads: target.threads as u32, host_key: host_key.to_string() }
}

impl TryFrom<&v1::Target> for Target {
    type Error = FromWireError;

    fn try_from(t: &v1::Target) -> Result<Target, FromWireError> {
        if ![16, 32, 64].contains(&t.vector_bytes) {
            return Err(FromWireError::invalid("target", format!("vector_bytes is {}, not 16, 32 or 64", t.vector_bytes)));
        }
        if !(1..=MAX_THREADS).contains(&t.threads) {
            return Err(FromWireError::invalid("target", format!("threads is {}, not in 1..={MAX_THREADS}", t.threads)));
        }
        Ok(Target { vector_bytes: t.vector_bytes as usize, threads: t.threads as usize })
    }
}
