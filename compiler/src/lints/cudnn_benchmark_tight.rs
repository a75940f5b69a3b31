//! The `cudnn-benchmark-tight` lint: reports `cudnn_benchmark` when its first-iteration spike
//! pushes the scenario over its budget, or into the safety margin, where it would fit without it.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports `cudnn_benchmark` when its first-iteration spike pushes the scenario over its
/// budget, or into the safety margin, where it would fit without it.
///
/// ## Why is this bad?
/// With `torch.backends.cudnn.benchmark = True`, cuDNN times every convolution algorithm on
/// the first iteration, allocating each one's workspace: the first step needs more memory
/// than the steady state, and a run that fits later fails at its very start.
///
/// ## Example
/// ```net
/// train fit { model resnet50()  batch 64  device t4  cudnn_benchmark  budget 12 GiB }
/// ```
///
/// ## How to fix
/// Drop `cudnn_benchmark` under a tight budget, or leave room for the spike.
pub struct CudnnBenchmarkTight;

impl Lint for CudnnBenchmarkTight {
    fn code(&self) -> Code {
        Code::CudnnBenchmarkTight
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let Some(budget) = cx.costs.budget else { return Vec::new() };
        if !cx.setup.run.cudnn_benchmark {
            return Vec::new();
        }
        let margin = cx.costs.margin_per_mille;
        let total = cx.costs.total;
        let without = cx.simulate_with(|run| run.cudnn_benchmark = false);
        let without_total = without.rounded_peak.max(without.peak.bytes) + cx.costs.runtime;
        let tight = |t: i128| t * margin / 1000 > budget;
        if !tight(total) || tight(without_total) {
            return Vec::new();
        }
        let d = cx
            .diagnostic(
                Code::CudnnBenchmarkTight,
                format!(
                    "`cudnn_benchmark`'s first iteration needs {} where the run otherwise needs {}",
                    bytes(total),
                    bytes(without_total)
                ),
                "cudnn_benchmark",
            )
            .with_primary_message("first-iteration spike")
            .with_help("drop `cudnn_benchmark`, or leave room for the spike in the budget");
        vec![d]
    }
}
