//! An edit never waits for a long computation: elaboration and the memory simulation check
//! salsa's cancellation as they go, so a write that makes their result stale unwinds them
//! in milliseconds (the language server applies every edit as a write).

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::channel;
use std::time::Duration;

use netc::costs::scenario_costs;
use netc::db::STDLIB_SOURCES;
use netc::diagnostics::FileName;
use netc::elaborate::scenario_graph;
use netc::host::Database;
use netc::semantics::files::{ItemLoc, syntax_tree};
use netc::syntax::Item;

/// The zoo's GPT-2 file with GPT-2 XL's 48 layers typed as `layers` (the edit that froze the
/// editor was three zeros after the 48).
fn gpt2_with_xl_layers(layers: u32) -> String {
    let (_, zoo) = STDLIB_SOURCES.iter().find(|(m, _)| *m == "std.models.gpt2").expect("the GPT-2 zoo file");
    assert_eq!(zoo.matches("in 0..48 {").count(), 1, "GPT-2 XL's layer loop is in the zoo file");
    zoo.replace("in 0..48 {", &format!("in 0..{layers} {{"))
}

/// Runs `query` on a clone of `db` in a thread, waits until it has started, then writes
/// `text` to the file: true if the running query was cancelled and the write returned.
fn write_while_running(
    mut db: Database,
    name: &str,
    text: String,
    query: fn(&Database, u32) -> bool,
    item: u32,
) -> bool {
    let clone = db.clone();
    let (started, is_started) = channel();
    let worker = std::thread::spawn(move || {
        let _ = started.send(());
        salsa::Cancelled::catch(AssertUnwindSafe(|| query(&clone, item))).is_err()
    });
    is_started.recv().expect("the worker starts");
    // Let it get well into the work.
    std::thread::sleep(Duration::from_millis(300));
    let (wrote, has_written) = channel();
    let name = FileName::new(name);
    let writer = std::thread::spawn(move || {
        db.set_file(name, text);
        let _ = wrote.send(());
    });
    // Minutes without cancellation; milliseconds with it. The bound only keeps a broken
    // build from hanging the test run.
    let written = has_written.recv_timeout(Duration::from_secs(120)).is_ok();
    let cancelled = written && worker.join().expect("the worker does not panic");
    if written {
        writer.join().expect("the writer does not panic");
    }
    cancelled
}

/// The zoo's GPT-2 file with `layers` layers, and the index of its `gpt2_xl_train` scenario.
fn huge_gpt2(layers: u32) -> (Database, u32) {
    let mut db = Database::new();
    let file = db.set_file(FileName::new("gpt2.net"), gpt2_with_xl_layers(layers));
    let index = syntax_tree(&db, file)
        .iter()
        .position(|item| matches!(item, Item::Scenario(s) if s.name.text == "gpt2_xl_train"))
        .expect("the scenario") as u32;
    (db, index)
}

fn loc(db: &Database, index: u32) -> ItemLoc<'_> {
    ItemLoc::new(db, db.file(&FileName::new("gpt2.net")).expect("the file"), index)
}

/// Elaboration unwinds at its reads of other queries (salsa checks there) and at its own
/// check every 1,024 ops: this holds with either alone. The simulation has no query reads,
/// so its own check is what the next test holds (it fails without it).
#[test]
fn an_edit_cancels_the_elaboration_of_a_model_made_huge_by_a_typo() {
    // A release build elaborates 4,800 layers within the 300 ms the edit waits; 48,000 it
    // cannot, and the cancellation means no build pays for all of them.
    let (db, index) = huge_gpt2(48_000);
    let elaborate = |db: &Database, index: u32| scenario_graph(db, loc(db, index)).is_some();
    assert!(
        write_while_running(db, "gpt2.net", gpt2_with_xl_layers(48), elaborate, index),
        "the edit waited for the elaboration (or it finished within 300 ms)"
    );
}

#[test]
fn an_edit_cancels_the_simulation_of_a_model_made_huge_by_a_typo() {
    // Elaborated in full below, so no bigger than a debug build does in seconds.
    let (db, index) = huge_gpt2(4_800);
    // Elaborated first: the worker only simulates.
    assert!(scenario_graph(&db, loc(&db, index)).is_some());
    let simulate = |db: &Database, index: u32| scenario_costs(db, loc(db, index)).is_some();
    assert!(
        write_while_running(db, "gpt2.net", gpt2_with_xl_layers(48), simulate, index),
        "the edit waited for the simulation (or it finished within 300 ms)"
    );
}
