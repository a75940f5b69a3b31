//! The scenario's knobs as the simulation reads them ([`Config`]), and the sizes they decide:
//! each tensor's bytes under a precision policy, a convolution's workspace under an
//! algorithm, an optimizer's state per parameter element.

use super::*;
use crate::shapes::DType;

/// How the scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Grad recording, module mode, device.
    pub mode: Mode,
    /// A training step (forward, loss, backward, step) rather than a forward pass.
    pub training: bool,
    /// The optimizer (training).
    pub optimizer: Optimizer,
    /// The loss computed from the output (training).
    pub loss: crate::knobs::Loss,
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
    /// Activation checkpointing: each call marked `checkpoint(...)` (or, in a model that marks
    /// none, each outermost block call) is a segment that keeps only its inputs in forward and
    /// is recomputed in backward.
    pub checkpoint: bool,
    /// Checkpointing's reentrant variant (`use_reentrant=True`): a segment saves its inputs,
    /// and its backward recomputes it whole and holds its outputs until the segment's own
    /// backward has run.
    pub reentrant: bool,
    /// Which calls are the segments.
    pub segments: Segments,
    /// The key/value cache the `kv_cache(...)` calls append to (inference), if any.
    pub cache: Option<Cache>,
}

/// The key/value cache of an inference run (`cache`, `context`, `cache_block`, `cache_dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cache {
    /// transformers' `DynamicCache` or vLLM's paged blocks.
    pub kind: crate::knobs::CacheKind,
    /// Tokens cached before the step (the graph's `kv_cache` calls were elaborated with it).
    pub context: i128,
    /// Tokens per block of a paged cache.
    pub block: i128,
    /// Bytes per element a paged cache stores, if not the keys' own (fp8: 1).
    pub element: Option<i128>,
    /// The step of `generate()` this forward pass is, if the run is one.
    pub generate: Option<GenerateStep>,
}

/// One forward pass of `model.generate(ids, max_new_tokens=...)` (greedy): the prefill of the
/// prompt (`step` 0, an empty cache) or the decode step that reads token `step` (the cache
/// holds `prompt + step - 1` tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GenerateStep {
    /// The prompt's tokens (`seq`).
    pub prompt: i128,
    /// 0 for the prefill, `t` for the `t`-th decode step.
    pub step: i128,
    /// The tokens `generate()` makes in all (`new_tokens`).
    pub new_tokens: i128,
}

impl GenerateStep {
    /// The tokens cached before the step: none in the prefill, the prompt and the tokens
    /// read so far in a decode step.
    pub fn context(self) -> i128 {
        if self.step == 0 { 0 } else { self.prompt + self.step - 1 }
    }
}

/// Which calls activation checkpointing makes segments of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Segments {
    /// The calls the model marks `checkpoint(...)`, or, where it marks none, each block call
    /// of the model's body: what a scenario's `checkpoint` does.
    #[default]
    Marked,
    /// Each block call made inside a block call of the model's body: what marking the layers
    /// one level down would do (the advice for a model whose body is one call).
    Inner,
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

/// The dtype of each tensor under the precision policy: a half model's parameters, buffers
/// and inputs are half, and an op's float result takes its float inputs' promoted dtype (one
/// made from integers alone stays float32, the default dtype); under
/// autocast, an op's float outputs follow its autocast class (half for the ops autocast casts
/// down, float32 for those it runs in float32, their float inputs' promoted dtype for the rest); a cast
/// (`to`, `type_as`) gives its own under either; everything else keeps the dtype the model
/// declares. Under a half policy, what an `fp32(...)` call's parameters and buffers make is
/// float32.
pub fn tensor_dtypes(graph: &Graph, precision: Precision) -> Vec<DType> {
    let half = match precision {
        Precision::Fp16 | Precision::Amp => DType::F16,
        Precision::Bf16 | Precision::AmpBf16 => DType::BF16,
        Precision::Fp32 | Precision::Int8 => DType::F32,
    };
    let mut dtypes: Vec<DType> = graph.tensors.iter().map(|t| t.dtype).collect();
    // Type promotion over the float inputs (`torch.result_type`: a 0-dim one only counts
    // beside no dimensioned one).
    let promoted_input = |node: &crate::graph::Node, dtypes: &[DType]| {
        DType::result_type(
            node.inputs
                .iter()
                .map(|i| (dtypes[i.0 as usize], graph.tensor(*i).rank() == 0))
                .filter(|(d, _)| d.is_float()),
        )
    };
    if matches!(precision, Precision::Fp16 | Precision::Bf16) {
        // `model.half()`: parameters, buffers and inputs in half; an op's result in its
        // float inputs' promoted dtype, so a cast (`to(x, "f32")`, as HF's
        // RMSNorm and loss upcast) holds until a cast back.
        for dtype in dtypes.iter_mut().filter(|d| d.is_float()) {
            *dtype = half;
        }
        for node in &graph.nodes {
            for &o in node.outputs.iter() {
                let declared = graph.tensor(o).dtype;
                if !declared.is_float() {
                    continue;
                }
                // The module state of an `fp32(...)` call stays float32 (`module.float()`), and
                // so does what reads it alone (a parameter, an embedding's lookup).
                let stateless = node.result.weights.is_empty() && node.result.buffers.is_empty();
                let fp32_state = node.origin.fp32 && !stateless;
                // A float made from integers alone (`position_ids / 16384`, `i * 0.5`) is the
                // default dtype's, float32, whatever the model's dtype.
                let from_integers = stateless
                    && !node.inputs.is_empty()
                    && node.inputs.iter().all(|i| !dtypes[i.0 as usize].is_float());
                dtypes[o.0 as usize] = if fp32_state {
                    DType::F32
                } else if from_integers {
                    declared
                } else {
                    cast_dtype(node, declared, &dtypes).unwrap_or_else(|| promoted_input(node, &dtypes).unwrap_or(half))
                };
            }
        }
    }
    if precision.mixed() {
        for node in &graph.nodes {
            for &o in node.outputs.iter() {
                let declared = graph.tensor(o).dtype;
                if !declared.is_float() {
                    continue;
                }
                if let Some(cast) = cast_dtype(node, declared, &dtypes) {
                    dtypes[o.0 as usize] = cast;
                    continue;
                }
                dtypes[o.0 as usize] = match node.autocast() {
                    Autocast::Half => half,
                    Autocast::Float => DType::F32,
                    // Type promotion of the float inputs.
                    Autocast::Promote => promoted_input(node, &dtypes).unwrap_or(DType::F32),
                };
            }
        }
    }
    dtypes
}

/// The dtype an op gives its output whatever the policy: a cast's (`to`'s declared one,
/// `type_as`'s other operand's as the run has it), a factory's or a reduction's whose dtype is
/// named, an
/// in-place op's, which writes into its first operand and keeps its dtype (`bf16.div_(f32)`
/// stays bf16), a softmax given its input's dtype (`keep_dtype`: `dtype=x.dtype`, which
/// autocast leaves), and `view_as_real`'s float parts of complex numbers, which no policy
/// touches; `None` for any other op.
fn cast_dtype(node: &Node, declared: DType, dtypes: &[DType]) -> Option<DType> {
    match node.op {
        Op::To | Op::ViewAsReal => Some(declared),
        // A factory's named dtype is its own: `torch.full`/`torch.ones`/`torch.arange` make the
        // default dtype, float32, in a model `.half()` made half (OPT's position mask), and
        // `new_zeros(..., dtype=...)` the one it names; only an unnamed one (`""`, the `_like`
        // and `new_` ops' default) follows its input.
        _ if node.op.family() == Family::Factory && node.str_arg("dtype").is_some_and(|d| !d.is_empty()) => {
            Some(declared)
        }
        // So is a reduction's named accumulation dtype (`torch.sum(x, dim, dtype=torch.float32)`).
        Op::Sum | Op::Cumsum if node.str_arg("dtype").is_some_and(|d| !d.is_empty()) => Some(declared),
        Op::TypeAs => node.inputs.get(1).map(|t| dtypes[t.0 as usize]),
        _ if node.flag("inplace") || node.flag("keep_dtype") => node.inputs.first().map(|t| dtypes[t.0 as usize]),
        _ => None,
    }
}

/// The bytes of each tensor, given its dtype under the precision policy ([`tensor_dtypes`]).
pub(super) fn tensor_sizes(graph: &Graph, dtypes: &[DType]) -> Vec<i128> {
    let elems = |t: usize| known(graph.tensors[t].numel());
    dtypes.iter().enumerate().map(|(t, d)| product(&[elems(t), d.size()])).collect()
}

/// The workspace of a node: a declared `kernel`'s, or a convolution's under `algorithm`, for
/// one sample (as im2col processes the batch one sample at a time).
pub(super) fn conv_workspace(node: &Node, graph: &Graph, algorithm: ConvAlgorithm) -> i128 {
    if node.op == Op::Kernel {
        return match node.args.values.get("workspace") {
            Some(ArgValue::Int(d)) => d.known().unwrap_or(0).max(0),
            _ => 0,
        };
    }
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
    let out_positions = product(&(2..y.rank()).map(|i| dim(y, i)).collect::<Vec<_>>());
    let in_positions = product(&(2..x.rank()).map(|i| dim(x, i)).collect::<Vec<_>>());
    let size = x.dtype.size();
    match algorithm {
        // Direct or implicit GEMM, what netc assumes unless told: no workspace.
        ConvAlgorithm::Auto | ConvAlgorithm::Direct => 0,
        ConvAlgorithm::Im2col => product(&[cin / groups, k.saturating_pow(spatial), out_positions, size]),
        ConvAlgorithm::Winograd if k == 3 && int("stride") == 1 => {
            // F(2x2, 3x3): 4x4 tiles over 2x2 output blocks.
            let tiles = out_positions.saturating_add(3) / 4;
            product(&[16, cin.saturating_add(cout), tiles, size]).saturating_add(product(&[16, cin, cout, size]))
        }
        ConvAlgorithm::Winograd => 0,
        ConvAlgorithm::Fft => {
            // Complex spectra (8 bytes a value) of the padded input and the output.
            product(&[2, cin.saturating_add(cout), in_positions.max(out_positions), 8])
        }
    }
}

/// The largest workspace any algorithm needs for this convolution (cudnn.benchmark tries
/// them all on the first iteration).
pub(super) fn benchmark_workspace(node: &Node, graph: &Graph) -> i128 {
    [ConvAlgorithm::Im2col, ConvAlgorithm::Winograd, ConvAlgorithm::Fft]
        .iter()
        .map(|a| conv_workspace(node, graph, *a))
        .max()
        .unwrap_or(0)
}

/// Optimizer state bytes per parameter element of `element_bytes`.
pub(super) fn optimizer_state_bytes(optimizer: Optimizer, element_bytes: i128) -> i128 {
    match optimizer {
        Optimizer::Sgd => 0,
        Optimizer::Momentum | Optimizer::Adagrad | Optimizer::RmsProp => element_bytes,
        Optimizer::Adam | Optimizer::AdamW => element_bytes.saturating_mul(2),
        // Row and column statistics: small next to the parameter; counted as one eighth.
        Optimizer::Adafactor => element_bytes / 8,
        // Two moments of one byte per element.
        Optimizer::Adam8bit | Optimizer::PagedAdam8bit => 2,
        // float32 moments whatever the parameters' dtype (`get_state_buffer(p, torch.float32)`).
        Optimizer::PagedAdam32bit => 8,
    }
}
