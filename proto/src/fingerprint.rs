//! The pipeline fingerprint: a SHA-256 of the pipeline's canonical
//! encoding, the protobuf bytes of the wire message converted from the
//! compiler's value (prost writes fields in tag order and the messages
//! hold no maps, so equal pipelines give equal bytes however a client
//! encoded them). A client compares the fingerprint of a reply with its
//! own pipeline's before applying the schedule.
//!
//! The training store keys pipelines and schedules by another digest,
//! [`content_hash`]: the hex SHA-256 of a text (a pipeline's JSON
//! definition, [`definition_hash`], or a schedule's text form), which
//! agents compute and the server checks against the work item.

use crate::error::ToWireError;
use crate::v1;
use compiler::PipelineDef;
use prost::Message;
use sha2::{Digest, Sha256};
use std::fmt;

/// A SHA-256 digest of a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The fingerprint of `pipeline`.
pub fn fingerprint(pipeline: &PipelineDef) -> Result<Fingerprint, ToWireError> {
    let bytes = v1::Pipeline::try_from(pipeline)?.encode_to_vec();
    Ok(Fingerprint(Sha256::digest(&bytes).into()))
}

/// The hex SHA-256 of `text`: the store's key of a schedule (its text) or
/// pipeline (its JSON definition).
pub fn content_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The store's key of `pipeline`: the [`content_hash`] of its JSON definition.
pub fn definition_hash(pipeline: &PipelineDef) -> String {
    content_hash(&serde_json::to_string(pipeline).expect("pipeline definitions serialize"))
}

/// Whether `hash` has the form of a [`content_hash`]: 64 lowercase hex digits.
pub fn is_content_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
