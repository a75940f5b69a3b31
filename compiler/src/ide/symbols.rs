//! Document symbols (the outline of a file) and workspace symbols (go to any item by name).

use crate::db::SourceFile;
use crate::diagnostics::{FileName, TextRange};
use crate::elaborate::Db;
use crate::semantics::files::parse_file;
use crate::syntax::{Item, StmtKind};

use super::item_header;

/// What a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// An op declaration.
    Op,
    /// A block.
    Block,
    /// A model.
    Model,
    /// A `train` or `infer` scenario.
    Scenario,
    /// A model's input.
    Input,
    /// A `use`.
    Import,
}

/// One entry of a file's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSymbol {
    /// The name.
    pub name: String,
    /// One line of detail (the header).
    pub detail: Option<String>,
    /// What it is.
    pub kind: SymbolKind,
    /// The whole item.
    pub range: TextRange,
    /// Its name.
    pub selection_range: TextRange,
    /// Nested symbols (a model's inputs).
    pub children: Vec<DocumentSymbol>,
}

/// The outline of a file: its items, with each model's inputs.
pub fn document_symbols(db: &dyn Db, file: SourceFile) -> Vec<DocumentSymbol> {
    let parse = parse_file(db, file);
    let mut out = Vec::new();
    for (index, (item, spans)) in parse.tree.iter().zip(&parse.spans).enumerate() {
        let range = spans.whole();
        let header = item_header(db, file, index as u32);
        let (name, kind, selection, children) = match item {
            Item::Use(_) => {
                let text = header.clone().unwrap_or_default();
                (text.trim_start_matches("use ").to_string(), SymbolKind::Import, range, Vec::new())
            }
            Item::Op(op) => (op.name.text.to_string(), SymbolKind::Op, spans.range(op.name.id), Vec::new()),
            Item::Block(c) => (c.name.text.to_string(), SymbolKind::Block, spans.range(c.name.id), Vec::new()),
            Item::Model(c) => {
                let inputs = c
                    .body
                    .stmts
                    .iter()
                    .filter_map(|s| match &s.kind {
                        StmtKind::Input { name, ty } => Some(DocumentSymbol {
                            name: name.text.to_string(),
                            detail: file.text(db).get(spans.range(ty.id()).to_range()).map(str::to_string),
                            kind: SymbolKind::Input,
                            range: spans.range(s.id),
                            selection_range: spans.range(name.id),
                            children: Vec::new(),
                        }),
                        _ => None,
                    })
                    .collect();
                (c.name.text.to_string(), SymbolKind::Model, spans.range(c.name.id), inputs)
            }
            Item::Scenario(s) => (s.name.text.to_string(), SymbolKind::Scenario, spans.range(s.name.id), Vec::new()),
        };
        if range.start == 0 && range.end == 0 && index > 0 {
            continue;
        }
        let selection =
            TextRange::new(selection.start.max(range.start), selection.end.min(range.end.max(selection.end)));
        out.push(DocumentSymbol {
            name,
            detail: header,
            kind,
            range: range.cover(selection),
            selection_range: selection,
            children,
        });
    }
    out
}

/// A symbol anywhere in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSymbol {
    /// The name.
    pub name: String,
    /// What it is.
    pub kind: SymbolKind,
    /// Its file.
    pub file: FileName,
    /// Its name's range.
    pub range: TextRange,
}

/// Whether `query`'s characters appear in `name` in order, ignoring case.
fn matches(query: &str, name: &str) -> bool {
    let mut chars = name.chars().map(|c| c.to_ascii_lowercase());
    query.chars().map(|c| c.to_ascii_lowercase()).all(|q| chars.any(|c| c == q))
}

/// The items of every workspace file (and, for a non-empty query, the standard library's ops)
/// whose name matches `query` (its characters in order, any case).
pub fn workspace_symbols(db: &dyn Db, query: &str) -> Vec<WorkspaceSymbol> {
    let mut files: Vec<SourceFile> = db.workspace().files(db).values().copied().collect();
    if !query.is_empty() {
        files.extend(db.stdlib().modules(db).values().copied());
    }
    let mut out = Vec::new();
    for file in files {
        for symbol in document_symbols(db, file) {
            if symbol.kind != SymbolKind::Import && matches(query, &symbol.name) {
                out.push(WorkspaceSymbol {
                    name: symbol.name,
                    kind: symbol.kind,
                    file: file.name(db).clone(),
                    range: symbol.selection_range,
                });
            }
        }
    }
    out
}
