//! The `generate-full-logits` lint: reports a `generate()` scenario (`new_tokens`) whose model
//! computes the logits of every prompt position in its prefill, where `generate()` asks for the
//! last one only (`logits_to_keep=1`).
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::costs::product;
use crate::costs::simulate::tensor_dtypes;
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports an `infer` scenario with `new_tokens` (transformers' `generate()`) whose model
/// returns logits for every position of the prompt: a `[N, S, vocab]` output in the prefill.
///
/// ## Why is this bad?
/// `generate()` calls a model that takes `logits_to_keep` with `logits_to_keep=1`: the head
/// runs over the last position only, and the prefill makes `[N, 1, vocab]` logits. A model
/// called without it in the scenario is costed with the whole prompt's logits, which over a
/// large vocabulary are often the prefill's peak: the figure is not what `generate()` needs.
///
/// ## Example
/// ```net
/// use std.models.llama
/// infer chat { model llama(vocab=32000, d=512, layers=2, heads=8, kv_heads=2, ffn=1024)  batch 8  seq 1024  new_tokens 64  precision bf16  no_grad  eval  cache dynamic }
/// ```
///
/// ## How to fix
/// Call the model as `generate()` does: `model llama(..., logits_to_keep=1)`.
pub struct GenerateFullLogits;

impl Lint for GenerateFullLogits {
    fn code(&self) -> Code {
        Code::GenerateFullLogits
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let run = &cx.setup.run;
        if !run.generates() {
            return Vec::new();
        }
        // The scenario's own graph is generate()'s prefill.
        let Some(&output) = cx.graph.outputs.first() else { return Vec::new() };
        let logits = cx.graph.tensor(output);
        let positions = match &logits.shape[..] {
            [_, positions, _] => positions.known().unwrap_or(0),
            _ => 0,
        };
        if positions <= 1 {
            return Vec::new();
        }
        let elements: Vec<i128> = logits.shape.iter().map(|d| d.known().unwrap_or(0)).collect();
        // In the scenario's precision (a bf16 model's logits are bf16).
        let dtype = tensor_dtypes(cx.graph, run.precision)[output.0 as usize];
        let whole = product(&[product(&elements), dtype.size()]);
        let d = cx
            .diagnostic(
                Code::GenerateFullLogits,
                format!(
                    "`generate()` keeps the last position's logits, but this model's prefill computes all {positions}"
                ),
                "model",
            )
            .with_primary_message(format!("logits of {} in the prefill", bytes(whole)))
            .with_help("call the model as generate() does: `logits_to_keep=1`");
        vec![d]
    }
}
