//! The `missing-eval` lint: reports an `infer` scenario without `eval` when its model has BatchNorm
//! or Dropout.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::op::Family;

/// ## What it does
/// Reports an `infer` scenario without `eval` when its model has BatchNorm or Dropout.
///
/// ## Why is this bad?
/// In training mode BatchNorm normalizes with the batch's statistics (and updates its running
/// statistics), and Dropout zeroes activations at random: the model's outputs are not what
/// it was trained to give, and Dropout's masks cost memory.
///
/// ## Example
/// ```net
/// infer serve { model vgg16()  batch 1  no_grad }
/// ```
///
/// ## How to fix
/// Add `eval` (and call `model.eval()` before inference).
pub struct MissingEval;

impl Lint for MissingEval {
    fn code(&self) -> Code {
        Code::MissingEval
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if cx.setup.run.training || cx.setup.run.eval {
            return Vec::new();
        }
        let mut kinds: Vec<&str> = Vec::new();
        for node in &cx.graph.nodes {
            let kind = match node.op.family() {
                Family::BatchNorm => "BatchNorm",
                Family::Dropout => "Dropout",
                _ => continue,
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        if kinds.is_empty() {
            return Vec::new();
        }
        let d = Diagnostic::new(
            Code::MissingEval,
            format!(
                "inference scenario `{}` runs its model in training mode, but the model has {}",
                cx.scenario.name.text,
                kinds.join(" and ")
            ),
            cx.file,
            cx.at(cx.scenario.name.id),
        )
        .with_primary_message("no `eval`")
        .with_help("add `eval`: BatchNorm then uses its running statistics and Dropout is off")
        .with_fix(cx.add_setting("add `eval`", "eval"));
        vec![d]
    }
}
