//! The memory simulation: one scenario's run replayed op by op, storage by storage.
//!
//! Every tensor storage is allocated when its op runs and freed when nothing holds it any
//! more: not the program (the elaborator's release points), not autograd (saved tensors are
//! held until their op's backward), not an alias (views and in-place results share their
//! input's storage). Training runs two steps of `zero_grad(set_to_none)`, forward, loss,
//! backward and optimizer step, as PyTorch does; step 2 is the steady state, with the
//! optimizer state allocated. The peak is the maximum of live bytes after any allocation.
//!
//! Every per-line figure is recorded during the parameter set-up and the first forward pass
//! (gradients and optimizer state follow from the parameters): [`line_figures`] replays that
//! much, without recording the peak, and [`simulate`] the whole run, on the same code path.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Arc;

use serde::Serialize;

use crate::diagnostics::FileName;
use crate::graph::{Graph, Node, Site, TensorId};
pub use crate::knobs::{ConvAlgorithm, Optimizer, Precision};
use crate::op::{Autocast, Family, Op};
use crate::shapes::ops::ArgValue;

use super::autograd::{GradFlow, Mode, Saved, memory};

/// What a storage holds, for the breakdown of a peak (the calibration's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Trainable parameters.
    Parameters,
    /// Buffers (BatchNorm running statistics).
    Buffers,
    /// The model's inputs and the labels.
    Inputs,
    /// Parameter gradients (`p.grad`).
    Gradients,
    /// Optimizer state (momentum, Adam's moments).
    OptimizerState,
    /// Tensors made in forward or loss and still alive (saved for backward, outputs).
    Activations,
    /// Tensors made in backward that are not `.grad` (activation gradients).
    BackwardTemporaries,
    /// Tensors made in the optimizer step that are not its state.
    OptimizerTemporaries,
    /// Kernel workspace (im2col buffers, cuDNN workspace), transient at its op.
    Workspace,
}

const CATEGORIES: usize = 9;

/// Bytes per category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Breakdown {
    /// Trainable parameters.
    pub parameters: i128,
    /// Buffers.
    pub buffers: i128,
    /// Inputs and labels.
    pub inputs: i128,
    /// Parameter gradients.
    pub gradients: i128,
    /// Optimizer state.
    pub optimizer_state: i128,
    /// Forward tensors still alive.
    pub activations: i128,
    /// Backward temporaries.
    pub backward_temporaries: i128,
    /// Optimizer temporaries.
    pub optimizer_temporaries: i128,
    /// Kernel workspace.
    pub workspace: i128,
}

impl Breakdown {
    fn from_totals(t: &[i128; CATEGORIES]) -> Self {
        Breakdown {
            parameters: t[0],
            buffers: t[1],
            inputs: t[2],
            gradients: t[3],
            optimizer_state: t[4],
            activations: t[5],
            backward_temporaries: t[6],
            optimizer_temporaries: t[7],
            workspace: t[8],
        }
    }

    /// The sum.
    pub fn total(&self) -> i128 {
        self.parameters
            + self.buffers
            + self.inputs
            + self.gradients
            + self.optimizer_state
            + self.activations
            + self.backward_temporaries
            + self.optimizer_temporaries
            + self.workspace
    }
}

/// A phase of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// `optimizer.zero_grad(set_to_none=True)`.
    ZeroGrad,
    /// The model's forward pass.
    Forward,
    /// The loss.
    Loss,
    /// `loss.backward()`.
    Backward,
    /// `optimizer.step()`.
    Step,
}

impl Phase {
    /// The phase's name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::ZeroGrad => "zero_grad",
            Phase::Forward => "forward",
            Phase::Loss => "loss",
            Phase::Backward => "backward",
            Phase::Step => "step",
        }
    }
}

/// How the scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Grad recording, module mode, device.
    pub mode: Mode,
    /// A training step (forward, loss, backward, step) rather than a forward pass.
    pub training: bool,
    /// The optimizer (training).
    pub optimizer: Optimizer,
    /// The foreach implementation (one list-wide temporary) rather than the for-loop.
    pub foreach: bool,
    /// Bytes of convolution workspace per op, from the algorithm.
    pub conv_algorithm: ConvAlgorithm,
    /// `cudnn.benchmark`: the first iteration tries every algorithm.
    pub cudnn_benchmark: bool,
    /// The precision policy.
    pub precision: Precision,
    /// Micro-batches per optimizer step (gradient accumulation); the graph is one of them.
    pub micro_batches: i128,
    /// How parameters, gradients and optimizer state are spread over data-parallel devices.
    pub sharding: Sharding,
    /// Activation checkpointing: each outermost block call is a segment that keeps only its
    /// inputs in forward and is recomputed in backward.
    pub checkpoint: bool,
}

/// Data parallelism and sharding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sharding {
    /// Data-parallel devices (1: none).
    pub devices: i128,
    /// ZeRO stage: 0 (plain DDP replica), 1 (optimizer state sharded), 2 (and gradients),
    /// 3 (and parameters; FSDP's full sharding).
    pub zero: u8,
}

/// The bytes of every tensor under a precision policy.
fn tensor_sizes(graph: &Graph, precision: Precision) -> Vec<i128> {
    let elems = |t: TensorId| known(graph.tensor(t).numel());
    let mut element: Vec<i128> = graph.tensors.iter().map(|t| t.dtype.size()).collect();
    let half = match precision {
        Precision::Fp16 | Precision::Bf16 => Some(2),
        _ => None,
    };
    for (t, ty) in graph.tensors.iter().enumerate() {
        if ty.dtype.is_float()
            && let Some(h) = half
        {
            element[t] = h;
        }
    }
    if precision.mixed() {
        for node in &graph.nodes {
            for &o in node.outputs.iter() {
                if !graph.tensor(o).dtype.is_float() {
                    continue;
                }
                element[o.0 as usize] = match node.op.autocast() {
                    Autocast::Half => 2,
                    Autocast::Float => 4,
                    Autocast::Promote => {
                        // Type promotion: the widest float input.
                        node.inputs
                            .iter()
                            .filter(|i| graph.tensor(**i).dtype.is_float())
                            .map(|i| element[i.0 as usize])
                            .max()
                            .unwrap_or(4)
                    }
                };
            }
        }
    }
    graph.tensors.iter().enumerate().map(|(t, _)| elems(TensorId(t as u32)) * element[t]).collect()
}

/// A peak: when and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Peak {
    /// Live bytes at the peak.
    pub bytes: i128,
    /// The step (1 or 2).
    pub step: u8,
    /// The phase.
    pub phase: Phase,
    /// The op that had just allocated (`conv2d`, `conv2d backward`, `adam`).
    pub op: String,
    /// The source line of that op, if it has one.
    #[serde(skip)]
    pub site: Option<Site>,
    /// What was live, by category.
    pub breakdown: Breakdown,
}

/// A phase's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhaseFigures {
    /// Step 1 or 2.
    pub step: u8,
    /// The phase.
    pub phase: Phase,
    /// Live bytes when it started.
    pub start: i128,
    /// Peak during it.
    pub peak: i128,
    /// Live bytes when it ended.
    pub end: i128,
}

/// Memory attributed to one source line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LineMemory {
    /// Parameters created by the line's ops.
    pub weights: i128,
    /// Buffers.
    pub buffers: i128,
    /// Their gradients (training).
    pub gradients: i128,
    /// Optimizer state for them (training, steady state).
    pub optimizer: i128,
    /// Bytes the line's ops keep for backward (saved tensors and the extra tensors made for
    /// backward); without autograd, the bytes of what the line makes.
    pub activations: i128,
    /// The largest transient workspace of the line's ops.
    pub workspace: i128,
}

/// The per-line figures of a run, as the simulation groups them: its lines (one per
/// statement), the line of each node and of each statement value, and each line's memory.
/// [`line_figures`] computes them without the rest of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTable {
    /// Each line's statement, in the order lines first appear among the graph's statement
    /// values (the order they first finished running), then among its nodes. Shared with the
    /// rows made from the table (thousands of sites in a large model).
    pub sites: Arc<[Site]>,
    /// The line (an index in `sites`) of each of the graph's nodes.
    pub of_node: Vec<u32>,
    /// The line of each of the graph's statement values (`Graph::stmt_values`).
    pub of_value: Vec<u32>,
    /// Each line's memory; `None` for a line nothing was recorded for (all zero).
    pub memory: Vec<Option<LineMemory>>,
}

impl LineTable {
    /// The memory of the lines that have a record, by statement ([`Simulation::lines`]).
    pub fn by_site(self) -> BTreeMap<Site, LineMemory> {
        self.sites.iter().cloned().zip(self.memory).filter_map(|(site, m)| Some((site, m?))).collect()
    }
}

/// The result of simulating a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Simulation {
    /// The allocated peak (exact storage bytes, as `memory_allocated()` without rounding).
    pub peak: Peak,
    /// The peak with each allocation rounded as the device's allocator rounds it.
    pub rounded_peak: i128,
    /// Every phase of every step.
    pub phases: Vec<PhaseFigures>,
    /// Per source line.
    #[serde(skip)]
    pub lines: BTreeMap<Site, LineMemory>,
    /// Live bytes over the run, downsampled (for plots; not in the JSON report).
    #[serde(skip)]
    pub timeline: Timeline,
}

/// One moment of the run: what was live just after an allocation was checked for the peak,
/// or when a phase began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Its position in the run: how many samples came before it (before downsampling).
    pub at: u32,
    /// The step (1 or 2).
    pub step: u8,
    /// The phase.
    pub phase: Phase,
    /// The op that had just allocated; empty when the sample marks a phase's start or the
    /// end of the run.
    pub op: String,
    /// Live bytes by category.
    pub live: Breakdown,
}

/// The run's live bytes over time: a sample after every check for the peak and at every
/// phase's start, downsampled on long runs to about [`TIMELINE_POINTS`] samples. Every phase
/// start, the end and the peak are always kept; between them, each bucket of consecutive
/// samples keeps its lowest and its highest, so spikes survive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// The samples kept, in run order.
    pub samples: Vec<Sample>,
    /// How many samples the run made (the `at` of the last one, plus one).
    pub recorded: u32,
    /// The `at` of the sample where the peak was reached.
    pub peak_at: u32,
}

impl Timeline {
    /// The sample of the peak.
    pub fn peak(&self) -> Option<&Sample> {
        self.samples.iter().find(|s| s.at == self.peak_at)
    }
}

/// About how many samples a timeline keeps.
pub const TIMELINE_POINTS: usize = 2000;

/// Builds a [`Timeline`] in one pass: samples are grouped in buckets of `width` consecutive
/// samples, each keeping its lowest and highest; when more than [`TIMELINE_POINTS`] are
/// kept, the width doubles and the kept samples are merged pairwise. Linear overall.
#[derive(Default)]
struct Recorder {
    /// Samples kept, with whether they must stay (phase starts, the end).
    kept: Vec<(Sample, bool)>,
    width: u64,
    count: u64,
    /// The current bucket and its lowest and highest samples so far.
    bucket: u64,
    low: Option<Sample>,
    high: Option<Sample>,
}

impl Recorder {
    fn record(&mut self, step: u8, phase: Phase, op: &str, totals: &[i128; CATEGORIES], forced: bool) {
        let at = self.count;
        self.count += 1;
        let total: i128 = totals.iter().sum();
        let at = at.min(u32::MAX as u64) as u32;
        let width = self.width.max(1);
        if forced {
            self.flush();
            let sample = Sample { at, step, phase, op: op.to_string(), live: Breakdown::from_totals(totals) };
            self.kept.push((sample, true));
        } else {
            if at as u64 / width != self.bucket {
                self.flush();
                self.bucket = at as u64 / width;
            }
            // Most samples replace the bucket's lowest or highest: overwritten in place, their
            // op's text reuses the string already there.
            if self.high.as_ref().is_none_or(|h| total > h.live.total()) {
                overwrite(&mut self.high, at, step, phase, op, totals);
            }
            if self.low.as_ref().is_none_or(|l| total < l.live.total()) {
                overwrite(&mut self.low, at, step, phase, op, totals);
            }
        }
        if self.kept.len() > TIMELINE_POINTS {
            self.compact();
        }
    }

    /// Moves the current bucket's lowest and highest samples to `kept`, in run order.
    fn flush(&mut self) {
        let (low, high) = (self.low.take(), self.high.take());
        match (low, high) {
            (Some(l), Some(h)) if l.at == h.at => self.kept.push((h, false)),
            (Some(l), Some(h)) => {
                let (a, b) = if l.at < h.at { (l, h) } else { (h, l) };
                self.kept.push((a, false));
                self.kept.push((b, false));
            }
            (Some(s), None) | (None, Some(s)) => self.kept.push((s, false)),
            (None, None) => {}
        }
    }

    /// Doubles the bucket width and merges the kept samples accordingly.
    fn compact(&mut self) {
        self.width = self.width.max(1) * 2;
        let width = self.width;
        let old = std::mem::take(&mut self.kept);
        let mut group: Option<u64> = None;
        let (mut low, mut high): (Option<Sample>, Option<Sample>) = (None, None);
        let mut out: Vec<(Sample, bool)> = Vec::with_capacity(old.len() / 2 + 2);
        let flush = |low: &mut Option<Sample>, high: &mut Option<Sample>, out: &mut Vec<(Sample, bool)>| {
            let mut pair: Vec<Sample> = low.take().into_iter().chain(high.take()).collect();
            pair.sort_by_key(|s| s.at);
            pair.dedup_by_key(|s| s.at);
            out.extend(pair.into_iter().map(|s| (s, false)));
        };
        for (s, forced) in old {
            if forced {
                flush(&mut low, &mut high, &mut out);
                group = None;
                out.push((s, true));
                continue;
            }
            let g = s.at as u64 / width;
            if group != Some(g) {
                flush(&mut low, &mut high, &mut out);
                group = Some(g);
            }
            let total = s.live.total();
            if low.as_ref().is_none_or(|l| total < l.live.total()) {
                low = Some(s.clone());
            }
            if high.as_ref().is_none_or(|h| total > h.live.total()) {
                high = Some(s);
            }
        }
        flush(&mut low, &mut high, &mut out);
        self.kept = out;
        // The current bucket continues with the new width.
        self.bucket = self.count.saturating_sub(1) / width;
    }

    fn finish(mut self, peak_at: u64) -> Timeline {
        self.flush();
        Timeline {
            samples: self.kept.into_iter().map(|(s, _)| s).collect(),
            recorded: self.count.min(u32::MAX as u64) as u32,
            peak_at: peak_at.min(u32::MAX as u64) as u32,
        }
    }
}

/// Sets `slot` to a sample, reusing the string of the one it holds.
fn overwrite(slot: &mut Option<Sample>, at: u32, step: u8, phase: Phase, op: &str, totals: &[i128; CATEGORIES]) {
    match slot {
        Some(sample) => {
            sample.at = at;
            sample.step = step;
            sample.phase = phase;
            sample.op.clear();
            sample.op.push_str(op);
            sample.live = Breakdown::from_totals(totals);
        }
        None => *slot = Some(Sample { at, step, phase, op: op.to_string(), live: Breakdown::from_totals(totals) }),
    }
}

/// The storages and what is live.
struct Store {
    /// Whether the peak, the phases and the timeline are recorded (not when only the
    /// per-line figures are asked for: [`Extent::Lines`]).
    peaks: bool,
    bytes: Vec<i128>,
    category: Vec<Category>,
    live: Vec<bool>,
    /// Holders: program references, autograd saves, aliases.
    holds: Vec<u32>,
    totals: [i128; CATEGORIES],
    live_bytes: i128,
    live_rounded: i128,
    rounding: i128,
    peak: Option<Peak>,
    rounded_peak: i128,
    phase: Phase,
    step: u8,
    phases: Vec<PhaseFigures>,
    timeline: Recorder,
    /// The timeline position of the peak.
    peak_at: u64,
}

impl Store {
    fn rounded(&self, bytes: i128) -> i128 {
        let up = bytes + self.rounding - 1;
        // An i128 division is a library call; sizes and roundings fit in an i64.
        match (i64::try_from(up), i64::try_from(self.rounding)) {
            (Ok(up), Ok(rounding)) => i128::from(up / rounding * rounding),
            _ => up / self.rounding * self.rounding,
        }
    }

    fn alloc(&mut self, bytes: i128, category: Category) -> usize {
        self.bytes.push(bytes);
        self.category.push(category);
        self.live.push(true);
        self.holds.push(1);
        self.totals[category as usize] += bytes;
        self.live_bytes += bytes;
        self.live_rounded += self.rounded(bytes);
        self.bytes.len() - 1
    }

    fn hold(&mut self, s: usize) {
        self.holds[s] += 1;
    }

    /// Drops one holder; the storage is freed when none is left.
    fn release(&mut self, s: usize) {
        if !self.live[s] {
            return;
        }
        self.holds[s] = self.holds[s].saturating_sub(1);
        if self.holds[s] == 0 {
            self.live[s] = false;
            self.totals[self.category[s] as usize] -= self.bytes[s];
            self.live_bytes -= self.bytes[s];
            self.live_rounded -= self.rounded(self.bytes[s]);
        }
    }

    /// Records a possible peak just after an allocation.
    fn check(&mut self, op: &str, site: Option<&Site>) {
        if !self.peaks {
            return;
        }
        self.rounded_peak = self.rounded_peak.max(self.live_rounded);
        if let Some(figures) = self.phases.last_mut() {
            figures.peak = figures.peak.max(self.live_bytes);
        }
        if self.peak.as_ref().is_none_or(|p| self.live_bytes > p.bytes) {
            // In a forward pass nearly every allocation is a new peak: update it in place.
            let breakdown = Breakdown::from_totals(&self.totals);
            match &mut self.peak {
                Some(peak) => {
                    peak.bytes = self.live_bytes;
                    peak.step = self.step;
                    peak.phase = self.phase;
                    peak.op.clear();
                    peak.op.push_str(op);
                    peak.site = site.cloned();
                    peak.breakdown = breakdown;
                }
                None => {
                    self.peak = Some(Peak {
                        bytes: self.live_bytes,
                        step: self.step,
                        phase: self.phase,
                        op: op.to_string(),
                        site: site.cloned(),
                        breakdown,
                    })
                }
            }
            self.peak_at = self.timeline.count;
        }
        self.timeline.record(self.step, self.phase, op, &self.totals, false);
    }

    fn begin(&mut self, step: u8, phase: Phase) {
        if !self.peaks {
            return;
        }
        self.end_phase();
        self.step = step;
        self.phase = phase;
        self.phases.push(PhaseFigures { step, phase, start: self.live_bytes, peak: self.live_bytes, end: 0 });
        self.timeline.record(step, phase, "", &self.totals, true);
    }

    fn end_phase(&mut self) {
        let live = self.live_bytes;
        if let Some(figures) = self.phases.last_mut() {
            figures.end = live;
        }
    }

    /// The end of the run: the last phase ends, the timeline's last sample.
    fn end(&mut self) {
        if !self.peaks {
            return;
        }
        self.end_phase();
        self.timeline.record(self.step, self.phase, "", &self.totals, true);
    }
}

fn known(d: Option<crate::shapes::Dim>) -> i128 {
    d.and_then(|d| d.known()).unwrap_or(0)
}

/// The parameter storages of a graph: one per weight (shared weights once), by node.
struct Params {
    /// For each node, its parameter storage and element count.
    of_node: Vec<Option<(usize, i128)>>,
    /// For each node with a parameter storage, that storage's index in `all`.
    index_of_node: Vec<usize>,
    /// All parameter storages with their element counts and lines.
    all: Vec<(usize, i128, LineId)>,
}

/// A source line's index in [`Lines`].
type LineId = u32;

/// The per-line figures being summed. Each line (a statement's site) gets a dense index once,
/// so an op adds to a slot of a vector instead of searching a map of sites; the indices are
/// those of the [`LineTable`] the run returns.
struct Lines<'g> {
    /// The line of each node.
    of_node: Vec<LineId>,
    /// The line of each of the graph's statement values.
    of_value: Vec<LineId>,
    sites: Vec<&'g Site>,
    /// Each line's figures; `None` until something is recorded for it (only lines with a
    /// record appear in the result).
    figures: Vec<Option<LineMemory>>,
}

impl<'g> Lines<'g> {
    fn new(graph: &'g Graph) -> Self {
        // As many lines as statement values, about (a statement of ops only adds one; a
        // statement run many times, none): reserved, not grown by copying a large model's.
        let capacity = graph.stmt_values.len();
        let mut lines = Lines {
            of_node: Vec::new(),
            of_value: Vec::new(),
            sites: Vec::with_capacity(capacity),
            figures: Vec::with_capacity(capacity),
        };
        // Sites are numbered through a dense table by file, item and node (a model's lines
        // are thousands of sites of a few files): no hashing per op.
        let mut files: Vec<(&'g FileName, Vec<Vec<LineId>>)> = Vec::new();
        let mut id = |site: &'g Site, previous: &mut Option<(&'g Site, LineId)>| {
            // Consecutive ops are mostly of one statement: no lookup for them.
            if let Some((p, id)) = *previous
                && p == site
            {
                return id;
            }
            let at = match files.iter().position(|(f, _)| *f == &site.file) {
                Some(at) => at,
                None => {
                    files.push((&site.file, Vec::new()));
                    files.len() - 1
                }
            };
            let items = &mut files[at].1;
            let (item, node) = (site.at.item as usize, site.at.node as usize);
            if items.len() <= item {
                items.resize(item + 1, Vec::new());
            }
            let nodes = &mut items[item];
            if nodes.len() <= node {
                if nodes.is_empty() {
                    // Room for a block's few dozen nodes at once, not a copy per statement.
                    nodes.reserve(node.max(63) + 1);
                }
                nodes.resize(node + 1, LineId::MAX);
            }
            if nodes[node] == LineId::MAX {
                lines.sites.push(site);
                lines.figures.push(None);
                nodes[node] = (lines.sites.len() - 1) as LineId;
            }
            *previous = Some((site, nodes[node]));
            nodes[node]
        };
        let mut previous = None;
        // Values first: the lines are numbered in the order they first finished running.
        let of_value: Vec<LineId> = graph.stmt_values.iter().map(|v| id(&v.origin.stmt, &mut previous)).collect();
        let of_node: Vec<LineId> = graph.nodes.iter().map(|n| id(&n.origin.stmt, &mut previous)).collect();
        lines.of_node = of_node;
        lines.of_value = of_value;
        lines
    }

    /// The figures of a line, from now on part of the result.
    fn line(&mut self, id: LineId) -> &mut LineMemory {
        self.figures[id as usize].get_or_insert_with(LineMemory::default)
    }

    fn finish(self) -> LineTable {
        LineTable {
            sites: self.sites.into_iter().cloned().collect::<Arc<[Site]>>(),
            of_node: self.of_node,
            of_value: self.of_value,
            memory: self.figures,
        }
    }
}

/// The workspace of a convolution under `algorithm`, for one sample (as im2col processes
/// the batch one sample at a time).
fn conv_workspace(node: &Node, graph: &Graph, algorithm: ConvAlgorithm) -> i128 {
    if node.op.family() != Family::Conv {
        return 0;
    }
    let (Some(&x), Some(&y)) = (node.inputs.first(), node.outputs.first()) else { return 0 };
    let (x, y) = (graph.tensor(x), graph.tensor(y));
    let dim = |t: &crate::shapes::TensorType, i: usize| t.shape.get(i).and_then(|d| d.known()).unwrap_or(0);
    let int = |name: &str| match node.args.values.get(name) {
        Some(ArgValue::Int(d)) => d.known().unwrap_or(1),
        _ => 1,
    };
    let spatial = x.rank().saturating_sub(2) as u32;
    let (k, groups) = (int("k"), int("groups").max(1));
    let (cin, cout) = (dim(x, 1), dim(y, 1));
    let out_positions: i128 = (2..y.rank()).map(|i| dim(y, i)).product();
    let in_positions: i128 = (2..x.rank()).map(|i| dim(x, i)).product();
    let size = x.dtype.size();
    match algorithm {
        // Direct or implicit GEMM, what netc assumes unless told: no workspace.
        ConvAlgorithm::Auto | ConvAlgorithm::Direct => 0,
        ConvAlgorithm::Im2col => cin / groups * k.pow(spatial) * out_positions * size,
        ConvAlgorithm::Winograd if k == 3 && int("stride") == 1 => {
            // F(2x2, 3x3): 4x4 tiles over 2x2 output blocks.
            let tiles = (out_positions + 3) / 4;
            16 * (cin + cout) * tiles * size + 16 * cin * cout * size
        }
        ConvAlgorithm::Winograd => 0,
        ConvAlgorithm::Fft => {
            // Complex spectra (8 bytes a value) of the padded input and the output.
            2 * (cin + cout) * in_positions.max(out_positions) * 8
        }
    }
}

/// The largest workspace any algorithm needs for this convolution (cudnn.benchmark tries
/// them all on the first iteration).
fn benchmark_workspace(node: &Node, graph: &Graph) -> i128 {
    [ConvAlgorithm::Im2col, ConvAlgorithm::Winograd, ConvAlgorithm::Fft]
        .iter()
        .map(|a| conv_workspace(node, graph, *a))
        .max()
        .unwrap_or(0)
}

/// The checkpoint segment of each node (0: none).
fn segments(graph: &Graph, config: &Config) -> Vec<u32> {
    graph.nodes.iter().map(|n| if config.checkpoint && config.training { n.origin.outer_call } else { 0 }).collect()
}

/// The tensors dropped after each node, in tensor order; release points past the last node
/// are ignored.
fn release_points(graph: &Graph) -> Groups {
    let nodes = graph.nodes.len();
    let at = |after: &Option<u32>| after.map(|a| a as usize).filter(|&a| a < nodes);
    let mut start = vec![0; nodes + 1];
    for a in graph.released_after.iter().filter_map(at) {
        start[a + 1] += 1;
    }
    for i in 0..nodes {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut items = vec![TensorId(0); start[nodes]];
    for (t, after) in graph.released_after.iter().enumerate() {
        if let Some(a) = at(after) {
            items[next[a]] = TensorId(t as u32);
            next[a] += 1;
        }
    }
    Groups { start, items }
}

/// Everything the phases of a run share.
struct Run<'a> {
    graph: &'a Graph,
    config: &'a Config,
    behaviours: Vec<super::autograd::OpMemory>,
    /// Bytes of each tensor under the precision policy.
    sizes: Vec<i128>,
    params: Params,
    /// The checkpoint segment of each node (0: none).
    segment: Vec<u32>,
    /// The node that made each tensor (`None` for inputs).
    producer: Vec<Option<usize>>,
    /// The tensors the program drops after each node (the elaborator's release points).
    releases: Groups,
}

/// Lists of tensors by node, in one vector: those of node `i` are
/// `items[start[i]..start[i + 1]]`.
struct Groups {
    start: Vec<usize>,
    items: Vec<TensorId>,
}

impl Groups {
    fn get(&self, i: usize) -> &[TensorId] {
        &self.items[self.start[i]..self.start[i + 1]]
    }
}

impl Run<'_> {
    /// The tensors the program drops after node `i`.
    fn releases(&self, i: usize) -> &[TensorId] {
        self.releases.get(i)
    }

    /// Bytes per device of a parameter-sized tensor of `elements` held as `category`.
    fn sharded(&self, elements: i128, element_bytes: i128, sharded: bool) -> i128 {
        let bytes = elements * element_bytes;
        if sharded { (bytes + self.config.sharding.devices - 1) / self.config.sharding.devices } else { bytes }
    }

    fn param_bytes(&self, elements: i128) -> i128 {
        self.sharded(elements, self.config.precision.param_bytes(), self.config.sharding.zero >= 3)
    }

    fn grad_bytes(&self, elements: i128) -> i128 {
        self.sharded(elements, self.config.precision.state_bytes(), self.config.sharding.zero >= 2)
    }

    fn state_bytes(&self, elements: i128) -> i128 {
        let per_element = optimizer_state_bytes(self.config.optimizer, self.config.precision.state_bytes());
        self.sharded(elements, per_element, self.config.sharding.zero >= 1)
    }

    /// Transient bytes around a node's use of its weights: an all-gather of the full
    /// parameters (ZeRO-3), a dequantized copy (int8 weights).
    fn weight_transient(&self, node: usize) -> i128 {
        let Some((_, elements)) = self.params.of_node[node] else { return 0 };
        let mut bytes = 0;
        if self.config.sharding.zero >= 3 && self.config.sharding.devices > 1 {
            bytes += elements * self.config.precision.param_bytes() - self.param_bytes(elements);
        }
        if self.config.precision == Precision::Int8 {
            bytes += elements * 4;
        }
        bytes
    }
}

/// How much of a run [`replay`] goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extent {
    /// The whole run (every step), with the peak, the phases and the timeline.
    Whole,
    /// The parameter set-up and the first forward pass, without the peak, the phases and the
    /// timeline: all that the per-line figures are recorded from.
    Lines,
}

/// Simulates `graph` run as `config` says.
pub fn simulate(graph: &Graph, config: &Config) -> Simulation {
    let (store, lines) = replay(graph, config, Extent::Whole);
    Simulation {
        peak: store.peak.clone().unwrap_or(Peak {
            bytes: store.live_bytes,
            step: 1,
            phase: Phase::Forward,
            op: String::new(),
            site: None,
            breakdown: Breakdown::from_totals(&store.totals),
        }),
        rounded_peak: store.rounded_peak,
        phases: store.phases,
        lines: lines.by_site(),
        timeline: store.timeline.finish(store.peak_at),
    }
}

/// The per-line figures of `graph` run as `config` says: [`simulate`]'s `lines`, with every
/// line's statement and the line of each node and value, from the parameter set-up and the
/// first forward pass only (every per-line figure is recorded there), without the rest of
/// the run or its peak.
pub fn line_figures(graph: &Graph, config: &Config) -> LineTable {
    replay(graph, config, Extent::Lines).1
}

/// Runs `graph` as `config` says, as far as `extent`: what is live (with the peak, phases and
/// timeline of a whole run) and the per-line figures.
fn replay(graph: &Graph, config: &Config, extent: Extent) -> (Store, LineTable) {
    let mode = config.mode;
    let mut store = Store {
        peaks: extent == Extent::Whole,
        bytes: Vec::new(),
        category: Vec::new(),
        live: Vec::new(),
        holds: Vec::new(),
        totals: [0; CATEGORIES],
        live_bytes: 0,
        live_rounded: 0,
        rounding: mode.device.allocation_rounding(),
        peak: None,
        rounded_peak: 0,
        phase: Phase::Forward,
        step: 1,
        phases: Vec::new(),
        timeline: Recorder::default(),
        peak_at: 0,
    };
    let mut lines = Lines::new(graph);
    let mut run = Run {
        graph,
        config,
        behaviours: graph.nodes.iter().map(|n| memory(n, graph, &mode)).collect(),
        sizes: tensor_sizes(graph, config.precision),
        params: Params {
            of_node: vec![None; graph.nodes.len()],
            index_of_node: vec![0; graph.nodes.len()],
            all: Vec::new(),
        },
        segment: segments(graph, config),
        producer: {
            let mut producer = vec![None; graph.tensors.len()];
            for (i, node) in graph.nodes.iter().enumerate() {
                for o in node.outputs.iter() {
                    producer[o.0 as usize] = Some(i);
                }
            }
            producer
        },
        releases: release_points(graph),
    };

    // Parameters and buffers exist before anything runs.
    for (i, node) in graph.nodes.iter().enumerate() {
        let elements = known(Some(node.params.clone()));
        if elements > 0 {
            let bytes = run.param_bytes(elements);
            let s = store.alloc(bytes, Category::Parameters);
            run.params.of_node[i] = Some((s, elements));
            run.params.index_of_node[i] = run.params.all.len();
            run.params.all.push((s, elements, lines.of_node[i]));
            lines.line(lines.of_node[i]).weights += bytes;
        }
        for b in &node.result.buffers {
            let bytes = known(Some(b.numel.clone())) * b.dtype.size();
            store.alloc(bytes, Category::Buffers);
            lines.line(lines.of_node[i]).buffers += bytes;
        }
    }
    let mut storage_of: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    for (_, t) in &graph.inputs {
        storage_of[t.0 as usize] = Some(store.alloc(run.sizes[t.0 as usize], Category::Inputs));
    }
    // Labels for the loss: one class index per position.
    let output = graph.outputs.first().copied();
    let implicit_loss = config.training && output.is_some_and(|t| graph.tensor(t).rank() >= 1);
    if implicit_loss && let Some(o) = output {
        let t = graph.tensor(o);
        let positions: i128 = t.shape[..t.rank() - 1].iter().map(|d| d.known().unwrap_or(0)).product();
        store.alloc(positions * 8, Category::Inputs);
    }

    let steps = if config.training { 2 } else { 1 };
    // Micro-batches after the second repeat what the second did.
    let micro_batches = config.micro_batches.clamp(1, 2);
    let mut grads: Vec<Option<usize>> = vec![None; run.params.all.len()];
    let mut buckets_made = false;
    let mut optimizer_state_made = false;

    'run: for step in 1..=steps {
        if config.training {
            store.begin(step, Phase::ZeroGrad);
            for g in grads.iter_mut() {
                if let Some(s) = g.take() {
                    store.release(s);
                }
            }
        }
        for micro in 0..micro_batches {
            store.begin(step, Phase::Forward);
            let first = step == 1 && micro == 0;
            let mut forward = run_forward(&run, &mut store, &mut storage_of, &mut lines, first);
            if extent == Extent::Lines {
                // Nothing after the first forward pass records a line's figures.
                break 'run;
            }
            if !config.training {
                break;
            }
            // Loss: cross-entropy over the output (log_softmax saved, then the scalar loss).
            store.begin(step, Phase::Loss);
            let mut loss_storages = Vec::new();
            let mut output_grad_bytes = 0;
            if implicit_loss && let Some(o) = output {
                let log_probs = known(graph.tensor(o).numel()) * 4;
                loss_storages.push(store.alloc(log_probs, Category::Activations));
                store.check("cross_entropy", None);
                loss_storages.push(store.alloc(4, Category::Activations));
                store.check("nll_loss", None);
                output_grad_bytes = run.sizes[o.0 as usize];
            }
            store.begin(step, Phase::Backward);
            // DDP's gradient buckets: a flat copy of the gradients for all-reduce.
            if config.sharding.devices > 1 && config.sharding.zero == 0 && !buckets_made {
                let elements: i128 = run.params.all.iter().map(|(_, e, _)| e).sum();
                store.alloc(run.grad_bytes(elements), Category::Gradients);
                buckets_made = true;
            }
            run_backward(
                &run,
                &mut store,
                &mut forward,
                &storage_of,
                &mut grads,
                (&loss_storages, output_grad_bytes, output),
            );
            // The output and the loss are dropped after backward.
            for s in loss_storages {
                store.release(s);
            }
            for &t in &graph.outputs {
                if let Some(s) = storage_of[t.0 as usize] {
                    store.release(s);
                }
            }
        }
        if config.training {
            store.begin(step, Phase::Step);
            run_step(&run, &mut store, &mut optimizer_state_made);
        }
    }
    store.end();
    // Gradients and optimizer state per line (training).
    if config.training {
        for &(_, elements, line) in &run.params.all {
            let elements = &elements;
            let line = lines.line(line);
            line.gradients += run.grad_bytes(*elements);
            line.optimizer += run.state_bytes(*elements);
        }
    }
    (store, lines.finish())
}

/// What the forward pass leaves for backward: per node, the storages autograd holds.
struct Forward {
    saved: Vec<Vec<usize>>,
    requires_grad: Vec<bool>,
    /// For each checkpoint segment, the storages of its inputs, held until its backward.
    segment_inputs: HashMap<u32, Vec<usize>>,
}

fn run_forward(
    run: &Run<'_>,
    store: &mut Store,
    storage_of: &mut [Option<usize>],
    lines: &mut Lines<'_>,
    first_step: bool,
) -> Forward {
    let (graph, config) = (run.graph, run.config);
    let recording = config.mode.grad;
    let mut requires_grad = vec![false; graph.tensors.len()];
    let mut strided = vec![false; graph.tensors.len()];
    let mut saved: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
    // Which line made each storage (by storage), and which storages autograd keeps: a line's
    // "activations" are the bytes it made that are kept for backward. Only the first step's
    // forward pass records them.
    let mut producer: Vec<Option<LineId>> = Vec::new();
    if first_step {
        for (value, &line) in graph.stmt_values.iter().zip(&lines.of_value) {
            for &t in value.tensors.iter().filter(|t| **t >= value.first_new) {
                if let Some(s) = storage_of[t.0 as usize] {
                    made_by(&mut producer, s, line, false);
                }
            }
        }
    }
    let mut kept: Vec<usize> = Vec::new();
    let mut segment_inputs: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let behaviour = &run.behaviours[i];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        let op = node.op.name();
        let site = &node.origin.stmt;
        let needs_grad =
            recording && (run.params.of_node[i].is_some() || inputs.iter().any(|t| requires_grad[t.0 as usize]));
        // Inside a checkpoint segment nothing is saved; the segment keeps its inputs.
        let segment = run.segment[i];
        let records = needs_grad && segment == 0;
        if needs_grad && segment != 0 {
            for &input in inputs {
                let outside = run.producer[input.0 as usize].is_none_or(|p| run.segment[p] != segment);
                if outside && let Some(s) = storage_of[input.0 as usize] {
                    let held = segment_inputs.entry(segment).or_default();
                    if !held.contains(&s) {
                        store.hold(s);
                        held.push(s);
                    }
                }
            }
        }
        let mut made = 0;
        // A `parameter` op's output is the parameter's own storage.
        if node.op == Op::Parameter
            && let (Some(&out), Some((s, _))) = (outputs.first(), run.params.of_node[i])
        {
            store.hold(s);
            storage_of[out.0 as usize] = Some(s);
            requires_grad[out.0 as usize] = recording;
            store.check(op, Some(site));
            for t in run.releases(i) {
                if let Some(s) = storage_of[t.0 as usize] {
                    store.release(s);
                }
            }
            continue;
        }
        for &out in outputs {
            let input = behaviour.alias.and_then(|k| inputs.get(k).copied());
            // A view of a strided tensor reshaped is a copy.
            let copy = matches!(node.op, Op::Flatten | Op::Reshape) && input.is_some_and(|t| strided[t.0 as usize]);
            match input.and_then(|t| storage_of[t.0 as usize]) {
                Some(s) if !copy => {
                    store.hold(s);
                    storage_of[out.0 as usize] = Some(s);
                    strided[out.0 as usize] = behaviour.strided || input.is_some_and(|t| strided[t.0 as usize]);
                }
                _ => {
                    let bytes = run.sizes[out.0 as usize];
                    let s = store.alloc(bytes, Category::Activations);
                    storage_of[out.0 as usize] = Some(s);
                    if first_step {
                        made_by(&mut producer, s, lines.of_node[i], true);
                    }
                    made += bytes;
                }
            }
            requires_grad[out.0 as usize] = needs_grad;
        }
        let mut extra_saved = Vec::new();
        // Autocast: the half-precision copies of the weights (cached for the forward and
        // saved for backward) and of float32 inputs.
        if config.precision.mixed() && node.op.autocast() == Autocast::Half {
            if let Some((_, elements)) = run.params.of_node[i] {
                extra_saved.push(store.alloc(elements * 2, Category::Activations));
            }
            for &input in inputs {
                if run.sizes[input.0 as usize] == 4 * known(graph.tensor(input).numel())
                    && graph.tensor(input).dtype.is_float()
                {
                    extra_saved.push(store.alloc(known(graph.tensor(input).numel()) * 2, Category::Activations));
                }
            }
        }
        if records {
            for &s in &extra_saved {
                saved[i].push(s);
            }
            for s in behaviour.saved.as_slice() {
                let storage = match *s {
                    Saved::Input(k) => inputs.get(k).and_then(|t| storage_of[t.0 as usize]),
                    Saved::Output(k) => outputs.get(k).and_then(|t| storage_of[t.0 as usize]),
                    Saved::Extra(bytes) if bytes > 0 => {
                        let s = store.alloc(bytes, Category::Activations);
                        extra_saved.push(s);
                        Some(s)
                    }
                    Saved::Extra(_) => None,
                };
                if let Some(storage) = storage {
                    if !extra_saved.contains(&storage) {
                        store.hold(storage);
                    }
                    saved[i].push(storage);
                }
            }
        }
        // Tensors the kernel makes for backward even when nothing records it: freed at once.
        let mut scratch = Vec::new();
        if !records {
            scratch.append(&mut extra_saved);
            if behaviour.extras_always_made {
                for s in behaviour.saved.as_slice() {
                    if let Saved::Extra(bytes) = *s
                        && bytes > 0
                    {
                        scratch.push(store.alloc(bytes, Category::Activations));
                    }
                }
            }
        }
        let mut workspace = conv_workspace(node, graph, config.conv_algorithm);
        if config.cudnn_benchmark && first_step {
            workspace = workspace.max(benchmark_workspace(node, graph));
        }
        let transient = run.weight_transient(i);
        let w = (workspace > 0).then(|| store.alloc(workspace, Category::Workspace));
        let t = (transient > 0).then(|| store.alloc(transient, Category::Activations));
        store.check(op, Some(site));
        for s in w.into_iter().chain(t).chain(scratch) {
            store.release(s);
        }
        if first_step {
            let line = lines.line(lines.of_node[i]);
            line.workspace = line.workspace.max(workspace);
            if !records {
                line.activations += made;
            }
            for &s in &extra_saved {
                made_by(&mut producer, s, lines.of_node[i], true);
            }
            kept.extend(saved[i].iter().copied());
        }
        for t in run.releases(i) {
            if let Some(s) = storage_of[t.0 as usize] {
                store.release(s);
            }
        }
    }
    if first_step {
        // Each kept storage once (several nodes may save one).
        let mut counted = vec![false; store.bytes.len()];
        for s in kept {
            if !std::mem::replace(&mut counted[s], true)
                && let Some(&Some(line)) = producer.get(s)
            {
                lines.line(line).activations += store.bytes[s];
            }
        }
    }
    Forward { saved, requires_grad, segment_inputs }
}

/// Records that `line` made storage `s`: always (`replace`), or if no line did before.
fn made_by(producer: &mut Vec<Option<LineId>>, s: usize, line: LineId, replace: bool) {
    if producer.len() <= s {
        producer.resize(s + 1, None);
    }
    if replace || producer[s].is_none() {
        producer[s] = Some(line);
    }
}

/// Recomputes a checkpoint segment before its backward: its nodes run again with autograd
/// recording; what they save is held (in `forward.saved`) until their backward.
fn recompute(run: &Run<'_>, store: &mut Store, forward: &mut Forward, storage_of: &[Option<usize>], nodes: &[usize]) {
    let graph = run.graph;
    let mut recomputed: HashMap<TensorId, usize> = HashMap::new();
    let mut allocated: Vec<(TensorId, usize)> = Vec::new();
    let storage =
        |t: TensorId, recomputed: &HashMap<TensorId, usize>| recomputed.get(&t).copied().or(storage_of[t.0 as usize]);
    for &j in nodes {
        let node = &graph.nodes[j];
        let behaviour = &run.behaviours[j];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        for &out in outputs {
            match behaviour.alias.and_then(|a| inputs.get(a)).and_then(|&t| storage(t, &recomputed)) {
                Some(base) => {
                    recomputed.insert(out, base);
                }
                None => {
                    let s = store.alloc(run.sizes[out.0 as usize], Category::Activations);
                    recomputed.insert(out, s);
                    allocated.push((out, s));
                }
            }
        }
        for saved in behaviour.saved.as_slice() {
            let s = match *saved {
                Saved::Input(k) => inputs.get(k).and_then(|&t| storage(t, &recomputed)),
                Saved::Output(k) => outputs.get(k).and_then(|&t| storage(t, &recomputed)),
                Saved::Extra(bytes) if bytes > 0 => {
                    let s = store.alloc(bytes, Category::Activations);
                    forward.saved[j].push(s);
                    None
                }
                Saved::Extra(_) => None,
            };
            if let Some(s) = s {
                store.hold(s);
                forward.saved[j].push(s);
            }
        }
        store.check(&format!("{} (recompute)", node.op), Some(&node.origin.stmt));
        // What the recomputation no longer needs is dropped as it goes.
        for (t, s) in &allocated {
            if graph.released_after[t.0 as usize] == Some(j as u32) {
                store.release(*s);
            }
        }
    }
    // Results the forward pass already holds (the segment's outputs) are dropped at the end.
    for (t, s) in allocated {
        let released_inside = graph.released_after[t.0 as usize].is_some_and(|r| nodes.contains(&(r as usize)));
        if !released_inside {
            store.release(s);
        }
    }
}

fn run_backward(
    run: &Run<'_>,
    store: &mut Store,
    forward: &mut Forward,
    storage_of: &[Option<usize>],
    grads: &mut [Option<usize>],
    (loss_storages, output_grad_bytes, output): (&[usize], i128, Option<TensorId>),
) {
    let (graph, config) = (run.graph, run.config);
    // Gradient storages of tensors, shared when a gradient passes through (views, add).
    // Gradient storage by tensor.
    let mut grad_of: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    if let Some(o) = output {
        // dloss (a scalar), then the gradients of log_softmax and of the logits.
        let dloss = store.alloc(4, Category::BackwardTemporaries);
        store.check("nll_loss backward", None);
        let dlog_probs = store.alloc(known(graph.tensor(o).numel()) * 4, Category::BackwardTemporaries);
        store.check("nll_loss backward", None);
        store.release(dloss);
        // log_softmax's backward reads its saved result while writing the logits' gradient.
        let dlogits = store.alloc(output_grad_bytes, Category::BackwardTemporaries);
        store.check("log_softmax backward", None);
        if let Some(&log_probs) = loss_storages.first() {
            store.release(log_probs);
        }
        store.release(dlog_probs);
        grad_of[o.0 as usize] = Some(dlogits);
    }
    let mut segment_nodes: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, &segment) in run.segment.iter().enumerate() {
        if segment != 0 {
            segment_nodes.entry(segment).or_default().push(i);
        }
    }
    let mut recomputed_segment = 0;
    // The peak's label, written into one buffer rather than allocated per node.
    let mut label = String::new();
    for (i, node) in graph.nodes.iter().enumerate().rev() {
        let behaviour = &run.behaviours[i];
        let (inputs, outputs) = (&node.inputs[..], &node.outputs[..]);
        let segment = run.segment[i];
        if segment != 0 && segment != recomputed_segment {
            recomputed_segment = segment;
            recompute(run, store, forward, storage_of, &segment_nodes[&segment]);
        }
        let has_grad = outputs.iter().any(|o| grad_of[o.0 as usize].is_some());
        if has_grad {
            let upstream = outputs.first().and_then(|o| grad_of[o.0 as usize]);
            let mut fresh = Vec::new();
            for &input in inputs {
                if !forward.requires_grad[input.0 as usize] {
                    continue;
                }
                let existing = grad_of[input.0 as usize];
                let bytes = run.sizes[input.0 as usize];
                match (behaviour.grad, upstream, existing) {
                    (GradFlow::PassThrough, Some(g), None) => {
                        store.hold(g);
                        grad_of[input.0 as usize] = Some(g);
                    }
                    (GradFlow::PassThrough, Some(_), Some(_)) => {}
                    (_, _, None) => {
                        let g = store.alloc(bytes, Category::BackwardTemporaries);
                        grad_of[input.0 as usize] = Some(g);
                    }
                    // Accumulated in place, from a transient.
                    (_, _, Some(_)) => fresh.push(store.alloc(bytes, Category::BackwardTemporaries)),
                }
            }
            if let Some((_, elements)) = run.params.of_node[i] {
                let index = run.params.index_of_node[i];
                let bytes = run.grad_bytes(elements);
                match grads[index] {
                    None => grads[index] = Some(store.alloc(bytes, Category::Gradients)),
                    Some(_) => fresh.push(store.alloc(bytes, Category::BackwardTemporaries)),
                }
            }
            let workspace = conv_workspace(node, graph, config.conv_algorithm);
            let transient = run.weight_transient(i);
            fresh.extend((workspace > 0).then(|| store.alloc(workspace, Category::Workspace)));
            fresh.extend((transient > 0).then(|| store.alloc(transient, Category::BackwardTemporaries)));
            label.clear();
            let _ = write!(label, "{} backward", node.op);
            store.check(&label, Some(&node.origin.stmt));
            for s in fresh {
                store.release(s);
            }
        }
        // The node is done: its outputs' gradients and its saved tensors are released.
        for o in outputs {
            if let Some(g) = grad_of[o.0 as usize].take() {
                store.release(g);
            }
        }
        for &s in &forward.saved[i] {
            store.release(s);
        }
        forward.saved[i].clear();
        // The segment's backward is done: its inputs are no longer held for it.
        if segment != 0 && segment_nodes[&segment].first() == Some(&i) {
            for s in forward.segment_inputs.remove(&segment).unwrap_or_default() {
                store.release(s);
            }
        }
    }
    for g in grad_of.into_iter().flatten() {
        store.release(g);
    }
}

/// Optimizer state bytes per parameter element of `element_bytes`.
fn optimizer_state_bytes(optimizer: Optimizer, element_bytes: i128) -> i128 {
    match optimizer {
        Optimizer::Sgd => 0,
        Optimizer::Momentum | Optimizer::Adagrad | Optimizer::RmsProp => element_bytes,
        Optimizer::Adam | Optimizer::AdamW => 2 * element_bytes,
        // Row and column statistics: small next to the parameter; counted as one eighth.
        Optimizer::Adafactor => element_bytes / 8,
        // Two moments of one byte per element.
        Optimizer::Adam8bit => 2,
    }
}

fn run_step(run: &Run<'_>, store: &mut Store, state_made: &mut bool) {
    let config = run.config;
    let optimizer = config.optimizer;
    let label = match optimizer {
        Optimizer::Sgd => "sgd",
        Optimizer::Momentum => "sgd (momentum)",
        Optimizer::Adam => "adam",
        Optimizer::AdamW => "adamw",
        Optimizer::Adagrad => "adagrad",
        Optimizer::RmsProp => "rmsprop",
        Optimizer::Adafactor => "adafactor",
        Optimizer::Adam8bit => "adam8bit",
    };
    // State is created lazily, at the first step.
    if !*state_made {
        for (_, elements, _) in &run.params.all {
            let state = run.state_bytes(*elements);
            if state > 0 {
                store.alloc(state, Category::OptimizerState);
                store.check(label, None);
            }
            if matches!(optimizer, Optimizer::Adam | Optimizer::AdamW | Optimizer::Adam8bit) {
                // `state["step"]`: a float32 scalar tensor per parameter.
                store.alloc(4, Category::OptimizerState);
            }
        }
        *state_made = true;
    }
    // Temporaries of the update, each the size of a (sharded) gradient.
    let sizes: Vec<i128> = run.params.all.iter().map(|(_, e, _)| run.grad_bytes(*e)).collect();
    let per_param_temporaries = match optimizer {
        Optimizer::Sgd | Optimizer::Momentum => 0,
        // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps): two at once.
        Optimizer::Adam | Optimizer::AdamW => 2,
        Optimizer::Adagrad | Optimizer::RmsProp | Optimizer::Adafactor | Optimizer::Adam8bit => 1,
    };
    if per_param_temporaries == 0 {
        store.check(label, None);
        return;
    }
    if config.foreach {
        // One list-wide temporary (`_foreach_sqrt` of every state tensor).
        let total: i128 = sizes.iter().sum();
        let t = store.alloc(total, Category::OptimizerTemporaries);
        store.check(label, None);
        store.release(t);
    } else {
        for &bytes in &sizes {
            let temps: Vec<usize> =
                (0..per_param_temporaries).map(|_| store.alloc(bytes, Category::OptimizerTemporaries)).collect();
            store.check(label, None);
            for t in temps {
                store.release(t);
            }
        }
    }
}
