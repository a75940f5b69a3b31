//! The `missing-no-grad` lint: reports an `infer` scenario without `no_grad`, with the memory it
//! costs.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports an `infer` scenario without `no_grad`, with the memory it costs.
///
/// ## Why is this bad?
/// Without `torch.no_grad()`, autograd records the forward pass and keeps every tensor a
/// backward pass would need, so inference holds training-sized activations. It is behind a
/// fifth of "tiny model runs out of memory at inference" reports.
///
/// ## Example
/// ```net
/// infer serve { model resnet50()  batch 8  eval }
/// ```
///
/// ## How to fix
/// Add `no_grad` (and run the model under `torch.no_grad()` or `torch.inference_mode()`).
pub struct MissingNoGrad;

impl Lint for MissingNoGrad {
    fn code(&self) -> Code {
        Code::MissingNoGrad
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if cx.setup.run.training || cx.setup.run.no_grad {
            return Vec::new();
        }
        let without = cx.simulate_with(|run| run.no_grad = true).peak.bytes;
        let extra = cx.costs.simulation.peak.bytes - without;
        if extra <= 0 {
            return Vec::new();
        }
        let d = Diagnostic::new(
            Code::MissingNoGrad,
            format!(
                "inference scenario `{}` runs without `no_grad`: autograd keeps {} more",
                cx.scenario.name.text,
                bytes(extra)
            ),
            cx.file,
            cx.at(cx.scenario.name.id),
        )
        .with_primary_message(format!("peak {} instead of {}", bytes(cx.costs.simulation.peak.bytes), bytes(without)))
        .with_help("add `no_grad`")
        .with_fix(cx.add_setting("add `no_grad`", "no_grad"));
        vec![d]
    }
}
