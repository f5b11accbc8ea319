//! A pipeline with the regions it is timed at, and how to rebuild it: a
//! random pipeline from its seed, or an app (for autotuning one app).

use compiler::PipelineDef;
use random_pipelines::{GeneratorParams, RandomPipeline};

/// What the agent times: a pipeline, its input and output regions, and how
/// the store can rebuild the pipeline.
#[derive(Clone, Debug)]
pub struct Workload {
    pub pipeline: PipelineDef,
    /// The region of each input, by name.
    pub inputs: Vec<(String, Vec<(i64, i64)>)>,
    /// The region of the output computed.
    pub output: Vec<(i64, i64)>,
    pub source: data::PipelineSource,
}

impl Workload {
    /// An app at the size it is built for, timed at the regions it runs
    /// at (which are also its estimates here).
    pub fn from_app(app: &apps::App) -> Workload {
        let pipeline = app.pipeline_estimated_as_run();
        let json = serde_json::to_string(&pipeline).expect("pipeline definitions serialize");
        Workload { pipeline, inputs: app.inputs.clone(), output: app.output.clone(), source: data::PipelineSource::Definition { json } }
    }

    /// A random pipeline, timed at its estimates.
    pub fn from_random(rp: &RandomPipeline) -> Workload {
        Workload {
            pipeline: rp.pipeline.clone(),
            inputs: rp.inputs.iter().map(|i| (i.name.clone(), i.region.clone())).collect(),
            output: rp.output_region.clone(),
            source: data::PipelineSource::Generated {
                seed: rp.params.seed,
                params: serde_json::to_value(&rp.params).expect("generator parameters serialize"),
            },
        }
    }

    /// The random pipeline of `seed`, sized for training
    /// ([`GeneratorParams::for_training`]).
    pub fn random(seed: u64) -> Result<Workload, random_pipelines::GenError> {
        Workload::generated(&GeneratorParams::for_training(seed))
    }

    /// The random pipeline of `params`.
    pub fn generated(params: &GeneratorParams) -> Result<Workload, random_pipelines::GenError> {
        Ok(Workload::from_random(&random_pipelines::generate(params)?))
    }
}
