//! The IDE façade: what an editor asks about a file, answered as plain data.
//!
//! Every function takes the database and a [`SourceFile`], and positions as byte offsets
//! into the file's text; answers are byte ranges ([`TextRange`]) and strings. Nothing here
//! knows the Language Server Protocol: the `netc-lsp` crate translates (UTF-16 positions,
//! URIs, JSON). Everything is built on the public queries of the layers below; the few queries
//! of its own (the per-scenario line figures) are salsa queries too, so they are cached and
//! cancelled like the others.
//!
//! - [`resolve`]: what each name of a file refers to (definitions, references, hover
//!   targets, semantic classes);
//! - [`figures`]: the active scenario, inlay hints, code lenses and the figures of hovers;
//! - [`complete`]: completion and signature help;
//! - [`highlight`]: semantic tokens and folding ranges;
//! - [`symbols`]: document and workspace symbols;
//! - here: diagnostics, hover, navigation and formatting.

pub mod complete;
pub mod figures;
pub mod highlight;
pub mod resolve;
pub mod symbols;

use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::{Diagnostic, FileName, TextRange};
use crate::elaborate::Db;
use crate::format::{FormatError, format};
use crate::host::file_diagnostics;
use crate::semantics::files::{parse_file, syntax_tree};
use crate::syntax::Item;
use crate::syntax::settings::setting;

pub use complete::{Completion, CompletionKind, SignatureInfo, completions, signature_help};
pub use figures::{
    CodeLens, HintConfig, InlayHint, LineFigures, ScenarioRef, active_scenario, code_lenses, inlay_hints,
    line_figures_at,
};
pub use highlight::{Fold, FoldKind, SemanticClass, SemanticToken, folding_ranges, semantic_tokens};
pub use resolve::{Occurrence, Symbol, occurrences};
pub use symbols::{DocumentSymbol, SymbolKind, WorkspaceSymbol, document_symbols, workspace_symbols};

/// A place in a file: a definition, a reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NavTarget {
    /// The file.
    pub file: FileName,
    /// The whole thing (an item, a parameter, a statement).
    pub full_range: TextRange,
    /// The part to select: the name.
    pub focus_range: TextRange,
}

/// What a hover shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hover {
    /// The range hovered (the name, or the statement).
    pub range: TextRange,
    /// Markdown.
    pub markdown: String,
}

/// The diagnostics of a file, with byte ranges: what `netc check` reports for it.
pub fn diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    file_diagnostics(db, file).clone()
}

/// The formatted text of a file, or why it cannot be formatted.
pub fn formatted(db: &dyn Db, file: SourceFile) -> Result<String, FormatError> {
    format(file.name(db), file.text(db))
}

/// The offset clamped to the text and moved back to a character boundary.
pub fn clamp_offset(text: &str, offset: u32) -> u32 {
    let mut o = (offset as usize).min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o as u32
}

/// The source text of an item's header: `block basic(x, planes: int, stride: int = 1)`,
/// `op conv2d(...) -> tensor`; whitespace runs and line breaks collapsed to one space.
pub fn item_header(db: &dyn Db, file: SourceFile, index: u32) -> Option<String> {
    let parse = parse_file(db, file);
    let item = parse.tree.get(index as usize)?;
    let spans = parse.spans.get(index as usize)?;
    let range = spans.whole();
    let end = match item {
        Item::Block(c) | Item::Model(c) if !c.broken => spans.range(c.body.id).start,
        Item::Scenario(s) => spans.range(s.name.id).end,
        _ => range.end,
    };
    let text = file.text(db).get(range.start as usize..(end as usize).max(range.start as usize))?;
    // Drop comments that the header may contain (parameter lists can span lines).
    let code: Vec<&str> =
        crate::diagnostics::lines(text).map(|l| strip_comment(l).trim()).filter(|l| !l.is_empty()).collect();
    let joined = code.join(" ").replace("( ", "(").replace(" )", ")").replace(",)", ")");
    Some(joined.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A line without its `#` comment (a `#` inside a string does not start one).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            '\\' if in_string && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

/// The `##` documentation of an item.
pub fn item_doc(db: &dyn Db, file: SourceFile, index: u32) -> Option<String> {
    parse_file(db, file).spans.get(index as usize)?.doc.clone()
}

/// Where an item is defined: the item and its name.
pub fn item_target(db: &dyn Db, name: &FileName, index: u32) -> Option<NavTarget> {
    let file = lookup_file(db, name)?;
    let parse = parse_file(db, file);
    let spans = parse.spans.get(index as usize)?;
    let item = parse.tree.get(index as usize)?;
    let full = spans.whole();
    let focus = item.name().map_or(full, |n| spans.range(n.id));
    Some(NavTarget { file: name.clone(), full_range: full, focus_range: focus })
}

/// Go to definition: where the name at `offset` is defined (an item, a parameter, a
/// variable's first assignment before the use, an imported file).
pub fn goto_definition(db: &dyn Db, file: SourceFile, offset: u32) -> Vec<NavTarget> {
    let occurrences = occurrences(db, file);
    let Some(at) = resolve::occurrence_at(occurrences, offset) else { return Vec::new() };
    resolve::definition(db, file, occurrences, at).into_iter().collect()
}

/// Find references: every occurrence of what the name at `offset` refers to, in every file
/// of the workspace; the definition too if `include_declaration`.
pub fn references(db: &dyn Db, file: SourceFile, offset: u32, include_declaration: bool) -> Vec<NavTarget> {
    let occurrences = occurrences(db, file);
    let Some(at) = resolve::occurrence_at(occurrences, offset) else { return Vec::new() };
    resolve::references(db, file, &occurrences[at].symbol, include_declaration)
}

/// Hover: what the name under the cursor is (signature and `##` documentation, a setting's
/// meaning) and the figures of the statement's line in the active scenario.
pub fn hover(db: &dyn Db, file: SourceFile, offset: u32, chosen: Option<&ScenarioRef>) -> Option<Hover> {
    let occurrences = occurrences(db, file);
    let at = resolve::occurrence_at(occurrences, offset);
    let mut parts: Vec<String> = Vec::new();
    let mut range = None;
    if let Some(at) = at {
        let occ = &occurrences[at];
        range = Some(occ.range);
        if let Some(text) = describe(db, file, &occ.symbol, &occ.text) {
            parts.push(text);
        }
    }
    if let Some((stmt_range, figures)) = line_figures_at(db, file, offset, chosen) {
        range.get_or_insert(stmt_range);
        parts.push(figures.markdown());
    }
    if parts.is_empty() {
        return None;
    }
    Some(Hover { range: range.expect("set with the parts"), markdown: parts.join("\n\n---\n\n") })
}

/// The hover text of a symbol.
fn describe(db: &dyn Db, file: SourceFile, symbol: &Symbol, text: &str) -> Option<String> {
    let code = |s: &str| format!("```net\n{s}\n```");
    match symbol {
        Symbol::Item { file: def_file, item } => {
            let f = lookup_file(db, def_file)?;
            let header = item_header(db, f, *item)?;
            let mut out = code(&header);
            if let Some(doc) = item_doc(db, f, *item) {
                out.push_str("\n\n");
                out.push_str(&doc);
            }
            if let Some(Item::Scenario(_)) = syntax_tree(db, f).get(*item as usize) {
                let scenario = ScenarioRef { file: def_file.clone(), name: text.to_string() };
                if let Some(summary) = figures::scenario_summary(db, &scenario) {
                    out.push_str("\n\n");
                    out.push_str(&summary);
                }
            }
            let from = if def_file != file.name(db) { format!("\n\n*defined in `{def_file}`*") } else { String::new() };
            out.push_str(&from);
            Some(out)
        }
        Symbol::Param { file: def_file, item, name } => {
            let f = lookup_file(db, def_file)?;
            let (decl, _) = resolve::param_decl(db, f, *item, name)?;
            let callee = syntax_tree(db, f).get(*item as usize)?.name()?.text.clone();
            Some(format!("{}\n\nparameter of `{callee}`", code(&decl)))
        }
        Symbol::Local { kind, .. } => Some(format!("{} `{text}`", kind.describe())),
        Symbol::Builtin(builtin) => {
            Some(format!("{}\n\nbuilt-in function\n\n{}", code(builtin.signature()), builtin.doc()))
        }
        Symbol::Setting(key) => {
            let spec = setting(key)?;
            let only = spec.only.map(|k| format!(" (`{k}` scenarios only)")).unwrap_or_default();
            Some(format!("scenario setting `{key}`{only}\n\n{}", spec.doc))
        }
        Symbol::SettingValue { key, value } => Some(format!("`{value}`: a value of the `{key}` setting")),
        Symbol::File(name) => Some(format!("file `{name}`")),
        Symbol::Dim(name) => Some(format!("dimension `{name}`")),
        Symbol::Field(name) => Some(match name.as_str() {
            "shape" => "`shape`: the dimensions of a tensor, a list of integers".to_string(),
            "ndim" => "`ndim`: the number of dimensions of a tensor".to_string(),
            other => format!("field `{other}`"),
        }),
        Symbol::Unit(unit) => {
            let bytes = crate::semantics::sizes::unit_bytes(unit)?;
            Some(format!("unit `{unit}`: {} bytes", crate::report::thousands(bytes as i128)))
        }
    }
}
