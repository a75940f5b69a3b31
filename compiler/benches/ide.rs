//! Editor latency: from a one-line edit to the inlay hints of a visible range (what the
//! language server computes after each keystroke, without the JSON-RPC around it), and to
//! the file's diagnostics. Prints a table; run with `cargo bench -p netc --bench ide`.

use std::time::{Duration, Instant};

use netc::db::{Database, file_diagnostics};
use netc::diagnostics::{FileName, TextRange};
use netc::ide::{HintConfig, inlay_hints};

/// A user file running a zoo model.
fn zoo(family: &str, scenario: &str) -> String {
    format!("# A user's file.\nuse std.models.{family}\n\n{scenario}\n")
}

/// A generated file of `blocks` blocks, a model chaining them, and a training scenario.
fn generated(blocks: usize) -> String {
    let mut text = String::new();
    for b in 0..blocks {
        text.push_str(&format!(
            "## Block {b}.\nblock b{b}(x, width: int) {{\n    h = relu(linear(x, width))\n    h = layernorm(h)\n    # A comment.\n    y = linear(h, width)\n    return x + y\n}}\n\n"
        ));
    }
    text.push_str("model m() {\n    input x: f32[N, 64]\n    y = x\n");
    for b in 0..blocks {
        text.push_str(&format!("    y = b{b}(y, 64)\n"));
    }
    text.push_str("    return y\n}\n\ntrain fit { model m()  batch 32  optimizer adam }\n");
    text
}

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

fn main() {
    let cases = [
        ("resnet50 train", zoo("resnet", "train fit { model resnet50()  batch 64  optimizer adam  device a100_80gb }")),
        ("gpt2 train", zoo("gpt2", "train fit { model gpt2()  batch 8  seq 1024  optimizer adamw  device a100_80gb }")),
        ("generated", generated(1_250)),
    ];
    println!(
        "{:<16} {:>7} {:>12} {:>14} {:>16} {:>18}",
        "file", "lines", "cold hints", "comment edit", "statement edit", "edit->diagnostics"
    );
    let config = HintConfig::default();
    for (name, text) in cases {
        let file_name = FileName::new(format!("{}.net", name.replace(' ', "_")));
        let lines = text.lines().count();
        // The visible range: the first 60 lines.
        let visible_end = text.match_indices('\n').nth(59).map_or(text.len(), |(i, _)| i) as u32;
        let range = Some(TextRange::new(0, visible_end));
        let cold = best(3, || {
            let mut db = Database::new();
            let file = db.set_file(file_name.clone(), text.clone());
            let _ = inlay_hints(&db, file, range, None, &config);
        });
        let mut db = Database::new();
        let file = db.set_file(file_name.clone(), text.clone());
        let _ = inlay_hints(&db, file, range, None, &config);
        let _ = file_diagnostics(&db, file);
        let mut flip = false;
        let comment = best(10, || {
            flip = !flip;
            let edited =
                text.replacen("# A user's file.", if flip { "# A user's file!" } else { "# A user's file." }, 1);
            let edited = if edited == text {
                text.replacen("# A comment.", if flip { "# A comment!" } else { "# A comment." }, 1)
            } else {
                edited
            };
            db.set_file(file_name.clone(), edited);
            let _ = inlay_hints(&db, file, range, None, &config);
        });
        let statement = best(10, || {
            flip = !flip;
            let (from, to) = if text.contains("batch 64") {
                ("batch 64", "batch 63")
            } else if text.contains("batch 8") {
                ("batch 8", "batch 7")
            } else {
                ("linear(h, width)", "linear(h, 64)")
            };
            let edited = if flip { text.replacen(from, to, 1) } else { text.clone() };
            db.set_file(file_name.clone(), edited);
            let _ = inlay_hints(&db, file, range, None, &config);
        });
        let diagnostics = best(10, || {
            flip = !flip;
            let edited = if flip { text.replacen("# ", "#  ", 1) } else { text.clone() };
            db.set_file(file_name.clone(), edited);
            let _ = file_diagnostics(&db, file);
        });
        println!(
            "{name:<16} {lines:>7} {:>10.2}ms {:>12.2}ms {:>14.2}ms {:>16.2}ms",
            ms(cold),
            ms(comment),
            ms(statement),
            ms(diagnostics)
        );
    }
    println!(
        "\ncold: a new database; comment/statement edit: set_file with one line changed, then the hints of\nthe first 60 lines (a statement edit changes the scenario: the model is elaborated and simulated\nagain); edit->diagnostics: a comment edit, then the file's diagnostics. Best of 10."
    );
}
