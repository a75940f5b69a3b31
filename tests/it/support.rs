//! Helpers shared by the integration tests: check in-memory files and render the result as
//! a snapshot that starts with its input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use netc::db::lookup_file;
use netc::diagnostics::{Diagnostic, FileName};
use netc::host::{Database, file_diagnostics};
use netc::render;

/// Loads `files` (name, text) into a fresh database and returns every file's diagnostics, in
/// the order the files are given, with the texts of every file they point into (the
/// standard library's included).
pub fn diagnostics_and_sources(files: &[(&str, &str)]) -> (Vec<Diagnostic>, BTreeMap<FileName, String>) {
    let mut db = Database::new();
    let handles: Vec<_> =
        files.iter().map(|(name, text)| db.set_file(FileName::new(*name), text.to_string())).collect();
    let diagnostics: Vec<Diagnostic> = handles.iter().flat_map(|&f| file_diagnostics(&db, f).clone()).collect();
    let mut sources: BTreeMap<FileName, String> =
        files.iter().map(|(n, t)| (FileName::new(*n), t.to_string())).collect();
    for label in diagnostics.iter().flat_map(|d| &d.labels) {
        if let Some(file) = lookup_file(&db, &label.file) {
            sources.entry(label.file.clone()).or_insert_with(|| file.text(&db).clone());
        }
    }
    (diagnostics, sources)
}

/// The diagnostics of [`diagnostics_and_sources`].
pub fn diagnostics_of(files: &[(&str, &str)]) -> Vec<Diagnostic> {
    diagnostics_and_sources(files).0
}

/// The snapshot of checking `files`: each input file, then the diagnostics as `netc check`
/// prints them (human format, no colour), then the same in the short format.
pub fn check_files(files: &[(&str, &str)]) -> String {
    let (diagnostics, sources) = diagnostics_and_sources(files);
    let mut out = String::new();
    for (name, text) in files {
        out.push_str(&format!("=== {name}\n{text}"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("=== diagnostics\n");
    out.push_str(&render::human(&diagnostics, &sources, false));
    out.push_str("=== short\n");
    out.push_str(&render::short(&diagnostics, &sources, false));
    out
}

/// [`check_files`] for one file named `main.net`.
pub fn check(text: &str) -> String {
    check_files(&[("main.net", text)])
}

/// The codes of the diagnostics of one file named `main.net`, in order.
pub fn codes(text: &str) -> Vec<&'static str> {
    diagnostics_of(&[("main.net", text)]).iter().map(|d| d.code.info().code).collect()
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Appends the `.net` files below `dir` (recursively, sorted) to `out`.
pub fn net_files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            net_files_below(&path, out);
        } else if path.extension().is_some_and(|e| e == "net") {
            out.push(path);
        }
    }
}
