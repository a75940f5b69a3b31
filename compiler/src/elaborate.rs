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

mod instantiate;
mod reuse;

use std::collections::HashSet;

use crate::diagnostics::Severity;
use crate::graph::{Graph, Node, Origin, Site, SiteMap, StmtValue, TensorId, Value};

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
use crate::semantics::Scope;
use crate::semantics::files::{ItemLoc, file_scope, has_syntax_errors, item_of, item_tree, syntax_tree};
use crate::semantics::queries::check_file;
use crate::semantics::scope::DefKind;
use crate::semantics::setup::scenario_setup;
use crate::shapes::ops::{self, ArgValue, Args, OpError, OpResult};
use crate::shapes::{DType, Dim, TensorType};
use crate::syntax::{
    Arg, BinaryOp, Body, Callable, Expr, ExprKind, Item, NodeId, OpDecl, Param, StmtKind, TypeExpr, UnaryOp,
};

/// The most nodes one elaboration may create (a guard against `repeat 1000000000`).
pub const MAX_NODES: usize = 2_000_000;
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

    /// The current chain of block calls, as nodes hold it.
    fn shared_chain(&mut self) -> Arc<[Site]> {
        self.shared_chain.get_or_insert_with(|| self.chain.as_slice().into()).clone()
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
        for t in value_tensors(&value) {
            self.refs[t.0 as usize] += 1;
        }
        if let Some(old) = env.insert(name, value) {
            self.drop_refs(&old, &[]);
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

    fn model(&mut self, model: &'db Callable) -> Result<(), Stop> {
        let file = self.request.file;
        let ctx = Ctx { file, name: file.name(self.db), item: self.request.item, stmt: Default::default() };
        let mut env = Env::new();
        for p in &model.params {
            let value = match self.request.args.get(&p.name.text) {
                Some(v) => v.clone(),
                None => match &p.default {
                    Some(d) => self.eval_in(d, &Env::new(), &ctx)?,
                    None => Value::Unknown,
                },
            };
            self.assign(&mut env, &p.name.text, value);
        }
        let outputs = self.body(&model.body, &mut env, &ctx, true)?;
        self.drop_frame(env, outputs.as_deref().unwrap_or(&[]));
        // The model's inputs and outputs are held by the caller for the whole run.
        for (_, t) in &self.graph.inputs {
            self.graph.released_after[t.0 as usize] = None;
        }
        if let Some(outputs) = &outputs {
            for &t in tensors_of(outputs).iter() {
                self.graph.released_after[t.0 as usize] = None;
            }
        }
        if let Some(outputs) = outputs {
            for v in outputs {
                match v {
                    Value::Tensor(t) => self.graph.outputs.push(t),
                    Value::Tensors(ts) => self.graph.outputs.extend(ts),
                    Value::Unknown => self.undecided += 1,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Runs a body; returns the returned values if it returned.
    fn body(
        &mut self,
        body: &'db Body,
        env: &mut Env<'db>,
        ctx: &Ctx<'db>,
        is_model: bool,
    ) -> Result<Option<Vec<Value>>, Stop> {
        for stmt in &body.stmts {
            let stmt_site = self.site(ctx.name, ctx.item, stmt.id);
            let stmt_start = self.graph.tensors.len() as u32;
            match &stmt.kind {
                StmtKind::Input { name, ty } => {
                    if !is_model {
                        continue;
                    }
                    let value = self.input(name.text.as_str(), ty, env, ctx)?;
                    if let Value::Tensor(t) = value {
                        self.graph.inputs.push((name.text.clone(), t));
                        self.record(stmt_site, stmt_start, Arc::from([t]));
                    }
                    self.assign(env, &name.text, value);
                }
                StmtKind::Assign { targets, value } => {
                    let v = self.eval_stmt_expr(value, env, ctx, stmt.id, targets.len())?;
                    let values = match (targets.len(), v) {
                        (1, v) => vec![v],
                        (n, Value::Tensors(ts)) if ts.len() == n => ts.into_iter().map(Value::Tensor).collect(),
                        (n, Value::Tensors(ts)) => {
                            // Only a variadic op (split) can get here: the checks know the rest.
                            let site = self.site(ctx.name, ctx.item, value.id);
                            let message = format!("this call returns {} tensors, but {n} names are assigned", ts.len());
                            self.error_at(Code::OutputCount, &site, message);
                            vec![Value::Unknown; n]
                        }
                        (n, _) => vec![Value::Unknown; n],
                    };
                    let tensors = tensors_of(&values);
                    if !tensors.is_empty() {
                        self.record(stmt_site, stmt_start, tensors);
                    }
                    for (target, v) in targets.iter().zip(values) {
                        self.assign(env, &target.text, v);
                    }
                }
                StmtKind::Return { values } => {
                    let mut out = Vec::new();
                    for v in values {
                        out.push(self.eval_stmt_expr(v, env, ctx, stmt.id, 1)?);
                    }
                    let tensors = tensors_of(&out);
                    if !tensors.is_empty() {
                        self.record(stmt_site, stmt_start, tensors);
                    }
                    return Ok(Some(out));
                }
                StmtKind::If { cond, then_body, else_body } => {
                    let c = self.eval_stmt_expr(cond, env, ctx, stmt.id, 1)?;
                    let branch = match c {
                        Value::Bool(true) => Some(then_body),
                        Value::Bool(false) => else_body.as_ref(),
                        _ => {
                            // Undecidable (symbolic) or already wrong: skip both branches.
                            self.undecided += 1;
                            None
                        }
                    };
                    if let Some(b) = branch
                        && let Some(ret) = self.body(b, env, ctx, is_model)?
                    {
                        return Ok(Some(ret));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Records what a statement produced; `start` is the tensor count when it began.
    fn record(&mut self, stmt: Site, start: u32, tensors: Arc<[TensorId]>) {
        let origin =
            Arc::new(Origin { expr: stmt.clone(), stmt, chain: self.shared_chain(), outer_call: self.outer_call });
        self.graph.stmt_values.push(StmtValue { origin, tensors, first_new: TensorId(start) });
    }

    fn input(&mut self, name: &str, ty: &'db TypeExpr, env: &mut Env<'db>, ctx: &Ctx<'db>) -> Result<Value, Stop> {
        let TypeExpr::Tensor { dtype, dims, .. } = ty else { return Ok(Value::Unknown) };
        let Some(dtype) = DType::from_name(&dtype.text) else { return Ok(Value::Unknown) };
        let mut shape = Vec::new();
        for dim in dims {
            let v = match &dim.kind {
                ExprKind::Name(n) if !env.contains_key(n.text.as_str()) => {
                    let value = match self.request.dims.get(&n.text) {
                        Some(v) => Dim::Known(*v),
                        None if self.request.require_bound => {
                            self.unbound_dimension(&n.text, name, ctx, dim.id);
                            return Ok(Value::Unknown);
                        }
                        None => Dim::var(&n.text),
                    };
                    env.insert(&n.text, Value::Int(value.clone()));
                    Value::Int(value)
                }
                _ => self.eval_in(dim, env, &ctx.at_stmt(NodeId::default()))?,
            };
            let problem = match &v {
                Value::Float(_) | Value::Bool(_) | Value::Str(_) => {
                    format!("a dimension of input `{name}` is not an integer")
                }
                Value::Int(d) => match d.known().filter(|v| *v < 1) {
                    Some(bad) => format!("dimension {bad} of input `{name}` is not positive"),
                    None => {
                        shape.push(d.clone());
                        continue;
                    }
                },
                _ => return Ok(Value::Unknown),
            };
            let site = self.site(ctx.name, ctx.item, dim.id);
            self.error_at(Code::InvalidShape, &site, problem);
            return Ok(Value::Unknown);
        }
        let t = TensorType::new(dtype, shape);
        if t.bytes().is_none() {
            let site = self.site(ctx.name, ctx.item, ty.id());
            self.error_at(
                Code::IntegerOverflow,
                &site,
                format!("input `{name}` has more bytes than can be counted (2^127)"),
            );
            return Ok(Value::Unknown);
        }
        Ok(Value::Tensor(self.new_tensor(t)))
    }

    fn unbound_dimension(&mut self, dim: &str, input: &str, ctx: &Ctx, node: NodeId) {
        let how = match dim {
            "N" => "`batch 32`".to_string(),
            "S" => "`seq 512`".to_string(),
            other => format!("`dim {other} = ...`"),
        };
        let site = self.site(ctx.name, ctx.item, node);
        let mut d = Diagnostic::new(
            Code::UnboundDimension,
            format!("dimension `{dim}` of input `{input}` is not bound by {}", self.request.context),
            &site.file,
            site.place(),
        )
        .with_primary_message("unbound here")
        .with_help(format!("add {how} to the scenario"));
        if let Some(blame) = &self.request.blame {
            d = d.with_label(&blame.file, blame.place(), "this scenario runs the model");
        }
        self.graph.diagnostics.push(d);
    }

    /// Evaluates the expression of a statement: a call here may return several tensors.
    fn eval_stmt_expr(
        &mut self,
        e: &'db Expr,
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        stmt: NodeId,
        targets: usize,
    ) -> Result<Value, Stop> {
        let _ = targets;
        let saved = ctx.stmt.replace(stmt);
        let v = self.eval_in(e, env, ctx);
        ctx.stmt.set(saved);
        v
    }

    fn eval_in(&mut self, e: &'db Expr, env: &Env<'db>, ctx: &Ctx<'db>) -> Result<Value, Stop> {
        if self.stopped {
            return Err(Stop);
        }
        Ok(match &e.kind {
            ExprKind::Int(v) => Value::Int(Dim::Known(*v as i128)),
            ExprKind::Float(bits) => Value::Float(f64::from_bits(*bits)),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Size { .. } | ExprKind::Error => Value::Unknown,
            ExprKind::Name(n) => env.get(n.text.as_str()).cloned().unwrap_or(Value::Unknown),
            ExprKind::List(elems) => {
                let mut ints = Vec::new();
                let mut tensors = Vec::new();
                for x in elems {
                    match self.eval_in(x, env, ctx)? {
                        Value::Int(d) => ints.push(d),
                        Value::Tensor(t) => tensors.push(t),
                        _ => return Ok(Value::Unknown),
                    }
                }
                if tensors.is_empty() { Value::Ints(ints) } else { Value::Tensors(tensors) }
            }
            ExprKind::Unary { op, operand } => {
                let v = self.eval_in(operand, env, ctx)?;
                match (op, v) {
                    (UnaryOp::Neg, Value::Int(d)) => match Dim::Known(0).sub(&d) {
                        Some(d) => Value::Int(d),
                        None => self.overflow(ctx, e.id),
                    },
                    (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
                    (UnaryOp::Neg, Value::Tensor(t)) => self.apply_op(Op::Mul, e.id, ctx, self.scalar_args(t))?,
                    (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                    _ => Value::Unknown,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.eval_in(lhs, env, ctx)?, self.eval_in(rhs, env, ctx)?);
                self.binary(*op, l, r, e, lhs, rhs, ctx)?
            }
            ExprKind::Field { base, field } => match (self.eval_in(base, env, ctx)?, field.text.as_str()) {
                (Value::Tensor(t), "shape") => Value::Ints(self.graph.tensor(t).shape.clone()),
                (Value::Tensor(t), "ndim") => Value::Int(Dim::Known(self.graph.tensor(t).rank() as i128)),
                _ => Value::Unknown,
            },
            ExprKind::Index { base, index } => {
                let (b, i) = (self.eval_in(base, env, ctx)?, self.eval_in(index, env, ctx)?);
                let (len, i) = match (&b, i) {
                    (Value::Ints(v), Value::Int(Dim::Known(i))) => (v.len() as i128, i),
                    (Value::Tensors(v), Value::Int(Dim::Known(i))) => (v.len() as i128, i),
                    _ => return Ok(Value::Unknown),
                };
                let at = if i < 0 { i + len } else { i };
                if at < 0 || at >= len {
                    let site = self.site(ctx.name, ctx.item, index.id);
                    self.error_at(Code::InvalidShape, &site, format!("index {i} is out of range for {len} elements"));
                    return Ok(Value::Unknown);
                }
                match b {
                    Value::Ints(v) => Value::Int(v[at as usize].clone()),
                    Value::Tensors(v) => Value::Tensor(v[at as usize]),
                    _ => Value::Unknown,
                }
            }
            ExprKind::Call { callee, args } => self.call_with(e.id, callee.text.as_str(), args, env, ctx, None)?,
            ExprKind::Repeat { count, call } => {
                let n = match self.eval_in(count, env, ctx)? {
                    Value::Int(Dim::Known(n)) => n,
                    Value::Int(_) => {
                        if self.request.require_bound {
                            let site = self.site(ctx.name, ctx.item, count.id);
                            self.error_at(Code::InvalidShape, &site, "`repeat` count depends on an unbound dimension");
                        }
                        self.undecided += 1;
                        return Ok(Value::Unknown);
                    }
                    _ => {
                        self.undecided += 1;
                        return Ok(Value::Unknown);
                    }
                };
                if n < 0 {
                    let site = self.site(ctx.name, ctx.item, count.id);
                    self.error_at(
                        Code::InvalidRepeat,
                        &site,
                        format!("`repeat` count must not be negative, found {n}"),
                    );
                    return Ok(Value::Unknown);
                }
                let ExprKind::Call { callee, args } = &call.kind else { return Ok(Value::Unknown) };
                let Some(first) = args.first() else { return Ok(Value::Unknown) };
                let mut current = self.eval_in(&first.value, env, ctx)?;
                for _ in 0..n {
                    // Each repetition feeds the previous result as the first argument.
                    current = self.call_with(call.id, callee.text.as_str(), args, env, ctx, Some(current))?;
                    if self.stopped {
                        return Err(Stop);
                    }
                }
                current
            }
        })
    }

    fn overflow(&mut self, ctx: &Ctx, node: NodeId) -> Value {
        let site = self.site(ctx.name, ctx.item, node);
        self.error_at(Code::IntegerOverflow, &site, "integer overflow");
        Value::Unknown
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        op: BinaryOp,
        l: Value,
        r: Value,
        e: &Expr,
        lhs: &Expr,
        rhs: &Expr,
        ctx: &Ctx,
    ) -> Result<Value, Stop> {
        use Value::*;
        Ok(match (op, l, r) {
            (_, Unknown, _) | (_, _, Unknown) => {
                // An operand of a tensor op, or of a value something else will consume.
                self.undecided += 1;
                Unknown
            }
            (BinaryOp::Or, Bool(a), Bool(b)) => Bool(a || b),
            (BinaryOp::And, Bool(a), Bool(b)) => Bool(a && b),
            (BinaryOp::Eq | BinaryOp::Ne, a, b) if !matches!(a, Int(_)) || !matches!(b, Int(_)) => {
                let eq = match (&a, &b) {
                    (Float(x), Int(Dim::Known(y))) | (Int(Dim::Known(y)), Float(x)) => *x == *y as f64,
                    _ => a == b,
                };
                Bool(if op == BinaryOp::Eq { eq } else { !eq })
            }
            (
                BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge,
                Int(a),
                Int(b),
            ) => {
                let Some(diff) = a.sub(&b) else { return Ok(self.overflow(ctx, e.id)) };
                match diff.known() {
                    Some(d) => Bool(match op {
                        BinaryOp::Eq => d == 0,
                        BinaryOp::Ne => d != 0,
                        BinaryOp::Lt => d < 0,
                        BinaryOp::Le => d <= 0,
                        BinaryOp::Gt => d > 0,
                        _ => d >= 0,
                    }),
                    None => {
                        let site = self.site(ctx.name, ctx.item, e.id);
                        if self.request.require_bound {
                            self.error_at(
                                Code::InvalidShape,
                                &site,
                                format!("cannot decide `{a} {} {b}`", op.symbol()),
                            );
                        }
                        Unknown
                    }
                }
            }
            (BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge, a, b) => {
                let (x, y) = match (number(&a), number(&b)) {
                    (Some(x), Some(y)) => (x, y),
                    _ => return Ok(Unknown),
                };
                Bool(match op {
                    BinaryOp::Lt => x < y,
                    BinaryOp::Le => x <= y,
                    BinaryOp::Gt => x > y,
                    _ => x >= y,
                })
            }
            (op, Int(a), Int(b)) => {
                let result = match op {
                    BinaryOp::Add => a.add(&b),
                    BinaryOp::Sub => a.sub(&b),
                    BinaryOp::Mul => a.mul(&b),
                    BinaryOp::Div | BinaryOp::Rem if b == Dim::Known(0) => {
                        let site = self.site(ctx.name, ctx.item, rhs.id);
                        self.error_at(Code::InvalidShape, &site, "division by zero");
                        return Ok(Unknown);
                    }
                    BinaryOp::Div => a.floor_div(&b),
                    BinaryOp::Rem => a.rem(&b),
                    _ => return Ok(Unknown),
                };
                match result {
                    Some(d) => Int(d),
                    None => self.overflow(ctx, e.id),
                }
            }
            (op, a @ (Int(_) | Float(_)), b @ (Int(_) | Float(_))) => {
                let (x, y) = (number(&a).unwrap_or(0.0), number(&b).unwrap_or(0.0));
                Float(match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::Div => x / y,
                    _ => return Ok(Unknown),
                })
            }
            (BinaryOp::MatMul, Tensor(a), Tensor(b)) => {
                let [a_name, b_name, _] = self.operator_names.clone();
                let mut args = Args::default();
                args.values.insert(a_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[a.0 as usize])));
                args.values.insert(b_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[b.0 as usize])));
                let sites = [("a", lhs.id), ("b", rhs.id)];
                self.apply_with_sites(Op::Matmul, e.id, ctx, (args, vec![a, b]), Blame::Pairs(&sites))?
            }
            (op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div), Tensor(a), Tensor(b)) => {
                let name = elementwise_op(op);
                let [a_name, b_name, inplace] = self.operator_names.clone();
                let mut args = Args::default();
                args.values.insert(a_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[a.0 as usize])));
                args.values.insert(b_name, ArgValue::Tensor(Arc::clone(&self.graph.tensors[b.0 as usize])));
                args.values.insert(inplace, ArgValue::Bool(false));
                let sites = [("a", lhs.id), ("b", rhs.id)];
                self.apply_with_sites(name, e.id, ctx, (args, vec![a, b]), Blame::Pairs(&sites))?
            }
            (op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div), Tensor(t), Int(_) | Float(_))
            | (op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div), Int(_) | Float(_), Tensor(t)) => {
                let name = elementwise_op(op);
                self.apply_op(name, e.id, ctx, self.scalar_args(t))?
            }
            _ => Unknown,
        })
    }

    /// What `callee` refers to in the file of `ctx`, resolved once per elaboration.
    fn callee(&mut self, callee: &'db str, ctx: &Ctx<'db>) -> Callee<'db> {
        if let Some(&resolved) = self.callees.get(&(ctx.file, callee)) {
            return resolved;
        }
        let resolved = self.resolve(callee, ctx.file);
        self.callees.insert((ctx.file, callee), resolved);
        resolved
    }

    fn resolve(&mut self, callee: &str, file: SourceFile) -> Callee<'db> {
        let db = self.db;
        let scope: &'db Scope = self.scopes.entry(file).or_insert_with(|| file_scope(db, file));
        let def = scope.get(callee);
        let known = self.previous.as_ref().and_then(|r| r.previous.resolutions.get(&file)?.get(callee));
        if known.is_none() {
            let target = def.map(|d| (d.kind, d.file.clone(), d.item));
            self.resolutions.entry(file).or_default().insert(callee.into(), target);
        }
        let Some(def) = def else { return Callee::Other };
        let source = match self.sources.iter().find(|(name, _)| **name == def.file) {
            Some(&(_, source)) => source,
            None => {
                let source = lookup_file(db, &def.file);
                self.sources.push((&def.file, source));
                source
            }
        };
        let Some(source) = source else { return Callee::Other };
        // The item's field, not its `item_tree` query: the same dependency, without an
        // interned key and a memo to check per callee.
        let Some(arc) = item_of(db, source, def.item) else { return Callee::Other };
        let used = self.use_item(UsedItem { file: source, index: def.item, item: Arc::clone(arc) });
        match (def.kind, &**arc) {
            (DefKind::Op, Item::Op(decl)) => {
                self.param_names.push(decl.params.iter().map(|p| Arc::from(p.name.text.as_str())).collect());
                Callee::Op { decl, source, file: &def.file, item: def.item, names: self.param_names.len() - 1, used }
            }
            (DefKind::Block, Item::Block(block)) => {
                Callee::Block { block, source, file: &def.file, item: def.item, used }
            }
            _ => Callee::Other,
        }
    }

    /// The index of an item among those this elaboration read, added the first time (an
    /// item the previous elaboration read keeps its index, and now its current tree).
    fn use_item(&mut self, used: UsedItem) -> u32 {
        match self.item_ids.get(&(used.file, used.index)) {
            Some(&id) => {
                self.items[id as usize] = used;
                id
            }
            None => {
                self.item_ids.insert((used.file, used.index), self.items.len() as u32);
                self.items.push(used);
                self.items.len() as u32 - 1
            }
        }
    }

    /// Notes that the innermost block call being run read an item.
    fn touch(&mut self, used: u32) {
        if let Some(open) = self.open.last_mut()
            && !open.record.items.contains(&used)
        {
            open.record.items.push(used);
        }
    }

    /// A call; `first`, if given, replaces the value of the first argument (for `repeat`).
    fn call_with(
        &mut self,
        id: NodeId,
        callee: &'db str,
        args: &'db [Arg],
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        first: Option<Value>,
    ) -> Result<Value, Stop> {
        match self.callee(callee, ctx) {
            Callee::Op { decl, source, file, item, names, used } => {
                self.touch(used);
                let bound = self.bind(&decl.params, args, env, ctx, (source, file, item), first)?;
                let Some(bound) = bound else { return Ok(Value::Unknown) };
                self.op_call(decl, names, bound, id, ctx)
            }
            Callee::Block { block, source, file, item, used } => {
                self.touch(used);
                if self.chain.len() >= MAX_CALL_DEPTH {
                    let site = self.site(ctx.name, ctx.item, id);
                    self.error_at(
                        Code::RecursionLimit,
                        &site,
                        format!("block calls nested deeper than {MAX_CALL_DEPTH}: does `{callee}` call itself?"),
                    );
                    self.stopped = true;
                    return Err(Stop);
                }
                let bound = self.bind(&block.params, args, env, ctx, (source, file, item), first)?;
                let Some(bound) = bound else { return Ok(Value::Unknown) };
                // The argument tensors, and whether the caller holds each.
                let inputs: Vec<(TensorId, bool)> = bound
                    .iter()
                    .flat_map(|(_, value, _)| value_tensors(value))
                    .map(|&t| (t, self.refs[t.0 as usize] > 0))
                    .collect();
                if self.chain.is_empty() {
                    self.outer_calls += 1;
                    self.outer_call = self.outer_calls;
                }
                self.chain.push(self.site(ctx.name, ctx.item, id));
                let (chain, occurrence, same_site) = self.begin_call();
                // A call of the model's body is also found by its callee and how many calls
                // of it came before, so that a line added above it (which renumbers the call
                // sites after it) does not make it run again.
                let callee_at = |at: u32| self.previous.as_ref().map(|r| r.previous.calls[at as usize].callee);
                let before = match same_site {
                    Some(at) if callee_at(at) == Some((source, item)) => Some((at, false)),
                    _ if self.chain.len() == 1 => self.moved_call((source, item)).map(|at| (at, true)),
                    _ => None,
                };
                if self.chain.len() == 1 {
                    *self.top_calls.entry((source, item)).or_insert(0) += 1;
                }
                let result = match self.reuse(before, occurrence, (source, item), &bound, &inputs) {
                    Some(value) => Ok(value),
                    None => {
                        let record = CallRecord {
                            chain,
                            occurrence,
                            callee: (source, item),
                            outer_call: self.outer_call,
                            args: bound.iter().map(|(name, value, _)| (Box::from(*name), value.clone())).collect(),
                            inputs,
                            nodes: (self.graph.nodes.len() as u32, 0),
                            tensors: (self.graph.tensors.len() as u32, 0),
                            stmt_values: (self.graph.stmt_values.len() as u32, 0),
                            input_releases: Vec::new(),
                            returned: Vec::new(),
                            result: Value::Unknown,
                            items: vec![used],
                            nested: (self.calls.len() as u32, 0),
                        };
                        let callee_ctx = Ctx { file: source, name: file, item, stmt: Default::default() };
                        self.run_block(block, bound, record, &callee_ctx)
                    }
                };
                self.chain.pop();
                self.shared_chain = None;
                if self.chain.is_empty() {
                    self.outer_call = 0;
                }
                result
            }
            Callee::Other => Ok(Value::Unknown),
        }
    }

    /// Runs a block's body on its bound arguments, recording the call for the next
    /// elaboration.
    fn run_block(
        &mut self,
        block: &'db Callable,
        bound: Bound<'db>,
        record: CallRecord,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        self.counts.ran += 1;
        let diagnostics = self.graph.diagnostics.len();
        self.open.push(OpenCall { record, diagnostics, share_uses: self.share_uses, undecided: self.undecided });
        let mut inner = Env::new();
        for (name, value, _) in bound {
            self.assign(&mut inner, name, value);
        }
        let result = self.body(&block.body, &mut inner, ctx, false);
        if let Ok(result) = &result {
            // Dropping the frame releases the arguments nobody else holds: part of the call.
            self.drop_frame(inner, result.as_deref().unwrap_or(&[]));
        }
        let open = self.open.pop().expect("pushed above");
        let result = result?;
        let value = match result {
            Some(mut values) if values.len() == 1 => values.remove(0),
            Some(values) => Value::Tensors(
                values.into_iter().filter_map(|v| if let Value::Tensor(t) = v { Some(t) } else { None }).collect(),
            ),
            None => Value::Unknown,
        };
        self.close(open, &value);
        Ok(value)
    }

    /// Records a block call that returned `value`, unless its effects reach outside it
    /// (diagnostics, weights tied by key); the caller read what it read.
    fn close(&mut self, open: OpenCall, value: &Value) {
        let mut record = open.record;
        for &used in &record.items {
            self.touch(used);
        }
        if self.graph.diagnostics.len() != open.diagnostics
            || self.share_uses != open.share_uses
            || self.undecided != open.undecided
        {
            return;
        }
        record.nodes.1 = self.graph.nodes.len() as u32;
        record.tensors.1 = self.graph.tensors.len() as u32;
        record.stmt_values.1 = self.graph.stmt_values.len() as u32;
        record.returned = value_tensors(value)
            .iter()
            .filter(|t| t.0 >= record.tensors.0)
            .map(|&t| (t, self.graph.released_after[t.0 as usize]))
            .collect();
        record.result = value.clone();
        record.nested.1 = self.calls.len() as u32;
        self.call_at(&Arc::clone(&record.chain), record.occurrence, self.calls.len() as u32);
        self.calls.push(Arc::new(record));
    }

    /// Starts a block call whose site was just pushed on the chain: the chain as its nodes
    /// will hold it (the previous elaboration's, when it had one), how many calls with this
    /// chain ran before, and the previous elaboration's record of the call with the same
    /// chain and occurrence, if any.
    fn begin_call(&mut self) -> (Arc<[Site]>, u32, Option<u32>) {
        let before = self.previous.as_ref().and_then(|r| r.previous.by_site.get_key_value(self.chain.as_slice()));
        let (chain, occurrence) = match self.calls_at.get_key_value(self.chain.as_slice()) {
            Some((chain, _)) => {
                let chain = Arc::clone(chain);
                let occurrence = self.calls_at.get_mut(&*chain).map_or(0, Occurrences::push);
                (chain, occurrence)
            }
            None => {
                let chain = before.map_or_else(|| self.chain.as_slice().into(), |(chain, _)| Arc::clone(chain));
                self.calls_at.insert(Arc::clone(&chain), Occurrences::one());
                (chain, 0)
            }
        };
        let record = before.and_then(|(_, calls)| calls.get(occurrence));
        self.shared_chain = Some(Arc::clone(&chain));
        (chain, occurrence, record)
    }

    /// Records that call record `index` is the call of `chain` at `occurrence`.
    fn call_at(&mut self, chain: &Arc<[Site]>, occurrence: u32, index: u32) {
        match self.calls_at.get_mut(&**chain) {
            Some(calls) => calls.set(occurrence, index),
            None => {
                let mut calls = Occurrences::one();
                calls.set(occurrence, index);
                self.calls_at.insert(Arc::clone(chain), calls);
            }
        }
    }

    /// The previous elaboration's record of the call of the model's body that called
    /// `callee` as many times before as this one.
    fn moved_call(&self, callee: (SourceFile, u32)) -> Option<u32> {
        let before = self.top_calls.get(&callee).copied().unwrap_or(0);
        let previous = &self.previous.as_ref()?.previous;
        previous.top_level.get(&callee)?.get(before as usize).copied()
    }

    /// The result of a block call copied from the previous elaboration, if record `at` of it
    /// made the same call (same callee, argument types and holding, unchanged items) at the
    /// same site, or (`moved`) elsewhere in the model's body: then its nodes are given this
    /// call's site and checkpoint segment.
    fn reuse(
        &mut self,
        at: Option<(u32, bool)>,
        occurrence: u32,
        callee: (SourceFile, u32),
        bound: &Bound<'db>,
        inputs: &[(TensorId, bool)],
    ) -> Option<Value> {
        let (at, moved) = at?;
        let reusable = self.previous.as_ref()?;
        let previous = Arc::clone(&reusable.previous);
        let record = &previous.calls[at as usize];
        let same = record.callee == callee
            && (moved || record.outer_call == self.outer_call)
            && record.args.len() == bound.len()
            && record.inputs.len() == inputs.len()
            && record.items.iter().all(|&used| !reusable.changed[used as usize])
            && record
                .args
                .iter()
                .zip(bound)
                .all(|((name, old), (new_name, new, _))| **name == **new_name && same_but_tensors(old, new))
            && record.inputs.iter().zip(inputs).enumerate().all(|(i, (&(old, old_held), &(new, new_held)))| {
                // The same types, held the same way; a tensor given twice, given twice.
                old_held == new_held
                    && previous.graph.tensors[old.0 as usize] == self.graph.tensors[new.0 as usize]
                    && record.inputs[..i].iter().zip(inputs).all(|(&(a, _), &(b, _))| (a == old) == (b == new))
            })
            && self.graph.nodes.len() + (record.nodes.1 - record.nodes.0) as usize <= MAX_NODES;
        if !same {
            return None;
        }
        Some(self.splice(&previous, at, inputs, moved.then_some(occurrence)))
    }

    /// Copies call `at` of the previous elaboration (and the calls it made) into the graph,
    /// its tensors renamed: its own after the graph's, its arguments to `inputs`.
    fn splice(&mut self, previous: &Previous, at: u32, inputs: &[(TensorId, bool)], moved_to: Option<u32>) -> Value {
        let moved = moved_to.is_some();
        let (old, record) = (&previous.graph, &previous.calls[at as usize]);
        // A moved call's chains start with this call's site instead of the old one (each
        // distinct chain made once), and its nodes are in this call's checkpoint segment.
        /// A chain of the previous elaboration and the same chain from this call's site.
        type Rechained = (Arc<[Site]>, Arc<[Site]>);
        let mut chains: Vec<Rechained> = Vec::new();
        let here = self.shared_chain();
        let outer_call = self.outer_call;
        let mut rechain = |chain: &Arc<[Site]>| -> Arc<[Site]> {
            // A call's nodes share a handful of chains (one per call inside it): found by pointer.
            if let Some((_, new)) = chains.iter().find(|(old, _)| Arc::ptr_eq(old, chain)) {
                return Arc::clone(new);
            }
            let new: Arc<[Site]> = here.iter().chain(chain.iter().skip(here.len())).cloned().collect();
            chains.push((Arc::clone(chain), Arc::clone(&new)));
            new
        };
        let mut reorigin = |origin: &Arc<Origin>| -> Arc<Origin> {
            if !moved {
                return Arc::clone(origin);
            }
            let chain = rechain(&origin.chain);
            Arc::new(Origin { expr: origin.expr.clone(), stmt: origin.stmt.clone(), chain, outer_call })
        };
        let (n0, t0, s0) =
            (self.graph.nodes.len() as u32, self.graph.tensors.len() as u32, self.graph.stmt_values.len() as u32);
        let (old_n0, old_t0, old_s0) = (record.nodes.0, record.tensors.0, record.stmt_values.0);
        let node = |n: u32| n - old_n0 + n0;
        let tensor = |t: TensorId| {
            if t.0 >= old_t0 {
                TensorId(t.0 - old_t0 + t0)
            } else {
                // An argument (a block sees only its arguments).
                record.inputs.iter().zip(inputs).find(|((given, _), _)| *given == t).map_or(t, |(_, (new, _))| *new)
            }
        };
        let (tensors, nodes, values) = (
            old_t0 as usize..record.tensors.1 as usize,
            old_n0 as usize..record.nodes.1 as usize,
            old_s0 as usize..record.stmt_values.1 as usize,
        );
        self.graph.tensors.extend_from_slice(&old.tensors[tensors.clone()]);
        self.graph.released_after.extend(old.released_after[tensors.clone()].iter().map(|r| r.map(node)));
        self.refs.resize(self.graph.tensors.len(), 0);
        for &(t, released) in &record.returned {
            self.graph.released_after[tensor(t).0 as usize] = released.map(node);
        }
        // When the call's tensors keep their ids (an edit before it made as many tensors as
        // before, and it was given the same ones), its id lists are shared, not copied.
        let same_ids = old_t0 == t0 && record.inputs.iter().zip(inputs).all(|((old, _), (new, _))| old == new);
        let renamed = |ids: &Arc<[TensorId]>| -> Arc<[TensorId]> {
            if same_ids { Arc::clone(ids) } else { ids.iter().map(|&t| tensor(t)).collect() }
        };
        for n in &old.nodes[nodes] {
            // At the same ids and site, the very node.
            if same_ids && !moved {
                self.graph.nodes.push(Arc::clone(n));
                continue;
            }
            // Made field by field: a clone would count references to the ids and origin it
            // replaces.
            self.graph.nodes.push(Arc::new(Node {
                op: n.op,
                args: Arc::clone(&n.args),
                inputs: renamed(&n.inputs),
                outputs: renamed(&n.outputs),
                result: Arc::clone(&n.result),
                params: n.params.clone(),
                origin: reorigin(&n.origin),
            }));
        }
        for v in &old.stmt_values[values] {
            self.graph.stmt_values.push(StmtValue {
                tensors: renamed(&v.tensors),
                origin: reorigin(&v.origin),
                first_new: TensorId(v.first_new.0 - old_t0 + t0),
            });
        }
        for &(t, made) in &record.input_releases {
            self.graph.released_after[tensor(t).0 as usize] = Some((n0 + made).saturating_sub(1));
        }
        // The call's records and those of the calls it made, for the next elaboration: the
        // same ones when nothing moved.
        let base = self.calls.len() as u32;
        let unmoved = !moved && same_ids && n0 == old_n0 && s0 == old_s0 && base == record.nested.0;
        let nested = &previous.calls[record.nested.0 as usize..record.nested.1 as usize];
        for q in nested.iter().chain(std::iter::once(record)) {
            let chain = if moved { rechain(&q.chain) } else { Arc::clone(&q.chain) };
            // A moved call is the how-manieth call of its new site (the calls in it keep theirs).
            let occurrence = match moved_to {
                Some(occurrence) if std::ptr::eq(q.as_ref(), record.as_ref()) => occurrence,
                _ => q.occurrence,
            };
            self.call_at(&chain, occurrence, self.calls.len() as u32);
            self.counts.reused += 1;
            if unmoved {
                self.calls.push(Arc::clone(q));
                continue;
            }
            let copy = CallRecord {
                chain,
                occurrence,
                callee: q.callee,
                outer_call: if moved { outer_call } else { q.outer_call },
                args: q.args.iter().map(|(name, value)| (name.clone(), remap(value, &tensor))).collect(),
                inputs: q.inputs.iter().map(|&(t, held)| (tensor(t), held)).collect(),
                nodes: (node(q.nodes.0), node(q.nodes.1)),
                tensors: (q.tensors.0 - old_t0 + t0, q.tensors.1 - old_t0 + t0),
                stmt_values: (q.stmt_values.0 - old_s0 + s0, q.stmt_values.1 - old_s0 + s0),
                input_releases: q.input_releases.iter().map(|&(t, made)| (tensor(t), made)).collect(),
                returned: q.returned.iter().map(|&(t, released)| (tensor(t), released.map(node))).collect(),
                result: remap(&q.result, &tensor),
                items: q.items.clone(),
                nested: (q.nested.0 - record.nested.0 + base, q.nested.1 - record.nested.0 + base),
            };
            self.calls.push(Arc::new(copy));
        }
        for &used in &record.items {
            self.touch(used);
        }
        remap(&record.result, &tensor)
    }

    /// Binds call arguments to parameters, evaluating defaults. Returns each parameter's
    /// name, value and the node of the argument that gave it (for labels), or `None` if an
    /// argument is unknown. A name bound twice keeps its last value, in its first place.
    fn bind(
        &mut self,
        params: &'db [Param],
        args: &'db [Arg],
        env: &Env<'db>,
        ctx: &Ctx<'db>,
        (def_source, def_file, def_item): (SourceFile, &'db FileName, u32),
        mut first: Option<Value>,
    ) -> Result<Option<Bound<'db>>, Stop> {
        let mut bound: Bound<'db> = Vec::with_capacity(params.len().max(args.len()));
        for (position, arg) in args.iter().enumerate() {
            let name = match &arg.keyword {
                Some(k) => k.text.as_str(),
                None => match params.get(position) {
                    Some(p) => p.name.text.as_str(),
                    None => return Ok(None),
                },
            };
            let value = match first.take() {
                Some(value) => value,
                None => self.eval_in(&arg.value, env, ctx)?,
            };
            match bound.iter_mut().find(|(n, _, _)| *n == name) {
                Some(slot) => *slot = (name, value, Some(arg.value.id)),
                None => bound.push((name, value, Some(arg.value.id))),
            }
        }
        for p in params {
            if bound.iter().any(|(n, _, _)| *n == p.name.text) {
                continue;
            }
            let Some(default) = &p.default else { return Ok(None) };
            let default_ctx = Ctx { file: def_source, name: def_file, item: def_item, stmt: Default::default() };
            let value = self.eval_in(default, &Env::new(), &default_ctx)?;
            bound.push((&p.name.text, value, None));
        }
        Ok(Some(bound))
    }

    fn op_call(
        &mut self,
        decl: &'db OpDecl,
        names: usize,
        bound: Bound<'db>,
        id: NodeId,
        ctx: &Ctx<'db>,
    ) -> Result<Value, Stop> {
        let mut args = Args::default();
        let mut inputs = Vec::new();
        // Parameters in declaration order, so inputs are in a stable order.
        for (p, name) in decl.params.iter().zip(&self.param_names[names]) {
            let Some((_, value, _)) = bound.iter().find(|(n, _, _)| *n == p.name.text) else { continue };
            let arg = match value {
                Value::Tensor(t) => {
                    inputs.push(*t);
                    ArgValue::Tensor(Arc::clone(&self.graph.tensors[t.0 as usize]))
                }
                Value::Tensors(ts) => {
                    inputs.extend(ts.iter().copied());
                    ArgValue::Tensors(ts.iter().map(|t| self.graph.tensor(*t).clone()).collect())
                }
                Value::Int(d) => ArgValue::Int(d.clone()),
                Value::Float(f) => ArgValue::Float(*f),
                Value::Bool(b) => ArgValue::Bool(*b),
                Value::Str(s) => ArgValue::Str(s.clone()),
                Value::Ints(v) => ArgValue::Ints(v.clone()),
                Value::Size(_) | Value::Unknown => {
                    self.undecided += 1;
                    return Ok(Value::Unknown);
                }
            };
            args.values.insert(name.clone(), arg);
        }
        let Some(op) = Op::from_name(&decl.name.text) else {
            let err = OpError {
                message: format!("op `{}` is declared but netc has no semantics for it", decl.name.text),
                blame: Vec::new(),
                help: Some("declare only the ops listed in spec/shapes.md".to_string()),
            };
            self.op_error(&decl.name.text, err, id, ctx, Blame::Bound(&bound));
            return Ok(Value::Unknown);
        };
        self.apply_with_sites(op, id, ctx, (args, inputs), Blame::Bound(&bound))
    }

    /// The arguments of an elementwise op between tensor `id` and a scalar.
    fn scalar_args(&self, id: TensorId) -> (Args, Vec<TensorId>) {
        let t = self.graph.tensor(id);
        let [a, b, inplace] = self.operator_names.clone();
        let mut args = Args::default();
        args.values.insert(a, ArgValue::Tensor(Arc::clone(&self.graph.tensors[id.0 as usize])));
        args.values.insert(b, ArgValue::Tensor(Arc::new(TensorType::new(t.dtype, Vec::new()))));
        args.values.insert(inplace, ArgValue::Bool(false));
        (args, vec![id])
    }

    fn apply_op(&mut self, op: Op, id: NodeId, ctx: &Ctx, args: (Args, Vec<TensorId>)) -> Result<Value, Stop> {
        self.apply_with_sites(op, id, ctx, args, Blame::Pairs(&[]))
    }

    /// Applies an op's rule; on success adds the node, on failure reports the error with
    /// labels on the blamed arguments (`sites`: the argument node of each parameter).
    fn apply_with_sites(
        &mut self,
        op: Op,
        id: NodeId,
        ctx: &Ctx,
        (args, inputs): (Args, Vec<TensorId>),
        sites: Blame<'_, 'db>,
    ) -> Result<Value, Stop> {
        if self.graph.nodes.len() >= MAX_NODES {
            let site = self.site(ctx.name, ctx.item, id);
            self.error_at(Code::RecursionLimit, &site, format!("the model has more than {MAX_NODES} ops"));
            self.stopped = true;
            return Err(Stop);
        }
        // Every tensor's bytes were counted when it was made, so an output of an input's type
        // (elementwise ops: most of a model) is not counted again; with symbolic dimensions a
        // count multiplies polynomials.
        let counted = |t: &TensorType| inputs.iter().any(|&i| self.graph.tensor(i) == t) || t.bytes().is_some();
        let outcome = ops::apply(op, &args).and_then(|result| match result.outputs.iter().find(|t| !counted(t)) {
            Some(t) => Err(OpError {
                message: format!("integer overflow: an output of this `{op}` ({t}) has more bytes than can be counted"),
                blame: Vec::new(),
                help: None,
            }),
            None => Ok(result),
        });
        match outcome {
            Ok(mut result) => {
                let mut params = result.params().unwrap_or(Dim::Known(0));
                if let Some((key, weight)) = tied_weight(&args, &result) {
                    self.share_uses += 1;
                    match self.tied.tie(key, weight, params) {
                        Ok(owned) => params = owned,
                        Err(message) => {
                            let site = self.site(ctx.name, ctx.item, id);
                            self.error_at(Code::InvalidShape, &site, message);
                            return Ok(Value::Unknown);
                        }
                    }
                }
                // The output types move to the graph's tensors (the node names them in `outputs`).
                let types = std::mem::take(&mut result.outputs);
                let outputs: Arc<[TensorId]> = types.into_iter().map(|t| self.new_tensor(t)).collect();
                let stmt = self.site(ctx.name, ctx.item, ctx.stmt.get());
                let origin = Arc::new(Origin {
                    expr: self.site(ctx.name, ctx.item, id),
                    stmt,
                    chain: self.shared_chain(),
                    outer_call: self.outer_call,
                });
                let inputs: Arc<[TensorId]> = inputs.into();
                self.graph.nodes.push(Arc::new(Node {
                    op,
                    args: Arc::new(args),
                    inputs: Arc::clone(&inputs),
                    outputs: Arc::clone(&outputs),
                    result: Arc::new(result),
                    params,
                    origin,
                }));
                // Temporaries this node consumed are dropped once it returns.
                for &t in inputs.iter() {
                    if self.refs[t.0 as usize] == 0 {
                        self.release(t);
                    }
                }
                Ok(match *outputs {
                    [one] => Value::Tensor(one),
                    _ => Value::Tensors(outputs.to_vec()),
                })
            }
            Err(err) => {
                self.op_error(op.name(), err, id, ctx, sites);
                Ok(Value::Unknown)
            }
        }
    }

    fn op_error(&mut self, op: &str, err: OpError, id: NodeId, ctx: &Ctx, sites: Blame<'_, 'db>) {
        let code = if err.message.starts_with("integer overflow") { Code::IntegerOverflow } else { Code::InvalidShape };
        let site = self.site(ctx.name, ctx.item, id);
        let mut d = Diagnostic::new(code, err.message.clone(), &site.file, site.place())
            .with_primary_message(format!("in this `{op}`"));
        for (param, label) in &err.blame {
            if let Some(node) = sites.node(param)
                && !label.is_empty()
            {
                d = d.with_label(ctx.name, Place::Node(NodeRef { item: ctx.item, node: node.0 }), label.clone());
            }
        }
        if let Some(help) = err.help {
            d = d.with_help(help);
        }
        self.report(d);
    }
}

/// The op an arithmetic operator applies to tensors.
fn elementwise_op(op: BinaryOp) -> Op {
    match op {
        BinaryOp::Add => Op::Add,
        BinaryOp::Sub => Op::Sub,
        BinaryOp::Mul => Op::Mul,
        _ => Op::Div,
    }
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

/// The op graph of a scenario: its model elaborated with the scenario's arguments and
/// dimensions. `None` when the scenario is broken.
#[salsa::tracked(returns(ref))]
pub fn scenario_graph<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<Arc<Graph>> {
    let setup = scenario_setup(db, loc).as_ref()?;
    let file = *loc.file(db);
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return None };
    let context = format!("{} scenario `{}`", scenario.kind.keyword(), scenario.name.text);
    let blame = Site { file: file.name(db).clone(), at: NodeRef { item: *loc.index(db), node: scenario.name.id.0 } };
    let request = Request {
        file: setup.model.0,
        item: setup.model.1,
        args: setup.args.clone(),
        dims: setup.dims.clone(),
        require_bound: true,
        blame: Some(blame),
        context: &context,
    };
    // After an edit of the scenario's sizes only, the model's symbolic graph is bound to them.
    let symbolic = || {
        let model = ItemLoc::new(db, setup.model.0, setup.model.1);
        setup.args.is_empty().then(|| model_graph(db, model).clone()).flatten()
    };
    Some(elaborate_scenario(db, &request, symbolic))
}

/// A model elaborated on its own: dimensions not bound by a scenario stay symbolic
/// (`[N, 64, (H - 1)/2 + 1, ...]`).
#[salsa::tracked(returns(ref))]
pub fn model_graph<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<Arc<Graph>> {
    let file = *loc.file(db);
    let Some(Item::Model(model)) = item_tree(db, loc).as_deref() else { return None };
    let context = format!("model `{}`", model.name.text);
    let request = Request {
        file,
        item: *loc.index(db),
        args: BTreeMap::new(),
        dims: BTreeMap::new(),
        require_bound: false,
        blame: None,
        context: &context,
    };
    Some(elaborate(db, &request))
}

/// Shape errors of the scenarios and models of a file, found by elaborating each. A file
/// with semantic errors is not elaborated: its errors come first. An error found by several
/// elaborations (one per scenario) is reported once, the first time.
#[salsa::tracked(returns(ref))]
pub fn shape_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    if check_file(db, file).iter().any(|d| d.severity == Severity::Error) || has_syntax_errors(db, file) {
        return Vec::new();
    }
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen = HashSet::new();
    let tree = syntax_tree(db, file);
    // Scenarios first: their messages have concrete shapes.
    let order = tree
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::Scenario(_)))
        .chain(tree.iter().enumerate().filter(|(_, i)| matches!(i, Item::Model(_))));
    for (index, item) in order {
        let loc = ItemLoc::new(db, file, index as u32);
        let graph = match item {
            Item::Scenario(_) => scenario_graph(db, loc),
            _ => model_graph(db, loc),
        };
        for d in graph.iter().flat_map(|g| &g.diagnostics) {
            let key = (d.code, d.primary().file.clone(), d.primary().place.clone());
            if seen.insert(key) {
                out.push(d.clone());
            }
        }
    }
    out
}
