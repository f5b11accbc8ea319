//! A pipeline with the regions it is timed at, and how to rebuild it: a
//! random pipeline from its seed, or an app (for autotuning one app).

use compiler::PipelineDef;
use random_pipelines::{GeneratorParams, RandomPipeline};

/// What the agent times: a pipeline, its input and output regions, and how
/// the store can rebuild the pipeline.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The pipeline, with estimates.
    pub pipeline: PipelineDef,
    /// The region of each input, by name.
    pub inputs: Vec<(String, Vec<(i64, i64)>)>,
    /// The region of the output computed.
    pub output: Vec<(i64, i64)>,
    /// How the store rebuilds the pipeline: a random pipeline's seed and
    /// generator parameters, or an app's definition.
    pub source: data::PipelineSource,
}

impl Workload {
    /// An app at the size it is built for, timed at the regions it runs
    /// at (which are also its estimates here). The pipeline is the one the
    /// store rebuilds from its definition (JSON), not the app's own: a
    /// subexpression the app shares between uses is one node in memory but
    /// separate copies after a round trip, and the pipeline features count
    /// a shared node once, so the features recorded must be the copy's for
    /// the trainer to find them again.
    pub fn from_app(app: &apps::App) -> Workload {
        let json = serde_json::to_string(&app.pipeline_estimated_as_run()).expect("pipeline definitions serialize");
        let pipeline = serde_json::from_str(&json).expect("a serialized pipeline definition reads back");
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

    /// The pipeline a store's source names, when the generator made it:
    /// rebuilt from the parameters stored with it, so a seed timed under
    /// an older vocabulary rebuilds the pipeline that was timed. `None` for
    /// a stored definition (an app).
    pub fn from_stored_source(source: &data::PipelineSource) -> Option<Result<Workload, random_pipelines::GenError>> {
        let data::PipelineSource::Generated { params, .. } = source else { return None };
        Some(
            serde_json::from_value::<GeneratorParams>(params.clone())
                .map_err(|e| random_pipelines::GenError::Params(format!("stored generator parameters do not read: {e}")))
                .and_then(|params| Workload::generated(&params)),
        )
    }

    /// The random pipeline of `params`.
    pub fn generated(params: &GeneratorParams) -> Result<Workload, random_pipelines::GenError> {
        Ok(Workload::from_random(&random_pipelines::generate(params)?))
    }
}

#[cfg(test)]
mod tests {
    use super::Workload;
    use compiler::{PipelineDef, Target};
    use featurizer::{Dag, PipelineFeatures};

    fn features(pipeline: &PipelineDef) -> Vec<Vec<f32>> {
        let dag = Dag::new(pipeline, &Target::host()).unwrap();
        dag.stages.iter().map(|s| PipelineFeatures::of(&dag, s).to_vec()).collect()
    }

    /// The trainer rebuilds an app from its stored definition and skips
    /// it when the features differ from the recorded ones (harris shares
    /// subexpressions, which a JSON round trip unshares).
    #[test]
    fn an_apps_recorded_features_are_those_of_its_stored_definition() {
        for name in apps::names() {
            let app = apps::build(name, apps::Size::Small, &Target::host()).unwrap();
            let workload = Workload::from_app(&app);
            let data::PipelineSource::Definition { json } = &workload.source else { panic!("{name}: an app is stored as its definition") };
            let rebuilt: PipelineDef = serde_json::from_str(json).unwrap();
            assert_eq!(features(&workload.pipeline), features(&rebuilt), "{name}");
        }
    }
}
