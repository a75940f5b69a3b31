//! The salsa database's foundation: the inputs ([`SourceFile`], [`Workspace`], the embedded
//! [`StdLib`] and the [`Config`] of levels), the base [`Db`] trait every query takes, the
//! stdlib's sources and the [`ParseCache`] that `parse_file` reparses from.
//!
//! The queries live beside the layer they belong to: files, scopes, checks and scenario
//! setups in [`crate::semantics`], lint levels in [`crate::config`], graphs in
//! [`crate::elaborate`] (whose [`crate::elaborate::Db`] adds the elaboration cache), memory in
//! [`crate::costs`], lints in [`crate::lints`]. The concrete database and the one query that
//! reads every layer (a file's diagnostics) are in [`crate::host`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use crate::diagnostics::FileName;
use crate::syntax::Parse;
use crate::syntax::incremental::ParseState;

/// One source file: its name (as shown to the user) and its text.
#[salsa::input(debug)]
pub struct SourceFile {
    /// The name, a path relative to where netc runs, or `<std>/nn.net` for the stdlib.
    #[returns(ref)]
    pub name: FileName,
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// The user's files, by name. Files reached through `use` are added by the loader.
#[salsa::input(debug)]
pub struct Workspace {
    /// Every user file known to the database.
    #[returns(ref)]
    pub files: BTreeMap<FileName, SourceFile>,
    /// Files that a `use` names but the loader refused to read (outside the project, not a
    /// `.net` file, not a regular file), each with why: their `use` is E0223, not E0201.
    #[returns(ref)]
    pub refused: BTreeMap<FileName, String>,
}

/// The embedded standard library, by module path (`std.nn`).
#[salsa::input(debug)]
pub struct StdLib {
    /// Module path to file.
    #[returns(ref)]
    pub modules: BTreeMap<String, SourceFile>,
}

/// How a diagnostic's level is overridden by configuration. Written `allow`, `warn`, `deny`
/// wherever a level is read from text (netc.toml, the editor's settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning.
    Warn,
    /// Reported as an error.
    Deny,
}

/// Levels set for some files only: a `netc.toml`'s `[lints]` (for every file it governs) or
/// one of its `[[overrides]]` entries (for the files its `paths` match). The loader decides
/// which files; see [`crate::config`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LevelOverride {
    /// The files the levels apply to.
    pub files: BTreeSet<FileName>,
    /// Levels by name, code or `warnings`, as in [`Config::levels`].
    pub levels: BTreeMap<String, Level>,
}

/// Configuration (from `netc.toml` and the command line).
#[salsa::input(debug)]
pub struct Config {
    /// Level overrides by diagnostic name (`ineffective-setting`), code (`W0306`), or
    /// `warnings` for every warning, from the command line: they win over `overrides`. Only
    /// warnings and lints can be changed: an error means the program is wrong and stays one.
    #[returns(ref)]
    pub levels: BTreeMap<String, Level>,
    /// Levels from `netc.toml` files, weakest first: for a file, those whose `files` hold it.
    #[returns(ref)]
    pub overrides: Vec<LevelOverride>,
}

/// The module every file sees without `use`.
pub const PRELUDE: &str = "std.nn";

/// The stdlib sources embedded in the binary: module path and text.
///
/// Read through `compiler/stdlib`, a link to the repository's `stdlib/`, so that the files
/// lie inside this crate's folder and `cargo package` puts them in the published crate.
pub const STDLIB_SOURCES: &[(&str, &str)] = &[
    ("std.nn", include_str!("../stdlib/std/nn.net")),
    ("std.blocks", include_str!("../stdlib/std/blocks.net")),
    ("std.models.alexnet", include_str!("../stdlib/std/models/alexnet.net")),
    ("std.models.articles", include_str!("../stdlib/std/models/articles.net")),
    ("std.models.bert", include_str!("../stdlib/std/models/bert.net")),
    ("std.models.convnext", include_str!("../stdlib/std/models/convnext.net")),
    ("std.models.densenet", include_str!("../stdlib/std/models/densenet.net")),
    ("std.models.efficientnet", include_str!("../stdlib/std/models/efficientnet.net")),
    ("std.models.ernie4_5", include_str!("../stdlib/std/models/ernie4_5.net")),
    ("std.models.ernie4_5_moe", include_str!("../stdlib/std/models/ernie4_5_moe.net")),
    ("std.models.gemma2", include_str!("../stdlib/std/models/gemma2.net")),
    ("std.models.cohere", include_str!("../stdlib/std/models/cohere.net")),
    ("std.models.cohere2", include_str!("../stdlib/std/models/cohere2.net")),
    ("std.models.deepseek_v2", include_str!("../stdlib/std/models/deepseek_v2.net")),
    ("std.models.deepseek_v3", include_str!("../stdlib/std/models/deepseek_v3.net")),
    ("std.models.glm", include_str!("../stdlib/std/models/glm.net")),
    ("std.models.glm4", include_str!("../stdlib/std/models/glm4.net")),
    ("std.models.glm4_moe", include_str!("../stdlib/std/models/glm4_moe.net")),
    ("std.models.gpt_neo", include_str!("../stdlib/std/models/gpt_neo.net")),
    ("std.models.seed_oss", include_str!("../stdlib/std/models/seed_oss.net")),
    ("std.models.smollm3", include_str!("../stdlib/std/models/smollm3.net")),
    ("std.models.gemma", include_str!("../stdlib/std/models/gemma.net")),
    ("std.models.helium", include_str!("../stdlib/std/models/helium.net")),
    ("std.models.arcee", include_str!("../stdlib/std/models/arcee.net")),
    ("std.models.jais2", include_str!("../stdlib/std/models/jais2.net")),
    ("std.models.vaultgemma", include_str!("../stdlib/std/models/vaultgemma.net")),
    ("std.models.hunyuan_v1_dense", include_str!("../stdlib/std/models/hunyuan_v1_dense.net")),
    ("std.models.hunyuan_v1_moe", include_str!("../stdlib/std/models/hunyuan_v1_moe.net")),
    ("std.models.ministral3", include_str!("../stdlib/std/models/ministral3.net")),
    ("std.models.cwm", include_str!("../stdlib/std/models/cwm.net")),
    ("std.models.nanochat", include_str!("../stdlib/std/models/nanochat.net")),
    ("std.models.hyperclovax", include_str!("../stdlib/std/models/hyperclovax.net")),
    ("std.models.youtu", include_str!("../stdlib/std/models/youtu.net")),
    ("std.models.minicpm3", include_str!("../stdlib/std/models/minicpm3.net")),
    ("std.models.ministral", include_str!("../stdlib/std/models/ministral.net")),
    ("std.models.gemma3", include_str!("../stdlib/std/models/gemma3.net")),
    ("std.models.nemotron", include_str!("../stdlib/std/models/nemotron.net")),
    ("std.models.apertus", include_str!("../stdlib/std/models/apertus.net")),
    ("std.models.olmo3", include_str!("../stdlib/std/models/olmo3.net")),
    ("std.models.exaone4", include_str!("../stdlib/std/models/exaone4.net")),
    ("std.models.olmo", include_str!("../stdlib/std/models/olmo.net")),
    ("std.models.olmo2", include_str!("../stdlib/std/models/olmo2.net")),
    ("std.models.olmoe", include_str!("../stdlib/std/models/olmoe.net")),
    ("std.models.qwen2_moe", include_str!("../stdlib/std/models/qwen2_moe.net")),
    ("std.models.qwen3_moe", include_str!("../stdlib/std/models/qwen3_moe.net")),
    ("std.models.stablelm", include_str!("../stdlib/std/models/stablelm.net")),
    ("std.models.persimmon", include_str!("../stdlib/std/models/persimmon.net")),
    ("std.models.granite", include_str!("../stdlib/std/models/granite.net")),
    ("std.models.granite_swa", include_str!("../stdlib/std/models/granite_swa.net")),
    ("std.models.granitemoe", include_str!("../stdlib/std/models/granitemoe.net")),
    ("std.models.phimoe", include_str!("../stdlib/std/models/phimoe.net")),
    ("std.models.diffllama", include_str!("../stdlib/std/models/diffllama.net")),
    ("std.models.starcoder2", include_str!("../stdlib/std/models/starcoder2.net")),
    ("std.models.phi", include_str!("../stdlib/std/models/phi.net")),
    ("std.models.gptj", include_str!("../stdlib/std/models/gptj.net")),
    ("std.models.codegen", include_str!("../stdlib/std/models/codegen.net")),
    ("std.models.opt", include_str!("../stdlib/std/models/opt.net")),
    ("std.models.biogpt", include_str!("../stdlib/std/models/biogpt.net")),
    ("std.models.bitnet", include_str!("../stdlib/std/models/bitnet.net")),
    ("std.models.falcon", include_str!("../stdlib/std/models/falcon.net")),
    ("std.models.bloom", include_str!("../stdlib/std/models/bloom.net")),
    ("std.models.mpt", include_str!("../stdlib/std/models/mpt.net")),
    ("std.models.gpt_oss", include_str!("../stdlib/std/models/gpt_oss.net")),
    ("std.models.gpt2", include_str!("../stdlib/std/models/gpt2.net")),
    ("std.models.gpt_bigcode", include_str!("../stdlib/std/models/gpt_bigcode.net")),
    ("std.models.gpt_neox", include_str!("../stdlib/std/models/gpt_neox.net")),
    ("std.models.llama", include_str!("../stdlib/std/models/llama.net")),
    ("std.models.qwen2", include_str!("../stdlib/std/models/qwen2.net")),
    ("std.models.qwen3", include_str!("../stdlib/std/models/qwen3.net")),
    ("std.models.mixtral", include_str!("../stdlib/std/models/mixtral.net")),
    ("std.models.mistral", include_str!("../stdlib/std/models/mistral.net")),
    ("std.models.phi3", include_str!("../stdlib/std/models/phi3.net")),
    ("std.models.mobilenet", include_str!("../stdlib/std/models/mobilenet.net")),
    ("std.models.resnet", include_str!("../stdlib/std/models/resnet.net")),
    ("std.models.unet", include_str!("../stdlib/std/models/unet.net")),
    ("std.models.vgg", include_str!("../stdlib/std/models/vgg.net")),
    ("std.models.vit", include_str!("../stdlib/std/models/vit.net")),
];

/// The database interface the queries use.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The user's files.
    fn workspace(&self) -> Workspace;
    /// The standard library.
    fn stdlib(&self) -> StdLib;
    /// The configuration.
    fn config(&self) -> Config;
    /// The last parse of each file, which `parse_file` reparses after an edit.
    fn parse_cache(&self) -> &ParseCache;
}

/// The last parse of each file with what a reparse reuses ([`ParseState`]), kept beside
/// salsa: a query cannot see its own previous result, and reparsing only the edited items
/// is what keeps an edit of a large file fast. It changes no result: a reparse equals a
/// parse from scratch (tests/it/reparse.rs), so `parse_file` is still a function of the
/// text. Shared by the database's clones (the language server's snapshots).
#[derive(Debug, Default)]
pub struct ParseCache(Mutex<HashMap<SourceFile, Arc<ParseState>>>);

impl ParseCache {
    /// The parse of `text`, the current text of `file`: reparsed from the file's last
    /// parse, or parsed from scratch the first time.
    pub(crate) fn parse(&self, file: SourceFile, name: &FileName, text: &str) -> Arc<Parse> {
        let previous = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&file).cloned();
        let state = match previous {
            Some(state) if state.text() == text => state,
            Some(state) => {
                let state = Arc::new(state.reparse(name, text));
                // Debug builds (every test run) check each reparse against a parse from scratch.
                debug_assert!(**state.parse() == crate::syntax::parse(name, text), "reparse of {name} differs");
                state
            }
            None => Arc::new(ParseState::new(name, text)),
        };
        let parse = Arc::clone(state.parse());
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(file, state);
        parse
    }

    /// How many files' parses are kept.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no parse is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the last parse of `file` (it left the workspace).
    pub(crate) fn forget(&self, file: SourceFile) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&file);
    }
}

/// The file name of a stdlib module: `std.nn` is `<std>/nn.net`.
pub fn stdlib_file_name(module: &str) -> FileName {
    let path = module.strip_prefix("std.").unwrap_or(module).replace('.', "/");
    FileName::new(format!("<std>/{path}.net"))
}

/// Finds a file (user or stdlib) by name.
pub fn lookup_file(db: &dyn Db, name: &FileName) -> Option<SourceFile> {
    if let Some(&file) = db.workspace().files(db).get(name) {
        return Some(file);
    }
    stdlib_files(db, db.stdlib()).get(name).copied()
}

/// The stdlib's files by name, for [`lookup_file`]: made once (the stdlib does not change)
/// rather than comparing the name of every module on each lookup. The first module of a name
/// wins, as the search did.
#[salsa::tracked(returns(ref))]
pub fn stdlib_files(db: &dyn Db, stdlib: StdLib) -> BTreeMap<FileName, SourceFile> {
    let mut files = BTreeMap::new();
    for &file in stdlib.modules(db).values() {
        files.entry(file.name(db).clone()).or_insert(file);
    }
    files
}
