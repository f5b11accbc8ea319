//! The Rust examples of `README.md` and of the guides under `docs/`, as
//! doc tests: `cargo test -p guides --doc` compiles and runs every one, so
//! they cannot fall behind the code. (The shell and Python blocks are run
//! by `scripts/check-docs.sh`.)

#![warn(missing_docs)]

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;

#[cfg(doctest)]
#[doc = include_str!("../language.md")]
pub struct Language;

#[cfg(doctest)]
#[doc = include_str!("../schedules.md")]
pub struct Schedules;

#[cfg(doctest)]
#[doc = include_str!("../autoscheduler.md")]
pub struct Autoscheduler;

#[cfg(doctest)]
#[doc = include_str!("../service.md")]
pub struct Service;

#[cfg(doctest)]
#[doc = include_str!("../deployment.md")]
pub struct Deployment;

#[cfg(doctest)]
#[doc = include_str!("../training.md")]
pub struct Training;

#[cfg(doctest)]
#[doc = include_str!("../store.md")]
pub struct Store;

#[cfg(doctest)]
#[doc = include_str!("../bench.md")]
pub struct Bench;

#[cfg(doctest)]
#[doc = include_str!("../gpu.md")]
pub struct Gpu;
