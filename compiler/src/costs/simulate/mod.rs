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
use crate::knobs::{CacheKind, ConvAlgorithm, Loss, Optimizer, Precision};
use crate::op::{Autocast, Family, Op};
use crate::shapes::ops::{ArgValue, cache_length, cache_window, cached_tokens};
use crate::shapes::{DType, Dim};

use super::autograd::{GradFlow, Mode, Saved, memory};
use super::layout::Layouts;
use super::product;

mod knobs;
mod lines;
mod passes;
mod results;
mod storage;
mod timeline;

use self::knobs::*;
pub use self::knobs::{Cache, Config, GenerateStep, Segments, Sharding, tensor_dtypes};
use self::lines::*;
use self::passes::*;
pub use self::results::*;
use self::storage::*;
use self::timeline::*;

/// The parameter storages of a graph: one per weight (shared weights once), by node.
struct Params {
    /// For each node, its parameter storage and element count.
    of_node: Vec<Option<(usize, i128)>>,
    /// For each node with a parameter storage, that storage's index in `all`.
    index_of_node: Vec<usize>,
    /// All parameter storages.
    all: Vec<Param>,
    /// For each `buffer` node, the storage of its buffer (its output is that storage).
    buffer_of_node: Vec<Option<usize>>,
    /// For each `kv_cache` node of a run with a cache, the cache that exists before it runs:
    /// a dynamic cache's tokens of earlier steps (none in a prefill), a paged cache's blocks.
    cache_of_node: Vec<Option<usize>>,
}

/// A node's parameter storage: one for all its weights.
struct Param {
    /// Its element count.
    elements: i128,
    /// The element count of each of its tensors (`weight`, `bias`): the optimizer keeps state
    /// and makes temporaries per tensor.
    tensors: Vec<i128>,
    /// The line of its node.
    line: LineId,
    /// Whether it is trained (not frozen): it gets a gradient and optimizer state.
    trained: bool,
    /// Whether it is float32 whatever the policy (`fp32(...)`), and so are its gradient and
    /// optimizer state.
    fp32: bool,
}

/// Each node's memory behaviour, and whether it is a reshape that copies: one pass in
/// program order, since both depend on the strides the node's inputs were made with.
/// `dtypes` are the run's ([`tensor_dtypes`]): a cast to the dtype the run gives its input
/// already is the input (`Tensor.to` returns `self`).
fn behaviours(graph: &Graph, mode: &Mode, dtypes: &[DType]) -> (Vec<super::autograd::OpMemory>, Vec<bool>) {
    let mut layouts = Layouts::new(graph);
    let mut behaviours = Vec::with_capacity(graph.nodes.len());
    let mut copies = Vec::with_capacity(graph.nodes.len());
    for node in &graph.nodes {
        let same_dtype = matches!(node.op, Op::To | Op::TypeAs)
            && matches!((node.inputs.first(), node.outputs.first()), (Some(i), Some(o)) if dtypes[i.0 as usize] == dtypes[o.0 as usize]);
        let behaviour = memory(node, graph, mode, &layouts, dtypes);
        let behaviour = if same_dtype {
            super::autograd::OpMemory { grad_inputs: behaviour.grad_inputs, ..super::autograd::identity() }
        } else {
            behaviour
        };
        let copy = matches!(node.op, Op::Flatten | Op::Reshape) && layouts.reshape_copies(graph, node);
        layouts.record(graph, node, behaviour.alias.is_some(), copy, behaviour.layout);
        behaviours.push(behaviour);
        copies.push(copy);
    }
    (behaviours, copies)
}

/// The checkpoint segment of each node (0: none): with `checkpoint` in training, the calls
/// the model marks with `checkpoint(...)`, or, where it marks none, each block call of the
/// model's body.
fn segments(graph: &Graph, config: &Config) -> Vec<u32> {
    if !(config.checkpoint && config.training) {
        return vec![0; graph.nodes.len()];
    }
    match config.segments {
        Segments::Marked if marked_segments(graph) => graph.nodes.iter().map(|n| n.origin.segment).collect(),
        Segments::Marked => graph.nodes.iter().map(|n| n.origin.outer_call).collect(),
        Segments::Inner => graph.nodes.iter().map(|n| n.origin.inner_call).collect(),
    }
}

/// Whether the model marks calls with `checkpoint(...)`.
fn marked_segments(graph: &Graph) -> bool {
    graph.nodes.iter().any(|n| n.origin.segment != 0)
}

/// The arguments of each segment's call, when the segments are the calls the model marks.
fn segment_args(graph: &Graph, config: &Config) -> HashMap<u32, Vec<TensorId>> {
    let mut args: HashMap<u32, Vec<TensorId>> = HashMap::new();
    if config.checkpoint && config.training && config.segments == Segments::Marked && marked_segments(graph) {
        for a in &graph.segment_args {
            args.entry(a.segment).or_default().push(a.tensor);
        }
    }
    args
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

/// How often (in nodes) a long replay asks whether to stop.
const CHECK_EVERY: usize = 1024;

/// Everything the phases of a run share.
struct Run<'a> {
    graph: &'a Graph,
    config: &'a Config,
    /// Called every [`CHECK_EVERY`] nodes of a pass: the caller's chance to stop a run whose
    /// result is no longer wanted (a salsa query unwinds when its revision is cancelled).
    check: &'a dyn Fn(),
    behaviours: Vec<super::autograd::OpMemory>,
    /// For each node, whether it is a `reshape`/`flatten` that copies (its input's strides
    /// do not allow a view).
    reshape_copies: Vec<bool>,
    /// Bytes of each tensor under the precision policy.
    sizes: Vec<i128>,
    /// The dtype of each tensor under the precision policy ([`tensor_dtypes`]).
    dtypes: Vec<DType>,
    params: Params,
    /// The checkpoint segment of each node (0: none).
    segment: Vec<u32>,
    /// The arguments of each marked segment's `checkpoint(...)` call (empty when the segments
    /// are not the marked calls).
    segment_args: HashMap<u32, Vec<TensorId>>,
    /// The node that made each tensor (`None` for inputs).
    producer: Vec<Option<usize>>,
    /// For each node, whether it opens a sliding-window cache layer ([`opens_sliding_layer`]).
    opens_sliding_layer: Vec<bool>,
    /// The nodes of dead branches of the autograd graph by the node after which they die
    /// ([`dead_branches`]).
    dead_after: HashMap<usize, Vec<usize>>,
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
        let bytes = product(&[elements, element_bytes]);
        let devices = self.config.sharding.devices.max(1);
        if sharded { bytes / devices + i128::from(bytes % devices != 0) } else { bytes }
    }

    /// Bytes per element of a parameter (`fp32`: kept in float32 by `fp32(...)`) as stored.
    fn param_element(&self, fp32: bool) -> i128 {
        if fp32 { 4 } else { self.config.precision.param_bytes() }
    }

    /// Bytes per element of a parameter's gradient and optimizer state: the parameter's dtype
    /// (float32 for int8 weights, whose update is float32).
    fn state_element(&self, fp32: bool) -> i128 {
        if fp32 { 4 } else { self.config.precision.state_bytes() }
    }

    fn param_bytes(&self, elements: i128, fp32: bool) -> i128 {
        self.sharded(elements, self.param_element(fp32), self.config.sharding.zero >= 3)
    }

    fn grad_bytes(&self, elements: i128, fp32: bool) -> i128 {
        self.sharded(elements, self.state_element(fp32), self.config.sharding.zero >= 2)
    }

    /// Whether the run makes 8-bit Adam's quantization maps: its optimizer is `adam8bit` and a
    /// trained tensor has the 4,096 elements that use them. On the CPU they exist from the
    /// optimizer's construction; on CUDA the first step copies them to the device.
    fn eight_bit_maps(&self) -> bool {
        self.config.optimizer.eight_bit()
            && self.params.all.iter().filter(|p| p.trained).flat_map(|p| &p.tensors).any(|&t| t >= 4096)
    }

    /// Whether bitsandbytes pages the state of a parameter tensor of `elements`: a paged
    /// optimizer on CUDA puts the moments of a tensor of 100,000 elements or more in unified
    /// memory (`get_state_buffer`: `F.get_paged`, `cudaMallocManaged`, outside PyTorch's
    /// allocator), a smaller tensor's in `torch.zeros_like`; on the CPU it falls back to
    /// `torch.zeros_like` for every tensor.
    fn pages(&self, elements: i128) -> bool {
        const PAGED_FROM: i128 = 100_000;
        self.config.optimizer.paged() && self.on_cuda() && elements >= PAGED_FROM
    }

    /// The moments of one parameter tensor of `elements` that a paged optimizer keeps in
    /// unified memory, before sharding: one byte each in 8 bits, four in 32.
    fn paged_moments(&self, elements: i128) -> i128 {
        if !self.pages(elements) {
            return 0;
        }
        product(&[elements, optimizer_state_bytes(self.config.optimizer, 4)])
    }

    /// The optimizer state of one parameter tensor of `elements` in unified memory (a paged
    /// optimizer's moments): not in PyTorch's allocator, nor in the peak.
    fn paged_state_bytes(&self, elements: i128) -> i128 {
        self.sharded(self.paged_moments(elements), 1, self.config.sharding.zero >= 1)
    }

    /// Whether the device is a CUDA GPU.
    fn on_cuda(&self) -> bool {
        self.config.mode.device.kind == super::devices::DeviceKind::Cuda
    }

    /// The optimizer state of one parameter tensor of `elements` in PyTorch's allocator (a
    /// paged optimizer's paged moments are [`Run::paged_state_bytes`]).
    fn state_bytes(&self, elements: i128, fp32: bool) -> i128 {
        let state = if self.config.optimizer.eight_bit() {
            eight_bit_adam_state(elements)
        } else {
            product(&[elements, optimizer_state_bytes(self.config.optimizer, self.state_element(fp32))])
        };
        self.sharded(state - self.paged_moments(elements), 1, self.config.sharding.zero >= 1)
    }

    /// Whether node `i` uses weights that are trained (not frozen): its own, or a weight tied
    /// to another node's (`share=`, whose storage that node owns). A 4-bit weight never is.
    fn trains(&self, i: usize) -> bool {
        self.graph.nodes[i].trains_weights()
    }

    /// Whether autograd records node `i` when its inputs require grad as `requires_grad`
    /// says (grad mode on): it trains weights, an input it differentiates requires grad, or
    /// it makes a leaf that requires grad (`requires_grad`).
    fn records(&self, i: usize, requires_grad: &[bool]) -> bool {
        let node = &self.graph.nodes[i];
        node.op == Op::RequiresGrad
            || self.trains(i)
            || self.behaviours[i].differentiable(&node.inputs).iter().any(|t| requires_grad[t.0 as usize])
    }

    /// The bytes node `i`'s `elements` parameters are stored in: a quantized layer's weight
    /// in its format ([`four_bit_storage`], [`int8_storage`]) and its bias as any parameter;
    /// the precision policy's otherwise.
    fn stored_param_bytes(&self, i: usize, elements: i128) -> i128 {
        let node = &self.graph.nodes[i];
        let fp32 = node.origin.fp32;
        let weight = node.weight_elements();
        let out = self.out_features(node);
        let stored = match node.op {
            Op::Linear4bit => four_bit_storage(weight, node.flag("double_quant")),
            Op::Linear8bit => int8_storage(weight, out),
            // gptqmodel keeps the bias as a float16 buffer too.
            Op::LinearInt4 => {
                let group = node.int_arg("group").unwrap_or(1).max(1);
                let awq = !node.is_gptq();
                let bias = product(&[elements - weight, 2]);
                return int4_storage(weight / out.max(1), out, group, awq).saturating_add(bias);
            }
            Op::LinearFp8 => fp8_storage(weight / out.max(1), out, node.int_arg("block_size").unwrap_or(0)),
            _ => return self.param_bytes(elements, fp32),
        };
        stored.saturating_add(self.param_bytes(elements - weight, fp32))
    }

    /// Transient bytes around a node's use of its weights in the `pass` (beyond its outputs
    /// in forward, its input gradients in backward): an all-gather of the full parameters
    /// (ZeRO-3), a dequantized copy (int8 weights, 4-bit layers), LLM.int8's tensors.
    fn weight_transient(&self, node: usize, pass: Pass) -> i128 {
        let Some((_, elements)) = self.params.of_node[node] else { return 0 };
        let fp32 = self.graph.nodes[node].origin.fp32;
        let mut bytes = 0;
        if self.config.sharding.zero >= 3 && self.config.sharding.devices > 1 {
            bytes += product(&[elements, self.param_element(fp32)]) - self.param_bytes(elements, fp32);
        }
        if self.config.precision == Precision::Int8 && !fp32 {
            bytes = product(&[elements, 4]).saturating_add(bytes);
        }
        let node_ref = &self.graph.nodes[node];
        let Some(&x) = node_ref.inputs.first() else { return bytes };
        let kernel = match node_ref.op {
            Op::Linear4bit => self.dequantized_weight(node_ref, x),
            Op::Linear8bit => self.int8_matmul(node_ref, x, pass),
            Op::LinearFp8 => self.fp8_matmul(node_ref, x, pass),
            Op::LinearInt4 => self.int4_matmul(node_ref, x, pass),
            _ => 0,
        };
        bytes.saturating_add(kernel)
    }

    /// The output features of a linear node (its output's last dimension).
    fn out_features(&self, node: &crate::graph::Node) -> i128 {
        node.outputs.first().and_then(|&o| self.graph.tensor(o).shape.last()).and_then(|d| d.known()).unwrap_or(0)
    }

    /// The rows (`M`), input features (`K`) and bytes per element of a linear node's input.
    fn input_rows(&self, x: crate::graph::TensorId) -> (i128, i128, i128) {
        let input = self.graph.tensor(x);
        let (elements, width) = (known(input.numel()), input.shape.last().and_then(|d| d.known()).unwrap_or(1).max(1));
        let element = if elements > 0 { self.sizes[x.0 as usize] / elements } else { 2 };
        (elements / width, width, element)
    }

    /// What a 4-bit layer holds while it multiplies (bitsandbytes 0.50's default `gemm_4bit`
    /// in forward, `dequantize_4bit` in backward): its weight dequantized to the input's dtype
    /// and, double-quantized, its float32 block scales. On CUDA at most 4 rows run the fused
    /// kernel, which dequantizes in registers.
    fn dequantized_weight(&self, node: &crate::graph::Node, x: crate::graph::TensorId) -> i128 {
        let weight = node.weight_elements();
        let (rows, _, element) = self.input_rows(x);
        if self.on_cuda() && rows <= 4 {
            return 0;
        }
        let scales = if node.flag("double_quant") { product(&[div_up(weight, 64), 4]) } else { 0 };
        product(&[weight, element]).saturating_add(scales)
    }

    /// What bitsandbytes 0.50's `MatMul8bitLt` holds beyond its result, as its CUDA path
    /// allocates (backends/cuda/ops.py, with default/ops.py's `int8_scaled_mm`), for `M` rows
    /// of `K` features in `e` bytes to `N` outputs. Forward: the input cast to float16 (a
    /// copy unless it is float16), its row-wise int8 copy (`MK`) and float32 row scales
    /// (`4M`), and with an outlier threshold `A.abs()` (`2MK`) and its `>= threshold` mask
    /// (`MK`) at once; then, with the int8 copy and scales, the int32 product (`4MN`), the
    /// float16 dequantized result (`2MN`) and its cast to the input's dtype (the result,
    /// unless float16). No outlier columns (`[M, n]` copies when there are some). Backward:
    /// the weight dequantized to the input's dtype (`eNK`, `state.CB.to(dtype_A)`) and the
    /// float32 `SCB / 127` (`4N`) it is scaled by, freed before the input's gradient is made.
    fn int8_matmul(&self, node: &crate::graph::Node, x: crate::graph::TensorId, pass: Pass) -> i128 {
        let (m, k, e) = self.input_rows(x);
        let n = self.out_features(node);
        if pass == Pass::Backward {
            let dequantized = product(&[n, k, e]);
            let grad_input = product(&[m, k, e]);
            return dequantized.saturating_add((4 * n - grad_input).max(0));
        }
        let fp16 = self.dtypes[x.0 as usize] == DType::F16;
        let half_copy = if fp16 { 0 } else { product(&[m, k, 2]) };
        let outliers = if node.float_arg("threshold").unwrap_or(0.0) > 0.0 { product(&[m, k, 3]) } else { 0 };
        let quantized = product(&[m, k]).saturating_add(4 * m);
        let quantize = half_copy.saturating_add(quantized).saturating_add(outliers);
        let result = product(&[m, n, e]);
        let multiply = quantized.saturating_add(product(&[m, n, 6])).saturating_add(if fp16 { 0 } else { result });
        quantize.max(multiply) - result
    }

    /// What gptqmodel 7.7's 4-bit layers hold beyond their result, for `M` rows of `K` features
    /// in `e` bytes to `N` outputs, in a training run; inference runs Marlin or ExLlama, which
    /// dequantize in registers (nothing). GPTQ (`TorchLinear`'s training forward): the weight
    /// dequantized in its scales' float16 (`2KN`, a compiled kernel's one output) while it is
    /// cast to the input's dtype (the copy is saved: [`autograd::memory`]), and with a bias
    /// its float16 bias cast (`eN`); nothing in backward. AWQ (`AwqGemmFn`): past 1,024 rows
    /// the weight dequantized in the input's dtype (`eKN`), else the native GEMM's eight
    /// float32 split-K partials (`32MN`), and with a bias the product before it is added
    /// (`eMN`); in backward the weight dequantized again (`eKN`). For half inputs (AWQ casts a
    /// float32 one to float16 first: not modelled). Measured:
    /// tests/fixtures/calibration/measure_int4_train.py.
    fn int4_matmul(&self, node: &crate::graph::Node, x: crate::graph::TensorId, pass: Pass) -> i128 {
        if !self.config.mode.training_step {
            return 0;
        }
        const NATIVE_GEMM_MAX_ROWS: i128 = 1024;
        const SPLIT_K: i128 = 8;
        let (m, k, e) = self.input_rows(x);
        let n = self.out_features(node);
        let dequantized = product(&[k, n, e]);
        let result = product(&[m, n, e]);
        let bias = node.flag("bias");
        match (!node.is_gptq(), pass) {
            (false, Pass::Forward) if self.dtypes[x.0 as usize] != DType::F16 => {
                let bias_cast = if bias { product(&[n, e]) } else { 0 };
                (product(&[k, n, 2]) - result).max(bias_cast)
            }
            (false, _) => 0,
            (true, Pass::Forward) => {
                let kernel = if m > NATIVE_GEMM_MAX_ROWS { dequantized } else { product(&[SPLIT_K, m, n, 4]) };
                kernel.max(if bias { result } else { 0 })
            }
            (true, Pass::Backward) => dequantized,
        }
    }

    /// What transformers' `FP8Linear` holds beyond its result, for `M` rows of `K` features
    /// in `e` bytes to `N` outputs, with blocks of `b` (0: one scale for the weight). Forward
    /// (`fp8_linear`: DeepGEMM's `per_token_cast_to_fp8`, or the Triton kernel's activation
    /// quantization): the input in float8 (`MK`) and its float32 scales, one per row and
    /// block of `b` features (`4M ceil(K / b)`; one per row without blocks). Backward
    /// (`_dequantize_fp8_weight`): the weight in the input's dtype (`eNK`), its scales cast
    /// (`e ceil(N / b) ceil(K / b)`) and repeated over the rows of a block (`e b ceil(N / b)
    /// ceil(K / b)`), freed before the input's gradient is made, except the weight.
    fn fp8_matmul(&self, node: &crate::graph::Node, x: crate::graph::TensorId, pass: Pass) -> i128 {
        let (m, k, e) = self.input_rows(x);
        let n = self.out_features(node);
        let block = node.int_arg("block_size").unwrap_or(0);
        let per_row = if block > 0 { div_up(k, block) } else { 1 };
        if pass == Pass::Forward {
            return product(&[m, k]).saturating_add(product(&[4, m, per_row]));
        }
        let weight = product(&[n, k, e]);
        let scales = if block > 0 {
            let blocks = product(&[div_up(n, block), per_row]);
            product(&[blocks, e]).saturating_add(product(&[blocks, block, e]))
        } else {
            e
        };
        weight.saturating_add((scales - product(&[m, k, e])).max(0))
    }
}

/// A pass of the run over a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// The forward pass (and a checkpoint segment's recomputation).
    Forward,
    /// The backward pass.
    Backward,
}

/// The bytes gptqmodel 7.7 stores a 4-bit weight of `inputs` x `outputs` in, with groups of
/// `group` input features: the weight packed eight to an int32 (`qweight`: GPTQ `[ceil(in /
/// 8), out]`, AWQ `[in, ceil(out / 8)]`), a packed 4-bit zero point (`qzeros`, int32 `[ceil(in
/// / group), ceil(out / 8)]`; AWQ `in / group` rows) and a float16 scale (`scales`) per group and
/// output, and for GPTQ the int32 group of each input feature (`g_idx`) and the 8-entry int32
/// shift table its dequantization unpacks with (`post_init`'s `wf_unsqueeze_zero` and
/// `wf_unsqueeze_neg_one`, two views of one tensor). Measured: the modules' buffers after
/// `post_init` (tests/fixtures/ops/measure_quant_storage.py).
fn int4_storage(inputs: i128, outputs: i128, group: i128, awq: bool) -> i128 {
    const SHIFT_TABLE: i128 = 8 * 4;
    let packed_out = div_up(outputs, 8);
    let (qweight, groups, g_idx) = if awq {
        (product(&[4, inputs, packed_out]), inputs / group, 0)
    } else {
        (product(&[4, div_up(inputs, 8), outputs]), div_up(inputs, group), product(&[4, inputs]) + SHIFT_TABLE)
    };
    qweight
        .saturating_add(product(&[4, groups, packed_out]))
        .saturating_add(product(&[2, groups, outputs]))
        .saturating_add(g_idx)
}

/// The bytes transformers' `FP8Linear` stores a weight of `inputs` x `outputs` in: one float8
/// a weight and a float32 `weight_scale_inv` per block of `block` x `block` (one for the whole
/// weight with a `block` of 0). Measured: tests/fixtures/ops/measure_quant_storage.py.
fn fp8_storage(inputs: i128, outputs: i128, block: i128) -> i128 {
    let scales = if block > 0 { product(&[div_up(outputs, block), div_up(inputs, block)]) } else { 1 };
    product(&[inputs, outputs]).saturating_add(product(&[4, scales]))
}

/// The bytes bitsandbytes 0.50 stores an LLM.int8 weight of `n` elements and `rows` output
/// features in (`Int8Params`): one int8 a weight (`CB`, the parameter's data) and a float32
/// scale a row (`SCB`). Measured: tests/fixtures/calibration/measure_int8.py.
fn int8_storage(n: i128, rows: i128) -> i128 {
    n.saturating_add(product(&[rows, 4]))
}

/// The bytes bitsandbytes 0.50 stores a 4-bit weight of `n` elements in (blocks of 64): the
/// packed weight (two a byte), the 16-entry float32 codebook, and one float32 scale a block,
/// or double-quantized one byte a block plus a float32 scale per 256 blocks, their 256-entry
/// float32 code and a float32 offset. Measured: tests/fixtures/ops/measure_qlora.py.
fn four_bit_storage(n: i128, double_quant: bool) -> i128 {
    let blocks = div_up(n, 64);
    let scales = if double_quant { blocks + 4 * div_up(blocks, 256) + 4 * 256 + 4 } else { 4 * blocks };
    div_up(n, 2) + 4 * 16 + scales
}

/// bitsandbytes 0.50's 8-bit Adam state (`Adam8bit`, `AdamW8bit`, and the paged variants'
/// bytes) of one parameter tensor of `n` elements: with at least 4,096 elements
/// (`min_8bit_size`), the two moments in one byte each and a float32 scale per block of 256
/// for each (`absmax1`, `absmax2`); a smaller tensor keeps float32 moments. The two
/// 256-entry quantization maps are shared by every tensor ([`EIGHT_BIT_MAPS`]); `step` is a
/// Python integer. Measured: tests/fixtures/ops/measure_qlora.py.
fn eight_bit_adam_state(n: i128) -> i128 {
    if n >= 4096 { 2 * n + 2 * 4 * div_up(n, 256) } else { 2 * 4 * n }
}

/// The bytes of 8-bit Adam's two float32 quantization maps (`qmap1`, `qmap2`: the dynamic
/// and unsigned dynamic maps, 256 entries each), made once for the optimizer.
pub const EIGHT_BIT_MAPS: i128 = 2 * 256 * 4;

/// Bytes of the int64 `_sliding_window_tensor` each `DynamicSlidingWindowLayer` of a dynamic
/// cache makes on the device when it is first updated (transformers 5.24's cache_utils.py),
/// held with the cache.
pub const SLIDING_WINDOW_TENSOR: i128 = 8;

/// The node that made each tensor (`None` for inputs).
fn producers(graph: &Graph) -> Vec<Option<usize>> {
    let mut producer = vec![None; graph.tensors.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        for o in node.outputs.iter() {
            producer[o.0 as usize] = Some(i);
        }
    }
    producer
}

/// For each node on a dead branch of the autograd graph, the node after which the branch
/// dies. A recorded op's graph node (and what it saved) lives as long as a tensor refers to
/// it: its outputs, and through their own graph nodes the outputs of the ops that read them
/// for a gradient. When nothing that reads its outputs records (an `argmax` of a
/// `masked_fill`, DeepSpeed's gate) and no output is the model's, the node goes when the last
/// of its outputs and of those readers' nodes is dropped, not at its backward (measured:
/// tests/fixtures/ops/measure_moe_capacity.py, the gate's `masked_fill` mask).
fn dead_branches(
    graph: &Graph,
    behaviours: &[super::autograd::OpMemory],
    producer: &[Option<usize>],
) -> Vec<Option<usize>> {
    let nodes = graph.nodes.len();
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for (i, node) in graph.nodes.iter().enumerate() {
        for &t in behaviours[i].differentiable(&node.inputs) {
            if let Some(p) = producer[t.0 as usize].filter(|_| graph.tensor(t).dtype.is_differentiable()) {
                readers[p].push(i);
            }
        }
    }
    let mut death: Vec<Option<usize>> = vec![None; nodes];
    for i in (0..nodes).rev() {
        let node = &graph.nodes[i];
        let mut last = i;
        let mut dead = !node.outputs.is_empty();
        for &o in node.outputs.iter() {
            match graph.released_after[o.0 as usize] {
                Some(after) if !graph.outputs.contains(&o) && (after as usize) < nodes => {
                    last = last.max(after as usize)
                }
                _ => dead = false,
            }
        }
        for &r in &readers[i] {
            match death[r] {
                Some(after) => last = last.max(after),
                None => dead = false,
            }
        }
        if dead {
            death[i] = Some(last);
        }
    }
    death
}

/// For each node, whether it is the first `kv_cache` call of a sliding-window layer (a
/// layer's keys are appended before its values): the call that makes its
/// [`SLIDING_WINDOW_TENSOR`].
fn opens_sliding_layer(graph: &Graph, cache: Option<&Cache>) -> Vec<bool> {
    let dynamic = cache.is_some_and(|c| c.kind == CacheKind::Dynamic);
    let mut windowed = 0usize;
    graph
        .nodes
        .iter()
        .map(|node| {
            let sliding = dynamic && node.op == Op::KvCache && cache_window(&node.args) > 0;
            windowed += usize::from(sliding);
            sliding && windowed % 2 == 1
        })
        .collect()
}

/// `ceil(a / b)` of known sizes, by the shape layer's rule (`Dim::ceil_div`).
fn div_up(a: i128, b: i128) -> i128 {
    Dim::Known(a).ceil_div(&Dim::Known(b)).and_then(|d| d.known()).unwrap_or(i128::MAX)
}

/// The tensors of the implicit loss, `cross_entropy(output, labels)` or transformers'
/// causal-LM loss (`loss causal_lm`), in bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LossTensors {
    /// log_softmax's result (saved for backward), and its gradient. Under autocast float32:
    /// log_softmax is on its "float32 with a dtype argument" list, so it runs as
    /// `log_softmax(logits, dim, dtype=float32)`, whose CUDA kernel reads half logits and
    /// writes float32 (`half_to_float`) without a float32 copy of the logits. Else in the
    /// logits' dtype.
    pub(super) log_probs: i128,
    /// The scalar loss, and its gradient.
    pub(super) scalar: i128,
    /// The gradient of the logits, in their dtype (log_softmax's backward writes it
    /// directly, in the input's dtype).
    pub(super) logits: i128,
    /// The causal-LM loss's float32 copy of half logits (`logits.float()`; 0 when the logits
    /// are float32 already, as `.float()` returns them), freed when the loss returns; its
    /// gradient is float32 too, cast back to the logits' dtype by `ToCopyBackward`.
    pub(super) upcast: i128,
    /// The causal-LM loss's labels padded by one position (`F.pad(labels, (0, 1))`, freed when
    /// the loss returns) and shifted (`labels[..., 1:].contiguous()`, kept by `nll_loss` for
    /// its backward): 0 for `cross_entropy`, whose labels are an input.
    pub(super) padded_labels: i128,
    pub(super) shifted_labels: i128,
}

impl LossTensors {
    fn of(run: &Run<'_>, output: TensorId) -> LossTensors {
        let tensor = run.graph.tensor(output);
        let elements = known(tensor.numel());
        let logits = run.sizes[output.0 as usize];
        let element = if elements > 0 { logits / elements } else { 4 };
        let f32_bytes = product(&[elements, 4]);
        match run.config.loss {
            Loss::CausalLm => {
                // `[N, S, V]` logits: labels `[N, S]`, padded to `[N, S + 1]`.
                let positions: Vec<i128> =
                    tensor.shape[..tensor.rank().saturating_sub(1)].iter().map(|d| d.known().unwrap_or(0)).collect();
                let rows = product(&positions[..positions.len().saturating_sub(1)]);
                let last = positions.last().copied().unwrap_or(1);
                LossTensors {
                    log_probs: f32_bytes,
                    scalar: 4,
                    logits,
                    upcast: if element == 4 { 0 } else { f32_bytes },
                    padded_labels: product(&[rows, last.saturating_add(1), 8]),
                    shifted_labels: product(&[rows, last, 8]),
                }
            }
            Loss::CrossEntropy if run.config.precision.mixed() => {
                LossTensors { log_probs: f32_bytes, scalar: 4, logits, ..LossTensors::default() }
            }
            Loss::CrossEntropy => LossTensors { log_probs: logits, scalar: element, logits, ..LossTensors::default() },
        }
    }
}

/// The bytes of a `kv_cache` call's cache that exist before the step, given the bytes of its
/// output (`sizes`): a dynamic cache's `context` tokens, a paged cache's blocks for the whole
/// `context + S` tokens (in its `cache_dtype`). `None` for other nodes and for a call without
/// a cache.
fn cache_before(graph: &Graph, node: &Node, sizes: &[i128], cache: &Cache) -> Option<i128> {
    if node.op != Op::KvCache {
        return None;
    }
    let (cached, out) = (cached_tokens(&node.args)?, *node.outputs.first()?);
    let tensor = graph.tensor(out);
    let tokens = cache_length(&node.args, tensor)?.max(1);
    Some(match cache.kind {
        CacheKind::Dynamic => product(&[sizes[out.0 as usize] / tokens, cached]),
        CacheKind::Paged => {
            let per_token = match cache.element {
                Some(element) => product(&[known(tensor.numel()) / tokens, element]),
                None => sizes[out.0 as usize] / tokens,
            };
            product(&[per_token, (tokens + cache.block - 1) / cache.block * cache.block])
        }
    })
}

/// The storages of the implicit loss that outlive its phase: log_softmax's result and the
/// scalar loss (until backward has run), and the causal-LM loss's shifted labels (`nll_loss`
/// keeps them for its backward).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LossStorages {
    pub(super) log_probs: Option<usize>,
    pub(super) scalar: Option<usize>,
    pub(super) shifted_labels: Option<usize>,
}

impl LossStorages {
    fn all(self) -> impl Iterator<Item = usize> {
        [self.log_probs, self.scalar, self.shifted_labels].into_iter().flatten()
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
    simulate_checked(graph, config, &|| {})
}

/// [`simulate`], calling `check` every so many nodes: a query passes salsa's
/// `unwind_if_revision_cancelled`, so that an edit never waits for a long simulation.
pub fn simulate_checked(graph: &Graph, config: &Config, check: &dyn Fn()) -> Simulation {
    let (store, lines) = replay(graph, config, Extent::Whole, None, check);
    let kept_past_checkpoint = store.kept(&store.kept_past_checkpoint);
    let dequantized_weights_kept = store.kept(&store.dequantized_weights_kept);
    Simulation {
        peak: store.peak.clone().unwrap_or(Peak {
            bytes: store.live_bytes,
            step: 1,
            phase: Phase::Forward,
            op: String::new(),
            site: None,
            breakdown: Breakdown::from_totals(&store.totals),
            allocations: store.bytes.len(),
        }),
        rounded_peak: store.rounded_peak,
        phases: store.phases,
        lines: lines.by_site(),
        timeline: store.timeline.finish(store.peak_at),
        overflowed: store.overflowed,
        kept_past_checkpoint,
        dequantized_weights_kept,
        paged_optimizer_state: store.paged_optimizer_state,
    }
}

/// The per-line figures of `graph` run as `config` says: [`simulate`]'s `lines`, with every
/// line's statement and the line of each node and value, from the parameter set-up and the
/// first forward pass only (every per-line figure is recorded there), without the rest of
/// the run or its peak.
pub fn line_figures(graph: &Graph, config: &Config) -> LineTable {
    line_figures_checked(graph, config, &|| {})
}

/// [`line_figures`], calling `check` as [`simulate_checked`] does.
pub fn line_figures_checked(graph: &Graph, config: &Config, check: &dyn Fn()) -> LineTable {
    replay(graph, config, Extent::Lines, None, check).1
}

/// The activation bytes (inputs, activations, backward temporaries) each line's ops made that
/// are live at the peak of `simulation`, a simulation of `graph` as `config` says: the run
/// again, to the peak's allocation. Lines with none are left out; what no line made (the
/// loss's tensors) is in no line.
pub fn peak_lines(graph: &Graph, config: &Config, simulation: &Simulation, check: &dyn Fn()) -> BTreeMap<Site, i128> {
    let (store, lines) = replay(graph, config, Extent::Whole, Some(simulation.peak.allocations), check);
    let by_line = store.snapshot.unwrap_or_default();
    lines.sites.iter().zip(by_line).filter(|(_, b)| *b > 0).map(|(site, b)| (site.clone(), b)).collect()
}

/// Runs `graph` as `config` says, as far as `extent`: what is live (with the peak, phases and
/// timeline of a whole run) and the per-line figures.
fn replay(
    graph: &Graph,
    config: &Config,
    extent: Extent,
    snapshot_at: Option<usize>,
    check: &dyn Fn(),
) -> (Store, LineTable) {
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
        overflowed: false,
        current_line: LineId::MAX,
        line: Vec::new(),
        node_lines: Vec::new(),
        snapshot_at,
        snapshot: None,
        kept_past_checkpoint: Vec::new(),
        paged_optimizer_state: 0,
        dequantized_weights_kept: Vec::new(),
    };
    let mut lines = Lines::new(graph);
    let dtypes = tensor_dtypes(graph, config.precision);
    let (behaviours, reshape_copies) = behaviours(graph, &mode, &dtypes);
    let producer = producers(graph);
    let dead_after = {
        let mut dead_after: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, death) in dead_branches(graph, &behaviours, &producer).into_iter().enumerate() {
            if let Some(after) = death {
                dead_after.entry(after).or_default().push(i);
            }
        }
        dead_after
    };
    let mut run = Run {
        graph,
        config,
        check,
        behaviours,
        reshape_copies,
        sizes: tensor_sizes(graph, &dtypes),
        dtypes,
        params: Params {
            of_node: vec![None; graph.nodes.len()],
            index_of_node: vec![0; graph.nodes.len()],
            all: Vec::new(),
            buffer_of_node: vec![None; graph.nodes.len()],
            cache_of_node: vec![None; graph.nodes.len()],
        },
        segment: segments(graph, config),
        segment_args: segment_args(graph, config),
        opens_sliding_layer: opens_sliding_layer(graph, config.cache.as_ref()),
        dead_after,
        producer,
        releases: release_points(graph),
    };

    // Parameters and buffers exist before anything runs.
    store.node_lines = lines.of_node.clone();
    // The owner of each tied weight (the first op given its `share` key): the ops that share
    // it use its storage, and in backward each adds a gradient to it.
    let mut owners: HashMap<&str, usize> = HashMap::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        store.at_node(i);
        let elements = known(Some(node.params.clone()));
        let key = match node.args.values.get("share") {
            Some(ArgValue::Str(key)) if !key.is_empty() => Some(key.as_str()),
            _ => None,
        };
        if let (0, Some(key)) = (elements, key)
            && let Some(&owner) = owners.get(key)
        {
            run.params.of_node[i] = run.params.of_node[owner];
            run.params.index_of_node[i] = run.params.index_of_node[owner];
        }
        if let (true, Some(key)) = (elements > 0, key) {
            owners.entry(key).or_insert(i);
        }
        if elements > 0 {
            let fp32 = node.origin.fp32;
            let bytes = run.stored_param_bytes(i, elements);
            let category = if node.op.weights_are_buffers() { Category::Buffers } else { Category::Parameters };
            let s = store.alloc(bytes, category);
            run.params.of_node[i] = Some((s, elements));
            run.params.index_of_node[i] = run.params.all.len();
            // A weight tied to another's counts once: its tensors are the node's count whole.
            let mut tensors: Vec<i128> = node.result.weights.iter().map(|w| known(Some(w.numel.clone()))).collect();
            if tensors.iter().sum::<i128>() != elements {
                tensors = vec![elements];
            }
            let trained = node.trains_weights();
            run.params.all.push(Param { elements, tensors, line: lines.of_node[i], trained, fp32 });
            let line = lines.line(lines.of_node[i]);
            line.weights = line.weights.saturating_add(bytes);
        }
        for b in &node.result.buffers {
            // `model.half()` / `.bfloat16()` convert floating buffers too (BatchNorm's running
            // statistics), but not those of an `fp32(...)` call; integer ones
            // (`num_batches_tracked`) keep their dtype.
            let element = match config.precision {
                Precision::Fp16 | Precision::Bf16 if b.dtype.is_float() && !node.origin.fp32 => 2,
                _ => b.dtype.size(),
            };
            let bytes = product(&[known(Some(b.numel.clone())), element]);
            let s = store.alloc(bytes, Category::Buffers);
            if node.op == Op::Buffer {
                run.params.buffer_of_node[i] = Some(s);
            }
            let line = lines.line(lines.of_node[i]);
            line.buffers = line.buffers.saturating_add(bytes);
        }
    }
    // 8-bit Adam makes its quantization maps when it is constructed, on the host: on the CPU
    // they exist before the run (on CUDA the first step copies them to the device).
    if config.training && run.eight_bit_maps() && !run.on_cuda() {
        store.current_line = LineId::MAX;
        store.alloc(EIGHT_BIT_MAPS, Category::OptimizerState);
    }
    // The key/value cache of earlier steps exists before the step, each `kv_cache` call's own.
    if let Some(cache) = &config.cache {
        for (i, node) in graph.nodes.iter().enumerate() {
            store.at_node(i);
            let Some(bytes) = cache_before(graph, node, &run.sizes, cache) else { continue };
            run.params.cache_of_node[i] = (bytes > 0).then(|| store.alloc(bytes, Category::KvCache));
            // A sliding layer filled by an earlier step made its window tensor then.
            if bytes > 0 && run.opens_sliding_layer[i] {
                store.alloc(SLIDING_WINDOW_TENSOR, Category::Activations);
            }
        }
    }
    let mut storage_of: Vec<Option<usize>> = vec![None; graph.tensors.len()];
    // A step of several micro-batches holds the whole batch, split into views (the graph is
    // one micro-batch's): `x.chunk(n)`, as the calibration's accumulation runs it.
    let whole_batch = if config.training { config.micro_batches.max(1) } else { 1 };
    // An input's line is its `input` statement's.
    let input_lines: HashMap<TensorId, LineId> = graph
        .stmt_values
        .iter()
        .zip(&lines.of_value)
        .flat_map(|(v, &line)| v.tensors.iter().map(move |&t| (t, line)))
        .collect();
    let generate = config.cache.and_then(|c| c.generate);
    // The sequences a `generate()` step runs: the token ids' rows.
    let rows = graph.inputs.iter().find_map(|(_, t)| token_ids(graph, *t)).map_or(1, |(rows, ..)| rows);
    for (_, t) in &graph.inputs {
        store.current_line = input_lines.get(t).copied().unwrap_or(LineId::MAX);
        let factor = if graph.batched_inputs.contains(t) { whole_batch } else { 1 };
        let mut bytes = product(&[run.sizes[t.0 as usize], factor]);
        // A decode step of `generate()` reads its token as a view of generate's ids; the
        // caller's prompt is what the input names.
        if let Some(step) = generate
            && let Some((rows, _, element)) = token_ids(graph, *t)
        {
            bytes = product(&[rows, step.prompt, element]);
        }
        storage_of[t.0 as usize] = Some(store.alloc(bytes, Category::Inputs));
        // The input is what its `input` line makes.
        if let Some(&line) = input_lines.get(t) {
            let line = lines.line(line);
            line.activations = line.activations.saturating_add(bytes);
        }
    }
    // `generate()` holds the ids of every token so far (`input_ids`, which it extends by each
    // new token): with a dynamic cache of earlier steps, `[N, context]` more integer ids. An
    // integer input as wide as the step's ids and the context together already holds them
    // (generate's `attention_mask`, declared `[N, S + past_seen_tokens()]`).
    if let Some(step) = generate {
        for bytes in generate_held(step, rows, vocabulary(graph)) {
            store.alloc(bytes, Category::Inputs);
        }
    } else if let Some(Cache { kind: CacheKind::Dynamic, context, .. }) = config.cache
        && context > 0
    {
        let ids: Vec<(i128, i128, i128)> = graph.inputs.iter().filter_map(|(_, t)| token_ids(graph, *t)).collect();
        let step = ids.iter().map(|&(_, width, _)| width).min().unwrap_or(0);
        for &(rows, width, element) in &ids {
            if width != step + context {
                store.alloc(product(&[rows, context, element]), Category::Inputs);
            }
        }
    }
    store.current_line = LineId::MAX;
    // Labels for the loss: one class index per position, for the whole batch.
    let output = graph.outputs.first().copied();
    let implicit_loss = config.training && output.is_some_and(|t| graph.tensor(t).rank() >= 1);
    // The causal-LM loss's labels are the input ids (`labels=input_ids`).
    if implicit_loss
        && config.loss == Loss::CrossEntropy
        && let Some(o) = output
    {
        let t = graph.tensor(o);
        let positions: Vec<i128> = t.shape[..t.rank() - 1].iter().map(|d| d.known().unwrap_or(0)).collect();
        store.alloc(product(&[product(&positions), 8, whole_batch]), Category::Inputs);
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
                // The autocast region ends with the forward pass.
                for s in std::mem::take(&mut forward.cast_cache) {
                    store.release(s);
                }
                // `generate()` then copies the last position's logits to float32 while the
                // model's output (and the previous step's copy) are still held.
                if let Some(step) = generate {
                    store.current_line = LineId::MAX;
                    // In a decode step the position ids have grown by a column by then.
                    let grown = if step.step > 0 { product(&[rows, 8]) } else { 0 };
                    store.alloc(next_token_logits(rows, vocabulary(graph)) + grown, Category::Inputs);
                    store.check("to (next_token_logits)", None);
                }
                break;
            }
            // Loss: cross-entropy over the output (log_softmax saved, then the scalar loss).
            store.begin(step, Phase::Loss);
            store.current_line = LineId::MAX;
            let mut loss_storages = LossStorages::default();
            let mut loss = LossTensors::default();
            if implicit_loss && let Some(o) = output {
                loss = LossTensors::of(&run, o);
                // ForCausalLMLoss: the upcast copy and the labels' padding and shift first.
                let mut transient = Vec::new();
                for (bytes, op) in [(loss.upcast, "to (loss upcast)"), (loss.padded_labels, "pad (labels)")] {
                    if bytes > 0 {
                        transient.push(store.alloc(bytes, Category::Activations));
                        store.check(op, None);
                    }
                }
                loss_storages.shifted_labels = (loss.shifted_labels > 0).then(|| {
                    let s = store.alloc(loss.shifted_labels, Category::Activations);
                    store.check("contiguous (shifted labels)", None);
                    s
                });
                loss_storages.log_probs = Some(store.alloc(loss.log_probs, Category::Activations));
                store.check(Op::CrossEntropy.name(), None);
                loss_storages.scalar = Some(store.alloc(loss.scalar, Category::Activations));
                store.check("nll_loss", None);
                for s in transient {
                    store.release(s);
                }
            }
            // The autocast region (forward and loss) exits before backward: its cast cache is
            // cleared, and only the copies autograd saved stay.
            for s in std::mem::take(&mut forward.cast_cache) {
                store.release(s);
            }
            store.begin(step, Phase::Backward);
            // DDP's gradient buckets: a flat copy of the gradients for all-reduce.
            if config.sharding.devices > 1 && config.sharding.zero == 0 && !buckets_made {
                let bytes: i128 =
                    run.params.all.iter().filter(|p| p.trained).map(|p| run.grad_bytes(p.elements, p.fp32)).sum();
                store.alloc(bytes, Category::Gradients);
                buckets_made = true;
            }
            run_backward(&run, &mut store, &mut forward, &storage_of, &mut grads, (&mut loss_storages, loss, output));
            // The output and the loss are dropped after backward, and with them the graph.
            for s in loss_storages.all().chain(std::mem::take(&mut forward.graph_held)) {
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
        for Param { elements, line, fp32, tensors, .. } in run.params.all.iter().filter(|p| p.trained) {
            let line = lines.line(*line);
            line.gradients = line.gradients.saturating_add(run.grad_bytes(*elements, *fp32));
            let state: i128 = tensors.iter().map(|&t| run.state_bytes(t, *fp32)).sum();
            line.optimizer = line.optimizer.saturating_add(state);
        }
    }
    (store, lines.finish())
}

/// An integer `[rows, width]` model input (token ids, or an attention mask): its rows, its
/// width and its element size.
fn token_ids(graph: &Graph, t: TensorId) -> Option<(i128, i128, i128)> {
    let tensor = graph.tensor(t);
    match (&tensor.shape[..], tensor.dtype.is_differentiable()) {
        ([rows, width], false) => Some((known(Some(rows.clone())), width.known()?, tensor.dtype.size())),
        _ => None,
    }
}

/// The size of the model output's last dimension (a language model's vocabulary).
fn vocabulary(graph: &Graph) -> i128 {
    graph.outputs.first().and_then(|&o| graph.tensor(o).shape.last().and_then(|d| d.known())).unwrap_or(0)
}

/// `next_token_logits = outputs.logits[:, -1].to(copy=True, dtype=torch.float32)`.
fn next_token_logits(rows: i128, vocabulary: i128) -> i128 {
    product(&[rows, vocabulary, 4])
}

/// The tensors transformers 5.24's greedy `generate()` holds while the model runs `step`
/// (measured on the CPU, tests/fixtures/ops/measure_generate.py): in the prefill, the model's
/// input ids (`prepare_inputs_for_generation` passes a clone of the prompt) and the
/// `position_ids` it passes (`[rows, prompt]` int64 each), `unfinished_sequences` (`[rows]`
/// int64), two int64 scalars and, for a batch of more than one row, the bool of its check for a
/// padding token in the prompt (none here: no attention mask is made); in decode step `t`, a
/// prompt-sized int64 tensor kept from the prefill, the ids and the position ids grown by a
/// column a token (`torch.cat`, `[rows, prompt + t]` each), the model's inputs (clones of the
/// last id and position, `[rows, 1]`), `unfinished_sequences` and the last tokens (`[rows]`),
/// the scalars, and the previous step's float32 logits.
fn generate_held(step: GenerateStep, rows: i128, vocabulary: i128) -> Vec<i128> {
    let ids = |width: i128| product(&[rows, width, 8]);
    let flags = product(&[rows, 8]);
    let scalars = 16 + (rows > 1) as i128;
    if step.step == 0 {
        vec![ids(step.prompt), ids(step.prompt), flags, scalars]
    } else {
        let width = step.prompt + step.step;
        vec![
            ids(step.prompt),
            ids(width),
            ids(width),
            flags,
            flags,
            flags,
            flags,
            scalars,
            next_token_logits(rows, vocabulary),
        ]
    }
}
