//! The parser: tokens to a [`SourceTree`], by hand-written recursive descent over the token
//! slice (precedence climbing for expressions).
//!
//! It never fails and never panics. A syntax error is recorded and the parser resumes at the
//! next statement (inside a body), the next setting (inside a scenario) or the next item (at
//! the top level), so one typo gives one error and the rest of the file is still analyzed.
//! Nesting is bounded by [`MAX_NESTING`]: deeper input is a diagnostic, not a stack overflow.
//!
//! Newlines end statements, except inside `(...)` and `[...]`, where the token primitives
//! skip them (the bracket depth lives in `Ctx`, which travels with the input).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::ast::*;
use super::lexer::{Comment, Token, TokenKind, string_value};
use super::settings::{SettingForm, setting};
use crate::diagnostics::{Code, Diagnostic, FileName, Place, TextRange};

mod expr;
mod item;
mod scenario;
mod steps;
mod stmt;

use self::expr::*;
use self::item::*;
use self::scenario::*;
use self::steps::*;
pub(crate) use self::steps::{Step, StmtReuse, assemble, attach_docs, steps_from};
use self::stmt::*;

/// How deeply brackets, calls, unary operators and bodies may nest.
pub const MAX_NESTING: u32 = 64;

/// How deep an expression tree may be, counting each operator of a chain such as
/// `a + b + c` as one level. Later passes recurse over trees, so this bounds their stack.
pub const MAX_TREE_DEPTH: u32 = 256;

/// Words that cannot be used as names.
///
/// `input` is not one of them: it starts an input statement only where a name and `:` follow
/// (`input x: f32[N, 8]`); anywhere else it is a name, as Python's `forward(self, input)`
/// uses it.
pub const KEYWORDS: &[&str] = &[
    "use", "op", "block", "model", "train", "infer", "return", "if", "else", "for", "in", "repeat", "true", "false",
    "and", "or", "not",
];

/// Words that start a statement where the grammar expects one (`input x: f32[N, 8]`) and are
/// names everywhere else: editors colour them as keywords where they are not a name's use.
pub const CONTEXTUAL_KEYWORDS: &[&str] = &["input", "buffer"];

/// Words that start a top-level item.
const ITEM_KEYWORDS: &[&str] = &["use", "op", "block", "model", "train", "infer"];

/// The result of parsing a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parse {
    /// The tree, without positions.
    pub tree: SourceTree,
    /// The positions of each item's nodes, parallel to `tree.items`.
    pub spans: Vec<ItemSpans>,
    /// The comments.
    pub comments: Vec<Comment>,
    /// Lexical and syntax errors, in source order.
    pub errors: Vec<Diagnostic>,
}

/// Parses `text`. Never fails: errors are in [`Parse::errors`].
pub fn parse(file: &FileName, text: &str) -> Parse {
    super::incremental::ParseState::new(file, text).into_parse()
}

/// Parsing state shared by all parsers of one file.
struct Ctx<'a> {
    file: &'a FileName,
    text: &'a str,
    all: &'a [Token],
    /// Ranges of the current item's nodes.
    nodes: RefCell<Vec<TextRange>>,
    /// Open `(` and `[`: newlines are skipped while this is positive.
    brackets: Cell<u32>,
    /// Current nesting depth of expressions and bodies.
    nesting: Cell<u32>,
    /// Current depth of the expression tree being built (nesting plus operator chains).
    tree_depth: Cell<u32>,
    /// Inside scenario settings: a number followed by any word is a size.
    in_settings: Cell<bool>,
    /// Errors that do not stop the parse (such as a too large literal).
    errors: RefCell<Vec<Diagnostic>>,
    /// The lowest and highest token index read since the current top-level step began:
    /// what a step's result depends on, so that a reparse knows which steps it may reuse.
    read: Cell<(usize, usize)>,
    /// The statements of the current item's body parsed so far ([`Step::stmts`]).
    marks: RefCell<Vec<StmtMark>>,
    /// The previous parse's statements a reparse may reuse, and how many the current step
    /// reused.
    reuse: Option<&'a StmtReuse<'a>>,
    reused: Cell<usize>,
}

impl<'a> Ctx<'a> {
    fn node(&self, range: TextRange) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(range);
        NodeId(nodes.len() as u32 - 1)
    }

    fn set_range(&self, id: NodeId, range: TextRange) {
        if let Some(slot) = self.nodes.borrow_mut().get_mut(id.0 as usize) {
            *slot = range;
        }
    }

    fn text_of(&self, tok: &Token) -> &str {
        &self.text[tok.range.to_range()]
    }

    fn report(&self, diagnostic: Diagnostic) {
        self.errors.borrow_mut().push(diagnostic);
    }

    fn index_of(&self, i: In<'_>) -> usize {
        self.all.len() - i.toks.len()
    }

    /// Records that the tokens `from..=to` were read.
    fn saw(&self, from: usize, to: usize) {
        let (low, high) = self.read.get();
        self.read.set((low.min(from), high.max(to)));
    }

    /// The token at `idx`, recorded as read. Every token the parser looks at goes through
    /// this or [`In::get`].
    fn tok(&self, idx: usize) -> &'a Token {
        self.saw(idx, idx);
        &self.all[idx]
    }

    /// Whether the token at `idx` is the first on its line.
    fn starts_line(&self, idx: usize) -> bool {
        idx == 0 || self.tok(idx - 1).kind == TokenKind::Newline
    }

    fn is_item_keyword_at(&self, idx: usize) -> bool {
        let tok = self.tok(idx);
        tok.kind == TokenKind::Ident && ITEM_KEYWORDS.contains(&self.text_of(tok)) && self.starts_line(idx)
    }
}

/// The parser input: the remaining tokens and the shared state.
#[derive(Clone, Copy)]
struct In<'a> {
    toks: &'a [Token],
    cx: &'a Ctx<'a>,
}

impl<'a> In<'a> {
    /// The `k`th remaining token, recorded as read.
    fn get(self, k: usize) -> Option<&'a Token> {
        let tok = self.toks.get(k)?;
        let at = self.cx.index_of(self) + k;
        self.cx.saw(at, at);
        Some(tok)
    }

    /// Skips newlines, inside brackets or not.
    fn skip_all_newlines(self) -> Self {
        let skip = self.toks.iter().take_while(|t| t.kind == TokenKind::Newline).count();
        // The newlines and the token after them were read.
        let at = self.cx.index_of(self);
        self.cx.saw(at, (at + skip).min(self.cx.all.len().saturating_sub(1)));
        In { toks: &self.toks[skip..], cx: self.cx }
    }

    /// Skips newlines if inside brackets.
    fn skip_newlines(self) -> Self {
        if self.cx.brackets.get() == 0 {
            return self;
        }
        self.skip_all_newlines()
    }

    /// The next significant token (the `Eof` token at the end).
    fn peek(self) -> &'a Token {
        let i = self.skip_newlines();
        i.get(0).unwrap_or_else(|| self.cx.tok(self.cx.all.len() - 1))
    }

    /// The token after the next one, without skipping newlines in between.
    fn peek2(self) -> Option<&'a Token> {
        self.skip_newlines().get(1)
    }

    fn peek_is(self, kind: TokenKind) -> bool {
        self.peek().kind == kind
    }

    fn peek_word(self, word: &str) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Ident && self.cx.text_of(t) == word
    }

    /// Consumes the next significant token (never `Eof`).
    fn bump(self) -> (Self, &'a Token) {
        let i = self.skip_newlines();
        let tok = self.peek();
        if tok.kind == TokenKind::Eof { (i, tok) } else { (In { toks: &i.toks[1..], cx: self.cx }, tok) }
    }

    /// The range from the first significant token of `self` to the last token consumed
    /// before `end`.
    fn range_to(self, end: In<'a>) -> TextRange {
        let start = self.peek().range.start;
        let end_idx = self.cx.index_of(end);
        let start_idx = self.cx.index_of(self.skip_newlines());
        if end_idx <= start_idx {
            return TextRange::empty(start);
        }
        TextRange::new(start, self.cx.tok(end_idx - 1).range.end)
    }
}

/// A parse error at a token: what was expected there, or a ready diagnostic.
#[derive(Debug)]
struct PErr {
    /// Tokens remaining at the error: fewer means further into the file.
    remaining: usize,
    expected: Vec<&'static str>,
    custom: Option<Box<Diagnostic>>,
    /// The error token starts what follows an unclosed list: resume parsing right there.
    resume: bool,
}

/// How a grammar rule failed. `Error`: the rule did not match, and the caller may try
/// another; `Failure`: the rule was committed (its first tokens matched), so the error stands
/// (nom's `cut`).
#[derive(Debug)]
enum Fail {
    /// No match: an alternative may be tried.
    Error(PErr),
    /// A committed rule failed.
    Failure(PErr),
}

impl Fail {
    /// The same failure with its error changed by `f`.
    fn map(self, f: impl FnOnce(PErr) -> PErr) -> Fail {
        match self {
            Fail::Error(e) => Fail::Error(f(e)),
            Fail::Failure(e) => Fail::Failure(f(e)),
        }
    }
}

/// A rule's result: the input after what it read, and what it made.
type PResult<'a, O> = Result<(In<'a>, O), Fail>;

fn expected<'a, O>(i: In<'a>, what: &'static str) -> PResult<'a, O> {
    Err(Fail::Error(PErr {
        remaining: i.skip_newlines().toks.len(),
        expected: vec![what],
        custom: None,
        resume: false,
    }))
}

/// Like [`expected`], but commits: no alternative is tried.
fn fail<'a, O>(i: In<'a>, what: &'static str) -> PResult<'a, O> {
    Err(Fail::Failure(PErr {
        remaining: i.skip_newlines().toks.len(),
        expected: vec![what],
        custom: None,
        resume: false,
    }))
}

fn fail_with<'a, O>(i: In<'a>, diagnostic: Diagnostic) -> PResult<'a, O> {
    Err(Fail::Failure(PErr {
        remaining: i.skip_newlines().toks.len(),
        expected: Vec::new(),
        custom: Some(Box::new(diagnostic)),
        resume: false,
    }))
}

/// Turns an error into a failure, so that enclosing alternatives are not tried.
fn cut<'a, O>(r: PResult<'a, O>) -> PResult<'a, O> {
    r.map_err(|e| match e {
        Fail::Error(e) => Fail::Failure(e),
        other => other,
    })
}

/// Describes a token for "found ..." in messages.
fn describe(cx: &Ctx<'_>, tok: &Token) -> String {
    match tok.kind {
        TokenKind::Ident => {
            let text = cx.text_of(tok);
            if KEYWORDS.contains(&text) { format!("keyword `{text}`") } else { format!("`{text}`") }
        }
        TokenKind::Int | TokenKind::Float | TokenKind::Str => {
            let text: String = cx.text_of(tok).chars().take(24).collect();
            format!("`{text}`")
        }
        other => other.describe().to_string(),
    }
}

fn join_expected(expected: &[&str]) -> String {
    match expected {
        [] => "something else".to_string(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

impl PErr {
    fn into_diagnostic(self, cx: &Ctx<'_>) -> Diagnostic {
        if let Some(d) = self.custom {
            return *d;
        }
        let idx = cx.all.len().saturating_sub(self.remaining).min(cx.all.len() - 1);
        let tok = cx.tok(idx);
        let found = describe(cx, tok);
        Diagnostic::new(
            Code::UnexpectedToken,
            format!("expected {}, found {found}", join_expected(&self.expected)),
            cx.file,
            Place::Range(tok.range),
        )
        .with_primary_message(format!("expected {}", join_expected(&self.expected)))
    }

    fn index(&self, cx: &Ctx<'_>) -> usize {
        cx.all.len().saturating_sub(self.remaining)
    }
}

// ---------------------------------------------------------------------------------------
// Primitives

fn token<'a>(kind: TokenKind) -> impl Fn(In<'a>) -> PResult<'a, &'a Token> {
    move |i: In<'a>| {
        if i.peek_is(kind) { Ok(i.bump()) } else { expected(i, kind.describe()) }
    }
}

fn keyword<'a>(word: &'static str) -> impl Fn(In<'a>) -> PResult<'a, &'a Token> {
    move |i: In<'a>| {
        if i.peek_word(word) { Ok(i.bump()) } else { expected(i, word) }
    }
}

/// A name that is not a keyword.
fn name(i: In<'_>) -> PResult<'_, Name> {
    let tok = i.peek();
    if tok.kind == TokenKind::Ident && !KEYWORDS.contains(&i.cx.text_of(tok)) {
        let (rest, tok) = i.bump();
        let id = i.cx.node(tok.range);
        Ok((rest, Name { id, text: i.cx.text_of(tok).into() }))
    } else {
        expected(i, "a name")
    }
}

/// Any word, keywords included (scenario setting keys such as `model`).
fn word(i: In<'_>) -> PResult<'_, Name> {
    let tok = i.peek();
    if tok.kind == TokenKind::Ident {
        let (rest, tok) = i.bump();
        let id = i.cx.node(tok.range);
        Ok((rest, Name { id, text: i.cx.text_of(tok).into() }))
    } else {
        expected(i, "a name")
    }
}

fn too_deep<'a, O>(i: In<'a>, message: String) -> PResult<'a, O> {
    let tok = i.peek();
    fail_with(
        i,
        Diagnostic::new(Code::NestingTooDeep, message, i.cx.file, Place::Range(tok.range))
            .with_primary_message("too deeply nested")
            .with_help("split the expression into several statements"),
    )
}

/// Runs `f` one nesting level deeper, failing with E0106 past [`MAX_NESTING`].
fn nested<'a, O>(i: In<'a>, f: impl FnOnce(In<'a>) -> PResult<'a, O>) -> PResult<'a, O> {
    let cx = i.cx;
    let (depth, tree) = (cx.nesting.get(), cx.tree_depth.get());
    if depth >= MAX_NESTING {
        return too_deep(i, format!("nesting deeper than {MAX_NESTING} levels"));
    }
    if tree >= MAX_TREE_DEPTH {
        return too_deep(i, format!("expression deeper than {MAX_TREE_DEPTH} levels"));
    }
    cx.nesting.set(depth + 1);
    cx.tree_depth.set(tree + 1);
    let result = crate::stack::grow(|| f(i));
    cx.nesting.set(depth);
    cx.tree_depth.set(tree);
    result
}

/// Whether a `close` bracket that would close the current list comes at or after token
/// `from`, before the enclosing body ends: if so, a separator is missing; if not, the list
/// was never closed.
fn closes_later(cx: &Ctx<'_>, from: usize, close: TokenKind) -> bool {
    let mut depth = 0i64;
    for (idx, tok) in cx.all.iter().enumerate().skip(from) {
        match tok.kind {
            TokenKind::LParen | TokenKind::LBracket => depth += 1,
            TokenKind::RParen | TokenKind::RBracket if depth > 0 => depth -= 1,
            kind if kind == close => return true,
            TokenKind::RParen | TokenKind::RBracket => return false,
            TokenKind::LBrace | TokenKind::RBrace | TokenKind::Eof => return false,
            // The next item starts: the list is not closed in this one (and nothing past
            // the item is read, so that reparsing the item alone gives the same answer).
            _ if cx.is_item_keyword_at(idx) => return false,
            _ => {}
        }
    }
    false
}

/// Parses a comma-separated list between `open` (already consumed, at `open_tok`) and
/// `close`, skipping newlines inside. A trailing comma is allowed.
fn delimited_list<'a, O>(
    i: In<'a>,
    open_tok: &'a Token,
    close: TokenKind,
    what: &'static str,
    mut item: impl FnMut(In<'a>) -> PResult<'a, O>,
) -> PResult<'a, Vec<O>> {
    let cx = i.cx;
    cx.brackets.set(cx.brackets.get() + 1);
    let result = (|| {
        let mut out = Vec::new();
        let mut i = i;
        loop {
            if i.peek_is(close) {
                let (rest, _) = i.bump();
                // Trees are kept for as long as the file is open: a list grown by doubling
                // holds up to twice its items (a 50 MB file's tree took gigabytes).
                out.shrink_to_fit();
                return Ok((rest, out));
            }
            let (rest, value) = cut(item(i).map_err(|e| {
                e.map(|mut e| {
                    if e.expected.is_empty() || e.remaining == i.skip_newlines().toks.len() {
                        e.expected = vec![what, close.describe()];
                        e.expected.dedup();
                    }
                    e
                })
            }))?;
            out.push(value);
            i = rest;
            if i.peek_is(TokenKind::Comma) {
                i = i.bump().0;
                continue;
            }
            if i.peek_is(close) {
                continue;
            }
            let found = i.peek();
            let msg = format!("expected `,` or {}, found {}", close.describe(), describe(cx, found));
            let unclosed = !closes_later(cx, cx.index_of(i.skip_newlines()), close);
            let mut d = Diagnostic::new(
                if unclosed { Code::UnclosedDelimiter } else { Code::UnexpectedToken },
                if unclosed { format!("unclosed {}", TokenKind::describe(open_tok.kind)) } else { msg },
                cx.file,
                Place::Range(if unclosed { open_tok.range } else { found.range }),
            );
            d = if unclosed {
                d.with_primary_message("opened here and never closed")
                    .with_help(format!("add {} at the end of the list", close.describe()))
            } else {
                d.with_primary_message(format!("expected `,` or {}", close.describe())).with_label(
                    cx.file,
                    Place::Range(open_tok.range),
                    "list opened here",
                )
            };
            return Err(Fail::Failure(PErr {
                remaining: i.skip_newlines().toks.len(),
                expected: Vec::new(),
                custom: Some(Box::new(d)),
                resume: unclosed,
            }));
        }
    })();
    cx.brackets.set(cx.brackets.get() - 1);
    result
}

// ---------------------------------------------------------------------------------------
// Expressions

// ---------------------------------------------------------------------------------------
// Types and parameters

// ---------------------------------------------------------------------------------------
// Statements and bodies

// ---------------------------------------------------------------------------------------
// Scenarios

// ---------------------------------------------------------------------------------------
// Items
