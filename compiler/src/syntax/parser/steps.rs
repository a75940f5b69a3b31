//! The parser's incremental machinery: a file is parsed in [`Step`]s (one top-level item
//! each, from a clean state, recording the tokens it read), and an item's body in statements
//! ([`StmtMark`]), so that a reparse ([`crate::syntax::incremental`]) keeps the steps and
//! statements an edit did not reach; [`assemble`] makes the [`Parse`] from the steps.

use super::*;
use crate::diagnostics;

/// One turn of the parser's top-level loop: blank lines and `;` skipped, then one item
/// parsed, or skipped after an error. A step starts from a clean state, so its result
/// depends only on the tokens it read (`low..=high`): a reparse after an edit
/// ([`crate::syntax::incremental`]) reuses the steps whose tokens the edit did not touch.
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
    pub(super) fn moved(&self, tokens: isize) -> StmtMark {
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
            Place::Range(r) => Some((line_start(text, r.start), next_line_end(text, r.start))),
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

pub(super) fn line_start(text: &str, offset: u32) -> u32 {
    diagnostics::line_start(text, offset as usize) as u32
}

/// The end of the line after the one that holds `offset`, before its line break.
fn next_line_end(text: &str, offset: u32) -> u32 {
    diagnostics::line_end(text, diagnostics::next_line_start(text, offset as usize)) as u32
}

/// The statement of an item's body at token `idx` taken from the previous parse
/// ([`StmtReuse`]), if it had one there that read no edited token; with the position after
/// it. Its node ids follow those already made, its positions move with the text after the
/// edit, and it is marked as a parsed statement would be.
pub(super) fn reused_statement<'a>(cx: &'a Ctx<'a>, idx: usize, index: usize) -> Option<(In<'a>, Stmt)> {
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

/// Attaches the `##` documentation of each step's item that has none attached yet: the run
/// of `##` comment lines right above it.
pub(crate) fn attach_docs(text: &str, comments: &[Comment], steps: &mut [Step]) {
    let bytes = text.as_bytes();
    // The start of the last item looked at and the start of its line: an item's line start
    // is searched back to the previous item at most (80,000 items on one line each searched
    // the whole line before).
    let mut previous: Option<(usize, usize)> = None;
    for step in steps.iter_mut().filter(|s| !s.documented) {
        step.documented = true;
        let Some((_, item)) = &mut step.item else { continue };
        item.doc = None;
        let start = item.whole().start as usize;
        let from = previous.filter(|&(at, _)| at <= start);
        let since = from.map_or(0, |(at, _)| at);
        let mut line_start = match ((since..start).rev().find(|&i| diagnostics::ends_line(bytes, i)), from) {
            (Some(at), _) => at + 1,
            (None, Some((_, line))) => line,
            (None, None) => 0,
        };
        previous = Some((start, line_start));
        // Walk back over whole lines that are doc comments. A line has at most one comment:
        // the line above holds a doc comment if the last comment before this line is one and
        // nothing but its line break follows it; that line is found from the comment, never
        // by scanning it.
        let mut lines = Vec::new();
        while line_start > 0 {
            let last = comments.partition_point(|c| (c.range.start as usize) < line_start);
            let Some(c) = last.checked_sub(1).and_then(|i| comments.get(i)) else { break };
            let (c_start, c_end) = (c.range.start as usize, c.range.end as usize);
            // `line_start - 1` is the previous line's break (the `\n` of a `\r\n`).
            let on_line_above =
                c_end < line_start && !(c_end..line_start - 1).any(|i| diagnostics::ends_line(bytes, i));
            if !on_line_above || !c.doc || c.trailing {
                break;
            }
            let prev_start = diagnostics::line_start(text, c_start);
            let line = text[prev_start..diagnostics::line_end(text, prev_start)].trim();
            if !line.starts_with("##") {
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
