//! Loading files from disk into the database: the only module of the library that does IO.
//!
//! `load` expands directories into their `.net` files, reads each file, and then follows
//! `use "..."` until every imported file that exists is loaded. Unreadable and non-UTF-8
//! files become diagnostics (E0401, E0402) naming the file; the other files are still loaded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::db::{Database, SourceFile, file_diagnostics, imported_names};
use crate::diagnostics::{Code, Diagnostic, FileName, Place, TextRange};

/// The result of loading.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The files named on the command line (directories expanded), in order.
    pub roots: Vec<SourceFile>,
    /// Every user file loaded, roots first, then imported files in the order found.
    pub files: Vec<SourceFile>,
    /// Files that could not be read or are not UTF-8.
    pub io_errors: Vec<Diagnostic>,
    /// Texts for rendering files that are not in the database (a non-UTF-8 file, lossily).
    pub extra_sources: BTreeMap<FileName, String>,
}

/// The name a path is shown as: `/` separators, no leading `./`.
pub fn file_name_of(path: &Path) -> FileName {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("./").unwrap_or(&text);
    FileName::new(text)
}

/// Every `.net` file below `dir`, sorted, skipping hidden directories and `target`.
fn net_files_below(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                net_files_below(&path, out)?;
            }
        } else if path.extension().is_some_and(|e| e == "net") {
            out.push(path);
        }
    }
    Ok(())
}

fn file_error(code: Code, name: &FileName, message: String) -> Diagnostic {
    Diagnostic::new(code, message, name, Place::Range(TextRange::empty(0)))
}

/// Reads one file into the database; `None` (and a diagnostic) when it cannot be read.
fn read_into(db: &mut Database, path: &Path, loaded: &mut Loaded) -> Option<SourceFile> {
    let name = file_name_of(path);
    if let Some(file) = db.file(&name) {
        return Some(file);
    }
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => {
                let file = db.set_file(name, text);
                loaded.files.push(file);
                Some(file)
            }
            Err(e) => {
                let offset = e.utf8_error().valid_up_to() as u32;
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let d = Diagnostic::new(
                    Code::NotUtf8,
                    format!("`{name}` is not valid UTF-8"),
                    &name,
                    Place::Range(TextRange::new(offset, offset + 1)),
                )
                .with_primary_message("invalid UTF-8 starts here")
                .with_help("save the file as UTF-8");
                loaded.extra_sources.insert(name, lossy);
                loaded.io_errors.push(d);
                None
            }
        },
        Err(e) => {
            loaded.io_errors.push(file_error(Code::UnreadableFile, &name, format!("cannot read `{name}`: {e}")));
            None
        }
    }
}

/// Loads `paths` (files or directories) and everything they import into `db`.
pub fn load(db: &mut Database, paths: &[PathBuf]) -> Loaded {
    let mut loaded = Loaded::default();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            if let Err(e) = net_files_below(path, &mut found) {
                let name = file_name_of(path);
                loaded.io_errors.push(file_error(
                    Code::UnreadableFile,
                    &name,
                    format!("cannot read directory `{name}`: {e}"),
                ));
            }
            for file in found {
                if let Some(f) = read_into(db, &file, &mut loaded)
                    && !loaded.roots.contains(&f)
                {
                    loaded.roots.push(f);
                }
            }
        } else if let Some(f) = read_into(db, path, &mut loaded)
            && !loaded.roots.contains(&f)
        {
            loaded.roots.push(f);
        }
    }
    // Follow `use "..."` to a fixed point. Missing files are reported by `file_imports`.
    let mut next = 0;
    while next < loaded.files.len() {
        let file = loaded.files[next];
        next += 1;
        for name in imported_names(db, file) {
            let path = PathBuf::from(name.as_str());
            if db.file(&name).is_none() && path.is_file() {
                read_into(db, &path, &mut loaded);
            }
        }
    }
    loaded
}

/// The outcome of checking files.
#[derive(Debug)]
pub struct Checked {
    /// Every diagnostic: I/O errors first, then each loaded file's, in load order.
    pub diagnostics: Vec<Diagnostic>,
    /// How many files were checked.
    pub files: usize,
    /// The files named (directories expanded), in order.
    pub roots: Vec<SourceFile>,
    /// Whether any file could not be read (exit code 2).
    pub io_failed: bool,
    /// Texts of every file a diagnostic may point into.
    pub sources: BTreeMap<FileName, String>,
}

/// Loads and checks `paths`: the library entry point behind `netc check`.
pub fn check_paths(db: &mut Database, paths: &[PathBuf]) -> Checked {
    let loaded = load(db, paths);
    let mut diagnostics = loaded.io_errors.clone();
    for &file in &loaded.files {
        diagnostics.extend(file_diagnostics(db, file).iter().cloned());
    }
    let mut sources = loaded.extra_sources.clone();
    for d in &diagnostics {
        for label in &d.labels {
            if let Some(file) = crate::db::lookup_file(db, &label.file) {
                sources.entry(label.file.clone()).or_insert_with(|| file.text(db).clone());
            }
        }
    }
    Checked {
        diagnostics,
        files: loaded.files.len(),
        roots: loaded.roots.clone(),
        io_failed: !loaded.io_errors.is_empty(),
        sources,
    }
}
