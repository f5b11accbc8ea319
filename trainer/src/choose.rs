//! Which cost model ranks a search, and why: weights given explicitly,
//! else the newest promoted weights of the store for this host, else the
//! weights of the nearest known host (a [`Zoo`]'s, or the store's promoted
//! weights of another host: [`crate::zoo`]), else the analytical model. The
//! answer always says which one it is, for which host and why (and the log
//! says it too), so a schedule can be traced to the model that chose it.

use crate::{CostNetwork, LearnedModel, WeightsFile, Zoo, ZooEntry};
use data::{HostDistance, HostFingerprint, Store};
use search::{Analytical, CostModel, Machine};
use std::path::Path;
use thiserror::Error;

/// Why no model could be chosen (weights that exist but cannot be used
/// are an error, never silently replaced by another model).
#[derive(Debug, Error)]
pub enum ChooseError {
    /// The weights file given cannot be read or used.
    #[error("weights file {path}: {source}")]
    File {
        /// The file, as displayed.
        path: String,
        /// What is wrong with it.
        source: crate::WeightsError,
    },
    /// The store's promoted weights for the host cannot be used.
    #[error("the store's promoted weights v{version}: {source}")]
    Promoted {
        /// Their version in the store.
        version: u32,
        /// What is wrong with them.
        source: crate::WeightsError,
    },
    /// Reading the store failed.
    #[error("training store: {0}")]
    Store(#[from] data::StoreError),
}

/// A model and a sentence saying which it is and why.
pub struct Chosen {
    /// The model.
    pub model: Box<dyn CostModel>,
    /// Which model it is and why, in words.
    pub why: String,
}

/// The network a search on this host would use (`None`: the analytical
/// model), its weights label, and a sentence saying which it is and why.
pub struct ChosenNetwork {
    /// The learned network; `None` for the analytical model.
    pub network: Option<CostNetwork>,
    /// The weights' version label (their header's); empty for the analytical model.
    pub version: String,
    /// Which model it is and why, in words.
    pub why: String,
}

/// The network for this host: the weights file given, else the store's
/// newest promoted weights for the host, else (when `nearest` is given)
/// those of the nearest host among `nearest`'s and the store's promoted
/// weights of other hosts, else none (the analytical model). The host's fingerprint, needed for the nearest,
/// is the store's record of `host_key` or this machine's when the key is
/// its own.
pub fn choose_network(
    weights: Option<&Path>,
    store: Option<&Store>,
    host_key: &str,
    nearest: Option<&Zoo>,
) -> Result<ChosenNetwork, ChooseError> {
    if let Some(path) = weights {
        let file = WeightsFile::read(path).map_err(|source| ChooseError::File { path: path.display().to_string(), source })?;
        let network = file.to_network().map_err(|source| ChooseError::File { path: path.display().to_string(), source })?;
        let version = file.header.version;
        return Ok(ChosenNetwork { why: format!("learned weights {version} from {}", path.display()), network: Some(network), version });
    }
    if let Some(store) = store {
        if let Some(w) = store.promoted_weights(Some(host_key))? {
            let version = w.info.version;
            let file = WeightsFile::decode(&w.blob).map_err(|source| ChooseError::Promoted { version, source })?;
            let network = file.to_network().map_err(|source| ChooseError::Promoted { version, source })?;
            return Ok(ChosenNetwork {
                network: Some(network),
                version: file.header.version,
                why: format!("learned weights v{version}, promoted for host {host_key}"),
            });
        }
    }
    let own = match store {
        Some(_) => format!("no promoted weights for host {host_key}"),
        None => "no training store given".to_string(),
    };
    let Some(zoo) = nearest else {
        return Ok(ChosenNetwork { network: None, version: String::new(), why: format!("analytical ({own})") });
    };
    match nearest_known_host(store, host_key, zoo)? {
        Err(none) => Ok(ChosenNetwork { network: None, version: String::new(), why: format!("analytical ({own}{none})") }),
        Ok(nearest) => {
            let network =
                nearest.entry.file.to_network().map_err(|source| ChooseError::File { path: nearest.entry.origin.clone(), source })?;
            let why = format!("{} ({own})", nearest.describe());
            // The origin names the weights shortly (labels nest the labels of their parents).
            Ok(ChosenNetwork { network: Some(network), version: nearest.entry.origin.clone(), why })
        }
    }
}

/// The weights of the known host nearest a host, and how near it is.
#[derive(Clone, Debug)]
pub struct NearestHost {
    /// The weights, their origin and host.
    pub entry: ZooEntry,
    /// How far their host is from the one they stand in for.
    pub distance: HostDistance,
}

impl NearestHost {
    /// Which weights, of which host, and why, in words.
    pub fn describe(&self) -> String {
        let (origin, key) = (&self.entry.origin, self.entry.host.key());
        if self.distance.is_zero() {
            format!("learned weights of {origin}, learned on host {key}, alike in every part the distance measures")
        } else {
            format!("learned weights of {origin}, learned on host {key}, the nearest known host ({})", self.distance)
        }
    }
}

/// The weights of the host nearest `host_key` among `zoo`'s and the
/// store's promoted weights of other hosts (only those that fit this
/// build), logged; or why there are none, as the end of a sentence.
pub fn nearest_known_host(store: Option<&Store>, host_key: &str, zoo: &Zoo) -> Result<Result<NearestHost, String>, ChooseError> {
    let known = match store {
        Some(store) => zoo.with_promoted_of(store, Some(host_key))?,
        None => zoo.clone(),
    };
    if known.entries().is_empty() {
        return Ok(Err(String::new()));
    }
    let Some(fingerprint) = fingerprint_of(host_key, store)? else {
        return Ok(Err(format!(", and host {host_key}'s fingerprint is unknown, so no nearest host")));
    };
    let Some((entry, distance)) = known.nearest(&fingerprint, |e| e.file.fits().is_ok()) else {
        return Ok(Err(", and no known host's weights are of its ISA family and fit this build".to_string()));
    };
    let nearest = NearestHost { entry: entry.clone(), distance };
    tracing::info!(host_key, nearest = %nearest.entry.host.key(), origin = %nearest.entry.origin, distance = %nearest.distance, "the nearest known host's weights");
    Ok(Ok(nearest))
}

/// The fingerprint of the host `key` names: the store's record, else this
/// machine's if the key is its own.
fn fingerprint_of(key: &str, store: Option<&Store>) -> Result<Option<HostFingerprint>, ChooseError> {
    if let Some(found) = store.map(|s| s.host(key)).transpose()?.flatten() {
        return Ok(Some(found));
    }
    Ok(HostFingerprint::detect().ok().filter(|h| h.key() == key))
}

/// The model for a search on this host (`threads` for the analytical
/// model's machine): [`choose_network`]'s.
pub fn choose_model(
    weights: Option<&Path>,
    store: Option<&Store>,
    host_key: &str,
    nearest: Option<&Zoo>,
    threads: usize,
) -> Result<Chosen, ChooseError> {
    let chosen = choose_network(weights, store, host_key, nearest)?;
    let model: Box<dyn CostModel> = match chosen.network {
        Some(network) => Box::new(LearnedModel::new(network, &chosen.version)),
        None => Box::new(Analytical::new(Machine::typical(threads))),
    };
    Ok(Chosen { model, why: chosen.why })
}
