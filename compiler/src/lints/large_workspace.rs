//! The `large-workspace` lint: reports a `conv_algorithm` (im2col, FFT) whose workspace is at least
//! a tenth of the scenario's peak when the direct algorithm (no workspace) would lower it.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, percent};
use crate::diagnostics::{Code, Diagnostic};
use crate::knobs::ConvAlgorithm;
use crate::units::bytes;

/// ## What it does
/// Reports a `conv_algorithm` (im2col, FFT) whose workspace is at least a tenth of the
/// scenario's peak when the direct algorithm (no workspace) would lower it.
///
/// ## Why is this bad?
/// im2col copies every input patch into a column buffer of Cin x K x K x Hout x Wout values
/// per sample: for a 3x3 convolution that is nine times the input. The buffer is transient
/// but it sits on top of everything live at that op.
///
/// ## Example
/// ```net
/// infer serve { model articles_cnn()  batch 1  no_grad  eval  conv_algorithm im2col }
/// ```
///
/// ## How to fix
/// Use `conv_algorithm direct` (implicit GEMM) or `winograd` for 3x3 convolutions, when the
/// speed is acceptable.
pub struct LargeWorkspace;

impl Lint for LargeWorkspace {
    fn code(&self) -> Code {
        Code::LargeWorkspace
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        let algorithm = cx.setup.run.conv_algorithm;
        if !matches!(algorithm, ConvAlgorithm::Im2col | ConvAlgorithm::Fft) {
            return Vec::new();
        }
        let workspace = cx.costs.simulation.lines.values().map(|l| l.workspace).max().unwrap_or(0);
        let peak = cx.costs.simulation.peak.bytes;
        if workspace * 10 < peak {
            return Vec::new();
        }
        let direct = cx.simulate_with(|run| run.conv_algorithm = ConvAlgorithm::Direct).peak.bytes;
        if direct >= peak {
            return Vec::new();
        }
        let d = cx
            .diagnostic(
                Code::LargeWorkspace,
                format!(
                    "{algorithm} workspace of up to {} ({} % of the peak); the direct algorithm needs none",
                    bytes(workspace),
                    percent(workspace, peak)
                ),
                "conv_algorithm",
            )
            .with_primary_message(format!("peak {} instead of {}", bytes(peak), bytes(direct)))
            .with_help("use `conv_algorithm direct`, or `winograd` for 3x3 convolutions");
        vec![d]
    }
}
