//! Inputs that were quadratic (issue 21): each is generated at a size and at four times it,
//! and the table gives both times and their ratio, about 4 for a linear step and 16 for a
//! quadratic one. Run with `cargo bench -p netc-compiler --bench scaling`; `--test` (from
//! `cargo test --benches`) runs the small sizes once.
//!
//! - semantic tokens of a generated file (the language server's colouring);
//! - an import chain (each file uses the next) and an import cycle (the last uses the first),
//!   checked in one database;
//! - a block of `if/else` statements, each assigning a new name;
//! - blocks on one line, separated by `;`, with distinct names and all with one name;
//! - the diagnostics of one long line (an undefined name each, after a non-ASCII string)
//!   rendered in each format: the columns were counted from the line's start each time.

mod support;

use std::hint::black_box;

use netc::diagnostics::FileName;
use netc::host::{Database, file_diagnostics};
use support::best;

/// A file of `n` small blocks and models, about 180 bytes each.
fn blocks_file(n: usize) -> String {
    (0..n)
        .map(|k| {
            format!(
                "## Block {k}.\nblock b{k}(x, width: int) {{\n    h = relu(linear(x, width))\n    # A comment.\n    return x + linear(h, width)\n}}\n\n"
            )
        })
        .collect()
}

fn if_else_file(n: usize) -> String {
    let mut text = String::from("block b(x, c: int) {\n");
    for i in 0..n {
        text.push_str(&format!(
            "    if c == {i} {{\n        y{i} = relu(x)\n    }} else {{\n        y{i} = x\n    }}\n"
        ));
    }
    text.push_str(&format!("    return y{}\n}}\n", n - 1));
    text
}

fn one_line_file(n: usize, same_name: bool) -> String {
    let blocks: Vec<String> =
        (0..n).map(|i| format!("block b{}(x) {{ return x }}", if same_name { 0 } else { i })).collect();
    blocks.join("; ") + "\n"
}

/// Checks every file of a fresh database.
fn check(files: &[(String, String)]) {
    let mut db = Database::new();
    let files: Vec<_> =
        files.iter().map(|(name, text)| db.set_file(FileName::new(name.as_str()), text.clone())).collect();
    for file in files {
        black_box(file_diagnostics(&db, file).len());
    }
}

fn import_chain(n: usize, cycle: bool) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let next = match (i + 1 < n, cycle) {
                (true, _) => format!("use \"f{}.net\"\n", i + 1),
                (false, true) => "use \"f0.net\"\n".to_string(),
                (false, false) => String::new(),
            };
            (format!("f{i}.net"), format!("{next}block b{i}(x) {{\n    return relu(x)\n}}\n"))
        })
        .collect()
}

/// One line that uses `n` undefined names, after characters of one, two and four bytes.
fn undefined_names_line(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    format!("model m(x: f32[1]) {{ s = \"\u{e9}\u{1F600}\"; return concat([x, {}]) }}\n", names.join(", "))
}

/// Checks `text` and renders its diagnostics in `format`.
fn render(text: &str, format: &str) {
    let mut db = Database::new();
    let name = FileName::new("long.net");
    let file = db.set_file(name.clone(), text.to_string());
    let diagnostics = file_diagnostics(&db, file);
    let sources = std::collections::BTreeMap::from([(name, text.to_string())]);
    let out = match format {
        "human" => netc::render::human(diagnostics, &sources, false),
        "short" => netc::render::short(diagnostics, &sources, false),
        "json" => netc::render::json(diagnostics, &sources, 1),
        "sarif" => netc::render::sarif(diagnostics, &sources),
        _ => netc::render::github(diagnostics, &sources),
    };
    black_box(out.len());
}

fn semantic_tokens(text: &str) {
    let mut db = Database::new();
    let file = db.set_file(FileName::new("big.net"), text.to_string());
    black_box(netc::ide::semantic_tokens(&db, file).len());
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let (scale, runs) = if quick { (1, 1) } else { (4, 3) };
    type Case = (&'static str, usize, Box<dyn Fn(usize)>);
    let cases: Vec<Case> = vec![
        ("semantic tokens, blocks", 1_000 * scale, Box::new(|n| semantic_tokens(&blocks_file(n)))),
        ("import chain, files", 500 * scale, Box::new(|n| check(&import_chain(n, false)))),
        ("import cycle, files", 500 * scale, Box::new(|n| check(&import_chain(n, true)))),
        ("if/else, statements", 1_000 * scale, Box::new(|n| check(&[("b.net".into(), if_else_file(n))]))),
        ("one line, blocks", 2_000 * scale, Box::new(|n| check(&[("b.net".into(), one_line_file(n, false))]))),
        ("one line, same name", 2_000 * scale, Box::new(|n| check(&[("b.net".into(), one_line_file(n, true))]))),
        ("one line, human", 5_000 * scale, Box::new(|n| render(&undefined_names_line(n), "human"))),
        ("one line, short", 5_000 * scale, Box::new(|n| render(&undefined_names_line(n), "short"))),
        ("one line, json", 5_000 * scale, Box::new(|n| render(&undefined_names_line(n), "json"))),
        ("one line, sarif", 5_000 * scale, Box::new(|n| render(&undefined_names_line(n), "sarif"))),
        ("one line, github", 5_000 * scale, Box::new(|n| render(&undefined_names_line(n), "github"))),
    ];
    println!();
    println!("Inputs that were quadratic, best of {runs} runs: the ratio is about 4 when linear, 16 when quadratic");
    println!();
    println!("| input | n | time | 4n | time | ratio |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, n, run) in &cases {
        let small = best(runs, || run(*n));
        let large = best(runs, || run(4 * n));
        println!(
            "| {name} | {n} | {:.1} ms | {} | {:.1} ms | {:.1} |",
            small.as_secs_f64() * 1e3,
            4 * n,
            large.as_secs_f64() * 1e3,
            large.as_secs_f64() / small.as_secs_f64()
        );
    }
}
