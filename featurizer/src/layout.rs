//! Versioned feature layouts.
//!
//! A layout is a list of named fields with a version number and a hash of
//! the names. Every training sample and every set of weights records the
//! layout it was made with; a model is only ever fed features of the layout
//! it was trained on ([`Layout::check`] says which differs, never silently).

use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use thiserror::Error;

/// The identity of a feature layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LayoutId {
    /// Which layout (`"pipeline"` or `"schedule"`).
    pub kind: &'static str,
    /// The layout's version number.
    pub version: u32,
    /// FNV-1a hash of the field names, in order.
    pub names_hash: u64,
    /// The number of fields.
    pub len: usize,
}

/// Features of one layout fed where another was expected.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{kind} feature layout mismatch: expected version {expected_version} (hash {expected_hash:016x}, {expected_len} fields), got version {got_version} (hash {got_hash:016x}, {got_len} fields)")]
pub struct LayoutMismatch {
    /// Which layout (`"pipeline"` or `"schedule"`).
    pub kind: String,
    /// The version of the layout expected.
    pub expected_version: u32,
    /// The names hash of the layout expected.
    pub expected_hash: u64,
    /// The field count of the layout expected.
    pub expected_len: usize,
    /// The version of the features given.
    pub got_version: u32,
    /// The names hash of the features given.
    pub got_hash: u64,
    /// The field count of the features given.
    pub got_len: usize,
}

/// A named, versioned list of fields.
pub struct Layout {
    /// Which layout (`"pipeline"` or `"schedule"`).
    pub kind: &'static str,
    /// The version; bumped with any change of meaning.
    pub version: u32,
    /// The field names, in order.
    pub names: fn() -> Vec<String>,
}

impl Layout {
    /// The layout's identity: kind, version, hash and count of its names.
    pub fn id(&self) -> LayoutId {
        let names = (self.names)();
        LayoutId { kind: self.kind, version: self.version, names_hash: names_hash(&names), len: names.len() }
    }

    /// Ok when `other` is this layout.
    pub fn check(&self, other_version: u32, other_hash: u64, other_len: usize) -> Result<(), LayoutMismatch> {
        let id = self.id();
        if (id.version, id.names_hash, id.len) == (other_version, other_hash, other_len) {
            return Ok(());
        }
        Err(LayoutMismatch {
            kind: self.kind.to_string(),
            expected_version: id.version,
            expected_hash: id.names_hash,
            expected_len: id.len,
            got_version: other_version,
            got_hash: other_hash,
            got_len: other_len,
        })
    }
}

/// FNV-1a over the names, each followed by a zero byte.
pub fn names_hash(names: &[String]) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    for name in names {
        hasher.write(name.as_bytes());
        hasher.write(&[0]);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["a".into(), "b".into()]
    }

    #[test]
    fn a_layout_accepts_itself_and_names_what_differs() {
        let l = Layout { kind: "test", version: 2, names };
        let id = l.id();
        assert!(l.check(id.version, id.names_hash, id.len).is_ok());
        let e = l.check(1, id.names_hash, id.len).unwrap_err();
        assert!(e.to_string().contains("expected version 2"), "{e}");
        assert_ne!(names_hash(&["ab".into()]), names_hash(&["a".into(), "b".into()]));
    }
}
