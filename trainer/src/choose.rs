//! Which cost model ranks a search, and why: weights given explicitly,
//! else the newest promoted weights of the store for this host, else the
//! analytical model. The answer always says which one it is, so a schedule
//! can be traced to the model that chose it.

use crate::LearnedModel;
use data::Store;
use search::{Analytical, CostModel, Machine};
use std::path::Path;
use thiserror::Error;

/// Why no model could be chosen (weights that exist but cannot be used
/// are an error, never silently replaced by another model).
#[derive(Debug, Error)]
pub enum ChooseError {
    #[error("weights file {path}: {source}")]
    File { path: String, source: crate::WeightsError },
    #[error("the store's promoted weights v{version}: {source}")]
    Promoted { version: u32, source: crate::WeightsError },
    #[error("training store: {0}")]
    Store(#[from] data::StoreError),
}

/// A model and a sentence saying which it is and why.
pub struct Chosen {
    pub model: Box<dyn CostModel>,
    pub why: String,
}

/// The model for a search on this host (`threads` for the analytical
/// model's machine).
pub fn choose_model(weights: Option<&Path>, store: Option<&Store>, host_key: &str, threads: usize) -> Result<Chosen, ChooseError> {
    if let Some(path) = weights {
        let model = LearnedModel::load(path).map_err(|source| ChooseError::File { path: path.display().to_string(), source })?;
        return Ok(Chosen { why: format!("learned weights {} from {}", model.version(), path.display()), model: Box::new(model) });
    }
    if let Some(store) = store {
        if let Some(w) = store.promoted_weights(Some(host_key))? {
            let version = w.info.version;
            let model = LearnedModel::from_bytes(&w.blob).map_err(|source| ChooseError::Promoted { version, source })?;
            return Ok(Chosen { why: format!("learned weights v{version}, promoted for host {host_key}"), model: Box::new(model) });
        }
    }
    let why = match store {
        Some(_) => format!("analytical (no promoted weights for host {host_key})"),
        None => "analytical (no training store given)".to_string(),
    };
    Ok(Chosen { model: Box::new(Analytical::new(Machine::typical(threads))), why })
}
