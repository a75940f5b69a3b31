//! Semantic tokens (what each word is, for colouring) and folding ranges.
//!
//! Both come from the lexer's tokens and comments; names are classified by what they refer
//! to ([`super::resolve::occurrences`]), so an op, a block, a local and a setting key look
//! different even where the grammar cannot tell them apart.

use std::collections::HashMap;

use crate::db::SourceFile;
use crate::diagnostics::TextRange;
use crate::elaborate::Db;
use crate::semantics::check::DTYPES;
use crate::semantics::kinds::ValueKind;
use crate::semantics::scope::DefKind;
use crate::syntax::lexer::{TokenKind, lex};
use crate::syntax::{CONTEXTUAL_KEYWORDS, KEYWORDS};

use super::resolve::{LocalKind, Symbol, is_stdlib, item_kind, occurrences};
use crate::report::{line_of, line_starts};

/// The class of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SemanticClass {
    /// A language keyword.
    Keyword,
    /// An op.
    Op,
    /// A block.
    Block,
    /// A model.
    Model,
    /// A scenario.
    Scenario,
    /// A local variable, input or dimension.
    Variable,
    /// A parameter (in its item, or named by a keyword argument).
    Parameter,
    /// A scenario setting key, or a field (`shape`).
    Property,
    /// A setting's named value (`t4`, `adam`), or a unit.
    EnumMember,
    /// A type or dtype.
    Type,
    /// A number.
    Number,
    /// A string.
    String,
    /// A comment.
    Comment,
    /// An operator.
    Operator,
    /// A file or module named by `use`.
    Namespace,
}

/// One classified token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemanticToken {
    /// Its bytes (never more than one line).
    pub range: TextRange,
    /// What it is.
    pub class: SemanticClass,
    /// It defines the name.
    pub declaration: bool,
    /// It names something of the standard library.
    pub default_library: bool,
    /// A `##` documentation comment.
    pub documentation: bool,
}

/// The semantic tokens of a file, in order. A query: the language server asks again for
/// the same text (a full request and a range request, a refresh), and the answer of a large
/// file is worth keeping. Linear in the file: tokens and occurrences are both in source order
/// and are walked together.
#[salsa::tracked(returns(ref))]
pub fn semantic_tokens(db: &dyn Db, file: SourceFile) -> Vec<SemanticToken> {
    let text = file.text(db);
    let lexed = lex(file.name(db), text);
    let occurrences = occurrences(db, file);
    let by_start: HashMap<u32, usize> = occurrences.iter().enumerate().map(|(i, o)| (o.range.start, i)).collect();
    // A module path `std.nn` is one occurrence over several tokens: the ranges of the
    // modules named by `use`, in order (they do not overlap), walked with the tokens.
    let modules: Vec<TextRange> =
        occurrences.iter().filter(|o| matches!(o.symbol, Symbol::File(_))).map(|o| o.range).collect();
    let mut next_module = 0;
    let mut out = Vec::with_capacity(lexed.tokens.len() + lexed.comments.len());
    let token =
        |range, class| SemanticToken { range, class, declaration: false, default_library: false, documentation: false };
    for t in &lexed.tokens {
        let word = &text[t.range.to_range()];
        let class = match t.kind {
            TokenKind::Int | TokenKind::Float => Some(SemanticClass::Number),
            TokenKind::Str => Some(SemanticClass::String),
            TokenKind::Ident => {
                while modules.get(next_module).is_some_and(|m| m.end <= t.range.start) {
                    next_module += 1;
                }
                let inside_use =
                    modules.get(next_module).is_some_and(|m| m.start <= t.range.start && t.range.end <= m.end);
                if inside_use {
                    Some(SemanticClass::Namespace)
                } else if let Some(&i) = by_start.get(&t.range.start) {
                    let o = &occurrences[i];
                    let mut tok = token(t.range, classify(db, &o.symbol));
                    tok.declaration = o.def;
                    tok.default_library = matches!(&o.symbol, Symbol::Item { file, .. } if is_stdlib(db, file));
                    out.push(tok);
                    None
                } else if KEYWORDS.contains(&word) || CONTEXTUAL_KEYWORDS.contains(&word) {
                    // A contextual keyword that is no name's occurrence is the keyword.
                    Some(SemanticClass::Keyword)
                } else if ValueKind::TYPE_NAMES.contains(&word) || DTYPES.contains(&word) || word == "tensors" {
                    Some(SemanticClass::Type)
                } else {
                    None
                }
            }
            TokenKind::Arrow
            | TokenKind::EqEq
            | TokenKind::NotEq
            | TokenKind::Lt
            | TokenKind::Le
            | TokenKind::Gt
            | TokenKind::Ge
            | TokenKind::Plus
            | TokenKind::Minus
            | TokenKind::Star
            | TokenKind::StarStar
            | TokenKind::Slash
            | TokenKind::SlashSlash
            | TokenKind::DotDot
            | TokenKind::Percent
            | TokenKind::At => Some(SemanticClass::Operator),
            _ => None,
        };
        if let Some(class) = class {
            out.push(token(t.range, class));
        }
    }
    for c in &lexed.comments {
        let mut tok = token(c.range, SemanticClass::Comment);
        tok.documentation = c.doc;
        out.push(tok);
    }
    out.sort_by_key(|t| t.range.start);
    out
}

fn classify(db: &dyn Db, symbol: &Symbol) -> SemanticClass {
    match symbol {
        Symbol::Item { .. } => match item_kind(db, symbol) {
            Some(DefKind::Op) => SemanticClass::Op,
            Some(DefKind::Block) => SemanticClass::Block,
            Some(DefKind::Model) => SemanticClass::Model,
            _ => SemanticClass::Scenario,
        },
        Symbol::Param { .. } | Symbol::Local { kind: LocalKind::Param, .. } => SemanticClass::Parameter,
        Symbol::Local { .. } | Symbol::Dim(_) => SemanticClass::Variable,
        Symbol::Builtin(_) => SemanticClass::Op,
        Symbol::Setting(_) | Symbol::Field(_) => SemanticClass::Property,
        Symbol::SettingValue { .. } | Symbol::Unit(_) => SemanticClass::EnumMember,
        Symbol::File(_) => SemanticClass::Namespace,
    }
}

/// What a folding range folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    /// A body, a scenario, a list of arguments.
    Region,
    /// A run of comment lines.
    Comment,
    /// A run of `use` lines.
    Imports,
}

/// A folding range, in 0-based lines: `end_line` is the last line folded away (a closing
/// brace on its own line stays visible).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// What it folds.
    pub kind: FoldKind,
}

/// The folding ranges of a file.
pub fn folding_ranges(db: &dyn Db, file: SourceFile) -> Vec<Fold> {
    let text = file.text(db);
    let lexed = lex(file.name(db), text);
    let starts = line_starts(db, file);
    let line = |offset: u32| line_of(starts, offset) - 1;
    let mut out = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    for t in &lexed.tokens {
        match t.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => stack.push(t.range.start),
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                if let Some(open) = stack.pop() {
                    let (a, b) = (line(open), line(t.range.start));
                    if b > a + 1 || (b == a + 1 && !closer_starts_line(text, t.range.start)) {
                        let end = if closer_starts_line(text, t.range.start) { b - 1 } else { b };
                        out.push(Fold { start_line: a, end_line: end, kind: FoldKind::Region });
                    }
                }
            }
            _ => {}
        }
    }
    // Runs of whole-line comments and of `use` lines.
    let mut runs = |lines: Vec<u32>, kind: FoldKind| {
        let mut i = 0;
        while i < lines.len() {
            let mut j = i;
            while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
                j += 1;
            }
            if j > i {
                out.push(Fold { start_line: lines[i], end_line: lines[j], kind });
            }
            i = j + 1;
        }
    };
    let comment_lines: Vec<u32> = lexed.comments.iter().filter(|c| !c.trailing).map(|c| line(c.range.start)).collect();
    runs(comment_lines, FoldKind::Comment);
    let use_lines: Vec<u32> = lexed
        .tokens
        .iter()
        .filter(|t| t.kind == TokenKind::Ident && &text[t.range.to_range()] == "use")
        .map(|t| line(t.range.start))
        .collect();
    runs(use_lines, FoldKind::Imports);
    out.sort_by_key(|f| (f.start_line, f.end_line));
    out.dedup();
    out
}

/// Whether only whitespace precedes `offset` on its line.
fn closer_starts_line(text: &str, offset: u32) -> bool {
    let offset = offset as usize;
    text[crate::diagnostics::line_start(text, offset)..offset].trim().is_empty()
}
