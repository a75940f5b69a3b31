//! The graph IR: what elaboration makes and every later layer reads. A [`Graph`] is a
//! model's ops in execution order ([`Node`]s), each with its [`Op`], bound arguments, input
//! and output [`TensorId`]s and the [`Origin`] in the source that made it ([`Site`]s), plus
//! each tensor's type and when the program drops its last reference to it (Python's
//! semantics). [`Value`] is what a name holds during elaboration.
//!
//! A graph's parts are shared (`Arc`), so a block call copied from the previous elaboration
//! copies pointers, and comparing a graph with the previous one compares pointers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::diagnostics::{Diagnostic, FileName, NodeRef, Place};
use crate::op::{Autocast, Op};
use crate::shapes::ops::{ArgValue, Args, OpResult};
use crate::shapes::{Dim, TensorType};
use crate::syntax::{Expr, ExprKind, UnaryOp};

/// A place in the source: a node of an item of a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    /// The file.
    pub file: FileName,
    /// The item and node.
    pub at: NodeRef,
}

impl Site {
    pub(crate) fn place(&self) -> Place {
        Place::Node(self.at)
    }
}

/// Where a node or value came from: the expression that made it, the statement it is in,
/// and the chain of block calls (outermost first) that led there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The call expression (an op call or an operator).
    pub expr: Site,
    /// The statement containing it (a source line).
    pub stmt: Site,
    /// The block calls that led here, outermost first. Shared by every node and value made
    /// in one block call.
    pub chain: Arc<[Site]>,
    /// Which execution of an outermost block call this is in (counting from 1; 0 outside
    /// any block): the segments of activation checkpointing when the model marks none.
    pub outer_call: u32,
    /// The `checkpoint(...)` call it runs in (counting from 1; 0 outside any): the segments
    /// of activation checkpointing when the model marks some. Markers inside a marked call
    /// are part of its segment.
    pub segment: u32,
    /// Which execution of a block call made inside an outermost block call this is in
    /// (counting from 1; 0 outside any): the segments one level below the model's body, which
    /// checkpointing advice proposes for a model whose body makes one block call.
    pub inner_call: u32,
    /// Whether it runs inside a `frozen(...)` call: its op's parameters are frozen
    /// (`requires_grad_(False)`).
    pub frozen: bool,
    /// Whether it runs inside an `fp32(...)` call: its op's parameters are float32 whatever
    /// the precision policy (`module.float()`).
    pub fp32: bool,
    /// Whether it runs inside a `no_autocast(...)` call (`torch.autocast(enabled=False)`):
    /// autocast neither casts its inputs nor picks its dtype.
    pub no_autocast: bool,
    /// The share of its op's parameters a token reads: `k` of `of` inside `routed(call, k,
    /// of)`, all of them elsewhere.
    pub active: ActiveShare,
}

/// The share of some parameters one token reads: `k` of `of` for one of `of` experts a token
/// is routed to `k` of (`routed(call, k, of)`; a product when routed calls nest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ActiveShare {
    /// The alternatives a token runs.
    pub k: u32,
    /// The alternatives there are.
    pub of: u32,
}

impl Default for ActiveShare {
    fn default() -> Self {
        ActiveShare { k: 1, of: 1 }
    }
}

impl ActiveShare {
    /// This share within `k` of `of` routed alternatives, reduced (`None` on overflow).
    pub fn within(self, k: u32, of: u32) -> Option<ActiveShare> {
        let (k, of) = (self.k.checked_mul(k)?, self.of.checked_mul(of)?);
        let (mut a, mut b) = (k, of);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        let gcd = a.max(1);
        Some(ActiveShare { k: k / gcd, of: of / gcd })
    }

    /// The active part of `params`, rounded down, `None` on overflow.
    pub fn of_params(self, params: &Dim) -> Option<Dim> {
        if self.k == self.of {
            return Some(params.clone());
        }
        params.mul(&Dim::Known(self.k.into()))?.floor_div(&Dim::Known(self.of.into()))
    }
}

/// A fast hasher for sites (a file name and two small integers): the
/// default one, resistant to chosen keys, costs more than the rest of a line's bookkeeping.
/// Multiply-rotate, as rustc's FxHasher.
#[derive(Default)]
pub struct SiteHasher(u64);

impl Hasher for SiteHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl SiteHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A hash map keyed by sites (or references to them), with [`SiteHasher`].
pub type SiteMap<K, V> = HashMap<K, V, BuildHasherDefault<SiteHasher>>;

/// Identifies a tensor of a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(pub u32);

/// One op application. Its name, arguments and result are shared, so that copying a node
/// (a block call reused from the previous elaboration) copies pointers, not shapes, and
/// comparing a copy with its original (salsa does, to keep what depends on an unchanged
/// graph) compares pointers.
#[derive(Debug, Clone)]
pub struct Node {
    /// The op (`conv2d`, or `add`/`sub`/`mul`/`div`/`matmul` for operators).
    pub op: Op,
    /// Its arguments, bound to parameter names (tensor arguments as types).
    pub args: Arc<Args>,
    /// Input tensors, in parameter order (shared by a copy at the same ids).
    pub inputs: Arc<[TensorId]>,
    /// Output tensors (shared by a copy at the same ids).
    pub outputs: Arc<[TensorId]>,
    /// Weights, buffers and MACs from the op's rule (its output types are the graph's
    /// tensors named by `outputs`, not repeated here).
    pub result: Arc<OpResult>,
    /// Parameters this node owns: its weights, unless they are shared with an earlier node
    /// (`share="..."`), in which case 0.
    pub params: Dim,
    /// Where it came from (shared by a copy).
    pub origin: Arc<Origin>,
}

impl Node {
    /// Whether the op's own weights are trained: it has some, it is not `frozen(...)`, and
    /// they are not quantized (bitsandbytes' `Params4bit` and `Int8Params` have no gradient).
    pub fn trains_weights(&self) -> bool {
        !self.result.weights.is_empty() && !self.origin.frozen && !self.op.quantizes_weight()
    }

    /// The op's autocast class where it runs: its own, or [`Autocast::Promote`] (its inputs'
    /// dtype) inside `no_autocast(...)`.
    pub fn autocast(&self) -> Autocast {
        if self.origin.no_autocast { Autocast::Promote } else { self.op.autocast() }
    }

    /// Whether autocast casts the op's half inputs to float32 where it runs
    /// ([`Op::autocast_casts_inputs`]; never inside `no_autocast(...)`).
    pub fn autocast_casts_inputs(&self) -> bool {
        !self.origin.no_autocast && self.op.autocast_casts_inputs()
    }

    /// The elements of the op's weight named `weight` (0 without one).
    pub fn weight_elements(&self) -> i128 {
        self.result.weights.iter().find(|w| w.name == "weight").and_then(|w| w.numel.known()).unwrap_or(0)
    }

    /// Whether the boolean argument `name` is true.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.args.values.get(name), Some(ArgValue::Bool(true)))
    }

    /// The integer argument `name`, when known.
    pub fn int_arg(&self, name: &str) -> Option<i128> {
        match self.args.values.get(name) {
            Some(ArgValue::Int(d)) => d.known(),
            _ => None,
        }
    }

    /// The number argument `name` (an integer read as a float), when known.
    pub fn float_arg(&self, name: &str) -> Option<f64> {
        match self.args.values.get(name) {
            Some(ArgValue::Float(f)) => Some(*f),
            Some(ArgValue::Int(d)) => d.known().map(|v| v as f64),
            _ => None,
        }
    }

    /// The string argument `name`, when given.
    pub fn str_arg(&self, name: &str) -> Option<&str> {
        match self.args.values.get(name) {
            Some(ArgValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether the node is a GPTQ layer (`linear_int4` in any format but `"awq"`).
    pub fn is_gptq(&self) -> bool {
        self.op == Op::LinearInt4 && self.str_arg("format") != Some("awq")
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        // Graphs share nodes: a node compared with itself is found by its address.
        if std::ptr::eq(self, other) {
            return true;
        }
        fn same<T: PartialEq + ?Sized>(a: &Arc<T>, b: &Arc<T>) -> bool {
            Arc::ptr_eq(a, b) || a == b
        }
        self.op == other.op
            && same(&self.args, &other.args)
            && same(&self.result, &other.result)
            && self.inputs == other.inputs
            && self.outputs == other.outputs
            && self.params == other.params
            && self.origin == other.origin
    }
}

/// A tensor passed to a checkpointed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentArg {
    /// The segment the call opened (counting from 1).
    pub segment: u32,
    /// The argument.
    pub tensor: TensorId,
}

/// The value a statement produced, for per-line shapes of block calls.
#[derive(Debug, Clone, PartialEq)]
pub struct StmtValue {
    /// Where (shared by a copy).
    pub origin: Arc<Origin>,
    /// The tensors it assigned or returned (shared by a copy at the same ids).
    pub tensors: Arc<[TensorId]>,
    /// Tensors with ids from this one on were made while the statement ran; the others
    /// existed before (`s = x` makes nothing new).
    pub first_new: TensorId,
}

/// An elaborated model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    /// Every tensor's type, by id (shared by a copy).
    pub tensors: Vec<Arc<TensorType>>,
    /// The ops, in execution order (shared: a copied call at the same ids shares its nodes).
    pub nodes: Vec<Arc<Node>>,
    /// The model's inputs, by name.
    pub inputs: Vec<(String, TensorId)>,
    /// The inputs whose declared shape uses the batch dimension `N`: a training step split
    /// into micro-batches (`grad_accum`) holds the whole batch of these, and runs the model on
    /// a view of each micro-batch in turn.
    pub batched_inputs: Vec<TensorId>,
    /// The model's outputs.
    pub outputs: Vec<TensorId>,
    /// What each executed statement produced.
    pub stmt_values: Vec<StmtValue>,
    /// The tensors passed to each `checkpoint(...)` call, by segment: PyTorch's checkpoint
    /// keeps the call's arguments for the recomputation until the segment's backward, read
    /// or not (transformers' layers get `position_ids` they never read, bound in a
    /// `partial`).
    pub segment_args: Vec<SegmentArg>,
    /// Errors found while elaborating.
    pub diagnostics: Vec<Diagnostic>,
    /// For each tensor, the node after which the program holds no reference to it (as
    /// Python would drop it: a temporary after the op that consumed it, a variable when it is
    /// reassigned or its block returns); `None` for the model's inputs and outputs.
    pub released_after: Vec<Option<u32>>,
    /// Whether a value that could not be computed, without an error (an undecidable
    /// comparison of unbound dimensions, say), reached an op, a condition, a `repeat` count or
    /// the model's outputs: the graph then holds only what could be decided.
    pub undecided: bool,
    /// Whether the elaboration read how the run goes (`checkpointing()`, `autocast_dtype()`):
    /// a scenario's graph is then not the model's own graph bound to the scenario's sizes.
    pub reads_the_run: bool,
}

impl Graph {
    /// An empty graph with room for as many tensors, nodes and statement values as this one.
    pub(crate) fn with_capacity(&self) -> Graph {
        Graph {
            tensors: Vec::with_capacity(self.tensors.len()),
            nodes: Vec::with_capacity(self.nodes.len()),
            stmt_values: Vec::with_capacity(self.stmt_values.len()),
            released_after: Vec::with_capacity(self.released_after.len()),
            ..Graph::default()
        }
    }

    /// The type of a tensor.
    pub fn tensor(&self, id: TensorId) -> &TensorType {
        &self.tensors[id.0 as usize]
    }

    /// Total parameters, `None` on overflow.
    pub fn params(&self) -> Option<Dim> {
        self.nodes.iter().try_fold(Dim::Known(0), |acc, n| acc.add(&n.params))
    }

    /// The parameters one token's forward pass reads, `None` on overflow: every parameter,
    /// except that a `parameter(..., active=k)` stack of experts counts `k` of the slices of
    /// its first dimension (a mixture of experts' top-k), and the parameters made inside
    /// `routed(call, k, of)` count `k / of` of theirs (one of separate experts), as "active
    /// parameters" are quoted.
    pub fn active_params(&self) -> Option<Dim> {
        self.nodes.iter().try_fold(Dim::Known(0), |acc, n| {
            let active = match (n.op, n.args.values.get("active"), n.args.values.get("shape")) {
                (Op::Parameter, Some(ArgValue::Int(k)), Some(ArgValue::Ints(shape))) if k.known() != Some(0) => {
                    match shape.first() {
                        Some(slices) => n.params.mul(k)?.floor_div(slices)?,
                        None => n.params.clone(),
                    }
                }
                _ => n.params.clone(),
            };
            acc.add(&n.origin.active.of_params(&active)?)
        })
    }

    /// Total MACs, `None` on overflow.
    pub fn macs(&self) -> Option<Dim> {
        self.nodes.iter().try_fold(Dim::Known(0), |acc, n| acc.add(&n.result.macs))
    }
}

/// A value during elaboration.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer.
    Int(Dim),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// A list of integers.
    Ints(Vec<Dim>),
    /// A tensor.
    Tensor(TensorId),
    /// Several tensors (a list, or a multi-output call).
    Tensors(Vec<TensorId>),
    /// A size in bytes (scenario settings).
    Size(u128),
    /// Not computable: because of an earlier, reported error, or (a model elaborated without
    /// a scenario) because it depends on a comparison of unbound dimensions.
    Unknown,
}

/// The value of a literal argument (a scenario's model arguments are literals).
pub fn literal_value(e: &Expr) -> Value {
    match &e.kind {
        ExprKind::Int(v) => Value::Int(Dim::Known(*v as i128)),
        ExprKind::Float(bits) => Value::Float(f64::from_bits(*bits)),
        ExprKind::Bool(b) => Value::Bool(*b),
        ExprKind::Str(s) => Value::Str(s.clone()),
        ExprKind::Unary { op: UnaryOp::Neg, operand } => match literal_value(operand) {
            Value::Int(d) => Dim::Known(0).sub(&d).map_or(Value::Unknown, Value::Int),
            Value::Float(f) => Value::Float(-f),
            _ => Value::Unknown,
        },
        ExprKind::List(elems) => {
            let ints: Option<Vec<Dim>> = elems
                .iter()
                .map(|x| match literal_value(x) {
                    Value::Int(d) => Some(d),
                    _ => None,
                })
                .collect();
            ints.map_or(Value::Unknown, Value::Ints)
        }
        _ => Value::Unknown,
    }
}
