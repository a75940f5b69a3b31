//! The `activations-dominate` lint: reports a `train` scenario that does not fit its budget with
//! the safety margin and whose activations at the peak are more than eight times its weights, with
//! what each remedy would save: activation checkpointing, automatic mixed precision, and two micro-
//! batches.
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use super::{Lint, ScenarioContext, percent};
use crate::costs::simulate::Segments;
use crate::diagnostics::{Code, Diagnostic};
use crate::graph::Site;
use crate::knobs::Precision;
use crate::units::bytes;

/// ## What it does
/// Reports a `train` scenario that does not fit its budget with the safety margin and whose
/// activations at the peak are more than eight times its weights, with what each remedy
/// would save: activation checkpointing, automatic mixed precision, and two micro-batches.
/// The weights are the model's parameters and buffers: GPTQ's and AWQ's packed weights are
/// buffers, as gptqmodel registers them.
///
/// Each saving is the scenario simulated again with the remedy. A model that marks no call
/// `checkpoint(...)` and whose body makes one block call would be one segment under
/// `checkpoint`, which saves little: the lint then labels the block calls made inside that
/// call and gives what marking them `checkpoint(...)` saves (the simulation with those calls
/// as segments, equal to the marked model's).
///
/// ## Why is this bad?
/// Training keeps every tensor backward needs, so activations grow with the batch and the
/// depth while weights do not. They are usually where memory can be won.
///
/// ## Example
/// ```net
/// train fit { model resnet50()  batch 256  optimizer adam  budget 24 GiB }
/// ```
///
/// ## How to fix
/// Apply the remedy with the best saving: `checkpoint` (with the labelled calls marked, where
/// the lint labels some), `precision amp`, or `grad_accum 2`.
pub struct ActivationsDominate;

impl Lint for ActivationsDominate {
    fn code(&self) -> Code {
        Code::ActivationsDominate
    }

    fn check_scenario(&self, cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        if !cx.setup.run.training {
            return Vec::new();
        }
        let b = &cx.costs.simulation.peak.breakdown;
        let activations = b.activations + b.backward_temporaries;
        // The weights are the module's state: GPTQ's and AWQ's packed weights are buffers.
        let weights = b.parameters + b.buffers;
        if weights == 0 || activations <= 8 * weights {
            return Vec::new();
        }
        // Advice for when memory must be won: the budget is not met with the margin.
        let Some(budget) = cx.costs.budget else { return Vec::new() };
        if cx.costs.total * cx.costs.margin_per_mille / 1000 <= budget {
            return Vec::new();
        }
        let peak = cx.costs.simulation.peak.bytes;
        let mut remedies = Vec::new();
        // Where a model marks no segment and its body makes at most one block call,
        // `checkpoint` alone would make one segment of the whole model: the advice is then to
        // mark the calls one level down, with what that saves, at those calls.
        let mut segment_sites: Vec<&Site> = Vec::new();
        const SHOWN: usize = 4;
        if !cx.setup.run.checkpoint {
            let with = cx.simulate_with(|run| run.checkpoint = true).peak.bytes;
            let inner = cx
                .checkpoints_as_one_segment()
                .then(|| {
                    cx.simulate_config_with(|config| {
                        config.checkpoint = true;
                        config.segments = Segments::Inner;
                    })
                })
                .map(|s| s.peak.bytes)
                .filter(|&inner| inner < with.min(peak));
            if let Some(inner) = inner {
                for node in cx.graph.nodes.iter().filter(|n| n.origin.inner_call != 0) {
                    if let Some(site) = node.origin.chain.get(1)
                        && !segment_sites.contains(&site)
                    {
                        segment_sites.push(site);
                    }
                }
                let calls = cx.graph.nodes.iter().map(|n| n.origin.inner_call).max().unwrap_or(0);
                let shown =
                    if segment_sites.len() > SHOWN { format!(", the first {SHOWN} labelled") } else { String::new() };
                remedies.push(format!(
                    "`checkpoint` alone makes one segment of the model's one block call; marking the {calls} block calls made inside it `checkpoint(...)` (at {} {}{shown}) saves {} ({} %)",
                    segment_sites.len(),
                    if segment_sites.len() == 1 { "call site" } else { "call sites" },
                    bytes(peak - inner),
                    percent(peak - inner, peak)
                ));
            } else if with < peak {
                remedies.push(format!("`checkpoint` saves {} ({} %)", bytes(peak - with), percent(peak - with, peak)));
            }
        }
        if cx.setup.run.precision == Precision::Fp32 {
            let with = cx.simulate_with(|run| run.precision = Precision::Amp).peak.bytes;
            if with < peak {
                remedies.push(format!(
                    "`precision amp` saves {} ({} %)",
                    bytes(peak - with),
                    percent(peak - with, peak)
                ));
            }
        }
        if cx.setup.batch.is_some_and(|b| b % (2 * cx.setup.run.grad_accum.max(1)) == 0) {
            // Half the micro-batch: activations halve; weights, gradients, state do not.
            let saving = activations / 2;
            remedies.push(format!("two micro-batches (`grad_accum`) save about {}", bytes(saving)));
        }
        let d = cx
            .diagnostic(
                Code::ActivationsDominate,
                format!(
                    "training activations take {}, {} times the weights and buffers ({})",
                    bytes(activations),
                    activations / weights,
                    bytes(weights)
                ),
                "batch",
            )
            .with_primary_message("activations scale with the batch");
        let d = remedies.into_iter().fold(d, |d, r| d.with_note(r));
        // The calls to mark, as rustc labels the places a fix goes (a loop is one site).
        let d = segment_sites.iter().take(SHOWN).fold(d, |d, site| {
            d.with_label(&site.file, site.place(), "a checkpoint segment: `checkpoint(...)` around this call")
        });
        vec![d.with_help("checkpoint activations, use mixed precision, or split the batch into micro-batches")]
    }
}
