//! The autoscheduler's view of a pipeline.
//!
//! [`Dag`] analyses a [`compiler::PipelineDef`] once: nodes, stages, edges
//! with load Jacobians and compiled bounds, the regions at the estimates.
//! [`pipeline_features`] gives each stage's schedule-independent features
//! and [`schedule_features`] the layout of the per-stage features of a
//! candidate schedule, both versioned so that a model trained on one layout
//! is never fed another.
//!
//! This crate links neither LLVM nor libtorch: it depends on the compiler's
//! language, IR and analyses only.
//!
//! # Example
//!
//! The blur as the autoscheduler sees it: two stages, each with its two
//! loops and the features of the pipeline at that stage.
//!
//! ```
//! use featurizer::{Dag, PipelineFeatures};
//!
//! let dag = Dag::new(&compiler::examples::blur(), &compiler::Target::host())?;
//! assert_eq!(dag.stages.len(), 2);
//! for stage in &dag.stages {
//!     assert_eq!(stage.loops.len(), 2);
//!     let _features = PipelineFeatures::of(&dag, stage);
//! }
//! # Ok::<(), featurizer::DagError>(())
//! ```

#![warn(missing_docs)]

pub mod bound_expr;
pub mod dag;
pub mod jacobian;
pub mod layout;
pub mod pipeline_features;
pub mod schedule_features;
pub mod span;

pub use bound_expr::BoundExpr;
pub use dag::{Dag, DagError, Edge, EdgeId, Loop, Node, NodeId, Stage, StageIdx, MAX_INDEX_NODES};
pub use jacobian::{LoadJacobian, Rational};
pub use layout::{Layout, LayoutId, LayoutMismatch};
pub use pipeline_features::{PipelineFeatures, PIPELINE_LAYOUT};
pub use schedule_features::{ScheduleFeatures, SCHEDULE_LAYOUT};
pub use span::Span;
