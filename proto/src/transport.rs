//! How a client reaches a server: an endpoint for an address, over TLS
//! when the address is `https://` (trusting the given CA certificate, or
//! the system's roots when none is given), in plain text for `http://`.
//! The agent and the scheduling client both connect through here, so they
//! speak to a server the same way.

use std::path::Path;
use thiserror::Error;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

/// Why an endpoint could not be made.
#[derive(Debug, Error)]
pub enum EndpointError {
    /// The address is not a valid URI.
    #[error("server address {address}: {source}")]
    Address {
        /// The address given.
        address: String,
        /// Tonic's error.
        source: tonic::transport::Error,
    },
    /// The CA certificate file could not be read.
    #[error("reading the CA certificate {path}: {source}")]
    Ca {
        /// The certificate's path, as displayed.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A CA certificate given for an `http://` address.
    #[error("{address}: a CA certificate was given for a plain-text address (use https://)")]
    CaWithoutTls {
        /// The address given.
        address: String,
    },
    /// Tonic could not set up TLS for the endpoint.
    #[error("TLS for {address}: {source}")]
    Tls {
        /// The address given.
        address: String,
        /// Tonic's error.
        source: tonic::transport::Error,
    },
}

/// The endpoint of `address` (`http://host:port` or `https://host:port`),
/// trusting the PEM certificate at `ca` for TLS when given.
pub fn endpoint(address: &str, ca: Option<&Path>) -> Result<Endpoint, EndpointError> {
    let endpoint =
        Endpoint::from_shared(address.to_string()).map_err(|source| EndpointError::Address { address: address.to_string(), source })?;
    let tls = address.starts_with("https://");
    if !tls {
        return match ca {
            Some(_) => Err(EndpointError::CaWithoutTls { address: address.to_string() }),
            None => Ok(endpoint),
        };
    }
    let config = match ca {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|source| EndpointError::Ca { path: path.display().to_string(), source })?;
            ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
        }
        None => ClientTlsConfig::new().with_native_roots(),
    };
    endpoint.tls_config(config).map_err(|source| EndpointError::Tls { address: address.to_string(), source })
}
