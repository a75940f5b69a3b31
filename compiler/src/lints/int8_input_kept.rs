//! The `int8-input-kept` lint: reports a checkpointed training scenario whose LLM.int8()
//! layers keep their inputs to the backward anyway, on their autograd `ctx`.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, kept_worth_reporting, label_peak, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a `train` scenario with `checkpoint` whose model has LLM.int8() layers
/// (`linear8bit`, the zoo's `quant="int8"`) with inputs that require grad, when those inputs
/// are 5 % of the peak or more.
///
/// ## Why is this bad?
/// bitsandbytes' 8-bit matmul keeps its input as an attribute of its autograd `ctx`, not
/// through `save_for_backward`, whenever the input requires grad (LoRA adapters upstream,
/// `enable_input_require_grads()`): activation checkpointing's hooks never see it, so every
/// 8-bit projection's input stays from the forward pass to the end of backward, whatever
/// `checkpoint` frees around it. On a Llama with LoRA that is a layer input for q, k and v, one
/// for o, one for gate and up, and the feed-forward width for down: longer sequences grow
/// faster than with bfloat16 weights (measured: tests/fixtures/calibration/measure_int8.py).
///
/// ## Example
/// ```net
/// use std.models.llama
/// train lora8 { model llama(vocab=32000, d=1024, layers=4, heads=16, kv_heads=4, ffn=2816, lora_r=16, lora_alpha=32, lora_targets="q_proj,k_proj,v_proj,o_proj", quant="int8")  batch 4  seq 2048  precision bf16  optimizer adamw  loss causal_lm  checkpoint }
/// ```
///
/// ## How to fix
/// Checkpoint with torch's reentrant variant (`reentrant`, `use_reentrant=True`, as peft's
/// `prepare_model_for_kbit_training` does by default): a reentrant segment's forward pass runs
/// under `no_grad` and keeps nothing (measured: measure_int8.py `--reentrant`, 1.5 GB less at
/// the LLM set's `llama_small` (4, 2048)); the lint offers it as a fix and gives the peak with
/// it. Or use 4-bit weights (`quant="nf4"`, QLoRA: bitsandbytes' 4-bit matmul keeps no input),
/// or bfloat16 ones if they fit; or accept the figure, which netc already includes.
pub struct Int8InputKept;

impl Lint for Int8InputKept {
    fn code(&self) -> Code {
        Code::Int8InputKept
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        // The simulation knows what each function kept on its `ctx` inside a segment.
        let kept = cx.costs.simulation.kept_past_checkpoint;
        let peak = cx.costs.simulation.peak.bytes;
        if !kept_worth_reporting(kept, peak) {
            return Vec::new();
        }
        let reentrant = cx.simulate_with(|run| run.reentrant = true).peak.bytes;
        let d = cx
            .diagnostic(
                Code::Int8InputKept,
                format!(
                    "checkpointing does not free the inputs of the 8-bit layers: {} of them stay to the backward ({} % of the peak)",
                    bytes(kept.bytes),
                    percent(kept.bytes, peak)
                ),
                "checkpoint",
            )
            .with_primary_message(format!("{} layer inputs kept by bitsandbytes' `ctx`", kept.tensors))
            .with_help(format!(
                "with `reentrant` (`use_reentrant=True`: a segment's forward runs under `no_grad`) the peak is {}; 4-bit weights (`quant=\"nf4\"`) keep no input; bitsandbytes' 8-bit matmul keeps its input on `ctx`, where non-reentrant checkpointing cannot drop it",
                bytes(reentrant)
            ))
            .with_fix(cx.add_setting("add `reentrant`", "reentrant"));
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
