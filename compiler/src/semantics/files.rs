//! The file-level queries: a file parsed (reparsed from its last parse after an edit), its
//! items as tracked structs, its definitions, imports and scope, and import cycles.
//!
//! `syntax_tree` holds no positions, so an edit of whitespace or a comment re-runs
//! `parse_file` and `syntax_tree`, and everything after them is reused (salsa backdates the
//! equal tree).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use crate::db::{Db, PRELUDE, SourceFile, Workspace};
use crate::diagnostics::{Code, Diagnostic, FileName, NodeRef, Place, Severity};
use crate::paths;
use crate::semantics::scope::{Definition, Scope, build_scope, definitions};
use crate::syntax::{Item, NodeId, Parse, SourceTree, UseTarget};

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

/// Whether a file has syntax errors. Unlike the errors themselves (which hold positions),
/// the answer survives whitespace and comment edits, so queries that ask are not re-run.
#[salsa::tracked(returns(copy))]
pub fn has_syntax_errors(db: &dyn Db, file: SourceFile) -> bool {
    parse_file(db, file).errors.iter().any(|d| d.severity == Severity::Error)
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
                let refused = db.workspace().refused(db).get(&wanted);
                match (db.workspace().files(db).get(&wanted), refused) {
                    (Some(&f), _) => Ok(f),
                    (None, Some(reason)) => Err(Diagnostic::new(
                        Code::ImportOutsideProject,
                        format!("cannot use `{path}`: {reason}"),
                        name,
                        at(*id),
                    )
                    .with_primary_message("not read")
                    .with_help(
                        "a `use` names a `.net` file inside the project: the directory of the nearest \
                         `netc.toml`, else the directory checked (or the checked file's directory)",
                    )),
                    (None, None) => Err(Diagnostic::new(
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

/// A file that is part of an import cycle of two files or more: a member of a strongly
/// connected component of the import graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleMember {
    /// The component's representative (its first file in the database's order): two files
    /// are in one cycle when they have the same.
    pub component: SourceFile,
    /// How many files the component has.
    pub size: u32,
    /// A file of the component that imports this one (the last step of a cycle back here).
    pub importer: SourceFile,
}

/// The import cycles of the workspace: every file that is part of one, found once for all
/// files (Tarjan's algorithm over the import graph, linear in files and `use` items). Asking
/// each file which files lead back to it would walk everything it reaches, file by file: an
/// import chain of 20,000 files took a minute and gigabytes. A file that uses itself is not
/// a member (it is its own cycle, which [`import_cycle`] sees in its imports).
#[salsa::tracked(returns(ref))]
pub fn import_cycles(db: &dyn Db, workspace: Workspace) -> HashMap<SourceFile, CycleMember> {
    // The graph of every file reachable from the workspace and the stdlib, by index.
    let mut index: HashMap<SourceFile, u32> = HashMap::new();
    let mut nodes: Vec<SourceFile> = Vec::new();
    let roots = workspace.files(db).values().chain(db.stdlib().modules(db).values());
    for &root in roots {
        if index.contains_key(&root) {
            continue;
        }
        index.insert(root, nodes.len() as u32);
        nodes.push(root);
    }
    let mut edges: Vec<Vec<u32>> = Vec::new();
    let mut next = 0;
    while next < nodes.len() {
        let mut out = Vec::new();
        for import in file_imports(db, nodes[next]) {
            let Ok(target) = import.target else { continue };
            let i = *index.entry(target).or_insert_with(|| {
                nodes.push(target);
                nodes.len() as u32 - 1
            });
            out.push(i);
        }
        edges.push(out);
        next += 1;
    }
    let components = strongly_connected(&edges);
    let mut members = HashMap::new();
    for component in components.iter().filter(|c| c.len() > 1) {
        let first = component.iter().copied().min().expect("not empty");
        for &v in component {
            members.insert(
                nodes[v as usize],
                CycleMember {
                    component: nodes[first as usize],
                    size: component.len() as u32,
                    importer: nodes[v as usize],
                },
            );
        }
    }
    // The first importer of each member within its component, in the files' order.
    for (u, targets) in edges.iter().enumerate() {
        let Some(from) = members.get(&nodes[u]).copied() else { continue };
        for &v in targets {
            if let Some(to) = members.get_mut(&nodes[v as usize])
                && to.component == from.component
                && to.importer == nodes[v as usize]
                && u != v as usize
            {
                to.importer = nodes[u];
            }
        }
    }
    members
}

/// The strongly connected components of a graph (Tarjan's algorithm without recursion: an
/// import chain is as deep as it is long), each a list of node indices.
fn strongly_connected(edges: &[Vec<u32>]) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let n = edges.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut counter = 0u32;
    let mut components = Vec::new();
    // The depth-first walk: a node and how many of its edges it has followed.
    let mut walk: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if order[root as usize] != UNSEEN {
            continue;
        }
        walk.push((root, 0));
        order[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut followed)) = walk.last_mut() {
            if let Some(&w) = edges[v as usize].get(*followed) {
                *followed += 1;
                if order[w as usize] == UNSEEN {
                    order[w as usize] = counter;
                    low[w as usize] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    walk.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(order[w as usize]);
                }
                continue;
            }
            walk.pop();
            if let Some(&(parent, _)) = walk.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == order[v as usize] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// Cycles of up to this many files are named whole, by the shortest way back; a longer one
/// by its first and last steps and its size, so that each file's message stays short (a
/// cycle of 5,000 files once gave 560 MB of diagnostics, each naming every file).
const NAMED_CYCLE: u32 = 16;

/// An import cycle through this file, reported at the first `use` that starts one.
#[salsa::tracked(returns(ref))]
pub fn import_cycle(db: &dyn Db, file: SourceFile) -> Option<Diagnostic> {
    let cycles = import_cycles(db, db.workspace());
    let member = cycles.get(&file);
    for import in file_imports(db, file) {
        let Ok(start) = import.target else { continue };
        let name = |f: SourceFile| f.name(db).to_string();
        let names = if start == file {
            vec![name(file), name(file)]
        } else {
            let Some(member) = member.filter(|m| cycles.get(&start).is_some_and(|t| t.component == m.component)) else {
                continue;
            };
            if member.size <= NAMED_CYCLE {
                let chain = way_back(db, cycles, member.component, start, file);
                let mut names = vec![name(file)];
                names.extend(chain.iter().map(|&f| name(f)));
                names.push(name(file));
                names
            } else if member.importer == start {
                vec![name(file), name(start), name(file)]
            } else {
                let last = format!("{} ({} files use each other)", name(file), member.size);
                vec![name(file), name(start), "...".to_string(), name(member.importer), last]
            }
        };
        let place = Place::Node(NodeRef { item: import.item, node: 0 });
        return Some(
            Diagnostic::new(Code::ImportCycle, format!("import cycle: {}", names.join(" -> ")), file.name(db), place)
                .with_primary_message("this `use` leads back to this file")
                .with_help(if start == file {
                    "remove this `use`: a file always sees its own definitions"
                } else {
                    "move the shared definitions into a file that both use"
                }),
        );
    }
    None
}

/// The shortest way from `start` back to `file` (both in the cycle `component`): the files
/// from `start` to the one that imports `file`. A breadth-first search within the component
/// (a way back never leaves it).
fn way_back(
    db: &dyn Db,
    cycles: &HashMap<SourceFile, CycleMember>,
    component: SourceFile,
    start: SourceFile,
    file: SourceFile,
) -> Vec<SourceFile> {
    let mut parent: HashMap<SourceFile, SourceFile> = HashMap::new();
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(current) = queue.pop_front() {
        for next in file_imports(db, current) {
            let Ok(target) = next.target else { continue };
            if target == file {
                let mut chain = vec![current];
                while let Some(&p) = parent.get(chain.last().expect("not empty")) {
                    chain.push(p);
                }
                chain.reverse();
                return chain;
            }
            if cycles.get(&target).is_some_and(|m| m.component == component) && seen.insert(target) {
                parent.insert(target, current);
                queue.push_back(target);
            }
        }
    }
    // Not reached: `start` and `file` are in one component.
    vec![start]
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
