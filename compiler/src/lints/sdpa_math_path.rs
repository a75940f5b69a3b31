//! The `sdpa-math-path` lint: reports `sdpa` calls that PyTorch runs on its math path, which
//! stores the attention weights, because no fused kernel's constraints hold, when those weights
//! are a twentieth of the scenario's peak or more; with each fused kernel's reason.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::costs::autograd::sdpa_call;
use crate::costs::config;
use crate::costs::devices::{Device, DeviceKind};
use crate::costs::sdpa::{KernelDtype, SdpaBackend, SdpaCall, rejection, select};
use crate::diagnostics::{Code, Diagnostic, Place};
use crate::op::Op;
use crate::shapes::ops::ArgValue;
use crate::units::bytes;

/// ## What it does
/// Reports the `sdpa` calls of a scenario that PyTorch runs on its math path
/// (`_scaled_dot_product_attention_math`) although no kernel was forced, because none of the
/// fused kernels' constraints holds (PyTorch 2.15's `sdp_utils` checks, as netc picks the
/// kernel): query heads that differ from the key heads without `enable_gqa`, float32 inputs,
/// an explicit mask, head sizes a kernel does not take. It reports them when the attention
/// weights they store, `[N, H, Tq, Tk]` per call (kept for backward by every call in training
/// without checkpointing), are at least a twentieth of the peak, and says what rules out each
/// fused kernel.
///
/// ## Why is this bad?
/// The fused kernels keep a log-sum-exp per query row; the math path keeps the whole
/// `Tq x Tk` attention weights, and in training one copy per layer. Falcon-7B's multi-query
/// attention, whose one key head is broadcast to 71 query heads, stores them in every layer
/// under LoRA. PyTorch falls back silently: only the memory shows it.
///
/// ## Example
/// ```net
/// model probe() {
///     input q: bf16[N, 32, S, 64]
///     input kv: bf16[N, 1, S, 64]
///     return sdpa(q, kv, kv, causal=true)
/// }
/// infer serve { model probe()  batch 4  seq 4096  precision bf16  no_grad  device a100_80gb }
/// ```
///
/// ## How to fix
/// The help names a change that lets a fused kernel run the call, checked against the same
/// constraints, and the kernel PyTorch would then pick: `enable_gqa=true` or the key and value
/// heads expanded to the query heads, or the other half precision (float16 where a GPU older
/// than sm80 has no bfloat16 kernel). Where the model cannot change, netc's figure is the math
/// path's, as PyTorch runs it.
pub struct SdpaMathPath;

/// The share of the peak, in percent, the math path's attention weights must reach.
const REPORTED_SHARE: i128 = 5;

impl Lint for SdpaMathPath {
    fn code(&self) -> Code {
        Code::SdpaMathPath
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let (config, device) = config(&cx.setup.run);
        if !matches!(device.kind, DeviceKind::Cuda | DeviceKind::Cpu) {
            // MPS has no fused kernel netc models: the math path is all it runs.
            return Vec::new();
        }
        // The calls on the math path: the first one's call and site, and how many there are.
        let mut first: Option<(SdpaCall, &crate::graph::Node, i128)> = None;
        let mut calls = 0i128;
        for node in cx.graph.nodes.iter().filter(|n| n.op == Op::Sdpa) {
            let forced = matches!(node.args.values.get("backend"), Some(ArgValue::Str(name)) if name != "auto");
            let Some(call) = sdpa_call(node, cx.graph, &config.mode) else { continue };
            if forced || select(device, &call, None) != Some(SdpaBackend::Math) {
                continue;
            }
            let (tq, tk) = call.lengths;
            let rows = match call.head_dims.0 {
                0 => 0,
                dq => {
                    node.inputs.first().and_then(|&q| cx.graph.tensor(q).numel()).and_then(|n| n.known()).unwrap_or(0)
                        / dq
                }
            };
            // Saturating: a program's sizes can be as large as it writes them.
            let weights = rows.saturating_mul(tk).saturating_mul(call.dtype.size());
            if tq > 0 && weights > 0 {
                calls += 1;
                first.get_or_insert((call, node, weights));
            }
        }
        let Some((call, node, weights)) = first else { return Vec::new() };
        // What is live at once, at least: in training without checkpointing every call keeps
        // its weights to the backward; with it a segment's recomputation holds its own calls'
        // (one layer's, at least); without a backward one call's weights are live at a time.
        let run = &cx.setup.run;
        let stored = if run.training && !run.checkpoint { weights.saturating_mul(calls) } else { weights };
        let peak = cx.costs.simulation.peak.bytes;
        if stored.saturating_mul(100) < peak.saturating_mul(REPORTED_SHARE) {
            return Vec::new();
        }
        // Each reason once, with the kernels it rules out ("flash and cudnn: float32 inputs").
        let mut reasons: Vec<(Vec<&str>, String)> = Vec::new();
        let fused = [SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Cudnn];
        for backend in fused.into_iter().filter(|&b| device.kind == DeviceKind::Cuda || b == SdpaBackend::Flash) {
            let Some(why) = rejection(device, &call, backend) else { continue };
            match reasons.iter_mut().find(|(_, r)| *r == why) {
                Some((kernels, _)) => kernels.push(backend.name()),
                None => reasons.push((vec![backend.name()], why)),
            }
        }
        let reasons: Vec<String> =
            reasons.iter().map(|(kernels, why)| format!("{}: {why}", and_list(kernels))).collect();
        let (tq, tk) = call.lengths;
        let each = if calls > 1 { format!("{calls} calls, each storing") } else { "one call, storing".to_string() };
        let message = format!(
            "scaled_dot_product_attention runs its math path on {} ({each} {} of {} attention weights, {} x {})",
            device.name(),
            bytes(weights),
            call.dtype.name(),
            tq,
            tk,
        );
        let help = match fused_alternative(device, &call) {
            Some((change, backend)) => format!(
                "{change}: PyTorch then runs the {} kernel, which stores a log-sum-exp per query row instead",
                backend.name()
            ),
            None => "no change of heads or precision lets a fused kernel run this call here".to_string(),
        };
        let d = cx
            .diagnostic(Code::SdpaMathPath, message, "device")
            .with_label(&node.origin.expr.file, Place::Node(node.origin.expr.at), "the math path runs here")
            .with_note(format!("no fused kernel takes the call: {}", reasons.join("; ")))
            .with_help(help);
        vec![d]
    }
}

/// A change to the call that lets a fused kernel run it, in words, with the kernel PyTorch
/// would then pick: grouped heads (`enable_gqa`), or the key and value heads expanded to the
/// query heads, or the other half precision.
fn fused_alternative(device: &Device, call: &SdpaCall) -> Option<(String, SdpaBackend)> {
    let fused = |c: &SdpaCall| select(device, c, None).filter(|&b| b != SdpaBackend::Math);
    let mut changes: Vec<(String, SdpaCall)> = Vec::new();
    if call.broadcast_heads > 1 {
        let grouped = SdpaCall { head_groups: call.broadcast_heads, broadcast_heads: 1, ..*call };
        changes.push(("pass `enable_gqa=true`".to_string(), grouped));
        let expanded = SdpaCall { head_groups: 1, broadcast_heads: 1, ..*call };
        changes.push(("expand the key and value heads to the query heads (`repeat_kv`)".to_string(), expanded));
    }
    for (dtype, setting) in [(KernelDtype::BFloat16, "precision bf16"), (KernelDtype::Half, "precision amp")] {
        if dtype != call.dtype {
            changes.push((format!("run in {} (`{setting}`)", dtype.name()), SdpaCall { dtype, ..*call }));
        }
    }
    changes.into_iter().find_map(|(change, c)| fused(&c).map(|b| (change, b)))
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
