//! What each op does to memory, in PyTorch's semantics: which outputs share an input's
//! storage (views and in-place ops), what autograd saves for backward, and how gradients
//! flow back (a new tensor, or the output's gradient passed through as a view).
//!
//! The rules follow PyTorch's derivatives.yaml and were checked against the calibration
//! measurements (tests/it/memory.rs).

use crate::graph::{Graph, Node, TensorId};
use crate::op::{Family, Op};

use super::product;
use crate::shapes::ops::ArgValue;

use super::devices::{Device, DeviceKind};
use super::layout::{Layouts, OutputLayout, dense_like, einsum_plan, merges_leading};
use super::sdpa;
use crate::knobs::Precision;
use crate::shapes::DType;

/// How a scenario runs the model.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// Autograd records the graph (not under `no_grad`).
    pub grad: bool,
    /// The model is in training mode (not `eval()`): dropout is active, BatchNorm uses and
    /// updates batch statistics.
    pub train: bool,
    /// The run is a training step, so the model was loaded for training: a GPTQ or AWQ layer
    /// runs the kernel gptqmodel selects for it (`backend="auto_trainable"`; the inference
    /// kernels refuse `model.train()`).
    pub training_step: bool,
    /// The device's code paths.
    pub device: &'static Device,
    /// The precision policy: which dtype a kernel sees decides some kernel choices (the
    /// attention kernel).
    pub precision: Precision,
}

/// Something autograd keeps for backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// The node's input `i` (its storage).
    Input(usize),
    /// The node's output `i`.
    Output(usize),
    /// A tensor made for backward only (a dropout mask, pooling indices, statistics).
    Extra(i128),
    /// A copy of input `i` made before an in-place op overwrote it: as large as the input
    /// is in the run (half under a half-precision policy).
    CopyOfInput(usize),
    /// Input `i`, kept only when input `j` requires grad: the gradient of `j` is what reads
    /// it (`mul`, `div`, `matmul`: PyTorch's generated autograd code saves a tensor only for
    /// a gradient it will compute).
    InputFor(usize, usize),
    /// A copy of input `i` that the kernel makes whenever it runs (a `matmul` operand it
    /// cannot fold), kept only when input `j` requires grad.
    CopyOfInputFor(usize, usize),
    /// Input `i`, kept only when the node's parameters are trained: the weight's gradient is
    /// what reads it (`linear` is `addmm`, whose generated code saves the input for the
    /// weight's gradient only; a frozen layer keeps it not).
    InputForParams(usize),
    /// A copy of input `i` that the kernel makes whenever it runs, kept only when the node's
    /// parameters are trained (`linear` on an input whose leading dimensions do not merge).
    CopyOfInputForParams(usize),
    /// Autograd's copy of input `i` made before an in-place op overwrites it, made (and kept)
    /// only when input `j` requires grad: the generated code's `original_self =
    /// self.clone()` for `mul_` and `div_`, whose `other`'s gradient reads `self`.
    OriginalInputFor(usize, usize),
}

impl Saved {
    /// The bytes of a tensor this makes for backward (`None` for the node's own inputs and
    /// outputs, and for nothing), given the node's inputs and the run's tensor sizes.
    pub fn made_bytes(self, inputs: &[crate::graph::TensorId], sizes: &[i128]) -> Option<i128> {
        match self {
            Saved::Extra(bytes) => Some(bytes),
            Saved::CopyOfInput(k)
            | Saved::CopyOfInputFor(k, _)
            | Saved::CopyOfInputForParams(k)
            | Saved::OriginalInputFor(k, _) => inputs.get(k).map(|t| sizes[t.0 as usize]),
            Saved::Input(_) | Saved::Output(_) | Saved::InputFor(..) | Saved::InputForParams(_) => None,
        }
        .filter(|&bytes| bytes > 0)
    }

    /// The input a copy is made of, for the copies an op makes of its inputs.
    pub fn copied_input(self) -> Option<usize> {
        match self {
            Saved::CopyOfInput(k)
            | Saved::CopyOfInputFor(k, _)
            | Saved::CopyOfInputForParams(k)
            | Saved::OriginalInputFor(k, _) => Some(k),
            _ => None,
        }
    }

    /// Whether autograd keeps this when the node's inputs require grad as `requires_grad`
    /// says (by tensor id), and its parameters are trained or not.
    pub fn kept(self, inputs: &[crate::graph::TensorId], requires_grad: &[bool], params_trained: bool) -> bool {
        match self {
            Saved::InputFor(_, j) | Saved::CopyOfInputFor(_, j) | Saved::OriginalInputFor(_, j) => {
                inputs.get(j).is_some_and(|t| requires_grad[t.0 as usize])
            }
            Saved::InputForParams(_) | Saved::CopyOfInputForParams(_) => params_trained,
            _ => true,
        }
    }

    /// The unconditional form: what is kept once [`Saved::kept`] holds.
    pub fn unconditional(self) -> Saved {
        match self {
            Saved::InputFor(k, _) | Saved::InputForParams(k) => Saved::Input(k),
            Saved::CopyOfInputFor(k, _) | Saved::CopyOfInputForParams(k) | Saved::OriginalInputFor(k, _) => {
                Saved::CopyOfInput(k)
            }
            other => other,
        }
    }

    /// Whether the kernel makes this tensor even when autograd does not keep it (a copy a
    /// `matmul` needs to run); autograd's own copies are made only to be kept.
    pub fn made_when_unkept(self) -> bool {
        !matches!(self, Saved::OriginalInputFor(..))
    }
}

/// How the gradient of an input is produced in backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradFlow {
    /// A new tensor the size of the input.
    New,
    /// A new tensor computed at the output's size (`grad * other` for `mul`), which the
    /// engine's `validate_outputs` then sums to a broadcast input's size (`sum_to_size`), a
    /// new tensor, freeing the full-size one.
    Broadcast,
    /// The gradient of output 0 itself, or a view of it (views, `add`, `concat`): no memory.
    PassThrough,
}

/// An op's memory behaviour. Held inline (no allocation): the simulation makes one per node
/// and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpMemory {
    /// The input whose storage every output shares (a view or an in-place result), if any.
    pub alias: Option<usize>,
    /// How the op lays out an output it allocates (a view's layout follows from its input).
    pub layout: OutputLayout,
    /// Bytes the kernel holds for a moment besides its outputs and what it makes for
    /// backward: the intermediates of a composite kernel at their largest.
    pub scratch: Scratch,
    /// What autograd saves, if it records this op.
    pub saved: SavedList,
    /// How input gradients are made.
    pub grad: GradFlow,
    /// Whether the op's kernel makes its [`Saved::Extra`] tensors even when autograd does
    /// not record it (max-pool indices, batch statistics, dropout masks are outputs of the
    /// kernel; then they are freed as soon as it returns).
    pub extras_always_made: bool,
    /// Temporaries the size of input 0 that the backward holds while it makes that input's
    /// gradient (`pow_backward`'s `exponent * self.pow(exponent - 1)`: two).
    pub backward_scratch: u8,
    /// Bytes more the backward holds while it makes input 0's gradient, in tensors not the
    /// input's size or dtype (`clamp_backward`'s bool masks and its zero scalar).
    pub backward_scratch_bytes: i128,
    /// Temporaries the size of input 0 the kernel holds while it runs, besides its outputs (a
    /// declared `kernel`'s `scratch`: a custom autograd function's elementwise steps).
    pub forward_scratch: u8,
    /// For a backward that runs as several nodes (the math attention: `math_attention`), the
    /// bytes it holds at its peak besides its saved tensors and the upstream gradient; the
    /// simulation checks that moment instead of the one when every input gradient is made
    /// and nothing is freed yet. `None`: one node.
    pub backward_staged: Option<i128>,
    /// How many of the inputs, from the first, get a gradient (`type_as` reads only its
    /// other operand's dtype: one); `u8::MAX` for all.
    pub grad_inputs: u8,
    /// How many of those the backward returns a gradient tensor for: a custom autograd
    /// function may return None for an input it still records an edge to (the node behind
    /// that input is kept, and runs in backward with no gradient); `u8::MAX` for all.
    pub grads_returned: u8,
    /// Whether a recorded op keeps input 0 as an attribute of its autograd function's `ctx`
    /// rather than through `save_for_backward`: checkpointing's saved-tensor hooks do not see
    /// it and backward does not release it, so it lives as long as the graph (until the
    /// loss's graph is freed after backward; a recomputation's graph, with the
    /// recomputation).
    pub ctx_input: bool,
    /// Whether the op's autograd function keeps its weight on `ctx` rather than through
    /// `save_for_backward` (bitsandbytes' layers): its backward unpacks nothing, so it does
    /// not start a checkpointed segment's recomputation.
    pub weights_on_ctx: bool,
}

impl OpMemory {
    /// The inputs of `node` that get a gradient from this op.
    pub fn differentiable<'a>(&self, inputs: &'a [TensorId]) -> &'a [TensorId] {
        &inputs[..inputs.len().min(self.grad_inputs as usize)]
    }

    /// The inputs of `node` the backward makes a gradient tensor for: the differentiable ones
    /// but those a custom autograd function returns None for.
    pub fn given_gradients<'a>(&self, inputs: &'a [TensorId]) -> &'a [TensorId] {
        let inputs = self.differentiable(inputs);
        &inputs[..inputs.len().min(self.grads_returned as usize)]
    }
}

/// Bytes a kernel holds while it runs and frees before it returns, when autograd records it
/// and when it does not (what is saved differs, so what is left to free does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scratch {
    /// When autograd records the op.
    pub recording: i128,
    /// When it does not.
    pub not_recording: i128,
}

/// The most tensors an op saves (`sdpa`: q, k, v, the output, the log-sum-exp and a mask).
const MAX_SAVED: usize = 6;

/// What autograd saves for one op, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedList {
    items: [Saved; MAX_SAVED],
    len: u8,
}

impl SavedList {
    fn new(items: &[Saved]) -> Self {
        let mut list = SavedList { items: [Saved::Extra(0); MAX_SAVED], len: 0 };
        for &item in items {
            list.push(item);
        }
        list
    }

    fn push(&mut self, item: Saved) {
        self.items[self.len as usize] = item;
        self.len += 1;
    }

    /// The saved tensors.
    pub fn as_slice(&self) -> &[Saved] {
        &self.items[..self.len as usize]
    }
}

/// What PyTorch's attention-kernel choice reads of an `sdpa` node in a run: ranks, the
/// element type the kernel sees (a half model's, autocast's lower precision, or the declared
/// one), head sizes and sequence lengths.
pub fn sdpa_call(node: &Node, graph: &Graph, mode: &Mode) -> Option<sdpa::SdpaCall> {
    use crate::shapes::DType;
    use sdpa::KernelDtype;
    let [q, k, v] = [0, 1, 2].map(|i| node.inputs.get(i).map(|&t| graph.tensor(t)));
    let (q, k, v) = (q?, k?, v?);
    let last = |t: &crate::shapes::TensorType, from_end: usize| {
        t.shape.len().checked_sub(from_end).and_then(|i| t.shape[i].known()).unwrap_or(0)
    };
    let dtype = match (mode.precision, q.dtype) {
        (Precision::Fp16 | Precision::Amp, _) => KernelDtype::Half,
        (Precision::Bf16 | Precision::AmpBf16, _) => KernelDtype::BFloat16,
        (_, DType::F16) => KernelDtype::Half,
        (_, DType::BF16) => KernelDtype::BFloat16,
        (_, DType::F64) => KernelDtype::Double,
        _ => KernelDtype::Float,
    };
    Some(sdpa::SdpaCall {
        four_d: q.rank() == 4 && k.rank() == 4 && v.rank() == 4,
        dtype,
        head_dims: (last(q, 1), last(k, 1), last(v, 1)),
        lengths: (last(q, 2), last(k, 2)),
        causal: node.flag("causal"),
        // The mask, when given, is the fourth input (parameters in declaration order).
        masked: node.inputs.len() > 3,
        requires_grad: mode.grad,
        head_groups: if node.flag("enable_gqa") { query_heads_per_key_head(q, k) } else { 1 },
        broadcast_heads: if node.flag("enable_gqa") { 1 } else { query_heads_per_key_head(q, k) },
    })
}

/// Query heads per key head of an attention call (dimension -3 of `[N, H, T, D]`; 1 for
/// fewer dimensions or unknown sizes).
fn query_heads_per_key_head(q: &crate::shapes::TensorType, k: &crate::shapes::TensorType) -> i128 {
    let (rq, rk) = (q.rank(), k.rank());
    if rq < 3 || rk < 3 {
        return 1;
    }
    let (hq, hk) = (q.shape[rq - 3].known().unwrap_or(1), k.shape[rk - 3].known().unwrap_or(1));
    if hk > 0 { (hq / hk).max(1) } else { 1 }
}

/// The tensors `scaled_dot_product_attention` makes of its mask before the kernel runs.
struct SdpaMask {
    /// Bytes of the mask the kernel is given, when made here (0 when the caller's is passed
    /// as it is): a bool mask made additive, autocast's half copy of a float32 one, or the
    /// efficient kernel's padded copy.
    made: i128,
    /// Bytes made and freed before the kernel runs (the unpadded additive mask).
    transient: i128,
}

/// What the mask costs (attention.cpp, PyTorch 2.15): `convert_boolean_attn_mask` makes a
/// bool mask additive, `torch.where(mask, 0, -inf)` in q's dtype, a new dense tensor of the
/// mask's shape (its expanded dimensions materialized: traced on the CPU); a float32 mask
/// under autocast is cast to the half dtype first (a copy as large). The efficient kernel's
/// `preprocess_mask` pads one whose strides are not multiples of 8 (`aligned_tensor<8>`) by
/// `8 - last % 8` keys (`pad_bias`: a dense copy), then expands it to `[N, H, Tq, Tk]` (a
/// view).
fn sdpa_mask(
    node: &Node,
    graph: &Graph,
    mode: &Mode,
    layouts: &Layouts,
    call: &sdpa::SdpaCall,
    backend: sdpa::SdpaBackend,
) -> SdpaMask {
    use crate::shapes::DType;
    let Some(&mask) = node.inputs.get(3) else { return SdpaMask { made: 0, transient: 0 } };
    let element = match call.dtype {
        sdpa::KernelDtype::Half | sdpa::KernelDtype::BFloat16 => 2,
        sdpa::KernelDtype::Float => 4,
        sdpa::KernelDtype::Double => 8,
    };
    let dtype = graph.tensor(mask).dtype;
    let autocast_cast = matches!(mode.precision, Precision::Amp | Precision::AmpBf16) && dtype == DType::F32;
    let shape = layouts.shape_and_strides(graph, mask);
    let (made, strides) = if dtype == DType::Bool || autocast_cast {
        let shape = shape.as_ref().map(|(shape, _)| shape.clone()).unwrap_or_default();
        // Row-major: TensorIterator orders the output as the mask's non-broadcast dimensions,
        // which an expanded mask's are (traced: `[2, 1, 16, 16]` from strides `(0, 256, 16, 1)`).
        let order: Vec<i128> = (0..shape.len() as i128).rev().collect();
        let dense = dense_like(&order, &shape);
        (product(&[numel(graph, mask), element]), Some((shape, dense)))
    } else {
        (0, shape)
    };
    if backend != sdpa::SdpaBackend::Efficient {
        return SdpaMask { made, transient: 0 };
    }
    let Some((shape, strides)) = strides else { return SdpaMask { made, transient: 0 } };
    let aligned = strides.split_last().is_some_and(|(last, leading)| *last == 1 && leading.iter().all(|s| s % 8 == 0));
    if aligned || shape.is_empty() {
        return SdpaMask { made, transient: 0 };
    }
    let last = shape[shape.len() - 1];
    let rows: i128 = shape[..shape.len() - 1].iter().product();
    let size = if made > 0 { element } else { dtype.size() };
    let padded = product(&[rows, last + (8 - last % 8), size]);
    SdpaMask { made: padded, transient: made }
}

/// `_scaled_dot_product_attention_math` (attention.cpp), op by op: `q_s = q * sqrt(scale)`
/// (held to the end), `k_s = k.transpose(-2, -1) * sqrt(scale)`, `attn = matmul(q_s, k_s)`,
/// `attn = _safe_softmax(attn)`, `matmul(attn, v)`; with `is_causal` a float mask made from a
/// lower-triangular bool mask is added to the scores in place. On CUDA a half call is upcast
/// to float32 first (`allow_fp16_bf16_reduction_math_sdp` is off by default) and the output
/// cast back. Each `matmul` copies an operand its batch dimensions do not fold in (the
/// transposed `[N, T, H, D]` views every attention module makes, or key heads broadcast to
/// the query's), and saves the copy.
/// Measured on CPU float32 (tests/fixtures/ops/measurements_sdpa.json, `math`).
fn math_attention(
    node: &Node,
    graph: &Graph,
    mode: &Mode,
    layouts: &Layouts,
    call: &sdpa::SdpaCall,
    mask_made: i128,
) -> OpMemory {
    use sdpa::KernelDtype;
    let upcast = mode.device.kind == super::devices::DeviceKind::Cuda
        && matches!(call.dtype, KernelDtype::Half | KernelDtype::BFloat16);
    let element: i128 = match (upcast, call.dtype) {
        (true, _) | (_, KernelDtype::Float) => 4,
        (_, KernelDtype::Double) => 8,
        _ => 2,
    };
    let bytes = |t: Option<&TensorId>| t.map_or(0, |&t| product(&[numel(graph, t), element]));
    let (q, k, v) = (node.inputs.first(), node.inputs.get(1), node.inputs.get(2));
    let (qb, mut kb, mut vb, ob) = (bytes(q), bytes(k), bytes(v), bytes(node.outputs.first()));
    // `enable_gqa`: `repeat_interleave` gives k and v the query's heads first (new row-major
    // tensors the path holds to the end).
    let groups = call.head_groups.max(1);
    if groups > 1 {
        kb = kb.saturating_mul(groups);
        vb = vb.saturating_mul(groups);
    }
    let repeated = if groups > 1 { kb.saturating_add(vb) } else { 0 };
    let (tq, tk) = call.lengths;
    let heads = match tq.checked_mul(call.head_dims.0) {
        Some(per_head) if per_head > 0 => numel(graph, node.inputs[0]) / per_head,
        _ => 0,
    };
    let wb = product(&[heads, tq, tk, element]);
    // The causal mask the path makes, or the additive mask made of the caller's (held to the
    // end: it is added to the scores in place).
    let mask = if call.causal { product(&[tq, tk, element]) } else { mask_made };
    // The float32 copies of q, k and v that an upcast call works on, held to the end.
    let sum = |parts: &[i128]| parts.iter().fold(0i128, |total, &b| total.saturating_add(b));
    let upcast_copies = if upcast { sum(&[qb, kb, vb]) } else { 0 };
    let held = sum(&[upcast_copies, mask, repeated]);
    // Which operands the matmuls copy: q_s and k_s are new tensors laid out like q and k
    // (k transposed), v is used as it is; each folds its (N, H) dimensions for `bmm`.
    // Heads broadcast without `enable_gqa` (one key head): each matmul expands the operand to
    // the query's heads (stride 0) before folding its batch dimensions.
    let broadcast = call.broadcast_heads.max(1);
    let folds = |t: Option<&TensorId>, made_like: bool, transpose: bool, broadcast: i128| -> bool {
        let (Some(&t), true) = (t, call.four_d) else { return true };
        let Some((mut shape, mut strides)) = layouts.shape_and_strides(graph, t) else { return true };
        if transpose {
            strides.swap(2, 3);
            shape.swap(2, 3);
        }
        let mut strides = if made_like { dense_like(&strides, &shape) } else { strides };
        if broadcast > 1 {
            shape[1] = shape[1].saturating_mul(broadcast);
            strides[1] = 0;
        }
        merges_leading(&shape, &strides, 2)
    };
    // Repeated k and v (`enable_gqa`) are new row-major tensors, which fold. A broadcast
    // operand folds only where the batch before its heads is 1 (`[1, H]` with stride 0 is a
    // view); otherwise `reshape` copies it as large as the query's heads make it, and `bmm`
    // saves the copy.
    let q_copy = if folds(q, true, false, 1) { 0 } else { qb };
    let k_copy = if groups > 1 || folds(k, true, true, broadcast) { 0 } else { kb.saturating_mul(broadcast) };
    let v_copy = if groups > 1 || folds(v, false, false, broadcast) { 0 } else { vb.saturating_mul(broadcast) };
    // What the first `bmm` keeps of k: its copy, or k_s itself.
    let k_kept = if k_copy > 0 { k_copy } else { kb };
    // With an upcast the output is made in float32 and cast back, and so are the weights
    // returned beside it.
    let cast_back = if upcast { sum(&[ob / 2, wb / 2]) } else { 0 };
    let stages = |recording: bool| {
        let first_matmul = sum(&[held, qb, kb, q_copy, k_copy, wb]);
        // After the first matmul a copy of q is freed unless saved; k's copy (or k_s) is saved.
        let kept = if recording { sum(&[q_copy, k_kept]) } else { 0 };
        let softmax = sum(&[held, qb, kept, wb, wb]);
        let second_matmul = sum(&[held, qb, kept, wb, v_copy, ob, cast_back]);
        first_matmul.max(softmax).max(second_matmul)
    };
    // Saved: q_s or its copy, k_s or its copy, the softmax output, and v's copy (or v).
    let v_saved = upcast || v_copy > 0 || groups > 1;
    // What the second `bmm` keeps of v: its copy, v's upcast, or v itself (not counted here).
    let v_kept = if v_copy > 0 {
        v_copy
    } else if v_saved {
        vb
    } else {
        0
    };
    let saved_bytes = sum(&[qb, k_kept, wb, v_kept]);
    let output = if upcast { ob / 2 } else { ob };
    // The backward, node by node (the engine runs the latest-made first): the output's cast
    // (float32 gradient `ob`, the upstream one freed) and the second `bmm` (the weights'
    // gradient `wb` and v's at the query's heads), which frees v's copy; v's gradient is summed
    // to its heads and waits for its cast; `_softmax_backward_data` (another `wb`), which frees
    // the weights; the first `bmm` (q's and k's gradients at the query's heads).
    // v saved as it is (no copy) is freed with the second `bmm`'s saved tensors, though the
    // simulation holds it to the op's end: the later stages count it off.
    let v_grad = vb.saturating_mul(broadcast);
    let v_pending = vb;
    let v_freed = if v_saved { 0 } else { vb };
    let second_bmm = sum(&[saved_bytes, ob, wb, v_grad]);
    let softmax_backward = sum(&[qb, k_kept, wb, wb, wb, v_pending]).saturating_sub(v_freed);
    let first_bmm = sum(&[qb, k_kept, wb, qb, kb.saturating_mul(broadcast), v_pending]).saturating_sub(v_freed);
    let backward_peak = second_bmm.max(softmax_backward).max(first_bmm);
    // What the simulation holds for the op when its backward starts: the saved tensors and
    // the upstream gradient.
    let held_at_start = sum(&[saved_bytes, output]);
    let mut saved = vec![Saved::Extra(saved_bytes)];
    if !v_saved {
        saved.push(Saved::Input(2));
    }
    OpMemory {
        alias: None,
        layout: OutputLayout::Contiguous,
        scratch: Scratch {
            recording: stages(true).saturating_sub(saved_bytes).saturating_sub(output).max(0),
            not_recording: stages(false).saturating_sub(output).max(0),
        },
        saved: SavedList::new(&saved),
        grad: GradFlow::New,
        backward_scratch: 0,
        backward_scratch_bytes: 0,
        forward_scratch: 0,
        backward_staged: Some(backward_peak.saturating_sub(held_at_start)),
        grad_inputs: u8::MAX,
        grads_returned: u8::MAX,
        ctx_input: false,
        weights_on_ctx: false,
        // Everything the kernel makes is in `scratch` when nothing records it.
        extras_always_made: false,
    }
}

/// For each operand of a `matmul`, whether folding its batch dimensions copies it
/// (`at::matmul`'s `_matmul_impl`): with both operands batched, each is reshaped to
/// `[batch, m, k]`; with a matrix second operand, the first is reshaped to `[rows, k]` when
/// an input requires grad (`should_fold`), else to `[batch, m, k]` for `bmm`.
fn matmul_copies(node: &Node, graph: &Graph, mode: &Mode, layouts: &Layouts) -> [bool; 2] {
    let operand = |i: usize| layouts.shape_and_strides(graph, *node.inputs.get(i)?);
    let (Some((a, sa)), Some((b, sb))) = (operand(0), operand(1)) else { return [false, false] };
    match (a.len(), b.len()) {
        (ra, 2) if ra >= 3 && mode.grad => [!merges_leading(&a, &sa, ra - 1), false],
        (ra, 2) if ra >= 3 => [!merges_leading(&a, &sa, ra - 2), false],
        (ra, rb) if ra >= 3 && ra == rb && a[..ra - 2] == b[..rb - 2] => {
            [!merges_leading(&a, &sa, ra - 2), !merges_leading(&b, &sb, rb - 2)]
        }
        _ => [false, false],
    }
}

/// Whether `linear` copies its input: one of 3 or more dimensions that is not row-major (then
/// `at::linear` takes the `matmul` path, not `_flatten_nd_linear`) and whose leading
/// dimensions do not merge into one, so `matmul`'s fold (`reshape(-1, in)`) copies it.
fn linear_copies(node: &Node, graph: &Graph, layouts: &Layouts) -> bool {
    let Some((shape, strides)) = node.inputs.first().and_then(|&t| layouts.shape_and_strides(graph, t)) else {
        return false;
    };
    shape.len() >= 3 && !merges_leading(&shape, &strides, shape.len() - 1)
}

/// `at::einsum`'s memory. One operand: a permutation is a view; a sum is a new tensor whose
/// backward reads sizes only. Two operands: `bmm` of each operand reshaped to three
/// dimensions, a copy where its strides do not fold ([`einsum_plan`]); `bmm` saves each for
/// the other's gradient, and an operand summed over a subscript only it has first is a new
/// tensor, saved in its place.
fn einsum_memory(
    node: &Node,
    graph: &Graph,
    layouts: &Layouts,
    fresh: impl Fn(&[Saved]) -> OpMemory,
    alias_all: impl Fn(GradFlow) -> OpMemory,
) -> OpMemory {
    if node.inputs.len() == 1 {
        let input = graph.tensor(node.inputs[0]);
        let output = node.outputs.first().map(|&t| graph.tensor(t));
        // A contraction of one operand keeps every element only when it sums nothing.
        return if output.is_some_and(|o| o.rank() == input.rank()) {
            OpMemory { layout: OutputLayout::Contiguous, ..alias_all(GradFlow::PassThrough) }
        } else {
            fresh(&[])
        };
    }
    let Some(plan) = einsum_plan(graph, node, Some(layouts)) else { return fresh(&[]) };
    // Nothing summed: `mul` of the operands aligned by unsqueezed views, which it saves.
    if !plan.contracts {
        return OpMemory {
            layout: OutputLayout::Contiguous,
            grad: GradFlow::Broadcast,
            ..fresh(&[Saved::InputFor(0, 1), Saved::InputFor(1, 0)])
        };
    }
    let element = node.inputs.first().map_or(4, |&t| graph.tensor(t).dtype.size());
    let operand = |k: usize| match plan.pre_summed[k] {
        Some(elements) => Saved::Extra(product(&[elements, element])),
        None if plan.copies[k] => Saved::CopyOfInputFor(k, 1 - k),
        None => Saved::InputFor(k, 1 - k),
    };
    OpMemory { layout: OutputLayout::Einsum, ..fresh(&[operand(0), operand(1)]) }
}

/// Elements of a tensor (0 when unknown).
fn numel(graph: &Graph, t: crate::graph::TensorId) -> i128 {
    graph.tensor(t).numel().and_then(|d| d.known()).unwrap_or(0)
}

/// An op that returns its input itself (a cast to the dtype it has): no bytes, the gradient
/// passed on.
pub fn identity() -> OpMemory {
    OpMemory {
        alias: Some(0),
        layout: OutputLayout::Contiguous,
        scratch: Scratch::default(),
        saved: SavedList::new(&[]),
        grad: GradFlow::PassThrough,
        extras_always_made: true,
        backward_scratch: 0,
        backward_scratch_bytes: 0,
        forward_scratch: 0,
        backward_staged: None,
        grad_inputs: u8::MAX,
        grads_returned: u8::MAX,
        ctx_input: false,
        weights_on_ctx: false,
    }
}

/// The bytes of each row statistic (mean, reciprocal standard deviation) a layer norm makes
/// where they are not float32: `layer_norm_cpu` allocates them in the dtype it computes in,
/// which is float32 only when a half input meets a float32 weight or bias (`mixed_type`);
/// CUDA's kernel always in its accumulate type, float32 (measured:
/// tests/fixtures/ops/measure_layer_norm.py, bf16 on the CPU).
fn layer_norm_stat_bytes(node: &Node, device: &Device, dtypes: &[DType]) -> Option<i128> {
    if device.kind != DeviceKind::Cpu || !matches!(node.op, Op::LayerNorm | Op::LayerNormWith) {
        return None;
    }
    let run = |t: &TensorId| dtypes.get(t.0 as usize).copied();
    let computed = node.outputs.first().and_then(run)?;
    // A module's own weight is float32 in a half run only as an `fp32(...)` call's.
    let float_param = match node.op {
        Op::LayerNormWith => node.inputs.iter().skip(1).any(|t| run(t) == Some(DType::F32)),
        _ => node.origin.fp32 && !node.result.weights.is_empty(),
    };
    (computed.is_float() && computed != DType::F32 && !float_param).then(|| computed.size())
}

/// What `clamp_backward` holds besides the gradient it makes, `where(mask, grad, zero)`: a
/// bool mask of `x`'s size for each bound given (`self >= min`, `self <= max`, the second
/// and-ed into the first in place) and the zero, a scalar tensor in the gradient's dtype
/// (measured: tests/fixtures/ops/measure_clamp.py, whose training peak is that `where`). A
/// bound left out is float32's largest magnitude (`clamp`'s default), as torch's `None`.
fn clamp_backward_bytes(node: &Node, elements: i128, dtypes: &[DType]) -> i128 {
    let given = |bound: &str| node.float_arg(bound).is_some_and(|b| b.abs() < f64::from(f32::MAX));
    let masks = i128::from(given("min")) + i128::from(given("max"));
    let zero = node.inputs.first().and_then(|t| dtypes.get(t.0 as usize)).map_or(4, |d| d.size());
    if masks == 0 { 0 } else { product(&[masks, elements]).saturating_add(zero) }
}

/// Whether a batch norm runs CUDA's native kernel rather than cuDNN's, which makes its
/// float32 `save_mean` and `save_invstd` in eval mode too (cuDNN's are empty there):
/// `_batch_norm_impl_index` takes cuDNN for no bf16 input or weight, and for a half input only
/// with float32 weights (measured: MobileNetV2 in fp16 and bf16, memory_precision.json, whose
/// peak is a 96-channel batch norm's statistics).
fn native_cuda_batch_norm(node: &Node, mode: &Mode, dtypes: &[DType]) -> bool {
    let input = node.inputs.first().and_then(|t| dtypes.get(t.0 as usize).copied());
    let half_weights = matches!(mode.precision, Precision::Fp16 | Precision::Bf16) && !node.origin.fp32;
    mode.device.kind == DeviceKind::Cuda
        && match input {
            Some(DType::BF16) => true,
            Some(DType::F16) => half_weights,
            _ => false,
        }
}

/// The memory behaviour of `node` when run in `mode`.
/// `layouts` holds the strides of the tensors made before `node`; `dtypes` are the run's
/// dtype of every tensor of the graph.
pub fn memory(node: &Node, graph: &Graph, mode: &Mode, layouts: &Layouts, dtypes: &[DType]) -> OpMemory {
    // TensorIterator lays an elementwise result out in its operands' dimension order.
    let elementwise = matches!(
        node.op.family(),
        Family::Activation | Family::Arithmetic | Family::Compare | Family::Dropout | Family::Math
    );
    let fresh = |saved: &[Saved]| OpMemory {
        alias: None,
        layout: if elementwise { OutputLayout::LikeInput } else { OutputLayout::Contiguous },
        scratch: Scratch::default(),
        saved: SavedList::new(saved),
        grad: GradFlow::New,
        extras_always_made: true,
        backward_scratch: 0,
        backward_scratch_bytes: 0,
        forward_scratch: 0,
        backward_staged: None,
        grad_inputs: u8::MAX,
        grads_returned: u8::MAX,
        ctx_input: false,
        weights_on_ctx: false,
    };
    let alias_all = |grad: GradFlow| OpMemory { grad, ..identity() };
    // Computed only by the ops that need them.
    let inplace = || node.flag("inplace");
    let out0 = || node.outputs.first().map(|&t| numel(graph, t)).unwrap_or(0);
    let in0 = || node.inputs.first().map(|&t| numel(graph, t)).unwrap_or(0);
    let f32_bytes = 4;
    match node.op {
        // `convolution_backward` computes every gradient in one call from the input and the
        // weight, so both are kept whatever requires grad; `linear` (`addmm`) keeps its input
        // for the weight's gradient only (measured: tests/fixtures/ops/measure_frozen.py).
        Op::Conv1d | Op::Conv2d | Op::Conv3d | Op::ConvTranspose2d => fresh(&[Saved::Input(0)]),
        // On an input of 3 or more dimensions whose leading ones do not merge into one (a
        // transposed view), `linear` runs `matmul`, which folds the input with `reshape` (its
        // weight requires grad) and so copies it; autograd keeps the copy.
        Op::Linear if linear_copies(node, graph, layouts) => fresh(&[Saved::CopyOfInputForParams(0)]),
        Op::Linear => fresh(&[Saved::InputForParams(0)]),
        // bitsandbytes' `MatMul4Bit` keeps the packed weight (module state) and not the
        // input: the weight has no gradient. The input's gradient is a new tensor.
        Op::Linear4bit => OpMemory { grad_inputs: 1, weights_on_ctx: true, ..fresh(&[]) },
        // bitsandbytes' `MatMul8bitLt` keeps its input on `ctx` (`ctx.tensors = (CAt, subA,
        // A)`) whenever an input needs a gradient, though the weight has none and the input's
        // gradient reads only the weight; an empty `subA` with it. Measured: checkpointed
        // LoRA over 8-bit layers keeps every layer's inputs (tests/fixtures/calibration/
        // measure_int8.py).
        Op::Linear8bit => OpMemory { grad_inputs: 1, ctx_input: true, weights_on_ctx: true, ..fresh(&[]) },
        // A GPTQ layer loaded for training (gptqmodel's `TritonV2Linear`, which trains through
        // `TorchLinear`'s forward) multiplies by its whole weight dequantized and cast to the
        // input's dtype, `torch.matmul(x, weight)`, which saves that copy for the input's
        // gradient (measured: tests/fixtures/calibration/measure_int4_train.py); under
        // autocast the matmul's half cast of it (not measured).
        Op::LinearInt4 if mode.training_step && node.is_gptq() => {
            let element = match mode.precision {
                Precision::Fp32 | Precision::Int8 => node.inputs.first().map_or(4, |&t| graph.tensor(t).dtype.size()),
                _ => 2,
            };
            OpMemory { grad_inputs: 1, ..fresh(&[Saved::Extra(product(&[node.weight_elements(), element]))]) }
        }
        // transformers' `FP8LinearFunction` saves the float8 weight and its scales (module
        // state) for the input's gradient, which reads the weight dequantized; AWQ's
        // `AwqGemmFn` saves its packed weight and dequantizes it again in backward; the
        // inference kernels (Marlin, ExLlama) record nothing. The input's gradient is new.
        Op::LinearFp8 | Op::LinearInt4 => OpMemory { grad_inputs: 1, ..fresh(&[]) },
        Op::Clone => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        // The tensor itself, now a leaf that requires grad: its gradient is its `.grad`.
        Op::RequiresGrad => identity(),
        // The tensor itself, which autograd no longer tracks: nothing downstream records a
        // gradient through it (what `torch.no_grad()` computes from a tensor).
        Op::Detach => OpMemory { grad_inputs: 0, extras_always_made: false, ..identity() },
        // `matmul` folds batched operands into `bmm`'s (or `mm`'s) dimensions with `reshape`:
        // an operand whose strides do not fold is copied, and the copy is what is saved.
        Op::Matmul | Op::Bmm => {
            let copies = matmul_copies(node, graph, mode, layouts);
            let operand =
                |k: usize| if copies[k] { Saved::CopyOfInputFor(k, 1 - k) } else { Saved::InputFor(k, 1 - k) };
            fresh(&[operand(0), operand(1)])
        }
        // `beta x + alpha (batch1 @ batch2)` in one output: each batch operand is saved for the
        // other's gradient (`x`'s is the incoming one, scaled); cuBLAS takes either operand
        // row- or column-major, as `bmm` does.
        Op::Baddbmm => fresh(&[Saved::InputFor(1, 2), Saved::InputFor(2, 1)]),
        Op::Einsum => einsum_memory(node, graph, layouts, fresh, alias_all),
        Op::Embedding => fresh(&[Saved::Input(0)]),
        Op::BatchNorm | Op::BatchNorm1d => {
            let channels = node.inputs.first().and_then(|&t| graph.tensor(t).shape.get(1)?.known()).unwrap_or(0);
            let mut saved = SavedList::new(&[Saved::Input(0)]);
            if mode.train || native_cuda_batch_norm(node, mode, dtypes) {
                // save_mean and save_invstd, one float per channel each.
                saved.push(Saved::Extra(product(&[2, channels, f32_bytes])));
            }
            OpMemory { saved, ..fresh(&[]) }
        }
        Op::LayerNorm | Op::LayerNormWith | Op::RmsNorm | Op::GroupNorm => {
            let x = node.inputs.first().map(|&t| graph.tensor(t));
            let rows = match (node.op, x) {
                (Op::GroupNorm, Some(t)) => t
                    .shape
                    .first()
                    .and_then(|d| d.known())
                    .unwrap_or(0)
                    .saturating_mul(node.int_arg("groups").unwrap_or(1)),
                (_, Some(t)) => {
                    let last = t.shape.last().and_then(|d| d.known()).unwrap_or(1).max(1);
                    in0() / last
                }
                _ => 0,
            };
            let stats = if node.op == Op::RmsNorm { 1 } else { 2 };
            let stat_bytes = layer_norm_stat_bytes(node, mode.device, dtypes).unwrap_or(f32_bytes);
            let mut saved = SavedList::new(&[Saved::Input(0), Saved::Extra(product(&[stats, rows, stat_bytes]))]);
            // `native_layer_norm` saves the weight and bias it is given (a module's own are
            // parameters, held anyway).
            for given in 1..node.inputs.len() {
                saved.push(Saved::Input(given));
            }
            OpMemory { saved, ..fresh(&[]) }
        }
        Op::Relu | Op::Sigmoid | Op::Tanh | Op::Softmax | Op::LogSoftmax if !inplace() => fresh(&[Saved::Output(0)]),
        // In-place activations whose derivative reads the result save the result (the
        // storage they overwrote); those whose derivative reads the input save a copy of it
        // made before overwriting (measured: MobileNetV2's in-place ReLU6 holds one).
        Op::Relu | Op::LeakyRelu if inplace() => {
            OpMemory { saved: SavedList::new(&[Saved::Output(0)]), ..alias_all(GradFlow::New) }
        }
        // `clamp_` is the same: `clamp_backward` reads `self`, so the generated code keeps
        // `original_self = self.clone()` (measured: tests/fixtures/ops/measure_clamp.py).
        Op::Relu6 | Op::Silu | Op::Hardswish | Op::Hardsigmoid | Op::Clamp if inplace() => {
            OpMemory {
                saved: SavedList::new(&[Saved::CopyOfInput(0)]),
                // The copy is autograd's, made only when it records.
                extras_always_made: false,
                backward_scratch_bytes: clamp_backward_bytes(node, in0(), dtypes),
                ..alias_all(GradFlow::New)
            }
        }
        Op::Relu6 | Op::LeakyRelu | Op::Gelu | Op::Silu | Op::Hardswish | Op::Hardsigmoid => fresh(&[Saved::Input(0)]),
        Op::Dropout => {
            let p = node.float_arg("p").unwrap_or(0.5);
            if !mode.train || p == 0.0 {
                return alias_all(GradFlow::PassThrough);
            }
            let mask = Saved::Extra(product(&[in0(), mode.device.dropout_mask_bytes()]));
            if inplace() {
                OpMemory { saved: SavedList::new(&[mask]), ..alias_all(GradFlow::New) }
            } else {
                fresh(&[mask])
            }
        }
        Op::MaxPool2d | Op::AdaptiveMaxPool2d => {
            // max_pool2d_with_indices: int64 indices, one per output element.
            fresh(&[Saved::Input(0), Saved::Extra(product(&[out0(), 8]))])
        }
        Op::AvgPool2d => fresh(&[Saved::Input(0)]),
        // Output size 1 is a mean, whose backward needs only sizes.
        Op::AdaptiveAvgPool2d if node.int_arg("size") == Some(1) => fresh(&[]),
        Op::AdaptiveAvgPool2d => fresh(&[Saved::Input(0)]),
        Op::Flatten | Op::Reshape => alias_all(GradFlow::PassThrough),
        // Always views; their gradients are views of the output's (`grad.squeeze(dim)`,
        // `unsqueeze_to`).
        Op::Unsqueeze | Op::Squeeze => alias_all(GradFlow::PassThrough),
        Op::Permute | Op::Transpose => alias_all(GradFlow::PassThrough),
        Op::Split | Op::SplitSizes => alias_all(GradFlow::New),
        Op::Slice => alias_all(GradFlow::New),
        Op::Concat => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        // Without a cache (`use_cache=False`) the call is its input. With one, a new tensor
        // (`torch.cat`, which saves sizes only): the simulation books it to the cache, which
        // holds it to the end of the run (`simulate`'s cache storages).
        Op::KvCache if crate::shapes::ops::cached_tokens(&node.args).is_none() => alias_all(GradFlow::PassThrough),
        Op::KvCache => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        Op::Add | Op::Sub if inplace() => alias_all(GradFlow::PassThrough),
        Op::Add | Op::Sub => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        // derivatives.yaml: `mul` gives each operand the gradient times the other; `div` gives
        // `self` the gradient over `other` and `other` one that reads both.
        // `outer` is `a.reshape(-1, 1) * b`: `mul`'s saves, of views of its operands.
        // In place, what `b`'s gradient reads of `a` is autograd's copy of it made before the
        // op overwrites it (measured: torch 2.15 `div_` saves a new tensor, `a`'s size).
        Op::Mul | Op::Div | Op::Outer => {
            let scalar_operand = node.inputs.len() < 2;
            let a = if inplace() { Saved::OriginalInputFor(0, 1) } else { Saved::InputFor(0, 1) };
            let saved: &[Saved] = match node.op {
                _ if scalar_operand => &[],
                Op::Mul | Op::Outer => &[a, Saved::InputFor(1, 0)],
                _ => &[a, Saved::Input(1)],
            };
            let memory = OpMemory { grad: GradFlow::Broadcast, ..fresh(saved) };
            if inplace() { OpMemory { alias: Some(0), ..memory } } else { memory }
        }
        Op::Upsample | Op::Interpolate => fresh(&[]),
        // derivatives.yaml: `mean_backward(grad, self.sym_sizes(), dim, numel ratio,
        // keepdim)` reads sizes only (measured: tests/fixtures/ops/measurements.json).
        Op::Mean => fresh(&[]),
        // `sum_backward` expands the gradient and `cumsum_backward` is a reversed cumsum of
        // it: sizes only. `amax` keeps its input and result to find where the maxima were.
        Op::Sum | Op::Cumsum => fresh(&[]),
        Op::Amax => fresh(&[Saved::Input(0), Saved::Output(0)]),
        // Views: their gradients are new tensors of the input's size (`sum_to_size`,
        // `select_backward` and `slice_backward` write into zeros).
        Op::Expand | Op::Select | Op::Narrow => alias_all(GradFlow::New),
        // derivatives.yaml: each one's gradient is the other view of the output's gradient
        // (`view_as_real(grad.contiguous())`, `view_as_complex(grad.contiguous())`).
        Op::ViewAsComplex | Op::ViewAsReal => alias_all(GradFlow::PassThrough),
        // `polar_backward(grad, result)`: the result is what both gradients read.
        Op::Polar => fresh(&[Saved::Output(0)]),
        // The tensor itself when its strides are row-major already, else a row-major copy
        // (`clone`, whose backward passes the gradient on).
        Op::Contiguous if node.inputs.first().is_some_and(|&t| layouts.is_contiguous(graph, t)) => {
            alias_all(GradFlow::PassThrough)
        }
        Op::Contiguous => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        // torchvision's `stochastic_depth`: in training, `noise = x.new_empty([N, 1, ...])
        // .bernoulli_(1 - p).div_(1 - p)` and `x * noise`, which keeps the noise (one value
        // per sample, or one in `mode="batch"`); in eval or with `p = 0`, `x` itself.
        Op::DropPath => {
            let p = node.float_arg("p").unwrap_or(0.0);
            if !mode.train || p == 0.0 {
                return alias_all(GradFlow::PassThrough);
            }
            let per_batch = matches!(node.args.values.get("mode"), Some(ArgValue::Str(m)) if m == "batch");
            let rows = if per_batch {
                1
            } else {
                node.inputs.first().and_then(|&t| graph.tensor(t).shape.first()?.known()).unwrap_or(0)
            };
            let element = match mode.precision {
                Precision::Fp16 | Precision::Bf16 => 2,
                _ => f32_bytes,
            };
            fresh(&[Saved::Extra(product(&[rows, element]))])
        }
        // The mask (a condition) is what the gradients read.
        Op::MaskedFill => OpMemory { grad: GradFlow::Broadcast, ..fresh(&[Saved::InputFor(1, 0)]) },
        Op::Where => OpMemory { grad: GradFlow::Broadcast, ..fresh(&[Saved::Input(0)]) },
        // derivatives.yaml: `exp`, `sqrt` and `rsqrt` differentiate through their result;
        // `log`, `sin`, `cos` and `pow` through their input; `neg` needs nothing.
        Op::Exp | Op::Sqrt | Op::Rsqrt => fresh(&[Saved::Output(0)]),
        // `expm1`'s gradient is `grad * (result + 1)`: the sum is a temporary of the result's
        // size (measured: tests/fixtures/ops/measure_xielu.py, whose `expm1` alone peaks at
        // that `mul`).
        Op::Expm1 => OpMemory { backward_scratch: 1, ..fresh(&[Saved::Output(0)]) },
        // `softplus_backward(grad, self, beta, threshold)`: one kernel reading the input.
        Op::Softplus => fresh(&[Saved::Input(0)]),
        // `logsumexp_out_impl`: `maxes = amax(self, dim, keepdim=True)`, then
        // `sum_out(result, (self - maxes).exp_(), dim)`: the difference, of the input's size,
        // and the maxima, of the result's, live while the result is made (seen in the CPU
        // allocator by torch.profiler; the dispatch-level tracker cannot see a kernel's own
        // allocations). derivatives.yaml: `logsumexp_backward(grad, self, result, ...)` keeps
        // the input and the result and computes `grad * (self - result).exp()`, the
        // difference and its exponential held to the end of that expression (measured:
        // tests/fixtures/ops/measure_reduce_repeat.py).
        Op::Logsumexp => {
            let element = node.outputs.first().and_then(|t| dtypes.get(t.0 as usize)).map_or(4, |d| d.size());
            let bytes = product(&[in0().saturating_add(out0()), element]);
            OpMemory {
                scratch: Scratch { recording: bytes, not_recording: bytes },
                backward_scratch: 2,
                ..fresh(&[Saved::Input(0), Saved::Output(0)])
            }
        }
        // `tile` runs `repeat`; derivatives.yaml: `repeat_backward(grad, repeats,
        // self.sizes())` sums the tiles of the gradient: sizes only.
        Op::Tile => fresh(&[]),
        // `grad * self.sgn()`: the input, and its sign a temporary of its size.
        Op::Abs => OpMemory { backward_scratch: 1, ..fresh(&[Saved::Input(0)]) },
        // derivatives.yaml: each operand's gradient is `masked_fill(where(self == other,
        // grad / 2, grad), self > other, 0)` (`<` for `other`, `maximum` the other way), which
        // reads both operands; at the `masked_fill` it holds the two bool masks, `grad / 2` and
        // the `where`, of the output's size, besides the gradient it makes (measured:
        // tests/fixtures/ops/measure_xielu.py, `torch.min(h, eps)` with a 0-dim `eps`, whose
        // training peak is that `masked_fill`).
        Op::Minimum | Op::Maximum => {
            let element = node.outputs.first().and_then(|t| dtypes.get(t.0 as usize)).map_or(4, |d| d.size());
            OpMemory {
                grad: GradFlow::Broadcast,
                backward_scratch_bytes: product(&[out0(), element.saturating_mul(2).saturating_add(2)]),
                ..fresh(&[Saved::Input(0), Saved::Input(1)])
            }
        }
        Op::Log | Op::Sin | Op::Cos => fresh(&[Saved::Input(0)]),
        // `log1p_backward(grad, self)`: the input, and `grad / (self + 1)` holds the sum.
        Op::Log1p => OpMemory { backward_scratch: 1, ..fresh(&[Saved::Input(0)]) },
        // derivatives.yaml: `grad.tril(diagonal)` (`triu`), and `pad`'s gradient the padding
        // cropped off a copy: sizes only, each gradient a new tensor (measured:
        // tests/fixtures/ops/measure_pad_tri_norm.py).
        Op::Tril | Op::Triu | Op::Pad => fresh(&[]),
        // `linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim)` keeps the input
        // and the result. For p 2 it returns `grad * (self / norm).masked_fill_(norm == 0, 0)`:
        // the quotient, of the input's size, and the bool mask, of the result's, live to the
        // end of that C++ expression; for p 1, `self.sgn() * grad`, the sign of the input's
        // size (measured: tests/fixtures/ops/measure_pad_tri_norm.py).
        Op::Norm => {
            let mask = if node.float_arg("p") == Some(1.0) { 0 } else { out0() };
            OpMemory {
                backward_scratch: 1,
                backward_scratch_bytes: mask,
                ..fresh(&[Saved::Input(0), Saved::Output(0)])
            }
        }
        // A tensor to a number: `pow_backward`, `grad * (exponent * self.pow(exponent - 1))`,
        // both temporaries held to the end of the expression (measured:
        // tests/fixtures/ops/measure_cast.py). A number to a tensor (`PowBackward1`) keeps the
        // exponent and the result, and makes `result * log(base)`; a tensor to a tensor
        // (`PowBackward2`) keeps both operands and the result, and `pow_backward_self` holds
        // `self.pow(exponent - 1)`, its product with the exponent and with the gradient
        // (tests/fixtures/ops/measure_pow.py; the inputs are the tensor operands in order).
        Op::Pow => match (node.args.values.get("x"), node.args.values.get("exponent")) {
            (Some(ArgValue::Tensor(_)), Some(ArgValue::Tensor(_))) => {
                OpMemory { backward_scratch: 3, ..fresh(&[Saved::Input(0), Saved::Input(1), Saved::Output(0)]) }
            }
            (Some(ArgValue::Tensor(_)), _) => OpMemory { backward_scratch: 2, ..fresh(&[Saved::Input(0)]) },
            _ => OpMemory { backward_scratch: 1, ..fresh(&[Saved::Input(0), Saved::Output(0)]) },
        },
        // `floor`'s gradient is zero (`zeros_like(grad)`): it saves nothing.
        Op::Neg | Op::Floor => fresh(&[]),
        // A new tensor of the new dtype, whose backward casts the gradient back (sizes only);
        // the tensor itself when the run gives it that dtype already (the simulation decides,
        // since the dtypes are the precision policy's).
        Op::To | Op::TypeAs => OpMemory { grad_inputs: 1, ..fresh(&[]) },
        // `topk` and `sort` keep their int64 indices; `gather` keeps its input and index;
        // `x[indices]` keeps the indices, and its backward writes the gradient into zeros of
        // `x`'s size (`index_backward`); only `x` gets a gradient (measured: torch 2.15's
        // saved tensors of `TopkBackward0`, `SortBackward0`, `IndexBackward0`).
        Op::Topk | Op::Sort => fresh(&[Saved::Output(1)]),
        Op::Gather => fresh(&[Saved::Input(0), Saved::Input(1)]),
        Op::Index => OpMemory { grad_inputs: 1, ..fresh(&[Saved::Input(1)]) },
        Op::IndexPut if inplace() => OpMemory { saved: SavedList::new(&[Saved::Input(1)]), ..alias_all(GradFlow::New) },
        Op::IndexPut => fresh(&[Saved::Input(1)]),
        Op::OneHot | Op::Arange => fresh(&[]),
        // `index_select` keeps its index; its backward writes the gradient into zeros of
        // `x`'s size (`index_select_backward`: `index_add_`); only `x` gets a gradient.
        Op::IndexSelect => OpMemory { grad_inputs: 1, ..fresh(&[Saved::Input(1)]) },
        // `clamp_backward` masks the gradient where `self` was inside the bound: it keeps
        // `self`.
        Op::Clamp => {
            OpMemory { backward_scratch_bytes: clamp_backward_bytes(node, in0(), dtypes), ..fresh(&[Saved::Input(0)]) }
        }
        // `stack`'s backward unbinds the gradient: views, as `cat`'s.
        Op::Stack => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        // In place: `x`'s storage. A number written into a floating-point `x` (DeepSeek's
        // group mask): `x`'s gradient is `grad.scatter(dim, index, 0)`, a new tensor, and the
        // index is saved for it; an integer `x` gets no gradient, and a tensor source is
        // modelled for integers only.
        Op::Scatter => {
            OpMemory { grad: GradFlow::New, grad_inputs: 1, saved: SavedList::new(&[Saved::Input(1)]), ..identity() }
        }
        // No gradient: counts, an uninitialized tensor, integer quotients, comparisons and
        // their masks, filled tensors.
        Op::Histc
        | Op::EmptyLike
        | Op::FloorDivide
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::BitwiseAnd
        | Op::BitwiseOr
        | Op::BitwiseNot
        | Op::LogicalAnd
        | Op::LogicalOr
        | Op::LogicalNot
        | Op::NewZeros
        | Op::NewOnes
        | Op::Argmax
        | Op::Any
        | Op::Full
        | Op::FullLike => OpMemory { grad_inputs: 0, ..fresh(&[]) },
        // derivatives.yaml: `_grouped_mm` gives `self` the gradient times `mat2` and `mat2`
        // one that reads `self`, each saved only for the other's gradient, and keeps the
        // offsets; its backward computes `mat2`'s gradient in `mat2`'s layout, so a weight
        // passed transposed gets a row-major gradient (measured: torch 2.15, CPU).
        Op::GroupedMm => fresh(&[Saved::InputFor(0, 1), Saved::InputFor(1, 0), Saved::Input(2)]),
        // What the declaration says: the inputs `saves` names, and `saved_bytes` more.
        Op::Kernel => {
            let mut saved = SavedList::new(&[]);
            if let Some(ArgValue::Ints(saves)) = node.args.values.get("saves") {
                for at in saves.iter().filter_map(|d| d.known()) {
                    saved.push(Saved::Input(at as usize));
                }
            }
            if let Some(bytes) = node.int_arg("saved_bytes").filter(|&b| b > 0) {
                saved.push(Saved::Extra(bytes));
            }
            // The shape rule keeps both counts within 0..=255 (E0501).
            let count = |name: &str| node.int_arg(name).and_then(|n| u8::try_from(n).ok()).unwrap_or(0);
            // `grads`: the inputs, from the first, the backward returns a gradient for (a
            // custom autograd function returns None for the others, whose nodes it still
            // keeps); -1 (or none given): all.
            let grads_returned = node.int_arg("grads").and_then(|n| u8::try_from(n).ok()).unwrap_or(u8::MAX);
            OpMemory {
                saved,
                forward_scratch: count("scratch"),
                backward_scratch: count("backward_scratch"),
                grads_returned,
                ..fresh(&[])
            }
        }
        Op::Sdpa => {
            let Some(call) = sdpa_call(node, graph, mode) else { return fresh(&[]) };
            let forced = match node.args.values.get("backend") {
                Some(ArgValue::Str(name)) => sdpa::SdpaBackend::from_name(name),
                _ => None,
            };
            // A forced kernel that cannot run is an error (lint `sdpa-kernel-unavailable`);
            // the simulation goes on with the math path, the one kernel that always runs.
            let backend = sdpa::select(mode.device, &call, forced).unwrap_or(sdpa::SdpaBackend::Math);
            let (tq, _) = call.lengths;
            let rows = if call.head_dims.0 > 0 { numel(graph, node.inputs[0]) / call.head_dims.0 } else { 0 };
            let mask = sdpa_mask(node, graph, mode, layouts, &call, backend);
            if backend != sdpa::SdpaBackend::Math {
                let extras = sdpa::fused_extras(mode.device, backend, rows, tq);
                let mut saved = SavedList::new(&[Saved::Input(0), Saved::Input(1), Saved::Input(2), Saved::Output(0)]);
                // The kernel saves the mask it is given: the additive one made here, else the
                // caller's.
                saved.push(Saved::Extra(extras.saturating_add(mask.made)));
                if mask.made == 0 && call.masked {
                    saved.push(Saved::Input(3));
                }
                // The efficient kernel computes its log-sum-exp only for a backward, but a mask
                // made here is made whenever it runs: held while it runs when nothing records it.
                let efficient = backend == sdpa::SdpaBackend::Efficient;
                return OpMemory {
                    extras_always_made: !efficient,
                    scratch: Scratch {
                        recording: mask.transient,
                        not_recording: mask.transient.saturating_add(if efficient { mask.made } else { 0 }),
                    },
                    // The efficient kernel allocates `[N, T, H, D]`; the others lay their output
                    // out like q (measured: tests/fixtures/ops/measurements_sdpa.json, `layouts`).
                    layout: match backend {
                        _ if !call.four_d => OutputLayout::Contiguous,
                        sdpa::SdpaBackend::Efficient => OutputLayout::HeadsInterleaved,
                        _ => OutputLayout::LikeInput,
                    },
                    saved,
                    ..fresh(&[])
                };
            }
            math_attention(node, graph, mode, layouts, &call, mask.made)
        }
        Op::Attention => {
            let x = node.inputs.first().map(|&t| graph.tensor(t));
            let (n, s) = x
                .map(|t| {
                    let d = |i: usize| t.shape.get(i).and_then(|d| d.known()).unwrap_or(0);
                    (d(0), d(1))
                })
                .unwrap_or((0, 0));
            let heads = node.int_arg("heads").unwrap_or(1);
            let scores = if node.flag("flash") {
                product(&[n, heads, s, f32_bytes])
            } else {
                product(&[n, heads, s, s, f32_bytes])
            };
            // The packed q/k/v projection, the attention weights (or log-sum-exp), and the
            // attended values fed to the output projection.
            OpMemory {
                extras_always_made: false,
                ..fresh(&[Saved::Input(0), Saved::Extra(product(&[4, in0(), f32_bytes]).saturating_add(scores))])
            }
        }
        Op::Lstm | Op::Gru => {
            let gates = if node.op == Op::Lstm { 4 } else { 3 };
            let hidden = node.int_arg("hidden").unwrap_or(0);
            let layers = node.int_arg("layers").unwrap_or(1);
            let dirs = if node.flag("bidirectional") { 2 } else { 1 };
            let x = node.inputs.first().map(|&t| graph.tensor(t));
            let steps = x.map(|t| in0() / t.shape.last().and_then(|d| d.known()).unwrap_or(1).max(1)).unwrap_or(0);
            // Gates and states of every step of every layer (cuDNN's reserve space).
            let reserve = product(&[layers, dirs, steps, hidden, gates + 2, f32_bytes]);
            OpMemory { extras_always_made: false, ..fresh(&[Saved::Input(0), Saved::Extra(reserve)]) }
        }
        Op::CrossEntropy => fresh(&[Saved::Extra(product(&[in0(), f32_bytes]))]),
        Op::Mse => fresh(&[Saved::Input(0), Saved::Input(1)]),
        // Ops whose in-place forms (if any) have no rule of their own, and `parameter`
        // (which has no input: the simulation binds its output to the parameter's storage).
        Op::Relu | Op::Sigmoid | Op::Tanh | Op::Softmax | Op::LogSoftmax | Op::Parameter => fresh(&[Saved::Input(0)]),
        // A buffer is module state: the simulation binds its output to the buffer's storage,
        // which exists before the run, and nothing flows back to it.
        Op::Buffer => fresh(&[]),
    }
}
