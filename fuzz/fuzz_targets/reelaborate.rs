//! Elaborating again after an edit, reusing the unchanged block calls of the previous
//! elaboration (`netc::elaborate`'s `ElaborationCache`), equals elaborating from scratch.
//! The input is an old and a new text separated by a 0xFF byte, or, without one, a text and
//! a cut-and-paste edit of it, as for `reparse`. The old text's diagnostics and report are
//! computed (every model and scenario elaborated), then the new text's, in the same
//! database; they must equal a fresh database's. (Debug assertions, on in fuzz builds, also
//! compare each graph made reusing calls with one made from scratch.)

#![no_main]

#[path = "edit.rs"]
mod edit;

use libfuzzer_sys::fuzz_target;
use netc::host::{Database, file_diagnostics};
use netc::diagnostics::FileName;
use netc::report;

/// The diagnostics and the report of `text` in `db`.
fn analyse(db: &mut Database, text: &str) -> (Vec<netc::diagnostics::Diagnostic>, report::Report) {
    let file = db.set_file(FileName::new("main.net"), text.to_string());
    let diagnostics = file_diagnostics(db, file).clone();
    (diagnostics, report::report(db, &[file], None))
}

fuzz_target!(|data: &[u8]| {
    let (old, new) = edit::old_and_new(data);
    let mut db = Database::new();
    let _ = analyse(&mut db, &old);
    let edited = analyse(&mut db, &new);
    let fresh = analyse(&mut Database::new(), &new);
    assert_eq!(edited, fresh, "old:\n{old}\nnew:\n{new}");
    // And back.
    let back = analyse(&mut db, &old);
    assert_eq!(back, analyse(&mut Database::new(), &old), "old:\n{old}\nnew:\n{new}");
});
