//! Loading files from disk into the database: the only module of the library that does IO.
//!
//! `load` expands directories into their `.net` files ([`walk`]: links followed, each real
//! directory listed once, an unlistable one named and skipped, what `.gitignore`, `.ignore`
//! and `--exclude` ([`Excludes`]) leave out skipped), reads each file, and then
//! follows `use "..."` until every imported file that exists is loaded. Unreadable and
//! non-UTF-8 files become diagnostics (E0401, E0402) naming the file; the other files are
//! still loaded.
//!
//! What is read is bounded: only regular files ([`read_regular`] looks before it opens, so a
//! FIFO or `/dev/zero` named `*.net` is an error, not a hang), at most [`MAX_FILE_SIZE`], and
//! only the `.net` files of the checked paths' [`Project`] (a `use` of anything else is
//! E0223, a link out of it E0401), so that no diagnostic shows another file's contents.
//!
//! `configure` then reads the `netc.toml` nearest to each loaded file (its directory, else the
//! closest ancestor that has one) and sets the levels it gives in the database.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::config::configured_level;
use crate::config::{self, ProjectConfig};
use crate::db::Db as _;
use crate::db::{Level, LevelOverride, SourceFile};
use crate::diagnostics::{Code, Diagnostic, FileName, Place, Severity, TextRange};
use crate::host::{Database, file_diagnostics};
use crate::semantics::files::imported_names;

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

/// What a walk of a directory found.
#[derive(Debug, Default)]
pub struct Walk {
    /// The `.net` files (links followed), in sorted order, each directory's before the
    /// files of the next one.
    pub files: Vec<PathBuf>,
    /// The directories that could not be listed, each with why.
    pub unreadable: Vec<(PathBuf, std::io::Error)>,
}

/// Whether the walk leaves out a directory with this name: hidden ones, and the build
/// outputs of other tools.
fn skipped_directory(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') || name == "target" || name == "node_modules"
}

/// What a walk leaves out beyond its fixed rules: `--exclude GLOB` patterns, each a line of
/// a `.gitignore` in the walked directory (`generated/`, `*.gen.net`, `/old`, `**/tmp/**`).
/// Files named on the command line are always read: this applies to walks only.
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    globs: Vec<String>,
}

impl Excludes {
    /// The patterns `globs`, or an error naming the first that is not a valid pattern.
    pub fn new(globs: &[String]) -> Result<Excludes, String> {
        for glob in globs {
            let mut builder = ignore::gitignore::GitignoreBuilder::new("");
            if let Err(e) = builder
                .add_line(None, glob)
                .map_err(|e| e.to_string())
                .and_then(|b| b.build().map(|_| ()).map_err(|e| e.to_string()))
            {
                return Err(format!("--exclude `{glob}`: {e}"));
            }
        }
        Ok(Excludes { globs: globs.to_vec() })
    }

    /// The matcher of the patterns, relative to the walked directory `root`.
    fn matcher(&self, root: &Path) -> Gitignore {
        let mut builder = ignore::gitignore::GitignoreBuilder::new(root);
        for glob in &self.globs {
            // Checked in `new`.
            let _ = builder.add_line(None, glob);
        }
        builder.build().unwrap_or_else(|_| Gitignore::empty())
    }
}

use ignore::gitignore::Gitignore;

/// The names of the files whose patterns a walk respects, in each directory it lists; a
/// later one wins over an earlier one (ripgrep's order).
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// The patterns of the ignore files of `dir`, or `None` when it has none. Read like every
/// file (regular files only, bounded): a `.gitignore` that is a FIFO must not stop the walk.
/// A pattern that is not valid is left out, as git does.
fn ignore_file_matcher(dir: &Path) -> Option<Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(dir);
    let mut any = false;
    for name in IGNORE_FILES {
        let path = dir.join(name);
        let Ok(text) = read_regular_text(&path) else { continue };
        for line in text.lines() {
            let _ = builder.add_line(Some(path.clone()), line);
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

/// The ignore files of the directories above `root` that a walk of `root` respects: those of
/// its ancestors up to the root of its git repository (the nearest one with `.git`); none
/// when it is in no repository. Each with the canonical directory it is relative to.
fn ancestor_matchers(root: &Path) -> Vec<(PathBuf, Gitignore)> {
    let Ok(real) = root.canonicalize() else { return Vec::new() };
    let Some(top) = real.ancestors().find(|a| a.join(".git").exists()) else { return Vec::new() };
    real.ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(top))
        .filter_map(|a| ignore_file_matcher(a).map(|m| (a.to_path_buf(), m)))
        .collect()
}

/// Every `.net` file below `root`, sorted, skipping hidden directories, `target`,
/// `node_modules` and what the ignore files leave out: what `netc check DIR` checks and
/// what the language server loads. [`walk_with`], without `--exclude` patterns.
pub fn walk(root: &Path, project: &Project) -> Walk {
    walk_with(root, project, &Excludes::default())
}

/// Every `.net` file below `root`, sorted, skipping hidden directories, `target`,
/// `node_modules`, what `excludes` names, and what `.gitignore` and `.ignore` files leave
/// out (those of the directories walked, and of `root`'s ancestors up to its git
/// repository's root; a deeper file wins, a `!pattern` takes a path back, as in git; unlike
/// ripgrep, a `.gitignore` counts outside a git repository too). A link to a directory
/// outside `project` is not followed (it is in [`Walk::unreadable`]).
///
/// Links are followed, but each real directory is listed once (by its canonical path): a
/// link to an ancestor (`ln -s . loop`) ends there instead of repeating the tree at every
/// depth, and a second link to a directory adds nothing. A directory that cannot be listed
/// is named in [`Walk::unreadable`] and the walk goes on with the rest. The walk is a loop
/// over a stack, so a deep tree cannot exhaust the call stack.
///
/// Written by hand rather than with `walkdir` or `ignore`'s walker: their link-loop detection
/// only catches links to an ancestor (a second link to one directory is walked twice), and
/// the rest, a sorted listing with a skip rule, is this function. The patterns are matched
/// with the `ignore` crate's gitignore matcher.
pub fn walk_with(root: &Path, project: &Project, excludes: &Excludes) -> Walk {
    let mut walk = Walk::default();
    let mut seen = HashSet::new();
    let excluded = excludes.matcher(root);
    let ancestors = ancestor_matchers(root);
    let real_root = root.canonicalize().ok();
    // Each listed directory's entries, with the patterns of its ignore files.
    let mut stack: Vec<(std::vec::IntoIter<PathBuf>, Option<Gitignore>)> = Vec::new();
    let mut list = |dir: &Path, walk: &mut Walk| list(dir, project, &mut seen, walk);
    if let Some(entries) = list(root, &mut walk) {
        stack.push((entries.into_iter(), ignore_file_matcher(root)));
    }
    while let Some((entries, _)) = stack.last_mut() {
        let Some(path) = entries.next() else {
            stack.pop();
            continue;
        };
        // `metadata` follows links: a link to a directory is a directory.
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        if excluded.matched(&path, is_dir).is_ignore() || ignored(&path, is_dir, &stack, &ancestors, root, &real_root) {
            continue;
        }
        if is_dir {
            if !path.file_name().is_some_and(skipped_directory)
                && let Some(entries) = list(&path, &mut walk)
            {
                let matcher = ignore_file_matcher(&path);
                stack.push((entries.into_iter(), matcher));
            }
        } else if path.extension().is_some_and(|e| e == "net") {
            // Whatever it is (a FIFO, a broken link), reading it says what is wrong.
            walk.files.push(path);
        }
    }
    walk
}

/// Whether the ignore files leave `path` out: the deepest one with a pattern that matches
/// it decides (`!pattern` takes it back), those of the walked directories first (`stack`),
/// then those of `root`'s ancestors (relative to its real path `real_root`).
fn ignored(
    path: &Path,
    is_dir: bool,
    stack: &[(std::vec::IntoIter<PathBuf>, Option<Gitignore>)],
    ancestors: &[(PathBuf, Gitignore)],
    root: &Path,
    real_root: &Option<PathBuf>,
) -> bool {
    for (_, matcher) in stack.iter().rev() {
        let Some(matcher) = matcher else { continue };
        match matcher.matched(path, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    let (Some(real_root), Ok(relative)) = (real_root, path.strip_prefix(root)) else { return false };
    let real = real_root.join(relative);
    for (_, matcher) in ancestors {
        match matcher.matched(&real, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The sorted entries of the directory `dir`, or `None` when its real directory was listed
/// before (recorded in `seen`), or it cannot be listed or is outside `project` (recorded in
/// `walk`).
fn list(dir: &Path, project: &Project, seen: &mut HashSet<PathBuf>, walk: &mut Walk) -> Option<Vec<PathBuf>> {
    let real = match dir.canonicalize() {
        Ok(real) => real,
        Err(e) => {
            walk.unreadable.push((dir.to_path_buf(), e));
            return None;
        }
    };
    if !project.contains(&real) {
        let message = format!("it links to `{}`, which is outside the project", real.display());
        walk.unreadable.push((dir.to_path_buf(), std::io::Error::other(message)));
        return None;
    }
    if !seen.insert(real) {
        return None;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            walk.unreadable.push((dir.to_path_buf(), e));
            return None;
        }
    };
    let mut paths = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(e) => walk.unreadable.push((dir.to_path_buf(), e)),
        }
    }
    paths.sort();
    Some(paths)
}

/// Where files may be read from: the checked paths' projects. A project is the directory
/// of the nearest `netc.toml` (in the checked directory, or the directory of the checked
/// file, or the closest ancestor), else that directory. netc reads only regular `.net` files
/// whose real path (links followed) lies inside a project: a `use "/proc/self/environ"` or a
/// link `model.net -> ~/.ssh/id_rsa` in a pull request must not put a file's contents into a
/// build log (see spec/language.md, `use`).
#[derive(Debug, Clone, Default)]
pub struct Project {
    /// The projects' directories, canonical; none inside another.
    roots: Vec<PathBuf>,
}

impl Project {
    /// The projects of `paths` (files or directories, as given on the command line).
    pub fn of(paths: &[PathBuf]) -> Project {
        let mut project = Project::default();
        for path in paths {
            project.add(path);
        }
        project
    }

    /// Adds the project of `path` (a file or a directory). A file's directory is the one its
    /// name is in, not its link's target's. A path that does not exist adds nothing.
    pub fn add(&mut self, path: &Path) {
        let dir = if path.is_dir() {
            path
        } else {
            match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            }
        };
        let Ok(dir) = dir.canonicalize() else { return };
        let root = dir.ancestors().find(|a| a.join(config::FILE_NAME).is_file()).unwrap_or(&dir).to_path_buf();
        if !self.contains(&root) {
            self.roots.retain(|r| !r.starts_with(&root));
            self.roots.push(root);
        }
    }

    /// The projects' directories, canonical.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether the real path `real` is in a project.
    fn contains(&self, real: &Path) -> bool {
        self.roots.iter().any(|r| real.starts_with(r))
    }

    /// Why the file at `path` may not be read, or `Ok` when it may: its real path must be
    /// in a project, end in `.net` and be a regular file. A path that cannot be resolved (it
    /// does not exist) is `Ok`: reading it fails the same way, with nothing to show.
    pub fn admits(&self, path: &Path) -> Result<(), String> {
        let Ok(real) = path.canonicalize() else { return Ok(()) };
        // Whether `path` is a link, or goes through one: then the message names the target.
        let linked = std::path::absolute(path).map_or(true, |p| p != real);
        let shown = |what: &str| {
            if linked { format!("it links to `{}`, which is {what}", real.display()) } else { what.to_string() }
        };
        if !self.contains(&real) {
            let roots: Vec<String> = self.roots.iter().map(|r| format!("`{}`", r.display())).collect();
            let roots = if roots.is_empty() { "none".to_string() } else { roots.join(", ") };
            return Err(shown(&format!("outside the project ({roots})")));
        }
        if real.extension().is_none_or(|e| e != "net") {
            return Err(shown("not a `.net` file"));
        }
        match std::fs::metadata(&real) {
            Ok(m) if !m.is_file() => Err(shown(not_regular(m.file_type()))),
            _ => Ok(()),
        }
    }
}

fn file_error(code: Code, name: &FileName, message: String) -> Diagnostic {
    Diagnostic::new(code, message, name, Place::Range(TextRange::empty(0)))
}

/// Why a file has no text: its diagnostic, and the text to show it in (lossy) when the
/// file was read but is not UTF-8.
struct Unreadable {
    diagnostic: Diagnostic,
    lossy: Option<String>,
}

/// The largest file netc reads: a source or a snapshot is text a person writes, and offsets
/// into it are `u32`. A larger file is an error rather than a read that exhausts memory.
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// Why a path that is not a regular file cannot be read: what it is.
fn not_regular(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "not a regular file (a FIFO)";
        } else if file_type.is_char_device() || file_type.is_block_device() {
            return "not a regular file (a device)";
        } else if file_type.is_socket() {
            return "not a regular file (a socket)";
        }
    }
    if file_type.is_dir() { "not a regular file (a directory)" } else { "not a regular file" }
}

/// The bytes of the regular file at `path` (links followed), at most [`MAX_FILE_SIZE`].
///
/// Every file netc reads goes through here. The metadata is checked before the file is
/// opened: opening a FIFO waits for a writer forever, and a device such as `/dev/zero`
/// never ends. The read itself stops after the limit too (the file may grow meanwhile).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let too_large = || Error::new(ErrorKind::InvalidData, format!("larger than {} MiB", MAX_FILE_SIZE >> 20));
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, not_regular(metadata.file_type())));
    }
    if metadata.len() > MAX_FILE_SIZE {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text (an `InvalidData` error when it is not).
pub fn read_regular_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8"))
}

/// The text of the file at `path`, shown as `name` in diagnostics.
fn read_text(path: &Path, name: &FileName) -> Result<String, Box<Unreadable>> {
    let bytes = read_regular(path).map_err(|e| {
        Box::new(Unreadable {
            diagnostic: file_error(Code::UnreadableFile, name, format!("cannot read `{name}`: {e}")),
            lossy: None,
        })
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to() as u32;
        let diagnostic = Diagnostic::new(
            Code::NotUtf8,
            format!("`{name}` is not valid UTF-8"),
            name,
            Place::Range(TextRange::new(offset, offset + 1)),
        )
        .with_primary_message("invalid UTF-8 starts here")
        .with_help("save the file as UTF-8");
        Box::new(Unreadable { diagnostic, lossy: Some(String::from_utf8_lossy(e.as_bytes()).into_owned()) })
    })
}

/// Reads one file into the database; `None` (and a diagnostic) when it cannot be read.
fn read_into(db: &mut Database, path: &Path, loaded: &mut Loaded) -> Option<SourceFile> {
    let name = file_name_of(path);
    if let Some(file) = db.file(&name) {
        return Some(file);
    }
    match read_text(path, &name) {
        Ok(text) => {
            let file = db.set_file(name, text);
            loaded.files.push(file);
            Some(file)
        }
        Err(unreadable) => {
            let Unreadable { diagnostic, lossy } = *unreadable;
            if let Some(lossy) = lossy {
                loaded.extra_sources.insert(name, lossy);
            }
            loaded.io_errors.push(diagnostic);
            None
        }
    }
}

/// Reads a file named on the command line or found in a directory, if `project` admits it;
/// else an E0401 that says why (and nothing of its contents).
fn read_admitted(db: &mut Database, project: &Project, path: &Path, loaded: &mut Loaded) -> Option<SourceFile> {
    if let Err(reason) = project.admits(path) {
        let name = file_name_of(path);
        loaded.io_errors.push(file_error(Code::UnreadableFile, &name, format!("cannot read `{name}`: {reason}")));
        return None;
    }
    read_into(db, path, loaded)
}

/// Loads `paths` (files or directories) into `db`, without the files they import: what
/// `netc fmt` needs (it formats the named files only, and a parse of every import would
/// only hold memory).
pub fn load_roots(db: &mut Database, paths: &[PathBuf]) -> Loaded {
    load_roots_with(db, paths, &Excludes::default())
}

/// [`load_roots`], leaving out of the walked directories what `excludes` names.
pub fn load_roots_with(db: &mut Database, paths: &[PathBuf], excludes: &Excludes) -> Loaded {
    load_paths(db, &Project::of(paths), paths, excludes)
}

/// Reads the `.net` files named or found under `paths` that `project` admits (the walks
/// leaving out what `excludes` names; a file named is always read).
fn load_paths(db: &mut Database, project: &Project, paths: &[PathBuf], excludes: &Excludes) -> Loaded {
    let mut loaded = Loaded::default();
    // The roots so far, to keep each once (a directory can hold tens of thousands).
    let mut is_root: HashSet<SourceFile> = HashSet::new();
    for path in paths {
        if path.is_dir() {
            let found = walk_with(path, project, excludes);
            for (dir, e) in &found.unreadable {
                let name = file_name_of(dir);
                loaded.io_errors.push(file_error(
                    Code::UnreadableFile,
                    &name,
                    format!("cannot read directory `{name}`: {e}"),
                ));
            }
            for file in found.files {
                if let Some(f) = read_admitted(db, project, &file, &mut loaded)
                    && is_root.insert(f)
                {
                    loaded.roots.push(f);
                }
            }
        } else if let Some(f) = read_admitted(db, project, path, &mut loaded)
            && is_root.insert(f)
        {
            loaded.roots.push(f);
        }
    }
    loaded
}

/// Loads `paths` (files or directories) and everything they import into `db`. Only the
/// `.net` files of the paths' [`Project`] are read; a `use` of anything else is recorded
/// with why ([`Database::refuse`]), for its E0223.
pub fn load(db: &mut Database, paths: &[PathBuf]) -> Loaded {
    load_with(db, paths, &Excludes::default())
}

/// [`load`], leaving out of the walked directories what `excludes` names (a file they import
/// is still loaded: it is needed to check them).
pub fn load_with(db: &mut Database, paths: &[PathBuf], excludes: &Excludes) -> Loaded {
    let project = Project::of(paths);
    let mut loaded = load_paths(db, &project, paths, excludes);
    // Follow `use "..."` to a fixed point. Missing files are reported by `file_imports`.
    let mut next = 0;
    while next < loaded.files.len() {
        let file = loaded.files[next];
        next += 1;
        for name in imported_names(db, file) {
            if db.file(&name).is_some() {
                continue;
            }
            let path = PathBuf::from(name.as_str());
            match project.admits(&path) {
                Err(reason) => db.refuse(name, reason),
                Ok(()) if path.is_file() => {
                    read_into(db, &path, &mut loaded);
                }
                Ok(()) => {}
            }
        }
    }
    loaded
}

/// The outcome of reading the `netc.toml` files of loaded files.
#[derive(Debug, Default)]
pub struct Configured {
    /// Their diagnostics: unreadable files (E0401, E0402), malformed ones (E0403), unknown
    /// lint names (W0404, at the level the file and the command line give it).
    pub diagnostics: Vec<Diagnostic>,
    /// Whether one could not be read or is malformed (exit code 2); the files it governs
    /// were configured as if it did not exist.
    pub failed: bool,
    /// The texts of the `netc.toml` files that have diagnostics, for rendering.
    pub sources: BTreeMap<FileName, String>,
}

/// One `netc.toml` found.
struct Found {
    /// Its directory, canonical.
    dir: PathBuf,
    /// The configuration, or `None` when unreadable or malformed.
    config: Option<ProjectConfig>,
    /// The files it governs, with their paths relative to `dir` (`/` separators).
    files: Vec<(FileName, String)>,
}

/// The name a `netc.toml` at canonical `path` is shown as: relative to the current directory
/// when it is below it, else absolute.
fn config_file_name(path: &Path) -> FileName {
    let cwd = std::env::current_dir().and_then(|d| d.canonicalize());
    match cwd.as_ref().ok().and_then(|cwd| path.strip_prefix(cwd).ok()) {
        Some(relative) => file_name_of(relative),
        None => file_name_of(path),
    }
}

/// `path` relative to `dir`, with `/` separators.
fn relative_to(path: &Path, dir: &Path) -> Option<String> {
    let relative = path.strip_prefix(dir).ok()?;
    let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    Some(parts.join("/"))
}

/// Finds the `netc.toml` nearest to each loaded file (in its directory or the closest
/// ancestor), reads and parses each once, and sets the levels they give for the files they
/// govern ([`crate::db::Config::overrides`]): `[lints]` for every one, each matching
/// `[[overrides]]` entry after it. The command line's levels, set before, still win.
pub fn configure(db: &mut Database, loaded: &Loaded) -> Configured {
    let names: Vec<FileName> = loaded.files.iter().map(|&f| f.name(db).clone()).collect();
    let (overrides, configured) = read_configuration(&names, db.config().levels(db));
    db.set_overrides(overrides);
    configured
}

/// The reading half of [`configure`], without the database: the level overrides that the
/// `netc.toml` files nearest to the files `names` give, and their problems (unknown names at
/// the level the file itself and `command_line` give W0404). The language server reads
/// with this while it holds no lock, then sets the overrides.
pub fn read_configuration(
    names: &[FileName],
    command_line: &BTreeMap<String, Level>,
) -> (Vec<LevelOverride>, Configured) {
    let mut found: Vec<Found> = Vec::new();
    // Directory (canonical) to the index in `found` of the netc.toml that governs it.
    let mut nearest: HashMap<PathBuf, Option<usize>> = HashMap::new();
    let mut configured = Configured::default();
    for name in names {
        let name = name.clone();
        let path = Path::new(name.as_str());
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (Ok(dir), Some(file_part)) = (parent.canonicalize(), path.file_name()) else { continue };
        let mut visited = Vec::new();
        let mut governing = None;
        for ancestor in dir.ancestors() {
            if let Some(&known) = nearest.get(ancestor) {
                governing = known;
                break;
            }
            visited.push(ancestor.to_path_buf());
            let candidate = ancestor.join(config::FILE_NAME);
            if candidate.is_file() {
                let config_name = config_file_name(&candidate);
                let (config, diagnostics, text) = read_config(&candidate, &config_name);
                configured.failed |= diagnostics.iter().any(|d| d.severity == Severity::Error);
                if !diagnostics.is_empty() {
                    configured.sources.insert(config_name.clone(), text);
                }
                // Unknown names take the level the file itself and the command line give W0404.
                let own = config.as_ref().map(|c| c.lints.clone()).unwrap_or_default();
                for mut d in diagnostics {
                    let info = d.code.info();
                    if info.is_configurable() {
                        match configured_level(&[&own, command_line], info, d.severity) {
                            Some(Level::Allow) => continue,
                            Some(Level::Warn) => d.severity = Severity::Warning,
                            Some(Level::Deny) => d.severity = Severity::Error,
                            None => {}
                        }
                    }
                    configured.diagnostics.push(d);
                }
                found.push(Found { dir: ancestor.to_path_buf(), config, files: Vec::new() });
                governing = Some(found.len() - 1);
                break;
            }
        }
        for dir in visited {
            nearest.insert(dir, governing);
        }
        if let Some(index) = governing
            && let Some(relative) = relative_to(&dir.join(file_part), &found[index].dir)
        {
            found[index].files.push((name, relative));
        }
    }
    let mut overrides = Vec::new();
    for f in &found {
        let Some(config) = &f.config else { continue };
        let all: BTreeSet<FileName> = f.files.iter().map(|(name, _)| name.clone()).collect();
        overrides.push(LevelOverride { files: all, levels: config.lints.clone() });
        for entry in &config.overrides {
            let files = f.files.iter().filter(|(_, path)| entry.matches(path)).map(|(name, _)| name.clone()).collect();
            overrides.push(LevelOverride { files, levels: entry.lints.clone() });
        }
    }
    (overrides, configured)
}

/// Reads and parses one `netc.toml`: the configuration, its diagnostics, and its text. A
/// link to a file of another name is not read: its diagnostics would show that file's text.
fn read_config(path: &Path, name: &FileName) -> (Option<ProjectConfig>, Vec<Diagnostic>, String) {
    if let Ok(real) = path.canonicalize()
        && real.file_name().is_none_or(|n| n != config::FILE_NAME)
    {
        let message = format!("cannot read `{name}`: it links to `{}`, which is not a `netc.toml`", real.display());
        return (None, vec![file_error(Code::UnreadableFile, name, message)], String::new());
    }
    match read_text(path, name) {
        Ok(text) => {
            let (config, diagnostics) = config::parse(name, &text);
            (config, diagnostics, text)
        }
        Err(unreadable) => (None, vec![unreadable.diagnostic], unreadable.lossy.unwrap_or_default()),
    }
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
    /// Whether any file could not be read, or a `netc.toml` is malformed (exit code 2).
    pub io_failed: bool,
    /// Texts of every file a diagnostic may point into.
    pub sources: BTreeMap<FileName, String>,
}

/// Loads `paths`, reads their `netc.toml` files and checks them: the library entry point
/// behind `netc check`. The command line's levels are set in `db` before.
pub fn check_paths(db: &mut Database, paths: &[PathBuf]) -> Checked {
    check_paths_with(db, paths, &Excludes::default())
}

/// [`check_paths`], leaving out of the walked directories what `excludes` names.
pub fn check_paths_with(db: &mut Database, paths: &[PathBuf], excludes: &Excludes) -> Checked {
    check_paths_changed(db, paths, excludes, |_, _| {})
}

/// As [`check_paths_with`], with the texts of the files named changed by `change` after they
/// are loaded and before they are checked (what-if settings: the files on disk are not
/// touched).
pub fn check_paths_changed(
    db: &mut Database,
    paths: &[PathBuf],
    excludes: &Excludes,
    change: impl FnOnce(&mut Database, &[SourceFile]),
) -> Checked {
    let loaded = load_with(db, paths, excludes);
    change(db, &loaded.roots);
    let configured = configure(db, &loaded);
    let mut diagnostics = loaded.io_errors.clone();
    diagnostics.extend(configured.diagnostics);
    for &file in &loaded.files {
        diagnostics.extend(file_diagnostics(db, file).iter().cloned());
    }
    let mut sources = loaded.extra_sources.clone();
    sources.extend(configured.sources);
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
        io_failed: !loaded.io_errors.is_empty() || configured.failed,
        sources,
    }
}

/// Reads a file that netc itself writes (a budget snapshot): `Ok(None)` when there is none.
/// It must be a regular file: a symbolic link or anything else is refused (the reason is the
/// error), so that netc never shows, compares or later replaces a file it did not make.
pub fn read_generated(path: &Path) -> Result<Option<String>, String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err("it is a symbolic link, not a regular file".to_string());
        }
        Ok(meta) if !meta.is_file() => return Err(not_regular(meta.file_type()).to_string()),
        Ok(_) => {}
    }
    read_regular_text(path).map(Some).map_err(|e| e.to_string())
}
