//! The `full-fine-tuning-over-budget` lint: reports a training scenario that updates every
//! parameter and does not fit its budget (or device) although the weights alone do: the
//! gradients and optimizer state of full fine-tuning are what does not fit, which adapters over
//! a frozen base do not keep.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, label_peak, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::{bytes, thousands};

/// ## What it does
/// Reports a `train` scenario in which every parameter is trained, whose memory is over its
/// budget (or, without one, its device), while the weights, buffers and the device's runtime
/// fit and the rest without the gradients and optimizer state would too: full fine-tuning's
/// training state is what does not fit.
///
/// ## Why is this bad?
/// Full fine-tuning keeps a gradient and the optimizer's state for every parameter: with AdamW
/// in bfloat16, three more copies of the weights (four at the step, with its temporary), and
/// sixteen bytes a parameter under autocast. Adapters over a frozen base (LoRA, QLoRA) keep
/// them only for the adapters, a fraction of a percent of the parameters, so a model whose
/// weights fit can be fine-tuned on a card where full fine-tuning cannot.
///
/// ## Example
/// ```net
/// use std.models.llama
/// train full { model llama(vocab=32000, d=1024, layers=8, heads=16, kv_heads=4, ffn=2816)  batch 1  seq 512  precision bf16  optimizer adamw  loss causal_lm  budget 1 GiB }
/// ```
///
/// ## How to fix
/// Train adapters over a frozen base: the zoo's language models take peft's LoRA as arguments
/// (`lora_r=16`, `lora_targets`) and bitsandbytes' 4-bit weights for QLoRA (`quant="nf4"`,
/// `double_quant=true`); in a model of your own, wrap the base's calls in `frozen(...)` and
/// add `lora_linear` where the adapters go. Or shard the training state (`zero`, `fsdp`).
pub struct FullFineTuningOverBudget;

impl Lint for FullFineTuningOverBudget {
    fn code(&self) -> Code {
        Code::FullFineTuningOverBudget
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let run = &cx.setup.run;
        let nodes = &cx.graph.nodes;
        let trains_everything = nodes.iter().any(|n| !n.result.weights.is_empty())
            && nodes.iter().all(|n| n.result.weights.is_empty() || n.trains_weights());
        // Sharded state is another remedy already taken.
        if !run.training || !trains_everything || run.zero > 0 || run.fsdp {
            return Vec::new();
        }
        let Some((limit, what, key)) = cx.limit() else { return Vec::new() };
        let total = cx.costs.total;
        let b = &cx.costs.simulation.peak.breakdown;
        let state = b.gradients.saturating_add(b.optimizer_ledger());
        let base = b.parameters.saturating_add(b.buffers).saturating_add(cx.costs.runtime);
        // The training state is what does not fit: without it the scenario would (not its
        // activations, which adapters keep too).
        if total <= limit || base >= limit || state == 0 || total.saturating_sub(state) > limit {
            return Vec::new();
        }
        let params: i128 = nodes.iter().map(|n| n.params.known().unwrap_or(0)).sum();
        let d = cx
            .diagnostic(
                Code::FullFineTuningOverBudget,
                format!(
                    "full fine-tuning of all {} parameters needs {}, more than the {} of {what}; the weights alone fit",
                    thousands(params),
                    bytes(total),
                    bytes(limit)
                ),
                key,
            )
            .with_primary_message(format!("{} here", bytes(limit)))
            .with_note(format!(
                "the peak is {}: the gradients and optimizer state are {} of it ({} %), the weights, buffers and runtime {}",
                cx.when(),
                bytes(state),
                percent(state, cx.costs.simulation.peak.bytes),
                bytes(base)
            ))
            .with_help(
                "train adapters over a frozen base: `lora_r=16` on the zoo's language models (peft's LoRA; \
                 `quant=\"nf4\"` for QLoRA), or `frozen(...)` and `lora_linear` in your own",
            );
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
