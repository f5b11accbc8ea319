//! End-to-end suites across the compiler, the autoscheduler and the code
//! generator (the library itself is empty; the suites are under `tests/`):
//!
//! - `apps`: every app's autoscheduled schedule, compiled with the LLVM JIT,
//!   computes what its naive schedule computes;
//! - `random_pipelines`: so do the schedules the search picks and samples for
//!   random pipelines, against the reference evaluator;
//! - `sliding`: line-buffered placements the search proposes are slid by
//!   the compiler and compute the same;
//! - `tuples`: Funcs of several values, scheduled by the search, compiled.
//!
//! They live apart from `search` so that the search builds and tests
//! without LLVM.

#![warn(missing_docs)]
