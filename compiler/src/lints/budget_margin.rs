//! The `budget-margin` lint: reports a scenario that fits its `budget` but not with the safety
//! margin (1.5 unless the scenario sets `margin`): predicted total x margin is over the budget.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, label_peak, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a scenario that fits its `budget` but not with the safety margin (1.5 unless the
/// scenario sets `margin`): predicted total x margin is over the budget.
///
/// ## Why is this bad?
/// A prediction is not a measurement: allocator fragmentation, library workspaces and
/// framework memory that no model sees make real runs need more. The articles this project
/// grew from recommend planning with a factor of 1.5.
///
/// ## Example
/// ```net
/// train fit { model resnet18()  batch 64  optimizer adam  budget 2 GiB }
/// ```
///
/// ## How to fix
/// Free some memory (smaller batch, `precision amp`, `checkpoint`) or measure the run and
/// lower `margin` if the measurement shows the prediction is tight.
pub struct BudgetMargin;

impl Lint for BudgetMargin {
    fn code(&self) -> Code {
        Code::BudgetMargin
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let Some(budget) = cx.costs.budget else { return Vec::new() };
        let total = cx.costs.total;
        let needed = total * cx.costs.margin_per_mille / 1000;
        if total > budget || needed <= budget {
            return Vec::new();
        }
        let margin = cx.costs.margin_per_mille as f64 / 1000.0;
        let d = cx
            .diagnostic(
                Code::BudgetMargin,
                format!(
                    "scenario `{}` uses {} of its {} budget ({} %), more than a safety margin of {margin} allows",
                    cx.scenario.name.text,
                    bytes(total),
                    bytes(budget),
                    percent(total, budget)
                ),
                "budget",
            )
            .with_primary_message(format!("{} with the margin", bytes(needed)))
            .with_note(format!("the peak is {}", cx.when()))
            .with_note(format!("largest costs at the peak: {}", cx.top_three()));
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
