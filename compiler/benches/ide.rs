//! Editor latency: from a one-line edit to the inlay hints of a visible range (what the
//! language server computes after each keystroke, without the JSON-RPC around it), and to
//! the file's diagnostics. Prints a table; run with `cargo bench -p netc --bench ide`.

mod support;

use std::time::{Duration, Instant};

use netc::db::{Database, file_diagnostics};
use netc::diagnostics::{FileName, TextRange};
use netc::ide::{HintConfig, ScenarioRef, inlay_hints};
use support::{generated, zoo};

/// The allocator of the `netc` binary (cli/src/main.rs), so that the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .expect("runs > 0")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// An edit: replace the first `from` with `to` (and back, on every other run).
type Edit = Option<(&'static str, &'static str)>;

/// The edits measured, in the table's column order.
const EDITS: [&str; 5] = ["comment edit", "new line", "same graph", "statement edit", "figures edit"];

/// A file measured: its name, text, the scenario whose hints are shown, and its edits.
struct Case {
    name: &'static str,
    text: String,
    scenario: &'static str,
    edits: [Edit; 5],
}

fn main() {
    let cases = [
        Case {
            name: "resnet.net",
            text: zoo("std.models.resnet"),
            scenario: "resnet50_train",
            edits: [
                Some(("# ResNets (He", "# ResNets! (He")),
                Some(("# ResNets (He", "# ResNets\n# (He")),
                None,
                Some(("k=7, stride=2, pad=3, bias=false", "k=7, stride=2, pad=3, bias=true")),
                Some(("model resnet50()\n    batch 256", "model resnet50()\n    batch 255")),
            ],
        },
        Case {
            name: "gpt2.net",
            text: zoo("std.models.gpt2"),
            scenario: "gpt2_train",
            edits: [
                Some(("# GPT-2 (Radford", "# GPT-2! (Radford")),
                Some(("# GPT-2 (Radford", "# GPT-2\n# (Radford")),
                None,
                Some(("h = dropout(h, p=p)", "h = dropout(h, p=0.2)")),
                Some(("batch 12", "batch 11")),
            ],
        },
        Case {
            name: "generated.net",
            text: generated(1_250),
            scenario: "fit",
            edits: [
                Some(("# A comment.", "# A comment!")),
                Some(("# A comment.", "# A\n# comment.")),
                Some(("linear(h, width)", "linear(h, 64)")),
                Some(("h = relu(linear(x, width))", "h = gelu(linear(x, width))")),
                Some(("batch 32", "batch 31")),
            ],
        },
    ];
    print!("{:<14} {:>6} {:>11}", "file", "lines", "cold hints");
    for name in EDITS {
        print!(" {name:>14}");
    }
    println!(" {:>14} {:>14}", "comment->diag", "statement->diag");
    let config = HintConfig::default();
    for Case { name, text, scenario, edits } in cases {
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
         simulated again); figures edit: the batch size. comment->diag, statement->diag: that edit,\n\
         then the file's diagnostics (every scenario and model of the file elaborated, lints run).\n\
         Best of 10."
    );
}
