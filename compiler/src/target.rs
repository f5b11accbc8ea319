//! The machine a schedule is made for, as plain data: its vector width and
//! its thread count. Detected on the host at run time without LLVM
//! (`std::arch` feature detection), so that crates which only analyse or
//! schedule can ask for it; the code generator detects the same features
//! through LLVM for the code it emits. Also the limits of the vector reads
//! the code generator makes as dense loads, which the featurizer needs,
//! and [`GpuTarget`]: an NVIDIA GPU's architecture and per-block limits,
//! given by name (`sm_70`, `sm_90`) where no GPU is present.

use crate::ir::types::ScalarType;
use serde::{Deserialize, Serialize};

/// The longest constant stride at which the code generator reads a vector
/// as dense vectors combined by shuffles (`codegen/benches/reads.rs` times
/// them); beyond it the loads and shuffles grow with the stride and it
/// loads lane by lane, as at a stride known only at run time. The
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

/// An NVIDIA GPU as GPU schedules and kernels are checked and compiled
/// for: its architecture (compute capability, `sm_XY`) and the limits a
/// block of threads must keep. A device present on the host is described
/// by the GPU runner from what the driver reports; otherwise a target is
/// named ([`GpuTarget::named`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuTarget {
    /// The compute capability as `10 * major + minor` (70 for a V100, 90
    /// for an H100 or H200): the `sm_` architecture PTX is made for.
    pub sm: u32,
    /// Streaming multiprocessors (blocks that run at once, one per SM at
    /// least): what a schedule's grid should fill.
    pub sm_count: u32,
    /// Threads one block may have.
    pub max_threads_per_block: u32,
    /// Shared memory one block may allocate statically (48 KiB on every
    /// architecture since sm_20; more only by a dynamic opt-in, which the
    /// kernels made here do not use).
    pub shared_bytes_per_block: u32,
    /// 32-bit registers of one SM, shared by the threads of its blocks.
    pub registers_per_sm: u32,
}

/// Why a GPU target name is not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown GPU target `{0}`: expected sm_70 (V100), sm_80 (A100) or sm_90 (H100, H200)")]
pub struct UnknownGpuTarget(pub String);

impl GpuTarget {
    /// A V100 (Volta, compute capability 7.0, 80 SMs).
    pub fn sm_70() -> GpuTarget {
        GpuTarget { sm: 70, sm_count: 80, max_threads_per_block: 1024, shared_bytes_per_block: 48 * 1024, registers_per_sm: 65536 }
    }

    /// An A100 (Ampere, compute capability 8.0, 108 SMs).
    pub fn sm_80() -> GpuTarget {
        GpuTarget { sm: 80, sm_count: 108, ..GpuTarget::sm_70() }
    }

    /// An H100 SXM (Hopper, compute capability 9.0, 132 SMs); an H200 has
    /// the same architecture and SM count.
    pub fn sm_90() -> GpuTarget {
        GpuTarget { sm: 90, sm_count: 132, ..GpuTarget::sm_70() }
    }

    /// The target of a name: `sm_70`, `sm_80` or `sm_90` (the PTX
    /// architecture names), or `v100`, `a100`, `h100`, `h200`.
    pub fn named(name: &str) -> Result<GpuTarget, UnknownGpuTarget> {
        match name.to_ascii_lowercase().as_str() {
            "sm_70" | "v100" => Ok(GpuTarget::sm_70()),
            "sm_80" | "a100" => Ok(GpuTarget::sm_80()),
            "sm_90" | "h100" | "h200" => Ok(GpuTarget::sm_90()),
            _ => Err(UnknownGpuTarget(name.to_string())),
        }
    }

    /// The PTX architecture name (`sm_90`).
    pub fn arch(&self) -> String {
        format!("sm_{}", self.sm)
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
    fn gpu_targets_are_known_by_name() {
        assert_eq!(GpuTarget::named("sm_90"), Ok(GpuTarget::sm_90()));
        assert_eq!(GpuTarget::named("H200").map(|t| t.arch()), Ok("sm_90".to_string()));
        assert_eq!(GpuTarget::named("v100").map(|t| t.sm), Ok(70));
        let e = GpuTarget::named("sm_61").unwrap_err();
        assert!(e.to_string().contains("sm_61") && e.to_string().contains("sm_90"), "{e}");
        assert_eq!(GpuTarget::sm_70().max_threads_per_block, 1024);
        assert_eq!(GpuTarget::sm_90().shared_bytes_per_block, 48 * 1024);
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
