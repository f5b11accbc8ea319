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

    /// A machine described by its CPU's ISA feature flags (as
    /// `/proc/cpuinfo` names them: `avx512f`, `avx2`, `sse4_2`, `asimd`)
    /// and its hardware threads: how a machine other than this one is
    /// analysed, e.g. the host whose samples a trainer learns from.
    pub fn of_isa<S: AsRef<str>>(isa_features: &[S], threads: usize) -> Target {
        let has = |prefix: &str| isa_features.iter().any(|f| f.as_ref().starts_with(prefix));
        let vector_bytes = if has("avx512f") {
            64
        } else if has("avx") {
            32
        } else {
            16
        };
        Target { vector_bytes, threads: threads.max(1) }
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
    fn a_machine_is_known_by_its_isa_flags() {
        assert_eq!(Target::of_isa(&["avx", "avx2", "avx512f", "fma"], 4), Target { vector_bytes: 64, threads: 4 });
        assert_eq!(Target::of_isa(&["avx", "avx2", "fma", "sse4_2"], 2), Target { vector_bytes: 32, threads: 2 });
        assert_eq!(Target::of_isa(&["asimd"], 0), Target { vector_bytes: 16, threads: 1 });
    }

    #[test]
    fn the_host_has_vectors_and_threads() {
        let t = Target::host();
        assert!([16, 32, 64].contains(&t.vector_bytes), "{t:?}");
        assert!(t.threads >= 1);
        assert_eq!(t.natural_lanes(ScalarType::F32) * 4, t.vector_bytes as i64);
        assert_eq!(t.natural_lanes(ScalarType::U8), t.vector_bytes as i64);
    }
}
