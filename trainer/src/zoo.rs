//! Weights of the hosts the project knows, and the nearest of them for a
//! host with none of its own.
//!
//! Weights learn one machine; a machine nobody has trained on is still
//! ranked better by the weights of a machine like it than by the
//! analytical model (measured: `trainer/assets/README.md`). A [`Zoo`]
//! holds weights with the fingerprint of the host each learned: the ones
//! shipped with the project ([`Zoo::shipped`], built into the binary from
//! `trainer/assets/`) and, at the time of a choice, the training store's
//! promoted weights of every host it knows. [`Zoo::nearest`] picks by
//! [`data::HostDistance`]: the same instruction-set family always, then the
//! vector width, the ISA features, the caches and the cores.

use crate::{WeightsError, WeightsFile};
use data::{HostDistance, HostFingerprint, Store, StoreError};
use std::sync::OnceLock;

/// The weights files shipped in `trainer/assets/`, by file name.
const SHIPPED: [(&str, &[u8]); 3] = [
    ("epyc-7cd6cd16125da94a.weights", include_bytes!("../assets/epyc-7cd6cd16125da94a.weights")),
    ("epyc-avx2-818e11c7e41ce63d.weights", include_bytes!("../assets/epyc-avx2-818e11c7e41ce63d.weights")),
    ("xeon-e1a600468163db2c.weights", include_bytes!("../assets/xeon-e1a600468163db2c.weights")),
];

/// One set of weights with the host it learned.
#[derive(Clone, Debug, PartialEq)]
pub struct ZooEntry {
    /// Where the weights come from, in words (a shipped file's name, a store version).
    pub origin: String,
    /// The host whose samples they learned.
    pub host: HostFingerprint,
    /// The weights.
    pub file: WeightsFile,
}

/// Weights of known hosts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Zoo {
    entries: Vec<ZooEntry>,
}

impl Zoo {
    /// A zoo with no weights: a host without weights of its own is ranked
    /// by the analytical model.
    pub fn empty() -> Zoo {
        Zoo::default()
    }

    /// The weights shipped with the project, each with the host it learned
    /// (decoded once per process).
    pub fn shipped() -> &'static Zoo {
        static SHIPPED_ZOO: OnceLock<Zoo> = OnceLock::new();
        SHIPPED_ZOO.get_or_init(|| {
            let mut zoo = Zoo::empty();
            for (name, bytes) in SHIPPED {
                // The shipped files' decoding and hosts are tested
                // (`tests/weights.rs`); a file that fails is left out
                // rather than taking the process down.
                match WeightsFile::decode(bytes) {
                    Ok(file) => {
                        if let Err(e) = zoo.add(format!("shipped {name}"), file) {
                            tracing::warn!(file = name, error = %e, "a shipped weights file is left out of the zoo");
                        }
                    }
                    Err(e) => tracing::warn!(file = name, error = %e, "a shipped weights file does not decode"),
                }
            }
            zoo
        })
    }

    /// Adds weights that record the host they learned.
    pub fn add(&mut self, origin: String, file: WeightsFile) -> Result<(), WeightsError> {
        let host = file.header.host.clone().ok_or_else(|| WeightsError::Corrupt(format!("{origin} records no host")))?;
        self.entries.push(ZooEntry { origin, host, file });
        Ok(())
    }

    /// This zoo with the store's promoted weights of every host but
    /// `except` whose fingerprint is known (recorded in the weights, else
    /// in the store); a blob that does not decode is left out, as it cannot
    /// rank anything.
    pub fn with_promoted_of(&self, store: &Store, except: Option<&str>) -> Result<Zoo, StoreError> {
        let mut known = self.clone();
        for w in store.promoted_weights_of_every_host()?.into_iter().filter(|w| w.info.host_key.as_deref() != except) {
            let Ok(file) = WeightsFile::decode(&w.blob) else { continue };
            let host = match (&file.header.host, &w.info.host_key) {
                (Some(h), _) => h.clone(),
                (None, Some(key)) => match store.host(key)? {
                    Some(h) => h,
                    None => continue,
                },
                (None, None) => continue,
            };
            known.entries.push(ZooEntry { origin: format!("the store's v{}", w.info.version), host, file });
        }
        Ok(known)
    }

    /// This zoo without the weights learned on the host `key`: that host
    /// is then served as if nobody had trained on it (to measure how fast
    /// a new host is learned, on a host the project knows).
    pub fn without_host(&self, key: &str) -> Zoo {
        Zoo { entries: self.entries.iter().filter(|e| e.host.key() != key).cloned().collect() }
    }

    /// Every entry, in the order added.
    pub fn entries(&self) -> &[ZooEntry] {
        &self.entries
    }

    /// The entry whose host is nearest `host` among those `usable` accepts
    /// and of the same instruction-set family, with its distance; on equal
    /// distances the first added.
    pub fn nearest(&self, host: &HostFingerprint, usable: impl Fn(&ZooEntry) -> bool) -> Option<(&ZooEntry, HostDistance)> {
        self.entries
            .iter()
            .filter(|e| usable(e))
            .map(|e| (e, host.distance(&e.host)))
            .filter(|(_, d)| d.comparable())
            .min_by(|a, b| a.1.cmp(&b.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CostNetwork;
    use data::CacheInfo;

    fn host(flags: &str, l2_kib: u64) -> HostFingerprint {
        HostFingerprint::from_sources(
            &format!("processor : 0\nmodel name : Test\nflags : {flags}\n"),
            vec![CacheInfo { level: 2, kind: "Unified".into(), size_bytes: l2_kib * 1024 }],
        )
    }

    fn zoo(hosts: &[(&str, HostFingerprint)]) -> Zoo {
        let mut zoo = Zoo::empty();
        for (name, h) in hosts {
            zoo.add(name.to_string(), WeightsFile::of(&CostNetwork::random(1, 0), name).learned_on(Some(h.clone()))).expect("a host");
        }
        zoo
    }

    #[test]
    fn the_nearest_host_is_the_one_of_the_same_width_and_features() {
        let avx2 = host("sse sse2 avx avx2 fma", 512);
        let avx512 = host("sse sse2 avx avx2 fma avx512f avx512bw", 1024);
        let arm = host("asimd fphp", 512);
        let zoo = zoo(&[("wide", avx512.clone()), ("arm", arm.clone()), ("narrow", avx2.clone())]);
        let nearest = |h: &HostFingerprint| zoo.nearest(h, |_| true).map(|(e, _)| e.origin.as_str());
        assert_eq!(nearest(&host("sse sse2 avx avx2 fma bmi2", 1024)), Some("narrow"));
        assert_eq!(nearest(&host("sse sse2 avx avx2 avx512f", 2048)), Some("wide"));
        assert_eq!(nearest(&arm), Some("arm"));
        assert!(zoo.nearest(&avx2, |_| true).expect("one").1.is_zero());
        assert_eq!(zoo.nearest(&avx2, |e| e.origin != "narrow").map(|(e, _)| e.origin.as_str()), Some("wide"), "the usable only");
        assert_eq!(nearest(&host("altivec", 512)), None, "no host of another family is near");
        let without = zoo.without_host(&avx2.key());
        assert_eq!(without.nearest(&avx2, |_| true).map(|(e, _)| e.origin.as_str()), Some("wide"), "its own weights left out");
        assert_eq!(without.entries().len(), 2);
    }

    #[test]
    fn weights_that_record_no_host_cannot_join() {
        let e = Zoo::empty().add("anon".into(), WeightsFile::of(&CostNetwork::random(1, 0), "anon")).expect_err("refused");
        assert!(e.to_string().contains("anon records no host"), "{e}");
    }
}
