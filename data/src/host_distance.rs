//! How far apart two hosts are, as far as their timings go: which known
//! host's cost-model weights are the best start for a host that has none.
//!
//! The distance is compared in order, each part only breaking the ties of
//! the ones before it:
//! 1. the instruction-set family (x86, Arm, other): code for one says
//!    nothing about the other, so hosts of different families are never
//!    near ([`HostDistance::comparable`]);
//! 2. the vector width (f32 lanes of the widest vector extension: 16 with
//!    AVX-512F, 8 with AVX, 4 with SSE or Arm's Advanced SIMD), as the
//!    number of doublings between the two: it decides what a vectorized
//!    loop does per instruction;
//! 3. the ISA features apart: the Jaccard distance of the two feature sets
//!    (0 same, 1 nothing in common);
//! 4. the data caches apart: the mean over the levels of data or unified
//!    caches of `|log2|` of the ratio of their sizes, a level one host lacks
//!    counting as a factor of 2;
//! 5. the physical cores apart: `|log2|` of their ratio.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use crate::HostFingerprint;

/// The family of instruction sets a host runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IsaFamily {
    /// x86-64 (SSE and up).
    X86,
    /// AArch64 (Advanced SIMD).
    Arm,
    /// Neither, as far as the fingerprint's features tell.
    Other,
}

impl fmt::Display for IsaFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IsaFamily::X86 => "x86",
            IsaFamily::Arm => "Arm",
            IsaFamily::Other => "unknown ISA",
        })
    }
}

impl HostFingerprint {
    /// The family of the host's instruction set, from its features.
    pub fn isa_family(&self) -> IsaFamily {
        let has = |prefix: &str| self.isa_features.iter().any(|f| f.starts_with(prefix));
        if has("sse") || has("avx") {
            IsaFamily::X86
        } else if has("asimd") || has("neon") {
            IsaFamily::Arm
        } else {
            IsaFamily::Other
        }
    }

    /// The f32 lanes of the host's widest vector extension (1 where the
    /// features name none).
    pub fn vector_lanes(&self) -> u32 {
        let has = |name: &str| self.isa_features.iter().any(|f| f == name);
        if has("avx512f") {
            16
        } else if has("avx") || has("avx2") {
            8
        } else if self.isa_features.iter().any(|f| f.starts_with("sse") || f == "asimd" || f == "neon") {
            4
        } else {
            1
        }
    }

    /// How far `other` is from this host (see the module documentation).
    pub fn distance(&self, other: &HostFingerprint) -> HostDistance {
        let lanes = (self.vector_lanes(), other.vector_lanes());
        let union = self.isa_features.iter().chain(&other.isa_features).collect::<std::collections::BTreeSet<_>>().len();
        let shared = self.isa_features.iter().filter(|f| other.isa_features.binary_search(f).is_ok()).count();
        let isa_apart = if union == 0 { 0.0 } else { 1.0 - shared as f64 / union as f64 };
        let data_caches = |h: &HostFingerprint| -> BTreeMap<u8, u64> {
            h.caches.iter().filter(|c| c.kind != "Instruction").map(|c| (c.level, c.size_bytes)).collect()
        };
        let (mine, theirs) = (data_caches(self), data_caches(other));
        let levels: std::collections::BTreeSet<u8> = mine.keys().chain(theirs.keys()).copied().collect();
        let log2_ratio = |a: u64, b: u64| (a.max(1) as f64 / b.max(1) as f64).log2().abs();
        let caches_apart = if levels.is_empty() {
            0.0
        } else {
            levels.iter().map(|l| mine.get(l).zip(theirs.get(l)).map_or(1.0, |(&a, &b)| log2_ratio(a, b))).sum::<f64>()
                / levels.len() as f64
        };
        HostDistance {
            families: (self.isa_family(), other.isa_family()),
            lanes,
            isa_apart,
            caches_apart,
            cores: (self.physical_cores, other.physical_cores),
        }
    }
}

/// How far one host is from another, its parts in the order they count.
#[derive(Clone, Debug, PartialEq)]
pub struct HostDistance {
    /// The two hosts' instruction-set families (this host's first).
    pub families: (IsaFamily, IsaFamily),
    /// The two hosts' f32 vector lanes.
    pub lanes: (u32, u32),
    /// The Jaccard distance of the ISA feature sets.
    pub isa_apart: f64,
    /// The mean `|log2|` of the data caches' size ratios.
    pub caches_apart: f64,
    /// The two hosts' physical cores.
    pub cores: (u32, u32),
}

impl HostDistance {
    /// Whether the two hosts run one instruction-set family, so that one's
    /// timings can stand in for the other's at all.
    pub fn comparable(&self) -> bool {
        self.families.0 == self.families.1 && self.families.0 != IsaFamily::Other
    }

    /// Whether the two hosts are alike in every part measured.
    pub fn is_zero(&self) -> bool {
        self.key() == [0.0; 5]
    }

    /// The parts as numbers, in the order they count.
    fn key(&self) -> [f64; 5] {
        let doublings = |(a, b): (u32, u32)| (f64::from(a.max(1)) / f64::from(b.max(1))).log2().abs();
        [f64::from(u8::from(!self.comparable())), doublings(self.lanes), self.isa_apart, self.caches_apart, doublings(self.cores)]
    }
}

impl Eq for HostDistance {}

impl PartialOrd for HostDistance {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for HostDistance {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().iter().zip(other.key()).map(|(a, b)| a.total_cmp(&b)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    }
}

impl fmt::Display for HostDistance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.comparable() {
            return write!(f, "{} against {}: not comparable", self.families.0, self.families.1);
        }
        write!(
            f,
            "{} both, f32 lanes {} against {}, ISA features {:.2} apart, data caches {:.2} apart, cores {} against {}",
            self.families.0, self.lanes.0, self.lanes.1, self.isa_apart, self.caches_apart, self.cores.0, self.cores.1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CacheInfo;

    fn host(features: &str, l2_kib: u64, cores: u32) -> HostFingerprint {
        let cache = |level, kind: &str, kib: u64| CacheInfo { level, kind: kind.to_string(), size_bytes: kib * 1024 };
        let mut isa_features: Vec<String> = features.split_whitespace().map(str::to_string).collect();
        isa_features.sort();
        HostFingerprint {
            cpu_model: "test".into(),
            isa_features,
            logical_cores: cores,
            physical_cores: cores,
            caches: vec![cache(1, "Data", 32), cache(1, "Instruction", 32), cache(2, "Unified", l2_kib)],
            gpu: None,
        }
    }

    const AVX2: &str = "avx avx2 fma sse sse2 sse4_1 sse4_2";
    const AVX512: &str = "avx avx2 avx512bw avx512f fma sse sse2 sse4_1 sse4_2";

    #[test]
    fn a_host_is_at_no_distance_from_itself() {
        let h = host(AVX512, 1024, 2);
        assert!(h.distance(&h).is_zero());
        assert_eq!(h.distance(&h).cmp(&h.distance(&h)), Ordering::Equal);
    }

    #[test]
    fn vector_width_counts_before_the_other_features_and_the_caches() {
        let me = host(AVX512, 1024, 2);
        // Same lanes, other features and caches four times smaller...
        let same_width = host("avx avx2 avx512f sse sse2", 256, 2);
        // ...against every feature but AVX-512 and the same caches.
        let narrower = host(AVX2, 1024, 2);
        assert_eq!((me.vector_lanes(), narrower.vector_lanes()), (16, 8));
        assert!(me.distance(&same_width) < me.distance(&narrower));
    }

    #[test]
    fn features_then_caches_then_cores_break_ties() {
        let me = host(AVX2, 512, 2);
        assert!(me.distance(&host(AVX2, 512, 4)) < me.distance(&host(AVX2, 1024, 2)), "cores count after caches");
        assert!(me.distance(&host(AVX2, 4096, 2)) < me.distance(&host("avx avx2 sse sse2", 512, 2)), "caches count after features");
        let d = me.distance(&host(AVX2, 1024, 2));
        // L1d equal, L2 one doubling: a mean of 0.5.
        assert_eq!((d.isa_apart, d.caches_apart), (0.0, 0.5));
    }

    #[test]
    fn hosts_of_other_families_are_never_near() {
        let x86 = host(AVX2, 512, 2);
        let arm = host("asimd fphp", 512, 2);
        assert_eq!((x86.isa_family(), arm.isa_family()), (IsaFamily::X86, IsaFamily::Arm));
        assert!(!x86.distance(&arm).comparable());
        assert!(x86.distance(&host(AVX512, 65536, 64)) < x86.distance(&arm));
        assert!(x86.distance(&arm).to_string().contains("not comparable"));
    }

    #[test]
    fn the_distance_says_its_parts() {
        let text = host(AVX2, 512, 2).distance(&host(AVX512, 1024, 2)).to_string();
        assert_eq!(text, "x86 both, f32 lanes 8 against 16, ISA features 0.22 apart, data caches 0.50 apart, cores 2 against 2");
    }
}
