//! Lints: advice about programs that are correct but costly or risky, each with a stable
//! code, a default level and, where one exists, a machine-applicable fix.
//!
//! One lint, one file: its `///` documentation ("What it does / Why is this bad? / Example /
//! How to fix") is the source of its page in spec/lints/ (generated and checked by
//! tests/it/lints.rs). Scenario lints read the scenario's graph and simulated memory; file
//! lints read syntax and scopes. [`crate::host::file_diagnostics`] applies the configured
//! levels and the `# netc: allow(name)` suppressions.

mod activations_dominate;
mod batchnorm_batch_one;
mod budget_exceeded;
mod budget_margin;
mod budget_over_device;
mod cudnn_benchmark_tight;
mod device_memory_exceeded;
mod float32_kv_cache;
mod full_fine_tuning_over_budget;
mod generate_full_logits;
mod gptq_weights_kept;
mod host_over_budget;
mod int8_activations_dominate;
mod int8_input_kept;
mod kv_cache_over_budget;
mod large_workspace;
mod linear_dominates;
mod missing_eval;
mod missing_no_grad;
mod nothing_trained;
mod quadratic_attention;
mod sdpa_kernel_unavailable;
mod sdpa_math_path;
pub mod suppress;
mod unused;

use crate::costs::simulate::{Config, Simulation, simulate};
use crate::costs::{ScenarioCosts, config};
use std::collections::HashSet;

use crate::db::SourceFile;
use crate::diagnostics::{Code, Diagnostic, Edit, FileName, Fix, NodeRef, Place};
use crate::elaborate::Db;
use crate::elaborate::{scenario_graph, shape_diagnostics, stopped};
use crate::graph::{Graph, Site};
use crate::report::bytes;
use crate::semantics::files::{ItemLoc, item_tree, syntax_tree};
use crate::semantics::setup::scenario_setup;
use crate::semantics::setup::{RunSettings, ScenarioSetup};
use crate::syntax::{Item, Scenario, SourceTree};

/// A lint.
pub trait Lint: Sync {
    /// Its code.
    fn code(&self) -> Code;

    /// Diagnostics about one scenario.
    fn check_scenario(&self, _cx: &ScenarioContext<'_>) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// Diagnostics about one file.
    fn check_file(&self, _cx: &FileContext<'_>) -> Vec<Diagnostic> {
        Vec::new()
    }
}

/// Every lint, in code order.
pub const LINTS: &[&dyn Lint] = &[
    &budget_exceeded::BudgetExceeded,
    &budget_margin::BudgetMargin,
    &missing_no_grad::MissingNoGrad,
    &missing_eval::MissingEval,
    &batchnorm_batch_one::BatchNormBatchOne,
    &linear_dominates::LinearDominatesParameters,
    &int8_activations_dominate::Int8ActivationsDominate,
    &activations_dominate::ActivationsDominate,
    &quadratic_attention::QuadraticAttention,
    &large_workspace::LargeWorkspace,
    &float32_kv_cache::Float32KvCache,
    &cudnn_benchmark_tight::CudnnBenchmarkTight,
    &host_over_budget::HostOverBudget,
    &unused::Unused,
    &device_memory_exceeded::DeviceMemoryExceeded,
    &budget_over_device::BudgetOverDevice,
    &sdpa_kernel_unavailable::SdpaKernelUnavailable,
    &full_fine_tuning_over_budget::FullFineTuningOverBudget,
    &kv_cache_over_budget::KvCacheOverBudget,
    &generate_full_logits::GenerateFullLogits,
    &int8_input_kept::Int8InputKept,
    &gptq_weights_kept::GptqWeightsKept,
    &nothing_trained::NothingTrained,
    &sdpa_math_path::SdpaMathPath,
];

/// What a scenario lint sees.
pub struct ScenarioContext<'a> {
    /// The database.
    pub db: &'a dyn Db,
    /// The file declaring the scenario.
    pub source: SourceFile,
    /// Its name.
    pub file: &'a FileName,
    /// The scenario's item index.
    pub item: u32,
    /// The scenario.
    pub scenario: &'a Scenario,
    /// Its evaluated settings.
    pub setup: &'a ScenarioSetup,
    /// Its op graph.
    pub graph: &'a Graph,
    /// Its simulated memory.
    pub costs: &'a ScenarioCosts,
}

impl ScenarioContext<'_> {
    /// The place of a node of the scenario.
    pub fn at(&self, node: crate::syntax::NodeId) -> Place {
        Place::Node(NodeRef { item: self.item, node: node.0 })
    }

    /// The place of the setting `key`, or of the scenario's name when it is not set.
    pub fn setting_place(&self, key: &str) -> Place {
        match self.scenario.settings.iter().find(|s| s.key.text == key) {
            Some(s) => self.at(s.id),
            None => self.at(self.scenario.name.id),
        }
    }

    /// A diagnostic located at the setting `key` (or the scenario's name).
    pub fn diagnostic(&self, code: Code, message: impl Into<String>, key: &str) -> Diagnostic {
        Diagnostic::new(code, message, self.file, self.setting_place(key))
    }

    /// A fix that adds `setting` to the scenario, after its last setting.
    pub fn add_setting(&self, title: &str, setting: &str) -> Fix {
        let place = match self.scenario.settings.last() {
            Some(last) => self.at(last.id),
            None => self.at(self.scenario.name.id),
        };
        Fix {
            title: title.to_string(),
            edits: vec![Edit { file: self.file.clone(), place, insert_after: true, text: format!("  {setting}") }],
        }
    }

    /// The scenario simulated with changed settings (the same graph).
    pub fn simulate_with(&self, change: impl FnOnce(&mut RunSettings)) -> Simulation {
        let mut run = self.setup.run.clone();
        change(&mut run);
        let (config, _): (Config, _) = config(&run);
        simulate(self.graph, &config)
    }

    /// The scenario simulated with simulation settings changed (what no scenario setting
    /// says, such as which calls are checkpoint segments).
    pub fn simulate_config_with(&self, change: impl FnOnce(&mut Config)) -> Simulation {
        let (mut config, _): (Config, _) = config(&self.setup.run);
        change(&mut config);
        simulate(self.graph, &config)
    }

    /// Whether `checkpoint` would make one segment of the whole model: it marks no call and its
    /// body makes one block call, with block calls inside it that could be segments instead.
    pub fn checkpoints_as_one_segment(&self) -> bool {
        let nodes = &self.graph.nodes;
        nodes.iter().all(|n| n.origin.segment == 0 && n.origin.outer_call <= 1)
            && nodes.iter().any(|n| n.origin.inner_call != 0)
    }

    /// What the scenario must fit in: its budget, or without one its device's memory; with
    /// how a message names it (`its budget`, ``device `rtx4090` ``) and the setting to point at.
    pub fn limit(&self) -> Option<(i128, String, &'static str)> {
        match (self.costs.budget, self.costs.device.capacity) {
            (Some(budget), _) => Some((budget, "its budget".to_string(), "budget")),
            (None, Some(capacity)) => Some((capacity, format!("device `{}`", self.costs.device.name()), "device")),
            (None, None) => None,
        }
    }

    /// Where the peak happens, for labels.
    pub fn peak_site(&self) -> Option<&Site> {
        self.costs.simulation.peak.site.as_ref()
    }

    /// "weights 1.2 GiB, activations 3.4 GiB, optimizer 2.4 GiB": the three largest costs
    /// live at the peak.
    pub fn top_three(&self) -> String {
        let b = &self.costs.simulation.peak.breakdown;
        let mut costs = [
            ("weights", b.parameters),
            ("buffers", b.buffers),
            ("gradients", b.gradients),
            ("optimizer state", b.optimizer_ledger()),
            ("activations", b.activations_ledger()),
            ("workspace", b.workspace),
            ("kv cache", b.kv_cache),
            ("runtime", self.costs.runtime),
        ];
        costs.sort_by_key(|(_, v)| -v);
        let parts: Vec<String> =
            costs.iter().take(3).filter(|(_, v)| *v > 0).map(|(n, v)| format!("{n} {}", bytes(*v))).collect();
        parts.join(", ")
    }

    /// What would lower the scenario's memory that it does not do yet, as a help line: "lower
    /// the batch, use `precision amp_bf16`, `checkpoint` activations, ...". A setting already
    /// made is not suggested (`amp_bf16` and `zero 3` set: neither precision nor sharding).
    pub fn remedies(&self, larger_device: bool) -> String {
        use crate::knobs::Precision;
        let run = &self.setup.run;
        let mut out: Vec<String> = Vec::new();
        if self.setup.batch.is_none_or(|b| b > 1) {
            out.push("lower the batch".into());
        }
        if run.precision == Precision::Fp32 {
            // bfloat16 runs at full speed from sm80 (A100) on; older GPUs take float16.
            let bf16 = self.costs.device.compute_capability().is_some_and(|cc| cc >= (8, 0));
            out.push(if bf16 { "use `precision amp_bf16` (or `amp`)" } else { "use `precision amp`" }.into());
        }
        if run.training {
            if !run.checkpoint && self.checkpoints_as_one_segment() {
                out.push("`checkpoint` activations with the block calls inside the model's one call marked `checkpoint(...)`".into());
            } else if !run.checkpoint {
                out.push("`checkpoint` activations".into());
            }
            if run.grad_accum <= 1 {
                out.push("split the batch with `grad_accum`".into());
            }
            if !run.fsdp && run.zero < 3 {
                let zero = if run.zero > 0 { "`zero 3`" } else { "`zero`" };
                let over = if run.data_parallel > 1 { "" } else { " over `data_parallel` devices" };
                out.push(format!("shard with {zero}/`fsdp`{over}"));
            }
        } else if !run.no_grad {
            out.push("run under `no_grad`".into());
        }
        // A served model's cache: the context, and how it is held.
        let cache = self.costs.simulation.kv_cache_bytes();
        if cache > 0 {
            out.push(format!("shorten the `context` (the kv cache is {} after the step)", crate::units::bytes(cache)));
            match run.cache {
                Some(crate::knobs::CacheKind::Dynamic) => {
                    out.push("use `cache paged` (blocks written in place, no copy per append)".into())
                }
                Some(crate::knobs::CacheKind::Paged) if run.cache_dtype == crate::knobs::CacheDtype::Auto => {
                    out.push("store the cache with `cache_dtype fp8`".into())
                }
                _ => {}
            }
        }
        if larger_device {
            out.push("use a larger device".into());
        }
        match out.pop() {
            None => "a larger device or a smaller model: every setting that saves memory is in use".into(),
            Some(last) if out.is_empty() => last,
            Some(last) => format!("{}, or {last}", out.join(", ")),
        }
    }

    /// "at step 2, backward, in `conv2d backward`".
    pub fn when(&self) -> String {
        let peak = &self.costs.simulation.peak;
        let step = if self.setup.run.training { format!("step {}, ", peak.step) } else { String::new() };
        format!("at {step}{}, in `{}`", peak.phase.name(), peak.op)
    }
}

/// What a file lint sees.
pub struct FileContext<'a> {
    /// The database.
    pub db: &'a dyn Db,
    /// The file.
    pub source: SourceFile,
    /// Its name.
    pub file: &'a FileName,
    /// Its tree.
    pub tree: &'a SourceTree,
}

/// Adds a secondary label at the peak's op, if it has a source line.
pub fn label_peak(d: Diagnostic, cx: &ScenarioContext<'_>, message: &str) -> Diagnostic {
    match cx.peak_site() {
        Some(site) => d.with_label(&site.file, Place::Node(site.at), message),
        None => d,
    }
}

/// The share of the peak, in percent, that tensors a run keeps to its backward must reach to
/// be reported (`int8-input-kept`, `gptq-weights-kept`).
const KEPT_REPORTED_SHARE: i128 = 5;

/// Whether `kept` is worth a warning: something, and at least [`KEPT_REPORTED_SHARE`] % of
/// `peak`.
pub(crate) fn kept_worth_reporting(kept: crate::costs::simulate::KeptTensors, peak: i128) -> bool {
    kept.bytes > 0 && kept.bytes * 100 >= peak * KEPT_REPORTED_SHARE
}

/// Percentage of `part` in `whole`, rounded.
pub fn percent(part: i128, whole: i128) -> i128 {
    if whole == 0 { 0 } else { (part * 100 + whole / 2) / whole }
}

/// The lints of one scenario.
#[salsa::tracked(returns(ref))]
pub fn scenario_lints<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Vec<Diagnostic> {
    let (Some(setup), Some(graph), Some(costs)) = (
        scenario_setup(db, loc).as_ref(),
        scenario_graph(db, loc).as_ref(),
        crate::costs::scenario_costs(db, loc).as_ref().filter(|c| !c.simulation.overflowed),
    ) else {
        return Vec::new();
    };
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return Vec::new() };
    let file = *loc.file(db);
    let cx = crate::lints::ScenarioContext {
        db,
        source: file,
        file: file.name(db),
        item: *loc.index(db),
        scenario,
        setup,
        graph,
        costs,
    };
    crate::lints::LINTS.iter().flat_map(|lint| lint.check_scenario(&cx)).collect()
}

/// The lints of a file: its own (unused code) and those of its scenarios. The file's own
/// lints wait until the file has no errors (an unused name may be the victim of a typo); a
/// scenario's wait until nothing stops it ([`stopped`]) and it simulates without error, so
/// that a broken scenario does not hide the budget of a sound one. One found by several
/// scenarios (a layer of a shared model) is reported once.
#[salsa::tracked(returns(ref))]
pub fn lint_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let stopped = stopped(db, file);
    if stopped.all {
        return Vec::new();
    }
    let tree = syntax_tree(db, file);
    let clean = stopped.is_empty() && shape_diagnostics(db, file).is_empty();
    let cx = crate::lints::FileContext { db, source: file, file: file.name(db), tree };
    let mut out: Vec<Diagnostic> =
        if clean { crate::lints::LINTS.iter().flat_map(|lint| lint.check_file(&cx)).collect() } else { Vec::new() };
    let mut seen = HashSet::new();
    for (index, item) in tree.iter().enumerate() {
        if matches!(item, Item::Scenario(_)) && !stopped.stops(index as u32) {
            for d in scenario_lints(db, ItemLoc::new(db, file, index as u32)) {
                if seen.insert((d.code, d.primary().file.clone(), d.primary().place.clone())) {
                    out.push(d.clone());
                }
            }
        }
    }
    out
}
