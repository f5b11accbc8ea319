//! The random pipeline generator's parameters on the wire (what a work
//! item asks an agent to generate), both ways.

use crate::v1;
use random_pipelines::GeneratorParams;

impl From<&GeneratorParams> for v1::GeneratorParams {
    fn from(p: &GeneratorParams) -> Self {
        let (width, height, channels) = p.input_size;
        v1::GeneratorParams {
            seed: p.seed,
            max_stages: u32::try_from(p.max_stages).unwrap_or(u32::MAX),
            width,
            height,
            channels,
            vocabulary: p.vocabulary,
        }
    }
}

impl From<&v1::GeneratorParams> for GeneratorParams {
    /// The parameters as sent (a vocabulary of 0, the field's absence,
    /// is the original one); the generator itself refuses unusable ones.
    fn from(p: &v1::GeneratorParams) -> Self {
        GeneratorParams {
            seed: p.seed,
            max_stages: p.max_stages as usize,
            input_size: (p.width, p.height, p.channels),
            vocabulary: p.vocabulary.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_parameters_round_trip() {
        for vocabulary in 1..=random_pipelines::VOCABULARY {
            let params = GeneratorParams { seed: 9, max_stages: 4, input_size: (64, 32, 3), vocabulary };
            assert_eq!(GeneratorParams::from(&v1::GeneratorParams::from(&params)), params);
        }
    }
}
