//! The semantic checks as queries: a file's duplicate definitions and each item's checks
//! ([`ItemChecker`]), cached per item so that an edit of one item of a large file checks that
//! item again, not the file.

use std::collections::BTreeMap;

use crate::db::{Db, SourceFile};
use crate::diagnostics::{Code, Diagnostic, NodeRef, Place};
use crate::semantics::check::ItemChecker;
use crate::semantics::files::{ItemLoc, file_definitions, file_scope, item_tree, syntax_tree};
use crate::semantics::scope::Definition;

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
