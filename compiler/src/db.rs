//! The salsa database: inputs and the queries from text to diagnostics.
//!
//! Inputs: each [`SourceFile`] (name and text), the [`Workspace`] (the user's files by name),
//! the embedded [`StdLib`] (high durability: user edits never re-validate it) and the
//! [`Config`]. Queries, in data-flow order:
//!
//! `parse_file` -> `syntax_tree` -> `file_definitions` / `file_imports` -> `file_scope` ->
//! `check_file` -> `file_diagnostics`.
//!
//! `syntax_tree` holds no positions, so an edit of whitespace or a comment re-runs
//! `parse_file` and `syntax_tree`, and everything after them is reused (salsa backdates the
//! equal tree). Semantic diagnostics point at nodes; only `file_diagnostics` turns them into
//! byte ranges, using the current `parse_file`.
//!
//! Levels come last: `file_diagnostics` applies those of `file_levels` (the file's `netc.toml`
//! layers and the command line's, from [`Config`]), so a change of configuration re-runs no
//! analysis, only the final step of the files whose levels changed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use salsa::{Durability, Setter};

use crate::diagnostics::{Code, CodeInfo, Diagnostic, FileName, Label, NodeRef, Place, Severity};
use crate::elaborate::{self, ElaborationCache, Graph, Request, Site};
use crate::knobs::{ConvAlgorithm, DeviceModel, Optimizer, Precision};
use crate::paths;
use crate::semantics::check::ItemChecker;
use crate::semantics::scope::{Definition, Scope, build_scope, definitions};
use crate::syntax::incremental::ParseState;
use crate::syntax::{Expr, ExprKind, Item, NodeId, Parse, SettingValue, SourceTree, UseTarget};

/// One source file: its name (as shown to the user) and its text.
#[salsa::input(debug)]
pub struct SourceFile {
    /// The name, a path relative to where netc runs, or `<std>/nn.net` for the stdlib.
    #[returns(ref)]
    pub name: FileName,
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// The user's files, by name. Files reached through `use` are added by the loader.
#[salsa::input(debug)]
pub struct Workspace {
    /// Every user file known to the database.
    #[returns(ref)]
    pub files: BTreeMap<FileName, SourceFile>,
}

/// The embedded standard library, by module path (`std.nn`).
#[salsa::input(debug)]
pub struct StdLib {
    /// Module path to file.
    #[returns(ref)]
    pub modules: BTreeMap<String, SourceFile>,
}

/// How a diagnostic's level is overridden by configuration. Written `allow`, `warn`, `deny`
/// wherever a level is read from text (netc.toml, the editor's settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning.
    Warn,
    /// Reported as an error.
    Deny,
}

/// Levels set for some files only: a `netc.toml`'s `[lints]` (for every file it governs) or
/// one of its `[[overrides]]` entries (for the files its `paths` match). The loader decides
/// which files; see [`crate::config`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LevelOverride {
    /// The files the levels apply to.
    pub files: BTreeSet<FileName>,
    /// Levels by name, code or `warnings`, as in [`Config::levels`].
    pub levels: BTreeMap<String, Level>,
}

/// Configuration (from `netc.toml` and the command line).
#[salsa::input(debug)]
pub struct Config {
    /// Level overrides by diagnostic name (`ineffective-setting`), code (`W0306`), or
    /// `warnings` for every warning, from the command line: they win over `overrides`. Only
    /// warnings and lints can be changed: an error means the program is wrong and stays one.
    #[returns(ref)]
    pub levels: BTreeMap<String, Level>,
    /// Levels from `netc.toml` files, weakest first: for a file, those whose `files` hold it.
    #[returns(ref)]
    pub overrides: Vec<LevelOverride>,
}

/// The module every file sees without `use`.
pub const PRELUDE: &str = "std.nn";

/// The stdlib sources embedded in the binary: module path and text.
pub const STDLIB_SOURCES: &[(&str, &str)] = &[
    ("std.nn", include_str!("../../stdlib/std/nn.net")),
    ("std.blocks", include_str!("../../stdlib/std/blocks.net")),
    ("std.models.alexnet", include_str!("../../stdlib/std/models/alexnet.net")),
    ("std.models.articles", include_str!("../../stdlib/std/models/articles.net")),
    ("std.models.bert", include_str!("../../stdlib/std/models/bert.net")),
    ("std.models.convnext", include_str!("../../stdlib/std/models/convnext.net")),
    ("std.models.efficientnet", include_str!("../../stdlib/std/models/efficientnet.net")),
    ("std.models.gpt2", include_str!("../../stdlib/std/models/gpt2.net")),
    ("std.models.llama", include_str!("../../stdlib/std/models/llama.net")),
    ("std.models.mobilenet", include_str!("../../stdlib/std/models/mobilenet.net")),
    ("std.models.resnet", include_str!("../../stdlib/std/models/resnet.net")),
    ("std.models.unet", include_str!("../../stdlib/std/models/unet.net")),
    ("std.models.vgg", include_str!("../../stdlib/std/models/vgg.net")),
    ("std.models.vit", include_str!("../../stdlib/std/models/vit.net")),
];

/// The database interface the queries use.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The user's files.
    fn workspace(&self) -> Workspace;
    /// The standard library.
    fn stdlib(&self) -> StdLib;
    /// The configuration.
    fn config(&self) -> Config;
    /// The last parse of each file, which `parse_file` reparses after an edit.
    fn parse_cache(&self) -> &ParseCache;
    /// The last elaboration of each model, whose block calls the next one reuses.
    fn elaboration_cache(&self) -> &ElaborationCache;
}

/// The last parse of each file with what a reparse reuses ([`ParseState`]), kept beside
/// salsa: a query cannot see its own previous result, and reparsing only the edited items
/// is what keeps an edit of a large file fast. It changes no result: a reparse equals a
/// parse from scratch (tests/it/reparse.rs), so `parse_file` is still a function of the
/// text. Shared by the database's clones (the language server's snapshots).
#[derive(Debug, Default)]
pub struct ParseCache(Mutex<HashMap<SourceFile, Arc<ParseState>>>);

impl ParseCache {
    /// The parse of `text`, the current text of `file`: reparsed from the file's last
    /// parse, or parsed from scratch the first time.
    fn parse(&self, file: SourceFile, name: &FileName, text: &str) -> Arc<Parse> {
        let previous = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&file).cloned();
        let state = match previous {
            Some(state) if state.text() == text => state,
            Some(state) => {
                let state = Arc::new(state.reparse(name, text));
                // Debug builds (every test run) check each reparse against a parse from scratch.
                debug_assert!(**state.parse() == crate::syntax::parse(name, text), "reparse of {name} differs");
                state
            }
            None => Arc::new(ParseState::new(name, text)),
        };
        let parse = Arc::clone(state.parse());
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(file, state);
        parse
    }

    /// How many files' parses are kept.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no parse is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the last parse of `file` (it left the workspace).
    fn forget(&self, file: SourceFile) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&file);
    }
}

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
    fn elaboration_cache(&self) -> &ElaborationCache {
        &self.elaborations
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
        let workspace = Workspace::new(&db, BTreeMap::new());
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
        let mut files = workspace.files(self).clone();
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

/// The level configured for a diagnostic of code `info` and default `severity`, from
/// `layers` of level settings, weakest first (a `netc.toml`'s `[lints]`, its matching
/// `[[overrides]]`, the command line), or `None` to keep its default.
///
/// The strongest layer that names the diagnostic (by name, else by code) decides. If the
/// result is a warning, `warnings` in a stronger layer than that one (in any layer when none
/// names it) then decides: `-D warnings` denies a lint that `netc.toml` sets to `warn`, but not
/// one that it allows, and `-W unused` on the command line wins over `warnings = "deny"`.
pub fn configured_level(layers: &[&BTreeMap<String, Level>], info: CodeInfo, severity: Severity) -> Option<Level> {
    let named =
        layers.iter().enumerate().rev().find_map(|(rank, layer)| {
            layer.get(info.name).or_else(|| layer.get(info.code)).map(|&level| (rank, level))
        });
    let warning = match named {
        Some((_, level)) => level == Level::Warn,
        None => severity == Severity::Warning,
    };
    let stronger = named.map_or(0, |(rank, _)| rank + 1);
    let group = if warning { layers[stronger..].iter().rev().find_map(|layer| layer.get("warnings")) } else { None };
    group.copied().or(named.map(|(_, level)| level))
}

/// The file name of a stdlib module: `std.nn` is `<std>/nn.net`.
pub fn stdlib_file_name(module: &str) -> FileName {
    let path = module.strip_prefix("std.").unwrap_or(module).replace('.', "/");
    FileName::new(format!("<std>/{path}.net"))
}

/// Finds a file (user or stdlib) by name.
pub fn lookup_file(db: &dyn Db, name: &FileName) -> Option<SourceFile> {
    if let Some(&file) = db.workspace().files(db).get(name) {
        return Some(file);
    }
    stdlib_files(db, db.stdlib()).get(name).copied()
}

/// The stdlib's files by name, for [`lookup_file`]: made once (the stdlib does not change)
/// rather than comparing the name of every module on each lookup. The first module of a name
/// wins, as the search did.
#[salsa::tracked(returns(ref))]
pub fn stdlib_files(db: &dyn Db, stdlib: StdLib) -> BTreeMap<FileName, SourceFile> {
    let mut files = BTreeMap::new();
    for &file in stdlib.modules(db).values() {
        files.entry(file.name(db).clone()).or_insert(file);
    }
    files
}

/// Parses a file: tree, positions, comments and syntax errors. After an edit, only the
/// items the edit reached are parsed again (see [`ParseCache`]).
#[salsa::tracked(returns(ref))]
pub fn parse_file(db: &dyn Db, file: SourceFile) -> Arc<Parse> {
    db.parse_cache().parse(file, file.name(db), file.text(db))
}

/// The syntax tree alone. Equal across whitespace and comment edits, so the queries below
/// are not re-run by them.
#[salsa::tracked(returns(ref))]
pub fn syntax_tree(db: &dyn Db, file: SourceFile) -> SourceTree {
    parse_file(db, file).tree.clone()
}

/// The top-level definitions of a file.
#[salsa::tracked(returns(ref))]
pub fn file_definitions(db: &dyn Db, file: SourceFile) -> Vec<(String, Definition)> {
    definitions(file.name(db), syntax_tree(db, file))
}

/// One `use` of a file, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Import {
    /// The `use` item's index.
    pub item: u32,
    /// The imported file, or the error that prevented it.
    pub target: Result<SourceFile, Diagnostic>,
}

/// The name a relative `use` refers to, or the stdlib module name.
pub fn import_name(db: &dyn Db, file: SourceFile, target: &UseTarget) -> Option<FileName> {
    match target {
        UseTarget::File { path, .. } => Some(paths::resolve_relative(file.name(db), path)),
        UseTarget::Module { segments, .. } => {
            let module: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
            let module = module.join(".");
            db.stdlib().modules(db).get(&module).map(|f| f.name(db).clone())
        }
    }
}

/// The `use` items of a file, resolved to files.
#[salsa::tracked(returns(ref))]
pub fn file_imports(db: &dyn Db, file: SourceFile) -> Vec<Import> {
    let name = file.name(db);
    let mut imports = Vec::new();
    for (index, item) in syntax_tree(db, file).iter().enumerate() {
        let Item::Use(u) = item else { continue };
        let Some(target) = &u.target else { continue };
        let at = |node: NodeId| Place::Node(NodeRef { item: index as u32, node: node.0 });
        let resolved = match target {
            UseTarget::File { id, path } => {
                let wanted = paths::resolve_relative(name, path);
                match db.workspace().files(db).get(&wanted) {
                    Some(&f) => Ok(f),
                    None => Err(Diagnostic::new(
                        Code::UnresolvedImport,
                        format!("cannot find file `{path}`"),
                        name,
                        at(*id),
                    )
                    .with_primary_message("no such file")
                    .with_note(format!("looked for `{wanted}` (a path in `use` is relative to the file that has it)"))),
                }
            }
            UseTarget::Module { id: path_id, segments } => {
                let module: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
                let module = module.join(".");
                match db.stdlib().modules(db).get(&module) {
                    Some(&f) => Ok(f),
                    None => {
                        let known = db.stdlib().modules(db);
                        let suggestion = crate::suggest::closest(&module, known.keys().map(String::as_str));
                        let mut d = Diagnostic::new(
                            Code::UnknownModule,
                            format!("unknown module `{module}`"),
                            name,
                            at(*path_id),
                        )
                        .with_primary_message("not a standard-library module");
                        d.help = Some(match suggestion {
                            Some(s) => format!("did you mean `{s}`?"),
                            None if !module.starts_with("std") => {
                                format!("to use a file, quote its path: `use \"{}.net\"`", module.replace('.', "/"))
                            }
                            None => {
                                {
                                    // The top-level modules; model families are `std.models.<family>`.
                                    let mut top: Vec<String> = known
                                        .keys()
                                        .map(|m| {
                                            if m.starts_with("std.models.") {
                                                "std.models.<family>".to_string()
                                            } else {
                                                m.clone()
                                            }
                                        })
                                        .collect();
                                    top.dedup();
                                    format!("the modules are: {}", top.join(", "))
                                }
                            }
                        });
                        Err(d)
                    }
                }
            }
        };
        imports.push(Import { item: index as u32, target: resolved });
    }
    imports
}

/// The names a file can refer to.
#[salsa::tracked(returns(ref))]
pub fn file_scope(db: &dyn Db, file: SourceFile) -> Scope {
    let own = file_definitions(db, file);
    let imported: Vec<Vec<(String, Definition)>> = file_imports(db, file)
        .iter()
        .filter_map(|i| i.target.as_ref().ok())
        .filter(|&&target| target != file)
        .map(|&target| file_definitions(db, target).clone())
        .collect();
    let prelude = match db.stdlib().modules(db).get(PRELUDE) {
        Some(&p) if p != file => file_definitions(db, p).clone(),
        _ => Vec::new(),
    };
    let mut scope = build_scope(own, &imported, &prelude);
    scope.incomplete = file_imports(db, file).iter().any(|i| i.target.is_err());
    scope
}

/// An import cycle through this file, reported at the first `use` that starts one.
#[salsa::tracked(returns(ref))]
pub fn import_cycle(db: &dyn Db, file: SourceFile) -> Option<Diagnostic> {
    for import in file_imports(db, file) {
        let Ok(start) = import.target else { continue };
        // Breadth-first search from the imported file back to this one, remembering the way.
        let mut parent: HashMap<SourceFile, SourceFile> = HashMap::new();
        let mut seen = HashSet::from([start]);
        let mut queue = VecDeque::from([start]);
        let mut found = (start == file).then_some(Vec::new());
        while let (None, Some(current)) = (&found, queue.pop_front()) {
            for next in file_imports(db, current) {
                let Ok(target) = next.target else { continue };
                if target == file {
                    let mut chain = vec![current];
                    while let Some(&p) = parent.get(chain.last().expect("not empty")) {
                        chain.push(p);
                    }
                    chain.reverse();
                    found = Some(chain);
                    break;
                }
                if seen.insert(target) {
                    parent.insert(target, current);
                    queue.push_back(target);
                }
            }
        }
        if let Some(chain) = found {
            let mut names = vec![file.name(db).to_string()];
            names.extend(chain.iter().map(|f| f.name(db).to_string()));
            names.push(file.name(db).to_string());
            let place = Place::Node(NodeRef { item: import.item, node: 0 });
            return Some(
                Diagnostic::new(
                    Code::ImportCycle,
                    format!("import cycle: {}", names.join(" -> ")),
                    file.name(db),
                    place,
                )
                .with_primary_message("this `use` leads back to this file")
                .with_help(if chain.is_empty() {
                    "remove this `use`: a file always sees its own definitions"
                } else {
                    "move the shared definitions into a file that both use"
                }),
            );
        }
    }
    None
}

/// Semantic diagnostics of a file, located at nodes.
#[salsa::tracked(returns(ref))]
pub fn check_file(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let name = file.name(db);
    let tree = syntax_tree(db, file);
    let mut diagnostics = Vec::new();
    // Top-level names defined twice in this file.
    let mut first: BTreeMap<&str, (&Definition, &str)> = BTreeMap::new();
    for (def_name, def) in file_definitions(db, file) {
        let keyword = tree.items[def.item as usize].keyword();
        if let Some((prev, prev_keyword)) = first.get(def_name.as_str()) {
            let at = |d: &Definition| Place::Node(NodeRef { item: d.item, node: d.name_node.0 });
            diagnostics.push(
                Diagnostic::new(Code::DuplicateDefinition, format!("`{def_name}` is defined twice"), name, at(def))
                    .with_primary_message(format!("{keyword} `{def_name}` redefined here"))
                    .with_label(name, at(prev), format!("first defined here ({prev_keyword})"))
                    .with_help("rename one of them"),
            );
        } else {
            first.insert(def_name, (def, keyword));
        }
    }
    for index in 0..tree.len() as u32 {
        diagnostics.extend(check_item(db, ItemLoc::new(db, file, index)).iter().cloned());
    }
    diagnostics
}

/// Semantic diagnostics of one item, located at nodes. Cached per item: an edit of one item
/// of a large file checks that item again, not the file.
#[salsa::tracked(returns(ref))]
pub fn check_item<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Vec<Diagnostic> {
    let file = *loc.file(db);
    let Some(item) = item_tree(db, loc).as_deref() else { return Vec::new() };
    let mut checker = ItemChecker::new(file.name(db), *loc.index(db), file_scope(db, file));
    checker.check_item(item);
    checker.diagnostics
}

/// The level settings that apply to a file, weakest first: its `netc.toml`'s `[lints]` and
/// matching `[[overrides]]`, then the command line's. Equal across configuration changes
/// that do not concern the file, so its diagnostics are not re-run by them.
#[salsa::tracked(returns(ref))]
pub fn file_levels(db: &dyn Db, file: SourceFile) -> Vec<BTreeMap<String, Level>> {
    let config = db.config();
    let name = file.name(db);
    let mut layers: Vec<BTreeMap<String, Level>> =
        config.overrides(db).iter().filter(|o| o.files.contains(name)).map(|o| o.levels.clone()).collect();
    layers.push(config.levels(db).clone());
    layers
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

/// A top-level item of a file, as a query key.
#[salsa::interned(debug)]
pub struct ItemLoc<'db> {
    /// The file.
    pub file: SourceFile,
    /// The item's index in the file.
    pub index: u32,
}

/// One top-level item. Equal across edits of other items, so the queries that read an
/// item through this one (elaboration) are not re-run when another item of its file changes.
/// Shared with the tree: a reparse that kept the item keeps it by pointer, and comparing it
/// with the previous revision's compares a pointer. (Most callers want `.as_deref()`; the
/// elaborator keeps the `Arc` of each item it used, to know next time which are unchanged.)
#[salsa::tracked(returns(ref))]
pub fn item_tree<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<Arc<Item>> {
    item_of(db, *loc.file(db), *loc.index(db)).cloned()
}

/// Item `index` of `file`, as [`item_tree`] gives it, but read straight from the item's
/// tracked field: for a caller that reads many items (elaboration checking the items its
/// previous run used), without a query per item. The caller depends on that item alone (and
/// on the file's number of items).
pub fn item_of(db: &dyn Db, file: SourceFile, index: u32) -> Option<&Arc<Item>> {
    file_items(db, file).get(index as usize).map(|item| item.tree(db))
}

/// One top-level item of a file, by index, as salsa tracks it: [`item_tree`] reads its
/// tree through this field, so that after an edit of another item of the file the item's
/// `item_tree` is found unchanged by comparing revisions, not run again (a generated file
/// has thousands of items, and elaboration reads every one it used).
#[salsa::tracked]
pub struct FileItem<'db> {
    /// The item's index in the file (its identity).
    pub index: u32,
    /// Its tree (the file's, shared); a change is seen by the readers of this field only.
    #[tracked]
    #[returns(ref)]
    pub tree: Arc<Item>,
}

/// The items of a file as tracked structs: made again after each edit of the file, with
/// the same identities (by index), so that only the fields of the items that changed are
/// new.
#[salsa::tracked(returns(ref))]
pub fn file_items(db: &dyn Db, file: SourceFile) -> Vec<FileItem<'_>> {
    let tree = syntax_tree(db, file);
    tree.items.iter().enumerate().map(|(index, item)| FileItem::new(db, index as u32, Arc::clone(item))).collect()
}

/// What a scenario asks for, evaluated from its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioSetup {
    /// The model run: its file and item index.
    pub model: (SourceFile, u32),
    /// The model's arguments.
    pub args: BTreeMap<String, elaborate::Value>,
    /// Bound dimensions: `N` from `batch`, `S` from `seq`, others from `dim`.
    pub dims: BTreeMap<String, i128>,
    /// The batch size, if set.
    pub batch: Option<i128>,
    /// How the model is run (train or infer, grad, mode, optimizer, device, budget).
    pub run: RunSettings,
}

/// The settings of a scenario that decide its memory, evaluated (defaults filled in).
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// A `train` scenario.
    pub training: bool,
    /// `no_grad`.
    pub no_grad: bool,
    /// `eval`.
    pub eval: bool,
    /// The optimizer (`sgd` unless set).
    pub optimizer: Optimizer,
    /// `foreach=` given to the optimizer, if any.
    pub foreach: Option<bool>,
    /// The device preset (`cpu` unless set).
    pub device: DeviceModel,
    /// The convolution algorithm (`auto` unless set).
    pub conv_algorithm: ConvAlgorithm,
    /// `cudnn_benchmark`.
    pub cudnn_benchmark: bool,
    /// The budget in bytes.
    pub budget: Option<i128>,
    /// The safety margin (1.5 unless set).
    pub margin: f64,
    /// The runtime overhead in bytes, overriding the device's.
    pub overhead: Option<i128>,
    /// The precision policy (`fp32` unless set).
    pub precision: Precision,
    /// Micro-batches per optimizer step (`grad_accum`, 1 unless set).
    pub grad_accum: i128,
    /// Data-parallel devices (1 unless set).
    pub data_parallel: i128,
    /// ZeRO stage (0 unless set).
    pub zero: i128,
    /// `fsdp`.
    pub fsdp: bool,
    /// Activation checkpointing.
    pub checkpoint: bool,
    /// The dataloader: workers, prefetch factor, bytes per sample, pinned memory.
    pub dataloader: Option<Dataloader>,
    /// The host memory budget.
    pub host_budget: Option<i128>,
}

/// `dataloader(workers=..., prefetch=..., sample=..., pin_memory=...)`, defaults filled in
/// as PyTorch's DataLoader has them (prefetch_factor 2, no pinning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataloader {
    /// Worker processes (0: loading in the main process).
    pub workers: i128,
    /// Batches prefetched per worker.
    pub prefetch: i128,
    /// Bytes of one decoded sample.
    pub sample: i128,
    /// Whether batches are copied into pinned (page-locked) memory.
    pub pin_memory: bool,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            training: false,
            no_grad: false,
            eval: false,
            optimizer: Optimizer::Sgd,
            foreach: None,
            device: DeviceModel::Cpu,
            conv_algorithm: ConvAlgorithm::Auto,
            cudnn_benchmark: false,
            budget: None,
            margin: 1.5,
            overhead: None,
            precision: Precision::Fp32,
            grad_accum: 1,
            data_parallel: 1,
            zero: 0,
            fsdp: false,
            checkpoint: false,
            dataloader: None,
            host_budget: None,
        }
    }
}

/// The bytes of a size expression, if it is a valid size.
fn size_of(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Size { value, integer, unit } => {
            crate::semantics::sizes::size_bytes(f64::from_bits(*value), *integer, &unit.text).ok().map(i128::from)
        }
        _ => None,
    }
}

/// Evaluates a scenario's settings; `None` when the scenario or its model is broken (the
/// checks report why).
#[salsa::tracked(returns(ref))]
pub fn scenario_setup<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Option<ScenarioSetup> {
    let file = *loc.file(db);
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return None };
    let run = RunSettings { training: scenario.kind == crate::syntax::ScenarioKind::Train, ..RunSettings::default() };
    let mut setup = ScenarioSetup { model: (file, 0), args: BTreeMap::new(), dims: BTreeMap::new(), batch: None, run };
    let mut model = None;
    for s in &scenario.settings {
        match (&s.key.text[..], &s.value) {
            ("model", SettingValue::Value(e)) => {
                let (callee, args) = match &e.kind {
                    ExprKind::Call { callee, args } => (callee, args.as_slice()),
                    ExprKind::Name(n) => (n, [].as_slice()),
                    _ => return None,
                };
                let def = file_scope(db, file).get(&callee.text)?.clone();
                let model_loc = ItemLoc::new(db, lookup_file(db, &def.file)?, def.item);
                let Some(Item::Model(m)) = item_tree(db, model_loc).as_deref() else {
                    return None;
                };
                for (position, arg) in args.iter().enumerate() {
                    let name = match &arg.keyword {
                        Some(k) => k.text.clone(),
                        None => m.params.get(position)?.name.text.clone(),
                    };
                    setup.args.insert(name, elaborate::literal_value(&arg.value));
                }
                model = Some((lookup_file(db, &def.file)?, def.item));
            }
            ("batch", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.batch = Some(*n as i128);
                setup.dims.insert("N".into(), *n as i128);
            }
            ("seq", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.dims.insert("S".into(), *n as i128);
            }
            ("dim", SettingValue::Dim { name, value: Expr { kind: ExprKind::Int(n), .. } }) => {
                setup.dims.insert(name.text.clone(), *n as i128);
            }
            ("no_grad", _) => setup.run.no_grad = true,
            ("fsdp", _) => setup.run.fsdp = true,
            ("checkpoint", _) => setup.run.checkpoint = true,
            ("precision", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                // A word that is no policy is reported by the checks; the default stands.
                setup.run.precision = Precision::from_name(&n.text).unwrap_or(setup.run.precision)
            }
            ("grad_accum", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.grad_accum = *n as i128
            }
            ("data_parallel", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => {
                setup.run.data_parallel = *n as i128
            }
            ("zero", SettingValue::Value(Expr { kind: ExprKind::Int(n), .. })) => setup.run.zero = *n as i128,
            ("host_budget", SettingValue::Value(e)) => setup.run.host_budget = size_of(e),
            ("dataloader", SettingValue::Args(args)) => {
                let mut loader = Dataloader { workers: 0, prefetch: 2, sample: 0, pin_memory: false };
                for a in args {
                    match (a.keyword.as_ref().map(|k| k.text.as_str()), &a.value.kind) {
                        (Some("workers"), ExprKind::Int(n)) => loader.workers = *n as i128,
                        (Some("prefetch"), ExprKind::Int(n)) => loader.prefetch = *n as i128,
                        (Some("pin_memory"), ExprKind::Bool(b)) => loader.pin_memory = *b,
                        (Some("sample"), _) => loader.sample = size_of(&a.value).unwrap_or(0),
                        _ => {}
                    }
                }
                setup.run.dataloader = Some(loader);
            }
            ("eval", _) => setup.run.eval = true,
            ("cudnn_benchmark", _) => setup.run.cudnn_benchmark = true,
            ("optimizer", SettingValue::Value(e)) => match &e.kind {
                ExprKind::Name(n) => setup.run.optimizer = Optimizer::from_name(&n.text).unwrap_or(setup.run.optimizer),
                ExprKind::Call { callee, args } => {
                    setup.run.optimizer = Optimizer::from_name(&callee.text).unwrap_or(setup.run.optimizer);
                    for a in args {
                        if a.keyword.as_ref().is_some_and(|k| k.text == "foreach")
                            && let ExprKind::Bool(b) = a.value.kind
                        {
                            setup.run.foreach = Some(b);
                        }
                    }
                }
                _ => {}
            },
            ("device", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.device = DeviceModel::from_name(&n.text).unwrap_or(setup.run.device)
            }
            ("conv_algorithm", SettingValue::Value(Expr { kind: ExprKind::Name(n), .. })) => {
                setup.run.conv_algorithm = ConvAlgorithm::from_name(&n.text).unwrap_or(setup.run.conv_algorithm)
            }
            ("budget", SettingValue::Value(e)) => setup.run.budget = size_of(e),
            ("overhead", SettingValue::Value(e)) => setup.run.overhead = size_of(e),
            ("margin", SettingValue::Value(e)) => {
                setup.run.margin = match e.kind {
                    ExprKind::Float(bits) => f64::from_bits(bits),
                    ExprKind::Int(n) => n as f64,
                    _ => setup.run.margin,
                }
            }
            _ => {}
        }
    }
    setup.model = model?;
    // With gradient accumulation the model runs on micro-batches.
    if setup.run.training
        && setup.run.grad_accum > 1
        && let Some(batch) = setup.batch
        && batch % setup.run.grad_accum == 0
    {
        setup.dims.insert("N".into(), batch / setup.run.grad_accum);
    }
    Some(setup)
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
    Some(elaborate::elaborate_scenario(db, &request, symbolic))
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
    Some(elaborate::elaborate(db, &request))
}

/// Whether a file has syntax errors. Unlike the errors themselves (which hold positions),
/// the answer survives whitespace and comment edits, so queries that ask are not re-run.
#[salsa::tracked(returns(copy))]
pub fn has_syntax_errors(db: &dyn Db, file: SourceFile) -> bool {
    parse_file(db, file).errors.iter().any(|d| d.severity == Severity::Error)
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

/// The lints of one scenario.
#[salsa::tracked(returns(ref))]
pub fn scenario_lints<'db>(db: &'db dyn Db, loc: ItemLoc<'db>) -> Vec<Diagnostic> {
    let (Some(setup), Some(graph), Some(costs)) = (
        scenario_setup(db, loc).as_ref(),
        scenario_graph(db, loc).as_ref(),
        crate::costs::scenario_costs(db, loc).as_ref(),
    ) else {
        return Vec::new();
    };
    let Some(Item::Scenario(scenario)) = item_tree(db, loc).as_deref() else { return Vec::new() };
    let file = *loc.file(db);
    let cx =
        crate::lints::ScenarioContext { db, file: file.name(db), item: *loc.index(db), scenario, setup, graph, costs };
    crate::lints::LINTS.iter().flat_map(|lint| lint.check_scenario(&cx)).collect()
}

/// The lints of a file: its own (unused code) and those of its scenarios. Like shape
/// errors, they wait until the file has no errors; one found by several scenarios (a layer
/// of a shared model) is reported once.
#[salsa::tracked(returns(ref))]
pub fn lint_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    if check_file(db, file).iter().any(|d| d.severity == Severity::Error)
        || has_syntax_errors(db, file)
        || !shape_diagnostics(db, file).is_empty()
    {
        return Vec::new();
    }
    let tree = syntax_tree(db, file);
    let cx = crate::lints::FileContext { db, source: file, file: file.name(db), tree };
    let mut out: Vec<Diagnostic> = crate::lints::LINTS.iter().flat_map(|lint| lint.check_file(&cx)).collect();
    let mut seen = HashSet::new();
    for (index, item) in tree.iter().enumerate() {
        if matches!(item, Item::Scenario(_)) {
            for d in scenario_lints(db, ItemLoc::new(db, file, index as u32)) {
                if seen.insert((d.code, d.primary().file.clone(), d.primary().place.clone())) {
                    out.push(d.clone());
                }
            }
        }
    }
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

/// The files a file imports directly, by name, whether or not they are loaded (the loader
/// uses this to find files to read).
pub fn imported_names(db: &dyn Db, file: SourceFile) -> Vec<FileName> {
    syntax_tree(db, file)
        .iter()
        .filter_map(|item| match item {
            Item::Use(u) => u.target.as_ref(),
            _ => None,
        })
        .filter(|t| matches!(t, UseTarget::File { .. }))
        .filter_map(|t| import_name(db, file, t))
        .collect()
}
