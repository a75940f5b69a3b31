//! The elaboration queries: a scenario's graph, a model's symbolic graph, and the shape
//! errors of a file's scenarios and models.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::{Db, Request, elaborate, elaborate_scenario};
use crate::db::SourceFile;
use crate::diagnostics::{Diagnostic, NodeRef, Severity};
use crate::graph::{Graph, Site};
use crate::semantics::files::{ItemLoc, has_syntax_errors, item_tree, syntax_tree};
use crate::semantics::queries::check_file;
use crate::semantics::setup::scenario_setup;
use crate::syntax::Item;

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
