//! What a simulation answers: the peak and its breakdown by ledger, the figures of each
//! phase and of each source line, and the timeline of live bytes.

use super::*;

/// What a storage holds, for the breakdown of a peak (the calibration's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Trainable parameters.
    Parameters,
    /// Buffers (BatchNorm running statistics, rotary tables; GPTQ's and AWQ's packed
    /// weights, which gptqmodel registers as buffers).
    Buffers,
    /// The model's inputs and the labels.
    Inputs,
    /// Parameter gradients (`p.grad`).
    Gradients,
    /// Optimizer state (momentum, Adam's moments).
    OptimizerState,
    /// Tensors made in forward or loss and still alive (saved for backward, outputs).
    Activations,
    /// Tensors made in backward that are not `.grad` (activation gradients, what a
    /// checkpointed segment recomputes).
    BackwardTemporaries,
    /// Tensors made in the optimizer step that are not its state.
    OptimizerTemporaries,
    /// Kernel workspace (im2col buffers, cuDNN workspace), transient at its op.
    Workspace,
    /// The key/value cache (`kv_cache(...)` calls under `cache`): held to the end of the run.
    KvCache,
}

impl Category {
    /// Whether it belongs to the activations ledger (inputs, activations and backward
    /// temporaries), as [`Breakdown::activations_ledger`] sums it.
    pub fn in_activations_ledger(self) -> bool {
        matches!(self, Category::Inputs | Category::Activations | Category::BackwardTemporaries)
    }
}

pub(super) const CATEGORIES: usize = 10;

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
    /// The key/value cache.
    pub kv_cache: i128,
}

impl Breakdown {
    pub(super) fn from_totals(t: &[i128; CATEGORIES]) -> Self {
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
            kv_cache: t[9],
        }
    }

    /// The activations ledger: the inputs, the activations and the backward temporaries (the
    /// categories [`Category::in_activations_ledger`] names).
    pub fn activations_ledger(&self) -> i128 {
        self.inputs.saturating_add(self.activations).saturating_add(self.backward_temporaries)
    }

    /// The optimizer ledger: its state and the step's temporaries.
    pub fn optimizer_ledger(&self) -> i128 {
        self.optimizer_state.saturating_add(self.optimizer_temporaries)
    }

    /// The sum (saturating, as every byte count of a simulation: see `Simulation::overflowed`).
    pub fn total(&self) -> i128 {
        [
            self.parameters,
            self.buffers,
            self.inputs,
            self.gradients,
            self.optimizer_state,
            self.activations,
            self.backward_temporaries,
            self.optimizer_temporaries,
            self.workspace,
            self.kv_cache,
        ]
        .iter()
        .fold(0i128, |sum, &b| sum.saturating_add(b))
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
    /// How many allocations the run had made at the peak (which moment it is, for
    /// [`crate::costs::simulate::peak_lines`]).
    #[serde(skip)]
    pub allocations: usize,
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
    /// The key/value cache its `kv_cache` calls hold at the end of the run (every layer's
    /// call of the line together).
    pub kv_cache: i128,
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

impl Simulation {
    /// The key/value cache after the run: what every `kv_cache` call's cache holds once the
    /// step is done (a dynamic cache of `context + S` tokens, a paged cache's blocks).
    pub fn kv_cache_bytes(&self) -> i128 {
        self.lines.values().fold(0i128, |sum, l| sum.saturating_add(l.kv_cache))
    }
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
    /// A byte count was too large for an `i128`: the figures are saturated, not exact, and
    /// the scenario is reported as E0503 (`crate::costs::cost_diagnostics`).
    #[serde(skip)]
    pub overflowed: bool,
    /// What autograd functions keep on their `ctx` inside checkpoint segments (bitsandbytes'
    /// 8-bit layers' inputs): checkpointing does not free it.
    #[serde(skip)]
    pub kept_past_checkpoint: KeptTensors,
    /// The dequantized weights GPTQ layers saved outside checkpoint segments in the first
    /// forward pass (gptqmodel's training forward saves each layer's whole weight for its
    /// input's gradient).
    #[serde(skip)]
    pub dequantized_weights_kept: KeptTensors,
    /// The optimizer state a paged bitsandbytes optimizer keeps in CUDA unified memory
    /// (`cudaMallocManaged`): outside PyTorch's allocator and the peak, resident on the
    /// device while there is room and evicted to the host under pressure.
    pub paged_optimizer_state: i128,
}

/// Tensors that a run keeps to its backward, counted by storage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeptTensors {
    /// How many (each storage once).
    pub tensors: usize,
    /// Their bytes.
    pub bytes: i128,
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
