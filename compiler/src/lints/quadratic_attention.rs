//! The `quadratic-attention` lint: points out attention that materializes its S x S score matrix
//! (`attention` without `flash=true`) at sequence lengths of 1,024 or more, with the bytes the
//! scores take.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic, Place};
use crate::op::Op;
use crate::units::bytes;

/// ## What it does
/// Points out attention that materializes its S x S score matrix (`attention` without
/// `flash=true`) at sequence lengths of 1,024 or more, with the bytes the scores take.
///
/// ## Why is this bad?
/// The scores grow with the square of the sequence: at S = 8,192 with 32 heads they take
/// 8 GiB per sample in float32. Fused kernels (FlashAttention, PyTorch's efficient SDPA)
/// never store them.
///
/// ## Example
/// ```net
/// block layer(x, d: int) {
///     return attention(x, d, 16)
/// }
/// ```
///
/// ## How to fix
/// Pass `flash=true` (use `scaled_dot_product_attention` with a fused backend).
pub struct QuadraticAttention;

impl Lint for QuadraticAttention {
    fn code(&self) -> Code {
        Code::QuadraticAttention
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for node in cx.graph.nodes.iter().filter(|n| n.op == Op::Attention) {
            let flash = matches!(node.args.values.get("flash"), Some(crate::shapes::ops::ArgValue::Bool(true)));
            let Some(x) = node.inputs.first().map(|t| cx.graph.tensor(*t)) else { continue };
            let dim = |i: usize| x.shape.get(i).and_then(|d| d.known()).unwrap_or(0);
            let heads = match node.args.values.get("heads") {
                Some(crate::shapes::ops::ArgValue::Int(h)) => h.known().unwrap_or(1),
                _ => 1,
            };
            let (n, s) = (dim(0), dim(1));
            if flash || s < 1024 || !seen.insert(node.origin.expr.clone()) {
                continue;
            }
            let scores = n * heads * s * s * 4;
            out.push(
                Diagnostic::new(
                    Code::QuadraticAttention,
                    format!("attention over {s} positions stores {} of scores per layer", bytes(scores)),
                    &node.origin.expr.file,
                    Place::Node(node.origin.expr.at),
                )
                .with_help("pass `flash=true`: a fused kernel never stores the S x S scores"),
            );
        }
        out
    }
}
