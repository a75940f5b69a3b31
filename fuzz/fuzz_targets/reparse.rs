//! Reparsing equals parsing. The input is an old text and an edit: with a 0xFF byte, the
//! text before it is the old text and the text after it the new one; without, the new text
//! is the old one with a span replaced by a copy of another span (a cut-and-paste, placed by
//! a hash of the input). The reparse from the old text's state must equal the parse of the
//! new text, and reparsing back must give the old parse again.

#![no_main]

#[path = "edit.rs"]
mod edit;

use libfuzzer_sys::fuzz_target;
use netc::diagnostics::FileName;
use netc::syntax::incremental::ParseState;
use netc::syntax::parse;

fuzz_target!(|data: &[u8]| {
    let (old, new) = edit::old_and_new(data);
    let file = FileName::new("main.net");
    let state = ParseState::new(&file, &old);
    let forward = state.reparse(&file, &new);
    assert_eq!(**forward.parse(), parse(&file, &new), "old:\n{old}\nnew:\n{new}");
    let back = forward.reparse(&file, &old);
    assert_eq!(**back.parse(), parse(&file, &old), "old:\n{old}\nnew:\n{new}");
});
