//! No input makes netc panic, overflow its stack or produce a diagnostic that cannot be
//! rendered.
//!
//! - random bytes and random token soup go through every query, all three renderers and the
//!   memory report;
//! - random mutations (bytes, tokens, keywords, brackets) of realistic valid programs, checked
//!   incrementally through one database and compared with a fresh database after each edit;
//! - deterministic edge cases: empty and comment-only files, very deep nesting (run on a
//!   2 MiB stack, like a default test thread), a 5 MB file, CRLF, a BOM, emoji and CJK,
//!   NUL bytes, a very long line.
//!
//! After every check the invariants of [`check_all`] hold: each label is a byte range inside
//! its file, on character boundaries, and the JSON report parses with matching counts.
//!
//! `PROPTEST_CASES` overrides the number of cases (256 by default).

use std::collections::BTreeMap;

use netc::db::{SourceFile, lookup_file};
use netc::diagnostics::{Diagnostic, FileName, Place, Severity};
use netc::host::{Database, file_diagnostics};
use netc::render;
use netc::semantics::files::{
    file_definitions, file_imports, file_scope, import_cycle, imported_names, parse_file, syntax_tree,
};
use netc::semantics::queries::check_file;
use proptest::prelude::*;
use proptest::sample::Index;

// ---------------------------------------------------------------------------------------
// Valid programs

/// A ResNet-18: the basic block with a conditional downsample shortcut, stages, the model, a
/// training and a serving scenario.
const RESNET: &str = r#"# A ResNet-18, the basic block with its downsample shortcut.
use std.nn

## Two 3x3 convolutions with a residual connection.
block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride != 1 {
        s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false))
    }
    return relu(y + s)
}

block stage(x, planes: int, stride: int) {
    y = basic(x, planes, stride=stride)
    return basic(y, planes)
}

model resnet18(classes: int = 1000) {
    input x: f32[N, 3, 224, 224]
    y = relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false)))
    y = maxpool2d(y, k=3, stride=2, pad=1)
    y = stage(y, 64, 1)
    y = stage(y, 128, 2)
    y = stage(y, 256, 2)
    y = stage(y, 512, 2)
    y = flatten(adaptive_avgpool2d(y, 1))
    return linear(y, classes)
}

train imagenet {
    model resnet18()
    batch 64
    optimizer adam
    precision amp
    device a100_40gb
    budget 12 GiB
    margin 1.2
}

infer serve { model resnet18(classes=10); batch 1; no_grad; eval; budget 300 MiB }
"#;

/// A GPT-style decoder: attention, MLP, `repeat`, sequence length, sharded training.
const TRANSFORMER: &str = r#"# A GPT-style decoder.

block mlp(x, dim: int, hidden: int, p: float = 0.1) {
    h = gelu(linear(x, hidden), approximate="tanh")
    return dropout(linear(h, dim), p=p)
}

## Pre-norm transformer block.
block decoder(x, dim: int, heads: int, causal: bool = true) {
    a = attention(layernorm(x), dim, heads, causal=causal, flash=true)
    x = x + dropout(a, p=0.1)
    return x + mlp(layernorm(x), dim, 4 * dim)
}

model gpt(vocab: int = 50257, dim: int = 768, heads: int = 12, layers: int = 12) {
    input ids: i64[N, S]
    x = embedding(ids, vocab, dim)
    x = repeat layers decoder(x, dim, heads)
    x = layernorm(x)
    return linear(x, vocab, bias=false)
}

train pretrain {
    model gpt(layers=24)
    batch 8
    seq 1024
    precision bf16
    optimizer adamw
    checkpoint
    grad_accum 4
    data_parallel 8
    zero 2
    device h100_80gb
    budget 70 GiB
}

infer generate {
    model gpt()
    batch 1
    seq 2048
    precision fp16
    no_grad
    eval
    budget 4 GiB
}
"#;

/// An MLP classifier with a dataloader.
const MLP: &str = r#"# A small MLP classifier for MNIST.
block dense(x, features: int, p: float = 0.2) {
    return dropout(relu(linear(x, features)), p=p)
}

model mlp(hidden: int = 512, classes: int = 10) {
    input x: f32[N, 1, 28, 28]
    h = flatten(x)
    h = dense(h, hidden)
    h = dense(h, hidden / 2)
    return log_softmax(linear(h, classes), dim=-1)
}

train mnist {
    model mlp(hidden=1024)
    batch 128
    optimizer sgd
    dataloader(workers=4, prefetch=2, sample=3 KB, pin_memory=true)
    budget 2 GiB
    host_budget 8 GiB
}

infer classify { model mlp(); batch 32; no_grad; eval; device cpu; budget 512 MiB }
"#;

/// A small U-Net: symbolic `H`/`W` bound by `dim`, concat, two outputs.
const UNET: &str = r#"block double_conv(x, ch: int) {
    y = relu(batchnorm(conv2d(x, ch, k=3, pad=1)), inplace=true)
    return relu(batchnorm(conv2d(y, ch, k=3, pad=1)), inplace=true)
}

model unet(base: int = 32, classes: int = 2) {
    input img: f32[N, 3, H, W]
    e1 = double_conv(img, base)
    e2 = double_conv(maxpool2d(e1, k=2), base * 2)
    b = double_conv(maxpool2d(e2, k=2), base * 4)
    u2 = conv_transpose2d(b, base * 2, k=2, stride=2)
    d2 = double_conv(concat([u2, e2], dim=1), base * 2)
    u1 = upsample(d2, scale=2, mode="bilinear")
    d1 = double_conv(concat([u1, e1]), base)
    out = conv2d(d1, classes, k=1)
    return out, d2
}

infer segment {
    model unet()
    batch 4
    dim H = 256
    dim W = 256
    no_grad
    eval
    budget 1.5 GiB
}
"#;

const PROGRAMS: &[&str] = &[RESNET, TRANSFORMER, MLP, UNET];

/// A second file that the mutated programs may import (and that imports `main.net` back,
/// so that a mutation adding `use "other.net"` makes a cycle).
const OTHER: &str = "use \"main.net\"\n\nblock helper(x, c: int = 8) {\n    return relu(conv2d(x, c, k=1))\n}\n";

// ---------------------------------------------------------------------------------------
// Checking everything

/// The outcome of [`check_all`], for comparisons.
#[derive(Debug, PartialEq)]
struct Outcome {
    diagnostics: Vec<Diagnostic>,
    human: String,
    short: String,
    json: String,
    report: netc::report::Report,
}

/// Whether a checked program is valid: no diagnostic but lints (which are advice).
fn no_problems(outcome: &Outcome) -> bool {
    outcome.diagnostics.iter().all(|d| d.code.info().is_lint())
}

/// Runs every query on every file, renders the diagnostics with every renderer (with and
/// without colour), builds the memory report and checks the invariants. Returns the plain
/// renderings and the report.
fn check_files_in(db: &Database, files: &[SourceFile]) -> Outcome {
    let mut diagnostics = Vec::new();
    for &file in files {
        // Every query, not only the ones `file_diagnostics` needs.
        let _ = parse_file(db, file);
        let _ = syntax_tree(db, file);
        let _ = file_definitions(db, file);
        let _ = file_imports(db, file);
        let _ = file_scope(db, file);
        let _ = import_cycle(db, file);
        let _ = check_file(db, file);
        let _ = imported_names(db, file);
        diagnostics.extend(file_diagnostics(db, file).iter().cloned());
    }
    let mut sources: BTreeMap<FileName, String> = BTreeMap::new();
    for d in &diagnostics {
        for label in &d.labels {
            let file = lookup_file(db, &label.file)
                .unwrap_or_else(|| panic!("diagnostic {} points into unknown file `{}`", d.code, label.file));
            let text = file.text(db);
            let Place::Range(r) = label.place else {
                panic!("diagnostic {} `{}` has an unresolved node label: {:?}", d.code, d.message, label.place)
            };
            assert!(
                r.start <= r.end && r.end as usize <= text.len(),
                "diagnostic {} `{}` has a label {r:?} outside `{}` ({} bytes)",
                d.code,
                d.message,
                label.file,
                text.len()
            );
            assert!(
                text.is_char_boundary(r.start as usize) && text.is_char_boundary(r.end as usize),
                "diagnostic {} `{}` has a label {r:?} that splits a character",
                d.code,
                d.message
            );
            sources.entry(label.file.clone()).or_insert_with(|| text.clone());
        }
        assert!(!d.message.is_empty(), "diagnostic {} without a message", d.code);
        assert!(d.labels.first().is_some_and(|l| l.primary), "diagnostic {} without a primary label first", d.code);
    }
    // The memory report of every scenario (elaboration, shapes, costs) and its renderings.
    let report = netc::report::report(db, files, None);
    let _ = netc::report::table(&report);
    let _ = netc::report::markdown(&report);
    let _ = serde_json::to_string(&report).expect("the report serializes");
    let human = render::human(&diagnostics, &sources, false);
    let _ = render::human(&diagnostics, &sources, true);
    let short = render::short(&diagnostics, &sources, false);
    let _ = render::short(&diagnostics, &sources, true);
    let json = render::json(&diagnostics, &sources, files.len());
    let value: serde_json::Value = serde_json::from_str(&json).expect("the JSON report parses");
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    assert_eq!(value["version"], 1);
    assert_eq!(value["summary"]["errors"], errors);
    assert_eq!(value["diagnostics"].as_array().map(Vec::len), Some(diagnostics.len()));
    Outcome { diagnostics, human, short, json, report }
}

/// Checks `files` (name, text) in a fresh database.
fn check_fresh(files: &[(&str, &str)]) -> Outcome {
    let mut db = Database::new();
    let handles: Vec<SourceFile> =
        files.iter().map(|(name, text)| db.set_file(FileName::new(*name), text.to_string())).collect();
    check_files_in(&db, &handles)
}

/// Checks one file, `main.net`, in a fresh database.
fn check_text(text: &str) -> Outcome {
    check_fresh(&[("main.net", text)])
}

fn codes(outcome: &Outcome) -> Vec<&'static str> {
    outcome.diagnostics.iter().map(|d| d.code.info().code).collect()
}

/// Runs `f` on a thread with a 2 MiB stack (the default of a test thread), so that a
/// recursion that a deep input can drive shows up as a stack overflow here.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name("small-stack".into())
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .expect("spawn a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// Runs a test body in a child process (this test binary, filtered to this one test) on a
/// 2 MiB stack: a stack overflow aborts the process that has it, so in the child it fails
/// this test instead of killing every test of the binary.
macro_rules! isolated {
    ($name:ident, $body:expr) => {{
        let full = concat!(module_path!(), "::", stringify!($name));
        let test = full.split_once("::").map_or(full, |(_, rest)| rest);
        run_isolated(test, $body)
    }};
}

fn run_isolated(test: &str, body: impl FnOnce() + Send + 'static) {
    const CHILD: &str = "NETC_NO_PANIC_CHILD";
    if std::env::var_os(CHILD).is_some() {
        on_small_stack(body);
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let output = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--include-ignored", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "`{test}` failed in a child process ({}):\n{stdout}\n{stderr}",
        output.status
    );
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------
// Strategies

/// Pieces of the language, for token soup and insertions: keywords, brackets, operators,
/// settings, sizes, odd literals and imports.
const FRAGMENTS: &[&str] = &[
    "use",
    "op",
    "block",
    "model",
    "train",
    "infer",
    "input",
    "return",
    "if",
    "else",
    "repeat",
    "true",
    "false",
    "and",
    "or",
    "not",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ";",
    ":",
    "=",
    "==",
    "!=",
    "<",
    ">=",
    "->",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "@",
    "\n",
    "\n",
    "\n",
    " ",
    "#",
    "## doc\n",
    "\"",
    "\"str\"",
    "x",
    "y",
    "N",
    "S",
    "H",
    "0",
    "1",
    "-1",
    "3",
    "64",
    "0.5",
    "1e999",
    "99999999999999999999",
    "1_000",
    "GiB",
    "MiB",
    "MB",
    "KB",
    "tensor",
    "tensors",
    "int",
    "dim",
    "float",
    "bool",
    "str",
    "f32",
    "i64",
    "f32[N, 3, 224, 224]",
    "conv2d",
    "relu",
    "linear",
    "concat",
    "split",
    "lstm",
    "attention",
    "batch",
    "seq",
    "budget",
    "no_grad",
    "eval",
    "optimizer",
    "adam",
    "precision",
    "amp",
    "checkpoint",
    "zero",
    "fsdp",
    "dataloader",
    "device",
    "margin",
    "dim H =",
    "k=3",
    "stride=2",
    "use \"other.net\"",
    "use \"main.net\"",
    "use \"missing.net\"",
    "use std.nn",
    "use std.nope",
    "use foo.bar",
    "basic",
    "stage",
    "resnet18",
    "gpt",
    "decoder",
    "mlp",
    "dense",
    "unet",
    "\t",
    "\r\n",
    "\u{feff}",
    "é",
    "模型",
    "🚀",
    "\0",
    "$",
    "`",
    "\\",
];

fn fragment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(FRAGMENTS)
}

/// Random sequences of fragments separated by nothing, a space or a newline.
fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec((fragment(), prop::sample::select(&["", " ", " ", "\n"][..])), 0..200)
        .prop_map(|parts| parts.into_iter().flat_map(|(a, b)| [a, b]).collect())
}

/// One edit of a program.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteBytes(Index, usize),
    InsertBytes(Index, Vec<u8>),
    ReplaceBytes(Index, usize, Vec<u8>),
    DuplicateBytes(Index, usize),
    DeleteTokens(Index, usize),
    DuplicateTokens(Index, usize),
    SwapTokens(Index, Index),
    InsertFragment(Index, &'static str),
    ReplaceToken(Index, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let bytes = || prop::collection::vec(any::<u8>(), 1..16);
    prop_oneof![
        1 => (any::<Index>(), 1..40usize).prop_map(|(i, n)| Mutation::DeleteBytes(i, n)),
        1 => (any::<Index>(), bytes()).prop_map(|(i, b)| Mutation::InsertBytes(i, b)),
        1 => (any::<Index>(), 1..20usize, bytes()).prop_map(|(i, n, b)| Mutation::ReplaceBytes(i, n, b)),
        1 => (any::<Index>(), 1..200usize).prop_map(|(i, n)| Mutation::DuplicateBytes(i, n)),
        1 => (any::<Index>(), 1..6usize).prop_map(|(i, n)| Mutation::DeleteTokens(i, n)),
        1 => (any::<Index>(), 1..12usize).prop_map(|(i, n)| Mutation::DuplicateTokens(i, n)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        3 => (any::<Index>(), fragment()).prop_map(|(i, f)| Mutation::InsertFragment(i, f)),
        2 => (any::<Index>(), fragment()).prop_map(|(i, f)| Mutation::ReplaceToken(i, f)),
    ]
}

/// Splits `text` into rough tokens (byte ranges): words, whitespace runs, strings, comments
/// and single other characters. Good enough to edit programs token-wise.
fn rough_tokens(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let mut end = start + c.len_utf8();
        let mut extend = |pred: &dyn Fn(char) -> bool, end: &mut usize| {
            while let Some(&(i, c)) = chars.peek() {
                if !pred(c) {
                    break;
                }
                *end = i + c.len_utf8();
                chars.next();
            }
        };
        if c.is_alphanumeric() || c == '_' {
            extend(&|c| c.is_alphanumeric() || c == '_', &mut end);
        } else if c == ' ' || c == '\t' {
            extend(&|c| c == ' ' || c == '\t', &mut end);
        } else if c == '#' {
            extend(&|c| c != '\n', &mut end);
        } else if c == '"' {
            extend(&|c| c != '"' && c != '\n', &mut end);
            if let Some(&(i, '"')) = chars.peek() {
                end = i + 1;
                chars.next();
            }
        }
        out.push((start, end));
    }
    out
}

/// Applies `m` to `text`.
fn apply(text: &str, m: &Mutation) -> String {
    let bytes = text.as_bytes();
    let len = bytes.len();
    let at = |i: &Index| if len == 0 { 0 } else { i.index(len + 1) };
    let splice = |start: usize, end: usize, insert: &[u8]| {
        let mut out = bytes[..start].to_vec();
        out.extend_from_slice(insert);
        out.extend_from_slice(&bytes[end..]);
        String::from_utf8_lossy(&out).into_owned()
    };
    let tokens = rough_tokens(text);
    let token = |i: &Index| if tokens.is_empty() { None } else { Some(i.index(tokens.len())) };
    match m {
        Mutation::DeleteBytes(i, n) => {
            let s = at(i);
            splice(s, (s + n).min(len), b"")
        }
        Mutation::InsertBytes(i, b) => splice(at(i), at(i), b),
        Mutation::ReplaceBytes(i, n, b) => {
            let s = at(i);
            splice(s, (s + n).min(len), b)
        }
        Mutation::DuplicateBytes(i, n) => {
            let s = at(i);
            let e = (s + n).min(len);
            splice(e, e, &bytes[s..e])
        }
        Mutation::DeleteTokens(i, n) => match token(i) {
            Some(t) => splice(tokens[t].0, tokens[(t + n - 1).min(tokens.len() - 1)].1, b""),
            None => text.to_string(),
        },
        Mutation::DuplicateTokens(i, n) => match token(i) {
            Some(t) => {
                let (s, e) = (tokens[t].0, tokens[(t + n - 1).min(tokens.len() - 1)].1);
                splice(e, e, &bytes[s..e])
            }
            None => text.to_string(),
        },
        Mutation::SwapTokens(a, b) => match (token(a), token(b)) {
            (Some(a), Some(b)) if a != b => {
                let (a, b) = (tokens[a.min(b)], tokens[a.max(b)]);
                let mut out = text[..a.0].to_string();
                out.push_str(&text[b.0..b.1]);
                out.push_str(&text[a.1..b.0]);
                out.push_str(&text[a.0..a.1]);
                out.push_str(&text[b.1..]);
                out
            }
            _ => text.to_string(),
        },
        Mutation::InsertFragment(i, f) => {
            // At a token boundary, so that the fragment is a token of its own.
            let s = token(i).map_or(0, |t| tokens[t].0);
            splice(s, s, f.as_bytes())
        }
        Mutation::ReplaceToken(i, f) => match token(i) {
            Some(t) => splice(tokens[t].0, tokens[t].1, f.as_bytes()),
            None => f.to_string(),
        },
    }
}

/// An edit that changes only trivia: a blank line, a trailing comment or indentation.
#[derive(Debug, Clone)]
enum Trivia {
    BlankLine(Index),
    TrailingComment(Index, &'static str),
    Indent(Index, usize),
}

fn trivia() -> impl Strategy<Value = Trivia> {
    prop_oneof![
        any::<Index>().prop_map(Trivia::BlankLine),
        (any::<Index>(), prop::sample::select(&["# note", "## doc", "# 模型 🚀 \"quoted\" { ( [", "#"][..]))
            .prop_map(|(i, c)| Trivia::TrailingComment(i, c)),
        (any::<Index>(), 1..8usize).prop_map(|(i, n)| Trivia::Indent(i, n)),
    ]
}

fn apply_trivia(text: &str, t: &Trivia) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    match t {
        Trivia::BlankLine(i) => lines.insert(i.index(lines.len() + 1), String::new()),
        Trivia::TrailingComment(i, c) => {
            let n = i.index(lines.len());
            lines[n] = format!("{}  {c}", lines[n]);
        }
        Trivia::Indent(i, k) => {
            let n = i.index(lines.len());
            lines[n] = format!("{}{}", " ".repeat(*k), lines[n]);
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------
// Properties

#[test]
fn the_embedded_programs_are_valid() {
    for (n, program) in PROGRAMS.iter().enumerate() {
        let outcome = check_text(program);
        assert!(no_problems(&outcome), "program {n} has diagnostics:\n{}", outcome.short);
    }
    // `other.net` uses `main.net`; there is no cycle until a mutation adds `use "other.net"`.
    let both = check_fresh(&[("main.net", RESNET), ("other.net", OTHER)]);
    assert!(no_problems(&both), "{}", both.short);
}

/// One op applied to an input of huge dimensions, in a training scenario (every byte count of
/// the simulation: saved tensors, workspaces, gradients, optimizer state).
fn huge_op_program(op: &str, dims: &[u64]) -> String {
    let shape = dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    format!(
        "model m() {{\n    input x: f32[{shape}]\n    return {op}\n}}\ntrain fit {{ model m()  batch {}  optimizer adam  checkpoint }}\n",
        dims[0]
    )
}

/// Calls of the ops whose memory rules multiply sizes, on an input `x` of any rank (those that
/// do not fit a rank are shape errors, which must not panic either).
const HUGE_OPS: &[&str] = &[
    "attention(x, 1, 1)",
    "attention(x, 1, 1, flash=true)",
    "sdpa(x, x, x)",
    "linear(x, 3)",
    "conv2d(x, 2, k=1)",
    "batchnorm(x)",
    "layernorm(x)",
    "groupnorm(x, 1)",
    "rmsnorm(x)",
    "dropout(x, p=0.5)",
    "maxpool2d(x, 1)",
    "softmax(x)",
    "lstm(x, 2)",
    "gru(x, 2)",
    "mean(x, [1])",
    "x * x",
    "x + x",
];

proptest! {
    #![proptest_config(config())]

    /// Dimensions near 2^62, 2^63 and 2^64 through every op's memory rule: a diagnostic
    /// (E0503 when a count is too large), never a panic or a wrapped figure.
    #[test]
    fn huge_dimensions_through_every_op_do_not_panic(
        op in prop::sample::select(HUGE_OPS),
        dims in prop::collection::vec(
            prop::sample::select(vec![1u64, 2, 3, 1 << 31, (1 << 62) - 1, 1 << 62, (1 << 63) - 1, 1 << 63, u64::MAX]),
            2..5,
        ),
    ) {
        let text = huge_op_program(op, &dims);
        let mut db = Database::new();
        let file = db.set_file(FileName::new("main.net"), text);
        let _ = file_diagnostics(&db, file);
    }

    #[test]
    fn random_bytes_do_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let text = String::from_utf8_lossy(&bytes);
        check_text(&text);
    }

    #[test]
    fn random_token_soup_does_not_panic(text in token_soup()) {
        check_text(&text);
    }

    /// Mutations applied one at a time to one database: each step's outcome equals a fresh
    /// database's (incremental results are the same as from scratch), and nothing panics.
    #[test]
    fn mutated_programs_do_not_panic(
        program in prop::sample::select(PROGRAMS),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let mut db = Database::new();
        let other = db.set_file(FileName::new("other.net"), OTHER.to_string());
        let mut text = program.to_string();
        let main = db.set_file(FileName::new("main.net"), text.clone());
        check_files_in(&db, &[main, other]);
        for m in &mutations {
            text = apply(&text, m);
            db.set_file(FileName::new("main.net"), text.clone());
            let incremental = check_files_in(&db, &[main, other]);
            let fresh = check_fresh(&[("main.net", &text), ("other.net", OTHER)]);
            prop_assert_eq!(&incremental, &fresh, "after {:?} the text is\n{}", m, text);
        }
    }

    /// Blank lines, trailing comments and indentation never make a valid program invalid.
    #[test]
    fn trivia_keeps_programs_valid(
        program in prop::sample::select(PROGRAMS),
        edits in prop::collection::vec(trivia(), 1..8),
    ) {
        let text = edits.iter().fold(program.to_string(), |t, e| apply_trivia(&t, e));
        let outcome = check_text(&text);
        prop_assert!(no_problems(&outcome), "after {:?}:\n{}\n{}", edits, text, outcome.short);
    }
}

// ---------------------------------------------------------------------------------------
// Edge cases

#[test]
fn empty_file() {
    assert_eq!(codes(&check_text("")), Vec::<&str>::new());
}

#[test]
fn only_comments_and_blank_lines() {
    let text = "# one\n## two\n\n   # indented\n#\n\n\n# last, no newline";
    assert_eq!(codes(&check_text(text)), Vec::<&str>::new());
    assert_eq!(codes(&check_text("\n\n\n\t \n")), Vec::<&str>::new());
}

fn count(outcome: &Outcome, code: &str) -> usize {
    outcome.diagnostics.iter().filter(|d| d.code.info().code == code).count()
}

/// A model whose body has `line` as its third line.
fn in_model(line: &str) -> String {
    format!("model m() {{\n    input x: f32[N]\n    {line}\n    return x\n}}\n")
}

/// `y = (((...x...)))` 100,000 deep in a model body, closed or not: one E0106 and nothing else.
#[test]
fn deeply_nested_parentheses() {
    isolated!(deeply_nested_parentheses, || {
        let depth = 100_000;
        let closed = in_model(&format!("y = {}x{}", "(".repeat(depth), ")".repeat(depth)));
        assert_eq!(codes(&check_text(&closed)), ["E0106"]);
        let open = in_model(&format!("y = {}x", "(".repeat(depth)));
        let outcome = check_text(&open);
        assert_eq!(count(&outcome, "E0106"), 1, "{}", outcome.short);
    });
}

/// The same depth through every other place an expression can nest: calls, unary operators,
/// `repeat`, parameter defaults, scenario values, tensor dimensions and operator chains.
#[test]
fn deep_nesting_everywhere_gives_one_error() {
    isolated!(deep_nesting_everywhere_gives_one_error, || {
        let depth = 100_000;
        let cases = [
            in_model(&format!("y = {}x{}", "relu(".repeat(depth), ")".repeat(depth))),
            in_model(&format!("y = {}x", "-".repeat(depth))),
            in_model(&format!("y = {}true", "not ".repeat(depth))),
            in_model(&format!("y = {}relu(x)", "repeat ".repeat(depth))),
            in_model(&format!("y = x{}", " + x".repeat(depth))),
            in_model(&format!("y = x{}", " * x + x".repeat(depth))),
            in_model(&format!("y = 1{}", " - -1".repeat(depth))),
            format!("block b(x, n: int = {}1{}) {{\n    return x\n}}\n", "(".repeat(depth), ")".repeat(depth)),
            format!("infer s {{ model m(); batch {}1{} }}\n{}", "(".repeat(depth), ")".repeat(depth), in_model("")),
            format!("model m() {{\n    input x: f32[{}N{}]\n    return x\n}}\n", "(".repeat(depth), ")".repeat(depth)),
        ];
        for (n, text) in cases.iter().enumerate() {
            let outcome = check_text(text);
            assert_eq!(count(&outcome, "E0106"), 1, "case {n}: {}", outcome.short);
        }
    });
}

/// Every construct nested one level under `MAX_NESTING`, and a block that calls itself from
/// inside nested expressions until `MAX_CALL_DEPTH` stops it: the limits multiply (64 calls
/// of 62 nested expressions each), and still fit a 2 MiB thread stack in a debug build. A
/// mutated program found the overflow: a recursive call inside two `relu`s.
#[test]
fn nesting_at_the_limits_fits_a_threads_stack() {
    isolated!(nesting_at_the_limits_fits_a_threads_stack, || {
        let limit = netc::syntax::MAX_NESTING as usize;
        let valid: [fn(usize) -> String; 6] = [
            |d| in_model(&format!("y = {}x{}", "(".repeat(d), ")".repeat(d))),
            |d| in_model(&format!("y = {}x{}", "relu(".repeat(d), ")".repeat(d))),
            |d| in_model(&format!("y = {}x", "-".repeat(d))),
            |d| format!("block b(x, n: int = {}1{}) {{\n    return x\n}}\n", "(".repeat(d), ")".repeat(d)),
            |d| format!("infer s {{ model m(); batch {}1{} }}\n{}", "(".repeat(d), ")".repeat(d), in_model("")),
            |d| format!("model m() {{\n    input x: f32[{}N{}]\n    return x\n}}\n", "(".repeat(d), ")".repeat(d)),
        ];
        for (n, text) in valid.iter().enumerate() {
            // The deepest that parses: the enclosing bodies and brackets count too.
            let deepest = (limit - 3..=limit).rev().find(|&d| no_problems(&check_text(&text(d))));
            assert!(deepest.is_some(), "case {n}: {}", check_text(&text(limit - 3)).short);
        }
        let depth = limit - 4;
        let recursive = [
            "block b(x) {\n    return relu(relu(b(x)))\n}\n".to_string(),
            "block b(x, c: bool = true) {\n    y = x\n    if c {\n        if c {\n            y = relu(a(y))\n        }\n    }\n    return y\n}\nblock a(x) {\n    return relu(b(x))\n}\n".to_string(),
            format!("block b(x) {{\n    return {}b(x){}\n}}\n", "relu(".repeat(depth - 2), ")".repeat(depth - 2)),
        ];
        for (n, block) in recursive.iter().enumerate() {
            let text = format!("{block}{}infer s {{ model m(); batch 1; no_grad }}\n", in_model("y = b(x)"));
            let outcome = check_text(&text);
            assert_eq!(count(&outcome, "E0504"), 1, "recursive case {n}: {}", outcome.short);
        }
    });
}

/// `y = [[[...x...]]]` 100,000 deep, closed or not.
#[test]
fn deeply_nested_brackets_in_an_expression() {
    isolated!(deeply_nested_brackets_in_an_expression, || {
        let depth = 100_000;
        let closed = in_model(&format!("y = concat({}x{})", "[".repeat(depth), "]".repeat(depth)));
        assert_eq!(codes(&check_text(&closed)), ["E0106"]);
        let open = in_model(&format!("y = {}", "[".repeat(depth)));
        let outcome = check_text(&open);
        assert_eq!(count(&outcome, "E0106"), 1, "{}", outcome.short);
    });
}

/// Known bug: a list type `[[[...int...]]]` is parsed without a depth bound (`type_expr`
/// recurses through `delimited_list`), so a deep one overflows the stack.
#[test]
fn deeply_nested_brackets_in_a_type() {
    isolated!(deeply_nested_brackets_in_a_type, || {
        let depth = 100_000;
        let text = format!("block b(x, n: {}int{}) {{\n    return x\n}}\n", "[".repeat(depth), "]".repeat(depth));
        let outcome = check_text(&text);
        assert_eq!(count(&outcome, "E0106"), 1, "{}", outcome.short);
    });
}

/// 10,000 `if` blocks inside each other (closed and unclosed), and a 10,000-long `else if`
/// chain.
#[test]
fn deeply_nested_if_blocks() {
    isolated!(deeply_nested_if_blocks, || {
        let depth = 10_000;
        let mut text = String::from("block b(x, c: bool = true) {\n    y = x\n");
        for level in 0..depth {
            text.push_str(&" ".repeat(4 + level % 40));
            text.push_str("if c {\n");
        }
        text.push_str("y = relu(y)\n");
        text.push_str(&"}\n".repeat(depth));
        text.push_str("    return y\n}\n");
        let outcome = check_text(&text);
        assert_eq!(codes(&outcome), ["E0106"], "{}", outcome.short);
        let unclosed = "block b(x, c: bool = true) {\n".to_string() + &"if c {\n".repeat(depth);
        let outcome = check_text(&unclosed);
        assert_eq!(count(&outcome, "E0106"), 1, "{}", outcome.short);
        let outcome = check_text(&else_if_chain(depth));
        assert!(count(&outcome, "E0106") >= 1, "{}", outcome.short);
    });
}

/// `if n == 0 { ... } else if n == 1 { ... } ...` on one line.
fn else_if_chain(length: usize) -> String {
    let mut chain = String::from("block b(x, n: int = 3) {\n    y = x\n    if n == 0 { y = relu(y) }");
    for k in 1..length {
        chain.push_str(&format!(" else if n == {k} {{ y = relu(y) }}"));
    }
    chain.push_str("\n    return y\n}\n");
    chain
}

/// The case the property test found in the `sdpa-math-path` lint (a product of sizes near
/// 2^62 overflowed in debug builds): the attention weights' bytes saturate instead.
#[test]
fn huge_attention_weights_do_not_panic_a_lint() {
    let outcome = check_text(&huge_op_program("sdpa(x, x, x)", &[4_611_686_018_427_387_903, 1]));
    assert!(!outcome.short.contains("panicked"), "{}", outcome.short);
}

/// Known bug: one too long `else if` chain (100 links suffice) gives three E0106 errors on
/// the same line instead of one.
#[test]
fn too_long_else_if_chain_gives_one_error() {
    let outcome = check_text(&else_if_chain(100));
    assert_eq!(codes(&outcome), ["E0106"], "{}", outcome.short);
}

/// Known bug: postfix chains `x.shape.shape...` and `x[0][0]...` are not bounded by the tree
/// depth limit; 10,000 links overflow the stack (even the 8 MiB main thread of `netc`).
#[test]
fn long_postfix_chains() {
    isolated!(long_postfix_chains, || {
        let length = 100_000;
        let fields = check_text(&in_model(&format!("y = x{}", ".shape".repeat(length))));
        assert_eq!(count(&fields, "E0106"), 1, "{}", fields.short);
        let index = check_text(&in_model(&format!("y = x{}", "[0]".repeat(length))));
        assert_eq!(count(&index, "E0106"), 1, "{}", index.short);
    });
}

/// A 5 MB file of distinct valid blocks and models, with one error at the very end.
#[test]
fn five_megabyte_file() {
    let mut text = String::with_capacity(5_200_000);
    let mut n = 0;
    while text.len() < 5_000_000 {
        let c = 8 + n % 64;
        text.push_str(&format!(
            "# block {n}\nblock b{n}(x, c: int = {c}) {{\n    y = relu(batchnorm(conv2d(x, c, k=3, pad=1, bias=false)))\n    return y + x\n}}\n\nmodel m{n}(classes: int = 10) {{\n    input x: f32[N, {c}, 32, 32]\n    y = b{n}(x, {c})\n    return linear(flatten(y), classes)\n}}\n\n",
        ));
        n += 1;
    }
    text.push_str("model broken() {\n    input x: f32[N]\n    return undefined_thing(x)\n}\n");
    let outcome = check_text(&text);
    assert_eq!(codes(&outcome), ["E0206"], "{}", outcome.short);
    let line = text.lines().count() - 1;
    assert!(outcome.short.starts_with(&format!("main.net:{line}:12: error[E0206]")), "{}", outcome.short);
}

#[test]
fn only_closing_brackets() {
    let text = "}})))}\n".repeat(10_000) + &")}".repeat(50_000);
    let outcome = check_text(&text);
    assert!(!outcome.diagnostics.is_empty());
    assert!(outcome.diagnostics.len() <= 10, "one error per run of junk, not per token: {}", outcome.diagnostics.len());
    check_text("}");
    check_text(")");
    check_text("block b(x) {\n    return x\n}\n}\n)\n]\n");
}

#[test]
fn crlf_line_endings() {
    for (n, program) in PROGRAMS.iter().enumerate() {
        let crlf = program.replace('\n', "\r\n");
        let outcome = check_text(&crlf);
        assert!(no_problems(&outcome), "program {n} with CRLF:\n{}", outcome.short);
    }
    // A diagnostic in a CRLF file is on the right line, and its column ignores the `\r`.
    let text = "block b(x) {\r\n    y = relu(x)\r\n    return z\r\n}\r\n";
    let outcome = check_text(text);
    assert_eq!(codes(&outcome), ["E0204"], "{}", outcome.short);
    assert!(outcome.short.starts_with("main.net:3:12: error[E0204]"), "{}", outcome.short);
    // Lone `\r`s end lines too, as LSP counts them (spec/language.md 2.1): the programs read
    // the same with them, or with all three line ends.
    for (n, program) in PROGRAMS.iter().enumerate() {
        for text in [program.replace('\n', "\r"), program.replace("\n\n", "\r\r\n").replace(")\n", ")\r")] {
            let outcome = check_text(&text);
            assert!(no_problems(&outcome), "program {n} with lone CRs:\n{}", outcome.short);
        }
    }
    let outcome = check_text("block b(x) {\r    y = relu(x)\r    return z\r}\r");
    assert!(outcome.short.starts_with("main.net:3:12: error[E0204]"), "{}", outcome.short);
    check_text("block b(x) {\r\n    y = relu(x)\n\r    return y\r\r\n}");
}

#[test]
fn byte_order_mark() {
    for program in PROGRAMS {
        let outcome = check_text(&format!("\u{feff}{program}"));
        assert!(no_problems(&outcome), "with a BOM:\n{}", outcome.short);
    }
    assert!(no_problems(&check_text("\u{feff}")));
    check_text("\u{feff}\u{feff}model");
    check_text("block b(x) {\n    y = \u{feff}relu(x)\n    return y\n}\n");
}

#[test]
fn emoji_and_cjk() {
    // In comments and strings: valid.
    let text = "# 模型 🚀 ResNet — ünïcödé\n## 文档 👍\nblock b(x) {\n    y = gelu(x, approximate=\"模型🚀\")  # 注释 🎉\n    return y\n}\n";
    let outcome = check_text(text);
    assert!(no_problems(&outcome), "{}", outcome.short);
    // As names, operators, units and in unterminated strings: errors whose labels respect
    // character boundaries (checked by `check_all`).
    let cases = [
        "block 模型(x) {\n    return x\n}\n",
        "block b(x) {\n    🚀 = relu(x)\n    return 🚀\n}\n",
        "block b(x) {\n    y = x 🚀 x\n    return y\n}\n",
        "block b(x) {\n    y = gelu(x, approximate=\"模型🚀\n    return y\n}\n",
        "model 👍👍👍",
        "🎉",
        "infer s { model m(); budget 12 吉字节 }\n",
        "block b(x) { return x }   # ok\nblock c(ä) { return ä }\n",
    ];
    for text in cases {
        let outcome = check_text(text);
        assert!(!outcome.diagnostics.is_empty(), "no error for {text:?}");
    }
    // The column of a diagnostic after wide characters counts characters.
    let outcome = check_text("block b(x) {\n    y = gelu(x, approximate=\"模型🚀\")\n    return z\n}\n");
    assert!(outcome.short.starts_with("main.net:3:12: error[E0204]"), "{}", outcome.short);
    let outcome = check_text("block b(x) {\n    y = \"模型🚀\" + zz\n    return y\n}\n");
    assert!(outcome.short.contains("main.net:2:17: error[E0204]"), "{}", outcome.short);
    // Zero-width joiner sequences and combining marks.
    check_text("block b(x) {\n    y = 👨\u{200d}👩\u{200d}👧 + e\u{301}\n}\n");
}

#[test]
fn nul_bytes() {
    let outcome = check_text("block b(x) {\n    y = relu(\0x)\n    return y\n}\n");
    assert_eq!(codes(&outcome), ["E0101"], "{}", outcome.short);
    check_text("\0");
    check_text(&"\0".repeat(10_000));
    check_text("# comment with \0 inside\n");
    check_text("block b(x) {\n    y = gelu(x, approximate=\"\0\")\n    return y\n}\n");
}

#[test]
fn very_long_lines() {
    // A 1 MB comment line, a 1 MB string, a long line of arguments, an error at the end of a
    // 60 kB line, a 1 MB name and a 100,000-digit number.
    let comment = format!("# {}\nblock b(x) {{\n    return x\n}}\n", "a".repeat(1_000_000));
    assert!(check_text(&comment).diagnostics.is_empty());
    let string =
        format!("block b(x) {{\n    y = gelu(x, approximate=\"{}\")\n    return y\n}}\n", "s".repeat(1_000_000));
    check_text(&string);
    let args = format!("block b(x) {{\n    y = concat([{}])\n    return y\n}}\n", "x, ".repeat(100_000));
    assert!(check_text(&args).diagnostics.is_empty());
    let error_at_end = format!("block b(x) {{\n    y = concat([{}]) $\n    return y\n}}\n", "x, ".repeat(20_000));
    assert_eq!(codes(&check_text(&error_at_end)), ["E0101"]);
    let ident = format!("block b(x) {{\n    {} = relu(x)\n    return x\n}}\n", "v".repeat(1_000_000));
    check_text(&ident);
    let number = format!("block b(x, n: int = {}) {{\n    return x\n}}\n", "9".repeat(100_000));
    assert_eq!(codes(&check_text(&number)), ["E0103"]);
}

/// A label after column 65,535 of its line (miette cannot pad that far; this used to panic
/// inside miette with "Formatting argument out of range", and `netc check` exited 101).
#[test]
fn label_past_column_65535() {
    let text = format!("{}$\n", " ".repeat(65_540));
    let outcome = check_text(&text);
    assert_eq!(codes(&outcome), ["E0101"]);
    assert!(outcome.short.starts_with("main.net:1:65541: error[E0101]"), "{}", outcome.short);
}

#[test]
fn many_errors() {
    // One error a line for 1,000 lines: every one reported and rendered.
    let mut text = String::from("block b(x) {\n");
    for k in 0..1_000 {
        text.push_str(&format!("    y{k} = undefined{k}(x)\n"));
    }
    text.push_str("    return x\n}\n");
    let outcome = check_text(&text);
    assert_eq!(outcome.diagnostics.len(), 1_000);
}
