//! Elaborating again after an edit, reusing the unchanged block calls of the previous
//! elaboration (`netc::elaborate`'s `ElaborationCache`), equals elaborating from scratch.
//! The input is an old and a new text separated by a 0xFF byte, or, without one, a text and
//! a cut-and-paste edit of it, as for `reparse`. The old text's diagnostics and report are
//! computed (every model and scenario elaborated), then the new text's, in the same
//! database; they must equal a fresh database's. (Debug assertions, on in fuzz builds, also
//! compare each graph made reusing calls with one made from scratch.)

#![no_main]

use libfuzzer_sys::fuzz_target;
use netc::db::{Database, file_diagnostics};
use netc::diagnostics::FileName;
use netc::report;

/// `old` with a span replaced by a copy of another span, both chosen by `seed`.
fn paste(old: &[u8], seed: u64) -> Vec<u8> {
    let len = old.len() as u64 + 1;
    let at = (seed % len) as usize;
    let remove = ((seed >> 16) % 64).min(len - 1 - at as u64) as usize;
    let from = ((seed >> 24) % len) as usize;
    let take = ((seed >> 40) % 48) as usize;
    let copied = &old[from..(from + take).min(old.len())];
    [&old[..at], copied, &old[at + remove..]].concat()
}

/// The diagnostics and the report of `text` in `db`.
fn analyse(db: &mut Database, text: &str) -> (Vec<netc::diagnostics::Diagnostic>, report::Report) {
    let file = db.set_file(FileName::new("main.net"), text.to_string());
    let diagnostics = file_diagnostics(db, file).clone();
    (diagnostics, report::report(db, &[file], None))
}

fuzz_target!(|data: &[u8]| {
    let (old, new) = match data.iter().position(|&b| b == 0xFF) {
        Some(split) => (data[..split].to_vec(), data[split + 1..].to_vec()),
        None => {
            // FNV-1a: any change to the input moves the edit.
            let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            (data.to_vec(), paste(data, seed))
        }
    };
    let old = String::from_utf8_lossy(&old).into_owned();
    let new = String::from_utf8_lossy(&new).into_owned();
    let mut db = Database::new();
    let _ = analyse(&mut db, &old);
    let edited = analyse(&mut db, &new);
    let fresh = analyse(&mut Database::new(), &new);
    assert_eq!(edited, fresh, "old:\n{old}\nnew:\n{new}");
    // And back.
    let back = analyse(&mut db, &old);
    assert_eq!(back, analyse(&mut Database::new(), &old), "old:\n{old}\nnew:\n{new}");
});
