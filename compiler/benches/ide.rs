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

/// An edit: replace the first `from` with `to` (and back, on every other run).
type Edit = Option<(&'static str, &'static str)>;

/// The edits measured, in the table's column order.
const EDITS: [&str; 4] = ["comment edit", "new line", "statement edit", "figures edit"];

fn main() {
    let cases: [(&str, String, [Edit; 4]); 3] = [
        (
            "resnet50 train",
            zoo("resnet", "train fit { model resnet50()  batch 64  optimizer adam  device a100_80gb }"),
            [
                Some(("# A user's file.", "# A user's file!")),
                Some(("# A user's file.", "# A user's\n# file.")),
                None,
                Some(("batch 64", "batch 63")),
            ],
        ),
        (
            "gpt2 train",
            zoo("gpt2", "train fit { model gpt2()  batch 8  seq 1024  optimizer adamw  device a100_80gb }"),
            [
                Some(("# A user's file.", "# A user's file!")),
                Some(("# A user's file.", "# A user's\n# file.")),
                None,
                Some(("batch 8", "batch 7")),
            ],
        ),
        (
            "generated",
            generated(1_250),
            [
                Some(("# A comment.", "# A comment!")),
                Some(("# A comment.", "# A\n# comment.")),
                Some(("linear(h, width)", "linear(h, 64)")),
                Some(("batch 32", "batch 31")),
            ],
        ),
    ];
    print!("{:<16} {:>7} {:>12}", "file", "lines", "cold hints");
    for name in EDITS {
        print!(" {name:>15}");
    }
    println!(" {:>18}", "edit->diagnostics");
    let config = HintConfig::default();
    for (name, text, edits) in cases {
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
        print!("{name:<16} {lines:>7} {:>10.2}ms", ms(cold));
        let mut edited = |from: &str, to: &str| {
            flip = !flip;
            if flip { text.replacen(from, to, 1) } else { text.clone() }
        };
        for edit in edits {
            let Some((from, to)) = edit else {
                print!(" {:>15}", "-");
                continue;
            };
            let time = best(10, || {
                db.set_file(file_name.clone(), edited(from, to));
                let _ = inlay_hints(&db, file, range, None, &config);
            });
            print!(" {:>13.2}ms", ms(time));
        }
        let (from, to) = edits[0].expect("every case has a comment");
        let diagnostics = best(10, || {
            db.set_file(file_name.clone(), edited(from, to));
            let _ = file_diagnostics(&db, file);
        });
        println!(" {:>16.2}ms", ms(diagnostics));
    }
    println!(
        "\ncold: a new database, then the hints of the first 60 lines. Edits: set_file with one line\n\
         changed (undone on every other run), then the hints of the first 60 lines. comment edit: one\n\
         character of a comment; new line: a line break inserted into a comment (every line below\n\
         moves); statement edit: a block's statement rewritten to the same graph (the model is\n\
         elaborated again, not simulated); figures edit: the batch size (elaborated and simulated\n\
         again). edit->diagnostics: a comment edit, then the file's diagnostics. Best of 10."
    );
}
