//! Rendering diagnostics for people and machines, at the edge of the compiler.
//!
//! - `human`: miette's graphical report (colour on a terminal, plain text otherwise);
//! - `short`: codespan-reporting's one-line rustc style, `file:line:col: error[E0204]: ...`;
//! - `json`: a stable, documented schema (spec/diagnostics.md), version 1;
//! - `sarif`: SARIF 2.1.0 for code scanning ([`sarif`](mod@sarif));
//! - `github`: GitHub Actions workflow commands, annotations in a run ([`github`](mod@github)).
//!
//! Renderers read source texts through [`Sources`]; every diagnostic's labels must already be
//! byte ranges (see [`crate::host::file_diagnostics`]).

use std::fmt;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::term;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode, SourceSpan,
    SpanContents,
};
use serde::Serialize;

use crate::diagnostics::{Diagnostic, FileName, Label, Place, Severity, TextRange, ends_line, line_starts};

pub mod github;
pub mod sarif;

pub use github::github;
pub use sarif::sarif;

/// Access to the text of files, by name.
pub trait Sources {
    /// The text of `file`, if known.
    fn text(&self, file: &FileName) -> Option<&str>;
}

impl Sources for std::collections::BTreeMap<FileName, String> {
    fn text(&self, file: &FileName) -> Option<&str> {
        self.get(file).map(String::as_str)
    }
}

fn range_of(label: &Label) -> TextRange {
    match label.place {
        Place::Range(r) => r,
        Place::Node(_) => TextRange::default(),
    }
}

/// A 1-based line and column (in characters) of a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineCol {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in Unicode scalar values.
    pub column: u32,
}

/// The line and column of `offset` in `text` (clamped to the text and to a character
/// boundary). For many offsets of one file, the renderers index its lines once instead.
pub fn line_col(text: &str, offset: u32) -> LineCol {
    Lines::new(text).line_col(offset)
}

/// `text` with each lone `\r` made a `\n`: the same length, so the same offsets, and the
/// same lines for miette, which counts lines its own way, as the reports and the language
/// server count them.
fn lf_breaks(text: &str) -> String {
    let bytes = text.as_bytes();
    if !bytes.contains(&b'\r') {
        return text.to_string();
    }
    // ASCII for ASCII: the text stays UTF-8 and every offset keeps its character.
    let fixed: Vec<u8> =
        bytes.iter().enumerate().map(|(i, &b)| if b == b'\r' && ends_line(bytes, i) { b'\n' } else { b }).collect();
    String::from_utf8(fixed).unwrap_or_else(|_| text.to_string())
}

/// Clamps a range to the text and to character boundaries, so renderers never panic.
fn clamp(text: &str, r: TextRange) -> std::ops::Range<usize> {
    let fix = |mut o: usize| {
        o = o.min(text.len());
        while !text.is_char_boundary(o) {
            o -= 1;
        }
        o
    };
    let start = fix(r.start as usize);
    let end = fix(r.end as usize).max(start);
    start..end
}

// ---------------------------------------------------------------------------------------
// Human: miette

/// A diagnostic as miette sees it: labels in the primary file are shown in the snippet;
/// labels in other files become notes with their location.
struct MietteView<'a> {
    diagnostic: &'a Diagnostic,
    /// The primary file's whole text.
    text: &'a str,
    /// The lines of it that the snippet shows.
    source: Window<'a>,
    /// Whether to show source snippets (not for lines too long to draw).
    snippets: bool,
}

/// The lines of one file, indexed once for all of its diagnostics: finding each
/// diagnostic's line from the start of the file made 50,000 diagnostics quadratic, and
/// counting each column from its line's start made 80,000 diagnostics on one long line
/// quadratic too (49 s in the short format).
struct Lines<'a> {
    text: &'a str,
    /// Each line's first byte ([`line_starts`]: `\n`, `\r\n` and a lone `\r` end a line).
    starts: Vec<u32>,
    /// The text is ASCII: a column is a byte count.
    ascii: bool,
    /// The last position counted (byte offset, characters and UTF-16 units from its line's
    /// start): diagnostics come in source order, so the next column on the same line is
    /// counted from there, not from the line's start.
    last: std::cell::Cell<(usize, usize, usize)>,
}

/// A position as the renderers give it: 1-based line, and 1-based column in characters and
/// in UTF-16 code units.
#[derive(Debug, Clone, Copy)]
struct Position {
    line: u32,
    chars: u32,
    utf16: u32,
}

impl Position {
    fn line_col(self) -> LineCol {
        LineCol { line: self.line, column: self.chars }
    }

    fn line_col_utf16(self) -> LineCol {
        LineCol { line: self.line, column: self.utf16 }
    }
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines { text, starts: line_starts(text), ascii: text.is_ascii(), last: std::cell::Cell::new((0, 0, 0)) }
    }

    /// The 0-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s as usize <= offset) - 1
    }

    /// The bytes of lines `first..=last` (0-based, clamped), with their line ends.
    fn span(&self, first: usize, last: usize) -> std::ops::Range<usize> {
        let start = self.starts[first.min(self.starts.len() - 1)] as usize;
        let end = self.starts.get(last + 1).map_or(self.text.len(), |&s| s as usize);
        start..end
    }

    /// The length of the line holding byte `offset` (without its line end).
    fn length_at(&self, offset: usize) -> usize {
        let r = self.span(self.line(offset), self.line(offset));
        self.text[r].trim_end_matches(['\n', '\r']).len()
    }

    /// The position of byte `offset` (clamped to the text and to a character boundary).
    fn position(&self, offset: u32) -> Position {
        let at = clamp(self.text, TextRange::empty(offset)).start;
        let line = self.line(at);
        let line_start = self.starts[line] as usize;
        let (chars, utf16) = if self.ascii {
            (at - line_start, at - line_start)
        } else {
            let count = |piece: &str| piece.chars().fold((0, 0), |(n, u), c| (n + 1, u + c.len_utf16()));
            let (last, chars, utf16) = self.last.get();
            let next_line = self.starts.get(line + 1).map_or(usize::MAX, |&s| s as usize);
            let counted = if line_start <= last && last <= at && at - last <= at - line_start {
                let (n, u) = count(&self.text[last..at]);
                (chars + n, utf16 + u)
            } else if at < last && last < next_line && last - at < at - line_start {
                // A label before the last one on the same line: count back from the last.
                let (n, u) = count(&self.text[at..last]);
                (chars - n, utf16 - u)
            } else {
                count(&self.text[line_start..at])
            };
            self.last.set((at, counted.0, counted.1));
            counted
        };
        Position { line: line as u32 + 1, chars: chars as u32 + 1, utf16: utf16 as u32 + 1 }
    }

    /// The line and column of `offset`, as [`line_col`] gives them.
    fn line_col(&self, offset: u32) -> LineCol {
        self.position(offset).line_col()
    }
}

/// The [`Lines`] of every file that a label of `diagnostics` points into, each indexed once.
struct Index<'a> {
    files: std::collections::HashMap<&'a FileName, Lines<'a>>,
    empty: Lines<'static>,
}

impl<'a> Index<'a> {
    fn new(diagnostics: &'a [Diagnostic], sources: &'a dyn Sources) -> Self {
        let mut files = std::collections::HashMap::new();
        let labels = diagnostics.iter().flat_map(|d| &d.labels).map(|l| &l.file);
        let edits = diagnostics.iter().flat_map(|d| &d.fixes).flat_map(|f| &f.edits).map(|e| &e.file);
        for file in labels.chain(edits) {
            files.entry(file).or_insert_with(|| Lines::new(sources.text(file).unwrap_or("")));
        }
        Index { files, empty: Lines::new("") }
    }

    /// The lines of `file` (empty when its text is unknown).
    fn of(&self, file: &FileName) -> &Lines<'_> {
        self.files.get(file).unwrap_or(&self.empty)
    }

    /// The position of `label`'s start and end.
    fn bounds(&self, label: &Label) -> (Position, Position) {
        let lines = self.of(&label.file);
        let range = range_of(label);
        (lines.position(range.start), lines.position(range.end))
    }
}

/// Some whole lines of a file, for miette: it reads a snippet's context by scanning its
/// source from the start, so it is handed only the lines it shows (spans are relative to
/// the window; line numbers are the file's).
struct Window<'a> {
    name: String,
    text: &'a str,
    /// The file's byte offset of the window's first byte.
    start: usize,
    /// The 0-based line of the window's first byte.
    first_line: usize,
}

impl SourceCode for Window<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let inner = self.text.as_bytes().read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// Lines longer than this are not drawn as snippets (miette cannot pad past 65,535 columns,
/// and nobody reads such a snippet); the location is given as a note instead.
const MAX_SNIPPET_LINE: usize = 2000;

impl fmt::Debug for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl fmt::Display for MietteView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diagnostic.message)
    }
}

impl std::error::Error for MietteView<'_> {}

impl miette::Diagnostic for MietteView<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let info = self.diagnostic.code.info();
        Some(Box::new(format!("{}({})", info.code, info.name)))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Help => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let help = self.diagnostic.help.as_ref()?;
        Some(Box::new(help.clone()))
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        if self.snippets { Some(&self.source) } else { None }
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if !self.snippets {
            return None;
        }
        let primary_file = &self.diagnostic.primary().file;
        let text = self.text;
        // Spans are relative to the window.
        let shift = self.source.start;
        let in_file: Vec<&Label> = self.diagnostic.labels.iter().filter(|l| &l.file == primary_file).collect();
        let inner: Vec<std::ops::Range<usize>> = in_file
            .iter()
            .filter(|l| !l.primary)
            .map(|l| clamp(text, range_of(l)))
            .filter(|r| {
                let p = clamp(text, range_of(self.diagnostic.primary()));
                p.start <= r.start && r.end <= p.end && *r != p
            })
            .collect();
        let labels: Vec<LabeledSpan> = in_file
            .iter()
            .map(|l| {
                let mut r = clamp(text, range_of(l));
                if l.primary && !inner.is_empty() {
                    r = outside_of(text, r, &inner);
                }
                let message = if l.message.is_empty() { None } else { Some(l.message.clone()) };
                if l.primary {
                    LabeledSpan::new_primary_with_span(message, (r.start - shift, r.end - r.start))
                } else {
                    LabeledSpan::new_with_span(message, (r.start - shift, r.end - r.start))
                }
            })
            .collect();
        Some(Box::new(labels.into_iter()))
    }
}

/// miette cannot draw labels nested inside another: the outer (primary) label of `y + x`
/// whose operands carry labels is drawn on the part between them, `+`. Returns the first
/// gap of `outer` outside `inner` that holds more than brackets, commas and spaces.
fn outside_of(text: &str, outer: std::ops::Range<usize>, inner: &[std::ops::Range<usize>]) -> std::ops::Range<usize> {
    let mut inner = inner.to_vec();
    inner.sort_by_key(|r| r.start);
    let mut cursor = outer.start;
    let mut gaps = Vec::new();
    for r in &inner {
        if r.start > cursor {
            gaps.push(cursor..r.start);
        }
        cursor = cursor.max(r.end);
    }
    if cursor < outer.end {
        gaps.push(cursor..outer.end);
    }
    let filler = |c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '[' | ']');
    for gap in gaps {
        let piece = &text[gap.clone()];
        let start = gap.start + (piece.len() - piece.trim_start_matches(filler).len());
        let end = gap.end - (piece.len() - piece.trim_end_matches(filler).len());
        if start < end {
            return start..end;
        }
    }
    outer
}

/// Renders diagnostics with miette's graphical handler. `color` chooses ANSI colours and
/// Unicode art; without it the output is plain ASCII-safe text suited to logs and snapshots.
pub fn human(diagnostics: &[Diagnostic], sources: &dyn Sources, color: bool) -> String {
    let theme = if color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let mut out = String::new();
    // Each file's text once, with lone `\r`s made `\n`s (`lf_breaks`: the same offsets, and
    // lines as miette counts them), and its lines indexed once for all its diagnostics.
    let mut texts: std::collections::HashMap<&FileName, String> = std::collections::HashMap::new();
    for label in diagnostics.iter().flat_map(|d| &d.labels) {
        if !texts.contains_key(&label.file)
            && let Some(text) = sources.text(&label.file)
        {
            texts.insert(&label.file, lf_breaks(text));
        }
    }
    let indexed: std::collections::HashMap<&FileName, Lines<'_>> =
        texts.iter().map(|(file, text)| (*file, Lines::new(text))).collect();
    let lines_of = |file| indexed.get(file);
    for d in diagnostics {
        let primary_file = d.primary().file.clone();
        let other_notes: Vec<String> = d
            .labels
            .iter()
            .filter(|l| l.file != primary_file)
            .map(|l| {
                let at = lines_of(&l.file).map(|t| t.line_col(range_of(l).start));
                match at {
                    Some(lc) => format!("{}: {}:{}:{}", l.message, l.file, lc.line, lc.column),
                    None => format!("{}: {}", l.message, l.file),
                }
            })
            .collect();
        let empty = Lines::new("");
        let lines = lines_of(&d.primary().file).unwrap_or(&empty);
        let text = lines.text;
        let in_file = || d.labels.iter().filter(|l| l.file == primary_file).map(|l| clamp(text, range_of(l)));
        let snippets = in_file().all(|r| lines.length_at(r.start) <= MAX_SNIPPET_LINE);
        let mut located = Vec::new();
        if !snippets {
            let lc = lines.line_col(range_of(d.primary()).start);
            located.push(format!("at {}:{}:{} (the line is too long to show)", primary_file, lc.line, lc.column));
        }
        // Notes, and labels that point into other files, go in the footer.
        let footer: Vec<String> =
            located.iter().chain(&d.notes).chain(&other_notes).map(|n| format!("note: {n}")).collect();
        let mut handler = GraphicalReportHandler::new_themed(theme.clone()).with_width(100).with_links(false);
        if !footer.is_empty() {
            handler = handler.with_footer(footer.join("\n"));
        }
        // The labels' lines and two more on each side (miette shows one of context).
        let first = in_file().map(|r| lines.line(r.start)).min().unwrap_or(0).saturating_sub(2);
        let last = in_file().map(|r| lines.line(r.end)).max().unwrap_or(0) + 2;
        let window = lines.span(first, last);
        let source = Window {
            name: primary_file.to_string(),
            text: &text[window.clone()],
            start: window.start,
            first_line: first,
        };
        let view = MietteView { diagnostic: d, text, source, snippets };
        let _ = handler.render_report(&mut out, &view);
        out.push('\n');
    }
    out
}

// ---------------------------------------------------------------------------------------
// Short: codespan-reporting

/// The files as codespan-reporting reads them: names and texts by index, with lines and
/// columns from [`Lines`] (codespan's own `SimpleFiles` counts each column from its line's
/// start, and lines on `\n` only).
struct CodespanFiles<'a> {
    names: Vec<String>,
    lines: Vec<Lines<'a>>,
}

impl<'a> codespan_reporting::files::Files<'a> for CodespanFiles<'a> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, codespan_reporting::files::Error> {
        self.names.get(id).map(String::as_str).ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, codespan_reporting::files::Error> {
        self.lines.get(id).map(|l| l.text).ok_or(codespan_reporting::files::Error::FileMissing)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        let lines = self.lines.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        Ok(lines.line(byte_index.min(lines.text.len())))
    }

    fn column_number(
        &'a self,
        id: usize,
        _line_index: usize,
        byte_index: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        let lines = self.lines.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        Ok(lines.position(byte_index as u32).chars as usize)
    }

    fn line_range(
        &'a self,
        id: usize,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        let lines = self.lines.get(id).ok_or(codespan_reporting::files::Error::FileMissing)?;
        if line_index >= lines.starts.len() {
            return Err(codespan_reporting::files::Error::LineTooLarge {
                given: line_index,
                max: lines.starts.len() - 1,
            });
        }
        Ok(lines.span(line_index, line_index))
    }
}

/// Renders one line per diagnostic, rustc's `--error-format=short` style.
pub fn short(diagnostics: &[Diagnostic], sources: &dyn Sources, color: bool) -> String {
    let mut files = CodespanFiles { names: Vec::new(), lines: Vec::new() };
    let mut ids = std::collections::HashMap::new();
    for label in diagnostics.iter().flat_map(|d| &d.labels) {
        ids.entry(&label.file).or_insert_with(|| {
            files.names.push(label.file.to_string());
            files.lines.push(Lines::new(sources.text(&label.file).unwrap_or("")));
            files.names.len() - 1
        });
    }
    let config = term::Config { display_style: term::DisplayStyle::Short, ..term::Config::default() };
    let mut buffer = if color { term::termcolor::Buffer::ansi() } else { term::termcolor::Buffer::no_color() };
    for d in diagnostics {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Help => cs::Severity::Help,
        };
        let labels = d
            .labels
            .iter()
            .map(|l| {
                let id = ids[&l.file];
                let r = clamp(files.lines[id].text, range_of(l));
                let label = if l.primary { cs::Label::primary(id, r) } else { cs::Label::secondary(id, r) };
                label.with_message(l.message.clone())
            })
            .collect();
        let mut notes = d.notes.clone();
        notes.extend(d.help.iter().map(|h| format!("help: {h}")));
        let diagnostic = cs::Diagnostic::new(severity)
            .with_code(d.code.info().code)
            .with_message(&d.message)
            .with_labels(labels)
            .with_notes(notes);
        let _ = term::emit_to_write_style(&mut buffer, &config, &files, &diagnostic);
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

// ---------------------------------------------------------------------------------------
// JSON

/// A label in the JSON output.
#[derive(Debug, Serialize)]
pub struct JsonLabel {
    /// The file.
    pub file: FileName,
    /// Byte range.
    pub range: TextRange,
    /// Start position.
    pub start: LineCol,
    /// End position.
    pub end: LineCol,
    /// The label's text.
    pub message: String,
    /// Whether this is the primary label.
    pub primary: bool,
}

/// A diagnostic in the JSON output.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic {
    /// Stable code, `E0204`.
    pub code: &'static str,
    /// Kebab-case name, `undefined-name`.
    pub name: &'static str,
    /// `error`, `warning` or `help`.
    pub severity: Severity,
    /// The message.
    pub message: String,
    /// The primary label's file.
    pub file: FileName,
    /// The primary label's start.
    pub start: LineCol,
    /// The primary label's end.
    pub end: LineCol,
    /// All labels, primary first.
    pub labels: Vec<JsonLabel>,
    /// Notes.
    pub notes: Vec<String>,
    /// Help, if any.
    pub help: Option<String>,
}

/// Counts in the JSON output.
#[derive(Debug, Serialize)]
pub struct JsonSummary {
    /// Files checked.
    pub files: usize,
    /// Error-level diagnostics.
    pub errors: usize,
    /// Warning-level diagnostics.
    pub warnings: usize,
}

/// The JSON document of `netc check --format json`.
#[derive(Debug, Serialize)]
pub struct JsonReport {
    /// Schema version; bumped on any incompatible change.
    pub version: u32,
    /// The diagnostics, by file, then in source order.
    pub diagnostics: Vec<JsonDiagnostic>,
    /// Counts.
    pub summary: JsonSummary,
}

/// Builds the JSON report of `diagnostics` over `files` checked files.
pub fn json_report(diagnostics: &[Diagnostic], sources: &dyn Sources, files: usize) -> JsonReport {
    let index = Index::new(diagnostics, sources);
    let labels = |d: &Diagnostic| -> Vec<JsonLabel> {
        d.labels
            .iter()
            .map(|l| {
                let (start, end) = index.bounds(l);
                JsonLabel {
                    file: l.file.clone(),
                    range: range_of(l),
                    start: start.line_col(),
                    end: end.line_col(),
                    message: l.message.clone(),
                    primary: l.primary,
                }
            })
            .collect()
    };
    let diagnostics: Vec<JsonDiagnostic> = diagnostics
        .iter()
        .map(|d| {
            let labels = labels(d);
            let info = d.code.info();
            JsonDiagnostic {
                code: info.code,
                name: info.name,
                severity: d.severity,
                message: d.message.clone(),
                file: labels[0].file.clone(),
                start: labels[0].start,
                end: labels[0].end,
                labels,
                notes: d.notes.clone(),
                help: d.help.clone(),
            }
        })
        .collect();
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    JsonReport { version: 1, diagnostics, summary: JsonSummary { files, errors, warnings } }
}

/// Renders the JSON report, pretty-printed.
pub fn json(diagnostics: &[Diagnostic], sources: &dyn Sources, files: usize) -> String {
    serde_json::to_string_pretty(&json_report(diagnostics, sources, files)).expect("plain data serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::line_start;

    /// The position of `offset` counted from the start of the text, the slow and plain way.
    fn counted(text: &str, offset: usize) -> (u32, u32, u32) {
        let before = &text[..offset];
        let line_start = line_start(text, offset);
        let line = line_starts(text).iter().filter(|&&s| s as usize <= offset).count();
        let in_line = &before[line_start..];
        (line as u32, in_line.chars().count() as u32 + 1, in_line.encode_utf16().count() as u32 + 1)
    }

    #[test]
    fn columns_count_characters_and_utf16_code_units() {
        let text = "# \u{e9}\u{1F600}x\nab";
        let lines = Lines::new(text);
        let x = text.find('x').expect("x") as u32;
        // `# ` is 2 characters and units, `é` 1 and 1, the emoji 1 and 2.
        let at_x = lines.position(x);
        assert_eq!((at_x.line, at_x.chars, at_x.utf16), (1, 5, 6));
        let end = lines.position(text.len() as u32);
        assert_eq!((end.line, end.chars, end.utf16), (2, 3, 3));
    }

    #[test]
    fn positions_in_any_order_match_counting_from_the_start() {
        // Long non-ASCII lines, every line break, and queries forwards, backwards, across
        // lines and inside a character: each answer is the one counted from scratch.
        let text = "a\u{e9}b\u{1F600}c d\u{e9}\u{e9}\re\u{1F600}f\r\ng\u{e9}\nh\u{1F600}\u{1F600}i";
        let lines = Lines::new(text);
        let n = text.len();
        let order: Vec<usize> = (0..=n).chain((0..=n).rev()).chain((0..=n).map(|i| i * 7 % (n + 1))).collect();
        for offset in order {
            let at = clamp(text, TextRange::empty(offset as u32)).start;
            let p = lines.position(offset as u32);
            assert_eq!((p.line, p.chars, p.utf16), counted(text, at), "offset {offset}");
            assert_eq!(p.line_col(), line_col(text, offset as u32), "offset {offset}");
        }
    }
}
