//! A scenario's graph from its model's symbolic graph, when only sizes changed.
//!
//! Changing a scenario's batch size (or any dimension it binds) changes every tensor of the
//! model, so no block call of its previous elaboration can be copied (see the `reuse`
//! module), yet the model's graph without the scenario (dimensions symbolic: `[N, 64]`) did
//! not change at all. [`instantiate`] binds that graph's dimensions to the scenario's sizes
//! instead of elaborating the model again: every tensor type is bound, and every op whose
//! arguments hold an unbound dimension has its rule applied again to the bound arguments.
//!
//! The result is the graph a concrete elaboration would make, or `None`:
//! - an op's rule applied to bound arguments must give exactly the bound types of its
//!   outputs, so that every shape the elaboration read (`x.shape[1]`) and every decision an
//!   op's rule made with symbolic sizes (broadcasting `N` against `1`, say) hold for these
//!   sizes; a rule that fails for them (an error the concrete elaboration would report), a
//!   dimension left unbound, or a size that overflows also give `None`;
//! - the symbolic graph must have no diagnostics, and no value that could not be computed
//!   (an undecidable comparison of unbound dimensions) may have reached an op, a condition
//!   or the model's outputs ([`Graph::undecided`]): such a graph holds only what could be
//!   decided;
//! - weights tied by key (`share=`) are tied again as elaboration ties them: the first node
//!   of a key owns its weight, and a later one of another size fails.
//!
//! Debug builds (every test run) check each graph made here against a concrete elaboration.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Graph, Node};
use crate::shapes::dim::Poly;
use crate::shapes::ops::{self, ArgValue, Args, OpResult};
use crate::shapes::{Dim, TensorType};

/// Binds `symbolic`'s unbound dimensions to `dims`; `None` when the result could differ from
/// a concrete elaboration (see the module documentation).
pub(super) fn instantiate(symbolic: &Graph, dims: &BTreeMap<String, i128>) -> Option<Graph> {
    if !symbolic.diagnostics.is_empty() || symbolic.undecided {
        return None;
    }
    let mut bind = Binder { dims, memo: Vec::new(), tied: BTreeMap::new() };
    // The tensors no node makes (the model's inputs) are bound first; a node's outputs are
    // those of its rule, once checked.
    let mut made = vec![false; symbolic.tensors.len()];
    for node in &symbolic.nodes {
        for &t in node.outputs.iter() {
            made[t.0 as usize] = true;
        }
    }
    let mut tensors: Vec<Option<Arc<TensorType>>> = Vec::with_capacity(symbolic.tensors.len());
    for (t, was_made) in symbolic.tensors.iter().zip(&made) {
        if *was_made {
            tensors.push(None);
            continue;
        }
        let bound = bind.tensor(t)?;
        // An input's sizes must be positive and its bytes countable, as elaboration checks.
        if bound.shape.iter().any(|d| d.known().is_none_or(|v| v < 1)) {
            return None;
        }
        bound.bytes()?;
        tensors.push(Some(bound));
    }
    let mut nodes = Vec::with_capacity(symbolic.nodes.len());
    for node in &symbolic.nodes {
        nodes.push(bind.node(node, symbolic, &mut tensors)?);
    }
    Some(Graph {
        tensors: tensors.into_iter().collect::<Option<_>>()?,
        nodes,
        inputs: symbolic.inputs.clone(),
        outputs: symbolic.outputs.clone(),
        stmt_values: symbolic.stmt_values.clone(),
        diagnostics: Vec::new(),
        released_after: symbolic.released_after.clone(),
        undecided: false,
    })
}

/// Binds dimensions, remembering the values of the few polynomials a graph shares (most of
/// a model's symbolic dimensions are clones of its inputs' `N`).
struct Binder<'a> {
    dims: &'a BTreeMap<String, i128>,
    /// Bound polynomials, by address (the symbolic graph keeps them alive).
    memo: Vec<(*const Poly, i128)>,
    /// The size of each weight tied by key, from the first node that has it.
    tied: BTreeMap<String, Dim>,
}

impl Binder<'_> {
    /// How many polynomials are remembered: a graph has a handful.
    const MEMO: usize = 32;

    /// The value of `d`, `None` if it stays symbolic or overflows.
    fn value(&mut self, d: &Dim) -> Option<i128> {
        let poly = match d {
            Dim::Known(v) => return Some(*v),
            Dim::Sym(poly) => poly,
        };
        let at = Arc::as_ptr(poly);
        if let Some((_, v)) = self.memo.iter().find(|(p, _)| *p == at) {
            return Some(*v);
        }
        let value = d.bind(self.dims)?.known()?;
        if self.memo.len() < Self::MEMO {
            self.memo.push((at, value));
        }
        Some(value)
    }

    fn dim(&mut self, d: &Dim) -> Option<Dim> {
        self.value(d).map(Dim::Known)
    }

    /// `t` bound, shared when it has no symbolic dimension.
    fn tensor(&mut self, t: &Arc<TensorType>) -> Option<Arc<TensorType>> {
        if !is_symbolic(t) {
            return Some(Arc::clone(t));
        }
        Some(Arc::new(self.tensor_type(t)?))
    }

    fn tensor_type(&mut self, t: &TensorType) -> Option<TensorType> {
        let shape = t.shape.iter().map(|d| self.dim(d)).collect::<Option<Vec<_>>>()?;
        Some(TensorType::new(t.dtype, shape))
    }

    /// Whether `concrete` is `symbolic` bound.
    fn binds_to(&mut self, symbolic: &TensorType, concrete: &TensorType) -> bool {
        symbolic.dtype == concrete.dtype
            && symbolic.rank() == concrete.rank()
            && symbolic
                .shape
                .iter()
                .zip(&concrete.shape)
                .all(|(s, c)| self.value(s).is_some_and(|v| Dim::Known(v) == *c))
    }

    /// `node` with its arguments bound and its rule applied to them (the node itself when no
    /// argument holds a symbolic dimension); its outputs are set in `tensors`, the graph's
    /// bound tensors so far.
    fn node(
        &mut self,
        node: &Arc<Node>,
        symbolic: &Graph,
        tensors: &mut [Option<Arc<TensorType>>],
    ) -> Option<Arc<Node>> {
        if !node.args.values.iter().any(|(_, a)| arg_is_symbolic(a)) {
            for &t in node.outputs.iter() {
                tensors[t.0 as usize] = Some(self.tensor(&symbolic.tensors[t.0 as usize])?);
            }
            // Its weights are as before, and so is what it owns; a key it ties is noted.
            self.tie(&node.args, &node.result)?;
            return Some(Arc::clone(node));
        }
        let values = node.args.values.try_map(|value| match value {
            // An input tensor: the graph's bound type, shared as elaboration shares it.
            ArgValue::Tensor(t) => match node.inputs.iter().find(|i| Arc::ptr_eq(t, &symbolic.tensors[i.0 as usize])) {
                Some(i) => tensors[i.0 as usize].clone().map(ArgValue::Tensor),
                None => self.tensor(t).map(ArgValue::Tensor),
            },
            ArgValue::Tensors(ts) => {
                ts.iter().map(|t| self.tensor_type(t)).collect::<Option<_>>().map(ArgValue::Tensors)
            }
            ArgValue::Int(d) => self.dim(d).map(ArgValue::Int),
            ArgValue::Ints(ds) => ds.iter().map(|d| self.dim(d)).collect::<Option<_>>().map(ArgValue::Ints),
            other => Some(other.clone()),
        })?;
        let args = Args { values };
        let mut result = ops::apply(&node.op, &args).ok()?;
        // The rule must give the bound types the rest of the elaboration read.
        if result.outputs.len() != node.outputs.len() {
            return None;
        }
        for (output, &t) in std::mem::take(&mut result.outputs).into_iter().zip(node.outputs.iter()) {
            if !self.binds_to(&symbolic.tensors[t.0 as usize], &output) {
                return None;
            }
            output.bytes()?;
            tensors[t.0 as usize] = Some(Arc::new(output));
        }
        let params = self.tie(&args, &result)?;
        Some(Arc::new(Node {
            op: Arc::clone(&node.op),
            args: Arc::new(args),
            inputs: Arc::clone(&node.inputs),
            outputs: Arc::clone(&node.outputs),
            result: Arc::new(result),
            params,
            origin: Arc::clone(&node.origin),
        }))
    }
}

impl Binder<'_> {
    /// The parameters a node with this rule's `result` owns, as elaboration counts them: a
    /// weight tied by key (`share="..."`) belongs to the first node that has the key; `None`
    /// when a later node's weight has another size (elaboration reports that).
    fn tie(&mut self, args: &Args, result: &OpResult) -> Option<Dim> {
        let params = result.params()?;
        let Some(ArgValue::Str(key)) = args.values.get("share") else { return Some(params) };
        let weight = result.weights.iter().find(|w| w.name == "weight").map(|w| &w.numel);
        let (false, Some(weight)) = (key.is_empty(), weight) else { return Some(params) };
        match self.tied.get(key) {
            Some(first) if first.certainly_differs(weight) => None,
            Some(_) => Some(params.sub(weight).unwrap_or(Dim::Known(0))),
            None => {
                self.tied.insert(key.clone(), weight.clone());
                Some(params)
            }
        }
    }
}

fn is_symbolic(t: &TensorType) -> bool {
    t.shape.iter().any(|d| matches!(d, Dim::Sym(_)))
}

fn arg_is_symbolic(a: &ArgValue) -> bool {
    match a {
        ArgValue::Tensor(t) => is_symbolic(t),
        ArgValue::Tensors(ts) => ts.iter().any(is_symbolic),
        ArgValue::Int(d) => matches!(d, Dim::Sym(_)),
        ArgValue::Ints(ds) => ds.iter().any(|d| matches!(d, Dim::Sym(_))),
        ArgValue::Float(_) | ArgValue::Bool(_) | ArgValue::Str(_) => false,
    }
}
