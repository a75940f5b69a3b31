//! Arbitrary bytes (lossily decoded as UTF-8) through the parser, every query of the
//! database, all three renderers and the memory report. Nothing may panic, and every label
//! must be a byte range inside its file on character boundaries.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use netc::db::lookup_file;
use netc::host::{Database, file_diagnostics};
use netc::semantics::files::{file_definitions, file_imports, file_scope, import_cycle, imported_names, parse_file, syntax_tree};
use netc::semantics::queries::check_file;
use netc::diagnostics::{FileName, Place};
use netc::render;

/// A second file that imports the input, so that `use "other.net"` in the input resolves
/// and can make a cycle.
const OTHER: &str = "use \"main.net\"\n\nblock helper(x, c: int = 8) {\n    return relu(conv2d(x, c, k=1))\n}\n";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    // The parser alone, outside the database.
    let _ = netc::syntax::parse(&FileName::new("main.net"), &text);

    let mut db = Database::new();
    let main = db.set_file(FileName::new("main.net"), text);
    let other = db.set_file(FileName::new("other.net"), OTHER.to_string());
    let mut diagnostics = Vec::new();
    for file in [main, other] {
        let _ = parse_file(&db, file);
        let _ = syntax_tree(&db, file);
        let _ = file_definitions(&db, file);
        let _ = file_imports(&db, file);
        let _ = file_scope(&db, file);
        let _ = import_cycle(&db, file);
        let _ = check_file(&db, file);
        let _ = imported_names(&db, file);
        diagnostics.extend(file_diagnostics(&db, file).iter().cloned());
    }
    let mut sources: BTreeMap<FileName, String> = BTreeMap::new();
    for d in &diagnostics {
        for label in &d.labels {
            let file = lookup_file(&db, &label.file).expect("a label points into a known file");
            let text = file.text(&db);
            let Place::Range(r) = label.place else { panic!("unresolved label in {}: {:?}", d.code, label.place) };
            assert!(r.start <= r.end && r.end as usize <= text.len(), "{}: label {r:?} outside the file", d.code);
            assert!(
                text.is_char_boundary(r.start as usize) && text.is_char_boundary(r.end as usize),
                "{}: label {r:?} splits a character",
                d.code
            );
            sources.entry(label.file.clone()).or_insert_with(|| text.clone());
        }
    }
    let report = netc::report::report(&db, &[main, other], None);
    let _ = netc::report::table(&report);
    let _ = netc::report::markdown(&report);
    let _ = render::human(&diagnostics, &sources, false);
    let _ = render::human(&diagnostics, &sources, true);
    let _ = render::short(&diagnostics, &sources, false);
    let _ = render::short(&diagnostics, &sources, true);
    let json = render::json(&diagnostics, &sources, 2);
    assert!(json.starts_with('{'));
});
