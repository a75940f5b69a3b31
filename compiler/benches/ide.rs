//! Editor latency: from a one-line edit to the inlay hints of a visible range (what the
//! language server computes after each keystroke, without the JSON-RPC around it), and to
//! the file's diagnostics. Prints a table; run with `cargo bench -p netc-compiler --bench ide`.

mod support;

use std::time::Duration;

use netc::diagnostics::{FileName, TextRange};
use netc::host::{Database, file_diagnostics};
use netc::ide::{HintConfig, ScenarioRef, inlay_hints};
use support::{Case, EDITS, best, cases};

/// The allocator of the `netc` binary (cli/src/main.rs), so that the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    print!("{:<14} {:>6} {:>11}", "file", "lines", "cold hints");
    for name in EDITS {
        print!(" {name:>14}");
    }
    println!(" {:>14} {:>14} {:>14}", "stmt, last 60", "comment->diag", "statement->diag");
    let config = HintConfig::default();
    for Case { name, text, scenario, edits } in cases() {
        let file_name = FileName::new(name);
        let chosen = Some(ScenarioRef { file: file_name.clone(), name: scenario.to_string() });
        let chosen = chosen.as_ref();
        let lines = text.lines().count();
        // The visible range: the first 60 lines.
        let visible_end = text.match_indices('\n').nth(59).map_or(text.len(), |(i, _)| i) as u32;
        let range = Some(TextRange::new(0, visible_end));
        let cold = best(3, || {
            let mut db = Database::new();
            let file = db.set_file(file_name.clone(), text.clone());
            let hints = inlay_hints(&db, file, range, chosen, &config);
            assert!(!hints.is_empty(), "{name}: no hints");
        });
        let mut db = Database::new();
        let file = db.set_file(file_name.clone(), text.clone());
        let _ = inlay_hints(&db, file, range, chosen, &config);
        let _ = file_diagnostics(&db, file);
        let mut flip = false;
        print!("{name:<14} {lines:>6} {:>9.2}ms", ms(cold));
        let mut edited = |from: &str, to: &str| {
            flip = !flip;
            assert!(text.contains(from), "{name}: no {from:?}");
            if flip { text.replacen(from, to, 1) } else { text.clone() }
        };
        for edit in edits {
            let Some((from, to)) = edit else {
                print!(" {:>14}", "-");
                continue;
            };
            let time = best(10, || {
                db.set_file(file_name.clone(), edited(from, to));
                let _ = inlay_hints(&db, file, range, chosen, &config);
            });
            print!(" {:>12.2}ms", ms(time));
        }
        // A statement edit, then the hints of the file's last 60 lines (a large model's body).
        let last_start = text.match_indices('\n').rev().nth(60).map_or(0, |(i, _)| i) as u32;
        let last = Some(TextRange::new(last_start, text.len() as u32));
        if let Some((from, to)) = edits[3] {
            let time = best(10, || {
                db.set_file(file_name.clone(), edited(from, to));
                let _ = inlay_hints(&db, file, last, chosen, &config);
            });
            print!(" {:>12.2}ms", ms(time));
        }
        // Diagnostics after a comment edit and after a statement edit.
        for (from, to) in [edits[0], edits[3]].into_iter().flatten() {
            let diagnostics = best(10, || {
                db.set_file(file_name.clone(), edited(from, to));
                let _ = file_diagnostics(&db, file);
            });
            print!(" {:>12.2}ms", ms(diagnostics));
        }
        println!();
    }
    println!(
        "\nThe zoo files are the stdlib's sources as a user's own file (hints of the scenario named\n\
         in the code); generated.net is 1,250 blocks chained by one model (6,250 ops), training with\n\
         Adam. cold: a new database, then the hints of the first 60 lines. Edits: set_file with one\n\
         line changed (undone on every other run), then the hints of the first 60 lines. comment edit:\n\
         one character of a comment; new line: a line break inserted into a comment (every line below\n\
         moves); same graph: a statement rewritten to an equal graph (elaborated again, not\n\
         simulated); statement edit: one op or argument changed, shapes kept (elaborated and\n\
         simulated again); figures edit: the batch size (the model's symbolic graph bound to it);\n\
         model line: a line added to the middle of the model's body (the calls after it have new\n\
         call sites). stmt, last 60: the statement edit, then the hints of the file's last 60 lines\n\
         (the generated model's body). comment->diag, statement->diag: that edit,\n\
         then the file's diagnostics (every scenario and model of the file elaborated, lints run).\n\
         Best of 10."
    );
}
