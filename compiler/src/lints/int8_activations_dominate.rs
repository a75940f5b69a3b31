//! The `int8-activations-dominate` lint: reports `precision int8` (int8 weights) when activations
//! take more memory at the peak than the weights did before quantizing.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::knobs::Precision;
use crate::units::bytes;

/// ## What it does
/// Reports `precision int8` (int8 weights) when activations take more memory at the peak
/// than the weights did before quantizing.
///
/// ## Why is this bad?
/// Quantizing weights alone shrinks the file four times but barely changes the memory of a
/// run whose activations stay float32: an article's 120 MB model went to 30 MB on disk with
/// almost no change in GPU memory.
///
/// ## Example
/// ```net
/// infer serve { model resnet50()  batch 64  no_grad  eval  precision int8 }
/// ```
///
/// ## How to fix
/// Lower the batch or the resolution, or quantize activations too (`precision fp16`/`bf16`).
pub struct Int8ActivationsDominate;

impl Lint for Int8ActivationsDominate {
    fn code(&self) -> Code {
        Code::Int8ActivationsDominate
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if cx.setup.run.precision != Precision::Int8 {
            return Vec::new();
        }
        let b = &cx.costs.simulation.peak.breakdown;
        let activations = b.activations_ledger();
        let float_weights = b.parameters * 4;
        if activations <= float_weights {
            return Vec::new();
        }
        let d = cx
            .diagnostic(
                Code::Int8ActivationsDominate,
                format!(
                    "int8 weights save {} but activations take {} at the peak",
                    bytes(float_weights - b.parameters),
                    bytes(activations)
                ),
                "precision",
            )
            .with_primary_message("weights only")
            .with_help("quantizing the weights does not shrink the activations: lower the batch, or use fp16/bf16");
        vec![d]
    }
}
