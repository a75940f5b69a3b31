//! The `activations-dominate` lint: reports a `train` scenario that does not fit its budget with
//! the safety margin and whose activations at the peak are more than eight times its weights, with
//! what each remedy would save: activation checkpointing, automatic mixed precision, and two micro-
//! batches.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::knobs::Precision;
use crate::units::bytes;

/// ## What it does
/// Reports a `train` scenario that does not fit its budget with the safety margin and whose
/// activations at the peak are more than eight times its weights, with what each remedy
/// would save: activation checkpointing, automatic mixed precision, and two micro-batches.
///
/// ## Why is this bad?
/// Training keeps every tensor backward needs, so activations grow with the batch and the
/// depth while weights do not. They are usually where memory can be won.
///
/// ## Example
/// ```net
/// train fit { model resnet50()  batch 256  optimizer adam  budget 24 GiB }
/// ```
///
/// ## How to fix
/// Apply the remedy with the best saving: `checkpoint`, `precision amp`, or `grad_accum 2`.
pub struct ActivationsDominate;

impl Lint for ActivationsDominate {
    fn code(&self) -> Code {
        Code::ActivationsDominate
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if !cx.setup.run.training {
            return Vec::new();
        }
        let b = &cx.costs.simulation.peak.breakdown;
        let activations = b.activations + b.backward_temporaries;
        if b.parameters == 0 || activations <= 8 * b.parameters {
            return Vec::new();
        }
        // Advice for when memory must be won: the budget is not met with the margin.
        let Some(budget) = cx.costs.budget else { return Vec::new() };
        if cx.costs.total * cx.costs.margin_per_mille / 1000 <= budget {
            return Vec::new();
        }
        let peak = cx.costs.simulation.peak.bytes;
        let mut remedies = Vec::new();
        if !cx.setup.run.checkpoint {
            let with = cx.simulate_with(|run| run.checkpoint = true).peak.bytes;
            if with < peak {
                remedies.push(format!("`checkpoint` saves {} ({} %)", bytes(peak - with), percent(peak - with, peak)));
            }
        }
        if cx.setup.run.precision == Precision::Fp32 {
            let with = cx.simulate_with(|run| run.precision = Precision::Amp).peak.bytes;
            if with < peak {
                remedies.push(format!(
                    "`precision amp` saves {} ({} %)",
                    bytes(peak - with),
                    percent(peak - with, peak)
                ));
            }
        }
        if cx.setup.batch.is_some_and(|b| b % (2 * cx.setup.run.grad_accum.max(1)) == 0) {
            // Half the micro-batch: activations halve; weights, gradients, state do not.
            let saving = activations / 2;
            remedies.push(format!("two micro-batches (`grad_accum`) save about {}", bytes(saving)));
        }
        let d = cx
            .diagnostic(
                Code::ActivationsDominate,
                format!(
                    "training activations take {}, {} times the weights ({})",
                    bytes(activations),
                    activations / b.parameters,
                    bytes(b.parameters)
                ),
                "batch",
            )
            .with_primary_message("activations scale with the batch");
        let d = remedies.into_iter().fold(d, |d, r| d.with_note(r));
        vec![d.with_help("checkpoint activations, use mixed precision, or split the batch into micro-batches")]
    }
}
