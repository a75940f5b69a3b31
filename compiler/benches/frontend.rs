//! Front-end throughput: parsing, name resolution and checking (`file_diagnostics`) of big
//! generated files, and the cost of re-checking after a one-line edit through the database.
//!
//! Run with `cargo bench -p netc-compiler --bench frontend`. Plain `std::time::Instant`, best of several
//! runs; the table goes to stdout. Three inputs:
//! - a valid 100,000-line file: 2,000 units of 50 lines (two blocks, a model, a training and a
//!   serving scenario each), and a valid 10,000-line file of the same units (the design's bar
//!   is a one-line edit of a 10,000-line file re-checked in a few milliseconds);
//! - a 10,000-line file of the same units with one error every 50 lines (alternately a
//!   syntax error, an undefined name and an unknown callee).

use std::hint::black_box;
use std::time::{Duration, Instant};

use netc::diagnostics::FileName;
use netc::host::{Database, file_diagnostics};

const UNIT_LINES: usize = 50;

/// The line of each unit that the error variants and the statement edit change.
const EDITED_LINE: &str = "    y = dropout(y, p=0.2)";

/// One unit of 50 lines with names suffixed by `k`; `error` replaces [`EDITED_LINE`].
fn unit(k: usize, error: Option<usize>) -> String {
    let dropout = match error {
        None => EDITED_LINE.to_string(),
        Some(e) if e % 3 == 0 => "    y = dropout(y p=0.2)".to_string(),
        Some(e) if e % 3 == 1 => "    y = dropout(z, p=0.2)".to_string(),
        Some(_) => "    y = dropot(y, p=0.2)".to_string(),
    };
    let mut text = format!(
        "# ---- unit {k} ----
## Residual basic block {k}: two 3x3 convolutions and a shortcut.
block basic{k}(x, planes: int, stride: int = 1) {{
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride != 1 {{
        s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false))
    }}
    return relu(y + s)
}}

block head{k}(x, classes: int) {{
    y = flatten(adaptive_avgpool2d(x, 1))
{dropout}
    return linear(y, classes)
}}

model net{k}(classes: int = 1000, width: int = 64) {{
    input x: f32[N, 3, 224, 224]
    y = relu(batchnorm(conv2d(x, width, k=7, stride=2, pad=3, bias=false)))
    y = maxpool2d(y, k=3, stride=2, pad=1)
    y = basic{k}(y, width)
    y = basic{k}(y, width * 2, stride=2)
    y = basic{k}(y, width * 4, stride=2)
    y = basic{k}(y, width * 8, stride=2)
    return head{k}(y, classes)
}}

train train{k} {{
    model net{k}(classes=100)
    batch 64
    optimizer adamw
    precision amp
    device a100_40gb
    budget 20 GiB
    margin 1.2
}}

infer serve{k} {{
    model net{k}()
    batch 1
    no_grad
    eval
    budget 512 MiB
}}
"
    );
    let lines = text.lines().count();
    assert!(lines <= UNIT_LINES, "a unit has {lines} lines");
    for _ in lines..UNIT_LINES {
        text.push('\n');
    }
    text
}

fn generate(lines: usize, errors: bool) -> String {
    (0..lines / UNIT_LINES).map(|k| unit(k, errors.then_some(k))).collect()
}

/// The best time of `runs` runs of `f`, and `f`'s last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let value = black_box(f());
        best = best.min(start.elapsed());
        last = Some(value);
    }
    (best, last.expect("at least one run"))
}

/// The best time of re-checking after replacing line `line` (0-based) of `text` with
/// `replacement`: `set_file` with the edited text, then `file_diagnostics`. Runs alternate
/// between the edited and the original text, so each one is a real one-line edit.
fn edit_time(text: &str, line: usize, replacement: &str, runs: usize) -> Duration {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut edited = lines.clone();
    let new_line = format!("{replacement}\n");
    edited[line] = &new_line;
    let edited: String = edited.concat();
    assert_ne!(edited, text);
    let name = FileName::new("bench.net");
    let mut db = Database::new();
    let file = db.set_file(name.clone(), text.to_string());
    let _ = file_diagnostics(&db, file);
    let mut best = Duration::MAX;
    for run in 0..runs * 2 {
        let next = if run % 2 == 0 { edited.clone() } else { text.to_string() };
        let start = Instant::now();
        db.set_file(name.clone(), next);
        black_box(file_diagnostics(&db, file).len());
        best = best.min(start.elapsed());
    }
    best
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

struct Row {
    input: &'static str,
    lines: usize,
    bytes: usize,
    parse: Duration,
    full: Duration,
    diagnostics: usize,
    comment_edit: Duration,
    whitespace_edit: Duration,
    statement_edit: Duration,
}

fn measure(input: &'static str, text: &str, runs: usize) -> Row {
    let name = FileName::new("bench.net");
    let (parse, parsed) = best(runs, || netc::syntax::parse(&name, text));
    assert!(!parsed.tree.items.is_empty());
    let (full, diagnostics) = best(runs, || {
        let mut db = Database::new();
        let file = db.set_file(name.clone(), text.to_string());
        file_diagnostics(&db, file).len()
    });
    // Edit a unit in the middle of the file.
    let middle_unit = text.lines().count() / UNIT_LINES / 2;
    let base = middle_unit * UNIT_LINES;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[base].starts_with("# ---- unit"), "{}", lines[base]);
    let statement = base + lines[base..].iter().position(|l| l.starts_with("    y = dropout(")).expect("the line");
    let indented = base + 3;
    let comment_edit = edit_time(text, base, "# ---- unit edited ----", runs * 2);
    let whitespace_edit = edit_time(text, indented, &format!("  {}", lines[indented]), runs * 2);
    let statement_edit = edit_time(text, statement, "    y = dropout(y, p=0.3)", runs * 2);
    Row {
        input,
        lines: text.lines().count(),
        bytes: text.len(),
        parse,
        full,
        diagnostics,
        comment_edit,
        whitespace_edit,
        statement_edit,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter or `--test` (from `cargo test --benches`) asks
    // for a quick run.
    let quick = std::env::args().any(|a| a == "--test");
    let (big_lines, runs) = if quick { (5_000, 1) } else { (100_000, 5) };
    let valid = generate(big_lines, false);
    let valid_small = generate(10_000, false);
    let broken = generate(10_000, true);
    let rows = [
        measure("valid", &valid, runs),
        measure("valid", &valid_small, runs),
        measure("one error / 50 lines", &broken, runs),
    ];
    assert_eq!(rows[0].diagnostics, 0, "the valid file has diagnostics");
    assert_eq!(rows[1].diagnostics, 0, "the valid file has diagnostics");
    assert!(rows[2].diagnostics >= 10_000 / UNIT_LINES, "each unit of the broken file has an error");

    println!();
    println!("netc front end, best of {runs} runs (edits: best of {})", runs * 4);
    println!();
    println!(
        "| input | lines | bytes | parse | parse+resolve | lines/s | diagnostics | edit comment | edit whitespace | edit statement |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} |",
            r.input,
            r.lines,
            r.bytes,
            ms(r.parse),
            ms(r.full),
            r.lines as f64 / r.full.as_secs_f64(),
            r.diagnostics,
            ms(r.comment_edit),
            ms(r.whitespace_edit),
            ms(r.statement_edit),
        );
    }
    println!();
    println!("parse: netc::syntax::parse alone; parse+resolve: a fresh database, set_file, file_diagnostics");
    println!("(syntax, names, kinds, and the shape elaboration of every scenario and model of a file");
    println!("without errors); lines/s: lines / parse+resolve; edit: set_file with the text with one line");
    println!("changed, then file_diagnostics, in a warm database (a unit in the middle of the file).");
}
