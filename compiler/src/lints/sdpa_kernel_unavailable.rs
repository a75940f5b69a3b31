//! The `sdpa-kernel-unavailable` lint: reports an `sdpa` whose `backend` argument forces an
//! attention kernel that cannot run in the scenario (its device, its precision or the head
//! sizes rule it out), where PyTorch raises "No available kernel" at the first call.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext};
use crate::costs::autograd::sdpa_call;
use crate::costs::config;
use crate::costs::sdpa::{SdpaBackend, rejection, select};
use crate::diagnostics::{Code, Diagnostic, Place};
use crate::op::Op;
use crate::shapes::ops::ArgValue;

/// ## What it does
/// Reports an `sdpa` whose `backend` argument (PyTorch's `sdpa_kernel` context) forces an
/// attention kernel that cannot run in the scenario: FlashAttention and cuDNN need a CUDA
/// device and float16 or bfloat16, the efficient kernel needs CUDA and head sizes a multiple
/// of its alignment, and so on (PyTorch 2.15's `sdp_utils` checks).
///
/// ## Why is this bad?
/// PyTorch does not fall back when a kernel is forced: the first call raises
/// `RuntimeError: No available kernel. Aborting execution.` netc costs the call as the math
/// path, the only kernel that always runs, so the scenario's numbers are not what any run
/// would give.
///
/// ## Example
/// ```net
/// model probe() {
///     input q: f32[N, 8, 1024, 64]
///     return sdpa(q, q, q, backend="flash")
/// }
/// infer serve { model probe()  batch 1  no_grad  device a100_80gb }
/// ```
///
/// ## How to fix
/// Run the scenario in a precision the kernel takes (`precision bf16`), or let PyTorch choose
/// (`backend="auto"`, the default), or force one of the kernels the message lists.
pub struct SdpaKernelUnavailable;

impl Lint for SdpaKernelUnavailable {
    fn code(&self) -> Code {
        Code::SdpaKernelUnavailable
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let (config, device) = config(&cx.setup.run);
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for node in cx.graph.nodes.iter().filter(|n| n.op == Op::Sdpa) {
            let Some(ArgValue::Str(name)) = node.args.values.get("backend") else { continue };
            let Some(forced) = SdpaBackend::from_name(name) else { continue };
            let Some(call) = sdpa_call(node, cx.graph, &config.mode) else { continue };
            if select(device, &call, Some(forced)).is_some() || !seen.insert(node.origin.expr.clone()) {
                continue;
            }
            let usable: Vec<String> = SdpaBackend::ALL
                .into_iter()
                .filter(|b| select(device, &call, Some(*b)).is_some())
                .map(|b| format!("\"{}\"", b.name()))
                .collect();
            let why = rejection(device, &call, forced).unwrap_or_default();
            out.push(
                Diagnostic::new(
                    Code::SdpaKernelUnavailable,
                    format!(
                        "the {} attention kernel cannot run this call on {} ({why}): PyTorch raises \"No available kernel\"",
                        forced.name(),
                        device.name(),
                    ),
                    &node.origin.expr.file,
                    Place::Node(node.origin.expr.at),
                )
                .with_help(format!(
                    "pass `backend=\"auto\"` or a kernel that runs here: {}; netc costs this call as the math path",
                    usable.join(", ")
                )),
            );
        }
        out
    }
}
