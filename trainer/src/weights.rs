//! Weights files: the network's parameters with what they are valid for.
//!
//! The header records a version label (reported by the model's name), the
//! pipeline- and schedule-feature layouts the weights were trained on
//! (kind, version, names hash, length), the network's shape and the
//! version of the hand-designed terms its coefficients weight; loading
//! refuses weights whose layouts or shape differ from this build's, or
//! whose terms this build does not know, naming which and both
//! identities. A trailing checksum catches corruption, and
//! decoding checks every length against the bytes left, so no file makes
//! the reader panic or allocate without bound.
//!
//! Layout, little-endian: magic `HRCM`, u32 format version, the label
//! (u32 length + UTF-8), two layout records (kind string, u32 version,
//! u64 names hash, u32 length), six u32 shape sizes (the last the member
//! count), the u32 terms version, u32 parameter count, then per parameter
//! its name, u32 rank, u32 extents (the member count first) and f32 values
//! (row-major); last, the u64 FNV-1a hash of everything before it.
//! Between the terms version and the parameter count, format 4 records the
//! host the weights learned (u32 length + its fingerprint as JSON, length 0
//! for none), so that a file says which machine it is for and a host with
//! no weights of its own can take those of the nearest one
//! ([`crate::zoo`]).
//!
//! Older formats are still read (without a host). Format 3 is format 4
//! without the host. Format 2, from before the terms were
//! versioned, has no terms version: its weights weight the terms of
//! version 1. Format 1, from before ensembles, lacks the terms version
//! too, and has five shape sizes and no member dimension: one member.

use crate::network::{CostNetwork, NetworkShape, PARAMETERS};
use crate::terms::TERMS_VERSION;
use data::HostFingerprint;
use featurizer::{Layout, LayoutMismatch, PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use thiserror::Error;

const MAGIC: [u8; 4] = *b"HRCM";
/// Version of the file format (not of the weights).
pub const FORMAT_VERSION: u32 = 4;
/// The last format without the host the weights learned.
const HOSTLESS_FORMAT: u32 = 3;
/// The format of single-network files, before ensembles.
const SINGLE_NETWORK_FORMAT: u32 = 1;
/// The last format without a terms version (its weights weight version 1's
/// terms).
const UNVERSIONED_TERMS_FORMAT: u32 = 2;
const MAX_STRING_BYTES: usize = 1024;
/// The longest host fingerprint, as JSON (a fingerprint's own limits keep
/// it far shorter).
const MAX_HOST_BYTES: usize = 64 * 1024;
const MAX_PARAMETERS: usize = 64;
const MAX_RANK: usize = 8;
const CHECKSUM_BYTES: usize = 8;

/// Why weights could not be read or used.
#[derive(Debug, Error)]
pub enum WeightsError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes do not start with the `HRCM` signature.
    #[error("not a cost-model weights file (no HRCM signature)")]
    NotWeights,
    /// A format version this build does not read.
    #[error("weights file format {found} is not supported (this build reads formats {SINGLE_NETWORK_FORMAT} to {FORMAT_VERSION})")]
    Format {
        /// The file's format version.
        found: u32,
    },
    /// The trailing checksum does not match the contents.
    #[error("weights file is corrupt: its checksum is {stored:016x} but its contents hash to {computed:016x}")]
    Checksum {
        /// The checksum the file carries.
        stored: u64,
        /// The FNV-1a hash of its contents.
        computed: u64,
    },
    /// A length, count or value that does not fit the format.
    #[error("weights file is corrupt: {0}")]
    Corrupt(String),
    /// A feature layout in the header differs from this build's.
    #[error("the weights were trained on another feature layout: {0}")]
    Layout(#[from] LayoutMismatch),
    /// The network shape in the header does not fit this build's.
    #[error("the weights are for the network shape ({found}), this build has ({expected})")]
    Shape {
        /// This build's shape (with the file's member count).
        expected: NetworkShape,
        /// The file's shape.
        found: NetworkShape,
    },
    /// A terms version this build does not know.
    #[error("the weights weight cost terms of version {found}; this build knows versions 1 to {TERMS_VERSION}")]
    Terms {
        /// The file's terms version.
        found: u32,
    },
    /// A parameter that is misnamed, has the wrong extents or a non-finite value.
    #[error("weights parameter {name}: {problem}")]
    Parameter {
        /// The name the parameter should have.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// A feature layout's identity as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutRecord {
    /// Which layout (`"pipeline"` or `"schedule"`).
    pub kind: String,
    /// The layout's version number.
    pub version: u32,
    /// Hash of the layout's field names.
    pub names_hash: u64,
    /// Features per stage.
    pub len: u32,
}

impl LayoutRecord {
    /// The record of `layout`'s identity.
    pub fn of(layout: &Layout) -> LayoutRecord {
        let id = layout.id();
        LayoutRecord { kind: id.kind.to_string(), version: id.version, names_hash: id.names_hash, len: id.len as u32 }
    }

    /// Ok when the record is `layout` as this build defines it.
    fn check(&self, layout: &Layout) -> Result<(), WeightsError> {
        if self.kind != layout.kind {
            return Err(WeightsError::Corrupt(format!("a {} layout record where the {} layout belongs", self.kind, layout.kind)));
        }
        Ok(layout.check(self.version, self.names_hash, self.len as usize)?)
    }
}

/// What a set of weights is valid for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightsHeader {
    /// A label for this set of weights (training round, date): the model's
    /// name reports it.
    pub version: String,
    /// The pipeline-feature layout they were trained on.
    pub pipeline_layout: LayoutRecord,
    /// The schedule-feature layout they were trained on.
    pub schedule_layout: LayoutRecord,
    /// The network's shape, member count included.
    pub shape: NetworkShape,
    /// The version of the hand-designed terms the coefficients weight.
    pub terms_version: u32,
    /// The host whose samples the weights learned (`None` where unknown:
    /// files of format 3 and before, weights trained outside a store).
    pub host: Option<HostFingerprint>,
}

/// One parameter tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// The parameter's name (one of the network's, in their order).
    pub name: String,
    /// Its extents, the member count first.
    pub extents: Vec<u32>,
    /// Its values, row-major.
    pub values: Vec<f32>,
}

/// A weights file, decoded but not yet checked against this build.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightsFile {
    /// What the weights are valid for.
    pub header: WeightsHeader,
    /// The parameter tensors, in the network's order.
    pub parameters: Vec<Parameter>,
}

impl WeightsFile {
    /// The weights of `network` under this build's layouts and shape.
    pub fn of(network: &CostNetwork, version: &str) -> WeightsFile {
        let header = WeightsHeader {
            version: version.to_string(),
            pipeline_layout: LayoutRecord::of(&PIPELINE_LAYOUT),
            schedule_layout: LayoutRecord::of(&SCHEDULE_LAYOUT),
            shape: network.shape(),
            terms_version: network.terms_version(),
            host: None,
        };
        let members = network.members() as u32;
        let parameters = PARAMETERS
            .iter()
            .zip(network.values())
            .map(|((name, shape), values)| Parameter {
                name: name.to_string(),
                extents: std::iter::once(members).chain(shape.iter().map(|&e| e as u32)).collect(),
                values,
            })
            .collect();
        WeightsFile { header, parameters }
    }

    /// The same weights, recorded as learned on `host`.
    pub fn learned_on(mut self, host: Option<HostFingerprint>) -> WeightsFile {
        self.header.host = host;
        self
    }

    /// The same parameters labelled with this build's layouts, where each
    /// file layout differs from this build's in its version alone (the same
    /// feature names, so each input means nearly what it meant): how weights
    /// trained before a version that changed what a feature counts, not
    /// which features there are, start a fine-tuning in the new version.
    pub fn adopting_current_layouts(mut self) -> Result<WeightsFile, WeightsError> {
        for (record, layout) in [(&mut self.header.pipeline_layout, &PIPELINE_LAYOUT), (&mut self.header.schedule_layout, &SCHEDULE_LAYOUT)]
        {
            let current = LayoutRecord::of(layout);
            layout.check(current.version, record.names_hash, record.len as usize)?;
            *record = current;
        }
        Ok(self)
    }

    /// Ok when the weights fit this build: its feature layouts, network
    /// shape and terms, every parameter named, shaped and finite.
    pub fn fits(&self) -> Result<(), WeightsError> {
        self.header.pipeline_layout.check(&PIPELINE_LAYOUT)?;
        self.header.schedule_layout.check(&SCHEDULE_LAYOUT)?;
        let terms_version = self.header.terms_version;
        if !(1..=TERMS_VERSION).contains(&terms_version) {
            return Err(WeightsError::Terms { found: terms_version });
        }
        let shape = self.header.shape;
        if !shape.fits() {
            return Err(WeightsError::Shape { expected: NetworkShape { members: shape.members, ..NetworkShape::CURRENT }, found: shape });
        }
        let members = shape.members as usize;
        if self.parameters.len() != PARAMETERS.len() {
            return Err(WeightsError::Corrupt(format!("{} parameters, expected {}", self.parameters.len(), PARAMETERS.len())));
        }
        for ((name, shape), p) in PARAMETERS.iter().zip(&self.parameters) {
            let problem = if p.name != *name {
                format!("found {:?} in its place", p.name)
            } else if !p.extents.iter().map(|&e| e as i64).eq(std::iter::once(members as i64).chain(shape.iter().copied())) {
                format!("extents {:?}, expected {:?} for {members} member(s)", p.extents, shape)
            } else if let Some(v) = p.values.iter().find(|v| !v.is_finite()) {
                format!("holds the value {v}")
            } else {
                continue;
            };
            return Err(WeightsError::Parameter { name: name.to_string(), problem });
        }
        Ok(())
    }

    /// The network, after checking layouts, shape and every parameter ([`WeightsFile::fits`]).
    pub fn to_network(&self) -> Result<CostNetwork, WeightsError> {
        self.fits()?;
        let members = self.header.shape.members as usize;
        let terms_version = self.header.terms_version;
        let values: [Vec<f32>; 6] = std::array::from_fn(|i| self.parameters[i].values.clone());
        CostNetwork::from_values(members, &values)
            .map(|network| network.with_terms_version(terms_version))
            .ok_or_else(|| WeightsError::Corrupt("a parameter's values do not fill its extents".into()))
    }

    /// The file's bytes in the current format, checksum last.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC);
        put_u32(&mut out, FORMAT_VERSION);
        put_string(&mut out, &self.header.version);
        for record in [&self.header.pipeline_layout, &self.header.schedule_layout] {
            put_string(&mut out, &record.kind);
            put_u32(&mut out, record.version);
            out.extend_from_slice(&record.names_hash.to_le_bytes());
            put_u32(&mut out, record.len);
        }
        self.header.shape.to_array().into_iter().for_each(|s| put_u32(&mut out, s));
        put_u32(&mut out, self.header.terms_version);
        let host = self.header.host.as_ref().map(|h| serde_json::to_string(h).expect("a fingerprint serializes"));
        put_string(&mut out, host.as_deref().unwrap_or(""));
        put_u32(&mut out, self.parameters.len() as u32);
        for p in &self.parameters {
            put_string(&mut out, &p.name);
            put_u32(&mut out, p.extents.len() as u32);
            p.extents.iter().for_each(|&e| put_u32(&mut out, e));
            p.values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        let checksum = fnv1a(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Decodes a file's bytes, checking its signature, format, checksum
    /// and every length.
    pub fn decode(bytes: &[u8]) -> Result<WeightsFile, WeightsError> {
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            return Err(WeightsError::NotWeights);
        }
        let mut r = Reader { bytes, at: MAGIC.len() };
        let format = r.u32("the format version")?;
        if !(SINGLE_NETWORK_FORMAT..=FORMAT_VERSION).contains(&format) {
            return Err(WeightsError::Format { found: format });
        }
        let body_end = bytes.len().checked_sub(CHECKSUM_BYTES).filter(|&end| end >= r.at).ok_or_else(|| truncated("the checksum"))?;
        let stored = u64::from_le_bytes(bytes[body_end..].try_into().map_err(|_| truncated("the checksum"))?);
        let computed = fnv1a(&bytes[..body_end]);
        if stored != computed {
            return Err(WeightsError::Checksum { stored, computed });
        }
        let mut r = Reader { bytes: &bytes[..body_end], at: r.at };
        let version = r.string("the version label")?;
        let pipeline_layout = r.layout()?;
        let schedule_layout = r.layout()?;
        let mut shape = [1u32; 6];
        let sizes = if format == SINGLE_NETWORK_FORMAT { 5 } else { 6 };
        for s in &mut shape[..sizes] {
            *s = r.u32("the network shape")?;
        }
        let terms_version = if format <= UNVERSIONED_TERMS_FORMAT { 1 } else { r.u32("the terms version")? };
        let host = if format <= HOSTLESS_FORMAT { None } else { r.host()? };
        let count = r.u32("the parameter count")? as usize;
        if count > MAX_PARAMETERS {
            return Err(WeightsError::Corrupt(format!("{count} parameters")));
        }
        let mut parameters = Vec::with_capacity(count);
        for _ in 0..count {
            let mut parameter = r.parameter()?;
            if format == SINGLE_NETWORK_FORMAT {
                parameter.extents.insert(0, 1);
            }
            parameters.push(parameter);
        }
        if r.at != r.bytes.len() {
            return Err(WeightsError::Corrupt(format!("{} bytes after the last parameter", r.bytes.len() - r.at)));
        }
        let header =
            WeightsHeader { version, pipeline_layout, schedule_layout, shape: NetworkShape::from_array(shape), terms_version, host };
        Ok(WeightsFile { header, parameters })
    }

    /// Reads and decodes the file at `path` (see [`WeightsFile::decode`]).
    pub fn read(path: &Path) -> Result<WeightsFile, WeightsError> {
        let bytes = std::fs::read(path).map_err(|source| WeightsError::Io { path: path.to_path_buf(), source })?;
        WeightsFile::decode(&bytes)
    }

    /// Writes the encoded file to `path`, replacing any file there.
    pub fn write(&self, path: &Path) -> Result<(), WeightsError> {
        std::fs::write(path, self.encode()).map_err(|source| WeightsError::Io { path: path.to_path_buf(), source })
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

fn truncated(what: &str) -> WeightsError {
    WeightsError::Corrupt(format!("truncated in {what}"))
}

/// Reads fields, every length checked against the bytes left.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], WeightsError> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or_else(|| truncated(what))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self, what: &str) -> Result<u32, WeightsError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, WeightsError> {
        let lo = self.u32(what)? as u64;
        let hi = self.u32(what)? as u64;
        Ok(lo | hi << 32)
    }

    fn string(&mut self, what: &str) -> Result<String, WeightsError> {
        self.string_of_at_most(MAX_STRING_BYTES, what)
    }

    fn string_of_at_most(&mut self, max: usize, what: &str) -> Result<String, WeightsError> {
        let len = self.u32(what)? as usize;
        if len > max {
            return Err(WeightsError::Corrupt(format!("{what} is {len} bytes long")));
        }
        let bytes = self.take(len, what)?.to_vec();
        String::from_utf8(bytes).map_err(|_| WeightsError::Corrupt(format!("{what} is not UTF-8")))
    }

    /// The host the weights learned: none, or a fingerprint that passes its checks.
    fn host(&mut self) -> Result<Option<HostFingerprint>, WeightsError> {
        let what = "the host";
        let text = self.string_of_at_most(MAX_HOST_BYTES, what)?;
        if text.is_empty() {
            return Ok(None);
        }
        let host: HostFingerprint = serde_json::from_str(&text).map_err(|e| WeightsError::Corrupt(format!("{what}: {e}")))?;
        host.check().map_err(|e| WeightsError::Corrupt(format!("{what}: {e}")))?;
        Ok(Some(host))
    }

    fn layout(&mut self) -> Result<LayoutRecord, WeightsError> {
        let what = "a feature layout";
        Ok(LayoutRecord { kind: self.string(what)?, version: self.u32(what)?, names_hash: self.u64(what)?, len: self.u32(what)? })
    }

    fn parameter(&mut self) -> Result<Parameter, WeightsError> {
        let name = self.string("a parameter name")?;
        let rank = self.u32("a parameter rank")? as usize;
        if rank > MAX_RANK {
            return Err(WeightsError::Corrupt(format!("parameter {name} has rank {rank}")));
        }
        let mut extents = Vec::with_capacity(rank);
        for _ in 0..rank {
            extents.push(self.u32("parameter extents")?);
        }
        let len = extents.iter().try_fold(1usize, |n, &e| n.checked_mul(e as usize));
        let bytes = len.and_then(|n| n.checked_mul(4)).ok_or_else(|| WeightsError::Corrupt(format!("parameter {name} is too large")))?;
        let values = self.take(bytes, "parameter values")?.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok(Parameter { name, extents, values })
    }
}
