//! The `budget-over-device` lint: reports a scenario whose `budget` is larger than the memory
//! of its `device`.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a scenario whose `budget` is larger than the memory its `device` has (the
/// capacity of the device preset, spec/language.md).
///
/// ## Why is this bad?
/// A budget is a promise that the run fits; one larger than the device cannot be kept: the
/// run may pass the budget check and still fail with an out-of-memory error. Such a scenario
/// is checked against the device as well (`device-memory-exceeded`), but the budget is
/// probably a typo or meant for another device.
///
/// ## Example
/// ```net
/// use std.models.resnet
/// infer serve { model resnet50()  batch 8  no_grad  eval  device t4  budget 32 GiB }
/// ```
///
/// ## How to fix
/// Lower the budget to what the device holds (or what the run may use of it), or name the
/// device the budget is meant for.
pub struct BudgetOverDevice;

impl Lint for BudgetOverDevice {
    fn code(&self) -> Code {
        Code::BudgetOverDevice
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let (Some(budget), Some(capacity)) = (cx.costs.budget, cx.costs.device.capacity) else { return Vec::new() };
        if budget <= capacity {
            return Vec::new();
        }
        let device = cx.costs.device.name();
        let d = cx
            .diagnostic(
                Code::BudgetOverDevice,
                format!(
                    "the budget of scenario `{}`, {}, is more than device `{device}` holds ({})",
                    cx.scenario.name.text,
                    bytes(budget),
                    bytes(capacity)
                ),
                "budget",
            )
            .with_primary_message(format!("more than the {} of `{device}`", bytes(capacity)))
            .with_help(format!("lower the budget to at most {}, or name the device it is meant for", bytes(capacity)));
        vec![d]
    }
}
