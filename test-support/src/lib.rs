//! Fixtures the test suites share, so that no suite keeps a copy of
//! another's:
//!
//! - [`reports`]: training-store reports of a small synthetic pipeline
//!   (the store's tests and the `store` command's);
//! - `training_store` (feature `training`): a training store on disk
//!   filled as benchmark agents fill it, with synthetic runtimes (the
//!   trainer's and the `trainer` command's tests).
//!
//! ```
//! let host = test_support::reports::host("Test CPU");
//! let report = test_support::reports::report("w1", &host, 7, 6, 0);
//! assert_eq!(report.samples.len(), 6);
//! ```

pub mod reports;
#[cfg(feature = "training")]
pub mod training_store;
