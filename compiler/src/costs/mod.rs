//! Costs: what a scenario needs in memory, simulated op by op in PyTorch's semantics.
//!
//! [`autograd`] says what each op does to memory (views, in-place results, saved tensors),
//! [`simulate`](mod@simulate) replays a scenario's graph through forward, loss, backward and optimizer
//! steps, and [`devices`] holds the presets. [`scenario_costs`] puts them together for a
//! scenario: the peak, the breakdown at the peak, the runtime overhead and the budget.
//! [`scenario_lines`] is the per-line part alone, from the start of the run only (what an
//! editor's inlay hints show, sooner than the whole run).

pub mod autograd;
pub mod devices;
pub mod fit;
pub mod layout;
pub mod sdpa;
pub mod simulate;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::db::SourceFile;
use crate::diagnostics::{Code, Diagnostic, NodeRef, Place};
use crate::elaborate::{Db, scenario_graph};
use crate::graph::Graph;
use crate::semantics::files::{ItemLoc, syntax_tree};
use crate::semantics::setup::{ScenarioSetup, scenario_setup};
use crate::syntax::Item;

use self::autograd::Mode;
use self::devices::Device;
use self::simulate::{Config, LineTable, Segments, Sharding, Simulation, line_figures_checked, simulate_checked};
use crate::graph::Site;

/// The product of byte counts and sizes, saturating at `i128::MAX` instead of wrapping: a
/// saturated figure marks the simulation as overflowed ([`Simulation::overflowed`]), which
/// is reported as E0503, never shown as a number.
pub(crate) fn product(factors: &[i128]) -> i128 {
    factors.iter().fold(1i128, |acc, &f| acc.saturating_mul(f))
}

/// A scenario's memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioCosts {
    /// The simulation (peak, phases, per line).
    pub simulation: Simulation,
    /// The device preset.
    #[serde(skip)]
    pub device: &'static Device,
    /// Runtime overhead outside tensors (CUDA context, framework).
    pub runtime: i128,
    /// The allocator's view of the peak: allocations rounded as it rounds them.
    pub reserved: i128,
    /// What the device must hold at the peak: reserved bytes plus the runtime.
    pub total: i128,
    /// The budget, if set.
    pub budget: Option<i128>,
    /// The safety margin.
    pub margin_per_mille: i128,
    /// Host memory for data loading (the host ledger).
    pub host: i128,
    /// The host budget, if set.
    pub host_budget: Option<i128>,
    /// For a `generate()` run (`new_tokens`), the step whose figures these are: the largest.
    pub generate: Option<simulate::GenerateStep>,
    /// For a `generate()` run, every step simulated and its total (peak reserved + runtime),
    /// in step order; empty otherwise.
    pub generate_totals: Vec<(i128, i128)>,
}

/// Host memory the dataloader holds: every worker keeps `prefetch` batches of decoded
/// samples; with `pin_memory` each batch is copied once more into pinned memory.
pub fn dataloader_bytes(loader: &crate::semantics::setup::Dataloader, batch: i128) -> i128 {
    let batches_in_flight = loader.workers.max(1) * loader.prefetch.max(1);
    let bytes = batches_in_flight * batch * loader.sample;
    if loader.pin_memory { 2 * bytes } else { bytes }
}

/// The simulation settings of a scenario.
pub fn config(setup: &crate::semantics::setup::RunSettings) -> (Config, &'static Device) {
    let device = Device::preset(setup.device);
    let mode = Mode {
        grad: !setup.no_grad,
        train: setup.training || !setup.eval,
        training_step: setup.training,
        device,
        precision: setup.precision,
    };
    let config = Config {
        mode,
        training: setup.training,
        optimizer: setup.optimizer,
        loss: setup.loss,
        foreach: setup.foreach.unwrap_or(device.foreach_by_default()),
        conv_algorithm: setup.conv_algorithm,
        cudnn_benchmark: setup.cudnn_benchmark,
        precision: setup.precision,
        micro_batches: setup.grad_accum.max(1),
        checkpoint: setup.checkpoint,
        reentrant: setup.reentrant,
        segments: Segments::Marked,
        cache: setup.cache.map(|kind| simulate::Cache {
            kind,
            context: setup.context,
            block: setup.cache_block.max(1),
            element: setup.cache_dtype.element_bytes(),
            generate: None,
        }),
        sharding: Sharding {
            devices: setup.data_parallel.max(1),
            zero: if setup.fsdp { 3 } else { setup.zero.min(3) as u8 },
        },
    };
    (config, device)
}

/// A scenario's setup and graph, if it can be simulated: `None` when it cannot be elaborated
/// (see its diagnostics).
fn simulable<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<(&'db ScenarioSetup, &'db Graph)> {
    let setup = scenario_setup(db, loc).as_ref()?;
    let graph = scenario_graph(db, loc).as_ref()?;
    graph.diagnostics.is_empty().then_some((setup, graph))
}

/// Simulates a scenario. `None` when it cannot be elaborated (see its diagnostics).
#[salsa::tracked(returns(ref))]
pub fn scenario_costs<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<ScenarioCosts> {
    let (setup, graph) = simulable(db, loc)?;
    if setup.run.generates() {
        return largest_step(generate_steps(db, loc)?);
    }
    Some(costs_of(db, setup, graph))
}

/// A `generate()` run's costs: its largest step's (the first of equals), with every step's
/// total.
fn largest_step(steps: Vec<ScenarioCosts>) -> Option<ScenarioCosts> {
    let totals = steps.iter().filter_map(|c| Some((c.generate?.step, c.total))).collect();
    let mut largest = steps.into_iter().reduce(|best, c| if c.total > best.total { c } else { best })?;
    largest.generate_totals = totals;
    Some(largest)
}

/// The steps of a `generate()` scenario (`new_tokens`), each simulated: the prefill, the
/// first decode step (a sliding-window layer still holds the prompt's keys then) and the last
/// (the largest cache); the steps between hold no more than the last. Not a query; `None`
/// when the scenario is no `generate()` run or a step cannot be elaborated.
pub fn generate_steps(db: &dyn Db, loc: ItemLoc<'_>) -> Option<Vec<ScenarioCosts>> {
    let setup = scenario_setup(db, loc).as_ref()?;
    generate_steps_with(db, loc, &setup.dims)
}

/// [`generate_steps`] with the dimensions bound to `dims` (what `fit` tries).
fn generate_steps_with(db: &dyn Db, loc: ItemLoc<'_>, dims: &BTreeMap<String, i128>) -> Option<Vec<ScenarioCosts>> {
    let setup = scenario_setup(db, loc).as_ref()?;
    if !setup.run.generates() {
        return None;
    }
    let prompt = dims.get("S").copied().unwrap_or(1);
    let new_tokens = setup.run.new_tokens;
    let mut steps = vec![0];
    steps.extend([1, new_tokens - 1].into_iter().filter(|&t| t >= 1));
    steps.dedup();
    let mut out = Vec::new();
    for step in steps {
        let step = simulate::GenerateStep { prompt, step, new_tokens };
        let graph = generate_step_graph(db, loc, dims, step)?;
        let mut costs = costs_at(db, setup, &graph, |config| at_generate_step(config, step));
        costs.generate = Some(step);
        out.push(costs);
    }
    Some(out)
}

/// The graph of one step of `generate()`: the prompt, or one token over the cached ones. The
/// prefill at the scenario's own sizes is the scenario's graph (the query's, not elaborated
/// again).
fn generate_step_graph(
    db: &dyn Db,
    loc: ItemLoc<'_>,
    dims: &BTreeMap<String, i128>,
    step: simulate::GenerateStep,
) -> Option<std::sync::Arc<Graph>> {
    let own = scenario_setup(db, loc).as_ref().is_some_and(|setup| &setup.dims == dims);
    let graph = if step.step == 0 && own {
        scenario_graph(db, loc).clone()?
    } else {
        let mut dims = dims.clone();
        if step.step > 0 {
            dims.insert("S".into(), 1);
        }
        crate::elaborate::scenario_graph_at(db, loc, dims, step.context())?
    };
    graph.diagnostics.is_empty().then_some(graph)
}

/// The simulation settings of a step of `generate()`.
fn at_generate_step(config: &mut Config, step: simulate::GenerateStep) {
    if let Some(cache) = &mut config.cache {
        cache.context = step.context();
        cache.generate = Some(step);
    }
}

/// A scenario simulated with its dimensions bound to `dims` instead of its own (what `fit`
/// tries): not a query; the graph is re-bound, not elaborated again. `None` when it cannot
/// be elaborated at those sizes.
pub fn scenario_costs_with(db: &dyn Db, loc: ItemLoc<'_>, dims: BTreeMap<String, i128>) -> Option<ScenarioCosts> {
    let setup = scenario_setup(db, loc).as_ref()?;
    if setup.run.generates() {
        return largest_step(generate_steps_with(db, loc, &dims)?);
    }
    let graph = crate::elaborate::scenario_graph_with(db, loc, dims)?;
    graph.diagnostics.is_empty().then(|| costs_of(db, setup, &graph))
}

/// The costs of `setup` run on `graph`.
fn costs_of(db: &dyn Db, setup: &ScenarioSetup, graph: &Graph) -> ScenarioCosts {
    costs_at(db, setup, graph, |_| {})
}

/// The costs of `setup` run on `graph`, its simulation settings changed by `adjust`.
fn costs_at(db: &dyn Db, setup: &ScenarioSetup, graph: &Graph, adjust: impl FnOnce(&mut Config)) -> ScenarioCosts {
    let (mut config, device) = config(&setup.run);
    adjust(&mut config);
    let simulation = simulate_checked(graph, &config, &|| db.unwind_if_revision_cancelled());
    let runtime = setup.run.overhead.unwrap_or(device.runtime);
    let reserved = simulation.rounded_peak.max(simulation.peak.bytes);
    ScenarioCosts {
        total: reserved.saturating_add(runtime),
        reserved,
        runtime,
        budget: setup.run.budget,
        margin_per_mille: (setup.run.margin * 1000.0).round() as i128,
        host: setup.run.dataloader.as_ref().map_or(0, |l| dataloader_bytes(l, setup.batch.unwrap_or(1))),
        host_budget: setup.run.host_budget,
        simulation,
        device,
        generate: None,
        generate_totals: Vec::new(),
    }
}

/// A scenario's per-line figures ([`line_figures`]): the same as its [`scenario_costs`]'
/// `simulation.lines`, from the parameter set-up and the first forward pass only, and not
/// depending on `scenario_costs`, so an edit gets them without waiting for the whole run.
/// `None` when the scenario cannot be elaborated.
#[salsa::tracked(returns(ref))]
pub fn scenario_lines<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<LineTable> {
    let (setup, graph) = simulable(db, loc)?;
    let (config, _) = config(&setup.run);
    Some(line_figures_checked(graph, &config, &|| db.unwind_if_revision_cancelled()))
}

/// The activation bytes each line's ops made that are live at the scenario's peak
/// ([`simulate::peak_lines`]: the run replayed to its peak): what the report's "at peak" column
/// shows. Asked for by the report only (a second run), not by lints or hints. `None` when the
/// scenario cannot be simulated.
#[salsa::tracked(returns(ref))]
pub fn scenario_peak_lines<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<BTreeMap<Site, i128>> {
    let (setup, graph) = simulable(db, loc)?;
    let costs = scenario_costs(db, loc).as_ref()?;
    let (mut config, _) = config(&setup.run);
    // A `generate()` run's peak is in one of its steps: that step is replayed.
    if let Some(step) = costs.generate {
        at_generate_step(&mut config, step);
        let graph = generate_step_graph(db, loc, &setup.dims, step)?;
        return Some(simulate::peak_lines(&graph, &config, &costs.simulation, &|| db.unwind_if_revision_cancelled()));
    }
    Some(simulate::peak_lines(graph, &config, &costs.simulation, &|| db.unwind_if_revision_cancelled()))
}

/// E0503 for each scenario of `file` whose memory has a byte count too large for an `i128`
/// (its simulation saturated: [`Simulation::overflowed`]); its figures are not shown as if
/// they were exact, and its lints are not run.
#[salsa::tracked(returns(ref))]
pub fn cost_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (index, item) in syntax_tree(db, file).iter().enumerate() {
        let Item::Scenario(scenario) = item else { continue };
        let loc = ItemLoc::new(db, file, index as u32);
        if scenario_costs(db, loc).as_ref().is_some_and(|c| c.simulation.overflowed) {
            let place = Place::Node(NodeRef { item: index as u32, node: scenario.name.id.0 });
            out.push(
                Diagnostic::new(
                    Code::IntegerOverflow,
                    format!(
                        "integer overflow: the memory of {} scenario `{}` is more bytes than can be counted",
                        scenario.kind.keyword(),
                        scenario.name.text
                    ),
                    file.name(db),
                    place,
                )
                .with_primary_message("a tensor, a saved tensor or a total of this run exceeds 2^127 bytes")
                .with_help("check the sizes this scenario gives its model"),
            );
        }
    }
    out
}
