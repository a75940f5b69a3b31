//! Reparsing after an edit: the parse of the new text, equal to [`super::parse`] of it,
//! computed from the parse of the old text by redoing only what the edit could change.
//!
//! Two facts make that exact:
//! - The lexer is line-local: it starts every line in the same state (comments and strings
//!   end at the line's end; lines end at `\n`, `\r\n` and a lone `\r`). So only the edited lines are lexed again; the tokens before
//!   them are kept and those after them are moved by the change in length.
//! - The parser's top-level loop is a sequence of `Step`s, each starting from a clean
//!   state, and each records the tokens it read. A step that read only tokens before the
//!   edited lines is kept. Parsing resumes after the kept steps, and stops as soon as a step
//!   ends where an old step began that read only tokens after the edited lines: from there
//!   the old steps, moved, are the new ones.
//! - Every statement of an item's body starts in the same parser state too, and the parser
//!   marks what each read (`StmtMark`). In the item the edit is in, a statement whose tokens
//!   are those of an old statement that read no edited token is taken from the old tree
//!   (its node ids moved to follow the statements before it) instead of parsed: an edit of
//!   one line of a model's thousand-line body parses that line.
//!
//! The diagnostics' filtering and order are file-wide and cheap: they are redone on every
//! edit (`assemble`). The documentation comments of the kept and moved steps are kept,
//! except for the first moved step (the lines above it may be the edited ones). Tests
//! compare every reparse with a parse from scratch (tests/it/reparse.rs).

use std::sync::Arc;

use super::lexer::{Comment, Token, lex};
use super::parser::{Parse, Step, StmtReuse, assemble, attach_docs, steps_from};
use crate::diagnostics::{Diagnostic, FileName, Place, ends_line, line_start};

/// A file's parse with what a reparse reuses: the text, tokens and steps behind it.
#[derive(Debug, Clone)]
pub struct ParseState {
    text: String,
    tokens: Vec<Token>,
    lex_errors: Vec<Diagnostic>,
    steps: Vec<Step>,
    parse: Arc<Parse>,
    /// How many steps the parse that made this state ran (the others were reused), and how
    /// many statements of theirs it reused.
    steps_parsed: usize,
    stmts_reused: usize,
}

impl ParseState {
    /// Parses `text` from scratch.
    pub fn new(file: &FileName, text: &str) -> ParseState {
        let lexed = lex(file, text);
        let mut steps = steps_from(file, text, &lexed.tokens, 0, None, |_| false);
        attach_docs(text, &lexed.comments, &mut steps);
        let parse = Arc::new(assemble(text, &lexed.errors, lexed.comments, &steps));
        ParseState {
            text: text.to_string(),
            tokens: lexed.tokens,
            lex_errors: lexed.errors,
            steps_parsed: steps.len(),
            stmts_reused: 0,
            steps,
            parse,
        }
    }

    /// The parse.
    pub fn parse(&self) -> &Arc<Parse> {
        &self.parse
    }

    /// The parse, taken out of the state (no copy: the state held the only reference).
    pub fn into_parse(self) -> Parse {
        Arc::unwrap_or_clone(self.parse)
    }

    /// The text parsed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many top-level steps (about one per item) the parse that made this state ran;
    /// a reparse reuses the others.
    pub fn steps_parsed(&self) -> usize {
        self.steps_parsed
    }

    /// How many statements of the bodies of the steps it ran the parse that made this state
    /// took from the previous parse instead of parsing them (the statements of a large body
    /// that an edit of one of its lines did not reach).
    pub fn stmts_reused(&self) -> usize {
        self.stmts_reused
    }

    /// The state of `new_text`, a later version of this state's text (any change: the
    /// edited region is found by comparing the texts).
    pub fn reparse(&self, file: &FileName, new_text: &str) -> ParseState {
        let old_text = self.text.as_str();
        let (old, new) = (old_text.as_bytes(), new_text.as_bytes());
        let prefix = common_prefix(old, new);
        let room = old.len().min(new.len()) - prefix;
        let suffix = common_suffix(&old[old.len() - room..], &new[new.len() - room..]);
        let delta = new.len() as i64 - old.len() as i64;

        // The edited lines: from the start of the line of the first changed byte to the end
        // of the line of the last one (its line break included). Both ends are line starts
        // (or the text's end) in the old and the new text alike. Whether a `\r` ends a line
        // depends on the byte after it (a `\r\n` ends at its `\n`): a `\r` just before the
        // first changed byte may end a line in one text and not in the other, so the edited
        // lines start before it.
        let unchanged = if prefix > 0 && new[prefix - 1] == b'\r' { prefix - 1 } else { prefix };
        let lines_start = line_start(new_text, unchanged);
        let changed_end = new.len() - suffix;
        let new_lines_end = next_line_break(new, changed_end).map_or(new.len(), |p| p + 1);
        let old_lines_end = (new_lines_end as i64 - delta) as usize;

        // Tokens, comments and lexical errors: kept before the edited lines, lexed again in
        // them, moved after them.
        let lexed = lex(file, &new_text[lines_start..new_lines_end]);
        let base = lines_start as i64;
        let relexed: Vec<Token> = lexed.tokens[..lexed.tokens.len() - 1]
            .iter()
            .map(|t| Token { kind: t.kind, range: t.range.shifted(base) })
            .collect();
        let first_changed = self.tokens.partition_point(|t| (t.range.start as usize) < lines_start);
        let old_after = self.tokens.partition_point(|t| (t.range.start as usize) < old_lines_end);
        let new_after = first_changed + relexed.len();
        let mut tokens = Vec::with_capacity(new_after + self.tokens.len() - old_after);
        tokens.extend_from_slice(&self.tokens[..first_changed]);
        tokens.extend(relexed);
        tokens.extend(self.tokens[old_after..].iter().map(|t| Token { kind: t.kind, range: t.range.shifted(delta) }));

        let comments = splice(
            &self.parse.comments,
            |c| c.range.start as usize,
            (lines_start, old_lines_end),
            lexed.comments.iter().map(|c| Comment { range: c.range.shifted(base), ..c.clone() }),
            |c| Comment { range: c.range.shifted(delta), ..c.clone() },
        );
        let lex_errors = splice(
            &self.lex_errors,
            start_of,
            (lines_start, old_lines_end),
            lexed.errors.iter().map(|d| d.clone().shifted(base)),
            |d| d.clone().shifted(delta),
        );

        // Steps: keep those that read only tokens before the edited lines, parse from the
        // first other one, and stop where an old step after the edited lines begins.
        let kept = self.steps.iter().take_while(|s| s.high < first_changed).count();
        let resume = kept.checked_sub(1).map_or(0, |last| self.steps[last].end);
        let token_delta = new_after as isize - old_after as isize;
        // The old steps from `reusable` on read nothing before the old tokens that follow the
        // edited lines (a step may look one token back), so they can follow a new step.
        let reusable = self.steps.len() - self.steps.iter().rev().take_while(|o| o.low >= old_after).count();
        let mut sync = None;
        // The step the edit begins in, if it is an item with a body: the statements of it
        // that the edit did not reach are taken as they were (a large model's body is
        // thousands of them).
        let around = self.steps.get(kept).and_then(|s| s.item.as_ref().map(|(item, spans)| (s, item, spans)));
        let reuse = around.filter(|(s, _, _)| !s.stmts.is_empty()).map(|(s, item, spans)| StmtReuse {
            item,
            spans,
            marks: &s.stmts,
            marks_from: s.start,
            first_changed,
            old_after,
            new_after,
            bytes: delta,
        });
        let parsed = steps_from(file, new_text, &tokens, resume, reuse.as_ref(), |step| {
            if step.end <= new_after {
                return false;
            }
            let old_start = step.end.checked_add_signed(-token_delta);
            let found = old_start.and_then(|s| self.steps.binary_search_by_key(&s, |o| o.start).ok());
            sync = found.filter(|&at| at >= kept.max(reusable));
            sync.is_some()
        });
        let steps_parsed = parsed.len();
        let stmts_reused = parsed.iter().map(|s| s.reused_stmts).sum();
        let mut steps = Vec::with_capacity(self.steps.len());
        steps.extend_from_slice(&self.steps[..kept]);
        steps.extend(parsed);
        if let Some(at) = sync {
            let first_moved = steps.len();
            steps.extend(self.steps[at..].iter().map(|s| s.shifted(token_delta, delta)));
            // The lines above the first moved step may be the edited ones (its documentation):
            // attached again. Those above the others are as they were.
            steps[first_moved].documented = false;
        }
        attach_docs(new_text, &comments, &mut steps);

        let parse = Arc::new(assemble(new_text, &lex_errors, comments, &steps));
        ParseState { text: new_text.to_string(), tokens, lex_errors, steps, parse, steps_parsed, stmts_reused }
    }
}

/// Chunks compared at once when looking for the first difference: slice comparisons of a
/// chunk are vectorized, byte-by-byte ones are not.
const CHUNK: usize = 64;

/// How many bytes `a` and `b` share at their start.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let chunks = a.chunks(CHUNK).zip(b.chunks(CHUNK)).take_while(|(x, y)| x == y).count();
    // The last chunk may be short: equal chunks cover at most the shorter slice.
    let at = (chunks * CHUNK).min(a.len()).min(b.len());
    at + a[at..].iter().zip(&b[at..]).take_while(|(x, y)| x == y).count()
}

/// How many bytes `a` and `b` share at their end.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let chunks = a.rchunks(CHUNK).zip(b.rchunks(CHUNK)).take_while(|(x, y)| x == y).count();
    let at = (chunks * CHUNK).min(a.len()).min(b.len());
    let (a, b) = (&a[..a.len() - at], &b[..b.len() - at]);
    at + a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count()
}

/// The first byte at or after `from` that ends a line. The bytes from `from` on are the
/// common suffix of the old and the new text, and whether a byte ends a line depends on it
/// and the byte after it only: it ends a line in both texts.
fn next_line_break(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let found = at + memchr::memchr2(b'\n', b'\r', bytes.get(at..)?)?;
        if ends_line(bytes, found) {
            return Some(found);
        }
        at = found + 1;
    }
}

/// The byte offset a diagnostic is about (its primary label's start).
fn start_of(d: &Diagnostic) -> usize {
    match d.primary().place {
        Place::Range(r) => r.start as usize,
        Place::Node(_) => 0,
    }
}

/// `old` (in position order) with the elements in the edited lines `lines` (old offsets)
/// replaced by `fresh`, and those after moved by `moved`.
fn splice<T: Clone>(
    old: &[T],
    position: impl Fn(&T) -> usize,
    (start, end): (usize, usize),
    fresh: impl Iterator<Item = T>,
    moved: impl Fn(&T) -> T,
) -> Vec<T> {
    let before = old.partition_point(|x| position(x) < start);
    let after = old.partition_point(|x| position(x) < end);
    let mut out: Vec<T> = old[..before].to_vec();
    out.extend(fresh);
    out.extend(old[after..].iter().map(moved));
    out
}

#[cfg(test)]
mod tests {
    use super::{CHUNK, common_prefix, common_suffix};

    #[test]
    fn common_ends_across_chunk_boundaries() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            let a: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            assert_eq!(common_prefix(&a, &a), len);
            assert_eq!(common_suffix(&a, &a), len);
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0xFF;
                assert_eq!(common_prefix(&a, &b), at, "len {len}, change at {at}");
                assert_eq!(common_suffix(&a, &b), len - at - 1, "len {len}, change at {at}");
            }
            // One slice a prefix (or suffix) of the other.
            let longer: Vec<u8> = a.iter().copied().chain([7, 7]).collect();
            assert_eq!(common_prefix(&a, &longer), len);
            let longer: Vec<u8> = [7, 7].into_iter().chain(a.iter().copied()).collect();
            assert_eq!(common_suffix(&a, &longer), len);
        }
    }
}
