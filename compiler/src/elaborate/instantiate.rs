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

use super::reuse::{CallCounts, CallRecord, Previous, RequestKey};
use super::{Graph, Node, TiedWeights, Value, tied_weight};
use crate::shapes::dim::Poly;
use crate::shapes::ops::{self, ArgValue, Args};
use crate::shapes::{Dim, TensorType};

/// Binds `symbolic`'s unbound dimensions to `dims`; `None` when the result could differ from
/// a concrete elaboration (see the module documentation).
pub(super) fn instantiate(symbolic: &Graph, dims: &BTreeMap<String, i128>) -> Option<Graph> {
    if !symbolic.diagnostics.is_empty() || symbolic.undecided {
        return None;
    }
    // The tensors no node makes: the model's inputs.
    let mut made = vec![false; symbolic.tensors.len()];
    for node in &symbolic.nodes {
        for &t in node.outputs.iter() {
            made[t.0 as usize] = true;
        }
    }
    // Each tensor's bound type; then each node's arguments bound and its rule applied again,
    // checked against those types. Tensors, then nodes, do not depend on one another, so a
    // large graph is bound on several threads.
    let tensors = in_parallel(&symbolic.tensors, PER_THREAD, |start, chunk| {
        let mut bind = Binder::new(dims);
        let bound = chunk.iter().zip(&made[start..]).map(|(t, &was_made)| {
            let bound = bind.tensor(t)?;
            // An input's sizes must be positive, as elaboration checks; every tensor's bytes
            // must be countable (elaboration reports an overflow).
            if !was_made && bound.shape.iter().any(|d| d.known().is_none_or(|v| v < 1)) {
                return None;
            }
            bound.bytes()?;
            Some(bound)
        });
        bound.collect()
    })?;
    let mut nodes = in_parallel(&symbolic.nodes, PER_THREAD, |_, chunk| {
        let mut bind = Binder::new(dims);
        chunk.iter().map(|node| bind.node(node, symbolic, &tensors)).collect()
    })?;
    tie(&mut nodes)?;
    Some(Graph {
        tensors,
        nodes,
        inputs: symbolic.inputs.clone(),
        batched_inputs: symbolic.batched_inputs.clone(),
        outputs: symbolic.outputs.clone(),
        stmt_values: symbolic.stmt_values.clone(),
        segment_args: symbolic.segment_args.clone(),
        diagnostics: Vec::new(),
        released_after: symbolic.released_after.clone(),
        undecided: false,
        reads_the_run: symbolic.reads_the_run,
    })
}

/// The fewest tensors or nodes worth a thread of their own.
const PER_THREAD: usize = 2_000;

/// `f` over consecutive chunks of `items` (given each chunk's start), the results in order;
/// `None` if a chunk's is. The items are split over up to four threads, at least
/// `per_thread` each.
fn in_parallel<T: Sync, U: Send>(
    items: &[T],
    per_thread: usize,
    f: impl Fn(usize, &[T]) -> Option<Vec<U>> + Sync,
) -> Option<Vec<U>> {
    if items.len() < 2 * per_thread {
        return f(0, items);
    }
    // Asked once: on Linux the answer reads the process's cgroup files.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = cores.min(4).min(items.len() / per_thread);
    if threads < 2 {
        return f(0, items);
    }
    let size = items.len().div_ceil(threads);
    let f = &f;
    let parts: Vec<Option<Vec<U>>> = std::thread::scope(|scope| {
        let spawned: Vec<_> = items
            .chunks(size)
            .enumerate()
            .skip(1)
            .map(|(i, chunk)| {
                let work = move || f(i * size, chunk);
                // A thread that cannot be started leaves its chunk to this one.
                std::thread::Builder::new().spawn_scoped(scope, work).map_err(|_| (i, chunk))
            })
            .collect();
        let mut parts = vec![f(0, &items[..size])];
        for handle in spawned {
            parts.push(match handle {
                Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err((i, chunk)) => f(i * size, chunk),
            });
        }
        parts
    });
    parts.into_iter().try_fold(Vec::with_capacity(items.len()), |mut all, part| {
        all.extend(part?);
        Some(all)
    })
}

/// Ties weights by key as elaboration does ([`TiedWeights`]), in the nodes' order; `None`
/// when a later weight has another size (elaboration reports that).
fn tie(nodes: &mut [Arc<Node>]) -> Option<()> {
    let mut tied = TiedWeights::default();
    for node in nodes.iter_mut() {
        let Some((key, weight)) = tied_weight(&node.args, &node.result) else { continue };
        let owned = tied.tie(key, weight, node.result.params()?).ok()?;
        if node.params != owned {
            Arc::make_mut(node).params = owned;
        }
    }
    Some(())
}

/// The records the elaboration of `request` would leave, when its graph (`graph`) is `model`'s
/// bound to the request's dimensions: the model's calls, their arguments and results bound;
/// `None` when one cannot be bound. The next edit copies calls from them.
pub(super) fn bound_records(model: &Previous, graph: Arc<Graph>, request: RequestKey) -> Option<Previous> {
    let mut bind = Binder::new(&request.dims);
    let mut value = |value: &Value| -> Option<Value> {
        Some(match value {
            Value::Int(d) => Value::Int(bind.dim(d)?),
            Value::Ints(ds) => Value::Ints(ds.iter().map(|d| bind.dim(d)).collect::<Option<_>>()?),
            other => other.clone(),
        })
    };
    let symbolic = |value: &Value| match value {
        Value::Int(d) => matches!(d, Dim::Sym(_)),
        Value::Ints(ds) => ds.iter().any(|d| matches!(d, Dim::Sym(_))),
        _ => false,
    };
    let mut calls = Vec::with_capacity(model.calls.len());
    for call in &model.calls {
        // Most calls are given tensors and literals: the same record.
        if !call.args.iter().any(|(_, v)| symbolic(v)) && !symbolic(&call.result) {
            calls.push(Arc::clone(call));
            continue;
        }
        let args = call.args.iter().map(|(name, v)| Some((name.clone(), value(v)?))).collect::<Option<_>>()?;
        calls.push(Arc::new(CallRecord { args, result: value(&call.result)?, ..CallRecord::clone(call) }));
    }
    Some(Previous {
        graph,
        request,
        calls,
        by_site: Arc::clone(&model.by_site),
        top_level: Arc::clone(&model.top_level),
        items: model.items.clone(),
        item_ids: model.item_ids.clone(),
        resolutions: Arc::clone(&model.resolutions),
        counts: CallCounts { ran: 0, reused: 0, bound: model.calls.len() as u32 },
    })
}

/// Binds dimensions, remembering the values of the few polynomials a graph shares (most of
/// a model's symbolic dimensions are clones of its inputs' `N`).
struct Binder<'a> {
    dims: &'a BTreeMap<String, i128>,
    /// Bound polynomials, by address (the symbolic graph keeps them alive).
    memo: Vec<(*const Poly, i128)>,
}

impl<'a> Binder<'a> {
    /// How many polynomials are remembered: a graph has a handful.
    const MEMO: usize = 32;

    fn new(dims: &'a BTreeMap<String, i128>) -> Self {
        Binder { dims, memo: Vec::new() }
    }

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

    /// `node` with its arguments bound (its input tensors are the graph's bound `tensors`)
    /// and its rule applied to them, which must give the bound types of its outputs; the node
    /// itself when no argument holds a symbolic dimension. What it owns of a weight tied by
    /// key is settled by [`tie`].
    fn node(&mut self, node: &Arc<Node>, symbolic: &Graph, tensors: &[Arc<TensorType>]) -> Option<Arc<Node>> {
        if !node.args.values.iter().any(|(_, a)| arg_is_symbolic(a)) {
            return Some(Arc::clone(node));
        }
        let values = node.args.values.try_map(|value| match value {
            // An input tensor: the graph's bound type, shared as elaboration shares it.
            ArgValue::Tensor(t) => match node.inputs.iter().find(|i| Arc::ptr_eq(t, &symbolic.tensors[i.0 as usize])) {
                Some(i) => Some(ArgValue::Tensor(Arc::clone(&tensors[i.0 as usize]))),
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
        let mut result = ops::apply(node.op, &args).ok()?;
        // The rule must give the bound types the rest of the elaboration read.
        let outputs = std::mem::take(&mut result.outputs);
        if outputs.len() != node.outputs.len()
            || outputs.iter().zip(node.outputs.iter()).any(|(o, &t)| *o != *tensors[t.0 as usize])
        {
            return None;
        }
        Some(Arc::new(Node {
            op: node.op,
            args: Arc::new(args),
            inputs: Arc::clone(&node.inputs),
            outputs: Arc::clone(&node.outputs),
            params: result.params()?,
            result: Arc::new(result),
            origin: Arc::clone(&node.origin),
        }))
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

#[cfg(test)]
mod tests {
    use super::in_parallel;

    #[test]
    fn chunks_come_back_in_order_and_a_failure_fails_all() {
        let items: Vec<u32> = (0..1_000).collect();
        let doubled = in_parallel(&items, 100, |start, chunk| {
            assert_eq!(chunk[0] as usize, start);
            Some(chunk.iter().map(|i| i * 2).collect())
        });
        assert_eq!(doubled, Some(items.iter().map(|i| i * 2).collect()));
        let failed = in_parallel(&items, 100, |_, chunk| (!chunk.contains(&777)).then(|| chunk.to_vec()));
        assert_eq!(failed, None);
    }
}
