//! Fixtures the test suites share, so that no suite keeps a copy of
//! another's: [`reports`], training-store reports of a small synthetic
//! pipeline (the store's tests and the `store` command's). The training
//! store the trainer's tests share is the `training-fixtures` crate (it
//! links libtorch, which these must not).
//!
//! ```
//! let host = test_support::reports::host("Test CPU");
//! let report = test_support::reports::report("w1", &host, 7, 6, 0);
//! assert_eq!(report.samples.len(), 6);
//! ```

#![warn(missing_docs)]

pub mod reports;
