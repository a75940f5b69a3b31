//! What each op does to memory, in PyTorch's semantics: which outputs share an input's
//! storage (views and in-place ops), what autograd saves for backward, and how gradients
//! flow back (a new tensor, or the output's gradient passed through as a view).
//!
//! The rules follow PyTorch's derivatives.yaml and were checked against the calibration
//! measurements (tests/it/memory.rs).

use crate::graph::{Graph, Node};
use crate::op::Op;

use super::product;
use crate::shapes::ops::ArgValue;

use super::devices::Device;
use super::sdpa;
use crate::knobs::Precision;

/// How a scenario runs the model.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// Autograd records the graph (not under `no_grad`).
    pub grad: bool,
    /// The model is in training mode (not `eval()`): dropout is active, BatchNorm uses and
    /// updates batch statistics.
    pub train: bool,
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
}

impl Saved {
    /// The bytes of a tensor this makes for backward (`None` for the node's own inputs and
    /// outputs, and for nothing), given the node's inputs and the run's tensor sizes.
    pub fn made_bytes(self, inputs: &[crate::graph::TensorId], sizes: &[i128]) -> Option<i128> {
        match self {
            Saved::Extra(bytes) => Some(bytes),
            Saved::CopyOfInput(k) => inputs.get(k).map(|t| sizes[t.0 as usize]),
            Saved::Input(_) | Saved::Output(_) => None,
        }
        .filter(|&bytes| bytes > 0)
    }
}

/// How the gradient of an input is produced in backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradFlow {
    /// A new tensor the size of the input.
    New,
    /// The gradient of output 0 itself, or a view of it (views, `add`, `concat`): no memory.
    PassThrough,
}

/// An op's memory behaviour. Held inline (no allocation): the simulation makes one per node
/// and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpMemory {
    /// The input whose storage every output shares (a view or an in-place result), if any.
    pub alias: Option<usize>,
    /// Whether the outputs are views that may not be contiguous (`permute`, `transpose`).
    pub strided: bool,
    /// What autograd saves, if it records this op.
    pub saved: SavedList,
    /// How input gradients are made.
    pub grad: GradFlow,
    /// Whether the op's kernel makes its [`Saved::Extra`] tensors even when autograd does
    /// not record it (max-pool indices, batch statistics, dropout masks are outputs of the
    /// kernel; then they are freed as soon as it returns).
    pub extras_always_made: bool,
}

/// The most tensors an op saves (`sdpa`: q, k, v, the output and the log-sum-exp).
const MAX_SAVED: usize = 5;

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

fn flag(node: &Node, name: &str) -> bool {
    matches!(node.args.values.get(name), Some(ArgValue::Bool(true)))
}

fn int(node: &Node, name: &str) -> Option<i128> {
    match node.args.values.get(name) {
        Some(ArgValue::Int(d)) => d.known(),
        _ => None,
    }
}

fn float(node: &Node, name: &str) -> Option<f64> {
    match node.args.values.get(name) {
        Some(ArgValue::Float(f)) => Some(*f),
        Some(ArgValue::Int(d)) => d.known().map(|v| v as f64),
        _ => None,
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
        causal: flag(node, "causal"),
        requires_grad: mode.grad,
    })
}

/// Elements of a tensor (0 when unknown).
fn numel(graph: &Graph, t: crate::graph::TensorId) -> i128 {
    graph.tensor(t).numel().and_then(|d| d.known()).unwrap_or(0)
}

/// The memory behaviour of `node` when run in `mode`.
pub fn memory(node: &Node, graph: &Graph, mode: &Mode) -> OpMemory {
    let fresh = |saved: &[Saved]| OpMemory {
        alias: None,
        strided: false,
        saved: SavedList::new(saved),
        grad: GradFlow::New,
        extras_always_made: true,
    };
    let alias_all = |strided: bool, grad: GradFlow| OpMemory {
        alias: Some(0),
        strided,
        saved: SavedList::new(&[]),
        grad,
        extras_always_made: true,
    };
    // Computed only by the ops that need them.
    let inplace = || flag(node, "inplace");
    let out0 = || node.outputs.first().map(|&t| numel(graph, t)).unwrap_or(0);
    let in0 = || node.inputs.first().map(|&t| numel(graph, t)).unwrap_or(0);
    let f32_bytes = 4;
    match node.op {
        Op::Conv1d | Op::Conv2d | Op::Conv3d | Op::ConvTranspose2d | Op::Linear => fresh(&[Saved::Input(0)]),
        Op::Matmul | Op::Bmm => fresh(&[Saved::Input(0), Saved::Input(1)]),
        Op::Embedding => fresh(&[Saved::Input(0)]),
        Op::BatchNorm | Op::BatchNorm1d => {
            let channels = node.inputs.first().and_then(|&t| graph.tensor(t).shape.get(1)?.known()).unwrap_or(0);
            let mut saved = SavedList::new(&[Saved::Input(0)]);
            if mode.train {
                // save_mean and save_invstd, one float per channel each.
                saved.push(Saved::Extra(product(&[2, channels, f32_bytes])));
            }
            OpMemory { saved, ..fresh(&[]) }
        }
        Op::LayerNorm | Op::RmsNorm | Op::GroupNorm => {
            let x = node.inputs.first().map(|&t| graph.tensor(t));
            let rows = match (node.op, x) {
                (Op::GroupNorm, Some(t)) => t
                    .shape
                    .first()
                    .and_then(|d| d.known())
                    .unwrap_or(0)
                    .saturating_mul(int(node, "groups").unwrap_or(1)),
                (_, Some(t)) => {
                    let last = t.shape.last().and_then(|d| d.known()).unwrap_or(1).max(1);
                    in0() / last
                }
                _ => 0,
            };
            let stats = if node.op == Op::RmsNorm { 1 } else { 2 };
            fresh(&[Saved::Input(0), Saved::Extra(product(&[stats, rows, f32_bytes]))])
        }
        Op::Relu | Op::Sigmoid | Op::Tanh | Op::Softmax | Op::LogSoftmax if !inplace() => fresh(&[Saved::Output(0)]),
        // In-place activations whose derivative reads the result save the result (the
        // storage they overwrote); those whose derivative reads the input save a copy of it
        // made before overwriting (measured: MobileNetV2's in-place ReLU6 holds one).
        Op::Relu | Op::LeakyRelu if inplace() => OpMemory {
            alias: Some(0),
            strided: false,
            saved: SavedList::new(&[Saved::Output(0)]),
            grad: GradFlow::New,
            extras_always_made: true,
        },
        Op::Relu6 | Op::Silu | Op::Hardswish | Op::Hardsigmoid if inplace() => {
            OpMemory {
                saved: SavedList::new(&[Saved::CopyOfInput(0)]),
                // The copy is autograd's, made only when it records.
                extras_always_made: false,
                ..alias_all(false, GradFlow::New)
            }
        }
        Op::Relu6 | Op::LeakyRelu | Op::Gelu | Op::Silu | Op::Hardswish | Op::Hardsigmoid => fresh(&[Saved::Input(0)]),
        Op::Dropout => {
            let p = float(node, "p").unwrap_or(0.5);
            if !mode.train || p == 0.0 {
                return alias_all(false, GradFlow::PassThrough);
            }
            let mask = Saved::Extra(product(&[in0(), mode.device.dropout_mask_bytes()]));
            if inplace() {
                OpMemory { saved: SavedList::new(&[mask]), ..alias_all(false, GradFlow::New) }
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
        Op::AdaptiveAvgPool2d if int(node, "size") == Some(1) => fresh(&[]),
        Op::AdaptiveAvgPool2d => fresh(&[Saved::Input(0)]),
        Op::Flatten | Op::Reshape => alias_all(false, GradFlow::PassThrough),
        Op::Permute | Op::Transpose => alias_all(true, GradFlow::PassThrough),
        Op::Split => alias_all(false, GradFlow::New),
        Op::Slice => alias_all(true, GradFlow::New),
        Op::Concat => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        Op::Add | Op::Sub if inplace() => alias_all(false, GradFlow::PassThrough),
        Op::Add | Op::Sub => OpMemory { grad: GradFlow::PassThrough, ..fresh(&[]) },
        Op::Mul | Op::Div => {
            let scalar_operand = node.inputs.len() < 2;
            let saved: &[Saved] = if scalar_operand { &[] } else { &[Saved::Input(0), Saved::Input(1)] };
            if inplace() { OpMemory { alias: Some(0), ..fresh(saved) } } else { fresh(saved) }
        }
        Op::Upsample | Op::Interpolate => fresh(&[]),
        // derivatives.yaml: `mean_backward(grad, self.sym_sizes(), dim, numel ratio,
        // keepdim)` reads sizes only (measured: tests/fixtures/ops/measurements.json).
        Op::Mean => fresh(&[]),
        Op::Sdpa => {
            let Some(call) = sdpa_call(node, graph, mode) else { return fresh(&[]) };
            let forced = match node.args.values.get("backend") {
                Some(ArgValue::Str(name)) => sdpa::SdpaBackend::from_name(name),
                _ => None,
            };
            // A forced kernel that cannot run is an error (lint `sdpa-kernel-unavailable`);
            // the simulation goes on with the math path, the one kernel that always runs.
            let backend = sdpa::select(mode.device, &call, forced).unwrap_or(sdpa::SdpaBackend::Math);
            let (tq, tk) = call.lengths;
            let rows = if call.head_dims.0 > 0 { numel(graph, node.inputs[0]) / call.head_dims.0 } else { 0 };
            if backend != sdpa::SdpaBackend::Math {
                let extras = sdpa::fused_extras(mode.device, backend, rows, tq);
                // The efficient kernel computes its log-sum-exp only for a backward.
                return OpMemory {
                    extras_always_made: backend != sdpa::SdpaBackend::Efficient,
                    ..fresh(&[
                        Saved::Input(0),
                        Saved::Input(1),
                        Saved::Input(2),
                        Saved::Output(0),
                        Saved::Extra(extras),
                    ])
                };
            }
            // The math path (`_scaled_dot_product_attention_math`): q and k each multiplied by
            // sqrt(scale) into new tensors that the first matmul saves, the `Tq x Tk` softmax
            // output that the second matmul saves with v. On CUDA a half call is upcast to
            // float32 first (`allow_fp16_bf16_reduction_math_sdp` is off by default): the
            // float32 copies, v's included, are what is saved.
            let upcast = mode.device.kind == super::devices::DeviceKind::Cuda
                && matches!(call.dtype, sdpa::KernelDtype::Half | sdpa::KernelDtype::BFloat16);
            let element = match (upcast, call.dtype) {
                (true, _) | (_, sdpa::KernelDtype::Float) => 4,
                (_, sdpa::KernelDtype::Double) => 8,
                _ => 2,
            };
            let numel_of = |i: usize| node.inputs.get(i).map(|&t| numel(graph, t)).unwrap_or(0);
            let weights = if tq > 0 { product(&[rows / tq.max(1), tq, tk]) } else { 0 };
            let mut copies = product(&[numel_of(0).saturating_add(numel_of(1)).saturating_add(weights), element]);
            let mut saved = vec![Saved::Input(2)];
            if upcast {
                copies = copies.saturating_add(product(&[numel_of(2), element]));
                saved.clear();
            }
            saved.push(Saved::Extra(copies));
            fresh(&saved)
        }
        Op::Attention => {
            let x = node.inputs.first().map(|&t| graph.tensor(t));
            let (n, s) = x
                .map(|t| {
                    let d = |i: usize| t.shape.get(i).and_then(|d| d.known()).unwrap_or(0);
                    (d(0), d(1))
                })
                .unwrap_or((0, 0));
            let heads = int(node, "heads").unwrap_or(1);
            let scores = if flag(node, "flash") {
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
            let hidden = int(node, "hidden").unwrap_or(0);
            let layers = int(node, "layers").unwrap_or(1);
            let dirs = if flag(node, "bidirectional") { 2 } else { 1 };
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
