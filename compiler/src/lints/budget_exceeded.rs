//! The `budget-exceeded` lint: reports a scenario whose device memory (the allocator's peak plus
//! the runtime overhead) is larger than its `budget`.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, label_peak};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a scenario whose device memory (the allocator's peak plus the runtime overhead)
/// is larger than its `budget`.
///
/// ## Why is this bad?
/// The run will fail with an out-of-memory error, at the moment and op named in the message.
///
/// ## Example
/// ```net
/// infer serve { model resnet50()  batch 512  no_grad  eval  device t4  budget 4 GiB }
/// ```
///
/// ## How to fix
/// Lower the batch size, use a lower precision (`precision amp` or `bf16`), checkpoint
/// activations in training, shard over more devices, or raise the budget if the device has
/// the room. The message names the three largest costs at the peak.
pub struct BudgetExceeded;

impl Lint for BudgetExceeded {
    fn code(&self) -> Code {
        Code::BudgetExceeded
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let Some(budget) = cx.costs.budget else { return Vec::new() };
        let total = cx.costs.total;
        if total <= budget {
            return Vec::new();
        }
        let d = cx
            .diagnostic(
                Code::BudgetExceeded,
                format!(
                    "scenario `{}` needs {} but its budget is {} (over by {})",
                    cx.scenario.name.text,
                    bytes(total),
                    bytes(budget),
                    bytes(total - budget)
                ),
                "budget",
            )
            .with_primary_message(format!("{} needed", bytes(total)))
            .with_note(format!("the peak is {}", cx.when()))
            .with_note(format!("largest costs at the peak: {}", cx.top_three()))
            .with_help(cx.remedies(false));
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
