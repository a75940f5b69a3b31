//! The parser: tokens to a [`SourceTree`], with nom over a token slice.
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

use nom::error::{ErrorKind, ParseError};
use nom::{Err, IResult, Needed};

use super::ast::*;
use super::lexer::{Comment, Token, TokenKind, string_value};
use super::settings::{SettingForm, setting};
use crate::diagnostics::{Code, Diagnostic, FileName, Place, TextRange};

/// How deeply brackets, calls, unary operators and bodies may nest.
pub const MAX_NESTING: u32 = 64;

/// How deep an expression tree may be, counting each operator of a chain such as
/// `a + b + c` as one level. Later passes recurse over trees, so this bounds their stack.
pub const MAX_TREE_DEPTH: u32 = 256;

/// Words that cannot be used as names.
pub const KEYWORDS: &[&str] = &[
    "use", "op", "block", "model", "train", "infer", "input", "return", "if", "else", "repeat", "true", "false", "and",
    "or", "not",
];

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

/// One turn of the parser's top-level loop: blank lines and `;` skipped, then one item
/// parsed, or skipped after an error. A step starts from a clean state, so its result
/// depends only on the tokens it read (`low..=high`): a reparse after an edit
/// ([`super::incremental`]) reuses the steps whose tokens the edit did not touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    /// Token index where the step began (before the blank lines).
    pub start: usize,
    /// Token index where the next step begins.
    pub end: usize,
    /// The lowest token index the step read.
    pub low: usize,
    /// The highest token index the step read.
    pub high: usize,
    /// The item it produced, with its node positions (and its documentation once
    /// `documented`).
    pub item: Option<(Arc<Item>, ItemSpans)>,
    /// The syntax errors it reported, before the file-wide filtering of [`assemble`].
    pub errors: Vec<Diagnostic>,
    /// Whether [`attach_docs`] has attached the item's documentation: a reparse keeps it for
    /// the steps whose lines above did not change.
    pub documented: bool,
    /// The statements of the item's body that parsed without an error, in order, their
    /// token indices counted from `start` (so that moving the step leaves them as they are):
    /// a reparse of the item reuses those the edit did not reach ([`StmtReuse`]).
    pub stmts: Arc<[StmtMark]>,
    /// How many of those it took from a previous parse instead of parsing them.
    pub reused_stmts: usize,
}

/// A statement of an item's body as the parser read it: its tokens, what it read and its
/// nodes. Its tree depends on the tokens it read alone (every statement of an item's body
/// starts in the same parser state), so another parse that finds the same tokens there may
/// take it instead of parsing it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StmtMark {
    /// Token index of its first token.
    pub start: usize,
    /// Token index after it.
    pub end: usize,
    /// The lowest and highest token index it read.
    pub low: usize,
    pub high: usize,
    /// Its node ids, `first_node..end_node`.
    pub first_node: u32,
    pub end_node: u32,
    /// Its index among the body's statements.
    pub index: usize,
}

impl StmtMark {
    /// The same mark with its token indices moved by `tokens`.
    fn moved(&self, tokens: isize) -> StmtMark {
        let at = |index: usize| index.saturating_add_signed(tokens);
        StmtMark { start: at(self.start), end: at(self.end), low: at(self.low), high: at(self.high), ..self.clone() }
    }
}

/// What a reparse offers the parser: the previous parse of the item around the edit and how
/// the tokens moved. A statement of an item's body whose tokens are those of one of
/// `marks`, none of them edited, is taken from `item` (its node ids moved to follow the
/// statements before it) instead of parsed.
pub(crate) struct StmtReuse<'a> {
    /// The previous item, its node positions, and its statements with the token index they
    /// are counted from (the previous step's start).
    pub item: &'a Item,
    pub spans: &'a ItemSpans,
    pub marks: &'a [StmtMark],
    pub marks_from: usize,
    /// The first token lexed again (the same index before and after the edit) and the
    /// first token after the edited lines, before the edit and after it.
    pub first_changed: usize,
    pub old_after: usize,
    pub new_after: usize,
    /// How far the bytes after the edited lines moved.
    pub bytes: i64,
}

impl Step {
    /// The same step in a text where `bytes` bytes and `tokens` tokens were inserted (or
    /// removed, when negative) before it.
    pub(crate) fn shifted(&self, tokens: isize, bytes: i64) -> Step {
        let at = |index: usize| index.saturating_add_signed(tokens);
        Step {
            start: at(self.start),
            end: at(self.end),
            low: at(self.low),
            high: at(self.high),
            item: self.item.as_ref().map(|(item, spans)| (Arc::clone(item), spans.shifted(bytes))),
            errors: self.errors.iter().map(|d| d.clone().shifted(bytes)).collect(),
            documented: self.documented,
            stmts: Arc::clone(&self.stmts),
            reused_stmts: self.reused_stmts,
        }
    }
}

/// Parses `tokens` (the whole file's, ending with `Eof`) from token index `from`, one step
/// at a time, until the end of the file or until `known` says that the steps from the one
/// just parsed on are already known.
pub(crate) fn steps_from(
    file: &FileName,
    text: &str,
    tokens: &[Token],
    from: usize,
    reuse: Option<&StmtReuse<'_>>,
    mut known: impl FnMut(&Step) -> bool,
) -> Vec<Step> {
    let cx = Ctx {
        reuse,
        reused: Cell::new(0),
        marks: RefCell::new(Vec::new()),
        file,
        text,
        all: tokens,
        nodes: RefCell::new(Vec::new()),
        brackets: Cell::new(0),
        nesting: Cell::new(0),
        tree_depth: Cell::new(0),
        in_settings: Cell::new(false),
        errors: RefCell::new(Vec::new()),
        read: Cell::new((from, from)),
    };
    let mut steps = Vec::new();
    let mut at = from;
    while let Some(step) = self::step(&cx, at) {
        at = step.end;
        let done = known(&step);
        steps.push(step);
        if done {
            break;
        }
    }
    steps
}

/// The [`Parse`] of `text` from its lexer's errors and comments and all its steps (their
/// documentation attached, [`attach_docs`]): the errors filtered and sorted.
pub(crate) fn assemble(text: &str, lex_errors: &[Diagnostic], comments: Vec<Comment>, steps: &[Step]) -> Parse {
    let mut errors: Vec<Diagnostic> = lex_errors.to_vec();
    errors.extend(steps.iter().flat_map(|s| s.errors.iter().cloned()));
    let mut tree = SourceTree::default();
    let mut spans = Vec::new();
    for (item, item_spans) in steps.iter().filter_map(|s| s.item.as_ref()) {
        tree.items.push(Arc::clone(item));
        spans.push(item_spans.clone());
    }
    // An unterminated string swallows the rest of its line, brackets included: the parse
    // errors that follow on that line and the next are consequences, not news.
    let string_lines: Vec<(u32, u32)> = errors
        .iter()
        .filter(|d| d.code == Code::UnterminatedString)
        .filter_map(|d| match d.primary().place {
            Place::Range(r) => Some((line_start(text, r.start), line_end(text, line_end(text, r.start) + 1))),
            Place::Node(_) => None,
        })
        .collect();
    errors.retain(|d| {
        let consequence = matches!(d.code, Code::UnexpectedToken | Code::UnclosedDelimiter);
        let at = match d.primary().place {
            Place::Range(r) => r.start,
            Place::Node(_) => return true,
        };
        !(consequence && string_lines.iter().any(|(s, e)| (*s..=*e).contains(&at)))
    });
    errors.sort_by_key(|d| match d.primary().place {
        Place::Range(r) => r.start,
        Place::Node(_) => 0,
    });
    errors.dedup();
    Parse { tree, spans, comments, errors }
}

fn line_start(text: &str, offset: u32) -> u32 {
    let offset = (offset as usize).min(text.len());
    text.as_bytes()[..offset].iter().rposition(|&b| b == b'\n').map_or(0, |p| p as u32 + 1)
}

fn line_end(text: &str, offset: u32) -> u32 {
    let offset = (offset as usize).min(text.len());
    text.as_bytes()[offset..].iter().position(|&b| b == b'\n').map_or(text.len(), |p| offset + p) as u32
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

impl<'a> nom::Input for In<'a> {
    type Item = &'a Token;
    type Iter = std::slice::Iter<'a, Token>;
    type IterIndices = std::iter::Enumerate<std::slice::Iter<'a, Token>>;

    fn input_len(&self) -> usize {
        self.toks.len()
    }
    fn take(&self, index: usize) -> Self {
        In { toks: &self.toks[..index], cx: self.cx }
    }
    fn take_from(&self, index: usize) -> Self {
        In { toks: &self.toks[index..], cx: self.cx }
    }
    fn take_split(&self, index: usize) -> (Self, Self) {
        (self.take_from(index), self.take(index))
    }
    // nom's own combinators may scan the rest of the input: record all of it as read.
    fn position<P: Fn(Self::Item) -> bool>(&self, predicate: P) -> Option<usize> {
        self.saw_rest();
        self.toks.iter().position(predicate)
    }
    fn iter_elements(&self) -> Self::Iter {
        self.saw_rest();
        self.toks.iter()
    }
    fn iter_indices(&self) -> Self::IterIndices {
        self.saw_rest();
        self.toks.iter().enumerate()
    }
    fn slice_index(&self, count: usize) -> Result<usize, Needed> {
        if self.toks.len() >= count { Ok(count) } else { Err(Needed::new(count - self.toks.len())) }
    }
}

impl<'a> In<'a> {
    /// Records every remaining token as read.
    fn saw_rest(&self) {
        let at = self.cx.index_of(*self);
        self.cx.saw(at, self.cx.all.len().saturating_sub(1).max(at));
    }

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

impl<'a> ParseError<In<'a>> for PErr {
    fn from_error_kind(input: In<'a>, _kind: ErrorKind) -> Self {
        PErr { remaining: input.skip_newlines().toks.len(), expected: Vec::new(), custom: None, resume: false }
    }
    fn append(_input: In<'a>, _kind: ErrorKind, other: Self) -> Self {
        other
    }
    fn or(mut self, other: Self) -> Self {
        use std::cmp::Ordering::*;
        match self.remaining.cmp(&other.remaining) {
            Less => self,
            Greater => other,
            Equal => {
                for e in other.expected {
                    if !self.expected.contains(&e) {
                        self.expected.push(e);
                    }
                }
                self
            }
        }
    }
}

type PResult<'a, O> = IResult<In<'a>, O, PErr>;

fn expected<'a, O>(i: In<'a>, what: &'static str) -> PResult<'a, O> {
    Err(Err::Error(PErr { remaining: i.skip_newlines().toks.len(), expected: vec![what], custom: None, resume: false }))
}

/// Like [`expected`], but commits: no alternative is tried.
fn fail<'a, O>(i: In<'a>, what: &'static str) -> PResult<'a, O> {
    Err(Err::Failure(PErr {
        remaining: i.skip_newlines().toks.len(),
        expected: vec![what],
        custom: None,
        resume: false,
    }))
}

fn fail_with<'a, O>(i: In<'a>, diagnostic: Diagnostic) -> PResult<'a, O> {
    Err(Err::Failure(PErr {
        remaining: i.skip_newlines().toks.len(),
        expected: Vec::new(),
        custom: Some(Box::new(diagnostic)),
        resume: false,
    }))
}

/// Turns an error into a failure, so that enclosing alternatives are not tried.
fn cut<'a, O>(r: PResult<'a, O>) -> PResult<'a, O> {
    r.map_err(|e| match e {
        Err::Error(e) => Err::Failure(e),
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
        Ok((rest, Name { id, text: i.cx.text_of(tok).to_string() }))
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
        Ok((rest, Name { id, text: i.cx.text_of(tok).to_string() }))
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
    let result = f(i);
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
            _ if idx > from && cx.is_item_keyword_at(idx) => return false,
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
            return Err(Err::Failure(PErr {
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

/// An expression.
fn expr(i: In<'_>) -> PResult<'_, Expr> {
    nested(i, |i| binary(i, 0))
}

/// The binary operator at the next token, with its level (see [`binary`]).
fn binary_op_at(i: In<'_>) -> Option<(BinaryOp, u8)> {
    let tok = i.peek();
    use BinaryOp::*;
    Some(match tok.kind {
        TokenKind::Ident => match i.cx.text_of(tok) {
            "or" => (Or, 0),
            "and" => (And, 1),
            _ => return None,
        },
        TokenKind::EqEq => (Eq, 3),
        TokenKind::NotEq => (Ne, 3),
        TokenKind::Lt => (Lt, 3),
        TokenKind::Le => (Le, 3),
        TokenKind::Gt => (Gt, 3),
        TokenKind::Ge => (Ge, 3),
        TokenKind::Plus => (Add, 4),
        TokenKind::Minus => (Sub, 4),
        TokenKind::Star => (Mul, 5),
        TokenKind::Slash => (Div, 5),
        TokenKind::Percent => (Rem, 5),
        TokenKind::At => (MatMul, 5),
        _ => return None,
    })
}

/// An expression whose operators are all of level `level` or higher: 0 `or`, 1 `and`, 2
/// `not`, 3 comparisons, 4 `+ -`, 5 `* / % @`, 6 unary `-`, then postfix and primary
/// expressions. Binary operators are left-associative.
///
/// Precedence climbing: the operand is parsed once, then each operator of a high enough
/// level takes the operand and the expression of higher level after it, so that an
/// expression without operators costs one look at the next token, not one per level. Each
/// operator of a chain of one level makes the tree one level deeper (a lower level's chain
/// starts again from the depth the expression began at).
fn binary(i: In<'_>, level: u8) -> PResult<'_, Expr> {
    let cx = i.cx;
    let start = i;
    let (mut i, mut lhs) = if level <= 2 && i.peek_word("not") {
        unary(i, UnaryOp::Not, 2)?
    } else if i.peek_is(TokenKind::Minus) {
        unary(i, UnaryOp::Neg, 6)?
    } else {
        postfix(i)?
    };
    let entry = cx.tree_depth.get();
    let mut chain_level = u8::MAX;
    let result = loop {
        let Some((op, op_level)) = binary_op_at(i).filter(|&(_, l)| l >= level) else { break Ok((i, lhs)) };
        if op_level < chain_level {
            cx.tree_depth.set(entry);
            chain_level = op_level;
        }
        if cx.tree_depth.get() >= MAX_TREE_DEPTH {
            break too_deep(i, format!("expression deeper than {MAX_TREE_DEPTH} levels"));
        }
        cx.tree_depth.set(cx.tree_depth.get() + 1);
        let (rest, _) = i.bump();
        let (rest, rhs) = match cut(binary(rest, op_level + 1)) {
            Ok(ok) => ok,
            Err(e) => break Err(e),
        };
        let id = cx.node(start.range_to(rest));
        lhs = Expr { id, kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) } };
        i = rest;
    };
    cx.tree_depth.set(entry);
    result
}

fn unary(i: In<'_>, op: UnaryOp, level: u8) -> PResult<'_, Expr> {
    let (rest, _) = i.bump();
    let (rest, operand) = cut(nested(rest, |r| binary(r, level)))?;
    let id = i.cx.node(i.range_to(rest));
    Ok((rest, Expr { id, kind: ExprKind::Unary { op, operand: Box::new(operand) } }))
}

fn postfix(i: In<'_>) -> PResult<'_, Expr> {
    let saved = i.cx.tree_depth.get();
    let result = postfix_chain(i);
    i.cx.tree_depth.set(saved);
    result
}

/// A primary expression and its calls, fields and indexes; each one makes the tree deeper.
fn postfix_chain(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let start = i;
    let (mut i, mut e) = primary(i)?;
    loop {
        let tok = i.peek();
        if matches!(tok.kind, TokenKind::LParen | TokenKind::Dot | TokenKind::LBracket) {
            if cx.tree_depth.get() >= MAX_TREE_DEPTH {
                return too_deep(i, format!("expression deeper than {MAX_TREE_DEPTH} levels"));
            }
            cx.tree_depth.set(cx.tree_depth.get() + 1);
        }
        match tok.kind {
            TokenKind::LParen => {
                let ExprKind::Name(callee) = &e.kind else {
                    return fail_with(
                        i,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            "only a name can be called",
                            cx.file,
                            Place::Range(tok.range),
                        )
                        .with_primary_message("call of something that is not a name"),
                    );
                };
                let callee = callee.clone();
                let (rest, open) = i.bump();
                let (rest, args) = delimited_list(rest, open, TokenKind::RParen, "an argument", argument)?;
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Call { callee, args } };
                i = rest;
            }
            TokenKind::Dot => {
                let (rest, _) = i.bump();
                let (rest, field) = cut(name(rest))?;
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Field { base: Box::new(e), field } };
                i = rest;
            }
            TokenKind::LBracket => {
                let (rest, open) = i.bump();
                let (rest, mut index) = delimited_list(rest, open, TokenKind::RBracket, "an index", expr)?;
                if index.len() != 1 {
                    return fail_with(
                        rest,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            format!("expected one index, found {}", index.len()),
                            cx.file,
                            Place::Range(i.range_to(rest)),
                        )
                        .with_primary_message("index with exactly one value: `x.shape[1]`"),
                    );
                }
                let id = cx.node(start.range_to(rest));
                e = Expr { id, kind: ExprKind::Index { base: Box::new(e), index: Box::new(index.remove(0)) } };
                i = rest;
            }
            _ => return Ok((i, e)),
        }
    }
}

/// `value` or `keyword=value`.
fn argument(i: In<'_>) -> PResult<'_, Arg> {
    let cx = i.cx;
    let keyword_arg = i.peek().kind == TokenKind::Ident && i.peek2().is_some_and(|t| t.kind == TokenKind::Eq);
    if keyword_arg {
        let (rest, kw) = word(i)?;
        if KEYWORDS.contains(&kw.text.as_str()) {
            return expected(i, "an argument");
        }
        let (rest, _) = token(TokenKind::Eq)(rest)?;
        let (rest, value) = cut(expr(rest))?;
        let id = cx.node(i.range_to(rest));
        return Ok((rest, Arg { id, keyword: Some(kw), value }));
    }
    let (rest, value) = expr(i)?;
    let id = cx.node(i.range_to(rest));
    Ok((rest, Arg { id, keyword: None, value }))
}

fn parse_int(text: &str) -> Option<i64> {
    // Most literals have no `_`: parsed without a copy.
    if text.contains('_') { text.replace('_', "").parse().ok() } else { text.parse().ok() }
}

fn primary(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let tok = i.peek();
    match tok.kind {
        TokenKind::Int | TokenKind::Float => number_literal(i),
        TokenKind::Str => {
            let (rest, tok) = i.bump();
            let id = cx.node(tok.range);
            Ok((rest, Expr { id, kind: ExprKind::Str(string_value(cx.text_of(tok))) }))
        }
        TokenKind::Ident => {
            match cx.text_of(tok) {
                "true" | "false" => {
                    let (rest, tok) = i.bump();
                    let id = cx.node(tok.range);
                    Ok((rest, Expr { id, kind: ExprKind::Bool(cx.text_of(tok) == "true") }))
                }
                "repeat" => {
                    let (rest, _) = i.bump();
                    let (rest, count) = cut(nested(rest, postfix))?;
                    let (rest, call) = cut(nested(rest, postfix))?;
                    if !matches!(call.kind, ExprKind::Call { .. }) {
                        return fail_with(
                        rest,
                        Diagnostic::new(
                            Code::UnexpectedToken,
                            "expected a call after `repeat COUNT`",
                            cx.file,
                            Place::Range(cx.nodes.borrow()[call.id.0 as usize]),
                        )
                        .with_primary_message("not a call")
                        .with_help("write `repeat 3 block(x, ...)`; parenthesize a computed count: `repeat (n - 1) block(x)`"),
                    );
                    }
                    let id = cx.node(i.range_to(rest));
                    Ok((rest, Expr { id, kind: ExprKind::Repeat { count: Box::new(count), call: Box::new(call) } }))
                }
                w if KEYWORDS.contains(&w) => expected(i, "an expression"),
                _ => {
                    let (rest, n) = name(i)?;
                    Ok((rest, Expr { id: n.id, kind: ExprKind::Name(n) }))
                }
            }
        }
        TokenKind::LParen => {
            let (rest, open) = i.bump();
            let (rest, mut inner) = delimited_list(rest, open, TokenKind::RParen, "an expression", expr)?;
            if inner.len() != 1 {
                return fail_with(
                    rest,
                    Diagnostic::new(
                        Code::UnexpectedToken,
                        "expected one expression in parentheses",
                        cx.file,
                        Place::Range(i.range_to(rest)),
                    )
                    .with_primary_message("tuples are not values; use a list `[a, b]`"),
                );
            }
            let mut e = inner.remove(0);
            // The parentheses belong to the expression's range.
            cx.set_range(e.id, i.range_to(rest));
            e = Expr { id: e.id, kind: e.kind };
            Ok((rest, e))
        }
        TokenKind::LBracket => {
            let (rest, open) = i.bump();
            let (rest, elems) = delimited_list(rest, open, TokenKind::RBracket, "an expression", expr)?;
            let id = cx.node(i.range_to(rest));
            Ok((rest, Expr { id, kind: ExprKind::List(elems) }))
        }
        _ => expected(i, "an expression"),
    }
}

/// Whether a word after a number reads as a size unit, even misspelled (`mb`, `Gib`).
fn looks_like_unit(word: &str) -> bool {
    matches!(word.to_ascii_lowercase().as_str(), "b" | "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib")
}

/// A number, optionally followed by a size unit (`12 GiB`).
fn number_literal(i: In<'_>) -> PResult<'_, Expr> {
    let cx = i.cx;
    let (rest, tok) = i.bump();
    let text = cx.text_of(tok);
    let is_int = tok.kind == TokenKind::Int;
    // A unit follows on the same line: any word in a scenario that is not a setting key,
    // elsewhere a word ending in `B`/`b` (every unit does).
    let unit_tok = rest.get(0).filter(|t| {
        t.kind == TokenKind::Ident && {
            let w = cx.text_of(t);
            if cx.in_settings.get() { setting(w).is_none() && !KEYWORDS.contains(&w) } else { looks_like_unit(w) }
        }
    });
    let value: Option<f64> =
        if is_int { parse_int(text).map(|v| v as f64) } else { text.replace('_', "").parse().ok() };
    let int_value = if is_int { parse_int(text) } else { None };
    let bad_number =
        |what: &str| Diagnostic::new(Code::InvalidNumber, format!("{what} `{text}`"), cx.file, Place::Range(tok.range));
    if let Some(unit_tok) = unit_tok {
        let rest = In { toks: &rest.toks[1..], cx };
        let unit_id = cx.node(unit_tok.range);
        let unit = Name { id: unit_id, text: cx.text_of(unit_tok).to_string() };
        let id = cx.node(i.range_to(rest));
        let kind = match value {
            Some(v) if v.is_finite() => ExprKind::Size { value: v.to_bits(), integer: is_int, unit },
            _ => {
                cx.report(bad_number("number too large").with_primary_message("does not fit in a 64-bit float"));
                ExprKind::Error
            }
        };
        return Ok((rest, Expr { id, kind }));
    }
    let id = cx.node(tok.range);
    let kind = if is_int {
        match int_value {
            Some(v) => ExprKind::Int(v),
            None => {
                cx.report(
                    bad_number("integer literal too large")
                        .with_primary_message(format!("larger than the largest integer, {}", i64::MAX)),
                );
                ExprKind::Error
            }
        }
    } else {
        match value {
            Some(v) if v.is_finite() => ExprKind::Float(v.to_bits()),
            _ => {
                cx.report(bad_number("number too large").with_primary_message("does not fit in a 64-bit float"));
                ExprKind::Error
            }
        }
    };
    Ok((rest, Expr { id, kind }))
}

// ---------------------------------------------------------------------------------------
// Types and parameters

fn type_expr(i: In<'_>) -> PResult<'_, TypeExpr> {
    nested(i, type_expr_inner)
}

fn type_expr_inner(i: In<'_>) -> PResult<'_, TypeExpr> {
    let cx = i.cx;
    if i.peek_is(TokenKind::LBracket) {
        let (rest, open) = i.bump();
        let (rest, mut elems) = delimited_list(rest, open, TokenKind::RBracket, "a type", type_expr)?;
        if elems.len() != 1 {
            return fail(i, "a list type with one element type, `[int]`");
        }
        let id = cx.node(i.range_to(rest));
        return Ok((rest, TypeExpr::List { id, elem: Box::new(elems.remove(0)) }));
    }
    let (rest, n) = name(i).or_else(|_| expected(i, "a type"))?;
    if rest.get(0).is_some_and(|t| t.kind == TokenKind::LBracket) {
        let (rest2, open) = rest.bump();
        let (rest2, dims) = delimited_list(rest2, open, TokenKind::RBracket, "a dimension", expr)?;
        let id = cx.node(i.range_to(rest2));
        return Ok((rest2, TypeExpr::Tensor { id, dtype: n, dims }));
    }
    Ok((rest, TypeExpr::Named(n)))
}

fn param(i: In<'_>) -> PResult<'_, Param> {
    let cx = i.cx;
    let (mut rest, n) = name(i).or_else(|_| expected(i, "a parameter"))?;
    let mut ty = None;
    let mut default = None;
    if rest.peek_is(TokenKind::Colon) {
        let (r, t) = cut(type_expr(rest.bump().0))?;
        ty = Some(t);
        rest = r;
    }
    if rest.peek_is(TokenKind::Eq) {
        let (r, d) = cut(expr(rest.bump().0))?;
        default = Some(d);
        rest = r;
    }
    let id = cx.node(i.range_to(rest));
    Ok((rest, Param { id, name: n, ty, default }))
}

fn params(i: In<'_>) -> PResult<'_, Vec<Param>> {
    let (rest, open) = cut(token(TokenKind::LParen)(i))?;
    delimited_list(rest, open, TokenKind::RParen, "a parameter", param)
}

// ---------------------------------------------------------------------------------------
// Statements and bodies

/// Whether `i` starts `name (, name)* =` (an assignment), looking ahead without parsing.
fn starts_assignment(i: In<'_>) -> bool {
    let cx = i.cx;
    let toks = i.skip_newlines();
    let mut k = 0;
    loop {
        match toks.get(k) {
            Some(t) if t.kind == TokenKind::Ident && !KEYWORDS.contains(&cx.text_of(t)) => k += 1,
            _ => return false,
        }
        match toks.get(k).map(|t| t.kind) {
            Some(TokenKind::Comma) => k += 1,
            Some(TokenKind::Eq) => return true,
            _ => return false,
        }
    }
}

fn statement(i: In<'_>) -> PResult<'_, Stmt> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    let (rest, kind) = match word {
        "input" => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, _) = cut(token(TokenKind::Colon)(rest))?;
            let (rest, ty) = cut(type_expr(rest))?;
            (rest, StmtKind::Input { name: n, ty })
        }
        "return" => {
            let (mut rest, _) = i.bump();
            let mut values = Vec::new();
            loop {
                let (r, v) = cut(expr(rest))?;
                values.push(v);
                rest = r;
                if !rest.peek_is(TokenKind::Comma) {
                    break;
                }
                rest = rest.bump().0;
            }
            (rest, StmtKind::Return { values })
        }
        "if" => if_statement(i)?,
        "else" => {
            return fail_with(
                i,
                Diagnostic::new(Code::UnexpectedToken, "`else` without `if`", cx.file, Place::Range(tok.range))
                    .with_primary_message("no `if` body ends right before this `else`")
                    .with_help("an `else` follows the `}` that closes an `if` body"),
            );
        }
        _ if starts_assignment(i) => {
            let (mut rest, first) = name(i)?;
            let mut targets = vec![first];
            while rest.peek_is(TokenKind::Comma) {
                let (r, n) = cut(name(rest.bump().0))?;
                targets.push(n);
                rest = r;
            }
            let (rest, _) = cut(token(TokenKind::Eq)(rest))?;
            let (rest, value) = cut(expr(rest))?;
            (rest, StmtKind::Assign { targets, value })
        }
        _ => {
            // Parse the expression to give a precise message; it is not a statement.
            let (rest, e) = expr(i).map_err(|e| {
                e.map(|mut e| {
                    if e.expected == ["an expression"] {
                        e.expected = vec!["a statement"];
                    }
                    e
                })
            })?;
            let range = i.range_to(rest);
            let _ = e;
            return fail_with(
                rest,
                Diagnostic::new(
                    Code::ExpressionStatement,
                    "expression used as a statement",
                    cx.file,
                    Place::Range(range),
                )
                .with_primary_message("its value is not assigned to anything")
                .with_help("assign it to a name: `y = ...`, or return it: `return ...`"),
            );
        }
    };
    let id = cx.node(i.range_to(rest));
    Ok((rest, Stmt { id, kind }))
}

fn if_statement(i: In<'_>) -> PResult<'_, StmtKind> {
    let (rest, _) = keyword("if")(i)?;
    let (rest, cond) = cut(expr(rest))?;
    if rest.peek_is(TokenKind::Eq) {
        let tok = rest.peek();
        return fail_with(
            rest,
            Diagnostic::new(Code::UnexpectedToken, "expected `{`, found `=`", i.cx.file, Place::Range(tok.range))
                .with_primary_message("`=` assigns; it cannot be a condition")
                .with_help("to compare, use `==`"),
        );
    }
    let (mut rest, then_body) = cut(nested(rest, body))?;
    let mut else_body = None;
    // `else` may follow the `}` on the same line or start the next line.
    let after_newlines = rest.skip_all_newlines();
    if after_newlines.peek_word("else") {
        let (r, _) = after_newlines.bump();
        if r.peek_word("if") {
            // `else if`: an `if` statement alone in the else body.
            let (r2, kind) = cut(nested(r, if_statement))?;
            let id = i.cx.node(r.range_to(r2));
            let stmt = Stmt { id, kind };
            let body_id = i.cx.node(r.range_to(r2));
            else_body = Some(Body { id: body_id, stmts: vec![stmt], recovered: false });
            rest = r2;
        } else {
            let (r2, b) = cut(nested(r, body))?;
            else_body = Some(b);
            rest = r2;
        }
    }
    Ok((rest, StmtKind::If { cond, then_body, else_body }))
}

/// Where to resume after a syntax error inside a statement that started at `start` and
/// failed at token index `err_idx`.
fn recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize, resume: bool) -> usize {
    // An unclosed list ran into the next line's first token: resume there.
    if resume && err_idx > start && cx.starts_line(err_idx) && cx.tok(err_idx).kind != TokenKind::Eof {
        return err_idx;
    }
    // Brackets and braces are counted apart: a `}` that closes the enclosing body ends the
    // skip even inside an unclosed `(`.
    let (mut brackets, mut braces): (i64, i64) = (0, 0);
    let mut idx = start;
    while idx < cx.all.len() {
        let tok = cx.tok(idx);
        match tok.kind {
            TokenKind::Eof => return idx,
            TokenKind::LParen | TokenKind::LBracket => brackets += 1,
            TokenKind::RParen | TokenKind::RBracket => brackets -= 1,
            TokenKind::LBrace => braces += 1,
            TokenKind::RBrace => {
                braces -= 1;
                if braces < 0 && idx >= err_idx {
                    return idx;
                }
            }
            TokenKind::Newline if idx >= err_idx && brackets <= 0 && braces <= 0 => return idx + 1,
            _ if idx > start && cx.is_item_keyword_at(idx) => return idx,
            _ => {}
        }
        idx += 1;
    }
    cx.all.len() - 1
}

/// The body of a block or a model: its statements are marked for a reparse, which may reuse
/// them ([`StmtReuse`]).
fn item_body(i: In<'_>) -> PResult<'_, Body> {
    statements(i, true)
}

/// The body of an `if` or an `else`.
fn body(i: In<'_>) -> PResult<'_, Body> {
    statements(i, false)
}

/// `{ statements }`, recovering from errors statement by statement; `item_body`: the body of
/// an item (every statement starts in the same parser state).
fn statements(i: In<'_>, item_body: bool) -> PResult<'_, Body> {
    let cx = i.cx;
    let (mut rest, open) = token(TokenKind::LBrace)(i).or_else(|_| fail(i, "`{`"))?;
    // Braces do not suppress newlines, even inside brackets.
    let saved_brackets = cx.brackets.replace(0);
    let mut stmts = Vec::new();
    let mut recovered = false;
    loop {
        while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon) {
            rest = rest.bump().0;
        }
        let idx = cx.index_of(rest);
        if rest.peek_is(TokenKind::RBrace) {
            rest = rest.bump().0;
            break;
        }
        if rest.peek_is(TokenKind::Eof) || cx.is_item_keyword_at(idx) {
            cx.report(
                Diagnostic::new(Code::UnclosedDelimiter, "unclosed `{`", cx.file, Place::Range(open.range))
                    .with_primary_message("this body is never closed")
                    .with_help("add `}` after its last statement"),
            );
            recovered = true;
            break;
        }
        if item_body && let Some((r, stmt)) = reused_statement(cx, idx, stmts.len()) {
            stmts.push(stmt);
            rest = r;
            continue;
        }
        // What the statement alone reads, then added to what its step read.
        let step_read = cx.read.replace((idx, idx));
        let (errors_before, first_node) = (cx.errors.borrow().len(), cx.nodes.borrow().len() as u32);
        let parsed = statement(rest).and_then(|(r, stmt)| {
            let terminated =
                matches!(r.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::RBrace | TokenKind::Eof);
            if terminated {
                Ok((r, stmt))
            } else {
                Err(Err::Failure(PErr {
                    remaining: r.toks.len(),
                    expected: vec!["the end of the statement"],
                    custom: None,
                    resume: false,
                }))
            }
        });
        let (low, high) = cx.read.get();
        cx.read.set((step_read.0.min(low), step_read.1.max(high)));
        match parsed {
            Ok((r, stmt)) => {
                if item_body && cx.errors.borrow().len() == errors_before {
                    let end_node = cx.nodes.borrow().len() as u32;
                    let end = cx.index_of(r);
                    let index = stmts.len();
                    cx.marks.borrow_mut().push(StmtMark { start: idx, end, low, high, first_node, end_node, index });
                }
                stmts.push(stmt);
                rest = r;
            }
            // Too deep: let the outermost statement report it, once, and skip all of it.
            Err(Err::Failure(e))
                if cx.nesting.get() > 1 && e.custom.as_ref().is_some_and(|d| d.code == Code::NestingTooDeep) =>
            {
                cx.brackets.set(saved_brackets);
                return Err(Err::Failure(e));
            }
            Err(Err::Error(e) | Err::Failure(e)) => {
                let err_idx = e.index(cx);
                let resume = e.resume;
                cx.report(e.into_diagnostic(cx));
                recovered = true;
                let resume_idx = recovery_point(cx, idx, err_idx, resume);
                // Keep the names that the skipped code assigns defined, so that later lines
                // do not report them as undefined.
                let mut targets = Vec::new();
                let broken_input = rest.peek_word("input").then(|| name(rest.bump().0).ok()).flatten();
                if let Some((_, input_name)) = broken_input {
                    targets.push(input_name);
                }
                // Statements start outside brackets, after a line break, `{` or `;`.
                let mut depth = 0i64;
                for at in idx..resume_idx {
                    let after_break = at == idx
                        || matches!(cx.tok(at - 1).kind, TokenKind::Newline | TokenKind::LBrace | TokenKind::Semicolon);
                    let here = In { toks: &cx.all[at..], cx };
                    if depth <= 0 && after_break && starts_assignment(here) {
                        for target in assignment_targets(here).1 {
                            if !targets.iter().any(|t: &Name| t.text == target.text) {
                                targets.push(target);
                            }
                        }
                    }
                    match cx.tok(at).kind {
                        TokenKind::LParen | TokenKind::LBracket => depth += 1,
                        TokenKind::RParen | TokenKind::RBracket => depth -= 1,
                        _ => {}
                    }
                }
                if !targets.is_empty() {
                    let id = cx.node(cx.tok(idx).range);
                    let value = Expr { id, kind: ExprKind::Error };
                    stmts.push(Stmt { id, kind: StmtKind::Assign { targets, value } });
                }
                rest = In { toks: &cx.all[resume_idx..], cx };
            }
            Err(Err::Incomplete(_)) => unreachable!("complete parsers only"),
        }
    }
    cx.brackets.set(saved_brackets);
    let id = cx.node(i.range_to(rest));
    Ok((rest, Body { id, stmts, recovered }))
}

/// The statement of an item's body at token `idx` taken from the previous parse
/// ([`StmtReuse`]), if it had one there that read no edited token; with the position after
/// it. Its node ids follow those already made, its positions move with the text after the
/// edit, and it is marked as a parsed statement would be.
fn reused_statement<'a>(cx: &'a Ctx<'a>, idx: usize, index: usize) -> Option<(In<'a>, Stmt)> {
    let reuse = cx.reuse?;
    // Tokens before the edited lines keep their index; those after it moved by `tokens`.
    let tokens = reuse.new_after as isize - reuse.old_after as isize;
    let (old, tokens, bytes) = if idx < reuse.first_changed {
        (idx, 0, 0)
    } else if idx >= reuse.new_after {
        (idx.checked_add_signed(-tokens)?, tokens, reuse.bytes)
    } else {
        return None;
    };
    let found = reuse.marks.binary_search_by_key(&old.checked_sub(reuse.marks_from)?, |m| m.start).ok()?;
    let mark = reuse.marks[found].moved(reuse.marks_from as isize);
    let untouched =
        if idx < reuse.first_changed { mark.high < reuse.first_changed } else { mark.low >= reuse.old_after };
    let (Item::Block(callable) | Item::Model(callable)) = reuse.item else { return None };
    let old_stmt = callable.body.stmts.get(mark.index).filter(|_| untouched)?;
    let first_node = cx.nodes.borrow().len() as u32;
    let mut stmt = old_stmt.clone();
    let by = i64::from(first_node) - i64::from(mark.first_node);
    if by != 0 {
        stmt.shift_ids(by);
    }
    cx.nodes
        .borrow_mut()
        .extend((mark.first_node..mark.end_node).map(|id| reuse.spans.range(NodeId(id)).shifted(bytes)));
    let at = |t: usize| t.saturating_add_signed(tokens);
    let (low, high, end) = (at(mark.low), at(mark.high), at(mark.end));
    cx.saw(low, high);
    let end_node = first_node + (mark.end_node - mark.first_node);
    cx.marks.borrow_mut().push(StmtMark { start: idx, end, low, high, first_node, end_node, index });
    cx.reused.set(cx.reused.get() + 1);
    Some((In { toks: &cx.all[end..], cx }, stmt))
}

fn assignment_targets(i: In<'_>) -> (In<'_>, Vec<Name>) {
    let mut targets = Vec::new();
    let mut rest = i;
    while let Ok((r, n)) = name(rest) {
        targets.push(n);
        rest = r;
        if !rest.peek_is(TokenKind::Comma) {
            break;
        }
        rest = rest.bump().0;
    }
    (rest, targets)
}

// ---------------------------------------------------------------------------------------
// Scenarios

fn setting_entry(i: In<'_>) -> PResult<'_, Setting> {
    let cx = i.cx;
    let (rest, key) = word(i)?;
    let Some(spec) = setting(&key.text) else {
        let suggestion = crate::suggest::closest(&key.text, super::settings::SETTINGS.iter().map(|s| s.key));
        let mut d = Diagnostic::new(
            Code::UnknownSetting,
            format!("unknown scenario setting `{}`", key.text),
            cx.file,
            Place::Range(cx.nodes.borrow()[key.id.0 as usize]),
        )
        .with_primary_message("not a setting");
        d = match suggestion {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_note("the settings are listed in spec/language.md, section Scenarios"),
        };
        return fail_with(i, d);
    };
    let (rest, value) = match spec.form {
        SettingForm::Flag => (rest, SettingValue::Flag),
        SettingForm::Value => {
            let (r, v) = cut(expr(rest))?;
            (r, SettingValue::Value(v))
        }
        SettingForm::Dim => {
            let (r, n) = cut(name(rest))?;
            let (r, _) = cut(token(TokenKind::Eq)(r))?;
            let (r, v) = cut(expr(r))?;
            (r, SettingValue::Dim { name: n, value: v })
        }
        SettingForm::Args => {
            let (r, open) = cut(token(TokenKind::LParen)(rest))?;
            let (r, args) = delimited_list(r, open, TokenKind::RParen, "an argument", argument)?;
            (r, SettingValue::Args(args))
        }
    };
    let id = cx.node(i.range_to(rest));
    Ok((rest, Setting { id, key, value }))
}

/// Where to resume after an error in a setting that started at `start`: the next word that
/// is a setting key, the end of the line, or the closing brace.
fn setting_recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize) -> usize {
    let mut balance: i64 = 0;
    let mut idx = start + 1;
    while idx < cx.all.len() {
        let tok = cx.tok(idx);
        match tok.kind {
            TokenKind::Eof => return idx,
            TokenKind::LParen | TokenKind::LBracket => balance += 1,
            TokenKind::RParen | TokenKind::RBracket => balance -= 1,
            // Braces never appear inside a setting: a `}` ends the scenario.
            TokenKind::RBrace => return idx,
            _ if cx.is_item_keyword_at(idx) && cx.text_of(tok) != "model" => return idx,
            TokenKind::Newline if balance <= 0 && idx >= err_idx => return idx,
            TokenKind::Ident if balance <= 0 && idx >= err_idx && setting(cx.text_of(tok)).is_some() => return idx,
            _ => {}
        }
        idx += 1;
    }
    cx.all.len() - 1
}

fn scenario_body(i: In<'_>) -> PResult<'_, (Vec<Setting>, bool)> {
    let cx = i.cx;
    let (mut rest, open) = token(TokenKind::LBrace)(i).or_else(|_| fail(i, "`{`"))?;
    let mut settings = Vec::new();
    let mut recovered = false;
    cx.in_settings.set(true);
    loop {
        while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::Comma) {
            rest = rest.bump().0;
        }
        let idx = cx.index_of(rest);
        if rest.peek_is(TokenKind::RBrace) {
            rest = rest.bump().0;
            break;
        }
        // `model` at the start of a line is a new item only if a `{` follows on that line.
        let item_starts = cx.is_item_keyword_at(idx)
            && (cx.text_of(cx.tok(idx)) != "model"
                || (idx..cx.all.len())
                    .map(|at| cx.tok(at))
                    .take_while(|t| t.kind != TokenKind::Newline)
                    .any(|t| t.kind == TokenKind::LBrace));
        if rest.peek_is(TokenKind::Eof) || item_starts {
            cx.report(
                Diagnostic::new(Code::UnclosedDelimiter, "unclosed `{`", cx.file, Place::Range(open.range))
                    .with_primary_message("this scenario is never closed")
                    .with_help("add `}` after its last setting"),
            );
            recovered = true;
            break;
        }
        match setting_entry(rest) {
            Ok((r, s)) => {
                settings.push(s);
                rest = r;
            }
            Err(Err::Error(e) | Err::Failure(e)) => {
                let err_idx = e.index(cx);
                cx.report(e.into_diagnostic(cx));
                recovered = true;
                rest = In { toks: &cx.all[setting_recovery_point(cx, idx, err_idx)..], cx };
            }
            Err(Err::Incomplete(_)) => unreachable!("complete parsers only"),
        }
    }
    cx.in_settings.set(false);
    Ok((rest, (settings, recovered)))
}

// ---------------------------------------------------------------------------------------
// Items

fn use_item(i: In<'_>) -> PResult<'_, Item> {
    let cx = i.cx;
    let (rest, _) = keyword("use")(i)?;
    if rest.peek_is(TokenKind::Str) {
        let (rest, tok) = rest.bump();
        let id = cx.node(tok.range);
        let path = string_value(cx.text_of(tok));
        return Ok((rest, Item::Use(Use { target: Some(UseTarget::File { id, path }) })));
    }
    let (mut rest, first) = cut(name(rest).or_else(|_| expected(rest, "a module path or a file name in quotes")))?;
    let mut segments = vec![first];
    while rest.peek_is(TokenKind::Dot) {
        let (r, n) = cut(name(rest.bump().0))?;
        segments.push(n);
        rest = r;
    }
    let id = cx.node(i.bump().0.range_to(rest));
    Ok((rest, Item::Use(Use { target: Some(UseTarget::Module { id, segments }) })))
}

fn op_outputs(i: In<'_>) -> PResult<'_, OpOutputs> {
    let cx = i.cx;
    if i.peek_is(TokenKind::LParen) {
        let (rest, open) = i.bump();
        let (rest, elems) = delimited_list(rest, open, TokenKind::RParen, "`tensor`", keyword("tensor"))?;
        if elems.is_empty() {
            return fail(i, "`tensor`, `tensors` or `(tensor, ...)`: an op returns at least one tensor");
        }
        return Ok((rest, OpOutputs::Fixed(elems.len() as u32)));
    }
    let tok = i.peek();
    match (tok.kind, cx.text_of(tok)) {
        (TokenKind::Ident, "tensor") => Ok((i.bump().0, OpOutputs::Fixed(1))),
        (TokenKind::Ident, "tensors") => Ok((i.bump().0, OpOutputs::Variadic)),
        _ => fail(i, "`tensor`, `tensors` or `(tensor, ...)`"),
    }
}

/// The header of an op, block or model whose parameter list failed to parse: the item is
/// kept with the parameters that did parse and `broken` set, so that it still defines its
/// name (calls of it are not checked).
fn item(i: In<'_>) -> PResult<'_, Item> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    match word {
        "use" => use_item(i),
        "op" => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (mut rest, ps) = params(rest)?;
            let mut outputs = OpOutputs::Fixed(1);
            if rest.peek_is(TokenKind::Arrow) {
                let (r, o) = cut(op_outputs(rest.bump().0))?;
                outputs = o;
                rest = r;
            }
            Ok((rest, Item::Op(OpDecl { name: n, params: ps, outputs, broken: false })))
        }
        "block" | "model" => {
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, ps) = params(rest)?;
            let (rest, b) = cut(nested(rest, item_body))?;
            let callable = Callable { name: n, params: ps, body: b, broken: false };
            Ok((rest, if word == "block" { Item::Block(callable) } else { Item::Model(callable) }))
        }
        "train" | "infer" => {
            let kind = if word == "train" { ScenarioKind::Train } else { ScenarioKind::Infer };
            let (rest, _) = i.bump();
            let (rest, n) = cut(name(rest))?;
            let (rest, (settings, recovered)) = cut(scenario_body(rest))?;
            Ok((rest, Item::Scenario(Scenario { kind, name: n, settings, recovered })))
        }
        _ => expected(i, "an item (`use`, `op`, `block`, `model`, `train` or `infer`)"),
    }
}

/// Where to resume after an error in an item: the next line that starts with an item keyword.
fn item_recovery_point(cx: &Ctx<'_>, start: usize, err_idx: usize) -> usize {
    let mut idx = start + 1;
    while idx < cx.all.len() {
        if cx.tok(idx).kind == TokenKind::Eof || (idx >= err_idx.min(idx) && cx.is_item_keyword_at(idx)) {
            return idx;
        }
        idx += 1;
    }
    cx.all.len() - 1
}

/// One step of the top-level loop from token index `at`, or `None` at the end of the file.
fn step(cx: &Ctx<'_>, at: usize) -> Option<Step> {
    cx.read.set((at, at));
    cx.marks.borrow_mut().clear();
    // Node 0 is the item itself; its range is set once the item is parsed.
    cx.nodes.replace(vec![TextRange::default()]);
    cx.nesting.set(0);
    cx.tree_depth.set(0);
    cx.brackets.set(0);
    cx.in_settings.set(false);
    let mut rest = In { toks: &cx.all[at..], cx };
    while matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon) {
        rest = rest.bump().0;
    }
    if rest.peek_is(TokenKind::Eof) {
        return None;
    }
    let start = cx.index_of(rest);
    let mut parsed = None;
    match item(rest) {
        Ok((r, it)) => {
            let range = rest.range_to(r);
            cx.set_range(NodeId(0), range);
            parsed = Some((Arc::new(it), ItemSpans::new(cx.nodes.take())));
            rest = r;
            let line_ends = matches!(rest.peek().kind, TokenKind::Newline | TokenKind::Semicolon | TokenKind::Eof);
            // After an unclosed body the next item already starts its own line.
            if !line_ends && !cx.is_item_keyword_at(cx.index_of(rest)) {
                let e = PErr {
                    remaining: rest.toks.len(),
                    expected: vec!["the end of the line"],
                    custom: None,
                    resume: false,
                };
                let err_idx = e.index(cx);
                cx.report(e.into_diagnostic(cx));
                rest = In { toks: &cx.all[item_recovery_point(cx, err_idx, err_idx)..], cx };
            }
        }
        Err(Err::Error(e) | Err::Failure(e)) => {
            let err_idx = e.index(cx);
            cx.report(e.into_diagnostic(cx));
            if let Some(partial) = partial_item(rest) {
                let end = In { toks: &cx.all[err_idx.max(start + 1)..], cx };
                cx.set_range(NodeId(0), rest.range_to(end));
                parsed = Some((Arc::new(partial), ItemSpans::new(cx.nodes.take())));
            }
            rest = In { toks: &cx.all[item_recovery_point(cx, start, err_idx)..], cx };
        }
        Err(Err::Incomplete(_)) => unreachable!("complete parsers only"),
    }
    let (low, high) = cx.read.get();
    Some(Step {
        start: at,
        end: cx.index_of(rest),
        low,
        high,
        item: parsed,
        errors: cx.errors.take(),
        documented: false,
        stmts: cx.marks.take().into_iter().map(|m| m.moved(-(at as isize))).collect(),
        reused_stmts: cx.reused.replace(0),
    })
}

/// After an error in an item's header or body, keeps what defines a name: a block or model
/// whose name parsed still exists (with an empty, recovered body), so that its callers do
/// not report it as undefined. Returns `None` when not even the name parsed.
fn partial_item(i: In<'_>) -> Option<Item> {
    let cx = i.cx;
    let tok = i.peek();
    let word = if tok.kind == TokenKind::Ident { cx.text_of(tok) } else { "" };
    if !matches!(word, "block" | "model" | "op") {
        return None;
    }
    cx.nodes.replace(vec![TextRange::default()]);
    let (rest, _) = i.bump();
    let (mut rest, n) = name(rest).ok()?;
    let mut params = Vec::new();
    if rest.peek_is(TokenKind::LParen) {
        rest = rest.bump().0;
        cx.brackets.set(1);
        while let Ok((r, p)) = param(rest) {
            params.push(p);
            rest = r;
            if !rest.peek_is(TokenKind::Comma) {
                break;
            }
            rest = rest.bump().0;
        }
        cx.brackets.set(0);
    }
    let body = Body { id: NodeId(0), stmts: Vec::new(), recovered: true };
    Some(match word {
        "block" => Item::Block(Callable { name: n, params, body, broken: true }),
        "model" => Item::Model(Callable { name: n, params, body, broken: true }),
        _ => Item::Op(OpDecl { name: n, params, outputs: OpOutputs::Variadic, broken: true }),
    })
}

/// Attaches the `##` documentation of each step's item that has none attached yet: the run
/// of `##` comment lines right above it.
pub(crate) fn attach_docs(text: &str, comments: &[Comment], steps: &mut [Step]) {
    for step in steps.iter_mut().filter(|s| !s.documented) {
        step.documented = true;
        let Some((_, item)) = &mut step.item else { continue };
        item.doc = None;
        let start = item.whole().start as usize;
        // Walk back over whole lines that are doc comments.
        let mut lines = Vec::new();
        let mut line_start = text[..start].rfind('\n').map_or(0, |p| p + 1);
        while line_start > 0 {
            let prev_start = text[..line_start - 1].rfind('\n').map_or(0, |p| p + 1);
            let line = text[prev_start..line_start - 1].trim();
            // A line has at most one comment: the first that starts at or after the line.
            let first = comments.partition_point(|c| (c.range.start as usize) < prev_start);
            let is_doc =
                comments.get(first).is_some_and(|c| c.doc && !c.trailing && (c.range.start as usize) < line_start);
            if !is_doc || !line.starts_with("##") {
                break;
            }
            let content = line.trim_start_matches('#');
            lines.push(content.strip_prefix(' ').unwrap_or(content).to_string());
            line_start = prev_start;
        }
        if !lines.is_empty() {
            lines.reverse();
            item.doc = Some(lines.join("\n"));
        }
    }
}
