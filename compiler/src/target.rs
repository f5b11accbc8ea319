//! The machine a schedule is made for, as plain data: its vector width and
//! its thread count. Detected on the host at run time without LLVM
//! (`std::arch` feature detection), so that crates which only analyse or
//! schedule can ask for it; the code generator detects the same features
//! through LLVM for the code it emits. Also the limits of the vector reads
//! the code generator makes without a gather, which the featurizer needs.

use crate::ir::types::ScalarType;
use serde::{Deserialize, Serialize};

/// The longest constant stride at which the code generator reads a vector
/// as dense vectors combined by shuffles (at 8, 2-5.5 times faster per
/// element than a gather at 9: `codegen/benches/reads.rs`); beyond it the
/// loads and shuffles grow with the stride and a gather is kept. The
/// featurizer counts such reads as the dense loads they are.
pub const MAX_SHUFFLED_STRIDE: i64 = 8;

/// The largest factor at which the code generator reads an upsampling
/// (`x / factor` along a vector of `x`) as dense loads and a shuffle per
/// remainder (at 8, 4-8 times faster than a gather at 9); beyond it the
/// shuffles and selects grow with the factor and a gather is kept.
pub const MAX_UPSAMPLING_FACTOR: i64 = 8;

/// A machine's vector width and thread count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// Width in bytes of the widest vector registers (16 for SSE or NEON,
    /// 32 for AVX2, 64 for AVX-512).
    pub vector_bytes: usize,
    /// Hardware threads available to parallel loops.
    pub threads: usize,
}

impl Target {
    /// The machine this process runs on.
    pub fn host() -> Target {
        Target { vector_bytes: host_vector_bytes(), threads: std::thread::available_parallelism().map_or(1, |n| n.get()) }
    }

    /// The natural number of lanes of a vector of `t` elements.
    pub fn natural_lanes(&self, t: ScalarType) -> i64 {
        (self.vector_bytes / t.bytes()).max(1) as i64
    }
}

#[cfg(target_arch = "x86_64")]
fn host_vector_bytes() -> usize {
    if std::arch::is_x86_feature_detected!("avx512f") {
        64
    } else if std::arch::is_x86_feature_detected!("avx") {
        32
    } else {
        16
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn host_vector_bytes() -> usize {
    16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_has_vectors_and_threads() {
        let t = Target::host();
        assert!([16, 32, 64].contains(&t.vector_bytes), "{t:?}");
        assert!(t.threads >= 1);
        assert_eq!(t.natural_lanes(ScalarType::F32) * 4, t.vector_bytes as i64);
        assert_eq!(t.natural_lanes(ScalarType::U8), t.vector_bytes as i64);
    }
}
