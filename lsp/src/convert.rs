//! Translation between the IDE layer's plain data (byte offsets, file names) and LSP types
//! (UTF-16 line/column positions, URIs). Nothing here analyzes anything.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use netc::diagnostics::{Diagnostic, FileName, Place, Severity, TextRange, line_end, line_starts};
use netc::ide;
use tower_lsp_server::ls_types as lsp;

/// Where the lines of a text start. Lines end as LSP counts them, at `\n`, `\r\n` and a lone
/// `\r` (the `line-index` crate counts `\n` only: a lone `\r` put every position after it a
/// line off), with the table the compiler's reports and formatter use
/// ([`netc::diagnostics::line_starts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u32>,
    len: usize,
}

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &str) -> Self {
        LineIndex { starts: line_starts(text), len: text.len() }
    }

    /// The length of the text indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the text indexed is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The length of `text` in UTF-16 code units.
fn utf16_len(text: &str) -> u32 {
    if text.is_ascii() { text.len() as u32 } else { text.encode_utf16().count() as u32 }
}

/// Positions of one text: byte offsets to UTF-16 line/column and back, never panicking on
/// positions out of range (they are clamped to the line or the text).
pub struct LineMap<'a> {
    text: &'a str,
    index: Arc<LineIndex>,
}

impl<'a> LineMap<'a> {
    /// The map of `text`.
    pub fn new(text: &'a str) -> Self {
        LineMap { text, index: Arc::new(LineIndex::new(text)) }
    }

    /// The map of `text` with its index made before (an open document's, kept until it
    /// changes: every request after an edit would index a large file again).
    pub fn with_index(text: &'a str, index: Arc<LineIndex>) -> Self {
        // An index of another text (it cannot happen: an open document's index is made with
        // each change of its text) would misplace everything: made again.
        if index.len() != text.len() {
            return LineMap::new(text);
        }
        LineMap { text, index }
    }

    /// The LSP position of a byte offset.
    pub fn position(&self, offset: u32) -> lsp::Position {
        let offset = ide::clamp_offset(self.text, offset);
        let starts = &self.index.starts;
        // The first line starts at 0: the partition point is at least 1.
        let line = starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = starts.get(line).map_or(0, |&s| s as usize);
        let character = self.text.get(start..offset as usize).map_or(0, utf16_len);
        lsp::Position { line: line as u32, character }
    }

    /// The byte offset of an LSP position: a line past the end is the end of the text, a
    /// column past the end of its line is the end of the line, a column inside a character
    /// (a surrogate pair's second half) is the character's start.
    pub fn offset(&self, position: lsp::Position) -> u32 {
        let Some(&start) = self.index.starts.get(position.line as usize) else { return self.text.len() as u32 };
        let start = start as usize;
        let end = line_end(self.text, start);
        let line = self.text.get(start..end).unwrap_or("");
        let wanted = position.character as usize;
        if line.is_ascii() {
            return (start + wanted.min(line.len())) as u32;
        }
        let mut units = 0;
        for (at, c) in line.char_indices() {
            units += c.len_utf16();
            if units > wanted {
                return (start + at) as u32;
            }
        }
        end as u32
    }

    /// The LSP range of a byte range.
    pub fn range(&self, range: TextRange) -> lsp::Range {
        lsp::Range { start: self.position(range.start), end: self.position(range.end) }
    }

    /// The byte range of an LSP range (ordered).
    pub fn text_range(&self, range: lsp::Range) -> TextRange {
        let (a, b) = (self.offset(range.start), self.offset(range.end));
        TextRange::new(a.min(b), a.max(b))
    }

    /// The length of a byte range in UTF-16 code units.
    pub fn utf16_len(&self, range: TextRange) -> u32 {
        self.text.get(range.to_range()).map_or(0, utf16_len)
    }
}

/// The scheme of the standard library's files when they are not on disk.
pub const STDLIB_SCHEME: &str = "netc-std";

/// Which URI names which file.
#[derive(Debug, Clone, Default)]
pub struct Uris {
    /// Files whose URI is not a file path (unsaved documents), and the stdlib files.
    special: HashMap<FileName, lsp::Uri>,
    by_uri: HashMap<String, FileName>,
}

impl Uris {
    /// The URIs of the standard library: the files under `stdlib_dir` if they hold the
    /// embedded text, `netc-std:///nn.net` otherwise.
    pub fn new(stdlib_dir: Option<&Path>) -> Self {
        let mut uris = Uris::default();
        for (module, text) in netc::db::STDLIB_SOURCES {
            let name = netc::db::stdlib_file_name(module);
            let relative = name.as_str().trim_start_matches("<std>/");
            let on_disk = stdlib_dir
                .map(|d| d.join(relative))
                .filter(|p| netc::workspace::read_regular_text(p).is_ok_and(|t| t == *text));
            let uri = on_disk
                .and_then(lsp::Uri::from_file_path)
                .or_else(|| lsp::Uri::from_str(&format!("{STDLIB_SCHEME}:///{relative}")).ok());
            if let Some(uri) = uri {
                uris.by_uri.insert(uri.as_str().to_string(), name.clone());
                uris.special.insert(name, uri);
            }
        }
        uris
    }

    /// The file name of a URI: its path for `file:` URIs, the URI itself otherwise.
    pub fn name(&self, uri: &lsp::Uri) -> FileName {
        if let Some(name) = self.by_uri.get(uri.as_str()) {
            return name.clone();
        }
        if uri.scheme().as_str() == "file"
            && let Some(path) = uri.to_file_path()
        {
            return FileName::new(path.to_string_lossy().replace('\\', "/"));
        }
        FileName::new(uri.as_str())
    }

    /// Remembers a document's URI (for URIs that are not file paths).
    pub fn remember(&mut self, uri: &lsp::Uri, name: &FileName) {
        if uri.scheme().as_str() != "file" {
            self.special.insert(name.clone(), uri.clone());
            self.by_uri.insert(uri.as_str().to_string(), name.clone());
        }
    }

    /// The URI of a file name.
    pub fn uri(&self, name: &FileName) -> Option<lsp::Uri> {
        if let Some(uri) = self.special.get(name) {
            return Some(uri.clone());
        }
        if name.as_str().starts_with('/') {
            return lsp::Uri::from_file_path(name.as_str());
        }
        lsp::Uri::from_str(name.as_str()).ok()
    }

    /// Whether a URI names a standard-library file.
    pub fn stdlib_text(&self, uri: &lsp::Uri) -> Option<&'static str> {
        let name = self.by_uri.get(uri.as_str())?;
        netc::db::STDLIB_SOURCES.iter().find(|(m, _)| &netc::db::stdlib_file_name(m) == name).map(|(_, t)| *t)
    }
}

/// A diagnostic in LSP form; `texts` gives the text of every file a label points into.
pub fn diagnostic(
    d: &Diagnostic,
    map: &LineMap<'_>,
    uris: &Uris,
    texts: &dyn Fn(&FileName) -> Option<String>,
) -> lsp::Diagnostic {
    let range_of = |place: &Place| match place {
        Place::Range(r) => *r,
        Place::Node(_) => TextRange::default(),
    };
    let severity = match d.severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Help => lsp::DiagnosticSeverity::HINT,
    };
    let mut message = d.message.clone();
    for note in &d.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let primary = d.primary();
    let mut related = Vec::new();
    for label in &d.labels {
        if label.primary && label.message.is_empty() {
            continue;
        }
        let Some(uri) = uris.uri(&label.file) else { continue };
        let range = if label.file == primary.file {
            map.range(range_of(&label.place))
        } else {
            match texts(&label.file) {
                Some(text) => LineMap::new(&text).range(range_of(&label.place)),
                None => lsp::Range::default(),
            }
        };
        let message = if label.message.is_empty() { "related".to_string() } else { label.message.clone() };
        related.push(lsp::DiagnosticRelatedInformation { location: lsp::Location { uri, range }, message });
    }
    let info = d.code.info();
    lsp::Diagnostic {
        range: map.range(range_of(&primary.place)),
        severity: Some(severity),
        code: Some(lsp::NumberOrString::String(info.code.to_string())),
        code_description: None,
        source: Some("netc".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: Some(serde_json::json!({ "name": info.name })),
    }
}

/// The LSP token types, in legend order, and the index of each class.
pub const TOKEN_TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::KEYWORD,
    lsp::SemanticTokenType::FUNCTION,
    lsp::SemanticTokenType::METHOD,
    lsp::SemanticTokenType::CLASS,
    lsp::SemanticTokenType::EVENT,
    lsp::SemanticTokenType::VARIABLE,
    lsp::SemanticTokenType::PARAMETER,
    lsp::SemanticTokenType::PROPERTY,
    lsp::SemanticTokenType::ENUM_MEMBER,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::OPERATOR,
    lsp::SemanticTokenType::NAMESPACE,
];

/// The LSP token modifiers, in legend order.
pub const TOKEN_MODIFIERS: &[lsp::SemanticTokenModifier] = &[
    lsp::SemanticTokenModifier::DECLARATION,
    lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
    lsp::SemanticTokenModifier::DOCUMENTATION,
];

fn token_type(class: ide::SemanticClass) -> u32 {
    use ide::SemanticClass::*;
    match class {
        Keyword => 0,
        Op => 1,
        Block => 2,
        Model => 3,
        Scenario => 4,
        Variable => 5,
        Parameter => 6,
        Property => 7,
        EnumMember => 8,
        Type => 9,
        Number => 10,
        String => 11,
        Comment => 12,
        Operator => 13,
        Namespace => 14,
    }
}

/// Semantic tokens in LSP's relative encoding.
pub fn semantic_tokens(tokens: &[ide::SemanticToken], map: &LineMap<'_>) -> Vec<lsp::SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut line, mut start) = (0u32, 0u32);
    for t in tokens {
        let pos = map.position(t.range.start);
        let length = map.utf16_len(t.range);
        if length == 0 {
            continue;
        }
        let delta_line = pos.line - line;
        let delta_start = if delta_line == 0 { pos.character - start } else { pos.character };
        let modifiers =
            u32::from(t.declaration) | (u32::from(t.default_library) << 1) | (u32::from(t.documentation) << 2);
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type: token_type(t.class),
            token_modifiers_bitset: modifiers,
        });
        line = pos.line;
        start = pos.character;
    }
    out
}

/// The LSP kind of a completion.
pub fn completion_kind(kind: ide::CompletionKind) -> lsp::CompletionItemKind {
    use ide::CompletionKind::*;
    match kind {
        Op => lsp::CompletionItemKind::FUNCTION,
        Block => lsp::CompletionItemKind::METHOD,
        Model => lsp::CompletionItemKind::CLASS,
        Variable => lsp::CompletionItemKind::VARIABLE,
        Keyword => lsp::CompletionItemKind::KEYWORD,
        Builtin => lsp::CompletionItemKind::FUNCTION,
        Setting => lsp::CompletionItemKind::PROPERTY,
        Value => lsp::CompletionItemKind::ENUM_MEMBER,
        KeywordArg => lsp::CompletionItemKind::FIELD,
        Type => lsp::CompletionItemKind::TYPE_PARAMETER,
        Module => lsp::CompletionItemKind::MODULE,
        Field => lsp::CompletionItemKind::FIELD,
    }
}

/// The sort group of a completion: keyword arguments and locals first.
pub fn completion_sort(kind: ide::CompletionKind) -> &'static str {
    use ide::CompletionKind::*;
    match kind {
        KeywordArg | Setting | Value | Field => "0",
        Variable => "1",
        Block | Model => "2",
        Op | Builtin => "3",
        Keyword | Type | Module => "4",
    }
}

/// The LSP kind of a symbol.
pub fn symbol_kind(kind: ide::SymbolKind) -> lsp::SymbolKind {
    use ide::SymbolKind::*;
    match kind {
        Op => lsp::SymbolKind::FUNCTION,
        Block => lsp::SymbolKind::METHOD,
        Model => lsp::SymbolKind::CLASS,
        Scenario => lsp::SymbolKind::EVENT,
        Input => lsp::SymbolKind::VARIABLE,
        Import => lsp::SymbolKind::MODULE,
    }
}

/// Markdown content.
pub fn markdown(value: String) -> lsp::MarkupContent {
    lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value }
}
