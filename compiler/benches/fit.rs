//! `netc fit` speed on the zoo: for each zoo file held as a user's own file, the largest batch
//! of every scenario with a limit, from a cold database (parse, elaborate, simulate, then the
//! search) and after an edit of a scenario's batch (its graph re-bound, then the search). Each trial re-binds the scenario's graph;
//! nothing is elaborated per trial. Prints a table; run with
//! `cargo bench -p netc-compiler --bench fit`.

mod support;

use std::time::Duration;

use netc::costs::fit::{Axis, fit};
use netc::diagnostics::FileName;
use netc::host::Database;
use netc::semantics::files::syntax_tree;
use netc::syntax::Item;
use support::{best, zoo};

/// The zoo files.
const FILES: &[&str] = &[
    "std.models.resnet",
    "std.models.densenet",
    "std.models.mobilenet",
    "std.models.efficientnet",
    "std.models.convnext",
    "std.models.vit",
    "std.models.bert",
    "std.models.gpt2",
    "std.models.llama",
];

/// Fits every scenario of the database's `main.net`; returns the scenarios fitted and the
/// values tried.
fn fit_all(db: &Database, file: netc::db::SourceFile) -> (usize, usize) {
    let (mut scenarios, mut trials) = (0, 0);
    for (index, item) in syntax_tree(db, file).iter().enumerate() {
        if !matches!(item, Item::Scenario(_)) {
            continue;
        }
        if let Ok(answer) = fit(db, file, index as u32, Axis::Batch) {
            scenarios += 1;
            trials += answer.trials.len();
        }
    }
    (scenarios, trials)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    println!("| zoo file | scenarios fitted | values tried | cold | after an edit |");
    println!("|---|---:|---:|---:|---:|");
    let (mut cold_total, mut edit_total) = (Duration::ZERO, Duration::ZERO);
    for &module in FILES {
        let text = zoo(module);
        let name = FileName::new("main.net");
        let mut counts = (0, 0);
        let cold = best(3, || {
            let mut db = Database::new();
            let file = db.set_file(name.clone(), text.clone());
            counts = fit_all(&db, file);
        });
        // The edit: the first scenario's batch, one more (`batch 32` to `batch 33`), what a
        // user tuning it types; the model's graph is re-bound, not elaborated again.
        let at = text.find("    batch ").expect("a batch setting") + "    batch ".len();
        let digits = text[at..].chars().take_while(char::is_ascii_digit).count();
        let batch: u64 = text[at..at + digits].parse().expect("a batch");
        let edited = format!("{}{}{}", &text[..at], batch + 1, &text[at + digits..]);
        assert_ne!(edited, text, "{module}: the edit applies");
        let mut db = Database::new();
        let file = db.set_file(name.clone(), text.clone());
        fit_all(&db, file);
        let mut flip = false;
        let after = best(3, || {
            flip = !flip;
            db.set_file(name.clone(), if flip { edited.clone() } else { text.clone() });
            fit_all(&db, file);
        });
        cold_total += cold;
        edit_total += after;
        println!("| {module} | {} | {} | {} | {} |", counts.0, counts.1, ms(cold), ms(after));
    }
    println!("| all | | | {} | {} |", ms(cold_total), ms(edit_total));
}
