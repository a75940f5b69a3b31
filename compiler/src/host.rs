//! The host: the concrete [`Database`] (salsa's storage, the singleton inputs and the side
//! caches of parses and elaborations), which implements every layer's `Db` trait, and
//! [`file_diagnostics`], the one query that reads every layer: a file's syntax, import,
//! semantic, shape and lint diagnostics, located, with configured levels and suppressions.
//!
//! The only module allowed to read every layer: everything else reads the layers below it.

use std::collections::BTreeMap;
use std::sync::Arc;

use salsa::{Durability, Setter};

use crate::config::{configured_level, file_levels};
use crate::db::{
    Config, Db as _, Level, LevelOverride, ParseCache, STDLIB_SOURCES, SourceFile, StdLib, Workspace, lookup_file,
    stdlib_file_name,
};
use crate::diagnostics::{Diagnostic, FileName, Label, Place, Severity};
use crate::elaborate::{Db, ElaborationCache, shape_diagnostics};
use crate::lints::lint_diagnostics;
use crate::semantics::files::{ItemLoc, file_imports, import_cycle, parse_file};
use crate::semantics::queries::check_file;
use crate::syntax::NodeId;

/// The database: salsa's storage plus the handles of the singleton inputs.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    inputs: Option<(Workspace, StdLib, Config)>,
    parses: Arc<ParseCache>,
    elaborations: Arc<ElaborationCache>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn elaboration_cache(&self) -> &ElaborationCache {
        &self.elaborations
    }
}

#[salsa::db]
impl crate::db::Db for Database {
    fn workspace(&self) -> Workspace {
        self.inputs.expect("inputs are set by Database::new").0
    }
    fn stdlib(&self) -> StdLib {
        self.inputs.expect("inputs are set by Database::new").1
    }
    fn config(&self) -> Config {
        self.inputs.expect("inputs are set by Database::new").2
    }
    fn parse_cache(&self) -> &ParseCache {
        &self.parses
    }
}

impl Default for Database {
    fn default() -> Self {
        Self::new()
    }
}

impl Database {
    /// An empty workspace with the embedded standard library.
    pub fn new() -> Self {
        Self::with_storage(salsa::Storage::new(None))
    }

    /// A database that calls `on_event` for every salsa event (used by the incrementality
    /// tests to see which queries ran).
    pub fn with_event_callback(on_event: Box<dyn Fn(salsa::Event) + Send + Sync + 'static>) -> Self {
        Self::with_storage(salsa::Storage::new(Some(on_event)))
    }

    fn with_storage(storage: salsa::Storage<Self>) -> Self {
        let mut db = Database { storage, inputs: None, parses: Arc::default(), elaborations: Arc::default() };
        let modules = STDLIB_SOURCES
            .iter()
            .map(|(module, text)| {
                let file = SourceFile::builder(stdlib_file_name(module), text.to_string())
                    .durability(Durability::HIGH)
                    .new(&db);
                (module.to_string(), file)
            })
            .collect();
        let stdlib = StdLib::builder(modules).durability(Durability::HIGH).new(&db);
        let workspace = Workspace::new(&db, BTreeMap::new(), BTreeMap::new());
        let config = Config::builder(BTreeMap::new(), Vec::new()).durability(Durability::MEDIUM).new(&db);
        db.inputs = Some((workspace, stdlib, config));
        db
    }

    /// Adds a user file, or replaces the text of the file with this name.
    pub fn set_file(&mut self, name: FileName, text: String) -> SourceFile {
        let workspace = self.workspace();
        if let Some(&file) = workspace.files(self).get(&name) {
            if file.text(self) != &text {
                file.set_text(self).to(text);
            }
            return file;
        }
        let file = SourceFile::new(self, name.clone(), text);
        // Taken out and put back rather than cloned: loading a project adds its files one
        // by one, and a copy of the map each time made loading 20,000 files quadratic.
        let mut files = workspace.set_files(self).to(BTreeMap::new());
        files.insert(name, file);
        workspace.set_files(self).to(files);
        file
    }

    /// Removes a user file from the workspace (it was deleted on disk), its parse state and elaborations.
    /// Files that import it then report the `use` as unresolved.
    pub fn remove_file(&mut self, name: &FileName) {
        let workspace = self.workspace();
        let mut files = workspace.files(self).clone();
        if let Some(file) = files.remove(name) {
            workspace.set_files(self).to(files);
            self.parses.forget(file);
            self.elaborations.forget(file);
        }
    }

    /// Records that the loader refused to read the file `name` names, and why (see
    /// [`Workspace::refused`]).
    pub fn refuse(&mut self, name: FileName, reason: String) {
        let workspace = self.workspace();
        if workspace.refused(self).get(&name) != Some(&reason) {
            let mut refused = workspace.set_refused(self).to(BTreeMap::new());
            refused.insert(name, reason);
            workspace.set_refused(self).to(refused);
        }
    }

    /// The user file with this name, if it is loaded.
    pub fn file(&self, name: &FileName) -> Option<SourceFile> {
        self.workspace().files(self).get(name).copied()
    }

    /// Sets the level overrides of the command line.
    pub fn set_levels(&mut self, levels: BTreeMap<String, Level>) {
        let config = self.config();
        config.set_levels(self).to(levels);
    }

    /// Sets the levels of `netc.toml` files, weakest first (see [`Config::overrides`]).
    pub fn set_overrides(&mut self, overrides: Vec<LevelOverride>) {
        let config = self.config();
        if config.overrides(self) != &overrides {
            config.set_overrides(self).to(overrides);
        }
    }
}

/// Every diagnostic of a file, with byte ranges, configured levels applied, in source order.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let parse = parse_file(db, file);
    let mut all: Vec<Diagnostic> = parse.errors.clone();
    all.extend(file_imports(db, file).iter().filter_map(|i| i.target.as_ref().err().cloned()));
    all.extend(import_cycle(db, file).iter().cloned());
    all.extend(check_file(db, file).iter().cloned());
    all.extend(shape_diagnostics(db, file).iter().cloned());
    all.extend(crate::costs::cost_diagnostics(db, file).iter().cloned());
    all.extend(lint_diagnostics(db, file).iter().cloned());
    let (suppressions, unknown) = crate::lints::suppress::suppressions(file.name(db), file.text(db), parse);
    all.extend(unknown);
    let layers: Vec<&BTreeMap<String, Level>> = file_levels(db, file).iter().collect();
    let mut out: Vec<Diagnostic> = all
        .into_iter()
        .filter_map(|mut d| {
            let info = d.code.info();
            // Lints and warnings take their configured level; errors in the program do not.
            if info.is_configurable() {
                match configured_level(&layers, info, d.severity) {
                    Some(Level::Allow) => return None,
                    Some(Level::Warn) => d.severity = Severity::Warning,
                    Some(Level::Deny) => d.severity = Severity::Error,
                    None => {}
                }
            }
            for label in &mut d.labels {
                resolve_label(db, label);
            }
            for edit in d.fixes.iter_mut().flat_map(|f| f.edits.iter_mut()) {
                let mut label = Label {
                    file: edit.file.clone(),
                    place: edit.place.clone(),
                    message: String::new(),
                    primary: false,
                };
                resolve_label(db, &mut label);
                edit.place = label.place;
            }
            if crate::lints::suppress::is_suppressed(&d, &suppressions) {
                return None;
            }
            Some(d)
        })
        .collect();
    out.sort_by_key(|d| match d.primary().place {
        Place::Range(r) => (r.start, r.end),
        Place::Node(_) => (u32::MAX, u32::MAX),
    });
    out.dedup();
    out
}

/// The errors that stop the scenario at `index` of `file` from being simulated, located
/// (byte ranges), in the order found; empty when it simulates. Lints never stop it (they
/// are about a correct program: a scenario over budget is still reported), nor do errors
/// inside other scenarios (a scenario is a leaf nothing else reads). What does: a syntax,
/// import or semantic error in the scenario, anywhere else in its file or in a file its
/// file uses (directly or not), outside that file's scenarios ([`crate::elaborate::stopped`]
/// stops the same); else a shape error of its own elaboration, or its memory overflowing
/// (E0503). `netc report` and `netc snapshot` show the scenarios this leaves empty and say
/// why the others are missing.
pub fn scenario_errors(db: &dyn Db, file: SourceFile, index: u32) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    // The file, then every file it uses, breadth first.
    let mut files = vec![file];
    let mut at = 0;
    while let Some(&f) = files.get(at) {
        at += 1;
        for import in file_imports(db, f) {
            if let Ok(target) = import.target
                && !files.contains(&target)
            {
                files.push(target);
            }
        }
    }
    for &f in &files {
        let tree = crate::semantics::files::syntax_tree(db, f);
        let other_scenario = |d: &Diagnostic| {
            let item = match d.primary().place {
                Place::Node(node) if &d.primary().file == f.name(db) => Some(node.item),
                Place::Range(range) if &d.primary().file == f.name(db) => crate::elaborate::item_at(db, f, range),
                _ => None,
            };
            item.is_some_and(|i| {
                matches!(tree.get(i as usize), Some(crate::syntax::Item::Scenario(_))) && (f != file || i != index)
            })
        };
        let parse = parse_file(db, f);
        let before_elaboration = parse
            .errors
            .iter()
            .chain(file_imports(db, f).iter().filter_map(|i| i.target.as_ref().err()))
            .chain(import_cycle(db, f).iter())
            .chain(check_file(db, f).iter());
        out.extend(before_elaboration.filter(|d| d.severity == Severity::Error && !other_scenario(d)).cloned());
    }
    if out.is_empty() {
        let loc = ItemLoc::new(db, file, index);
        if let Some(graph) = crate::elaborate::scenario_graph(db, loc) {
            out.extend(graph.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned());
        }
        if crate::costs::scenario_costs(db, loc).as_ref().is_some_and(|c| c.simulation.overflowed) {
            let own = |d: &&Diagnostic| matches!(d.primary().place, Place::Node(n) if n.item == index);
            out.extend(crate::costs::cost_diagnostics(db, file).iter().filter(own).cloned());
        }
    }
    for d in &mut out {
        for label in &mut d.labels {
            resolve_label(db, label);
        }
    }
    out.dedup();
    out
}

/// Turns a node location into a byte range.
fn resolve_label(db: &dyn Db, label: &mut Label) {
    let Place::Node(node) = label.place else { return };
    let Some(file) = lookup_file(db, &label.file) else { return };
    let parse = parse_file(db, file);
    if let Some(spans) = parse.spans.get(node.item as usize) {
        label.place = Place::Range(spans.range(NodeId(node.node)));
    }
}
