//! Which cost model ranks a search, and why: weights given explicitly,
//! else the newest promoted weights of the store for this host, else the
//! analytical model. The answer always says which one it is, so a schedule
//! can be traced to the model that chose it.

use crate::{CostNetwork, LearnedModel, WeightsFile};
use data::Store;
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
/// newest promoted weights for the host, else none (the analytical model).
pub fn choose_network(weights: Option<&Path>, store: Option<&Store>, host_key: &str) -> Result<ChosenNetwork, ChooseError> {
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
    let why = match store {
        Some(_) => format!("analytical (no promoted weights for host {host_key})"),
        None => "analytical (no training store given)".to_string(),
    };
    Ok(ChosenNetwork { network: None, version: String::new(), why })
}

/// The model for a search on this host (`threads` for the analytical
/// model's machine): [`choose_network`]'s.
pub fn choose_model(weights: Option<&Path>, store: Option<&Store>, host_key: &str, threads: usize) -> Result<Chosen, ChooseError> {
    let chosen = choose_network(weights, store, host_key)?;
    let model: Box<dyn CostModel> = match chosen.network {
        Some(network) => Box::new(LearnedModel::new(network, &chosen.version)),
        None => Box::new(Analytical::new(Machine::typical(threads))),
    };
    Ok(Chosen { model, why: chosen.why })
}
