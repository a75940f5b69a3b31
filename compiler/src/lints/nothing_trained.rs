//! The `nothing-trained` lint: reports a training scenario in which no parameter is trained.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::thousands;

/// ## What it does
/// Reports a `train` scenario whose model has parameters of which none is trained: every one
/// frozen (`frozen(...)`), or quantized. Most often a LoRA model whose `lora_targets` name no
/// projection of it (`out_proj` in a model whose attention output is `o_proj`), so no adapter
/// was made.
///
/// ## Why is this bad?
/// The run it describes cannot happen: PyTorch's optimizers refuse an empty parameter list
/// (`ValueError: optimizer got an empty parameter list`), and peft refuses target modules
/// that match nothing (`ValueError: Target modules {...} not found in the base model`). Its
/// figures, without gradients or optimizer state, look like a cheap fine-tuning run that is
/// not the one meant.
///
/// ## Example
/// ```net
/// use std.models.llama
/// train lora { model llama(vocab=32000, d=512, layers=2, heads=8, kv_heads=2, ffn=1024, lora_r=16, lora_targets="query,value")  batch 1  seq 512  precision bf16  optimizer adamw  loss causal_lm }
/// ```
///
/// ## How to fix
/// Name the model's projections in `lora_targets` (the zoo's Llama family: `q_proj`, `k_proj`,
/// `v_proj`, `o_proj`, `gate_proj`, `up_proj`, `down_proj`; `all-linear` for every one), or
/// leave a part of a model of your own outside `frozen(...)`.
pub struct NothingTrained;

impl Lint for NothingTrained {
    fn code(&self) -> Code {
        Code::NothingTrained
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let nodes = &cx.graph.nodes;
        let has_weights = nodes.iter().any(|n| !n.result.weights.is_empty());
        if !cx.setup.run.training || !has_weights || nodes.iter().any(|n| n.trains_weights()) {
            return Vec::new();
        }
        let params = cx.graph.params().and_then(|p| p.known()).unwrap_or(0);
        let d = cx
            .diagnostic(
                Code::NothingTrained,
                format!("this training scenario trains no parameter: all {} are frozen", thousands(params)),
                "model",
            )
            .with_primary_message("no parameter of this model requires grad")
            .with_help(
                "name projections the model has in `lora_targets` (peft raises `Target modules ... not found`), or train a part outside `frozen(...)`; PyTorch's optimizers refuse an empty parameter list",
            );
        vec![d]
    }
}
