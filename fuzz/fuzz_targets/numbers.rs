//! Sequences of number edits on a zoo file, as a user typing in the editor: each step
//! replaces one of the file's numbers (a layer count, a width, a batch, a size) with a
//! large or degenerate value (digits typed after it, 2^31, 2^63, 10^18, 0), then asks what
//! the editor asks after every keystroke: the file's diagnostics, the inlay hints and the
//! code lenses. The editor froze for minutes after `000` was typed after a layer count;
//! libFuzzer's `-timeout` turns any such input into a failure, and every answer must come
//! without a panic.

#![no_main]

// The digit runs of the edit targets' inputs (its other functions are theirs).
#[allow(dead_code)]
#[path = "edit.rs"]
mod edit;

use libfuzzer_sys::fuzz_target;
use netc::db::STDLIB_SOURCES;
use netc::diagnostics::FileName;
use netc::host::{Database, file_diagnostics};
use netc::ide::{self, HintConfig};

/// The zoo files edited.
const FILES: [&str; 3] = ["std.models.gpt2", "std.models.resnet", "std.models.llama"];

/// What replaces a number: digits typed after it, or a value that is large or degenerate.
fn replacement(number: &str, choice: u8) -> String {
    match choice % 8 {
        0 => format!("{number}000"),
        1 => format!("{number}0"),
        2 => "2147483648".to_string(),
        3 => "9223372036854775808".to_string(),
        4 => "1000000000000000000".to_string(),
        5 => "0".to_string(),
        6 => "65535".to_string(),
        _ => format!("{number}{number}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, steps)) = data.split_first() else { return };
    let module = FILES[which as usize % FILES.len()];
    let Some((_, source)) = STDLIB_SOURCES.iter().find(|(m, _)| *m == module) else { return };
    let mut text = source.to_string();
    let mut db = Database::new();
    let name = FileName::new("main.net");
    let config = HintConfig::default();
    // At most 8 edits per input, each two bytes: which number, what replaces it.
    for step in steps.chunks_exact(2).take(8) {
        let runs = edit::digit_runs(text.as_bytes());
        let Some(&(start, end)) = runs.get(step[0] as usize % runs.len().max(1)) else { return };
        let new = replacement(&text[start..end], step[1]);
        text.replace_range(start..end, &new);
        let file = db.set_file(name.clone(), text.clone());
        let _ = file_diagnostics(&db, file);
        let _ = ide::inlay_hints(&db, file, None, None, &config);
        let _ = ide::code_lenses(&db, file, None);
    }
});
