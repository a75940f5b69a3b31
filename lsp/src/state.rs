//! The server's state: the one salsa database (its only writer is whoever holds the state's
//! lock), the open documents, the settings, and the loading of files from disk.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use netc::db::{Level, LevelOverride, SourceFile};
use netc::diagnostics::FileName;
use netc::host::Database;
use netc::ide::{HintConfig, ScenarioRef};
use netc::semantics::files::imported_names;
use netc::workspace::Project;
use tower_lsp_server::ls_types as lsp;

use crate::convert::{LineIndex, LineMap, Uris};

/// An open document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The version the client gave with its last change.
    pub version: i32,
    /// Its file in the database.
    pub file: SourceFile,
    /// Counts every change: a request computed on an older edit is stale.
    pub edits: u64,
    /// The line index of its text (shared by the requests and the pushed diagnostics until
    /// the next change).
    pub lines: Arc<LineIndex>,
}

/// Everything the server knows.
pub struct State {
    /// The database. Written only through `&mut State`, under the lock.
    pub db: Database,
    /// Open documents by URI.
    pub docs: HashMap<String, (lsp::Uri, Document)>,
    /// URIs and file names.
    pub uris: Uris,
    /// The scenario the user made active.
    pub chosen: Option<ScenarioRef>,
    /// What inlay hints show.
    pub hints: HintConfig,
    /// The workspace folders.
    pub roots: Vec<PathBuf>,
    /// Increases with every write: a read that started before a write is stale.
    pub generation: u64,
}

impl State {
    /// An empty state.
    pub fn new(stdlib_dir: Option<&Path>) -> Self {
        State {
            db: Database::new(),
            docs: HashMap::new(),
            uris: Uris::new(stdlib_dir),
            chosen: None,
            hints: HintConfig::default(),
            roots: Vec::new(),
            generation: 0,
        }
    }

    /// The open document of a URI.
    pub fn doc(&self, uri: &lsp::Uri) -> Option<&Document> {
        self.docs.get(uri.as_str()).map(|(_, d)| d)
    }

    /// Sets a file's text (a new file or a changed one).
    pub fn set_text(&mut self, name: FileName, text: String) -> SourceFile {
        self.generation += 1;
        self.db.set_file(name, text)
    }

    /// Opens a document.
    pub fn open(&mut self, uri: lsp::Uri, version: i32, text: String) {
        let name = self.uris.name(&uri);
        self.uris.remember(&uri, &name);
        let lines = Arc::new(LineIndex::new(&text));
        let file = self.set_text(name, text);
        self.docs.insert(uri.as_str().to_string(), (uri, Document { version, file, edits: 0, lines }));
        self.load_imports(file);
    }

    /// Applies a document's changes, in order. Unknown documents are ignored.
    pub fn change(&mut self, uri: &lsp::Uri, version: i32, changes: Vec<lsp::TextDocumentContentChangeEvent>) {
        let Some((_, doc)) = self.docs.get(uri.as_str()) else { return };
        let file = doc.file;
        let mut text = file.text(&self.db).clone();
        // The first change is against the text the document's index is of.
        let mut lines = Some(Arc::clone(&doc.lines));
        for change in changes {
            match change.range {
                Some(range) => {
                    let map = match lines.take() {
                        Some(index) => LineMap::with_index(&text, index),
                        None => LineMap::new(&text),
                    };
                    let r = map.text_range(range);
                    text.replace_range(r.to_range(), &change.text);
                }
                None => text = change.text,
            }
            lines = None;
        }
        let lines = Arc::new(LineIndex::new(&text));
        let name = file.name(&self.db).clone();
        self.set_text(name, text);
        if let Some((_, doc)) = self.docs.get_mut(uri.as_str()) {
            doc.version = version;
            doc.edits += 1;
            doc.lines = lines;
        }
        self.load_imports(file);
    }

    /// Closes a document: the file goes back to its text on disk (or away, if it has none).
    pub fn close(&mut self, uri: &lsp::Uri) {
        let Some((_, doc)) = self.docs.remove(uri.as_str()) else { return };
        let name = doc.file.name(&self.db).clone();
        match self.read_admitted(Path::new(name.as_str())) {
            Some(text) => {
                self.set_text(name, text);
            }
            None => {
                self.generation += 1;
                self.db.remove_file(&name);
            }
        }
    }

    /// A file changed, appeared or disappeared on disk. Open documents keep their text; only
    /// `.net` files are sources (a watched `netc.toml` is configuration, read by
    /// `Backend::configure_project`).
    pub fn disk_change(&mut self, uri: &lsp::Uri, deleted: bool) {
        if self.doc(uri).is_some() {
            return;
        }
        let name = self.uris.name(uri);
        if !name.as_str().ends_with(".net") {
            return;
        }
        if deleted {
            self.generation += 1;
            self.db.remove_file(&name);
            return;
        }
        if let Some(text) = self.read_admitted(Path::new(name.as_str())) {
            let file = self.set_text(name, text);
            self.load_imports(file);
        }
    }

    /// The text of the file at `path` if the project admits it (a `.net` file of the
    /// project, links followed: see [`netc::workspace::Project::admits`]).
    fn read_admitted(&self, path: &Path) -> Option<String> {
        self.project(path).admits(path).ok()?;
        read(path)
    }

    /// Adds files read from disk (see [`scan`]), except those open in the editor.
    pub fn add_disk_files(&mut self, files: Vec<(FileName, String)>) {
        for (name, text) in files {
            let open = self.docs.values().any(|(_, d)| d.file.name(&self.db) == &name);
            if !open {
                self.set_text(name, text);
            }
        }
    }

    /// What reading the project's `netc.toml` files needs: the workspace's file names and the
    /// levels given on the command line (the editor's settings). The reading itself
    /// ([`netc::workspace::read_configuration`]) happens without the lock.
    pub fn configuration_inputs(&self) -> (Vec<FileName>, BTreeMap<String, Level>) {
        use netc::db::Db as _;
        let names = self.db.workspace().files(&self.db).keys().cloned().collect();
        (names, self.db.config().levels(&self.db).clone())
    }

    /// Sets the levels that the project's `netc.toml` files give (as `netc check` does).
    pub fn set_overrides(&mut self, overrides: Vec<LevelOverride>) {
        use netc::db::Db as _;
        if self.db.config().overrides(&self.db) != &overrides {
            self.db.set_overrides(overrides);
            self.generation += 1;
        }
    }

    /// Where files may be read from for `path` (see [`netc::workspace::Project`]): the
    /// workspace folders' projects, and the project of `path` itself (a file opened from
    /// outside them).
    fn project(&self, path: &Path) -> Project {
        let mut project = Project::of(&self.roots);
        project.add(path);
        project
    }

    /// Loads the files `file` imports that are on disk but not in the database, and theirs,
    /// as `netc check` does: only `.net` files of the project; a `use` of anything else is
    /// recorded as refused (E0223).
    fn load_imports(&mut self, file: SourceFile) {
        let project = self.project(Path::new(file.name(&self.db).as_str()));
        let mut queue = vec![file];
        let mut steps = 0;
        while let Some(f) = queue.pop() {
            steps += 1;
            if steps > 10_000 {
                break;
            }
            for name in imported_names(&self.db, f) {
                if self.db.file(&name).is_some() {
                    continue;
                }
                let path = Path::new(name.as_str());
                if !path.is_absolute() {
                    continue;
                }
                if let Err(reason) = project.admits(path) {
                    self.generation += 1;
                    self.db.refuse(name, reason);
                    continue;
                }
                if let Some(text) = read(path) {
                    let g = self.set_text(name, text);
                    queue.push(g);
                }
            }
        }
    }
}

/// Every `.net` file below `roots`, read (the files that are not UTF-8 are left out). The
/// walk is the command line's ([`netc::workspace::walk`]): it ends on link loops, leaves out
/// what `.gitignore` and `.ignore` files do, and goes on past a directory it cannot list; like the command line, it reads only the `.net`
/// files of the folders' projects.
pub fn scan(roots: &[PathBuf]) -> Vec<(FileName, String)> {
    let project = Project::of(roots);
    let mut found = Vec::new();
    for root in roots {
        found.extend(netc::workspace::walk(root, &project).files);
    }
    found
        .into_iter()
        .filter(|path| project.admits(path).is_ok())
        .filter_map(|path| Some((FileName::new(path.to_string_lossy().replace('\\', "/")), read(&path)?)))
        .collect()
}

/// A UTF-8 file's text; `None` for anything else (missing, not a regular file, too large,
/// not UTF-8). The reading is the command line's ([`netc::workspace::read_regular`]): a FIFO
/// or a device is never opened.
fn read(path: &Path) -> Option<String> {
    if !path.is_absolute() {
        return None;
    }
    netc::workspace::read_regular_text(path).ok()
}
