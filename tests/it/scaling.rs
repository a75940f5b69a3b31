//! Inputs that once took minutes or gigabytes because some step was quadratic. Each test
//! checks the structural property that keeps the step linear (how big the answer is, how
//! often a query runs), not a time: a test that times out only when the fix breaks would
//! take minutes exactly then. `compiler/benches/scaling.rs` measures the same inputs.

use std::sync::{Arc, Mutex};

use netc::db::SourceFile;
use netc::diagnostics::{Code, FileName};
use netc::host::{Database, file_diagnostics};

/// A database that logs which queries run (as `import_cycle(Id(..))`).
fn logged() -> (Database, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    let db = Database::with_event_callback(Box::new(move |event| {
        if let salsa::EventKind::WillExecute { database_key } = event.kind {
            sink.lock().unwrap().push(format!("{database_key:?}"));
        }
    }));
    (db, log)
}

/// File `i` of a chain of `n`: it uses file `i + 1`, the last one uses file 0 if `cycle`.
fn chain_file(i: usize, n: usize, cycle: bool) -> String {
    let next = if i + 1 < n {
        format!("use \"f{}.net\"\n", i + 1)
    } else if cycle {
        "use \"f0.net\"\n".to_string()
    } else {
        String::new()
    };
    format!("{next}block b{i}(x) {{\n    return relu(x)\n}}\n")
}

fn chain(db: &mut Database, n: usize, cycle: bool) -> Vec<SourceFile> {
    (0..n).map(|i| db.set_file(FileName::new(format!("f{i}.net")), chain_file(i, n, cycle))).collect()
}

fn ran(log: &Mutex<Vec<String>>, query: &str) -> usize {
    log.lock().unwrap().iter().filter(|q| q.starts_with(&format!("{query}("))).count()
}

#[test]
fn an_import_cycle_of_many_files_gives_diagnostics_linear_in_their_number() {
    // A cycle of 5,000 files gave 560 MB of diagnostics: each file named the whole cycle.
    let n = 200;
    let mut db = Database::new();
    let files = chain(&mut db, n, true);
    let mut bytes = 0;
    for &file in &files {
        let cycles: Vec<_> = file_diagnostics(&db, file).iter().filter(|d| d.code == Code::ImportCycle).collect();
        assert_eq!(cycles.len(), 1, "{}: {cycles:#?}", file.name(&db));
        bytes += cycles[0].message.len();
    }
    // Each message names a few files and the cycle's size: about 80 bytes here; naming all
    // 200 files would be about 2,000.
    assert!(bytes < 150 * n, "{bytes} bytes of messages for a cycle of {n} files");
    let first = file_diagnostics(&db, files[0]).iter().find(|d| d.code == Code::ImportCycle).unwrap();
    assert_eq!(first.message, "import cycle: f0.net -> f1.net -> ... -> f199.net -> f0.net (200 files use each other)");
}

#[test]
fn import_cycles_are_found_once_for_the_whole_workspace() {
    // A chain of 20,000 files took a minute and 2.3 GB: each file searched every file it
    // reaches for a way back. The search now runs once, for every file together.
    let n = 200;
    let (mut db, log) = logged();
    let files = chain(&mut db, n, false);
    for &file in &files {
        assert!(file_diagnostics(&db, file).is_empty());
    }
    assert_eq!(ran(&log, "import_cycles"), 1);
    assert_eq!(ran(&log, "import_cycle"), n);
    // A body edit changes no `use`: nothing about cycles runs again.
    log.lock().unwrap().clear();
    db.set_file(FileName::new("f100.net"), chain_file(100, n, false).replace("relu(x)", "relu(relu(x))"));
    for &file in &files {
        let _ = file_diagnostics(&db, file);
    }
    assert_eq!(ran(&log, "import_cycles"), 0);
    assert_eq!(ran(&log, "import_cycle"), 0);
    // Closing the chain into a cycle: found once again, and reported in every file.
    db.set_file(FileName::new(format!("f{}.net", n - 1)), chain_file(n - 1, n, true));
    log.lock().unwrap().clear();
    for &file in &files {
        assert_eq!(file_diagnostics(&db, file).iter().filter(|d| d.code == Code::ImportCycle).count(), 1);
    }
    assert_eq!(ran(&log, "import_cycles"), 1);
}

#[test]
fn a_short_import_cycle_is_named_whole_by_the_shortest_way_back() {
    // a -> b -> c -> a, and a shortcut c <- b: b's way back is b -> c -> a -> b.
    let mut db = Database::new();
    let a = db.set_file(FileName::new("a.net"), "use \"b.net\"\n".to_string());
    let b = db.set_file(FileName::new("b.net"), "use \"c.net\"\nuse \"a.net\"\n".to_string());
    let c = db.set_file(FileName::new("c.net"), "use \"a.net\"\n".to_string());
    let message = |f| {
        let diagnostics = file_diagnostics(&db, f).iter();
        diagnostics.filter(|d| d.code == Code::ImportCycle).map(|d| d.message.clone()).collect::<Vec<_>>()
    };
    assert_eq!(message(a), ["import cycle: a.net -> b.net -> a.net"]);
    assert_eq!(message(b), ["import cycle: b.net -> c.net -> a.net -> b.net"]);
    assert_eq!(message(c), ["import cycle: c.net -> a.net -> b.net -> c.net"]);
}
