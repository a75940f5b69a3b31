//! The `batchnorm-batch-one` lint: reports a `train` scenario whose model has BatchNorm and whose
//! micro-batch (`batch` divided by `grad_accum`) is one sample.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic, Place};
use crate::op::Family;

/// ## What it does
/// Reports a `train` scenario whose model has BatchNorm and whose micro-batch (`batch`
/// divided by `grad_accum`) is one sample.
///
/// ## Why is this bad?
/// BatchNorm normalizes each channel with the statistics of the current batch. With one
/// sample the variance is computed over one image (or is undefined for `[N, C]` inputs, where
/// PyTorch raises an error), and the running statistics drift: the model trains badly.
///
/// ## Example
/// ```net
/// train fit { model resnet50()  batch 8  grad_accum 8  optimizer sgd }
/// ```
///
/// ## How to fix
/// Use micro-batches of several samples, or GroupNorm / LayerNorm instead of BatchNorm.
pub struct BatchNormBatchOne;

impl Lint for BatchNormBatchOne {
    fn code(&self) -> Code {
        Code::BatchNormBatchOne
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if !cx.setup.run.training || cx.setup.dims.get("N") != Some(&1) {
            return Vec::new();
        }
        let Some(bn) = cx.graph.nodes.iter().find(|n| n.op.family() == Family::BatchNorm) else { return Vec::new() };
        let key = if cx.setup.run.grad_accum > 1 { "grad_accum" } else { "batch" };
        let d = cx
            .diagnostic(
                Code::BatchNormBatchOne,
                format!("scenario `{}` trains BatchNorm on micro-batches of one sample", cx.scenario.name.text),
                key,
            )
            .with_primary_message("one sample per micro-batch")
            .with_label(&bn.origin.expr.file, Place::Node(bn.origin.expr.at), "BatchNorm here")
            .with_help("use micro-batches of several samples, or GroupNorm/LayerNorm");
        vec![d]
    }
}
