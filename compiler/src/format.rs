//! The formatter: a `.net` text in, its canonical layout out (`netc fmt`, and formatting in
//! the editor). Data in, text out: no IO.
//!
//! It works on the token stream, not on the tree: every token is kept in its order and every
//! comment is kept on its line, only the whitespace between them is rewritten. Line breaks
//! are kept (blank lines collapse to at most one), with one exception: a one-line scenario
//! that reaches past column [`MAX_WIDTH`] is split into one setting per line (also when it
//! follows another item on that line). Trailing commas before a `)` or `]` on the same line
//! are dropped. The rules are in spec/fmt.md.
//!
//! **Invariant: formatting never changes the syntax tree.** [`format()`] re-parses its output
//! and refuses to return a text whose tree differs from the input's, so a bug in a spacing
//! rule shows up as an error, never as a changed program. Files with syntax errors are not
//! formatted: their diagnostics are returned instead.

use std::collections::HashSet;

use crate::diagnostics::{Diagnostic, FileName, Severity, TextRange};
use crate::syntax::lexer::{Comment, Token, TokenKind, lex};
use crate::syntax::settings::{SettingForm, setting};
use crate::syntax::{Item, KEYWORDS, Parse, parse};

/// The width a one-line scenario may have before its settings go one per line.
pub const MAX_WIDTH: usize = 100;

/// The indentation of one level.
pub const INDENT: &str = "    ";

/// Why a text was not formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The text has syntax errors (formatting a broken file could move its mistakes).
    Syntax(Vec<Diagnostic>),
    /// The formatter would have changed the syntax tree: a bug in netc, reported rather than
    /// written.
    Internal(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Syntax(d) => write!(f, "{} syntax error(s)", d.len()),
            FormatError::Internal(m) => write!(f, "internal formatter error: {m}"),
        }
    }
}

/// Formats `text` (the file's name is used in diagnostics only).
pub fn format(file: &FileName, text: &str) -> Result<String, FormatError> {
    let parsed = parse(file, text);
    let errors: Vec<Diagnostic> = parsed.errors.iter().filter(|d| d.severity == Severity::Error).cloned().collect();
    if !errors.is_empty() {
        return Err(FormatError::Syntax(errors));
    }
    let out = Formatter::new(text, &parsed, file).run();
    let again = parse(file, &out);
    if again.errors.iter().any(|d| d.severity == Severity::Error) || again.tree != parsed.tree {
        return Err(FormatError::Internal(format!("formatting `{file}` would change its syntax tree")));
    }
    Ok(out)
}

/// Whether `text` is already formatted (`Err` as for [`format()`]).
pub fn is_formatted(file: &FileName, text: &str) -> Result<bool, FormatError> {
    format(file, text).map(|out| out == text)
}

/// A significant token (not a line break) with the physical line it is on.
#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: TokenKind,
    range: TextRange,
    line: usize,
}

/// What the formatter knows about one token beyond its kind.
#[derive(Debug, Clone, Copy, Default)]
struct Role {
    /// A `-` that negates (no space after it).
    unary: bool,
    /// The `=` of a keyword argument `k=3` (no spaces around it).
    keyword_eq: bool,
    /// The key of a scenario setting.
    setting_key: bool,
    /// A comma right before a `)` or `]` on the same line: dropped.
    dropped: bool,
}

/// A one-line scenario: its first token, its `{` and `}`, and each setting's tokens.
#[derive(Debug, Clone)]
struct OneLineScenario {
    open: usize,
    close: usize,
    settings: Vec<(usize, usize)>,
}

/// An open bracket or brace while lines are laid out.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// The indentation of the line that opened it (a line starting with the closer gets it).
    line_indent: usize,
    /// The indentation of the lines inside it.
    inner: usize,
    /// The physical line of the opener.
    line: usize,
}

struct Formatter<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    roles: Vec<Role>,
    /// Tokens of each physical line, as indexes into `toks`.
    lines: Vec<Vec<usize>>,
    /// The comment that ends each physical line, if any.
    comments: Vec<Option<Comment>>,
    /// One-line scenarios by the index of their first token.
    scenarios: Vec<(usize, OneLineScenario)>,
}

fn is_opener(kind: TokenKind) -> bool {
    matches!(kind, TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace)
}

fn is_closer(kind: TokenKind) -> bool {
    matches!(kind, TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace)
}

fn is_operator(kind: TokenKind) -> bool {
    use TokenKind::*;
    matches!(
        kind,
        EqEq | NotEq
            | Lt
            | Le
            | Gt
            | Ge
            | Plus
            | Minus
            | Star
            | StarStar
            | Slash
            | SlashSlash
            | DotDot
            | Percent
            | At
            | Arrow
    )
}

impl<'a> Formatter<'a> {
    fn new(text: &'a str, parsed: &Parse, file: &FileName) -> Self {
        let lexed = lex(file, text);
        let line_starts = crate::diagnostics::line_starts(text);
        let line_of = |offset: u32| line_starts.partition_point(|&s| s <= offset) - 1;
        let toks: Vec<Tok> = lexed
            .tokens
            .iter()
            .filter(|t| !matches!(t.kind, TokenKind::Newline | TokenKind::Eof))
            .map(|t: &Token| Tok { kind: t.kind, range: t.range, line: line_of(t.range.start) })
            .collect();
        let mut lines = vec![Vec::new(); line_starts.len()];
        for (i, t) in toks.iter().enumerate() {
            lines[t.line].push(i);
        }
        let mut comments = vec![None; line_starts.len()];
        for c in lexed.comments {
            let line = line_of(c.range.start);
            comments[line] = Some(c);
        }
        let mut f = Formatter { text, toks, roles: Vec::new(), lines, comments, scenarios: Vec::new() };
        f.roles = f.roles(parsed);
        f.scenarios = f.one_line_scenarios(parsed);
        f
    }

    fn src(&self, i: usize) -> &'a str {
        &self.text[self.toks[i].range.to_range()]
    }

    fn is_keyword(&self, i: usize) -> bool {
        self.toks[i].kind == TokenKind::Ident && KEYWORDS.contains(&self.src(i))
    }

    fn is_name(&self, i: usize) -> bool {
        self.toks[i].kind == TokenKind::Ident && !self.is_keyword(i)
    }

    fn token_at(&self, offset: u32) -> Option<usize> {
        let i = self.toks.partition_point(|t| t.range.start < offset);
        (i < self.toks.len() && self.toks[i].range.start == offset).then_some(i)
    }

    /// The role of every token: unary minus, keyword `=`, setting keys, dropped commas.
    fn roles(&self, parsed: &Parse) -> Vec<Role> {
        let mut roles = vec![Role::default(); self.toks.len()];
        // Setting keys, from the tree.
        let mut key_offsets = HashSet::new();
        for (item, spans) in parsed.tree.iter().zip(&parsed.spans) {
            if let Item::Scenario(s) = item {
                for setting in &s.settings {
                    key_offsets.insert(spans.range(setting.key.id).start);
                }
            }
        }
        for (i, t) in self.toks.iter().enumerate() {
            roles[i].setting_key = t.kind == TokenKind::Ident && key_offsets.contains(&t.range.start);
        }
        // Parentheses that hold parameters (`block b(...)` at the top level) versus calls.
        let mut stack: Vec<(TokenKind, bool)> = Vec::new();
        // The first token of the statement being read, outside brackets: the options of a
        // `buffer NAME: type, persistent=false` statement are keyword arguments.
        let mut statement_start = 0;
        for i in 0..self.toks.len() {
            let kind = self.toks[i].kind;
            let prev = i.checked_sub(1);
            let in_brackets = matches!(stack.last(), Some((TokenKind::LParen | TokenKind::LBracket, _)));
            if !in_brackets
                && prev.is_none_or(|p| {
                    self.toks[p].line != self.toks[i].line
                        || matches!(self.toks[p].kind, TokenKind::LBrace | TokenKind::Semicolon)
                })
            {
                statement_start = i;
            }
            match kind {
                TokenKind::LParen => {
                    let braces = stack.iter().filter(|(k, _)| *k == TokenKind::LBrace).count();
                    let params = braces == 0
                        && prev.is_some_and(|p| self.is_name(p))
                        && i.checked_sub(2).is_some_and(|pp| matches!(self.src(pp), "block" | "model" | "op"));
                    stack.push((kind, params));
                }
                TokenKind::LBracket | TokenKind::LBrace => stack.push((kind, false)),
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    stack.pop();
                }
                TokenKind::Eq => {
                    let in_call = matches!(stack.last(), Some((TokenKind::LParen, false)))
                        || (!in_brackets
                            && self.src(statement_start) == "buffer"
                            && self.toks.get(statement_start + 1).is_some_and(|t| t.kind == TokenKind::Ident));
                    roles[i].keyword_eq = in_call
                        && prev.is_some_and(|p| self.toks[p].kind == TokenKind::Ident)
                        && i.checked_sub(2)
                            .is_some_and(|pp| matches!(self.toks[pp].kind, TokenKind::LParen | TokenKind::Comma));
                }
                TokenKind::Minus => {
                    roles[i].unary = match prev {
                        None => true,
                        Some(p) => {
                            let pk = self.toks[p].kind;
                            use TokenKind::*;
                            matches!(pk, LParen | LBracket | LBrace | Comma | Eq | Colon | Semicolon)
                                || is_operator(pk)
                                || (self.is_keyword(p) && !matches!(self.src(p), "true" | "false"))
                                || (roles[p].setting_key
                                    && setting(self.src(p)).is_some_and(|s| s.form == SettingForm::Value))
                        }
                    };
                }
                TokenKind::Comma => {
                    roles[i].dropped = self.toks.get(i + 1).is_some_and(|n| {
                        matches!(n.kind, TokenKind::RParen | TokenKind::RBracket) && n.line == self.toks[i].line
                    });
                }
                _ => {}
            }
        }
        roles
    }

    /// Scenarios written on one line (keyword to `}`), with the token spans of their settings;
    /// the line may hold other items before or after them.
    fn one_line_scenarios(&self, parsed: &Parse) -> Vec<(usize, OneLineScenario)> {
        let mut out = Vec::new();
        for (item, spans) in parsed.tree.iter().zip(&parsed.spans) {
            let Item::Scenario(s) = item else { continue };
            let range = spans.range(crate::syntax::NodeId(0));
            let Some(first) = self.token_at(range.start) else { continue };
            let last = self.toks.partition_point(|t| t.range.end <= range.end);
            if last == 0 || last <= first {
                continue;
            }
            let close = last - 1;
            let Some(open) = (first..close).find(|&i| self.toks[i].kind == TokenKind::LBrace) else { continue };
            let one_line = self.toks[first].line == self.toks[close].line;
            if !one_line || self.toks[close].kind != TokenKind::RBrace {
                continue;
            }
            let mut settings = Vec::new();
            for setting in &s.settings {
                let r = spans.range(setting.id);
                let (Some(a), b) = (self.token_at(r.start), self.toks.partition_point(|t| t.range.end <= r.end)) else {
                    continue;
                };
                settings.push((a, b));
            }
            out.push((first, OneLineScenario { open, close, settings }));
        }
        out
    }

    /// The whitespace between tokens `a` and `b` (consecutive, on one line).
    fn space(&self, a: usize, b: usize) -> &'static str {
        use TokenKind::*;
        let (p, n) = (self.toks[a].kind, self.toks[b].kind);
        if n == LBrace {
            return " ";
        }
        if p == LBrace {
            return if n == RBrace { "" } else { " " };
        }
        if n == RBrace {
            return " ";
        }
        if p == RBrace {
            return if matches!(n, Semicolon | Comma) { "" } else { " " };
        }
        if self.roles[b].setting_key && !matches!(p, Semicolon | Comma) {
            return "  ";
        }
        if matches!(n, Comma | Semicolon | RParen | RBracket | Dot | DotDot | Colon) {
            return "";
        }
        // A range is written tight, as in Rust: `0..n`, `(n - 1)..n * 2`.
        if matches!(p, LParen | LBracket | Dot | DotDot) {
            return "";
        }
        if p == Minus && self.roles[a].unary {
            // `- -a`, not `--a`.
            return if n == Minus { " " } else { "" };
        }
        if n == Eq {
            return if self.roles[b].keyword_eq { "" } else { " " };
        }
        if p == Eq {
            return if self.roles[a].keyword_eq { "" } else { " " };
        }
        let callee = self.is_name(a) && !self.roles[a].setting_key;
        if n == LParen {
            return if callee || (self.roles[a].setting_key && self.src(a) == "dataloader") { "" } else { " " };
        }
        if n == LBracket {
            return if callee || matches!(p, RParen | RBracket) { "" } else { " " };
        }
        " "
    }

    /// Tokens `from..to` joined with their spacing (dropped commas left out).
    fn join(&self, from: usize, to: usize) -> String {
        let mut out = String::new();
        let mut prev: Option<usize> = None;
        for i in from..to {
            if self.roles[i].dropped {
                continue;
            }
            if let Some(p) = prev {
                out.push_str(self.space(p, i));
            }
            out.push_str(self.src(i));
            prev = Some(i);
        }
        out
    }

    /// For each token of `from..to`, the column (in characters) where it ends in
    /// `self.join(from, to)`; a dropped token ends where the one before it does.
    fn end_columns(&self, from: usize, to: usize) -> Vec<usize> {
        let mut ends = Vec::with_capacity(to - from);
        let (mut column, mut prev) = (0, None);
        for i in from..to {
            if !self.roles[i].dropped {
                if let Some(p) = prev {
                    column += self.space(p, i).len();
                }
                column += self.src(i).chars().count();
                prev = Some(i);
            }
            ends.push(column);
        }
        ends
    }

    fn comment_text(&self, c: &Comment) -> &'a str {
        self.text[c.range.to_range()].trim_end()
    }

    fn run(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut stack: Vec<Open> = Vec::new();
        let mut blank_pending = false;
        // Whether the last line written ends with an opener (no blank line after it).
        let mut after_opener = true;
        for (line, toks) in self.lines.iter().enumerate() {
            let comment = self.comments[line].as_ref();
            if toks.is_empty() && comment.is_none() {
                blank_pending = true;
                continue;
            }
            let first = toks.first().copied();
            let starts_with_closer = first.is_some_and(|f| is_closer(self.toks[f].kind));
            let indent = match (first, stack.last()) {
                (Some(_), Some(top)) if starts_with_closer => top.line_indent,
                (_, Some(top)) => top.inner,
                (_, None) => 0,
            };
            if blank_pending && !out.is_empty() && !after_opener && !starts_with_closer {
                out.push(String::new());
            }
            blank_pending = false;
            let pad = " ".repeat(indent);
            let mut lines_out: Vec<String> = Vec::new();
            match first {
                None => lines_out.push(format!("{pad}{}", comment.map_or("", |c| self.comment_text(c)))),
                Some(f) => {
                    let end = toks[toks.len() - 1] + 1;
                    // The one-line scenarios on this line, wherever they start on it (a
                    // scenario may follow another item): each that reaches past MAX_WIDTH, as
                    // the line is written so far, is split; what comes before its `{` stays
                    // on one line with it, then one setting per line, then its `}` and what
                    // follows it.
                    let here = &self.scenarios[self.scenarios.partition_point(|(start, _)| *start < f)
                        ..self.scenarios.partition_point(|(start, _)| *start < end)];
                    let ends = if here.is_empty() { Vec::new() } else { self.end_columns(f, end) };
                    let mut from = f;
                    for (_, s) in here {
                        // The width of the line so far from `from` to the scenario's `}`.
                        let start = ends[from - f] - self.src(from).chars().count();
                        if indent + ends[s.close - f] - start <= MAX_WIDTH {
                            continue;
                        }
                        lines_out.push(format!("{pad}{}", self.join(from, s.open + 1)));
                        for &(a, b) in &s.settings {
                            lines_out.push(format!("{pad}{INDENT}{}", self.join(a, b)));
                        }
                        from = s.close;
                    }
                    lines_out.push(format!("{pad}{}", self.join(from, end)));
                    if let Some(c) = comment {
                        let last = lines_out.last_mut().expect("one line at least");
                        last.push_str("  ");
                        last.push_str(self.comment_text(c));
                    }
                }
            }
            out.extend(lines_out);
            // Track the brackets this line opens and closes.
            for &i in toks {
                let kind = self.toks[i].kind;
                if is_opener(kind) {
                    let inner = match stack.last() {
                        Some(top) if top.line == line => top.inner,
                        _ => indent + INDENT.len(),
                    };
                    stack.push(Open { line_indent: indent, inner, line });
                } else if is_closer(kind) {
                    stack.pop();
                }
            }
            after_opener = toks.last().is_some_and(|&l| is_opener(self.toks[l].kind));
        }
        if out.is_empty() {
            return String::new();
        }
        let mut text = out.join("\n");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(text: &str) -> String {
        format(&FileName::new("t.net"), text).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn spaces_and_indentation() {
        let input = "block b(x,k:int=3){\ny=conv2d( x,64,k = 3 ,stride=2)\n  z = -y*2+ x.shape[1]\nreturn z}\n";
        assert_eq!(
            fmt(input),
            "block b(x, k: int = 3) {\n    y = conv2d(x, 64, k=3, stride=2)\n    z = -y * 2 + x.shape[1]\n    return z }\n"
        );
    }

    #[test]
    fn ranges_are_tight_and_floor_division_spaced() {
        let input =
            "block b(x, n: int) {\nfor i in 0 .. n{x = relu(x)}\nfor j in (n-1)..-n*2 { k = n//2 }\nreturn x\n}\n";
        assert_eq!(
            fmt(input),
            "block b(x, n: int) {\n    for i in 0..n { x = relu(x) }\n    for j in (n - 1)..-n * 2 { k = n // 2 }\n    return x\n}\n"
        );
    }

    #[test]
    fn a_buffers_options_are_keyword_arguments() {
        let input = "block b(x) {\na, c = split(x, 2)\nbuffer m: f32[4],persistent = false\nreturn a\n}\n";
        assert_eq!(
            fmt(input),
            "block b(x) {\n    a, c = split(x, 2)\n    buffer m: f32[4], persistent=false\n    return a\n}\n"
        );
    }

    #[test]
    fn blank_lines_collapse_and_comments_stay() {
        let input = "\n\n# lead\nblock b(x) {\n\n    return x   # trailing\n\n}\n\n\n\nmodel m() {\n  input x: f32[N,8]\n  return b(x)\n}\n\n";
        assert_eq!(
            fmt(input),
            "# lead\nblock b(x) {\n    return x  # trailing\n}\n\nmodel m() {\n    input x: f32[N, 8]\n    return b(x)\n}\n"
        );
    }

    #[test]
    fn long_one_line_scenarios_split() {
        let m = "model m() {\n    input x: f32[N, 8]\n    return x\n}\n";
        let short = format!("{m}infer s {{ model m();batch 1 no_grad   eval }}\n");
        assert_eq!(fmt(&short), format!("{m}infer s {{ model m(); batch 1  no_grad  eval }}\n"));
        let long = format!(
            "{m}infer serve {{ model m()  batch 1  no_grad  eval  device t4  budget 300 MiB  overhead 100 MiB  margin 1.2 }}  # c\n"
        );
        assert_eq!(
            fmt(&long),
            format!(
                "{m}infer serve {{\n    model m()\n    batch 1\n    no_grad\n    eval\n    device t4\n    budget 300 MiB\n    overhead 100 MiB\n    margin 1.2\n}}  # c\n"
            )
        );
    }

    #[test]
    fn continuation_lines_indent_once() {
        let input = "block b(\nx,\nk: int = 1,\n) {\ny = conv2d(\nx,\n64, k=3,\n)\nz = (y\n+ y)\nreturn z\n}\n";
        assert_eq!(
            fmt(input),
            "block b(\n    x,\n    k: int = 1,\n) {\n    y = conv2d(\n        x,\n        64, k=3,\n    )\n    z = (y\n        + y)\n    return z\n}\n"
        );
    }

    #[test]
    fn refuses_syntax_errors() {
        let e = format(&FileName::new("t.net"), "block b(x) {\n    y = \n}\n").unwrap_err();
        assert!(matches!(e, FormatError::Syntax(d) if !d.is_empty()));
    }
}
