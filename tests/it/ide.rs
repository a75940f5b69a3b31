//! The IDE layer (`netc::ide`) tested as a library, in rust-analyzer's style: each test is a
//! fixture with a `$0` cursor, loaded into a fresh database, and an inline snapshot of a
//! readable rendering of the answer (targets as `file:line:col`, hints written back into the
//! source, tokens one per line, ...). No protocol here: `lsp.rs` tests what the language
//! server adds (UTF-16 positions, cancellation, pushed or pulled diagnostics, settings).
//!
//! A fixture is one file, `main.net`, or several, each after a `#- name.net` line; `$0`
//! marks the cursor (at most one, in any file). Fixtures are indented like the code around
//! them: the common indentation is removed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use netc::db::{SourceFile, lookup_file};
use netc::diagnostics::{FileName, Place, TextRange};
use netc::host::Database;
use netc::ide::{self, HintConfig, InlayHint, NavTarget, ScenarioRef};

const CURSOR: &str = "$0";

/// A loaded fixture.
struct Fixture {
    db: Database,
    /// The file with the cursor, else `main.net` (else the first file).
    file: SourceFile,
    /// The cursor's byte offset in `file`, if the fixture has one.
    cursor: Option<u32>,
}

impl Fixture {
    fn cursor(&self) -> u32 {
        self.cursor.expect("the fixture has a `$0` cursor")
    }

    fn text(&self) -> &str {
        self.file.text(&self.db)
    }

    fn file_named(&self, name: &str) -> SourceFile {
        self.db.file(&FileName::new(name)).unwrap_or_else(|| panic!("no file {name} in the fixture"))
    }
}

/// The text without the indentation common to its non-blank lines, without its first line
/// when that is empty and its last when that is blank (the lines of the raw string's quotes).
fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let indent =
        lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    lines.iter().map(|l| if l.trim().is_empty() { l.trim_start_matches([' ', '\t']) } else { &l[indent..] }).collect()
}

/// Splits a fixture into files (name, text), then loads them into a fresh database.
fn load(fixture: &str) -> Fixture {
    let text = trim_indent(fixture);
    let mut files: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("#- ") {
            files.push((name.trim().to_string(), String::new()));
        } else {
            if files.is_empty() {
                files.push(("main.net".to_string(), String::new()));
            }
            files.last_mut().expect("a file").1.push_str(line);
        }
    }
    let mut db = Database::new();
    let mut with_cursor = None;
    for (name, text) in &files {
        let (text, cursor) = match text.find(CURSOR) {
            Some(at) => {
                assert!(with_cursor.is_none(), "more than one `$0` in the fixture");
                (text.replacen(CURSOR, "", 1), Some(at as u32))
            }
            None => (text.clone(), None),
        };
        let file = db.set_file(FileName::new(name.as_str()), text);
        if cursor.is_some() {
            with_cursor = Some((file, cursor));
        }
    }
    let main = db.file(&FileName::new("main.net")).or_else(|| db.file(&FileName::new(files[0].0.as_str())));
    let (file, cursor) = with_cursor.unwrap_or((main.expect("a file"), None));
    Fixture { db, file, cursor }
}

// ---------------------------------------------------------------------------------------
// Renderers

/// The 1-based line and column (in characters) of `offset`.
fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let before = &text[..offset as usize];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |p| p + 1)..].chars().count() + 1;
    (line, column)
}

/// The line around `offset`, without its line break.
fn line_at(text: &str, offset: u32) -> &str {
    let offset = offset as usize;
    let start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |p| offset + p);
    &text[start..end]
}

/// The text of a file of the fixture or of the standard library.
fn text_of<'a>(db: &'a Database, file: &FileName) -> &'a str {
    lookup_file(db, file).unwrap_or_else(|| panic!("no file {file}")).text(db)
}

/// A place in the standard library is named without its line (the standard library grows;
/// the name and the line of its item are enough to tell where it points).
fn is_std(file: &FileName) -> bool {
    file.as_str().starts_with("<std>")
}

/// `file:line:col: `focus`` and, when the whole range is larger, its first line.
fn render_target(db: &Database, t: &NavTarget) -> String {
    let text = text_of(db, &t.file);
    let focus = &text[t.focus_range.to_range()];
    let mut out = if is_std(&t.file) {
        format!("{}: `{focus}`", t.file)
    } else {
        let (line, col) = line_col(text, t.focus_range.start);
        format!("{}:{line}:{col}: `{focus}`", t.file)
    };
    if t.full_range != t.focus_range {
        let first = text[t.full_range.to_range()].lines().next().unwrap_or("");
        let _ = write!(out, " in `{}`", first.trim());
    }
    out
}

fn render_targets(db: &Database, targets: &[NavTarget]) -> String {
    if targets.is_empty() {
        return "(nothing)".to_string();
    }
    targets.iter().map(|t| render_target(db, t)).collect::<Vec<_>>().join("\n")
}

/// The line of a range with `^` under the range, then `body`.
fn marked(text: &str, range: TextRange, body: &str) -> String {
    let line = line_at(text, range.start);
    let (_, col) = line_col(text, range.start);
    let width = text[range.to_range()].lines().next().unwrap_or("").chars().count().max(1);
    format!("{line}\n{}{}\n{body}", " ".repeat(col - 1), "^".repeat(width))
}

/// Memory figures that belong to the memory model's tests (`memory.rs`) are elided.
fn redact_memory(markdown: &str) -> String {
    markdown
        .lines()
        .map(|l| if l.starts_with("peak ") { "peak … (memory figures)" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The completions a client shows once the word before the cursor is typed: those whose
/// label starts with its first character and contains its characters in order, any case.
/// Items that `keep` leaves out are counted by kind on a last line.
fn render_completions(
    text: &str,
    offset: u32,
    items: &[ide::Completion],
    keep: impl Fn(&ide::Completion) -> bool,
) -> String {
    let typed = items.first().map_or("", |c| &text[c.replace.to_range()]).to_lowercase();
    let shown = |label: &str| {
        let label = label.to_lowercase();
        let mut chars = label.chars();
        typed.chars().next().is_none_or(|first| label.starts_with(first))
            && typed.chars().all(|t| chars.any(|c| c == t))
    };
    let mut out = String::new();
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    for c in items {
        assert_eq!(c.replace.end, offset, "{c:?} replaces up to the cursor");
        assert_eq!(c.insert_text, c.label, "{c:?}");
        if !shown(&c.label) {
            continue;
        }
        if !keep(c) {
            *left_out.entry(format!("{:?}", c.kind)).or_default() += 1;
            continue;
        }
        let kind = format!("{:?}", c.kind);
        let line = format!("{kind:<10} {:<14} {}", c.label, c.detail.as_deref().unwrap_or(""));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if !left_out.is_empty() {
        let counts: Vec<String> = left_out.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
        let _ = writeln!(out, "(and {})", counts.join(", "));
    }
    if out.is_empty() { "(nothing)".to_string() } else { out }
}

/// The source with each hint written in after its offset: `y = relu(x)  /* f32[1, 8] · 32 B */`.
fn render_hints(text: &str, hints: &[InlayHint]) -> String {
    let mut out = text.to_string();
    let mut sorted: Vec<&InlayHint> = hints.iter().collect();
    sorted.sort_by_key(|h| std::cmp::Reverse(h.offset));
    for h in sorted {
        out.insert_str(h.offset as usize, &format!("  /* {} */", h.label));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Checks: one per feature, each returning the rendered answer

fn completions(fixture: &str) -> String {
    completions_where(fixture, |_| true)
}

/// The completions `keep` keeps; the others are counted by kind.
fn completions_where(fixture: &str, keep: impl Fn(&ide::Completion) -> bool) -> String {
    let f = load(fixture);
    let items = ide::completions(&f.db, f.file, f.cursor());
    render_completions(f.text(), f.cursor(), &items, keep)
}

/// The completions of everything but ops (the prelude's ops are offered wherever an
/// expression can start; `completion_of_an_op_name_being_typed` shows them).
fn completions_but_ops(fixture: &str) -> String {
    completions_where(fixture, |c| c.kind != ide::CompletionKind::Op)
}

fn hover(fixture: &str) -> String {
    hover_in(fixture, None)
}

fn hover_in(fixture: &str, chosen: Option<&ScenarioRef>) -> String {
    let f = load(fixture);
    match ide::hover(&f.db, f.file, f.cursor(), chosen) {
        None => "(nothing)".to_string(),
        Some(h) => marked(f.text(), h.range, &redact_memory(&h.markdown)),
    }
}

fn goto_definition(fixture: &str) -> String {
    let f = load(fixture);
    render_targets(&f.db, &ide::goto_definition(&f.db, f.file, f.cursor()))
}

fn references(fixture: &str, include_declaration: bool) -> String {
    let f = load(fixture);
    render_targets(&f.db, &ide::references(&f.db, f.file, f.cursor(), include_declaration))
}

fn signature_help(fixture: &str) -> String {
    let f = load(fixture);
    let Some(sig) = ide::signature_help(&f.db, f.file, f.cursor()) else { return "(nothing)".to_string() };
    // The label with the active parameter in `<...>`; the documentation's first line.
    let mut label = sig.label.clone();
    if let Some(active) = sig.active {
        let param = &sig.params[active as usize];
        let open = sig.label.find('(').expect("a parameter list");
        let at = open + sig.label[open..].find(param.as_str()).expect("each parameter is in the label");
        label = format!("{}<{param}>{}", &sig.label[..at], &sig.label[at + param.len()..]);
    }
    let doc = sig.documentation.as_deref().and_then(|d| d.lines().next()).unwrap_or("(no documentation)");
    format!("{label}\nactive: {:?}\n{doc}", sig.active)
}

/// The hints of the file with the cursor (or `main.net`), written into it.
fn inlay_hints(fixture: &str, config: &HintConfig, chosen: Option<&ScenarioRef>) -> String {
    let f = load(fixture);
    let hints = ide::inlay_hints(&f.db, f.file, None, chosen, config);
    for h in &hints {
        assert!(h.label.chars().count() <= config.max_length, "{h:?}");
        assert!(h.tooltip.starts_with("**In scenario `"), "{h:?}");
    }
    render_hints(f.text(), &hints)
}

// ---------------------------------------------------------------------------------------
// Completion

#[test]
fn completion_of_an_op_name_being_typed() {
    let actual = completions(
        r#"
        model m(width: int = 8) {
            input x: f32[N, 3, 32, 32]
            y = con$0
            return x
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Op         clone          op clone(x: tensor) -> tensor
        Op         concat         op concat(xs: [tensor], dim: int = 1) -> tensor
        Op         contiguous     op contiguous(x: tensor) -> tensor
        Op         conv1d         op conv1d(x: tensor, out_channels: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true) -> tensor
        Op         conv2d         op conv2d(x: tensor, out_channels: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true) -> tensor
        Op         conv3d         op conv3d(x: tensor, out_channels: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true) -> tensor
        Op         conv_transpose2d op conv_transpose2d(x: tensor, out_channels: int, k: int, stride: int = 1, pad: int = 0, output_pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true) -> tensor
        Op         cross_entropy  op cross_entropy(logits: tensor, target: tensor) -> tensor
        Builtin    checkpoint     checkpoint(block(x, ...), when=true)
        Builtin    checkpointing  checkpointing()
        ");
}

#[test]
fn completion_in_an_expression_offers_locals_defined_above_and_blocks() {
    let actual = completions(
        r#"
        ## Doubles the width.
        block wide(x, width: int) { return linear(x, width) }
        model m(width: int = 8) {
            input x: f32[N, 64]
            h = relu(x)
            y = w$0
            z = gelu(y)
            return z
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Variable   width          parameter
        Op         where          op where(condition: tensor, a: tensor_or_float, b: tensor_or_float) -> tensor
        Block      wide           block wide(x, width: int)
        ");
}

#[test]
fn completion_in_a_model_offers_its_inputs_dimensions_and_parameters() {
    let actual = completions_but_ops(
        r#"
        model m(width: int = 8) {
            input x: f32[N, 3, 32, 32]
            y = $0
            return x
        }
        "#,
    );
    // As in `completion_of_keyword_arguments_skips_those_given`, `y` is offered inside the
    // statement that defines it.
    insta::assert_snapshot!(actual, @r"
        Keyword    repeat
        Keyword    not
        Keyword    true
        Keyword    false
        Variable   width          parameter
        Variable   x              input
        Variable   N              dimension
        Variable   y              variable
        Builtin    min            min(a, b, ...) or min(list)
        Builtin    max            max(a, b, ...) or max(list)
        Builtin    len            len(list)
        Builtin    checkpoint     checkpoint(block(x, ...), when=true)
        Builtin    frozen         frozen(block(x, ...), when=true)
        Builtin    fp32           fp32(block(x, ...), when=true)
        Builtin    no_autocast    no_autocast(block(x, ...), when=true)
        Builtin    routed         routed(block(x, ...), k, of)
        Builtin    past_seen_tokens past_seen_tokens()
        Builtin    generating     generating()
        Builtin    checkpointing  checkpointing()
        Builtin    training       training()
        Builtin    autocast_dtype autocast_dtype()
        Builtin    ceil           ceil(x)
        Builtin    listed         listed(item, items)
        (and 135 Op)
        ");
}

#[test]
fn completion_items_carry_the_documentation_of_ops() {
    let f = load("block b(x) {\n    y = conv2$0\n    return x\n}\n");
    let items = ide::completions(&f.db, f.file, f.cursor());
    let conv = items.iter().find(|c| c.label == "conv2d").expect("conv2d offered");
    let first = conv.documentation.as_deref().and_then(|d| d.lines().next()).unwrap_or("(no documentation)");
    insta::assert_snapshot!(first, @"2-D convolution (torch.nn.Conv2d).");
}

#[test]
fn completion_at_the_start_of_a_statement_offers_statement_keywords() {
    // QUESTIONABLE: `input` is offered in a block, where it is an error (E0216: inputs
    // belong to models).
    let actual = completions(
        r#"
        block b(x) {
            y = relu(x)
            i$0
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r#"
        Keyword    input
        Keyword    if
        Op         index          op index(x: tensor, indices: tensor) -> tensor
        Op         index_put      op index_put(x: tensor, indices: tensor, values: tensor, inplace: bool = false) -> tensor
        Op         index_select   op index_select(x: tensor, dim: int, index: tensor) -> tensor
        Op         interpolate    op interpolate(x: tensor, size: [int], mode: str = "nearest") -> tensor
        "#);
}

#[test]
fn completion_of_keyword_arguments_skips_those_given() {
    // QUESTIONABLE: `x=` and `out_channels=` are offered although `x` and `16` already give
    // them positionally: accepting either makes E0210 (repeated argument); see
    // `a_keyword_offered_for_a_parameter_given_positionally_repeats_it`.
    // QUESTIONABLE: `y` is offered inside the statement that defines it (E0204 if used).
    let actual = completions_but_ops(
        r#"
        block b(x) {
            y = conv2d(x, 16, k=3, $0
            return y
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        KeywordArg x=             x: tensor
        KeywordArg out_channels=  out_channels: int
        KeywordArg stride=        stride: int = 1
        KeywordArg pad=           pad: int = 0
        KeywordArg dilation=      dilation: int = 1
        KeywordArg groups=        groups: int = 1
        KeywordArg bias=          bias: bool = true
        Keyword    repeat
        Keyword    not
        Keyword    true
        Keyword    false
        Variable   x              parameter
        Variable   y              variable
        Block      b              block b(x)
        Builtin    min            min(a, b, ...) or min(list)
        Builtin    max            max(a, b, ...) or max(list)
        Builtin    len            len(list)
        Builtin    checkpoint     checkpoint(block(x, ...), when=true)
        Builtin    frozen         frozen(block(x, ...), when=true)
        Builtin    fp32           fp32(block(x, ...), when=true)
        Builtin    no_autocast    no_autocast(block(x, ...), when=true)
        Builtin    routed         routed(block(x, ...), k, of)
        Builtin    past_seen_tokens past_seen_tokens()
        Builtin    generating     generating()
        Builtin    checkpointing  checkpointing()
        Builtin    training       training()
        Builtin    autocast_dtype autocast_dtype()
        Builtin    ceil           ceil(x)
        Builtin    listed         listed(item, items)
        (and 135 Op)
        ");
}

#[test]
fn a_keyword_offered_for_a_parameter_given_positionally_repeats_it() {
    let f = load("block b(x) {\n    y = conv2d(x, 16, k=3, $0)\n    return y\n}\n");
    let offered: Vec<String> = ide::completions(&f.db, f.file, f.cursor()).into_iter().map(|c| c.label).collect();
    assert!(offered.contains(&"out_channels=".to_string()), "{offered:?}");
    let mut text = f.text().to_string();
    text.insert_str(f.cursor() as usize, "out_channels=8");
    let mut db = Database::new();
    let file = db.set_file(FileName::new("main.net"), text);
    let codes: Vec<&str> = ide::diagnostics(&db, file).iter().map(|d| d.code.info().code).collect();
    assert_eq!(codes, ["E0210"]);
}

#[test]
fn completion_in_a_mark_offers_its_condition() {
    let actual = completions_but_ops(
        r#"
        block b(x, lora_r: int) {
            return frozen(linear(x, 10), $0)
        }
        "#,
    );
    let first = actual.lines().next().unwrap_or_default().trim().to_string();
    assert_eq!(first, "KeywordArg when=          when: bool = true (`frozen` applies where it holds)");
}

#[test]
fn completion_of_a_blocks_keyword_arguments() {
    // QUESTIONABLE: as for ops, `x=` and `hidden=` are offered though given positionally.
    let actual = completions_but_ops(
        r#"
        block mlp(x, hidden: int, out: int = 10, act: str = "relu") { return linear(x, out) }
        block b(x) {
            return mlp(x, 64, $0)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r#"
        KeywordArg x=             x
        KeywordArg hidden=        hidden: int
        KeywordArg out=           out: int = 10
        KeywordArg act=           act: str = "relu"
        Keyword    repeat
        Keyword    not
        Keyword    true
        Keyword    false
        Variable   x              parameter
        Block      b              block b(x)
        Block      mlp            block mlp(x, hidden: int, out: int = 10, act: str = "relu")
        Builtin    min            min(a, b, ...) or min(list)
        Builtin    max            max(a, b, ...) or max(list)
        Builtin    len            len(list)
        Builtin    checkpoint     checkpoint(block(x, ...), when=true)
        Builtin    frozen         frozen(block(x, ...), when=true)
        Builtin    fp32           fp32(block(x, ...), when=true)
        Builtin    no_autocast    no_autocast(block(x, ...), when=true)
        Builtin    routed         routed(block(x, ...), k, of)
        Builtin    past_seen_tokens past_seen_tokens()
        Builtin    generating     generating()
        Builtin    checkpointing  checkpointing()
        Builtin    training       training()
        Builtin    autocast_dtype autocast_dtype()
        Builtin    ceil           ceil(x)
        Builtin    listed         listed(item, items)
        (and 135 Op)
        "#);
}

#[test]
fn completion_of_dataloader_arguments() {
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        train t { model m()  batch 8  dataloader(workers=4, $0) }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        KeywordArg prefetch=      prefetch: int
        KeywordArg sample=        sample: size
        KeywordArg pin_memory=    pin_memory: bool
        ");
}

#[test]
fn completion_of_setting_keys_in_an_infer_scenario() {
    // Keys already given (`model`) are not offered again; `train`-only keys (`optimizer`)
    // are not offered in an `infer` scenario.
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        infer s {
            model m()
            $0
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Setting    batch          KEY VALUE
        Setting    seq            KEY VALUE
        Setting    dim            dim NAME = VALUE
        Setting    precision      KEY VALUE
        Setting    cache          KEY VALUE
        Setting    context        KEY VALUE
        Setting    new_tokens     KEY VALUE
        Setting    cache_block    KEY VALUE
        Setting    cache_dtype    KEY VALUE
        Setting    no_grad        flag
        Setting    eval           flag
        Setting    device         KEY VALUE
        Setting    overhead       KEY VALUE
        Setting    dataloader     KEY(NAME=VALUE, ...)
        Setting    budget         KEY VALUE
        Setting    margin         KEY VALUE
        Setting    host_budget    KEY VALUE
        Setting    cudnn_benchmark flag
        Setting    conv_algorithm KEY VALUE
        ");
}

#[test]
fn completion_of_setting_keys_in_a_train_scenario() {
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        train t {
            model m()
            batch 8
            optimizer adam
            $0
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Setting    seq            KEY VALUE
        Setting    dim            dim NAME = VALUE
        Setting    precision      KEY VALUE
        Setting    loss           KEY VALUE
        Setting    checkpoint     flag
        Setting    reentrant      flag
        Setting    prepare_kbit   flag
        Setting    grad_accum     KEY VALUE
        Setting    data_parallel  KEY VALUE
        Setting    zero           KEY VALUE
        Setting    fsdp           flag
        Setting    device         KEY VALUE
        Setting    overhead       KEY VALUE
        Setting    dataloader     KEY(NAME=VALUE, ...)
        Setting    budget         KEY VALUE
        Setting    margin         KEY VALUE
        Setting    host_budget    KEY VALUE
        Setting    cudnn_benchmark flag
        Setting    conv_algorithm KEY VALUE
        ");
}

#[test]
fn completion_of_precision_values() {
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        train t { model m()  batch 8  precision $0 }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Value      fp32           precision value
        Value      fp16           precision value
        Value      bf16           precision value
        Value      amp            precision value
        Value      amp_bf16       precision value
        Value      int8           precision value
        ");
}

#[test]
fn completion_of_optimizer_values() {
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        train t { model m()  batch 8  optimizer ada$0 }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Value      adam           optimizer value
        Value      adamw          optimizer value
        Value      adagrad        optimizer value
        Value      adafactor      optimizer value
        Value      adam8bit       optimizer value
        ");
}

#[test]
fn completion_of_device_values() {
    let actual = completions(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        infer s {
            model m()
            device $0
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Value      cpu            device value
        Value      a100_40gb      device value
        Value      a100_80gb      device value
        Value      h100_80gb      device value
        Value      h200           device value
        Value      l4             device value
        Value      t4             device value
        Value      v100_16gb      device value
        Value      v100_32gb      device value
        Value      rtx3090        device value
        Value      rtx4090        device value
        Value      jetson_orin    device value
        Value      jetson_nano    device value
        Value      apple_m2       device value
        Value      apple_m3       device value
        ");
}

#[test]
fn completion_of_the_model_setting_offers_models() {
    let actual = completions(
        r#"
        block b(x) { return x }
        model small() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        model large() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        infer s { model $0 }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Model      large          model large()
        Model      small          model small()
        ");
}

#[test]
fn completion_at_the_top_level_offers_item_keywords() {
    let actual = completions(
        r#"
        block b(x) { return x }
        $0
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        Keyword    use
        Keyword    op
        Keyword    block
        Keyword    model
        Keyword    train
        Keyword    infer
        ");
}

#[test]
fn completion_after_use_offers_standard_library_modules() {
    let actual = completions("use $0\n");
    insta::assert_snapshot!(actual, @r"
        Module     std.blocks     standard-library module
        Module     std.models.alexnet standard-library module
        Module     std.models.apertus standard-library module
        Module     std.models.arcee standard-library module
        Module     std.models.articles standard-library module
        Module     std.models.bert standard-library module
        Module     std.models.biogpt standard-library module
        Module     std.models.bitnet standard-library module
        Module     std.models.bloom standard-library module
        Module     std.models.codegen standard-library module
        Module     std.models.cohere standard-library module
        Module     std.models.cohere2 standard-library module
        Module     std.models.convnext standard-library module
        Module     std.models.cwm standard-library module
        Module     std.models.deepseek_v2 standard-library module
        Module     std.models.deepseek_v3 standard-library module
        Module     std.models.densenet standard-library module
        Module     std.models.diffllama standard-library module
        Module     std.models.efficientnet standard-library module
        Module     std.models.ernie4_5 standard-library module
        Module     std.models.ernie4_5_moe standard-library module
        Module     std.models.exaone4 standard-library module
        Module     std.models.falcon standard-library module
        Module     std.models.gemma standard-library module
        Module     std.models.gemma2 standard-library module
        Module     std.models.gemma3 standard-library module
        Module     std.models.glm standard-library module
        Module     std.models.glm4 standard-library module
        Module     std.models.glm4_moe standard-library module
        Module     std.models.gpt2 standard-library module
        Module     std.models.gpt_bigcode standard-library module
        Module     std.models.gpt_neo standard-library module
        Module     std.models.gpt_neox standard-library module
        Module     std.models.gpt_oss standard-library module
        Module     std.models.gptj standard-library module
        Module     std.models.granite standard-library module
        Module     std.models.granite_swa standard-library module
        Module     std.models.granitemoe standard-library module
        Module     std.models.helium standard-library module
        Module     std.models.hunyuan_v1_dense standard-library module
        Module     std.models.hunyuan_v1_moe standard-library module
        Module     std.models.hyperclovax standard-library module
        Module     std.models.jais2 standard-library module
        Module     std.models.llama standard-library module
        Module     std.models.minicpm3 standard-library module
        Module     std.models.ministral standard-library module
        Module     std.models.ministral3 standard-library module
        Module     std.models.mistral standard-library module
        Module     std.models.mixtral standard-library module
        Module     std.models.mobilenet standard-library module
        Module     std.models.mpt standard-library module
        Module     std.models.nanochat standard-library module
        Module     std.models.nemotron standard-library module
        Module     std.models.olmo standard-library module
        Module     std.models.olmo2 standard-library module
        Module     std.models.olmo3 standard-library module
        Module     std.models.olmoe standard-library module
        Module     std.models.opt standard-library module
        Module     std.models.persimmon standard-library module
        Module     std.models.phi standard-library module
        Module     std.models.phi3 standard-library module
        Module     std.models.phimoe standard-library module
        Module     std.models.qwen2 standard-library module
        Module     std.models.qwen2_moe standard-library module
        Module     std.models.qwen3 standard-library module
        Module     std.models.qwen3_moe standard-library module
        Module     std.models.resnet standard-library module
        Module     std.models.seed_oss standard-library module
        Module     std.models.smollm3 standard-library module
        Module     std.models.stablelm standard-library module
        Module     std.models.starcoder2 standard-library module
        Module     std.models.unet standard-library module
        Module     std.models.vaultgemma standard-library module
        Module     std.models.vgg standard-library module
        Module     std.models.vit standard-library module
        Module     std.models.youtu standard-library module
        Module     std.nn         standard-library module
        ");
}

#[test]
fn completion_after_a_dot_offers_the_fields_of_a_tensor() {
    let actual = completions(
        r#"
        block b(x) {
            n = x.sh$0
            return x
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"Field      shape          [int]");
    // Before any letter: every field.
    let all = completions("block b(x) {\n    n = x.$0\n    return x\n}\n");
    insta::assert_snapshot!(all, @r"
        Field      shape          [int]
        Field      ndim           int
        ");
}

#[test]
fn completion_of_types_after_a_colon() {
    // A parameter's type: a value kind or a tensor type's dtype (`bool` once, both); an
    // input's type: a dtype only (a tensor type; `int` there is E0218).
    let param = completions("block b(x, width: $0) { return x }\n");
    insta::assert_snapshot!(param, @r"
        Type       int
        Type       dim
        Type       float
        Type       bool
        Type       str
        Type       tensor
        Type       tensor_or_float
        Type       f64
        Type       f32
        Type       f16
        Type       bf16
        Type       i64
        Type       i32
        Type       i16
        Type       i8
        Type       u8
        Type       c64
        Type       c128
        ");
    let input = completions("model m() {\n    input x: $0\n}\n");
    insta::assert_snapshot!(input, @r"
        Type       f64
        Type       f32
        Type       f16
        Type       bf16
        Type       i64
        Type       i32
        Type       i16
        Type       i8
        Type       u8
        Type       bool
        Type       c64
        Type       c128
        ");
}

#[test]
fn completion_in_a_comment_or_a_string_offers_nothing() {
    let comment = completions("block b(x) {\n    # rel$0\n    return x\n}\n");
    insta::assert_snapshot!(comment, @"(nothing)");
    let string = completions("block b(x) {\n    return activation(x, kind=\"rel$0\n}\n");
    insta::assert_snapshot!(string, @"(nothing)");
}

// ---------------------------------------------------------------------------------------
// Hover

#[test]
fn hover_on_an_op_call_shows_its_signature_and_documentation() {
    let actual = hover(
        r#"
        block b(x) {
            return lin$0ear(x, 4)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r#"
            return linear(x, 4)
                   ^^^^^^
        ```net
        op linear(x: tensor, out_features: int, bias: bool = true, share: str = "") -> tensor
        ```

        Fully connected layer (torch.nn.Linear) on the last dimension.

        - Shape: `x: [..., Fin]` (at least 1-D, floating point) -> `[..., out_features]`.
        - Params: `weight` `out_features x Fin`; `bias` `out_features` when `bias`.
          `share="key"`: the weight is shared with every op given the same key (tied weights, as
          GPT-2's output head shares the token embedding); shared parameters count once, the first
          op with the key owns them.
        - MACs: `numel(output) x Fin`.
        - Saves: the input `x` (for the weight's gradient) and the weight.
        - Workspace: cuBLAS's (a few MiB per stream, fixed).
        - Example: `y = linear(x, 1000)`: `[32, 2048]` -> `[32, 1000]`, 2,049,000 params,
          65,536,000 MACs.

        *defined in `<std>/nn.net`*
        "#);
}

#[test]
fn hover_on_an_op_call_in_a_scenario_adds_the_lines_figures() {
    let actual = hover(
        r#"
        model m() {
            input x: f32[N, 64]
            return line$0ar(x, 10)
        }
        train t { model m()  batch 8  optimizer adam }
        "#,
    );
    insta::assert_snapshot!(actual, @r#"
            return linear(x, 10)
                   ^^^^^^
        ```net
        op linear(x: tensor, out_features: int, bias: bool = true, share: str = "") -> tensor
        ```

        Fully connected layer (torch.nn.Linear) on the last dimension.

        - Shape: `x: [..., Fin]` (at least 1-D, floating point) -> `[..., out_features]`.
        - Params: `weight` `out_features x Fin`; `bias` `out_features` when `bias`.
          `share="key"`: the weight is shared with every op given the same key (tied weights, as
          GPT-2's output head shares the token embedding); shared parameters count once, the first
          op with the key owns them.
        - MACs: `numel(output) x Fin`.
        - Saves: the input `x` (for the weight's gradient) and the weight.
        - Workspace: cuBLAS's (a few MiB per stream, fixed).
        - Example: `y = linear(x, 1000)`: `[32, 2048]` -> `[32, 1000]`, 2,049,000 params,
          65,536,000 MACs.

        *defined in `<std>/nn.net`*

        ---

        **In scenario `t`** (`main.net`)

        - output: `f32[8, 10]`
        - output bytes: 320 B
        - params: 650
        - MACs: 5.12 K
        - instances: 1
        - activations (kept for backward, or made without autograd): 0 B
        - weights: 2.5 KiB
        - gradients: 2.5 KiB
        - optimizer state: 5.1 KiB
        "#);
}

#[test]
fn hover_on_a_checkpoint_mark_explains_the_segment() {
    let actual = hover(
        r#"
        block layer(x) {
            return relu(linear(x, 64))
        }
        block b(x) {
            return check$0point(layer(x))
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
            return checkpoint(layer(x))
                   ^^^^^^^^^^
        ```net
        checkpoint(block(x, ...), when=true)
        ```

        built-in function

        Marks a call (of a block, an op or a `repeat`) as an activation-checkpointing segment, as `torch.utils.checkpoint.checkpoint(module, x, use_reentrant=False)` or a layer of a Hugging Face model under `gradient_checkpointing_enable()`: when the scenario sets `checkpoint`, the segment keeps only its inputs in forward and runs again in backward. Its value is the call's. With `when=cond`, only where `cond` holds.
        ");
}

#[test]
fn hover_on_a_block_shows_its_header_and_documentation() {
    let actual = hover(
        r#"
        ## Two linear layers with a ReLU between.
        ## The hidden width is a parameter.
        block mlp(x, hidden: int, out: int = 10) {
            return linear(relu(linear(x, hidden)), out)
        }
        block b(x) {
            return ml$0p(x, 64)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
            return mlp(x, 64)
                   ^^^
        ```net
        block mlp(x, hidden: int, out: int = 10)
        ```

        Two linear layers with a ReLU between.
        The hidden width is a parameter.
        ");
}

#[test]
fn hover_on_an_imported_block_says_where_it_is_defined() {
    let actual = hover(
        r#"
        #- blocks.net
        ## A residual MLP.
        block res(x, width: int) { return x + linear(x, width) }
        #- main.net
        use "blocks.net"
        block b(x) {
            return r$0es(x, 8)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
            return res(x, 8)
                   ^^^
        ```net
        block res(x, width: int)
        ```

        A residual MLP.

        *defined in `blocks.net`*
        ");
}

#[test]
fn hover_on_a_scenario_shows_its_totals() {
    let actual = hover(
        r#"
        model m() {
            input x: f32[N, 64]
            return linear(x, 10)
        }
        train fi$0t { model m()  batch 8  optimizer adam }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        train fit { model m()  batch 8  optimizer adam }
              ^^^
        ```net
        train fit
        ```

        model `m`, batch 8: 650 params, 5.12 K MACs per forward pass

        peak … (memory figures)
        ");
}

#[test]
fn hover_on_a_scenario_shows_frozen_parameters_and_the_kv_cache() {
    // 3,572 parameters, the embedding's 1,600 frozen; a decode step of 2 sequences with 7
    // tokens cached: the cache after it is [2, 1, 8, 16] float32, 1 KiB.
    let actual = hover(
        r#"
        model lm() {
            input ids: i64[N, S]
            h = frozen(embedding(ids, 100, 16))
            k = kv_cache(reshape(linear(h, 16), [ids.shape[0], 1, ids.shape[1], 16]))
            return linear(h, 100)
        }
        infer de$0code { model lm  batch 2  seq 1  context 7  no_grad  eval  cache dynamic }
        "#,
    );
    // At the peak (the append) the old 7 tokens (896 B) and the new cache are both live.
    insta::assert_snapshot!(actual, @r"
        infer decode { model lm  batch 2  seq 1  context 7  no_grad  eval  cache dynamic }
              ^^^^^^
        ```net
        infer decode
        ```

        model `lm`, batch 2: 3,572 params (1,972 trainable, 1,600 frozen), 3.71 K MACs per forward pass

        peak … (memory figures)

        kv cache 1.0 KiB after the step (1.9 KiB at the peak)
        ");
}

#[test]
fn hover_on_a_scenario_shows_a_mixtures_active_parameters() {
    // 4 experts of feed-forward 16 on d 8 (384 parameters each: gate-and-up 256, down 128),
    // top 2: a token reads 768 of their 1,536, and all of the router's 32 and the head's 72.
    let actual = hover(
        r#"
        use std.blocks
        model moe() {
            input x: f32[N, 8, 8]
            h = moe_sparse_block(x, 4, 2, 16, false)
            return linear(h, 8)
        }
        infer ro$0ute { model moe  batch 2  no_grad  eval }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        infer route { model moe  batch 2  no_grad  eval }
              ^^^^^
        ```net
        infer route
        ```

        model `moe`, batch 2: 1,640 params (872 active per token), 13.82 K MACs per forward pass

        peak … (memory figures)
        ");
}

#[test]
fn hover_on_a_keyword_argument_shows_the_parameter() {
    let actual = hover(
        r#"
        block b(x) {
            return conv2d(x, 8, k=3, str$0ide=2)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
            return conv2d(x, 8, k=3, stride=2)
                                     ^^^^^^
        ```net
        stride: int = 1
        ```

        parameter of `conv2d`
        ");
}

#[test]
fn hover_on_locals() {
    let fixture = |body: &str| {
        format!("block b(x, width: int) {{\n{body}\n}}\nmodel m() {{\n    input x: f32[N, 8]\n    return b(x, 4)\n}}\n")
    };
    let variable = hover(&fixture("    y = relu(x)\n    return linear(y$0, width)"));
    insta::assert_snapshot!(variable, @r"
            return linear(y, width)
                          ^
        variable `y`
        ");
    let parameter = hover(&fixture("    return linear(x, wid$0th)"));
    insta::assert_snapshot!(parameter, @r"
            return linear(x, width)
                             ^^^^^
        parameter `width`
        ");
    let input = hover("model m() {\n    input x: f32[N, 8]\n    return relu(x$0)\n}\n");
    insta::assert_snapshot!(input, @r"
            return relu(x)
                        ^
        input `x`
        ");
    let dimension = hover("model m() {\n    input x: f32[N$0, 8]\n    return relu(x)\n}\n");
    insta::assert_snapshot!(dimension, @r"
            input x: f32[N, 8]
                         ^
        symbolic dimension `N`
        ");
}

#[test]
fn hover_on_a_builtin_and_a_loop_variable() {
    let builtin = hover("block b(x, n: int) {\n    k = mi$0n(n, 4)\n    return linear(x, k)\n}\n");
    insta::assert_snapshot!(builtin, @r"
            k = min(n, 4)
                ^^^
        ```net
        min(a, b, ...) or min(list)
        ```

        built-in function

        The smallest of two or more numbers, or of a list of integers, as Python's `min`: an integer when every argument is one, else a float.
        ");
    let loop_variable = hover("block b(x, n: int) {\n    for i in 0..n { x = linear(x, i$0 + 1) }\n    return x\n}\n");
    insta::assert_snapshot!(loop_variable, @r"
            for i in 0..n { x = linear(x, i + 1) }
                                          ^
        loop variable `i`
        ");
}

#[test]
fn hover_on_settings_their_values_and_units() {
    let fixture = |cursor_in: &str| {
        let text = "model m() {\n    input x: f32[N, 8]\n    return linear(x, 2)\n}\ninfer s { model m()  batch 8  no_grad  eval  device t4  budget 1 GiB }\n";
        text.replacen(cursor_in, &format!("{}$0{}", &cursor_in[..2], &cursor_in[2..]), 1)
    };
    let key = hover(&fixture("device"));
    insta::assert_snapshot!(key, @r"
        infer s { model m()  batch 8  no_grad  eval  device t4  budget 1 GiB }
                                                     ^^^^^^
        scenario setting `device`

        the device preset: `cpu`, `a100_40gb`, `h100_80gb`, ...
        ");
    let value = hover(&fixture("t4 "));
    insta::assert_snapshot!(value, @r"
        infer s { model m()  batch 8  no_grad  eval  device t4  budget 1 GiB }
                                                            ^^
        `t4`: a value of the `device` setting
        ");
    let unit = hover(&fixture("GiB"));
    insta::assert_snapshot!(unit, @r"
        infer s { model m()  batch 8  no_grad  eval  device t4  budget 1 GiB }
                                                                         ^^^
        unit `GiB`: 1,073,741,824 bytes
        ");
}

#[test]
fn hover_on_a_field_and_on_an_import() {
    let field = hover("block b(x) {\n    n = x.sha$0pe[1]\n    return linear(x, n)\n}\n");
    insta::assert_snapshot!(field, @r"
            n = x.shape[1]
                  ^^^^^
        `shape`: the dimensions of a tensor, a list of integers
        ");
    let import = hover("use std.blo$0cks\n");
    insta::assert_snapshot!(import, @r"
        use std.blocks
            ^^^^^^^^^^
        file `<std>/blocks.net`
        ");
    let file = hover("#- blocks.net\nblock id(x) { return x }\n#- main.net\nuse \"blo$0cks.net\"\n");
    insta::assert_snapshot!(file, @r#"
        use "blocks.net"
            ^^^^^^^^^^^^
        file `blocks.net`
        "#);
}

#[test]
fn hover_on_the_model_of_a_scenario() {
    let actual = hover(
        r#"
        ## A tiny classifier.
        model tiny(classes: int = 10) {
            input x: f32[N, 8]
            return linear(x, classes)
        }
        infer s { model ti$0ny()  batch 2  no_grad  eval }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
        infer s { model tiny()  batch 2  no_grad  eval }
                        ^^^^
        ```net
        model tiny(classes: int = 10)
        ```

        A tiny classifier.
        ");
}

#[test]
fn hover_between_names_shows_the_statements_figures() {
    let actual = hover(
        r#"
        model m() {
            input x: f32[N, 8]
            y =$0 relu(x)
            return linear(y, 2)
        }
        infer s { model m()  batch 4  no_grad  eval }
        "#,
    );
    insta::assert_snapshot!(actual, @r"
            y = relu(x)
            ^^^^^^^^^^^
        **In scenario `s`** (`main.net`)

        - output: `f32[4, 8]`
        - output bytes: 128 B
        - params: 0
        - MACs: 0
        - instances: 1
        - activations (kept for backward, or made without autograd): 128 B
        ");
}

#[test]
fn hover_positions_are_byte_offsets_in_lines_with_multibyte_characters() {
    // `😀` is four bytes, `é` two: the cursor and the range are byte offsets.
    let actual = hover("block b(x) {  # 😀 é\n    y = relu(x)  # 😀😀\n    return gel$0u(y)  # é\n}\n");
    insta::assert_snapshot!(actual, @r#"
            return gelu(y)  # é
                   ^^^^
        ```net
        op gelu(x: tensor, approximate: str = "none") -> tensor
        ```

        Gaussian error linear unit (torch.nn.GELU); `approximate="tanh"` for the tanh form (GPT-2's
        `gelu_new`).

        - Shape: keeps the shape of `x`.
        - Params, MACs: none.
        - Saves: the input.
        - Workspace: none.
        - Example: `y = gelu(linear(x, 3072))`.

        *defined in `<std>/nn.net`*
        "#);
}

#[test]
fn hover_on_nothing() {
    let actual = hover("block b(x) {\n    return x\n}\n$0\n");
    insta::assert_snapshot!(actual, @"(nothing)");
}

// ---------------------------------------------------------------------------------------
// Go to definition

#[test]
fn goto_definition_of_a_local_finds_its_last_assignment_before_the_use() {
    let actual = goto_definition(
        r#"
        block b(x) {
            y = relu(x)
            y = gelu(y)
            return linear(y$0, 4)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:3:5: `y`");
}

#[test]
fn goto_definition_of_a_loop_variable_finds_the_for() {
    let actual = goto_definition(
        r#"
        block b(x, widths: [int]) {
            for w in widths {
                x = linear(x, w$0)
            }
            return x
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:2:9: `w`");
}

#[test]
fn goto_definition_of_a_name_in_its_own_reassignment_finds_the_previous_one() {
    // In `y = f(y)` the `y` read comes before the `y` written.
    let actual = goto_definition(
        r#"
        block b(x) {
            y = relu(x)
            y = gelu(y$0)
            return y
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:2:5: `y`");
}

#[test]
fn goto_definition_of_a_parameter() {
    let actual = goto_definition(
        r#"
        block b(x, width: int = 4) {
            return linear(x, wid$0th)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:1:12: `width`");
}

#[test]
fn goto_definition_of_a_block() {
    let actual = goto_definition(
        r#"
        ## An MLP.
        block mlp(x, hidden: int) {
            return linear(relu(linear(x, hidden)), 10)
        }
        model m() {
            input x: f32[N, 8]
            return m$0lp(x, 16)
        }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:2:7: `mlp` in `block mlp(x, hidden: int) {`");
}

#[test]
fn goto_definition_of_an_imported_block_and_of_its_keyword_argument() {
    let fixture = |call: &str| {
        format!(
            "#- blocks.net\n# Blocks.\n\nblock basic(x, planes: int, stride: int = 1) {{\n    return conv2d(x, planes, k=3, stride=stride)\n}}\n#- main.net\nuse \"blocks.net\"\nmodel m() {{\n    input x: f32[N, 3, 8, 8]\n    return {call}\n}}\n"
        )
    };
    let block = goto_definition(&fixture("bas$0ic(x, 8, stride=2)"));
    insta::assert_snapshot!(block, @"blocks.net:3:7: `basic` in `block basic(x, planes: int, stride: int = 1) {`");
    let keyword = goto_definition(&fixture("basic(x, 8, str$0ide=2)"));
    insta::assert_snapshot!(keyword, @"blocks.net:3:29: `stride`");
}

#[test]
fn goto_definition_of_an_imported_file() {
    let actual = goto_definition(
        r#"
        #- blocks.net
        block id(x) { return x }
        #- main.net
        use "bl$0ocks.net"
        "#,
    );
    insta::assert_snapshot!(actual, @"blocks.net:1:1: ``");
}

#[test]
fn goto_definition_of_a_standard_library_op_and_its_keyword() {
    let op = goto_definition("block b(x) {\n    return con$0v2d(x, 8, k=3, pad=1)\n}\n");
    insta::assert_snapshot!(op, @"<std>/nn.net: `conv2d` in `op conv2d(x: tensor, out_channels: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true) -> tensor`");
    let keyword = goto_definition("block b(x) {\n    return conv2d(x, 8, k=3, pa$0d=1)\n}\n");
    insta::assert_snapshot!(keyword, @"<std>/nn.net: `pad`");
}

#[test]
fn goto_definition_of_the_model_of_a_scenario() {
    let actual = goto_definition(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        infer s { model m$0()  batch 8 }
        "#,
    );
    insta::assert_snapshot!(actual, @"main.net:1:7: `m` in `model m() {`");
}

#[test]
fn goto_definition_of_a_setting_finds_nothing() {
    let actual = goto_definition(
        r#"
        model m() {
            input x: f32[N, 8]
            return linear(x, 2)
        }
        infer s { model m()  bat$0ch 8 }
        "#,
    );
    insta::assert_snapshot!(actual, @"(nothing)");
}

// ---------------------------------------------------------------------------------------
// References

const TWO_FILES: &str = r#"
    #- blocks.net
    ## A basic block.
    block basic(x, planes: int, stride: int = 1) {
        y = conv2d(x, planes, k=3, stride=stride, pad=1)
        s = x
        return relu(y + s)
    }
    #- main.net
    use "blocks.net"
    model m() {
        input x: f32[N, 3, 32, 32]
        y = basic(x, 64)
        y = basic(y, 128, stride=2)
        return basic(y, 128)
    }
    "#;

#[test]
fn references_of_a_block_span_the_workspace() {
    let fixture = TWO_FILES.replace("block basic", "block ba$0sic");
    let with_declaration = references(&fixture, true);
    insta::assert_snapshot!(with_declaration, @r"
        blocks.net:2:7: `basic`
        main.net:4:9: `basic`
        main.net:5:9: `basic`
        main.net:6:12: `basic`
        ");
    let without = references(&fixture, false);
    insta::assert_snapshot!(without, @r"
        main.net:4:9: `basic`
        main.net:5:9: `basic`
        main.net:6:12: `basic`
        ");
}

#[test]
fn references_of_a_keyword_parameter() {
    let fixture = TWO_FILES.replace("stride=2", "str$0ide=2");
    let actual = references(&fixture, true);
    insta::assert_snapshot!(actual, @r"
        blocks.net:2:29: `stride`
        main.net:5:23: `stride`
        ");
}

#[test]
fn references_of_a_parameter_from_its_declaration() {
    // QUESTIONABLE: from the declaration, the references are the parameter's uses in the
    // block's body only, not the keyword arguments that name it (`stride=2` in main.net);
    // from a keyword argument (above), the reverse. One parameter, two disjoint symbols.
    let fixture = TWO_FILES.replace("stride: int", "str$0ide: int");
    let actual = references(&fixture, true);
    insta::assert_snapshot!(actual, @r"
        blocks.net:2:29: `stride`
        blocks.net:3:39: `stride`
        ");
}

#[test]
fn references_of_a_local_stay_in_its_item() {
    let fixture = TWO_FILES.replace("s = x", "s$0 = x");
    let actual = references(&fixture, true);
    insta::assert_snapshot!(actual, @r"
        blocks.net:4:5: `s`
        blocks.net:5:21: `s`
        ");
    let uses = references(&fixture, false);
    insta::assert_snapshot!(uses, @"blocks.net:5:21: `s`");
}

#[test]
fn references_of_a_standard_library_op_include_its_declaration() {
    let actual = references("block b(x) {\n    y = relu(x)\n    return re$0lu(y)\n}\n", true);
    insta::assert_snapshot!(actual, @r"
        <std>/nn.net: `relu`
        main.net:2:9: `relu`
        main.net:3:12: `relu`
        ");
}

// ---------------------------------------------------------------------------------------
// Signature help

#[test]
fn signature_help_follows_the_positional_argument() {
    let actual = signature_help("block b(x) {\n    y = conv2d(x, 6$04, stride=2, )\n    return y\n}\n");
    insta::assert_snapshot!(actual, @r"
        conv2d(x: tensor, <out_channels: int>, k: int, stride: int = 1, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true)
        active: Some(1)
        2-D convolution (torch.nn.Conv2d).
        ");
}

#[test]
fn signature_help_follows_the_keyword_argument() {
    let actual = signature_help("block b(x) {\n    y = conv2d(x, 64, stride=2$0, )\n    return y\n}\n");
    insta::assert_snapshot!(actual, @r"
        conv2d(x: tensor, out_channels: int, k: int, <stride: int = 1>, pad: int = 0, dilation: int = 1, groups: int = 1, bias: bool = true)
        active: Some(3)
        2-D convolution (torch.nn.Conv2d).
        ");
}

#[test]
fn signature_help_of_a_block_and_of_the_dataloader() {
    let block = signature_help(
        "## An MLP.\nblock mlp(x, hidden: int, out: int = 10) { return linear(x, out) }\nblock b(x) {\n    return mlp(x, $0\n}\n",
    );
    insta::assert_snapshot!(block, @r"
        mlp(x, <hidden: int>, out: int = 10)
        active: Some(1)
        An MLP.
        ");
    let dataloader = signature_help(
        "model m() {\n    input x: f32[N, 8]\n    return linear(x, 2)\n}\ntrain t { model m()  batch 8  dataloader(workers=2, pin_memory=$0) }\n",
    );
    insta::assert_snapshot!(dataloader, @r"
        dataloader(workers: int, prefetch: int, sample: size, <pin_memory: bool>)
        active: Some(3)
        host-side data loading: `dataloader(workers=8, prefetch=2, sample=602 KB, pin_memory=true)`
        ");
}

#[test]
fn signature_help_outside_a_call_is_nothing() {
    let actual = signature_help("block b(x) {\n    y = conv2d(x, 64, stride=2)\n    ret$0urn y\n}\n");
    insta::assert_snapshot!(actual, @"(nothing)");
}

// ---------------------------------------------------------------------------------------
// Inlay hints and code lenses

const MODEL: &str = r#"
    block mlp(x, width: int) {
        h = linear(x, width); h = relu(h)
        y = linear(
            h,
            width,
        )
        return x + y
    }
    model m() {
        input x: f32[N, 64]
        y = mlp(x, 64)
        y = repeat 3 mlp(y, 64)
        return linear(y, 10)
    }
    train fit { model m()  batch 32  optimizer adam }
    infer serve { model m()  batch 1  no_grad  eval }
    "#;

#[test]
fn inlay_hints_show_each_lines_shape_and_bytes_in_the_active_scenario() {
    // The first scenario of the file is the active one: batch 32.
    let actual = inlay_hints(MODEL, &HintConfig::default(), None);
    insta::assert_snapshot!(actual, @r"
        block mlp(x, width: int) {
            h = linear(x, width); h = relu(h)  /* f32[32, 64] · 32.0 KiB · ×4 */
            y = linear(
                h,
                width,
            )  /* f32[32, 64] · ×4 */
            return x + y  /* f32[32, 64] · 32.0 KiB · ×4 */
        }
        model m() {
            input x: f32[N, 64]  /* f32[32, 64] · 8.0 KiB */
            y = mlp(x, 64)  /* f32[32, 64] */
            y = repeat 3 mlp(y, 64)  /* f32[32, 64] */
            return linear(y, 10)  /* f32[32, 10] */
        }
        train fit { model m()  batch 32  optimizer adam }
        infer serve { model m()  batch 1  no_grad  eval }
        ");
}

#[test]
fn inlay_hints_follow_the_chosen_scenario() {
    let serve = ScenarioRef { file: FileName::new("main.net"), name: "serve".into() };
    let actual = inlay_hints(MODEL, &HintConfig::default(), Some(&serve));
    insta::assert_snapshot!(actual, @r"
        block mlp(x, width: int) {
            h = linear(x, width); h = relu(h)  /* f32[1, 64] · 2.0 KiB · ×4 */
            y = linear(
                h,
                width,
            )  /* f32[1, 64] · 1.0 KiB · ×4 */
            return x + y  /* f32[1, 64] · 1.0 KiB · ×4 */
        }
        model m() {
            input x: f32[N, 64]  /* f32[1, 64] · 256 B */
            y = mlp(x, 64)  /* f32[1, 64] */
            y = repeat 3 mlp(y, 64)  /* f32[1, 64] */
            return linear(y, 10)  /* f32[1, 10] · 40 B */
        }
        train fit { model m()  batch 32  optimizer adam }
        infer serve { model m()  batch 1  no_grad  eval }
        ");
}

#[test]
fn hover_figures_follow_the_chosen_scenario() {
    let serve = ScenarioRef { file: FileName::new("main.net"), name: "serve".into() };
    let fixture = MODEL.replace("return linear(y, 10)", "return lin$0ear(y, 10)");
    let actual = hover_in(&fixture, Some(&serve));
    let figures = actual.split("---").nth(1).expect("the line's figures after the op's documentation");
    insta::assert_snapshot!(figures.trim(), @r"
        **In scenario `serve`** (`main.net`)

        - output: `f32[1, 10]`
        - output bytes: 40 B
        - params: 650
        - MACs: 640
        - instances: 1
        - activations (kept for backward, or made without autograd): 40 B
        - weights: 2.5 KiB
        ");
}

#[test]
fn inlay_hints_show_the_figures_the_configuration_chooses() {
    let config = HintConfig { shape: false, bytes: false, params: true, macs: true, ..HintConfig::default() };
    let actual = inlay_hints(MODEL, &config, None);
    insta::assert_snapshot!(actual, @r"
        block mlp(x, width: int) {
            h = linear(x, width); h = relu(h)  /* 16.64 K params · 524.29 K MACs */
            y = linear(
                h,
                width,
            )  /* 16.64 K params · 524.29 K MACs */
            return x + y  /* ×4 */
        }
        model m() {
            input x: f32[N, 64]
            y = mlp(x, 64)
            y = repeat 3 mlp(y, 64)
            return linear(y, 10)  /* 650 params · 20.48 K MACs */
        }
        train fit { model m()  batch 32  optimizer adam }
        infer serve { model m()  batch 1  no_grad  eval }
        ");
    // QUESTIONABLE: with little room the shape is cut to a lone `…` (`… · 32.0 KiB`), which
    // says nothing; dropping the shape would read better.
    let short = HintConfig { max_length: 12, ..HintConfig::default() };
    let actual = inlay_hints(MODEL, &short, None);
    insta::assert_snapshot!(actual, @r"
        block mlp(x, width: int) {
            h = linear(x, width); h = relu(h)  /* … · 32.0 KiB */
            y = linear(
                h,
                width,
            )  /* f32[32,64] */
            return x + y  /* … · 32.0 KiB */
        }
        model m() {
            input x: f32[N, 64]  /* f… · 8.0 KiB */
            y = mlp(x, 64)  /* f32[32, 64] */
            y = repeat 3 mlp(y, 64)  /* f32[32, 64] */
            return linear(y, 10)  /* f32[32, 10] */
        }
        train fit { model m()  batch 32  optimizer adam }
        infer serve { model m()  batch 1  no_grad  eval }
        ");
    let off = HintConfig { enabled: false, ..HintConfig::default() };
    let f = load(MODEL);
    assert_eq!(ide::inlay_hints(&f.db, f.file, None, None, &off), []);
}

#[test]
fn inlay_hints_of_a_file_of_blocks_come_from_a_scenario_elsewhere() {
    let actual = inlay_hints(
        r#"
        #- blocks.net
        block stem(x) {
            y = conv2d(x, 16, k=3, pad=1)$0
            return relu(batchnorm(y))
        }
        #- main.net
        use "blocks.net"
        model m() {
            input x: f32[N, 3, 32, 32]
            return stem(x)
        }
        infer serve { model m()  batch 2  no_grad  eval }
        "#,
        &HintConfig::default(),
        None,
    );
    insta::assert_snapshot!(actual, @r"
        block stem(x) {
            y = conv2d(x, 16, k=3, pad=1)  /* f32[2, 16, 32, 32] · 128.0 KiB */
            return relu(batchnorm(y))  /* f32[2, 16, 32, 32] · 256.0 KiB */
        }
        ");
}

#[test]
fn inlay_hints_of_a_range_are_those_that_end_in_it() {
    let f = load(MODEL);
    let text = f.text();
    let start = text.find("    input").expect("the input") as u32;
    let end = text.find("    return linear(y, 10)").expect("the return") as u32;
    let hints = ide::inlay_hints(&f.db, f.file, Some(TextRange::new(start, end)), None, &HintConfig::default());
    let lines: Vec<&str> = hints.iter().map(|h| line_at(text, h.offset).trim()).collect();
    assert_eq!(lines, ["input x: f32[N, 64]", "y = mlp(x, 64)", "y = repeat 3 mlp(y, 64)"]);
}

#[test]
fn code_lenses_show_each_scenarios_figures_and_the_active_one() {
    let render = |chosen: Option<&ScenarioRef>| {
        let f = load(MODEL);
        let mut out = String::new();
        for lens in ide::code_lenses(&f.db, f.file, chosen) {
            assert_eq!(lens.scenario.name, &f.text()[lens.range.to_range()]);
            assert_eq!(lens.active, lens.title.starts_with('●'), "{lens:?}");
            assert!(lens.total_bytes.is_some_and(|b| b > 0) && lens.budget_bytes.is_none(), "{lens:?}");
            // The memory figure (`… total`) belongs to the memory model's tests.
            let title = match lens.title.split_once(" · ") {
                Some((state, rest)) => {
                    let rest = rest.split_once(" · ").map_or(rest, |(_, r)| r);
                    format!("{state} · … total · {rest}")
                }
                None => lens.title.clone(),
            };
            let (line, col) = line_col(f.text(), lens.range.start);
            let _ = writeln!(out, "{line}:{col} {}: {title}", lens.scenario.name);
        }
        out
    };
    insta::assert_snapshot!(render(None), @r"
        15:7 fit: ● active · … total · 33.93 K params · 1.07 M MACs
        16:7 serve: ○ set active · … total · 33.93 K params · 33.41 K MACs
        ");
    let serve = ScenarioRef { file: FileName::new("main.net"), name: "serve".into() };
    insta::assert_snapshot!(render(Some(&serve)), @r"
        15:7 fit: ○ set active · … total · 33.93 K params · 1.07 M MACs
        16:7 serve: ● active · … total · 33.93 K params · 33.41 K MACs
        ");
}

#[test]
fn code_lenses_show_the_memory_against_the_budget() {
    let f = load(&MODEL.replace("batch 1  no_grad  eval", "batch 1  no_grad  eval  budget 1 GiB"));
    let lenses = ide::code_lenses(&f.db, f.file, None);
    let serve = lenses.iter().find(|l| l.scenario.name == "serve").expect("the lens of `serve`");
    assert_eq!(serve.budget_bytes, Some(1 << 30), "{serve:?}");
    // The memory figures (the total and its share) belong to the memory model's tests.
    let parts: Vec<&str> = serve.title.split(" · ").collect();
    let (_total, budget) = parts[1].split_once(" of ").expect("`TOTAL of BUDGET budget (P %)`");
    let budget = budget.split_once(" (").map_or(budget, |(b, _)| b);
    let fits = serve.fits_batch.expect("a scenario with a budget has a fit");
    let title = format!("{} · … of {budget} (… %) · {}", parts[0], parts[2..].join(" · "))
        .replace(&format!("batch {fits} "), "batch … ");
    insta::assert_snapshot!(title, @"○ set active · … of 1.0 GiB budget (… %) · 33.93 K params · 33.41 K MACs · fits up to batch … within budget");
    // The largest batch that fits: the scenario simulated at it fits its budget, and at the
    // next batch it does not.
    let index = netc::semantics::files::syntax_tree(&f.db, f.file)
        .iter()
        .position(|item| matches!(item, netc::syntax::Item::Scenario(s) if s.name.text == "serve"))
        .expect("serve") as u32;
    let loc = netc::semantics::files::ItemLoc::new(&f.db, f.file, index);
    let total_at = |batch: i128| {
        let dims = [("N".to_string(), batch)].into_iter().collect();
        netc::costs::scenario_costs_with(&f.db, loc, dims).expect("simulates").total
    };
    assert!(total_at(fits) <= 1 << 30 && total_at(fits + 1) > 1 << 30, "batch {fits}");
}

// ---------------------------------------------------------------------------------------
// Semantic tokens, folding, symbols

#[test]
fn semantic_tokens_classify_names_by_what_they_are() {
    let f = load(
        r#"
        # Blocks and a model.
        use std.blocks

        ## A block.
        block b(x, width: int = 4) {
            y = conv2d(x, width, k=3, stride=2)
            return relu(y) + x.shape[1]
        }
        model m() {
            input x: f32[N, 3, 8, 8]
            return b(x, width=3)
        }
        infer s { model m()  batch 2  device t4  budget 1 GiB }
        "#,
    );
    let text = f.text();
    let mut out = String::new();
    for t in ide::semantic_tokens(&f.db, f.file) {
        let mut flags = String::new();
        for (set, name) in [(t.declaration, " declaration"), (t.default_library, " stdlib"), (t.documentation, " doc")]
        {
            if set {
                flags.push_str(name);
            }
        }
        let _ = writeln!(out, "{:<24} {:?}{flags}", &text[t.range.to_range()], t.class);
    }
    insta::assert_snapshot!(out, @r"
        # Blocks and a model.    Comment
        use                      Keyword
        std                      Namespace
        blocks                   Namespace
        ## A block.              Comment doc
        block                    Keyword
        b                        Block declaration
        x                        Parameter declaration
        width                    Parameter declaration
        int                      Type
        4                        Number
        y                        Variable declaration
        conv2d                   Op stdlib
        x                        Parameter
        width                    Parameter
        k                        Parameter
        3                        Number
        stride                   Parameter
        2                        Number
        return                   Keyword
        relu                     Op stdlib
        y                        Variable
        +                        Operator
        x                        Parameter
        shape                    Property
        1                        Number
        model                    Keyword
        m                        Model declaration
        input                    Keyword
        x                        Variable declaration
        f32                      Type
        N                        Variable declaration
        3                        Number
        8                        Number
        8                        Number
        return                   Keyword
        b                        Block
        x                        Variable
        width                    Parameter
        3                        Number
        infer                    Keyword
        s                        Scenario declaration
        model                    Property
        m                        Model
        batch                    Property
        2                        Number
        device                   Property
        t4                       EnumMember
        budget                   Property
        1                        Number
        GiB                      EnumMember
        ");
}

#[test]
fn folding_ranges_fold_bodies_calls_comments_and_imports() {
    let f = load(
        r#"
        # one
        # two
        use std.nn
        use std.blocks
        block b(x) {
            y = conv2d(
                x,
                8, k=1)
            return y
        }
        infer s {
            model m()
            batch 1
        }
        "#,
    );
    let text = f.text();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for fold in ide::folding_ranges(&f.db, f.file) {
        let _ = writeln!(
            out,
            "{}-{} {:?}: {}",
            fold.start_line + 1,
            fold.end_line + 1,
            fold.kind,
            lines[fold.start_line as usize].trim()
        );
    }
    insta::assert_snapshot!(out, @r"
        1-2 Comment: # one
        3-4 Imports: use std.nn
        5-9 Region: block b(x) {
        6-8 Region: y = conv2d(
        11-13 Region: infer s {
        ");
}

#[test]
fn document_symbols_are_the_items_with_each_models_inputs() {
    let f = load(
        r#"
        use std.blocks
        op my_op(x: tensor) -> tensor
        ## A block.
        block b(x, width: int = 4) {
            return linear(x, width)
        }
        model m(classes: int = 10) {
            input x: f32[N, 8]
            input mask: f32[N, 8]
            return b(x * mask, classes)
        }
        train t { model m()  batch 2  optimizer sgd }
        "#,
    );
    let text = f.text();
    fn render(text: &str, s: &ide::DocumentSymbol, depth: usize, out: &mut String) {
        let (first, _) = line_col(text, s.range.start);
        let (last, _) = line_col(text, s.range.end);
        let selected = &text[s.selection_range.to_range()];
        let detail = s.detail.as_deref().unwrap_or("-");
        let _ =
            writeln!(out, "{}{:?} {} [{selected}] lines {first}-{last}: {detail}", "  ".repeat(depth), s.kind, s.name);
        for child in &s.children {
            render(text, child, depth + 1, out);
        }
    }
    let mut out = String::new();
    for s in ide::document_symbols(&f.db, f.file) {
        render(text, &s, 0, &mut out);
    }
    insta::assert_snapshot!(out, @r"
        Import std.blocks [use std.blocks] lines 1-1: use std.blocks
        Op my_op [my_op] lines 2-2: op my_op(x: tensor) -> tensor
        Block b [b] lines 4-6: block b(x, width: int = 4)
        Model m [m] lines 7-11: model m(classes: int = 10)
          Input x [x] lines 8-8: f32[N, 8]
          Input mask [mask] lines 9-9: f32[N, 8]
        Scenario t [t] lines 12-12: train t
        ");
}

#[test]
fn workspace_symbols_match_names_across_files_and_the_standard_library() {
    let f = load(TWO_FILES);
    let render = |query: &str| {
        let mut found: Vec<String> = ide::workspace_symbols(&f.db, query)
            .iter()
            .map(|s| {
                let text = text_of(&f.db, &s.file);
                assert_eq!(&text[s.range.to_range()], s.name);
                format!("{:?} {} in {}", s.kind, s.name, s.file)
            })
            .collect();
        found.sort();
        found.join("\n")
    };
    // An empty query: the workspace's items only.
    insta::assert_snapshot!(render(""), @r"
        Block basic in blocks.net
        Model m in main.net
        ");
    // A query: its characters in order, any case, the standard library included.
    insta::assert_snapshot!(render("BaSi"), @r"
        Block basic in blocks.net
        Block basic_block in <std>/blocks.net
        Scenario bert_base_infer in <std>/models/bert.net
        Scenario bert_base_train in <std>/models/bert.net
        ");
}

// ---------------------------------------------------------------------------------------
// Diagnostics and formatting

#[test]
fn diagnostics_have_codes_ranges_and_labels_into_the_standard_library() {
    let f = load(
        r#"
        block b(x) {
            y = conv2d(x, 64, 3, 1, 0, 1, 1, true, 9)
            return undefined_name
        }
        "#,
    );
    let text = f.text();
    let mut out = String::new();
    for d in ide::diagnostics(&f.db, f.file) {
        let _ = writeln!(out, "{} {:?}: {}", d.code.info().code, d.severity, d.message);
        for label in &d.labels {
            let Place::Range(r) = label.place else { panic!("diagnostics have byte ranges: {label:?}") };
            let at = if label.file == *f.file.name(&f.db) {
                let (line, col) = line_col(text, r.start);
                format!("{}:{line}:{col} `{}`", label.file, &text[r.to_range()])
            } else {
                format!("{} `{}`", label.file, &text_of(&f.db, &label.file)[r.to_range()])
            };
            let kind = if label.primary { "primary" } else { "label" };
            let _ = writeln!(out, "{}", format!("  {kind} {at}: {}", label.message).trim_end());
        }
    }
    insta::assert_snapshot!(out, @r"
        E0207 Error: `conv2d` takes 8 arguments, but 9 were given
          primary main.net:2:44 `9`:
          label <std>/nn.net `conv2d`: defined as `conv2d(x: tensor, out_channels: int, k: int, stride: int = ..., pad: int = ..., dilation: int = ..., groups: int = ..., bias: bool = ...)`
        E0204 Error: undefined name `undefined_name`
          primary main.net:3:12 `undefined_name`:
        ");
}

#[test]
fn diagnostics_carry_the_fixes_an_editor_offers_as_quick_fixes() {
    // A model whose inference scenario lacks `no_grad` (L0003): with nested calls, autograd
    // keeps the first `relu`'s output alive.
    let f = load(
        r#"
        model m() {
            input x: f32[N, 512]
            return linear(relu(linear(relu(linear(x, 2048)), 2048)), 10)
        }
        infer serve { model m()  batch 256  eval }
        "#,
    );
    let text = f.text();
    let mut out = String::new();
    for d in ide::diagnostics(&f.db, f.file) {
        let _ = writeln!(out, "{} {:?}: {}", d.code.info().code, d.severity, d.message);
        for fix in &d.fixes {
            for edit in &fix.edits {
                let Place::Range(r) = edit.place else { panic!("fixes have byte ranges: {edit:?}") };
                let mut fixed = text.to_string();
                if edit.insert_after {
                    fixed.insert_str(r.end as usize, &edit.text);
                } else {
                    fixed.replace_range(r.to_range(), &edit.text);
                }
                let _ = writeln!(out, "  fix \"{}\": {}", fix.title, line_at(&fixed, r.start));
            }
        }
    }
    insta::assert_snapshot!(out, @r#"
        L0006 Help: this linear layer holds 80 % of the model's parameters (4,196,352 of 5,267,466)
        L0003 Warning: inference scenario `serve` runs without `no_grad`: autograd keeps 2.0 MiB more
          fix "add `no_grad`": infer serve { model m()  batch 256  eval  no_grad }
        "#);
}

#[test]
fn formatting_gives_the_formatted_text_or_refuses_syntax_errors() {
    let ugly = load("block b( x ){\nreturn relu(x) # done\n}\n");
    let formatted = ide::formatted(&ugly.db, ugly.file).expect("formats");
    insta::assert_snapshot!(formatted, @r"
        block b(x) {
            return relu(x)  # done
        }
        ");
    let again = load(&formatted);
    assert_eq!(ide::formatted(&again.db, again.file).as_deref(), Ok(formatted.as_str()), "idempotent");
    // The error says how many syntax errors, as `1 syntax error(s)` (a plural left to the
    // reader).
    let broken = load("block b(x) {\n    return relu(x\n}\n");
    let error = ide::formatted(&broken.db, broken.file).expect_err("a syntax error");
    insta::assert_snapshot!(error.to_string(), @"1 syntax error(s)");
}

#[test]
fn the_fixture_loader_strips_indentation_and_the_cursor() {
    let f =
        load("\n    #- a.net\n    block a(x) {\n        return x$0\n    }\n    #- main.net\n    use \"a.net\"\n    ");
    assert_eq!(f.file.name(&f.db).as_str(), "a.net");
    assert_eq!(f.text(), "block a(x) {\n    return x\n}\n");
    assert_eq!(&f.text()[..f.cursor() as usize], "block a(x) {\n    return x");
    assert_eq!(f.file_named("main.net").text(&f.db), "use \"a.net\"\n");
}
