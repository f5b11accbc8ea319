//! Targets on the wire. A wire target names its vector width, thread
//! count and host fingerprint key (which promoted weights apply); the
//! compiler's `Target` is the first two. It may carry a GPU
//! (`compiler::GpuTarget`: architecture and per-block limits), checked
//! against what NVIDIA's GPUs have.

use crate::error::FromWireError;
use crate::v1;
use compiler::{GpuTarget, Target};

/// The most threads a target may claim.
const MAX_THREADS: u32 = 4096;

/// The wire form of `target` on the host with fingerprint key `host_key`.
pub fn target_to_wire(target: &Target, host_key: &str) -> v1::Target {
    v1::Target { vector_bytes: target.vector_bytes as u32, threads: target.threads as u32, host_key: host_key.to_string(), gpu: None }
}

impl From<&GpuTarget> for v1::GpuTarget {
    fn from(g: &GpuTarget) -> v1::GpuTarget {
        v1::GpuTarget {
            sm: g.sm,
            sm_count: g.sm_count,
            max_threads_per_block: g.max_threads_per_block,
            shared_bytes_per_block: g.shared_bytes_per_block,
            registers_per_sm: g.registers_per_sm,
        }
    }
}

impl TryFrom<&v1::GpuTarget> for GpuTarget {
    type Error = FromWireError;

    /// Checked against what NVIDIA's GPUs have: compute capability 5.0 to
    /// 12.x, 1 to 1,024 SMs, 32 to 1,024 threads per block (a multiple of
    /// the warp, 32), up to 228 KiB of shared memory per block and 64 Ki
    /// registers per SM.
    fn try_from(g: &v1::GpuTarget) -> Result<GpuTarget, FromWireError> {
        let check = |ok: bool, what: String| if ok { Ok(()) } else { Err(FromWireError::invalid("gpu target", what)) };
        check((50..=129).contains(&g.sm), format!("sm is {}, not a compute capability from 50 (5.0) to 129 (12.9)", g.sm))?;
        check((1..=1024).contains(&g.sm_count), format!("sm_count is {}, not in 1..=1024", g.sm_count))?;
        let threads = g.max_threads_per_block;
        check(
            (32..=1024).contains(&threads) && threads.is_multiple_of(32),
            format!("max_threads_per_block is {threads}, not a multiple of 32 in 32..=1024"),
        )?;
        check(
            g.shared_bytes_per_block <= 228 * 1024,
            format!("shared_bytes_per_block is {}, more than 228 KiB", g.shared_bytes_per_block),
        )?;
        check(g.registers_per_sm <= 65536, format!("registers_per_sm is {}, more than 65,536", g.registers_per_sm))?;
        Ok(GpuTarget {
            sm: g.sm,
            sm_count: g.sm_count,
            max_threads_per_block: threads,
            shared_bytes_per_block: g.shared_bytes_per_block,
            registers_per_sm: g.registers_per_sm,
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_targets_cross_the_wire_and_bad_ones_are_named() {
        for g in [GpuTarget::sm_70(), GpuTarget::sm_80(), GpuTarget::sm_90()] {
            assert_eq!(GpuTarget::try_from(&v1::GpuTarget::from(&g)).unwrap(), g);
        }
        let wire = |f: &dyn Fn(&mut v1::GpuTarget)| {
            let mut w = v1::GpuTarget::from(&GpuTarget::sm_90());
            f(&mut w);
            GpuTarget::try_from(&w).unwrap_err().to_string()
        };
        assert!(wire(&|w| w.sm = 30).contains("sm is 30"));
        assert!(wire(&|w| w.max_threads_per_block = 1000).contains("multiple of 32"));
        assert!(wire(&|w| w.max_threads_per_block = 0).contains("max_threads_per_block is 0"));
        assert!(wire(&|w| w.shared_bytes_per_block = 1 << 20).contains("228 KiB"));
        assert!(wire(&|w| w.sm_count = 0).contains("sm_count is 0"));
    }
}
