//! Incrementality: apply a sequence of edits and assert which queries re-ran.
//!
//! The database reports every query execution (`WillExecute`); each step clears the log,
//! edits, asks for every file's diagnostics, and compares the executed queries with the
//! expectation. Whitespace and comment edits must stop at `syntax_tree` (early cutoff), and
//! an edit of one file must not re-run another file's queries unless its definitions change.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use netc::db::{Level, SourceFile};
use netc::diagnostics::FileName;
use netc::host::{Database, file_diagnostics};
use netc::semantics::files::{ItemLoc, syntax_tree};

struct Logged {
    db: Database,
    log: Arc<Mutex<Vec<String>>>,
    files: BTreeMap<&'static str, SourceFile>,
}

impl Logged {
    fn new(files: &[(&'static str, &str)]) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let mut db = Database::with_event_callback(Box::new(move |event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                sink.lock().unwrap().push(format!("{database_key:?}"));
            }
        }));
        let files =
            files.iter().map(|(name, text)| (*name, db.set_file(FileName::new(*name), text.to_string()))).collect();
        let mut logged = Logged { db, log, files };
        logged.run();
        logged
    }

    /// Asks for every file's diagnostics; returns the queries that ran, as `query(file)`,
    /// sorted, with salsa ids replaced by file names.
    fn run(&mut self) -> Vec<String> {
        self.log.lock().unwrap().clear();
        for &file in self.files.values() {
            let _ = file_diagnostics(&self.db, file);
        }
        // Items are keyed by interned ids: name them `file#index`.
        let mut item_ids: Vec<(String, String)> = Vec::new();
        for (name, &file) in &self.files {
            for index in 0..syntax_tree(&self.db, file).items.len() as u32 {
                let id = salsa::plumbing::AsId::as_id(&ItemLoc::new(&self.db, file, index));
                item_ids.push((format!("({id:?})"), format!("({name}#{index})")));
            }
        }
        let ids: Vec<(String, &str)> =
            self.files.iter().map(|(name, f)| (format!("{:?}", salsa::plumbing::AsId::as_id(f)), *name)).collect();
        let mut ran: Vec<String> = self
            .log
            .lock()
            .unwrap()
            .iter()
            .map(|key| {
                let mut key = key.clone();
                for (id, name) in &item_ids {
                    key = key.replace(id.as_str(), name);
                }
                for (id, name) in &ids {
                    key = key.replace(id.as_str(), name);
                }
                key
            })
            .collect();
        ran.sort();
        ran
    }

    fn edit(&mut self, name: &'static str, from: &str, to: &str) -> Vec<String> {
        let file = self.files[name];
        let text = file.text(&self.db).replacen(from, to, 1);
        assert_ne!(&text, file.text(&self.db), "the edit must change {name}");
        self.db.set_file(FileName::new(name), text);
        self.run()
    }
}

const A: &str = r#"use "b.net"

# The model under test.
model net(classes: int = 10) {
    input x: f32[N, 3, 32, 32]
    y = stem(x, 16)
    return linear(flatten(y), classes)
}

infer serve { model net()  batch 1  no_grad  eval  budget 64 MiB }
"#;

const B: &str = r#"block stem(x, width: int) {
    y = relu(conv2d(x, width, k=3, pad=1))
    return y
}
"#;

const C: &str = r#"model other() {
    input x: f32[N, 8]
    return linear(x, 4)
}
"#;

#[test]
fn initial_check_runs_every_query_once() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);
    // A second run with no edit re-runs nothing.
    assert_eq!(logged.run(), Vec::<String>::new());
}

#[test]
fn edits_rerun_only_what_they_touch() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);

    // A comment: a.net is re-parsed, its tree is equal, nothing semantic re-runs.
    let ran = logged.edit("a.net", "# The model under test.", "# The model under test, edited.");
    insta::assert_snapshot!("comment_edit", ran.join("\n"));

    // Whitespace, inside a body: the same.
    let ran = logged.edit("a.net", "    y = stem(x, 16)", "    y   =   stem(x,16)");
    insta::assert_snapshot!("whitespace_edit", ran.join("\n"));

    // A statement of c.net: only c.net's queries re-run.
    let ran = logged.edit("c.net", "linear(x, 4)", "linear(x, 5)");
    insta::assert_snapshot!("statement_edit_other_file", ran.join("\n"));

    // The body of block `stem` in b.net: b.net is re-checked; a.net imports b.net but the
    // definitions it sees are unchanged, so a.net's checks are reused. a.net's model and
    // scenario call `stem`, so they (and only they) are elaborated again.
    let ran = logged.edit("b.net", "return y", "return relu(y)");
    insta::assert_snapshot!("body_edit_imported_file", ran.join("\n"));

    // The signature of `stem`: now a.net, which calls it, is re-checked too.
    let ran = logged.edit("b.net", "width: int)", "width: int, depth: int = 1)");
    insta::assert_snapshot!("signature_edit_imported_file", ran.join("\n"));

    // Configuration: each file's levels are looked up again; they changed for every file (the
    // command line's apply to all), so the final diagnostics query re-runs, and only it.
    logged.db.set_levels(BTreeMap::from([("ineffective-setting".to_string(), Level::Allow)]));
    let ran = logged.run();
    insta::assert_snapshot!("config_edit", ran.join("\n"));
}

#[test]
fn netc_toml_edits_rerun_only_the_files_they_concern() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);
    // netc.toml's levels for a.net only: every file looks its levels up again, and only a.net,
    // whose levels changed, has its diagnostics' levels resolved again; nothing before that.
    let levels = BTreeMap::from([("unused".to_string(), Level::Deny)]);
    let files = std::collections::BTreeSet::from([FileName::new("a.net")]);
    logged.db.set_overrides(vec![netc::db::LevelOverride { files, levels }]);
    let ran = logged.run();
    let expected = ["file_diagnostics(a.net)", "file_levels(a.net)", "file_levels(b.net)", "file_levels(c.net)"];
    assert_eq!(ran, expected, "{ran:#?}");
    // Setting the same levels again changes nothing.
    use netc::db::Db as _;
    let same = logged.db.config().overrides(&logged.db).clone();
    logged.db.set_overrides(same);
    assert_eq!(logged.run(), Vec::<String>::new());
}

#[test]
fn diagnostics_after_edits_equal_a_fresh_check() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);
    logged.edit("a.net", "y = stem(x, 16)", "y = stem(x, 16, depth=2)");
    logged.edit("b.net", "width: int)", "width: int, depth: int = 1)");
    logged.edit("a.net", "# The model", "## The model");
    let incremental: Vec<_> = logged.files.values().flat_map(|&f| file_diagnostics(&logged.db, f).clone()).collect();
    let texts: Vec<(&str, String)> = logged.files.iter().map(|(name, f)| (*name, f.text(&logged.db).clone())).collect();
    let borrowed: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
    assert_eq!(incremental, crate::support::diagnostics_of(&borrowed));
    assert!(incremental.iter().all(|d| d.code.info().is_lint()), "{incremental:?}");
}

const BLOCKS: &str = r#"block alpha(x) {
    return relu(linear(x, 16))
}

block beta(x) {
    return gelu(linear(x, 16))
}
"#;

const MODELS: &str = r#"use "blocks.net"

model uses_alpha() {
    input x: f32[N, 8]
    return alpha(x)
}

model uses_beta() {
    input x: f32[N, 8]
    return beta(x)
}

infer a { model uses_alpha()  batch 2 }
infer b { model uses_beta()  batch 2 }
"#;

#[test]
fn editing_one_block_re_elaborates_only_the_scenarios_that_use_it() {
    let mut logged = Logged::new(&[("blocks.net", BLOCKS), ("models.net", MODELS)]);
    let ran = logged.edit("blocks.net", "relu(linear(x, 16))", "relu(linear(x, 32))");
    // `alpha` changed: its model and scenario are elaborated again; `beta`'s are reused.
    let elaborated: Vec<&String> = ran.iter().filter(|q| q.contains("graph")).collect();
    assert_eq!(elaborated, ["model_graph(models.net#1)", "scenario_graph(models.net#3)"], "{ran:#?}");
}

#[test]
fn a_comment_edit_moves_report_lines_without_rebuilding_the_report() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B)]);
    let a = logged.files["a.net"];
    let serve = syntax_tree(&logged.db, a).items.len() as u32 - 1;
    let lines = |db: &Database| {
        let report = netc::report::scenario_report(db, a, serve).expect("a report");
        report.lines.iter().map(|l| format!("{}:{}", l.file, l.line)).collect::<Vec<_>>()
    };
    assert_eq!(lines(&logged.db), ["a.net:5", "b.net:2", "b.net:3", "a.net:6", "a.net:7"]);
    // One comment line more above the model: every line of a.net below it moves down one.
    logged.edit("a.net", "# The model under test.", "# The model\n# under test.");
    logged.log.lock().unwrap().clear();
    assert_eq!(lines(&logged.db), ["a.net:6", "b.net:2", "b.net:3", "a.net:7", "a.net:8"]);
    let ran = logged.log.lock().unwrap().clone();
    // Only positions were looked up again: the walk over the graph and the simulation are
    // reused (`unlocated` depends on no position).
    assert!(!ran.iter().any(|q| q.contains("unlocated") || q.contains("graph") || q.contains("costs")), "{ran:#?}");
}

#[test]
fn an_edit_that_leaves_the_graph_equal_rebuilds_no_report() {
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B)]);
    let a = logged.files["a.net"];
    let serve = syntax_tree(&logged.db, a).len() as u32 - 1;
    let before = netc::report::scenario_report(&logged.db, a, serve).expect("a report");
    // Comment lines above the model, a new item after the scenario (items are numbered, so
    // one above it would be a different item), and a statement rewritten to the same value.
    logged.edit("a.net", "# The model under test.", "# The model\n#\n#\n# under test.");
    logged.edit("a.net", "budget 64 MiB }\n", "budget 64 MiB }\n\nblock unused(x) {\n    return x\n}\n");
    logged.edit("b.net", "conv2d(x, width, k=3, pad=1)", "conv2d(x, 16, k=3, pad=1)");
    logged.log.lock().unwrap().clear();
    let after = netc::report::scenario_report(&logged.db, a, serve).expect("a report");
    let ran = logged.log.lock().unwrap().clone();
    assert!(!ran.iter().any(|q| q.contains("unlocated") || q.contains("costs")), "{ran:#?}");
    // The figures are the same; the model's lines moved down three.
    assert_eq!(after.lines.iter().map(|l| l.line).collect::<Vec<_>>(), [8, 2, 3, 9, 10]);
    assert_eq!(after.peak_bytes, before.peak_bytes);
}

/// A training scenario of `A`'s model: its whole simulation (two steps) is what the
/// per-line figures must not wait for.
const TRAIN: &str = "\ntrain fit { model net()  batch 8  optimizer adam }\n";

#[test]
fn hints_after_an_edit_wait_for_the_first_forward_pass_only() {
    use netc::ide::{HintConfig, hover, inlay_hints};
    let a_text = format!("{A}{TRAIN}");
    let mut logged = Logged::new(&[("a.net", &a_text), ("b.net", B)]);
    let a = logged.files["a.net"];
    let config = HintConfig::default();
    let fit = netc::ide::ScenarioRef { file: FileName::new("a.net"), name: "fit".to_string() };
    let stmt = a_text.find("y = stem").expect("the statement") as u32;
    let figures = |db: &Database| {
        let hover = hover(db, a, stmt, Some(&fit)).expect("a hover").markdown;
        (inlay_hints(db, a, None, Some(&fit), &config), hover)
    };
    let before = figures(&logged.db);
    assert!(before.1.contains("scenario `fit`"), "{}", before.1);
    // The stem's width changes: the graph of `fit`, so its figures, change. The edit is set
    // alone (no diagnostics asked for: their lints would run the whole simulation).
    let edited = a_text.replacen("stem(x, 16)", "stem(x, 32)", 1);
    logged.db.set_file(FileName::new("a.net"), edited.clone());
    logged.log.lock().unwrap().clear();
    let after = figures(&logged.db);
    let ran = logged.log.lock().unwrap().clone();
    assert_ne!(after, before, "the edit changes the figures");
    assert!(ran.iter().any(|q| q.starts_with("scenario_lines(")), "{ran:#?}");
    // Neither the whole simulation nor the report with its peak ran.
    assert!(!ran.iter().any(|q| q.contains("scenario_costs") || q.starts_with("unlocated(")), "{ran:#?}");
    // The figures are those of a fresh database.
    let mut fresh = Database::new();
    let fresh_a = fresh.set_file(FileName::new("a.net"), edited);
    fresh.set_file(FileName::new("b.net"), B.to_string());
    let hover = hover(&fresh, fresh_a, stmt, Some(&fit)).expect("a hover").markdown;
    assert_eq!(after, (inlay_hints(&fresh, fresh_a, None, Some(&fit), &config), hover));
}

#[test]
fn a_removed_file_leaves_no_parse_behind() {
    use netc::db::Db as _;
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);
    let kept = logged.db.parse_cache().len();
    logged.db.remove_file(&FileName::new("c.net"));
    assert_eq!(logged.db.parse_cache().len(), kept - 1);
}

#[test]
fn an_edit_of_one_item_rereads_only_that_items_tree() {
    // A file of several blocks, all used by its model: editing one block's body makes the
    // file's items again (one query), but only that block's `item_tree` runs again; the
    // others are found unchanged without running (a generated file has thousands).
    const MANY: &str = r#"block b0(x) {
    return relu(x)
}

block b1(x) {
    return relu(x)
}

block b2(x) {
    return relu(x)
}

model m() {
    input x: f32[N, 8]
    return b2(b1(b0(x)))
}

infer serve { model m()  batch 2 }
"#;
    let mut logged = Logged::new(&[("many.net", MANY)]);
    let ran = logged.edit("many.net", "block b1(x) {\n    return relu(x)", "block b1(x) {\n    return relu(relu(x))");
    let trees: Vec<&String> =
        ran.iter().filter(|q| q.starts_with("item_tree(") || q.starts_with("file_items(")).collect();
    assert_eq!(trees, ["file_items(many.net)", "item_tree(many.net#1)"], "{ran:#?}");
    // And the scenario, which uses b1, was elaborated again.
    assert!(ran.iter().any(|q| q == "scenario_graph(many.net#4)"), "{ran:#?}");
}

#[test]
fn semantic_tokens_are_computed_once_per_text() {
    // The language server asks for a file's tokens again without an edit (a refresh, a range
    // request): a 5 MB file once took minutes each time. The second request runs nothing, and
    // an edit of another file does not run them again either.
    let mut logged = Logged::new(&[("a.net", A), ("b.net", B), ("c.net", C)]);
    let a = logged.files["a.net"];
    logged.log.lock().unwrap().clear();
    let first = netc::ide::semantic_tokens(&logged.db, a).clone();
    let ran = logged.log.lock().unwrap().clone();
    assert!(ran.iter().any(|q| q.starts_with("semantic_tokens(")), "{ran:#?}");
    assert!(ran.iter().any(|q| q.starts_with("occurrences(")), "{ran:#?}");
    logged.log.lock().unwrap().clear();
    assert_eq!(netc::ide::semantic_tokens(&logged.db, a), &first);
    assert_eq!(*logged.log.lock().unwrap(), Vec::<String>::new());
    logged.edit("c.net", "linear(x, 4)", "linear(x, 5)");
    logged.log.lock().unwrap().clear();
    assert_eq!(netc::ide::semantic_tokens(&logged.db, a), &first);
    assert_eq!(*logged.log.lock().unwrap(), Vec::<String>::new());
    // An edit of the file itself computes them again.
    logged.edit("a.net", "# The model under test.", "# The model under test, edited.");
    logged.log.lock().unwrap().clear();
    let edited = netc::ide::semantic_tokens(&logged.db, a).clone();
    assert!(logged.log.lock().unwrap().iter().any(|q| q.starts_with("semantic_tokens(")));
    assert_eq!(edited.len(), first.len());
}
