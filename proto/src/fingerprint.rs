//! The pipeline fingerprint: a SHA-256 of the pipeline's canonical
//! encoding, the protobuf bytes of the wire message converted from the
//! compiler's value (prost writes fields in tag order and the messages
//! hold no maps, so equal pipelines give equal bytes however a client
//! encoded them). A client compares the fingerprint of a reply with its
//! own pipeline's before applying the schedule.

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
