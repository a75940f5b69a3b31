//! Elaboration: a model, with its arguments and dimension bindings, expanded into an op graph.
//!
//! The elaborator evaluates a model's body like an interpreter: integers (exact or symbolic
//! [`Dim`]s), booleans and strings are computed; block calls are inlined (each instance keeps
//! the chain of calls it came through); `repeat` unrolls; `if` picks its branch; every op call
//! becomes a [`Node`] whose output types come from the op's shape rule ([`ops::apply`]).
//!
//! Errors (a shape mismatch, an unbound dimension, an overflow) are diagnostics located at
//! syntax nodes. A value that could not be computed is [`Value::Unknown`]: ops that receive
//! one produce unknown outputs silently, so one mistake gives one error.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

mod apply;
mod calls;
mod eval;
mod instantiate;
mod queries;
mod reuse;
mod splice;

pub use self::queries::{
    Stopped, item_at, model_graph, scenario_graph, scenario_graph_at, scenario_graph_with, shape_diagnostics, stopped,
};

use crate::graph::{ActiveShare, Graph, Node, Origin, SegmentArg, Site, SiteMap, StmtValue, TensorId, Value};

/// The database interface of elaboration and of every layer after it: the base
/// [`crate::db::Db`] and the last elaboration of each model, whose block calls the next one
/// reuses. (A trait of its own, as ty layers its databases, so that the base database does
/// not depend on this layer.)
#[salsa::db]
pub trait Db: crate::db::Db {
    /// The last elaboration of each model.
    fn elaboration_cache(&self) -> &ElaborationCache;
}

pub use self::reuse::CallCounts;
pub use self::reuse::ElaborationCache;
use self::reuse::{
    CallRecord, CallSites, Occurrences, Previous, Resolutions, Reusable, UsedItem, remap, same_but_tensors,
};
use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::{Code, Diagnostic, FileName, NodeRef, Place};
use crate::op::Op;
use crate::semantics::files::{ItemLoc, file_scope, item_of, item_tree};
use crate::semantics::scope::DefKind;
use crate::semantics::{Builtin, Scope};
use crate::shapes::ops::{self, ArgValue, Args, OpError, OpResult};
use crate::shapes::{DType, Dim, TensorType};
use crate::syntax::{
    Arg, BinaryOp, Body, Callable, Expr, ExprKind, ForIter, Item, NodeId, OpDecl, Param, StmtKind, TypeExpr, UnaryOp,
};

/// The most nodes one elaboration may create (a guard against `repeat 1000000000`). An op
/// holds about 1.7 KB per elaboration (measured: `repeat 100000` of a one-op block checked
/// with its scenario, 367 MB at peak), and a file is elaborated once per scenario and once
/// per model: 250,000 ops bound one model to about 1 GB. The zoo's largest graph (Llama 3
/// 8B's training scenario) has 1,411 ops.
pub const MAX_NODES: usize = 250_000;
/// The deepest chain of block calls (a guard against a block that calls itself).
pub const MAX_CALL_DEPTH: usize = 64;

/// Elaboration stopped (a limit was hit); already reported.
struct Stop;

/// A frame's variables. Names borrow from the syntax trees, which the database holds for
/// the whole elaboration, so binding a variable allocates nothing.
type Env<'db> = BTreeMap<&'db str, Value>;

/// What a name called in a file refers to, with the callee's item borrowed from the database.
#[derive(Clone, Copy)]
enum Callee<'db> {
    /// An op, defined in `source`; `names` indexes [`Elaborator::param_names`], `used` the
    /// used items.
    Op { decl: &'db OpDecl, source: SourceFile, file: &'db FileName, item: u32, names: usize, used: u32 },
    /// A block, defined in `source`.
    Block { block: &'db Callable, source: SourceFile, file: &'db FileName, item: u32, used: u32 },
    /// Not callable (unknown, ambiguous, or of another kind): the call is unknown.
    Other,
}

/// What a model is elaborated with.
pub struct Request<'a> {
    /// The file defining the model.
    pub file: SourceFile,
    /// The model's item index.
    pub item: u32,
    /// Arguments for the model's parameters (by name), already evaluated.
    pub args: BTreeMap<String, Value>,
    /// Bound dimensions (`N`, `S`, ...).
    pub dims: BTreeMap<String, i128>,
    /// Whether every dimension must be bound (a scenario), or unbound ones stay symbolic.
    pub require_bound: bool,
    /// The site to blame for unbound dimensions (the scenario's name), if any.
    pub blame: Option<Site>,
    /// Description for notes ("scenario `serve`").
    pub context: &'a str,
    /// The tokens already in the key/value cache, when the scenario runs with one (`cache`):
    /// each `kv_cache(x)` then returns the cache with `x` appended; without one, `x`.
    pub cache: Option<i128>,
    /// Whether the run is a step of `generate()` (`new_tokens`): `generating()`.
    pub generating: bool,
    /// Whether the run checkpoints activations (training with `checkpoint`):
    /// `checkpointing()`.
    pub checkpointing: bool,
    /// Whether the modules run in training mode (no `eval`): `training()`.
    pub training: bool,
    /// The dtype autocast casts to in the run (`precision amp`/`amp_bf16`), if any:
    /// `autocast_dtype()`.
    pub autocast: Option<DType>,
}

struct Elaborator<'db, 'r> {
    db: &'db dyn Db,
    /// Callees already resolved, by calling file and name: a model calls the same few ops
    /// and blocks thousands of times, and each resolution reads several queries.
    callees: SiteMap<(SourceFile, &'db str), Callee<'db>>,
    /// The scope of each file resolved in, and the file of each name a definition is in:
    /// each looked up once (a model's thousand blocks are all defined in one or two files).
    scopes: SiteMap<SourceFile, &'db Scope>,
    sources: Vec<(&'db FileName, Option<SourceFile>)>,
    /// The parameter names of each op resolved, shared by the arguments of its nodes.
    param_names: Vec<Vec<Arc<str>>>,
    /// The parameter names of operators (`a + b`).
    operator_names: [Arc<str>; 3],
    /// Op names as nodes hold them, one allocation per op.
    graph: Graph,
    request: &'r Request<'r>,
    chain: Vec<Site>,
    /// `chain` as nodes hold it, made again only after a block call begins or ends.
    shared_chain: Option<Arc<[Site]>>,
    /// The weights tied by key so far, so that each counts once.
    tied: TiedWeights,
    stopped: bool,
    /// For each tensor, how many variables (in any active frame) refer to it.
    refs: Vec<u32>,
    /// The outermost block call being executed (0: none), and how many there were.
    outer_call: u32,
    outer_calls: u32,
    /// The `checkpoint(...)` call being executed (0: none), and how many there were.
    segment: u32,
    segments: u32,
    /// The block call made inside the outermost one being executed (0: none), and how many
    /// there were.
    inner_call: u32,
    inner_calls: u32,
    /// Whether the parameters made now are frozen (inside a `frozen(...)` call).
    frozen: bool,
    /// Whether the parameters made now are float32 whatever the policy (inside `fp32(...)`).
    fp32: bool,
    /// Whether the ops made now run outside autocast (inside `no_autocast(...)`).
    no_autocast: bool,
    /// The share of the parameters made now that a token reads (inside `routed(...)`).
    active: ActiveShare,
    /// Set by `checkpoint(...)`, `frozen(...)`, `fp32(...)` and `routed(...)` for the call
    /// they mark, which takes them.
    pending: Marks,
    /// The previous elaboration of this request, whose block calls may be reused.
    previous: Option<Reusable>,
    /// What this elaboration leaves for the next: the block calls being run (innermost
    /// last) and those that returned, ...
    open: Vec<OpenCall>,
    calls: Vec<Arc<CallRecord>>,
    /// ... the calls of each chain of call sites so far, by occurrence (their records, or
    /// [`NOT_RECORDED`] for calls not recorded), ...
    calls_at: CallSites,
    /// ... the items read (and their indices) and the names resolved.
    items: Vec<UsedItem>,
    item_ids: SiteMap<(SourceFile, u32), u32>,
    /// (Those the previous elaboration resolved, checked unchanged, are not repeated.)
    resolutions: Resolutions,
    /// How many calls of each block the model's body made so far.
    top_calls: SiteMap<(SourceFile, u32), u32>,
    /// How many times weights were tied by key: a call that ties some is not reused.
    share_uses: u32,
    /// How many values that could not be computed reached an op, a condition, a `repeat`
    /// count or the outputs ([`Graph::undecided`]); a call that met some is not reused.
    undecided: u32,
    /// Block calls run, and copied from the previous elaboration.
    counts: CallCounts,
}

/// Weights tied by key (`share="..."`): the first node with a key owns its weight, a later one
/// only its other parameters. Only `weight` is tied; a bias stays the node's own. Elaboration
/// and binding a graph to sizes (`instantiate`) tie them the same way, in the nodes' order.
#[derive(Default)]
struct TiedWeights(BTreeMap<String, Dim>);

impl TiedWeights {
    /// The parameters a node that ties `weight` by `key` owns, given `params`, its rule's
    /// count; an error message when an earlier node tied a weight of another size.
    fn tie(&mut self, key: &str, weight: &Dim, params: Dim) -> Result<Dim, String> {
        match self.0.get(key) {
            Some(first) if first.certainly_differs(weight) => Err(format!(
                "`share=\"{key}\"` ties weights of different sizes: {first} elements before, {weight} here"
            )),
            Some(_) => Ok(params.sub(weight).unwrap_or(Dim::Known(0))),
            None => {
                self.0.insert(key.to_string(), weight.clone());
                Ok(params)
            }
        }
    }
}

/// The key and size of the weight a node with these arguments and rule result ties, if it
/// ties one.
fn tied_weight<'a>(args: &'a Args, result: &'a OpResult) -> Option<(&'a str, &'a Dim)> {
    let Some(ArgValue::Str(key)) = args.values.get("share") else { return None };
    let weight = result.weights.iter().find(|w| w.name == "weight")?;
    (!key.is_empty()).then_some((key.as_str(), &weight.numel))
}

/// A block call being run, recorded as it goes.
struct OpenCall {
    record: CallRecord,
    /// The diagnostics, tied weights and undecided values before it.
    diagnostics: usize,
    share_uses: u32,
    undecided: u32,
}

/// Elaborates a model, reusing the block calls of its previous elaboration that are unchanged
/// (see the `reuse` module).
pub fn elaborate(db: &dyn Db, request: &Request<'_>) -> Arc<Graph> {
    let key = (request.file, request.item, request.blame.clone());
    let request_key = request_key(request);
    let cache = db.elaboration_cache();
    let reusable = Reusable::check(db, cache, &key, &request_key);
    let resolved_before = reusable.as_ref().map(|r| Arc::clone(&r.previous));
    let e = run(db, request, reusable);
    let graph = Arc::new(e.graph);
    // Debug builds (every test run) check each elaboration that reused calls against one
    // from scratch.
    if cfg!(debug_assertions) && e.counts.reused > 0 {
        let fresh = run(db, request, None).graph;
        assert!(fresh == *graph, "elaboration of {} reusing block calls differs from a fresh one", request.context);
    }
    let previous = Previous {
        graph: Arc::clone(&graph),
        top_level: Arc::new(reuse::top_level_calls(&e.calls)),
        request: request_key,
        calls: e.calls,
        by_site: Arc::new(e.calls_at),
        items: e.items,
        item_ids: e.item_ids,
        resolutions: reuse::all_resolutions(resolved_before.as_deref(), e.resolutions),
        counts: e.counts,
    };
    cache.put(key, previous);
    graph
}

fn request_key(request: &Request<'_>) -> reuse::RequestKey {
    reuse::RequestKey {
        args: request.args.clone(),
        dims: request.dims.clone(),
        require_bound: request.require_bound,
        context: request.context.to_string(),
        cache: request.cache,
        generating: request.generating,
        checkpointing: request.checkpointing,
        training: request.training,
        autocast: request.autocast,
    }
}

/// Elaborates a scenario's model as [`elaborate`] does, except after an edit of the
/// scenario's sizes only (its last elaboration was of the same request with other
/// dimensions): then the model's symbolic graph, from `symbolic` (the model elaborated on its
/// own, when the scenario passes it no arguments), is bound to the new sizes instead (see the
/// `instantiate` module), and the model's block calls are kept for the scenario's next
/// elaboration.
pub fn elaborate_scenario(
    db: &dyn Db,
    request: &Request<'_>,
    symbolic: impl FnOnce() -> Option<Arc<Graph>>,
) -> Arc<Graph> {
    let key = (request.file, request.item, request.blame.clone());
    let request_key = request_key(request);
    let cache = db.elaboration_cache();
    let resized = cache.get(&key).is_some_and(|previous| previous.request.differs_in_dims_only(&request_key));
    let Some(symbolic) = resized.then(symbolic).flatten() else { return elaborate(db, request) };
    let Some(graph) = instantiate::instantiate(&symbolic, &request.dims) else { return elaborate(db, request) };
    let graph = Arc::new(graph);
    if cfg!(debug_assertions) {
        let fresh = run(db, request, None).graph;
        assert!(fresh == *graph, "{} bound to its sizes differs from its elaboration", request.context);
    }
    // The model's calls, bound to the sizes, are this graph's: the next edit reuses them.
    let model = cache.get(&(request.file, request.item, None)).filter(|m| Arc::ptr_eq(&m.graph, &symbolic));
    if let Some(previous) = model.and_then(|m| instantiate::bound_records(&m, Arc::clone(&graph), request_key)) {
        cache.put(key, previous);
    }
    graph
}

/// Elaborates a model, reusing calls of `previous` if given.
fn run<'db, 'r>(db: &'db dyn Db, request: &'r Request<'r>, previous: Option<Reusable>) -> Elaborator<'db, 'r> {
    let capacity = previous.as_ref().map_or((0, 0), |r| (r.previous.graph.tensors.len(), r.previous.calls.len()));
    // The maps filled call by call start as large as the previous elaboration's: growing a
    // map of thousands of entries rehashes it several times.
    fn sized<K, V>(len: usize) -> SiteMap<K, V> {
        SiteMap::with_capacity_and_hasher(len, Default::default())
    }
    let (callees, sites, top_calls) = previous.as_ref().map_or_else(
        || (SiteMap::default(), SiteMap::default(), SiteMap::default()),
        |r| (sized(r.previous.items.len()), sized(r.previous.by_site.len()), sized(r.previous.top_level.len())),
    );
    let (items, item_ids) =
        previous.as_ref().map_or_else(Default::default, |r| (r.previous.items.clone(), r.previous.item_ids.clone()));
    let mut e = Elaborator {
        db,
        callees,
        scopes: SiteMap::default(),
        sources: Vec::new(),
        param_names: Vec::new(),
        operator_names: ["a".into(), "b".into(), "inplace".into()],
        // About as large as the previous graph: growing a vector of thousands of nodes copies it.
        graph: previous.as_ref().map_or_else(Graph::default, |r| r.previous.graph.with_capacity()),
        request,
        chain: Vec::new(),
        shared_chain: None,
        tied: TiedWeights::default(),
        stopped: false,
        refs: Vec::with_capacity(capacity.0),
        outer_call: 0,
        outer_calls: 0,
        segment: 0,
        segments: 0,
        frozen: false,
        fp32: false,
        no_autocast: false,
        active: ActiveShare::default(),
        pending: Marks::default(),
        inner_call: 0,
        inner_calls: 0,
        previous,
        open: Vec::new(),
        calls: Vec::with_capacity(capacity.1),
        calls_at: sites,
        // The previous elaboration's items keep their indices, so that its records' item
        // lists hold here too.
        items,
        item_ids,
        resolutions: Resolutions::default(),
        top_calls,
        share_uses: 0,
        undecided: 0,
        counts: CallCounts::default(),
    };
    if let Some(Item::Model(model)) = item_tree(db, ItemLoc::new(db, request.file, request.item)).as_deref() {
        let _ = e.model(model);
    }
    e.graph.undecided = e.undecided > 0;
    e
}

impl<'db> Elaborator<'db, '_> {
    fn site(&self, file: &FileName, item: u32, node: NodeId) -> Site {
        Site { file: file.clone(), at: NodeRef { item, node: node.0 } }
    }

    fn report(&mut self, mut d: Diagnostic) {
        if !self.request.context.is_empty() {
            d = d.with_note(format!("while elaborating {}", self.request.context));
        }
        // A block that calls itself repeats one call site: label it once.
        let mut previous: Option<&Site> = None;
        for call in self.chain.iter().rev() {
            let is_primary = d.primary().file == call.file && d.primary().place == call.place();
            if previous != Some(call) && !is_primary {
                d = d.with_label(&call.file, call.place(), "in the block called here");
            }
            previous = Some(call);
        }
        self.graph.diagnostics.push(d);
    }

    fn error_at(&mut self, code: Code, site: &Site, message: impl Into<String>) {
        let d = Diagnostic::new(code, message, &site.file, site.place());
        self.report(d);
    }

    /// Reports an elaboration limit (E0504) at `node` and stops the whole elaboration: what
    /// was built so far is all the graph has.
    fn stop_at_limit(&mut self, ctx: &Ctx, node: NodeId, message: String) -> Stop {
        let site = self.site(ctx.name, ctx.item, node);
        self.error_at(Code::RecursionLimit, &site, message);
        self.stopped = true;
        Stop
    }

    /// The current chain of block calls, as nodes hold it.
    fn shared_chain(&mut self) -> Arc<[Site]> {
        self.shared_chain.get_or_insert_with(|| self.chain.as_slice().into()).clone()
    }

    /// Where what is made now comes from: `expr` in statement `stmt`, in the calls, the
    /// checkpoint segment and the frozen region being executed.
    fn origin(&mut self, expr: Site, stmt: Site) -> Arc<Origin> {
        Arc::new(Origin {
            expr,
            stmt,
            chain: self.shared_chain(),
            outer_call: self.outer_call,
            segment: self.segment,
            inner_call: self.inner_call,
            frozen: self.frozen,
            fp32: self.fp32,
            no_autocast: self.no_autocast,
            active: self.active,
        })
    }

    fn new_tensor(&mut self, t: TensorType) -> TensorId {
        self.graph.tensors.push(Arc::new(t));
        self.graph.released_after.push(None);
        self.refs.push(0);
        TensorId(self.graph.tensors.len() as u32 - 1)
    }

    /// Marks a tensor as no longer referenced by the program, after the last node so far.
    fn release(&mut self, t: TensorId) {
        let made = self.graph.nodes.len() as u32;
        self.graph.released_after[t.0 as usize] = Some(made.saturating_sub(1));
        // A block call that releases a tensor it was given: its reuse must do it too.
        for open in self.open.iter_mut().rev() {
            if t.0 >= open.record.tensors.0 {
                break;
            }
            open.record.input_releases.push((t, made - open.record.nodes.0));
        }
    }

    /// Binds `name` to `value` in a frame, dropping the reference of its old value.
    fn assign(&mut self, env: &mut Env<'db>, name: &'db str, value: Value) {
        self.hold(&value);
        if let Some(old) = env.insert(name, value) {
            self.drop_refs(&old, &[]);
        }
    }

    /// Takes one reference to each tensor of `value` (a name bound to it, a loop running over
    /// it); [`Self::drop_refs`] gives it back.
    fn hold(&mut self, value: &Value) {
        for t in value_tensors(value) {
            self.refs[t.0 as usize] += 1;
        }
    }

    /// Drops one reference to each tensor of `value`; those left with none are released,
    /// except the ones in `keep` (values being returned to the caller).
    fn drop_refs(&mut self, value: &Value, keep: &[TensorId]) {
        for &t in value_tensors(value) {
            let refs = &mut self.refs[t.0 as usize];
            *refs = refs.saturating_sub(1);
            if *refs == 0 && !keep.contains(&t) {
                self.release(t);
            }
        }
    }

    /// Ends a frame: its variables are dropped, except what it returns.
    fn drop_frame(&mut self, env: Env<'db>, returned: &[Value]) {
        let keep = tensors_of(returned);
        for value in env.into_values() {
            self.drop_refs(&value, &keep);
        }
    }
}

/// The elementwise op an arithmetic or comparison operator applies to tensors (`%`, `@`,
/// `and`, `or`, `**` have none: `**` is `pow`, whose parameters are named otherwise).
fn tensor_op(op: BinaryOp) -> Option<Op> {
    Some(match op {
        BinaryOp::Add => Op::Add,
        BinaryOp::Sub => Op::Sub,
        BinaryOp::Mul => Op::Mul,
        BinaryOp::Div => Op::Div,
        BinaryOp::FloorDiv => Op::FloorDivide,
        BinaryOp::Lt => Op::Lt,
        BinaryOp::Le => Op::Le,
        BinaryOp::Gt => Op::Gt,
        BinaryOp::Ge => Op::Ge,
        BinaryOp::Eq => Op::Eq,
        BinaryOp::Ne => Op::Ne,
        BinaryOp::Rem | BinaryOp::MatMul | BinaryOp::Pow | BinaryOp::And | BinaryOp::Or => return None,
    })
}

/// The tensors among values (lists of tensors flattened).
fn tensors_of(values: &[Value]) -> Arc<[TensorId]> {
    match values {
        // One tensor (most statements): one allocation, not a list and then a copy.
        [Value::Tensor(t)] => Arc::from([*t]),
        _ => values.iter().flat_map(value_tensors).copied().collect(),
    }
}

/// The tensors of one value.
fn value_tensors(value: &Value) -> &[TensorId] {
    match value {
        Value::Tensor(t) => std::slice::from_ref(t),
        Value::Tensors(ts) => ts,
        _ => &[],
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(Dim::Known(i)) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// Arguments bound to parameters: name, value, and the argument's node (none for a default).
type Bound<'db> = Vec<(&'db str, Value, Option<NodeId>)>;

/// Where each argument of an op application is, for the labels of its error: parameter
/// names and argument nodes, or the bound arguments of a call (read only on an error).
#[derive(Clone, Copy)]
enum Blame<'a, 'db> {
    Pairs(&'a [(&'a str, NodeId)]),
    Bound(&'a Bound<'db>),
}

impl Blame<'_, '_> {
    /// The argument node of parameter `param`, if it was given.
    fn node(&self, param: &str) -> Option<NodeId> {
        match self {
            Blame::Pairs(pairs) => pairs.iter().find(|(p, _)| *p == param).map(|(_, node)| *node),
            Blame::Bound(bound) => bound.iter().find(|(p, _, _)| *p == param).and_then(|(_, _, node)| *node),
        }
    }
}

/// The file, item and statement being evaluated.
struct Ctx<'db> {
    file: SourceFile,
    name: &'db FileName,
    item: u32,
    stmt: Cell<NodeId>,
}

impl<'db> Ctx<'db> {
    /// The same place, at another statement.
    fn at_stmt(&self, stmt: NodeId) -> Ctx<'db> {
        Ctx { file: self.file, name: self.name, item: self.item, stmt: Cell::new(stmt) }
    }
}

/// The marks a call takes from `checkpoint(...)`, `frozen(...)`, `fp32(...)` and
/// `routed(...)` around it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Marks {
    /// A checkpoint segment.
    pub checkpoint: bool,
    /// Frozen parameters.
    pub frozen: bool,
    /// Float32 parameters.
    pub fp32: bool,
    /// Ops outside autocast.
    pub no_autocast: bool,
    /// The share of the parameters a token reads (`routed(call, k, of)`: `k` of `of`; the
    /// product of nested marks).
    pub routed: ActiveShare,
}
