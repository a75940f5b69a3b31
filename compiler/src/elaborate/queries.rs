//! The elaboration queries: a scenario's graph, a model's symbolic graph, and the shape
//! errors of a file's scenarios and models.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::{Db, Request, elaborate, elaborate_scenario};
use crate::db::SourceFile;
use crate::diagnostics::{Diagnostic, NodeRef, Severity};
use crate::graph::{Graph, Site};
use crate::knobs::Precision;
use crate::semantics::files::{ItemLoc, has_syntax_errors, item_tree, syntax_tree};
use crate::semantics::queries::check_file;
use crate::semantics::setup::scenario_setup;
use crate::shapes::DType;
use crate::syntax::Item;

/// The op graph of a scenario: its model elaborated with the scenario's arguments and
/// dimensions. `None` when the scenario is broken.
#[salsa::tracked(returns(ref))]
pub fn scenario_graph<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<Arc<Graph>> {
    let setup = scenario_setup(db, loc).as_ref()?;
    scenario_graph_with(db, loc, setup.dims.clone())
}

/// The graph of a scenario with its dimensions bound to `dims` instead of its own (a batch
/// size `fit` tries): not a query, since the sizes are no input. After an edit of the sizes
/// only, the model's symbolic graph is bound to them, so that trying many sizes re-binds
/// one graph and does not elaborate the model again.
pub fn scenario_graph_with(db: &dyn Db, loc: ItemLoc<'_>, dims: BTreeMap<String, i128>) -> Option<Arc<Graph>> {
    let context = scenario_setup(db, loc).as_ref()?.run.context;
    scenario_graph_at(db, loc, dims, context)
}

/// A scenario's graph with its dimensions bound to `dims` and `context` tokens in its cache
/// (a step of `generate()`: the prefill, then decode steps of one token): not a query.
pub fn scenario_graph_at(
    db: &dyn Db,
    loc: ItemLoc<'_>,
    dims: BTreeMap<String, i128>,
    cached: i128,
) -> Option<Arc<Graph>> {
    let setup = scenario_setup(db, loc).as_ref()?;
    let file = *loc.file(db);
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return None };
    let context = format!("{} scenario `{}`", scenario.kind.keyword(), scenario.name.text);
    let blame = Site { file: file.name(db).clone(), at: NodeRef { item: *loc.index(db), node: scenario.name.id.0 } };
    let request = Request {
        file: setup.model.0,
        item: setup.model.1,
        args: setup.args.clone(),
        dims,
        require_bound: true,
        blame: Some(blame),
        context: &context,
        cache: setup.run.cache.map(|_| cached),
        generating: setup.run.generates(),
        checkpointing: setup.run.training && setup.run.checkpoint,
        training: !setup.run.eval,
        autocast: autocast_dtype(setup.run.precision),
    };
    // The model on its own runs without a cache: its graph is a cached scenario's only when
    // no `kv_cache(...)` call appends.
    let symbolic = || {
        let model = ItemLoc::new(db, setup.model.0, setup.model.1);
        let graph = (setup.args.is_empty() && setup.run.cache.is_none()).then(|| model_graph(db, model).clone());
        // A model that reads how the run goes elaborates otherwise in a scenario.
        graph.flatten().filter(|g| !g.reads_the_run)
    };
    let graph = elaborate_scenario(db, &request, symbolic);
    Some(if setup.run.prepare_kbit { Arc::new(kbit_prepared(&graph)) } else { graph })
}

/// The dtype autocast casts to (`torch.get_autocast_dtype`) under the mixed policies.
fn autocast_dtype(precision: Precision) -> Option<DType> {
    match precision {
        Precision::Amp => Some(DType::F16),
        Precision::AmpBf16 => Some(DType::BF16),
        Precision::Fp32 | Precision::Fp16 | Precision::Bf16 | Precision::Int8 => None,
    }
}

/// `graph` after peft's `prepare_model_for_kbit_training`, which casts every float16 or
/// bfloat16 parameter that is not a 4-bit one to float32 (`param.data = param.data.to(
/// torch.float32)`): each node with weights outside a quantized layer keeps them in float32,
/// as an `fp32(...)` call does. The casts happen before the run, so the run starts with the
/// float32 copies. Buffers of such a node follow its weights (peft casts parameters only;
/// the language models it is used on have no layer with both). peft casts nothing in a
/// GPTQ model (`is_gptq_quantized`); it does in an AWQ or float8 one.
pub fn kbit_prepared(graph: &Graph) -> Graph {
    let mut prepared = graph.clone();
    if graph.nodes.iter().any(|n| n.is_gptq()) {
        return prepared;
    }
    for node in prepared.nodes.iter_mut() {
        if node.result.weights.is_empty() || node.op.quantizes_weight() || node.origin.fp32 {
            continue;
        }
        let mut origin = (*node.origin).clone();
        origin.fp32 = true;
        let mut cast = (**node).clone();
        cast.origin = Arc::new(origin);
        *node = Arc::new(cast);
    }
    prepared
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
        cache: None,
        generating: false,
        checkpointing: false,
        training: true,
        autocast: None,
    };
    Some(elaborate(db, &request))
}

/// What the errors found before elaboration (syntax and semantic checks) stop in a file.
/// An error inside a scenario stops that scenario only: a scenario is a leaf nothing else
/// reads, so its settings cannot make another item wrong (an unknown device in one scenario
/// used to hide the shape errors of the whole file). An error anywhere else (a model, a
/// block, a `use`, between items) stops the whole file: what it breaks cannot be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Everything: no item of the file is elaborated.
    pub all: bool,
    /// The item indices of the scenarios with errors of their own, sorted.
    pub scenarios: Vec<u32>,
}

impl Stopped {
    /// Whether the item at `index` is stopped.
    pub fn stops(&self, index: u32) -> bool {
        self.all || self.scenarios.binary_search(&index).is_ok()
    }

    /// Whether nothing is stopped.
    pub fn is_empty(&self) -> bool {
        !self.all && self.scenarios.is_empty()
    }
}

/// The index of the item of `file` whose text holds `range`, if any.
pub fn item_at(db: &dyn Db, file: SourceFile, range: crate::diagnostics::TextRange) -> Option<u32> {
    let spans = &crate::semantics::files::parse_file(db, file).spans;
    let at = spans.partition_point(|s| s.whole().end <= range.start);
    spans.get(at).filter(|s| s.whole().start <= range.start && range.end <= s.whole().end).map(|_| at as u32)
}

/// The item a diagnostic of `file` is about: its item for semantic checks (they are made per
/// item), the item holding its primary label for syntax errors; `None` when it is about no
/// one item (between items, in another file, a name defined twice).
fn error_item(db: &dyn Db, file: SourceFile, d: &Diagnostic) -> Option<u32> {
    let primary = d.primary();
    if &primary.file != file.name(db) {
        return None;
    }
    match primary.place {
        crate::diagnostics::Place::Node(node) => Some(node.item),
        crate::diagnostics::Place::Range(range) => item_at(db, file, range),
    }
}

/// What the syntax and semantic errors of `file` stop ([`Stopped`]).
#[salsa::tracked(returns(ref))]
pub fn stopped(db: &dyn Db, file: SourceFile) -> Stopped {
    let tree = syntax_tree(db, file);
    let mut stopped = Stopped::default();
    let mut stop = |item: Option<u32>| match item {
        Some(i) if matches!(tree.get(i as usize), Some(Item::Scenario(_))) => stopped.scenarios.push(i),
        _ => stopped.all = true,
    };
    if has_syntax_errors(db, file) {
        for d in crate::semantics::files::parse_file(db, file).errors.iter().filter(|d| d.severity == Severity::Error) {
            stop(error_item(db, file, d));
        }
    }
    for d in check_file(db, file).iter().filter(|d| d.severity == Severity::Error) {
        // A name defined twice is about two items: the file's.
        let item = (d.code != crate::diagnostics::Code::DuplicateDefinition).then(|| error_item(db, file, d)).flatten();
        stop(item);
    }
    stopped.scenarios.sort_unstable();
    stopped.scenarios.dedup();
    stopped
}

/// Shape errors of the scenarios and models of a file, found by elaborating each. What
/// syntax or semantic errors stop ([`stopped`]) is not elaborated: those errors come first.
/// An error found by several elaborations (one per scenario) is reported once, the first
/// time.
#[salsa::tracked(returns(ref))]
pub fn shape_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let stopped = stopped(db, file);
    if stopped.all {
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
    for (index, item) in order.filter(|(index, _)| !stopped.stops(*index as u32)) {
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
