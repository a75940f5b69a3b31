//! The `device-memory-exceeded` lint: reports a scenario whose device memory (the allocator's
//! peak plus the runtime overhead) is more than its device holds, when no `budget` at or
//! under the device's capacity already checks it.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, label_peak};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a scenario whose device memory (the allocator's peak plus the runtime overhead:
/// the CUDA context and framework) is more than its `device` holds. The device is a budget
/// of its own: a scenario without `budget` is checked against it, and so is one whose
/// `budget` is larger than the device (`budget-over-device`). The tensors may use the
/// device's capacity less the runtime.
///
/// ## Why is this bad?
/// The run will fail with an out-of-memory error on that device, at the moment and op named
/// in the message, whatever the budget says.
///
/// ## Example
/// ```net
/// use std.models.resnet
/// train big { model resnet50()  batch 512  optimizer adam  device rtx4090 }
/// ```
///
/// ## How to fix
/// Lower the batch size, use a lower precision (`precision amp` or `bf16`), checkpoint
/// activations in training, accumulate gradients over micro-batches, shard over more devices,
/// or choose a device with more memory. The message names the three largest costs at the
/// peak.
pub struct DeviceMemoryExceeded;

impl Lint for DeviceMemoryExceeded {
    fn code(&self) -> Code {
        Code::DeviceMemoryExceeded
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let Some(capacity) = cx.costs.device.capacity else { return Vec::new() };
        // A budget within the device is the stricter check (`budget-exceeded`).
        if cx.costs.budget.is_some_and(|budget| budget <= capacity) {
            return Vec::new();
        }
        let total = cx.costs.total;
        if total <= capacity {
            return Vec::new();
        }
        let device = cx.costs.device.name();
        let usable = (capacity - cx.costs.runtime).max(0);
        let d = cx
            .diagnostic(
                Code::DeviceMemoryExceeded,
                format!(
                    "scenario `{}` needs {} but device `{device}` holds {} (over by {})",
                    cx.scenario.name.text,
                    bytes(total),
                    bytes(capacity),
                    bytes(total - capacity)
                ),
                "device",
            )
            .with_primary_message(format!("{} needed on a {} device", bytes(total), bytes(capacity)))
            .with_note(format!(
                "{} for tensors: {} less the runtime of {}; the tensors need {}",
                bytes(usable),
                bytes(capacity),
                bytes(cx.costs.runtime),
                bytes(cx.costs.reserved)
            ))
            .with_note(format!("the peak is {}", cx.when()))
            .with_note(format!("largest costs at the peak: {}", cx.top_three()))
            .with_help(cx.remedies(true));
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
