//! Reports: each scenario's op graph summed per source line (output shape, parameters, MACs,
//! output bytes, instances), as data ([`Report`], serde-serializable, the JSON schema of
//! `netc report --format json`) and rendered as a table or Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;

use crate::costs::simulate::{Breakdown, PhaseFigures, tensor_dtypes};
use crate::costs::{scenario_costs, scenario_lines, scenario_peak_lines};
use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::FileName;
use crate::elaborate::{Db, scenario_graph};
use crate::graph::{Graph, Site, TensorId};
use crate::semantics::files::{ItemLoc, item_tree, parse_file, syntax_tree};
use crate::semantics::setup::scenario_setup;
use crate::shapes::{DType, Dim, TensorType};
use crate::syntax::{Item, NodeId};
pub use crate::units::{bytes, count, thousands};

/// The version of the report schema; bumped on incompatible changes. 2: a scenario that
/// cannot be simulated is listed in its place, with why ([`NotSimulated`]), instead of the
/// whole report failing.
pub const REPORT_VERSION: u32 = 2;

/// The report of some files: every scenario. Serialized as `{version, scenarios}`, where
/// `scenarios` holds the [`ScenarioReport`]s and the [`NotSimulated`] entries merged in file
/// and source order (an entry with an `error` field is one that was not simulated).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Schema version.
    pub version: u32,
    /// The scenarios simulated, in file and source order.
    pub scenarios: Vec<ScenarioReport>,
    /// The scenarios that could not be simulated, each with its place among all of them.
    pub not_simulated: Vec<NotSimulated>,
}

/// A scenario that could not be simulated, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NotSimulated {
    /// Its index among all the scenarios of the report (simulated or not): where it goes.
    #[serde(skip)]
    pub position: usize,
    /// The scenario's name.
    pub name: String,
    /// `train` or `infer`.
    pub kind: &'static str,
    /// The file that declares it.
    pub file: FileName,
    /// Why, in a few words: `2 errors stop its simulation`.
    pub error: String,
    /// The errors that stop it (none when the cause is not an error of the program).
    pub errors: Vec<StoppingError>,
}

/// One error that stops a scenario's simulation, located for people and tools.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StoppingError {
    /// Its code, `E0304`.
    pub code: &'static str,
    /// Its kebab-case name.
    pub name: &'static str,
    /// Its message.
    pub message: String,
    /// The file of its primary label.
    pub file: FileName,
    /// 1-based line of the label's start.
    pub line: u32,
    /// 1-based column of the label's start, in characters.
    pub column: u32,
}

/// One entry of the report's scenario list, as serialized.
#[derive(Serialize)]
#[serde(untagged)]
enum Entry<'a> {
    Simulated(&'a ScenarioReport),
    NotSimulated(&'a NotSimulated),
}

impl Report {
    /// Every scenario, simulated or not, in file and source order.
    fn entries(&self) -> impl Iterator<Item = Entry<'_>> {
        let mut simulated = self.scenarios.iter();
        let mut missing = self.not_simulated.iter().peekable();
        let total = self.scenarios.len() + self.not_simulated.len();
        (0..total).filter_map(move |position| match missing.peek() {
            Some(n) if n.position == position => missing.next().map(Entry::NotSimulated),
            _ => simulated.next().map(Entry::Simulated).or_else(|| missing.next().map(Entry::NotSimulated)),
        })
    }

    /// Whether the report has no scenario at all.
    pub fn is_empty(&self) -> bool {
        self.scenarios.is_empty() && self.not_simulated.is_empty()
    }

    /// The names of every scenario, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries()
            .map(|e| match e {
                Entry::Simulated(s) => s.name.as_str(),
                Entry::NotSimulated(n) => n.name.as_str(),
            })
            .collect()
    }
}

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut state = serializer.serialize_struct("Report", 2)?;
        state.serialize_field("version", &self.version)?;
        state.serialize_field("scenarios", &self.entries().collect::<Vec<_>>())?;
        state.end()
    }
}

/// One scenario's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScenarioReport {
    /// The scenario's name.
    pub name: String,
    /// `train` or `infer`.
    pub kind: &'static str,
    /// The file that declares the scenario.
    pub file: FileName,
    /// The model run.
    pub model: String,
    /// The batch size, if set.
    pub batch: Option<i128>,
    /// Parameters of the model (shared weights counted once).
    pub params: i128,
    /// Of them, those not frozen (`frozen(...)`): what a training step updates.
    pub trainable_params: i128,
    /// Of them, those one token's forward pass reads: all of them but in a mixture of
    /// experts, where a token runs its router's top-k experts (`parameter(..., active=k)`).
    pub active_params: i128,
    /// Multiply-accumulates of one forward pass over the whole batch.
    pub macs: i128,
    /// Of them, those of one token (the forward pass's over `batch x seq` tokens), for a
    /// scenario with a `seq`: a mixture of experts' runs its top-k experts only.
    pub macs_per_token: Option<i128>,
    /// The device preset.
    pub device: String,
    /// The allocated peak: live tensor bytes at the worst moment (what PyTorch's
    /// `max_memory_allocated()` reports, without allocator rounding).
    pub peak_bytes: i128,
    /// The peak as the device's allocator holds it (each allocation rounded).
    pub reserved_bytes: i128,
    /// Runtime overhead outside tensors (CUDA context, framework).
    pub runtime_bytes: i128,
    /// What the device must hold: reserved plus runtime; this is compared with the budget.
    pub total_bytes: i128,
    /// The budget, if the scenario sets one.
    pub budget_bytes: Option<i128>,
    /// The safety margin the budget asks for (1.5 unless set).
    pub margin: f64,
    /// Step of the peak (1 or 2; training runs two).
    pub peak_step: u8,
    /// Phase of the peak: forward, loss, backward, step.
    pub peak_phase: &'static str,
    /// The op that had just allocated at the peak.
    pub peak_op: String,
    /// The source line of that op, as `file:line`, if it has one.
    pub peak_line: Option<String>,
    /// What is live at the peak, by ledger.
    pub ledgers: Ledgers,
    /// What is live at the peak, in PyTorch's finer categories.
    pub breakdown: Breakdown,
    /// Each phase's start, peak and end bytes.
    pub phases: Vec<PhaseFigures>,
    /// The key/value cache after the step (`cache`: every `kv_cache` call's, with this
    /// step's tokens appended); 0 without a cache.
    pub kv_cache_bytes: i128,
    /// For a `generate()` run (`new_tokens`), the step whose figures these are (0: the
    /// prefill; `t`: the decode step that reads token `t`), of the tokens made.
    pub generate_step: Option<(i128, i128)>,
    /// For a `generate()` run, every step simulated (0 the prefill) and its total; empty
    /// otherwise.
    pub generate_totals: Vec<(i128, i128)>,
    /// The optimizer state a paged bitsandbytes optimizer keeps in CUDA unified memory,
    /// outside the peak and the total (0 for any other optimizer, or on the CPU).
    pub paged_optimizer_state_bytes: i128,
    /// Host memory for data loading.
    pub host_bytes: i128,
    /// The host budget, if set.
    pub host_budget_bytes: Option<i128>,
    /// Per source line, in order of first execution.
    pub lines: Vec<LineReport>,
}

/// What is live at a scenario's peak, by ledger.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Ledgers {
    /// Parameters.
    pub weights: i128,
    /// Buffers (BatchNorm running statistics, rotary tables; GPTQ's and AWQ's packed
    /// weights, which gptqmodel registers as buffers).
    pub buffers: i128,
    /// Parameter gradients.
    pub gradients: i128,
    /// Optimizer state and the step's temporaries.
    pub optimizer: i128,
    /// Inputs, activations and activation gradients.
    pub activations: i128,
    /// Kernel workspace.
    pub workspace: i128,
    /// The key/value cache (`cache`): the earlier steps' and what this step has appended.
    pub kv_cache: i128,
    /// Runtime overhead (CUDA context, framework).
    pub runtime: i128,
}

/// One source line's share of a scenario.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LineReport {
    /// The file of the line.
    pub file: FileName,
    /// 1-based line number.
    pub line: u32,
    /// The line's source text, trimmed.
    pub source: String,
    /// The output shape of the line's first execution (several outputs separated by `, `).
    pub shape: String,
    /// Parameters created by the ops on this line, over all executions.
    pub params: i128,
    /// MACs of the ops on this line, over all executions.
    pub macs: i128,
    /// Bytes of the tensors the line made and assigned or returned, over all executions (an
    /// alias such as `s = x` makes none).
    pub output_bytes: i128,
    /// With autograd recording: the bytes the line's ops keep for backward, over all
    /// executions. Without (`no_grad`): the bytes of the tensors the line's ops make.
    pub activation_bytes: i128,
    /// The activation bytes the line's ops made (outputs, saved tensors, and in backward the
    /// gradients their backward made) that are live at the scenario's peak: the line's share
    /// of the peak's activations. Only `netc report` computes it (a second run to the peak):
    /// 0 in the editor's rows.
    pub peak_bytes: i128,
    /// The largest transient workspace of the line's ops (convolution algorithm buffers).
    pub workspace_bytes: i128,
    /// Parameters the line creates, in bytes.
    pub weight_bytes: i128,
    /// Buffers the line creates, in bytes.
    pub buffer_bytes: i128,
    /// Gradients of the line's parameters (training).
    pub gradient_bytes: i128,
    /// Optimizer state of the line's parameters (training).
    pub optimizer_bytes: i128,
    /// The key/value cache the line's `kv_cache` calls hold after the step (every layer's).
    pub kv_cache_bytes: i128,
    /// How many times the line ran (a line in a block called 8 times runs 8 times).
    pub instances: u32,
}

fn known(d: &Dim) -> i128 {
    d.known().unwrap_or(0)
}

/// The line number and text of a site.
fn locate(db: &dyn Db, site: &Site) -> Option<(u32, String)> {
    let file = lookup_file(db, &site.file)?;
    let parse = parse_file(db, file);
    let range = parse.spans.get(site.at.item as usize)?.range(NodeId(site.at.node));
    let text = file.text(db);
    // A binary search in the file's line starts: reports have a row per line.
    let starts = line_starts(db, file);
    let line = line_of(starts, range.start).max(1);
    Some((line, line_text(text, starts, line).to_string()))
}

/// The text of 1-based `line`, trimmed, given the file's [`line_starts`].
pub fn line_text<'t>(text: &'t str, starts: &[u32], line: u32) -> &'t str {
    let index = (line as usize).saturating_sub(1);
    let start = starts.get(index).map_or(text.len(), |&s| s as usize);
    let end = starts.get(index + 1).map_or(text.len(), |&e| e as usize);
    text.get(start..end).unwrap_or("").trim()
}

/// The 1-based line of `offset`, given the file's [`line_starts`].
pub fn line_of(starts: &[u32], offset: u32) -> u32 {
    starts.partition_point(|&s| s <= offset) as u32
}

/// The byte offset of each line's start (line 1 starts at 0), cached per text.
#[salsa::tracked(returns(ref))]
pub fn line_starts(db: &dyn Db, file: SourceFile) -> Vec<u32> {
    crate::diagnostics::line_starts(file.text(db))
}

/// The types of `tensors` in the dtypes the scenario gives them, `, `-separated, a run of
/// equal ones written once with its count (a 128-way `split`: `f32[8, 16, 56, 56] × 128`).
fn shapes(graph: &Graph, dtypes: &[DType], tensors: &[TensorId]) -> String {
    let mut runs: Vec<(String, usize)> = Vec::new();
    for &t in tensors {
        let ty = TensorType { dtype: dtypes[t.0 as usize], shape: graph.tensor(t).shape.clone() }.to_string();
        match runs.last_mut() {
            Some((last, n)) if *last == ty => *n += 1,
            _ => runs.push((ty, 1)),
        }
    }
    let parts: Vec<String> = runs.into_iter().map(|(ty, n)| if n > 1 { format!("{ty} × {n}") } else { ty }).collect();
    parts.join(", ")
}

/// A scenario's rows without positions: see [`unlocated_lines`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnlocatedLines {
    /// The rows, their `shape` left empty (see [`UnlocatedLines::shape`]).
    pub rows: Vec<LineReport>,
    /// The statement of each row (the line table's, shared).
    pub sites: Arc<[Site]>,
    /// The statement value of each row's first run (an index in the graph's
    /// `stmt_values`), whose tensors are the row's shape; `None` for a row of ops only.
    first_values: Vec<Option<u32>>,
    /// Each tensor's dtype under the scenario's precision policy (a `precision bf16`
    /// scenario's activations are `bf16[...]`).
    dtypes: Arc<[DType]>,
}

impl UnlocatedLines {
    /// The output shape of row `row` (its first run's tensors, `, `-separated), written only
    /// when asked: a large model has thousands of rows, an editor shows a screenful.
    pub fn shape(&self, graph: &Graph, row: usize) -> String {
        match self.first_values.get(row).copied().flatten() {
            Some(value) => shapes(graph, &self.dtypes, &graph.stmt_values[value as usize].tensors),
            None => String::new(),
        }
    }

    /// The rows with their shapes written.
    pub fn with_shapes(&self, graph: &Graph) -> Vec<LineReport> {
        let mut rows = self.rows.clone();
        for (row, line) in rows.iter_mut().enumerate() {
            line.shape = self.shape(graph, row);
        }
        rows
    }
}

/// The report of one scenario, or `None` if it cannot be elaborated (see its diagnostics).
pub fn scenario_report(db: &dyn Db, file: SourceFile, index: u32) -> Option<ScenarioReport> {
    build(db, file, index).map(|(report, _)| report)
}

/// The report of one scenario and the statement of each of its lines.
fn build(db: &dyn Db, file: SourceFile, index: u32) -> Option<(ScenarioReport, &[Site])> {
    let loc = ItemLoc::new(db, file, index);
    let mut report = unlocated(db, loc).clone()?;
    let sites = &unlocated_lines(db, loc).as_ref()?.sites;
    for (line, site) in report.lines.iter_mut().zip(sites.iter()) {
        (line.line, line.source) = locate(db, site)?;
    }
    if let Some(at_peak) = scenario_peak_lines(db, loc).as_ref() {
        for (line, site) in report.lines.iter_mut().zip(sites.iter()) {
            line.peak_bytes = at_peak.get(site).copied().unwrap_or(0);
        }
    }
    let peak = scenario_costs(db, loc).as_ref()?.simulation.peak.site.as_ref();
    report.peak_line = peak.and_then(|site| locate(db, site).map(|(line, _)| format!("{}:{line}", site.file)));
    Some((report, sites))
}

/// A scenario's rows without positions (line numbers and source text left empty) and the
/// statement of each row, cached: an edit that only moves lines (a comment, blank lines)
/// reuses them. The rows are in the order the lines first finished running (a block's lines
/// come before the line that called the block), one per line of the simulation's
/// [`LineTable`](crate::costs::simulate::LineTable). They are built from the graph and
/// [`scenario_lines`] (the start of the run), not from [`scenario_costs`]: an editor's
/// per-line figures come without waiting for the whole run. `None` when the scenario does
/// not elaborate.
#[salsa::tracked(returns(ref))]
pub fn unlocated_lines<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<UnlocatedLines> {
    let table = scenario_lines(db, loc).as_ref()?;
    let graph = scenario_graph(db, loc).as_ref()?;
    let precision = scenario_setup(db, loc).as_ref()?.run.precision;
    let mut rows: Vec<LineReport> = table
        .sites
        .iter()
        .map(|site| LineReport {
            file: site.file.clone(),
            line: 0,
            source: String::new(),
            shape: String::new(),
            params: 0,
            macs: 0,
            output_bytes: 0,
            activation_bytes: 0,
            peak_bytes: 0,
            workspace_bytes: 0,
            weight_bytes: 0,
            buffer_bytes: 0,
            gradient_bytes: 0,
            optimizer_bytes: 0,
            kv_cache_bytes: 0,
            instances: 0,
        })
        .collect();
    let mut first_values = vec![None; rows.len()];
    for (index, (value, &line)) in graph.stmt_values.iter().zip(&table.of_value).enumerate() {
        let r = &mut rows[line as usize];
        if r.instances == 0 {
            first_values[line as usize] = Some(index as u32);
        }
        r.instances += 1;
        for t in value.tensors.iter().filter(|t| **t >= value.first_new) {
            r.output_bytes += graph.tensor(*t).bytes().as_ref().map_or(0, known);
        }
    }
    for (node, &line) in graph.nodes.iter().zip(&table.of_node) {
        let r = &mut rows[line as usize];
        r.params += known(&node.params);
        r.macs += known(&node.result.macs);
    }
    for (r, memory) in rows.iter_mut().zip(&table.memory) {
        let Some(memory) = memory else { continue };
        r.activation_bytes = memory.activations;
        r.workspace_bytes = memory.workspace;
        r.weight_bytes = memory.weights;
        r.buffer_bytes = memory.buffers;
        r.gradient_bytes = memory.gradients;
        r.optimizer_bytes = memory.optimizer;
        r.kv_cache_bytes = memory.kv_cache;
    }
    let dtypes = tensor_dtypes(graph, precision).into();
    Some(UnlocatedLines { rows, sites: Arc::clone(&table.sites), first_values, dtypes })
}

/// A scenario's report without positions (line numbers, source text and the peak's line
/// left empty), cached: an edit that only moves lines (a comment, blank lines) reuses it.
/// Its `lines` are the rows of [`unlocated_lines`], which also has the statement of each.
/// `None` when the scenario does not elaborate.
#[salsa::tracked(returns(ref))]
pub fn unlocated<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<ScenarioReport> {
    // Items through `item_tree`, not the file's tree: an edit of another item leaves this cached.
    let file = *loc.file(db);
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return None };
    let setup = scenario_setup(db, loc).as_ref()?;
    let graph = scenario_graph(db, loc).as_ref()?;
    let costs = scenario_costs(db, loc).as_ref()?;
    let lines = unlocated_lines(db, loc).as_ref()?.with_shapes(graph);
    let model_name = match item_tree(db, ItemLoc::new(db, setup.model.0, setup.model.1)).as_deref() {
        Some(Item::Model(m)) => m.name.text.to_string(),
        _ => String::new(),
    };
    let simulation = &costs.simulation;
    let peak = &simulation.peak;
    let b = peak.breakdown;
    let ledgers = Ledgers {
        weights: b.parameters,
        buffers: b.buffers,
        gradients: b.gradients,
        optimizer: b.optimizer_ledger(),
        activations: b.activations_ledger(),
        workspace: b.workspace,
        kv_cache: b.kv_cache,
        runtime: costs.runtime,
    };
    let report = ScenarioReport {
        name: scenario.name.text.to_string(),
        kind: scenario.kind.keyword(),
        file: file.name(db).clone(),
        model: model_name,
        batch: setup.batch,
        params: graph.params().as_ref().map_or(0, known),
        trainable_params: graph.nodes.iter().filter(|n| n.trains_weights()).map(|n| known(&n.params)).sum(),
        active_params: graph.active_params().as_ref().map_or(0, known),
        // With gradient accumulation the graph is one micro-batch; the step runs them all.
        macs: graph.macs().as_ref().map_or(0, known) * setup.run.grad_accum.max(1),
        macs_per_token: match (setup.batch, setup.dims.get("S")) {
            (Some(batch), Some(&seq)) if batch > 0 && seq > 0 => {
                Some(graph.macs().as_ref().map_or(0, known) / (batch * seq))
            }
            _ => None,
        },
        device: costs.device.name().to_string(),
        peak_bytes: peak.bytes,
        reserved_bytes: costs.reserved,
        runtime_bytes: costs.runtime,
        total_bytes: costs.total,
        budget_bytes: costs.budget,
        margin: costs.margin_per_mille as f64 / 1000.0,
        peak_step: peak.step,
        peak_phase: peak.phase.name(),
        peak_op: peak.op.clone(),
        peak_line: None,
        ledgers,
        breakdown: b,
        phases: simulation.phases.clone(),
        kv_cache_bytes: simulation.kv_cache_bytes(),
        generate_step: costs.generate.map(|g| (g.step, g.new_tokens)),
        generate_totals: costs.generate_totals.clone(),
        paged_optimizer_state_bytes: simulation.paged_optimizer_state,
        host_bytes: costs.host,
        host_budget_bytes: costs.host_budget,
        lines,
    };
    Some(report)
}

/// The scenarios declared in `files` (optionally only those named `only`), as files and
/// item indices, in file and source order.
pub fn scenarios(db: &dyn Db, files: &[SourceFile], only: Option<&str>) -> Vec<(SourceFile, u32)> {
    let mut found = Vec::new();
    for &file in files {
        for (index, item) in syntax_tree(db, file).iter().enumerate() {
            if let Item::Scenario(s) = item
                && only.is_none_or(|name| name == s.name.text)
            {
                found.push((file, index as u32));
            }
        }
    }
    found
}

/// The report of every scenario of `files`, optionally only those named `only`; one that
/// cannot be simulated is listed as [`NotSimulated`], without its errors.
pub fn report(db: &dyn Db, files: &[SourceFile], only: Option<&str>) -> Report {
    report_with(db, files, only, &|_, _| Vec::new())
}

/// [`report`], with `stopping` the errors that stop each scenario (file, item index): a
/// scenario with any is not simulated, and they say why.
pub fn report_with(
    db: &dyn Db,
    files: &[SourceFile],
    only: Option<&str>,
    stopping: &dyn Fn(SourceFile, u32) -> Vec<StoppingError>,
) -> Report {
    let mut report = Report { version: REPORT_VERSION, scenarios: Vec::new(), not_simulated: Vec::new() };
    for (position, (file, index)) in scenarios(db, files, only).into_iter().enumerate() {
        let errors = stopping(file, index);
        let simulated = if errors.is_empty() { scenario_report(db, file, index) } else { None };
        match simulated {
            Some(s) => report.scenarios.push(s),
            None => {
                let Some(Item::Scenario(s)) = syntax_tree(db, file).get(index as usize) else { continue };
                let error = match errors.len() {
                    0 => "it cannot be simulated".to_string(),
                    1 => "1 error stops its simulation".to_string(),
                    n => format!("{n} errors stop its simulation"),
                };
                report.not_simulated.push(NotSimulated {
                    position,
                    name: s.name.text.to_string(),
                    kind: s.kind.keyword(),
                    file: file.name(db).clone(),
                    error,
                    errors,
                });
            }
        }
    }
    report
}

/// A block's share of a scenario: the sums of the per-line figures of the lines that ran
/// inside it, directly or through the blocks it called.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BlockTotals {
    /// The block's name (with its file when two blocks of the scenario share a name).
    pub name: String,
    /// Parameters created inside it.
    pub params: i128,
    /// MACs of one forward pass inside it.
    pub macs: i128,
    /// Parameter bytes.
    pub weight_bytes: i128,
    /// Buffer bytes.
    pub buffer_bytes: i128,
    /// Gradient bytes (training).
    pub gradient_bytes: i128,
    /// Optimizer state bytes (training).
    pub optimizer_bytes: i128,
    /// Bytes its lines keep for backward (or make, without autograd).
    pub activation_bytes: i128,
    /// The largest workspace of its lines (workspace is transient: not summed).
    pub workspace_bytes: i128,
}

/// The name of the item a site is in, if it is a block.
fn block_name(db: &dyn Db, site: &Site) -> Option<String> {
    let file = lookup_file(db, &site.file)?;
    match syntax_tree(db, file).get(site.at.item as usize)? {
        Item::Block(b) => Some(b.name.text.to_string()),
        _ => None,
    }
}

/// The report of a scenario and, per block, the per-line figures of the lines that ran
/// inside it, in the order the blocks were first called (outer blocks before the blocks they
/// call); `None` when the scenario cannot be elaborated. A line counts in every block of the chain of calls it ran through
/// ([`crate::graph::Origin::chain`]); a line that ran through different chains (a block
/// called from two different blocks) is shared between them in proportion to how many times
/// it ran through each.
pub fn block_totals(db: &dyn Db, file: SourceFile, index: u32) -> Option<(ScenarioReport, Vec<BlockTotals>)> {
    let (report, sites) = build(db, file, index)?;
    let graph = scenario_graph(db, ItemLoc::new(db, file, index)).as_ref()?;
    // A block is its file and item.
    type Key = (FileName, u32);
    let key = |site: &Site| (site.file.clone(), site.at.item);
    // The blocks each execution of a statement ran inside, outermost first.
    let path = |origin: &crate::graph::Origin| -> Vec<Key> {
        if origin.chain.is_empty() {
            return Vec::new();
        }
        let mut path: Vec<Key> = origin.chain.iter().skip(1).map(key).chain([key(&origin.stmt)]).collect();
        let mut seen = std::collections::BTreeSet::new();
        path.retain(|k| seen.insert(k.clone()));
        path
    };
    let mut order: Vec<Key> = Vec::new();
    let mut paths: BTreeMap<&Site, BTreeMap<Vec<Key>, u64>> = BTreeMap::new();
    let origins = graph.stmt_values.iter().map(|v| &v.origin);
    // Statements without a value (none in practice) are counted by their ops.
    let ops = graph.nodes.iter().map(|n| &n.origin);
    let mut with_values = std::collections::BTreeSet::new();
    for origin in origins.clone() {
        with_values.insert(&origin.stmt);
    }
    for origin in origins.chain(ops.filter(|o| !with_values.contains(&o.stmt))) {
        let p = path(origin);
        for k in &p {
            if !order.contains(k) {
                order.push(k.clone());
            }
        }
        *paths.entry(&origin.stmt).or_default().entry(p).or_default() += 1;
    }
    let mut totals: BTreeMap<Key, BlockTotals> = BTreeMap::new();
    for (site, line) in sites.iter().zip(&report.lines) {
        let Some(by_path) = paths.get(site) else { continue };
        let runs: u64 = by_path.values().sum();
        for (p, &n) in by_path {
            // The share of this path: exact when the line ran through one path only.
            let share = |v: i128| if n == runs { v } else { v * n as i128 / runs as i128 };
            for k in p {
                let t = totals.entry(k.clone()).or_insert_with(|| BlockTotals {
                    name: String::new(),
                    params: 0,
                    macs: 0,
                    weight_bytes: 0,
                    buffer_bytes: 0,
                    gradient_bytes: 0,
                    optimizer_bytes: 0,
                    activation_bytes: 0,
                    workspace_bytes: 0,
                });
                t.params += share(line.params);
                t.macs += share(line.macs);
                t.weight_bytes += share(line.weight_bytes);
                t.buffer_bytes += share(line.buffer_bytes);
                t.gradient_bytes += share(line.gradient_bytes);
                t.optimizer_bytes += share(line.optimizer_bytes);
                t.activation_bytes += share(line.activation_bytes);
                t.workspace_bytes = t.workspace_bytes.max(line.workspace_bytes);
            }
        }
    }
    let names: Vec<(Key, String)> = order
        .iter()
        .map(|(file, item)| {
            let site = Site { file: file.clone(), at: crate::diagnostics::NodeRef { item: *item, node: 0 } };
            ((file.clone(), *item), block_name(db, &site).unwrap_or_default())
        })
        .collect();
    let mut blocks = Vec::new();
    for (k, (_, name)) in order.into_iter().zip(&names) {
        let shared = names.iter().filter(|(_, n)| n == name).count() > 1;
        let Some(mut t) = totals.remove(&k) else { continue };
        t.name = if shared { format!("{name} ({})", k.0) } else { name.clone() };
        blocks.push(t);
    }
    Some((report, blocks))
}

fn header(s: &ScenarioReport) -> String {
    let batch = s.batch.map(|b| format!(", batch {b}")).unwrap_or_default();
    format!("{} scenario `{}` ({}): model `{}`{batch}, device {}", s.kind, s.name, s.file, s.model, s.device)
}

/// The memory summary of a scenario: peak, when, what is live, and the budget.
pub fn memory_summary(s: &ScenarioReport) -> String {
    let step = if s.kind == "train" { format!("step {}, ", s.peak_step) } else { String::new() };
    let at = s.peak_line.as_ref().map(|l| format!(" ({l})")).unwrap_or_default();
    let l = &s.ledgers;
    let mut text = format!(
        "peak {} at {step}{}, `{}`{at}\nlive at the peak: weights {}, buffers {}, gradients {}, optimizer {}, activations {}, workspace {}; runtime {}",
        bytes(s.peak_bytes),
        s.peak_phase,
        s.peak_op,
        bytes(l.weights),
        bytes(l.buffers),
        bytes(l.gradients),
        bytes(l.optimizer),
        bytes(l.activations),
        bytes(l.workspace),
        bytes(l.runtime),
    );
    if s.kv_cache_bytes > 0 || l.kv_cache > 0 {
        text.push_str(&format!(
            "\nkv cache {} at the peak, {} after the step",
            bytes(l.kv_cache),
            bytes(s.kv_cache_bytes)
        ));
    }
    if s.paged_optimizer_state_bytes > 0 {
        text.push_str(&format!(
            "\npaged optimizer state {} in unified memory, outside the peak (evicted to the host under pressure)",
            bytes(s.paged_optimizer_state_bytes)
        ));
    }
    if let Some((step, tokens)) = s.generate_step {
        let name = |step: i128| if step == 0 { "the prefill".to_string() } else { format!("decode step {step}") };
        let totals: Vec<String> =
            s.generate_totals.iter().map(|&(step, total)| format!("{} {}", name(step), bytes(total))).collect();
        text.push_str(&format!(
            "\ngenerate() of {tokens} tokens: the peak is {}'s (totals: {})",
            name(step),
            totals.join(", ")
        ));
    }
    if let Some(budget) = s.budget_bytes {
        let share = 100.0 * s.total_bytes as f64 / budget as f64;
        text.push_str(&format!(
            "\ntotal {} / budget {} · {share:.0} % (margin {}: needs {})",
            bytes(s.total_bytes),
            bytes(budget),
            s.margin,
            bytes((s.total_bytes as f64 * s.margin) as i128)
        ));
    } else {
        text.push_str(&format!("\ntotal {} (no budget)", bytes(s.total_bytes)));
    }
    if s.host_bytes > 0 {
        let budget = s.host_budget_bytes.map(|b| format!(" / host budget {}", bytes(b))).unwrap_or_default();
        text.push_str(&format!("\nhost: dataloader {}{budget}", bytes(s.host_bytes)));
    }
    text
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// The heading of a scenario that was not simulated: `train scenario `fit` (m.net): not
/// simulated: 1 error stops its simulation`.
fn not_simulated_header(n: &NotSimulated) -> String {
    format!("{} scenario `{}` ({}): not simulated: {}", n.kind, n.name, n.file, n.error)
}

/// An error that stops a scenario, on one line: `m.net:7:40: error[E0304]: unknown device`.
fn stopping_line(e: &StoppingError) -> String {
    format!("{}:{}:{}: error[{}]: {}", e.file, e.line, e.column, e.code, e.message)
}

/// The widest the source and shape cells are in a table (the rest is cut with `…`; the JSON
/// has every cell whole).
const SOURCE_WIDTH: usize = 48;
const SHAPE_WIDTH: usize = 40;

/// A column of the per-line table: its title, whether it is a number (right-aligned), and
/// its cell for a row.
struct Column {
    title: &'static str,
    number: bool,
    cell: fn(&LineReport) -> String,
    /// Source text (the source line, the shape): cut to this many characters in the table,
    /// whole and as code in Markdown.
    text_width: Option<usize>,
    /// A byte column shown only when some row has a figure in it (no gradient column for
    /// inference, no workspace column where no op has one).
    value: Option<fn(&LineReport) -> i128>,
}

impl Column {
    /// The cell as the terminal table shows it.
    fn table_cell(&self, l: &LineReport) -> String {
        let cell = (self.cell)(l);
        match self.text_width {
            Some(width) => truncate(&cell, width),
            None => cell,
        }
    }

    /// The cell as Markdown shows it: text whole, as code (a `|` escaped).
    fn markdown_cell(&self, l: &LineReport) -> String {
        let cell = (self.cell)(l);
        if self.text_width.is_some() { format!("`{}`", cell.replace('|', "\\|")) } else { cell }
    }
}

/// Bytes, or `--` for none (as torchinfo marks a layer without parameters).
fn bytes_or_dash(b: i128) -> String {
    if b == 0 { "--".to_string() } else { bytes(b) }
}

/// The columns of a scenario's table, those without a figure in any row left out.
fn columns(s: &ScenarioReport) -> Vec<Column> {
    macro_rules! bytes_column {
        ($title:expr, $field:ident) => {
            Column {
                title: $title,
                number: true,
                cell: |l| bytes_or_dash(l.$field),
                text_width: None,
                value: Some(|l| l.$field),
            }
        };
    }
    let all = [
        Column {
            title: "line",
            number: false,
            cell: |l| format!("{}:{}", l.file, l.line),
            text_width: None,
            value: None,
        },
        Column {
            title: "source",
            number: false,
            cell: |l| l.source.clone(),
            text_width: Some(SOURCE_WIDTH),
            value: None,
        },
        Column {
            title: "output shape",
            number: false,
            cell: |l| l.shape.clone(),
            text_width: Some(SHAPE_WIDTH),
            value: None,
        },
        Column { title: "params", number: true, cell: |l| thousands(l.params), text_width: None, value: None },
        Column { title: "MACs", number: true, cell: |l| count(l.macs), text_width: None, value: None },
        bytes_column!("weights", weight_bytes),
        bytes_column!("grads", gradient_bytes),
        bytes_column!("optimizer", optimizer_bytes),
        Column {
            title: "activations",
            number: true,
            cell: |l| bytes_or_dash(l.activation_bytes),
            text_width: None,
            value: None,
        },
        Column { title: "at peak", number: true, cell: |l| bytes_or_dash(l.peak_bytes), text_width: None, value: None },
        bytes_column!("workspace", workspace_bytes),
        bytes_column!("kv cache", kv_cache_bytes),
        Column { title: "x", number: true, cell: |l| l.instances.to_string(), text_width: None, value: None },
    ];
    all.into_iter().filter(|c| c.value.is_none_or(|v| s.lines.iter().any(|l| v(l) != 0))).collect()
}

/// What the line under a scenario's table says after "total:": the totals, and how much of
/// the activations at the peak the lines' "at peak" figures hold (the rest no line made: the
/// loss's tensors and its labels).
fn totals(s: &ScenarioReport) -> String {
    let at_peak: i128 = s.lines.iter().map(|l| l.peak_bytes).sum();
    let outside = s.ledgers.activations - at_peak;
    let outside =
        if outside > 0 { format!(" ({} in no line: the loss and its labels)", bytes(outside)) } else { String::new() };
    let mut kinds = Vec::new();
    if s.trainable_params != s.params {
        kinds.push(format!("{} trainable", thousands(s.trainable_params)));
    }
    if s.active_params != s.params {
        kinds.push(format!("{} active per token", thousands(s.active_params)));
    }
    let trainable = if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
    let per_token = s.macs_per_token.map(|m| format!(" ({} a token)", count(m))).unwrap_or_default();
    format!(
        "{} params{trainable}, {} MACs{per_token}; activations at the peak {}{outside}",
        thousands(s.params),
        count(s.macs),
        bytes(s.ledgers.activations)
    )
}

/// The report as plain-text tables, one per scenario; a scenario that was not simulated gets
/// a heading that says so and its errors, one per line.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    for entry in report.entries() {
        let s = match entry {
            Entry::Simulated(s) => s,
            Entry::NotSimulated(n) => {
                let _ = writeln!(out, "{}", not_simulated_header(n));
                for e in &n.errors {
                    let _ = writeln!(out, "  {}", stopping_line(e));
                }
                out.push('\n');
                continue;
            }
        };
        let _ = writeln!(out, "{}", header(s));
        let columns = columns(s);
        let rows: Vec<Vec<String>> =
            s.lines.iter().map(|l| columns.iter().map(|c| c.table_cell(l)).collect()).collect();
        let mut widths: Vec<usize> = columns.iter().map(|c| c.title.chars().count()).collect();
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String], out: &mut String| {
            let mut text = String::new();
            for ((cell, w), column) in cells.iter().zip(&widths).zip(&columns) {
                let pad = w - cell.chars().count();
                if column.number {
                    text.push_str(&" ".repeat(pad));
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    text.push_str(&" ".repeat(pad));
                }
                text.push_str("  ");
            }
            let _ = writeln!(out, "  {}", text.trim_end());
        };
        line(&columns.iter().map(|c| c.title.to_string()).collect::<Vec<_>>(), &mut out);
        for r in &rows {
            line(r, &mut out);
        }
        let _ = writeln!(out, "  total: {}", totals(s));
        for line in memory_summary(s).lines() {
            let _ = writeln!(out, "  {line}");
        }
        out.push('\n');
    }
    out
}

/// The report as Markdown, ready for a pull-request comment.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    for entry in report.entries() {
        let s = match entry {
            Entry::Simulated(s) => s,
            Entry::NotSimulated(n) => {
                let _ = writeln!(out, "### {}\n", not_simulated_header(n));
                for e in &n.errors {
                    let _ = writeln!(out, "- `{}:{}:{}` error[{}]: {}", e.file, e.line, e.column, e.code, e.message);
                }
                out.push('\n');
                continue;
            }
        };
        let _ = writeln!(out, "### {}\n", header(s));
        let columns = columns(s);
        let titles: Vec<&str> = columns.iter().map(|c| if c.title == "x" { "×" } else { c.title }).collect();
        let _ = writeln!(out, "| {} |", titles.join(" | "));
        let rules: Vec<&str> = columns.iter().map(|c| if c.number { "---:" } else { "---" }).collect();
        let _ = writeln!(out, "|{}|", rules.join("|"));
        for l in &s.lines {
            let cells: Vec<String> = columns.iter().map(|c| c.markdown_cell(l)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(out, "\n**Total:** {}\n", totals(s));
        for line in memory_summary(s).lines() {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(627_816), "627,816");
        assert_eq!(thousands(999), "999");
        assert_eq!(bytes(12_845_056), "12.2 MiB");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(count(1_936_000_000), "1.94 G");
    }
}
