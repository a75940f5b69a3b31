//! The `gptq-weights-kept` lint: reports a training scenario whose GPTQ layers save their
//! weights dequantized for the backward.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, kept_worth_reporting, label_peak, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::units::bytes;

/// ## What it does
/// Reports a `train` scenario whose model has GPTQ layers (`linear_int4`, the zoo's
/// `quant="gptq"`) with inputs that require grad outside checkpoint segments, when the weights
/// they keep are 5 % of the peak or more. It gives the peak with `checkpoint`.
///
/// ## Why is this bad?
/// gptqmodel trains a GPTQ layer through `TorchLinear`'s forward (what `TritonV2Linear`, the
/// CUDA kernel `backend="auto_trainable"` selects, runs in training): it dequantizes the whole
/// weight, casts it to the input's dtype and multiplies, and `torch.matmul` saves that copy for
/// the input's gradient. With LoRA adapters every projection whose input requires grad keeps
/// a half-precision copy of its weight until backward: the model's weights four times over
/// what the 4-bit checkpoint stores, whatever the batch (measured:
/// tests/fixtures/calibration/measure_int4_train.py). AWQ's trainable kernel and
/// bitsandbytes' 4-bit layers dequantize again in backward and keep nothing.
///
/// ## Example
/// ```net
/// use std.models.llama
/// train lora_gptq { model llama(vocab=32000, d=2048, layers=8, heads=32, kv_heads=8, ffn=5632, lora_r=16, lora_alpha=32, lora_targets="q_proj,k_proj,v_proj,o_proj", quant="gptq")  batch 1  seq 512  precision bf16  optimizer adamw  loss causal_lm }
/// ```
///
/// ## How to fix
/// Add `checkpoint` (each decoder layer's copies are then made again in its recomputation
/// and freed with it), or train over AWQ (`quant="awq"`) or NF4 (`quant="nf4"`) weights; or
/// accept the figure, which netc already includes.
pub struct GptqWeightsKept;

impl Lint for GptqWeightsKept {
    fn code(&self) -> Code {
        Code::GptqWeightsKept
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let kept = cx.costs.simulation.dequantized_weights_kept;
        let peak = cx.costs.simulation.peak.bytes;
        if !kept_worth_reporting(kept, peak) {
            return Vec::new();
        }
        let mut d = cx
            .diagnostic(
                Code::GptqWeightsKept,
                format!(
                    "the GPTQ layers save their weights dequantized for the backward: {} ({} % of the peak)",
                    bytes(kept.bytes),
                    percent(kept.bytes, peak)
                ),
                "model",
            )
            .with_primary_message(format!("{} dequantized weights kept by `torch.matmul`", kept.tensors));
        if !cx.setup.run.checkpoint {
            let with = cx.simulate_with(|run| run.checkpoint = true).peak.bytes;
            d = d.with_help(format!(
                "with `checkpoint` the peak is {} (each layer's copies are made again in its recomputation); AWQ (`quant=\"awq\"`) and NF4 (`quant=\"nf4\"`) layers dequantize again in backward and keep none",
                bytes(with)
            ))
            .with_fix(cx.add_setting("add `checkpoint`", "checkpoint"));
        } else {
            d = d.with_help(
                "AWQ (`quant=\"awq\"`) and NF4 (`quant=\"nf4\"`) layers dequantize again in backward and keep none",
            );
        }
        vec![label_peak(d, cx, "the peak happens here")]
    }
}
