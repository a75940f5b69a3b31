//! The `host-over-budget` lint: reports a dataloader whose host memory (workers x prefetch x batch
//! x decoded sample, doubled when pinned) is over the scenario's `host_budget`.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a dataloader whose host memory (workers x prefetch x batch x decoded sample,
/// doubled when pinned) is over the scenario's `host_budget`.
///
/// ## Why is this bad?
/// Every worker keeps its prefetched batches decoded in RAM: a 4K RGBA image decodes to
/// about 32 MB, so a batch of 64 takes 2 GB and eight workers 16 GB, before pinning. The
/// machine swaps or the kernel kills the job.
///
/// ## Example
/// ```net
/// train fit { model resnet50()  batch 64  dataloader(workers=8, prefetch=2, sample=32 MB, pin_memory=true)  host_budget 16 GB }
/// ```
///
/// ## How to fix
/// Fewer workers or a smaller prefetch factor, decode at a lower resolution, or raise
/// the host budget.
pub struct HostOverBudget;

impl Lint for HostOverBudget {
    fn code(&self) -> Code {
        Code::HostOverBudget
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let Some(budget) = cx.costs.host_budget else { return Vec::new() };
        if cx.costs.host <= budget {
            return Vec::new();
        }
        let d = cx
            .diagnostic(
                Code::HostOverBudget,
                format!(
                    "the dataloader holds {} of host memory, over the host budget of {}",
                    bytes(cx.costs.host),
                    bytes(budget)
                ),
                "dataloader",
            )
            .with_primary_message(format!("{} of decoded samples", bytes(cx.costs.host)))
            .with_help("use fewer workers or a smaller prefetch, or decode smaller samples");
        vec![d]
    }
}
