//! The `linear-dominates` lint: points out a linear layer that holds more than half of the model's
//! parameters, when it has a million or more (below that, the memory it costs does not matter).
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, percent};
use crate::diagnostics::{Code, Diagnostic, Place};
use crate::op::Op;
use crate::units::thousands;

/// ## What it does
/// Points out a linear layer that holds more than half of the model's parameters, when it
/// has a million or more (below that, the memory it costs does not matter).
///
/// ## Why is this bad?
/// Fully connected layers on large flattened inputs dominate parameter counts (VGG-16's
/// first classifier layer holds 74 % of its 138 M parameters) and with them the weights,
/// gradients and optimizer state: often for little accuracy.
///
/// ## Example
/// ```net
/// model big() {
///     input x: f32[N, 512, 7, 7]
///     return linear(flatten(x), 4096)
/// }
/// ```
///
/// ## How to fix
/// Pool before the classifier (`adaptive_avgpool2d(x, 1)`), or use a smaller hidden width.
pub struct LinearDominatesParameters;

impl Lint for LinearDominatesParameters {
    fn code(&self) -> Code {
        Code::LinearDominates
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let total = cx.graph.params().and_then(|d| d.known()).unwrap_or(0);
        let Some((node, params)) = cx
            .graph
            .nodes
            .iter()
            .filter(|n| n.op == Op::Linear)
            .filter_map(|n| n.params.known().map(|p| (n, p)))
            .max_by_key(|(_, p)| *p)
        else {
            return Vec::new();
        };
        if total == 0 || params * 2 <= total || params < 1_000_000 {
            return Vec::new();
        }
        let d = Diagnostic::new(
            Code::LinearDominates,
            format!(
                "this linear layer holds {} % of the model's parameters ({} of {})",
                percent(params, total),
                thousands(params),
                thousands(total)
            ),
            &node.origin.expr.file,
            Place::Node(node.origin.expr.at),
        )
        .with_help("pool before the classifier (`adaptive_avgpool2d(x, 1)`) or narrow the layer");
        vec![d]
    }
}
