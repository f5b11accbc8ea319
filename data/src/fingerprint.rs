//! The hardware fingerprint of a host, and its detection at run time.
//!
//! Samples are only comparable on the same hardware, so every report and
//! every set of weights names its host by [`HostFingerprint::key`], a stable
//! hash of a canonical text of the fingerprint. [`HostFingerprint::detect`]
//! reads the running machine's from `/proc/cpuinfo` and
//! `/sys/devices/system/cpu/cpu0/cache`; nothing is hard-coded.
//! [`detect_gpu_devices`] lists the NVIDIA GPUs the driver exposes, which an
//! agent reports as capabilities (its CPU timings do not depend on them, so
//! they stay out of the key).

use std::fs;
use std::hash::Hasher;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::StoreError;

const CPUINFO: &str = "/proc/cpuinfo";
const CACHE_DIR: &str = "/sys/devices/system/cpu/cpu0/cache";
/// One directory per GPU, each with an `information` file (NVIDIA's driver).
const NVIDIA_GPUS_DIR: &str = "/proc/driver/nvidia/gpus";

/// Prefixes of the CPU flags that matter to generated code (x86 vector and
/// bit-manipulation extensions, ARM SIMD). Flags outside them (`hypervisor`,
/// mitigations, `constant_tsc`) change with kernels and virtualisation, not
/// with what code runs fast, and are left out so the key stays stable.
const ISA_PREFIXES: &[&str] = &[
    "sse", "ssse3", "avx", "fma", "f16c", "bmi", "popcnt", "lzcnt", "abm", "movbe", "aes", "pclmul", "vpclmul", "vaes", "gfni", "sha",
    "amx", "asimd", "neon", "sve", "fphp",
];

/// One cache seen by CPU 0.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CacheInfo {
    /// 1 for L1, 2 for L2, ...
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`, as the kernel names it.
    pub kind: String,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// The GPUs of this machine as `model (bus id)`, sorted; empty where the
/// NVIDIA driver is not loaded (or exposes none).
pub fn detect_gpu_devices() -> Vec<String> {
    let Ok(entries) = fs::read_dir(NVIDIA_GPUS_DIR) else { return vec![] };
    let mut devices: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let information = fs::read_to_string(e.path().join("information")).ok()?;
            gpu_model(&information).map(|model| format!("{model} ({})", e.file_name().to_string_lossy()))
        })
        .collect();
    devices.sort();
    devices
}

/// The `Model:` of an NVIDIA driver's `information` file.
fn gpu_model(information: &str) -> Option<String> {
    information.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == "Model" && !value.trim().is_empty()).then(|| value.trim().to_string())
    })
}

/// The longest CPU model or GPU name a fingerprint may carry.
pub const MAX_TEXT_BYTES: usize = 256;
/// The longest ISA feature or cache kind.
pub const MAX_TOKEN_BYTES: usize = 64;
/// The most ISA features a fingerprint may list.
pub const MAX_FEATURES: usize = 512;
/// The most caches a fingerprint may list.
pub const MAX_CACHES: usize = 32;

/// What a host's hardware is, as far as timing schedules goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostFingerprint {
    /// The CPU's model name (`model name` or `Hardware` of `/proc/cpuinfo`; `unknown` when absent).
    pub cpu_model: String,
    /// The code-generation-relevant CPU flags, sorted, without duplicates.
    pub isa_features: Vec<String>,
    /// Logical CPUs (hardware threads), at least 1.
    pub logical_cores: u32,
    /// Distinct physical cores; the logical count where `/proc/cpuinfo` does not say.
    pub physical_cores: u32,
    /// Sorted by level, then kind.
    pub caches: Vec<CacheInfo>,
    /// The GPU's name, where timing uses one.
    pub gpu: Option<String>,
}

impl HostFingerprint {
    /// The fingerprint of the machine this runs on (`gpu` is `None`: timings are on the CPU; see [`detect_gpu_devices`]).
    pub fn detect() -> Result<HostFingerprint, StoreError> {
        let cpuinfo = fs::read_to_string(CPUINFO).map_err(|source| StoreError::Io { path: CPUINFO.into(), source })?;
        Ok(HostFingerprint::from_sources(&cpuinfo, read_caches(Path::new(CACHE_DIR))?))
    }

    /// The fingerprint described by the text of a `/proc/cpuinfo` and the caches of CPU 0.
    pub fn from_sources(cpuinfo: &str, mut caches: Vec<CacheInfo>) -> HostFingerprint {
        let mut model = None;
        let mut features = Vec::new();
        let mut logical = 0u32;
        let mut cores = Vec::new();
        let mut physical_id = "";
        for line in cpuinfo.lines() {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim();
            match name.trim() {
                "processor" => logical += 1,
                "model name" | "Hardware" => {
                    model.get_or_insert_with(|| value.to_string());
                }
                "flags" | "Features" if features.is_empty() => {
                    features =
                        value.split_whitespace().filter(|f| ISA_PREFIXES.iter().any(|p| f.starts_with(p))).map(str::to_string).collect();
                }
                "physical id" => physical_id = value,
                "core id" => cores.push((physical_id.to_string(), value.to_string())),
                _ => {}
            }
        }
        features.sort();
        features.dedup();
        cores.sort();
        cores.dedup();
        caches.sort();
        let logical = logical.max(1);
        HostFingerprint {
            cpu_model: model.unwrap_or_else(|| "unknown".to_string()),
            isa_features: features,
            logical_cores: logical,
            physical_cores: if cores.is_empty() { logical } else { u32::try_from(cores.len()).unwrap_or(logical) },
            caches,
            gpu: None,
        }
    }

    /// Checks that the fingerprint reads back from the store exactly as it
    /// is (its key is computed from the fields, and a store row must give
    /// the same key): a printable CPU model and GPU name of at most
    /// [`MAX_TEXT_BYTES`], ISA features that are sorted, distinct tokens of
    /// letters, digits, `_`, `.` and `-` (the store keeps them space-separated,
    /// the key comma-separated), at most [`MAX_FEATURES`] of them and
    /// [`MAX_CACHES`] caches whose kinds are such tokens too.
    pub fn check(&self) -> Result<(), StoreError> {
        let bad = |field: &'static str, why: String| Err(StoreError::Fingerprint { field, why });
        let printable = |field: &'static str, text: &str| {
            if text.is_empty() || text.len() > MAX_TEXT_BYTES {
                return bad(field, format!("must have 1 to {MAX_TEXT_BYTES} bytes, not {}", text.len()));
            }
            if text.chars().any(char::is_control) {
                return bad(field, "must not hold control characters (line breaks, tabs)".to_string());
            }
            Ok(())
        };
        let token = |field: &'static str, t: &str| {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
            if t.is_empty() || t.len() > MAX_TOKEN_BYTES || !t.chars().all(allowed) {
                let shown: String = t.chars().take(MAX_TOKEN_BYTES).collect();
                return bad(field, format!("{shown:?} is not a token of 1 to {MAX_TOKEN_BYTES} letters, digits, '_', '.' or '-'"));
            }
            Ok(())
        };
        printable("cpu_model", &self.cpu_model)?;
        if let Some(gpu) = &self.gpu {
            printable("gpu", gpu)?;
        }
        if self.isa_features.len() > MAX_FEATURES {
            return bad("isa_features", format!("has {} entries, more than {MAX_FEATURES}", self.isa_features.len()));
        }
        for f in &self.isa_features {
            token("isa_features", f)?;
        }
        if let Some(w) = self.isa_features.windows(2).find(|w| w[0] >= w[1]) {
            return bad("isa_features", format!("must be sorted and distinct ({:?} comes before {:?})", w[0], w[1]));
        }
        if self.caches.len() > MAX_CACHES {
            return bad("caches", format!("has {} entries, more than {MAX_CACHES}", self.caches.len()));
        }
        for c in &self.caches {
            token("caches", &c.kind)?;
        }
        Ok(())
    }

    /// The canonical text the key hashes: one `name=value` line per field, lists comma-separated.
    pub fn canonical(&self) -> String {
        let caches: Vec<String> = self.caches.iter().map(|c| format!("L{}{}:{}", c.level, c.kind, c.size_bytes)).collect();
        format!(
            "cpu_model={}\nisa={}\nlogical_cores={}\nphysical_cores={}\ncaches={}\ngpu={}\n",
            self.cpu_model,
            self.isa_features.join(","),
            self.logical_cores,
            self.physical_cores,
            caches.join(","),
            self.gpu.as_deref().unwrap_or("none"),
        )
    }

    /// The host's key: FNV-1a (64 bits) of [`HostFingerprint::canonical`], as 16 hex digits.
    pub fn key(&self) -> String {
        let mut hasher = fnv::FnvHasher::default();
        hasher.write(self.canonical().as_bytes());
        format!("{:016x}", hasher.finish())
    }
}

/// The caches under a `/sys/devices/system/cpu/cpuN/cache` folder (`index*/{level,type,size}`);
/// none when the folder does not exist (some virtual machines lack it).
pub fn read_caches(dir: &Path) -> Result<Vec<CacheInfo>, StoreError> {
    fn io(path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
        move |source| StoreError::Io { path: path.to_path_buf(), source }
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut caches = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |name: &str| {
            let path = entry.path().join(name);
            fs::read_to_string(&path).map(|s| s.trim().to_string()).map_err(io(&path))
        };
        let (level, kind, size) = (read("level")?, read("type")?, read("size")?);
        let level = level.parse().map_err(|_| StoreError::Corrupt(format!("cache level {level:?} in {}", entry.path().display())))?;
        let size_bytes =
            parse_size(&size).ok_or_else(|| StoreError::Corrupt(format!("cache size {size:?} in {}", entry.path().display())))?;
        caches.push(CacheInfo { level, kind, size_bytes });
    }
    caches.sort();
    Ok(caches)
}

/// A size as the kernel writes it: `512`, `32K`, `16M`.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        b'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO_2: &str = "processor\t: 0\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 0\n\
        flags\t\t: fpu sse sse2 avx2 hypervisor fma avx512f bmi2 constant_tsc\n\n\
        processor\t: 1\nmodel name\t: AMD EPYC\nphysical id\t: 0\ncore id\t\t: 0\n\
        flags\t\t: fpu sse sse2 avx2 hypervisor fma avx512f bmi2 constant_tsc\n";

    #[test]
    fn the_driver_information_file_names_the_gpu() {
        let information = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 123\nGPU UUID: \t GPU-0000\nBus Location: \t 0000:18:00.0\n";
        assert_eq!(gpu_model(information).as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(gpu_model("IRQ: 5\nModel:\n"), None);
    }

    #[test]
    fn cpuinfo_gives_model_isa_and_cores() {
        let l1 = CacheInfo { level: 1, kind: "Data".into(), size_bytes: 32768 };
        let l2 = CacheInfo { level: 2, kind: "Unified".into(), size_bytes: 1 << 19 };
        let f = HostFingerprint::from_sources(CPUINFO_2, vec![l2.clone(), l1.clone()]);
        assert_eq!(f.cpu_model, "AMD EPYC");
        assert_eq!(f.isa_features, ["avx2", "avx512f", "bmi2", "fma", "sse", "sse2"]);
        assert_eq!((f.logical_cores, f.physical_cores), (2, 1));
        assert_eq!(f.caches, [l1, l2]);
        assert_eq!(f.key().len(), 16);
        assert_eq!(f.key(), f.clone().key());
        let other = HostFingerprint { physical_cores: 2, ..f.clone() };
        assert_ne!(f.key(), other.key());
    }

    #[test]
    fn sizes_parse_as_the_kernel_writes_them() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("16M"), Some(16 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn fingerprints_that_would_not_read_back_are_refused() {
        let good = HostFingerprint::from_sources(CPUINFO_2, vec![]);
        good.check().unwrap();
        let with = |f: &dyn Fn(&mut HostFingerprint)| {
            let mut h = good.clone();
            f(&mut h);
            h.check().unwrap_err().to_string()
        };
        assert!(with(&|h| h.isa_features = vec!["avx2 fma".into()]).contains("isa_features"));
        assert!(with(&|h| h.isa_features = vec!["fma".into(), "avx2".into()]).contains("sorted"));
        assert!(with(&|h| h.isa_features = vec!["avx2".into(), "avx2".into()]).contains("sorted and distinct"));
        assert!(with(&|h| h.isa_features = vec!["".into()]).contains("token"));
        assert!(with(&|h| h.cpu_model = "a\nisa=x".into()).contains("control"));
        assert!(with(&|h| h.cpu_model = "x".repeat(MAX_TEXT_BYTES + 1)).contains("cpu_model"));
        assert!(with(&|h| h.gpu = Some(String::new())).contains("gpu"));
        assert!(with(&|h| h.caches = vec![CacheInfo { level: 1, kind: "Data, L1".into(), size_bytes: 1 }]).contains("caches"));
        assert!(HostFingerprint::detect().unwrap().check().is_ok());
    }

    #[test]
    fn this_machine_has_a_fingerprint() {
        let f = HostFingerprint::detect().unwrap();
        assert!(f.logical_cores >= 1);
        assert!(!f.cpu_model.is_empty());
        assert_eq!(f.key(), HostFingerprint::detect().unwrap().key());
    }
}
