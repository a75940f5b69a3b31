//! The one diagnostic type of netc, and the catalogue of diagnostic codes.
//!
//! Every layer (syntax, semantics, later costs and lints) reports problems as [`Diagnostic`]
//! values. They are plain data: rendering (miette, codespan-reporting, JSON, LSP) happens at
//! the edge, in [`crate::render`]. A label points either at a byte range of a file or at a
//! syntax node (`item`, `node`): semantic queries report node locations so that their results
//! do not change when only whitespace or comments move (salsa early cutoff), and
//! [`crate::host::file_diagnostics`] turns node locations into byte ranges at the very end.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

/// How serious a diagnostic is. `Error` makes `netc check` exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Advice; never fails a build.
    Help,
    /// Something is probably wrong; fails a build only under `--deny warnings`.
    Warning,
    /// The program is wrong; analysis of the affected part stops.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Help => "help",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// The name of a source file as the user sees it (a path relative to where netc was started,
/// or `std/nn.net` for the embedded standard library). Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileName(pub Arc<str>);

impl FileName {
    /// Makes a file name from anything string-like.
    pub fn new(name: impl Into<Arc<str>>) -> Self {
        FileName(name.into())
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for FileName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A half-open byte range `start..end` in a source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct TextRange {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl TextRange {
    /// A range from `start` to `end` (clamped so that `end >= start`).
    pub fn new(start: u32, end: u32) -> Self {
        TextRange { start, end: end.max(start) }
    }

    /// An empty range at `offset`.
    pub fn empty(offset: u32) -> Self {
        TextRange { start: offset, end: offset }
    }

    /// The smallest range that covers both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// As a `usize` range, for slicing.
    pub fn to_range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The range moved by `delta` bytes (text inserted or removed before it).
    pub fn shifted(self, delta: i64) -> TextRange {
        let at = |offset: u32| (offset as i64 + delta).clamp(0, u32::MAX as i64) as u32;
        TextRange { start: at(self.start), end: at(self.end) }
    }
}

/// Whether the byte at `at` of `bytes` ends a line. Lines end as the Language Server
/// Protocol counts them (and spec/language.md says): at `\n`, at `\r\n` (the `\n` ends it)
/// and at a lone `\r`.
pub fn ends_line(bytes: &[u8], at: usize) -> bool {
    match bytes.get(at) {
        Some(b'\n') => true,
        Some(b'\r') => bytes.get(at + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// The byte offset of each line's start in `text` (line 1 starts at 0): the table that turns
/// offsets into lines (`partition_point`), for the formatter, the reports, the renderers and
/// the language server alike. Lines end at `\n`, `\r\n` and a lone `\r` ([`ends_line`]).
pub fn line_starts(text: &str) -> Vec<u32> {
    // A vectorized search for line breaks: a large file's table is made after every edit.
    let bytes = text.as_bytes();
    std::iter::once(0)
        .chain(memchr::memchr2_iter(b'\n', b'\r', bytes).filter(|&i| ends_line(bytes, i)).map(|i| i as u32 + 1))
        .collect()
}

/// The start of the line that holds byte `offset` of `text` (clamped to the text).
pub fn line_start(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = offset.min(bytes.len());
    // A `\r` right before `offset` may be the first half of a `\r\n`: `ends_line` looks
    // past it.
    while let Some(at) = memchr::memrchr2(b'\n', b'\r', &bytes[..end]) {
        if ends_line(bytes, at) {
            return at + 1;
        }
        end = at;
    }
    0
}

/// The end of the line that holds byte `offset` of `text`, before its line break (the
/// text's end on the last line).
pub fn line_end(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    memchr::memchr2(b'\n', b'\r', &text.as_bytes()[offset..]).map_or(text.len(), |p| offset + p)
}

/// The start of the line after the one that holds byte `offset` of `text` (the text's end
/// on the last line).
pub fn next_line_start(text: &str, offset: usize) -> usize {
    let end = line_end(text, offset);
    match text.as_bytes().get(end..end + 2) {
        Some(b"\r\n") => end + 2,
        _ => (end + 1).min(text.len()),
    }
}

/// The lines of `text` without their line breaks, as [`str::lines`] but also split at a
/// lone `\r`.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let starts = line_starts(text);
    let last = starts.len() - 1;
    starts.into_iter().enumerate().filter_map(move |(i, start)| {
        let start = start as usize;
        // A final line break ends the last line; it does not start an empty one.
        (i < last || start < text.len()).then(|| &text[start..line_end(text, start)])
    })
}

/// Identifies a syntax node inside one item of a file: item index, then node index within
/// that item. Node indices do not change when whitespace or comments change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct NodeRef {
    /// Index of the top-level item in its file.
    pub item: u32,
    /// Index of the node within the item (see [`crate::syntax::NodeId`]).
    pub node: u32,
}

/// Where a label points.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Place {
    /// A byte range.
    Range(TextRange),
    /// A syntax node, resolved to a byte range before rendering.
    Node(NodeRef),
}

/// A labelled location in a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Label {
    /// The file the label points into.
    pub file: FileName,
    /// Where in the file.
    pub place: Place,
    /// What the label says (may be empty).
    pub message: String,
    /// The primary label is the one place the diagnostic is about; others add context.
    pub primary: bool,
}

/// A problem found in a program, with everything needed to show it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The stable code, such as `E0204`.
    pub code: Code,
    /// How serious it is.
    pub severity: Severity,
    /// One sentence, lower case, no final period (rustc style).
    pub message: String,
    /// The first label is primary; the others are secondary.
    pub labels: Vec<Label>,
    /// Extra facts (`= note: ...`).
    pub notes: Vec<String>,
    /// What to do about it (`= help: ...`).
    pub help: Option<String>,
    /// Machine-applicable fixes (the editor offers them as quick fixes).
    pub fixes: Vec<Fix>,
}

/// A change to a file: replace a place's text, or insert after it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Edit {
    /// The file.
    pub file: FileName,
    /// The place edited.
    pub place: Place,
    /// Insert `text` right after the place instead of replacing it.
    pub insert_after: bool,
    /// The new text.
    pub text: String,
}

/// A fix: a title and the edits that make it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fix {
    /// What the fix does, as a command (`add no_grad`).
    pub title: String,
    /// The edits, applied together.
    pub edits: Vec<Edit>,
}

impl Edit {
    /// The range the edit replaces: its place's, or the empty range at the place's end for an
    /// insertion; `None` while the place is a node not yet resolved to a range.
    pub fn target(&self) -> Option<TextRange> {
        match self.place {
            Place::Range(r) if self.insert_after => Some(TextRange::empty(r.end)),
            Place::Range(r) => Some(r),
            Place::Node(_) => None,
        }
    }
}

/// `text` (the file `file`) with `fixes` applied, in order, and which of them were (by
/// index). A fix is applied whole or not at all: not when one of its edits is in another
/// file, is not resolved, falls outside the text or inside a character, or touches an edit
/// of a fix applied before (that one is left for another pass, over the fixed text). A fix
/// whose edits are those of one applied before counts as applied (two diagnostics may offer
/// the same fix).
pub fn apply_fixes(text: &str, file: &FileName, fixes: &[&Fix]) -> (String, Vec<usize>) {
    let mut accepted: Vec<(TextRange, &str)> = Vec::new();
    let mut applied = Vec::new();
    for (index, fix) in fixes.iter().enumerate() {
        let edits: Option<Vec<(TextRange, &str)>> = fix
            .edits
            .iter()
            .map(|e| {
                let r = e.target().filter(|_| &e.file == file)?;
                let fits = r.start <= r.end
                    && (r.end as usize) <= text.len()
                    && text.is_char_boundary(r.start as usize)
                    && text.is_char_boundary(r.end as usize);
                fits.then_some((r, e.text.as_str()))
            })
            .collect();
        let Some(edits) = edits.filter(|e| !e.is_empty()) else { continue };
        if edits.iter().all(|e| accepted.contains(e)) {
            applied.push(index);
            continue;
        }
        let touches = |a: &TextRange, b: &TextRange| a.start <= b.end && b.start <= a.end;
        let clash = edits.iter().enumerate().any(|(i, (r, _))| {
            accepted.iter().any(|(a, _)| touches(a, r)) || edits[..i].iter().any(|(b, _)| touches(b, r))
        });
        if clash {
            continue;
        }
        accepted.extend(edits);
        applied.push(index);
    }
    // From the end, so that earlier offsets stay valid.
    accepted.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (r, new) in accepted {
        out.replace_range(r.start as usize..r.end as usize, new);
    }
    (out, applied)
}

impl Diagnostic {
    /// The diagnostic with every byte range (labels and fixes) moved by `delta` bytes: text
    /// was inserted or removed before everything it points at.
    pub fn shifted(mut self, delta: i64) -> Diagnostic {
        let shift = |place: &mut Place| {
            if let Place::Range(r) = place {
                *r = r.shifted(delta);
            }
        };
        self.labels.iter_mut().for_each(|l| shift(&mut l.place));
        self.fixes.iter_mut().flat_map(|f| f.edits.iter_mut()).for_each(|e| shift(&mut e.place));
        self
    }

    /// A diagnostic with the code's default severity and a primary label.
    pub fn new(code: Code, message: impl Into<String>, file: &FileName, place: Place) -> Self {
        Diagnostic {
            code,
            severity: code.info().severity,
            message: message.into(),
            labels: vec![Label { file: file.clone(), place, message: String::new(), primary: true }],
            notes: Vec::new(),
            help: None,
            fixes: Vec::new(),
        }
    }

    /// Adds a fix.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }

    /// Sets the primary label's text.
    pub fn with_primary_message(mut self, message: impl Into<String>) -> Self {
        if let Some(label) = self.labels.first_mut() {
            label.message = message.into();
        }
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, file: &FileName, place: Place, message: impl Into<String>) -> Self {
        self.labels.push(Label { file: file.clone(), place, message: message.into(), primary: false });
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Sets the help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The primary label, which every diagnostic has.
    pub fn primary(&self) -> &Label {
        &self.labels[0]
    }
}

/// What is known about a diagnostic code: its kebab-case name, default severity and a
/// one-line summary (the catalogue in `spec/diagnostics.md` lists them all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The stable code, such as `E0204`.
    pub code: &'static str,
    /// The kebab-case name, such as `undefined-name`.
    pub name: &'static str,
    /// The default severity.
    pub severity: Severity,
    /// One line saying when it is reported.
    pub summary: &'static str,
}

impl CodeInfo {
    /// Whether this is a lint (`L` codes): advice about a correct program, whose level
    /// configuration can change (even an error-level lint such as `budget-exceeded`).
    pub fn is_lint(&self) -> bool {
        self.code.starts_with('L')
    }

    /// Whether configuration (`-A`/`-W`/`-D`, `netc.toml`) can change its level: lints and
    /// warnings can; errors in the program cannot.
    pub fn is_configurable(&self) -> bool {
        self.is_lint() || self.severity != Severity::Error
    }
}

macro_rules! codes {
    ($($variant:ident = ($code:literal, $name:literal, $sev:ident, $summary:literal),)*) => {
        /// Every diagnostic code netc reports: `E` for errors, `W` for warnings. Codes are stable:
        /// a code is never reused.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $(
            #[doc = $summary]
            $variant,
        )* }

        impl Code {
            /// Every code, in catalogue order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code's catalogue entry.
            pub fn info(self) -> CodeInfo {
                match self { $(
                    Code::$variant => CodeInfo {
                        code: $code, name: $name, severity: Severity::$sev, summary: $summary,
                    },
                )* }
            }
        }
    };
}

codes! {
    // Lexical and syntax errors: E01xx.
    InvalidCharacter = ("E0101", "invalid-character", Error, "a character that cannot start any token"),
    UnterminatedString = ("E0102", "unterminated-string", Error, "a string literal without its closing quote on the same line"),
    InvalidNumber = ("E0103", "invalid-number", Error, "a number literal that is malformed or too large"),
    UnexpectedToken = ("E0104", "unexpected-token", Error, "the parser expected something else here"),
    UnclosedDelimiter = ("E0105", "unclosed-delimiter", Error, "an opening bracket or brace without its closing one"),
    NestingTooDeep = ("E0106", "nesting-too-deep", Error, "expressions or blocks nested deeper than the parser allows"),
    UnknownSetting = ("E0107", "unknown-setting", Error, "a word in a scenario that is not a scenario setting"),
    ExpressionStatement = ("E0108", "expression-statement", Error, "a bare expression used as a statement; its value would be lost"),
    // Names and imports: E02xx.
    UnresolvedImport = ("E0201", "unresolved-import", Error, "`use` of a file that does not exist or cannot be read"),
    UnknownModule = ("E0202", "unknown-module", Error, "`use` of a standard-library module that does not exist"),
    ImportCycle = ("E0203", "import-cycle", Error, "files that `use` each other in a cycle"),
    UndefinedName = ("E0204", "undefined-name", Error, "a name that is not defined at this point"),
    DuplicateDefinition = ("E0205", "duplicate-definition", Error, "two definitions of the same name in one scope"),
    UnknownCallee = ("E0206", "unknown-callee", Error, "a call of a name that is not an op or a block"),
    TooManyArguments = ("E0207", "too-many-arguments", Error, "more positional arguments than the callee has parameters"),
    MissingArgument = ("E0208", "missing-argument", Error, "a parameter without default that the call does not give"),
    UnknownKeyword = ("E0209", "unknown-keyword-argument", Error, "a keyword argument the callee has no parameter for"),
    RepeatedArgument = ("E0210", "repeated-argument", Error, "a parameter given twice in one call"),
    ArgumentKind = ("E0211", "argument-kind-mismatch", Error, "an argument of the wrong kind (a tensor for an int, ...)"),
    UnknownModel = ("E0212", "unknown-model", Error, "a scenario names a model that does not exist"),
    NotCallableHere = ("E0213", "not-callable-here", Error, "a call that names something that cannot be called there (a model inside a body, a block as a scenario's model)"),
    PossiblyUndefined = ("E0214", "possibly-undefined", Error, "a name assigned in some branches of an `if` but not all, used after it"),
    MissingReturn = ("E0215", "missing-return", Error, "a block or model without a `return` statement"),
    MisplacedStatement = ("E0216", "misplaced-statement", Error, "a statement where it is not allowed (`input` in a block, code after `return`)"),
    OutputCount = ("E0217", "output-count-mismatch", Error, "an assignment with a different number of names than the call returns"),
    UnknownType = ("E0218", "unknown-type", Error, "a parameter or input type that does not exist"),
    AmbiguousName = ("E0219", "ambiguous-name", Error, "a name defined by two imported files"),
    InvalidRepeat = ("E0220", "invalid-repeat", Error, "`repeat` of something that cannot be stacked"),
    InvalidOperand = ("E0221", "invalid-operand", Error, "an operator applied to values of kinds it does not accept"),
    PositionalAfterKeyword = ("E0222", "positional-after-keyword", Error, "a positional argument after a keyword argument"),
    ImportOutsideProject = ("E0223", "import-outside-project", Error, "`use` of a file outside the project, or of one that is not a regular `.net` file"),
    // Scenarios: E03xx.
    InvalidSize = ("E0301", "invalid-size", Error, "a size with a missing or unknown unit, or one too large"),
    MissingSetting = ("E0302", "missing-setting", Error, "a scenario without a setting it needs (`model`)"),
    DuplicateSetting = ("E0303", "duplicate-setting", Error, "a scenario setting given twice"),
    InvalidSettingValue = ("E0304", "invalid-setting-value", Error, "a scenario setting with a value it does not accept"),
    ConflictingSettings = ("E0305", "conflicting-settings", Error, "scenario settings that contradict each other"),
    IneffectiveSetting = ("W0306", "ineffective-setting", Warning, "a scenario setting that has no effect with the others given"),
    // Shapes and elaboration: E05xx.
    InvalidShape = ("E0501", "shape-mismatch", Error, "an op applied to tensors whose shapes it cannot accept (channel mismatch, non-broadcastable add, bad reshape, empty output)"),
    UnboundDimension = ("E0502", "unbound-dimension", Error, "a scenario that leaves a dimension of the model's inputs unbound"),
    IntegerOverflow = ("E0503", "integer-overflow", Error, "a size or count too large to compute exactly"),
    RecursionLimit = ("E0504", "elaboration-limit", Error, "a model that expands into too many ops or too deep block calls"),
    // Lints: L00xx (levels configurable, documented in spec/lints/).
    BudgetExceeded = ("L0001", "budget-exceeded", Error, "a scenario needs more memory than its budget"),
    BudgetMargin = ("L0002", "budget-margin", Warning, "a scenario fits its budget, but not with the safety margin"),
    MissingNoGrad = ("L0003", "missing-no-grad", Warning, "inference without `no_grad` keeps what training would save"),
    MissingEval = ("L0004", "missing-eval", Warning, "inference without `eval` on a model with BatchNorm or Dropout"),
    BatchNormBatchOne = ("L0005", "batchnorm-batch-one", Warning, "training BatchNorm on micro-batches of one sample"),
    LinearDominates = ("L0006", "linear-dominates-parameters", Help, "one linear layer holds most of the model's parameters"),
    Int8ActivationsDominate = ("L0007", "int8-activations-dominate", Warning, "int8 weights while activations dominate the peak"),
    ActivationsDominate = ("L0008", "activations-dominate", Help, "training activations many times the weights, with the savings of checkpointing, amp and micro-batches"),
    QuadraticAttention = ("L0009", "quadratic-attention", Help, "attention that materializes the S x S scores"),
    LargeWorkspace = ("L0010", "large-workspace", Warning, "a convolution algorithm whose workspace a cheaper one would avoid"),
    CudnnBenchmarkTight = ("L0011", "cudnn-benchmark-tight", Warning, "cudnn_benchmark's first-iteration spike under a tight budget"),
    HostOverBudget = ("L0012", "host-over-budget", Error, "dataloader host memory over the host budget"),
    Unused = ("L0013", "unused", Warning, "a variable, input or block that is never used"),
    UnknownLint = ("L0014", "unknown-lint", Warning, "a suppression comment naming no lint"),
    DeviceMemoryExceeded = ("L0015", "device-memory-exceeded", Error, "a scenario needs more memory than its device holds"),
    BudgetOverDevice = ("L0016", "budget-over-device", Warning, "a budget larger than the scenario's device"),
    SdpaKernelUnavailable = ("L0017", "sdpa-kernel-unavailable", Error, "an `sdpa` forcing an attention kernel that cannot run in the scenario"),
    Float32KvCache = ("L0018", "float32-kv-cache", Warning, "a key/value cache held in float32 where a half-precision model would halve it"),
    FullFineTuningOverBudget = ("L0019", "full-fine-tuning-over-budget", Warning, "a training scenario that updates every parameter over its budget, whose weights alone fit"),
    KvCacheOverBudget = ("L0020", "kv-cache-over-budget", Warning, "a served model whose key/value cache at the declared context does not fit next to its weights"),
    GenerateFullLogits = ("L0021", "generate-full-logits", Warning, "a `generate()` scenario whose model computes every prompt position's logits, where generate() keeps the last"),
    Int8InputKept = ("L0022", "int8-input-kept", Warning, "a checkpointed training scenario whose LLM.int8() layers keep their inputs to the backward anyway"),
    GptqWeightsKept = ("L0023", "gptq-weights-kept", Warning, "a training scenario whose GPTQ layers save their weights dequantized for the backward"),
    NothingTrained = ("L0024", "nothing-trained", Error, "a training scenario in which every parameter is frozen (LoRA targets that name no projection)"),
    SdpaMathPath = ("L0025", "sdpa-math-path", Help, "attention that PyTorch runs on its math path, storing the attention weights, because no fused kernel takes it"),
    // Files: E04xx.
    UnreadableFile = ("E0401", "unreadable-file", Error, "a file that cannot be read"),
    NotUtf8 = ("E0402", "not-utf8", Error, "a file that is not valid UTF-8"),
    InvalidConfig = ("E0403", "invalid-config", Error, "a `netc.toml` that is not valid TOML or not a valid configuration"),
    UnknownConfigLint = ("W0404", "unknown-lint-in-config", Warning, "a `netc.toml` level for a name that is no configurable lint or warning"),
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.info().code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_apply_whole_without_touching_each_other() {
        let file = FileName::new("m.net");
        let edit = |start, end, insert_after, text: &str| Edit {
            file: file.clone(),
            place: Place::Range(TextRange::new(start, end)),
            insert_after,
            text: text.to_string(),
        };
        let fix = |edits| Fix { title: String::new(), edits };
        let text = "abc def";
        let add = fix(vec![edit(0, 3, true, "!")]);
        let same = fix(vec![edit(0, 3, true, "!")]);
        let touching = fix(vec![edit(3, 3, false, "?")]);
        let rename = fix(vec![edit(4, 7, false, "xyz")]);
        let elsewhere =
            Fix { title: String::new(), edits: vec![Edit { file: FileName::new("n.net"), ..edit(0, 1, false, "") }] };
        let outside = fix(vec![edit(6, 9, false, "")]);
        let (out, applied) = apply_fixes(text, &file, &[&add, &same, &touching, &rename, &elsewhere, &outside]);
        assert_eq!(out, "abc! xyz");
        assert_eq!(applied, [0, 1, 3]);
        // Again over the result, the fix that touched applies.
        let (out, applied) = apply_fixes(&out, &file, &[&touching]);
        assert_eq!((out.as_str(), applied), ("abc?! xyz", vec![0]));
    }

    #[test]
    fn line_starts_follow_each_line_break() {
        assert_eq!(line_starts(""), [0]);
        assert_eq!(line_starts("a\nbc\n\nd"), [0, 2, 5, 6]);
        assert_eq!(line_starts("a\r\n"), [0, 3]);
        // A lone `\r` ends a line too, as LSP counts lines.
        assert_eq!(line_starts("a\rb\r\nc\n\rd\r"), [0, 2, 5, 7, 8, 10]);
    }

    #[test]
    fn line_bounds_and_lines_count_cr_lf_and_crlf() {
        let text = "ab\rcd\r\nef\ngh";
        // (offset, line start, line end)
        for (offset, start, end) in [(0, 0, 2), (2, 0, 2), (3, 3, 5), (5, 3, 5), (6, 3, 6), (7, 7, 9), (10, 10, 12)] {
            assert_eq!(line_start(text, offset), start, "start of {offset}");
            assert_eq!(line_end(text, offset), end, "end of {offset}");
        }
        assert_eq!(line_start(text, 99), 10);
        let next: Vec<usize> = [0, 2, 3, 5, 6, 9, 10, 12].iter().map(|&o| next_line_start(text, o)).collect();
        assert_eq!(next, [3, 3, 7, 7, 7, 10, 12, 12]);
        assert_eq!(lines(text).collect::<Vec<_>>(), ["ab", "cd", "ef", "gh"]);
        assert_eq!(lines("a\r\rb\r").collect::<Vec<_>>(), ["a", "", "b"]);
        assert_eq!(lines("").count(), 0);
        // As `str::lines` where that one is right.
        for text in ["a\nb", "a\nb\n", "\n\n", "a\r\nb\r\n", "x"] {
            assert_eq!(lines(text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>(), "{text:?}");
        }
    }

    #[test]
    fn codes_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let info = code.info();
            assert!(seen.insert(info.code), "code {} used twice", info.code);
            assert!(seen.insert(info.name), "name {} used twice", info.name);
            let prefix = match (info.is_lint(), info.severity) {
                (true, _) => 'L',
                (false, Severity::Error) => 'E',
                (false, _) => 'W',
            };
            assert!(info.code.len() == 5 && info.code.starts_with(prefix), "{}", info.code);
            assert!(info.name.chars().all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit()));
        }
    }
}
