//! Block calls reused across elaborations (`elaborate::reuse`): after an edit, the calls that
//! are the same as before are copied from the previous graph instead of run again, and the
//! graph is the one a fresh elaboration makes.
//!
//! Each test counts the calls run and copied ([`ElaborationCache::counts`]) and compares the
//! graph with a fresh database's. (Debug builds also compare every elaboration that copied a
//! call with one from scratch, in every test that edits a file.)

use netc::db::SourceFile;
use netc::diagnostics::FileName;
use netc::elaborate::{CallCounts, ElaborationCache};
use netc::elaborate::{Db, scenario_graph};
use netc::host::Database;
use netc::semantics::files::ItemLoc;
use proptest::prelude::*;

/// `blocks` blocks (each two linears and a relu) chained by a model, and a training scenario.
fn chain(blocks: usize) -> String {
    let mut text = String::new();
    for b in 0..blocks {
        text.push_str(&format!(
            "block b{b}(x, width: int) {{\n    h = relu(linear(x, width))\n    return linear(h, 64)\n}}\n\n"
        ));
    }
    text.push_str("model m() {\n    input x: f32[N, 64]\n    y = x\n");
    for b in 0..blocks {
        text.push_str(&format!("    y = b{b}(y, 64)\n"));
    }
    text.push_str("    return y\n}\n\ntrain fit { model m()  batch 32  optimizer adam }\n");
    text
}

/// A database holding `text` as `main.net`, with its first scenario elaborated.
struct Session {
    db: Database,
    file: SourceFile,
    text: String,
}

impl Session {
    fn new(text: &str) -> Session {
        let mut db = Database::new();
        let file = db.set_file(FileName::new("main.net"), text.to_string());
        let mut session = Session { db, file, text: text.to_string() };
        session.elaborate();
        session
    }

    fn scenario(&self) -> ItemLoc<'_> {
        scenarios(&self.db, self.file)[0]
    }

    /// Elaborates the scenario; checks the graph against a fresh database's.
    fn elaborate(&mut self) {
        let graph = scenario_graph(&self.db, self.scenario()).clone().expect("a scenario");
        let mut fresh = Database::new();
        let file = fresh.set_file(FileName::new("main.net"), self.text.clone());
        let expected = scenario_graph(&fresh, scenarios(&fresh, file)[0]).clone();
        assert_eq!(Some(&*graph), expected.as_deref(), "after the edit the graph differs from a fresh one");
    }

    /// Replaces the first `from` with `to`, elaborates, and returns the calls run and copied.
    fn edit(&mut self, from: &str, to: &str) -> CallCounts {
        assert!(self.text.contains(from), "no {from:?}");
        self.text = self.text.replacen(from, to, 1);
        self.db.set_file(FileName::new("main.net"), self.text.clone());
        self.elaborate();
        self.db.elaboration_cache().counts()
    }
}

/// The scenarios of `file`, in source order.
fn scenarios(db: &Database, file: SourceFile) -> Vec<ItemLoc<'_>> {
    netc::report::scenarios(db, &[file], None).into_iter().map(|(file, index)| ItemLoc::new(db, file, index)).collect()
}

fn counts(ran: u32, reused: u32) -> CallCounts {
    CallCounts { ran, reused, bound: 0 }
}

#[test]
fn the_first_elaboration_runs_every_call() {
    let session = Session::new(&chain(20));
    assert_eq!(session.db.elaboration_cache().counts(), counts(20, 0));
}

#[test]
fn an_edit_inside_one_block_runs_that_call_only() {
    let mut session = Session::new(&chain(20));
    // b0's op changes (same shapes): b0 runs again, the 19 others are copied.
    assert_eq!(session.edit("h = relu(linear(x, width))", "h = gelu(linear(x, width))"), counts(1, 19));
    // Back: the same.
    assert_eq!(session.edit("h = gelu(linear(x, width))", "h = relu(linear(x, width))"), counts(1, 19));
    // An edit that keeps the graph: b0 runs again.
    assert_eq!(session.edit("return linear(h, 64)", "return linear(h, 8 * 8)"), counts(1, 19));
    // b0 makes one op more: the 19 others are copied with their tensors renumbered.
    assert_eq!(session.edit("h = relu(linear(x, width))", "h = relu(relu(linear(x, width)))"), counts(1, 19));
}

#[test]
fn a_changed_output_shape_runs_the_next_call_too() {
    let mut session = Session::new(&chain(20));
    // b3 returns [N, 32]: b4 gets another argument type and runs again; b4 returns [N, 64]
    // as before, so b5 on are copied.
    assert_eq!(
        session.edit(
            "block b3(x, width: int) {\n    h = relu(linear(x, width))\n    return linear(h, 64)",
            "block b3(x, width: int) {\n    h = relu(linear(x, width))\n    return linear(h, 32)"
        ),
        counts(2, 18)
    );
    // An argument changed at the call site (same node count): that call runs again.
    assert_eq!(session.edit("y = b7(y, 64)", "y = b7(y, 16)"), counts(1, 19));
}

#[test]
fn a_line_added_to_the_model_copies_the_calls_after_it() {
    let mut session = Session::new(&chain(20));
    // The calls after the new line have new call sites (node ids are numbered in order):
    // they are found by callee and copied with their new site, none runs.
    assert_eq!(session.edit("    y = b5(y, 64)\n", "    y = b5(y, 64)\n    y = relu(y)\n"), counts(0, 20));
    // A new call of a block that was called once: that call runs; the later calls are in
    // the next checkpoint segment now, copied with their new segment.
    assert_eq!(session.edit("    y = b9(y, 64)\n", "    y = b9(y, 64)\n    y = b9(y, 64)\n"), counts(1, 20));
    // And both lines removed again.
    assert_eq!(session.edit("    y = relu(y)\n", ""), counts(0, 21));
}

#[test]
fn repeated_calls_that_moved_keep_their_occurrences() {
    let text = "\
block layer(x) {
    return relu(linear(x, 64))
}

model m() {
    input x: f32[N, 64]
    y = x
    y = repeat 3 layer(y)
    return y
}

train fit { model m()  batch 8  optimizer sgd }
";
    let mut session = Session::new(text);
    assert_eq!(session.db.elaboration_cache().counts(), counts(3, 0));
    // The three calls of the `repeat` move (a line above them); then a second edit finds
    // them at their new site by occurrence, and the line's removal moves them back.
    assert_eq!(session.edit("    y = x\n", "    y = x\n    y = gelu(y)\n"), counts(0, 3));
    assert_eq!(session.edit("return y\n}", "return y * 2\n}"), counts(0, 3));
    assert_eq!(session.edit("    y = gelu(y)\n", ""), counts(0, 3));
}

#[test]
fn a_batch_edit_binds_the_models_symbolic_graph() {
    let mut session = Session::new(&chain(20));
    // Only the batch changed: the model is elaborated on its own (its 20 calls run, `N`
    // symbolic) and its graph bound to the new size; none of the scenario's calls runs.
    let resized = CallCounts { ran: 20, reused: 0, bound: 20 };
    assert_eq!(session.edit("batch 32", "batch 31"), resized);
    // Again: the model's graph is the same one.
    assert_eq!(session.edit("batch 31", "batch 7"), resized);
    // An edit inside a block then copies the bound calls: b0 runs again, the others are
    // copied. The model's own graph, which the scenario's was bound from, is elaborated again
    // too (salsa checks what a query read), the same way.
    let edited = session.edit("h = relu(linear(x, width))", "h = gelu(linear(x, width))");
    assert_eq!(edited, CallCounts { ran: 1 + 1, reused: 19 + 19, bound: 0 });
}

#[test]
fn a_large_graph_is_bound_on_several_threads_the_same() {
    // 4,500 nodes: bound in chunks on several threads where the machine has cores; the
    // graph equals a fresh one's (and, in debug builds, an elaboration's).
    let mut session = Session::new(&chain(1_500));
    assert_eq!(session.edit("batch 32", "batch 5").bound, 1_500);
}

#[test]
fn a_model_that_reads_how_the_run_goes_is_elaborated_at_its_new_size() {
    // The model's own graph is elaborated without checkpointing and outside autocast: a
    // scenario of a model that asks (`checkpointing()`, `autocast_dtype()`, `training()`) is
    // elaborated at its new size, not bound from it (the session checks each graph against a
    // fresh one).
    for (question, settings) in [
        ("checkpointing()", "checkpoint"),
        ("autocast_dtype() != \"\"", "precision amp_bf16"),
        ("not training()", "eval"),
    ] {
        let text = format!(
            "block head(x) {{\n    if {question} {{\n        return relu(x)\n    }}\n    return gelu(x)\n}}\n\n\
             model m() {{\n    input x: f32[N, 64]\n    return head(linear(x, 64))\n}}\n\n\
             train fit {{ model m()  batch 32  optimizer sgd  {settings} }}\n"
        );
        let mut session = Session::new(&text);
        assert_eq!(session.edit("batch 32", "batch 8").bound, 0, "{question}");
    }
}

#[test]
fn sizes_the_symbolic_graph_cannot_decide_are_elaborated() {
    // A condition on the batch cannot be decided with `N` unbound: the model's graph holds
    // neither branch, and the scenario is elaborated at its new size.
    let text = "\
block head(x) {
    if x.shape[0] > 16 {
        return relu(x)
    }
    return gelu(x)
}

model m() {
    input x: f32[N, 64]
    return head(linear(x, 64))
}

train fit { model m()  batch 32  optimizer sgd }
";
    let mut session = Session::new(text);
    assert_eq!(session.edit("batch 32", "batch 8").bound, 0);
    assert_eq!(session.edit("batch 8", "batch 64").bound, 0);
}

#[test]
fn sizes_an_op_rejects_are_elaborated_and_reported() {
    // With `N` and `B` unbound, `x + y` assumes they are equal (`[N, 64]`). Bound to sizes
    // where they are, the graph is bound (its one call counted); where the rule fails, or
    // broadcasts otherwise (`N` = 1 against `B` = 3 gives `[3, 64]`, not `[1, 64]`), the
    // model is elaborated at those sizes, and an error reported.
    let text = "\
block add(x, y) {
    return x + y
}

model m() {
    input x: f32[N, 64]
    input y: f32[B, 64]
    return add(x, y)
}

train fit { model m()  batch 4  dim B = 1  optimizer sgd }
";
    let diagnostics = |session: &Session| {
        let graph = scenario_graph(&session.db, session.scenario()).clone().expect("a graph");
        graph.diagnostics.len()
    };
    let mut session = Session::new(text);
    assert_eq!(session.edit("dim B = 1", "dim B = 4").bound, 1);
    assert_eq!(session.edit("dim B = 4", "dim B = 3").bound, 0);
    assert_eq!(diagnostics(&session), 1);
    assert_eq!(session.edit("batch 4", "batch 1").bound, 0);
    assert_eq!(diagnostics(&session), 0);
}

#[test]
fn a_call_inside_a_changed_block_is_copied_when_unchanged() {
    let text = "\
block inner(x, width: int) {
    return relu(linear(x, width))
}

block other(x) {
    return layernorm(x)
}

block outer(x, width: int) {
    h = inner(x, width)
    h = other(h)
    return x + dropout(h, p=0.1)
}

model m() {
    input x: f32[N, 64]
    y = repeat 3 outer(x, 64)
    return y
}

train fit { model m()  batch 8  optimizer sgd }
";
    let mut session = Session::new(text);
    assert_eq!(session.db.elaboration_cache().counts(), counts(9, 0));
    // `inner` changes: each `outer` runs again (it read `inner`) with its `inner`; each
    // `other` is copied.
    assert_eq!(session.edit("return relu(linear(x, width))", "return gelu(linear(x, width))"), counts(6, 3));
    // `outer` changes: the three `outer` run again; `inner` and `other` are copied.
    assert_eq!(session.edit("dropout(h, p=0.1)", "dropout(h, p=0.2)"), counts(3, 6));
}

/// `pick` returns its first or its second argument: an edit of the flag (the same nodes, so
/// the same call sites) changes which tensor the next call gets, not its type.
const PICK: &str = "\
block pick(a, b, first: bool) {
    if first {
        return a
    }
    return b
}

block inner(x) {
    x = relu(x)
    return x
}

block pair(a, b) {
    return a + b
}
";

#[test]
fn arguments_held_differently_are_not_copied() {
    // `inner` reassigns its parameter: a tensor nobody else holds (a temporary) is released
    // inside the call, one held by a variable is not.
    let text = format!(
        "{PICK}
model m() {{
    input x: f32[N, 64]
    s = gelu(x)
    y = inner(pick(s, relu(x), true))
    return y
}}

train fit {{ model m()  batch 8  optimizer sgd }}
"
    );
    let mut session = Session::new(&text);
    // `pick` runs again (its argument changed); `inner` gets a temporary instead of `s`.
    assert_eq!(session.edit("relu(x), true)", "relu(x), false)"), counts(2, 0));
    // An edit after the calls: both copied, `inner` releasing its argument as before.
    assert_eq!(session.edit("return y", "return y * 2"), counts(0, 2));
}

#[test]
fn a_tensor_given_twice_is_not_copied_as_two() {
    let text = format!(
        "{PICK}
model m() {{
    input x: f32[N, 64]
    s = gelu(x)
    t = relu(x)
    y = pair(pick(s, t, true), s)
    return y
}}

train fit {{ model m()  batch 8  optimizer sgd }}
"
    );
    let mut session = Session::new(&text);
    // `pair(s, s)` becomes `pair(t, s)`: same types, not the same tensors twice.
    assert_eq!(session.edit("t, true)", "t, false)"), counts(2, 0));
    assert_eq!(session.edit("t, false)", "t, true)"), counts(2, 0));
}

#[test]
fn a_call_in_another_checkpoint_segment_is_not_copied() {
    // Each outermost block call is a checkpoint segment; an `if` that adds one before `inner`
    // moves `inner` to the next segment (its nodes say which).
    let text = format!(
        "{PICK}
model m(extra: bool = true) {{
    input x: f32[N, 64]
    y = relu(x)
    if extra {{
        y = pair(y, y)
    }}
    y = inner(y)
    return y
}}

train fit {{ model m()  batch 8  optimizer sgd  checkpoint }}
"
    );
    let mut session = Session::new(&text);
    assert_eq!(session.edit("extra: bool = true", "extra: bool = false"), counts(1, 0));
    assert_eq!(session.edit("return y", "return y * 2"), counts(0, 1));
}

#[test]
fn calls_that_tie_weights_or_report_errors_are_run_again() {
    let text = "\
block tied(x) {
    return linear(x, 64, share=\"w\")
}

block plain(x) {
    return linear(x, 64)
}

block wrong(x) {
    return x + linear(x, 32)
}

model m() {
    input x: f32[N, 64]
    y = tied(x)
    y = tied(y)
    y = plain(y)
    w = wrong(y)
    return relu(y)
}

train fit { model m()  batch 8  optimizer sgd }
";
    let mut session = Session::new(text);
    // An edit of the model's last line: `plain` is copied; the tied calls and the one with
    // a shape error run again.
    assert_eq!(session.edit("return relu(y)", "return gelu(y)"), counts(3, 1));
}

#[test]
fn removing_a_file_drops_its_elaborations() {
    let mut session = Session::new(&chain(2));
    assert_eq!(session.db.elaboration_cache().len(), 1);
    session.db.remove_file(&FileName::new("main.net"));
    assert!(session.db.elaboration_cache().is_empty());
}

#[test]
fn a_changed_op_declaration_runs_the_calls_that_use_it() {
    // The file declares its own `dropout` (shadowing the standard one): a call that uses it
    // read its declaration (the default of `p`).
    let text = "\
op dropout(x: tensor, p: float = 0.5, inplace: bool = false) -> tensor

block uses(x) {
    return dropout(linear(x, 64))
}

block ignores(x) {
    return linear(x, 64)
}

model m() {
    input x: f32[N, 64]
    y = uses(x)
    y = ignores(y)
    return y
}

train fit { model m()  batch 8  optimizer sgd }
";
    let mut session = Session::new(text);
    assert_eq!(session.edit("p: float = 0.5", "p: float = 0.25"), counts(1, 1));
}

#[test]
fn at_most_capacity_elaborations_are_kept() {
    // Each scenario's model is one elaboration kept; inserting items above makes new keys.
    let mut text = String::from(
        "block b(x) {\n    return relu(x)\n}\n\nmodel m() {\n    input x: f32[N, 8]\n    return b(x)\n}\n\n",
    );
    let count = ElaborationCache::CAPACITY + 6;
    for s in 0..count {
        text.push_str(&format!("infer s{s} {{ model m()  batch {} }}\n", s + 1));
    }
    let mut db = Database::new();
    let file = db.set_file(FileName::new("main.net"), text);
    for scenario in scenarios(&db, file) {
        let _ = scenario_graph(&db, scenario);
    }
    assert_eq!(db.elaboration_cache().len(), ElaborationCache::CAPACITY);
    // The most recent ones are kept: after an edit of the model (not of the call), the last
    // scenario copies its call of `b`; the first scenario's elaboration was dropped, so it
    // runs its call again.
    let text = file.text(&db).replace("return b(x)", "return b(x) * 2");
    db.set_file(FileName::new("main.net"), text);
    let _ = scenario_graph(&db, scenarios(&db, file)[count - 1]);
    assert_eq!(db.elaboration_cache().counts().reused, 1);
    let _ = scenario_graph(&db, scenarios(&db, file)[0]);
    assert_eq!(db.elaboration_cache().counts().reused, 1);
    assert_eq!(db.elaboration_cache().len(), ElaborationCache::CAPACITY);
}

/// Edits a model source can get without breaking its syntax: a number changed, an
/// activation swapped, a line of ops doubled.
#[derive(Debug, Clone)]
enum Edit {
    /// The `n`th integer literal (counting from the first) becomes `value`.
    Number { nth: proptest::sample::Index, value: u8 },
    /// The `n`th `relu(` becomes `gelu(`, or back.
    Activation { nth: proptest::sample::Index },
    /// The `n`th line that assigns becomes two (the assignment, then the same again).
    Repeat { nth: proptest::sample::Index },
    /// The `n`th scenario's batch size becomes `value` (its graph is then the model's bound
    /// to the new size, when the model's graph allows).
    Batch { nth: proptest::sample::Index, value: u8 },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<proptest::sample::Index>(), 1u8..9).prop_map(|(nth, value)| Edit::Number { nth, value }),
        any::<proptest::sample::Index>().prop_map(|nth| Edit::Activation { nth }),
        any::<proptest::sample::Index>().prop_map(|nth| Edit::Repeat { nth }),
        (any::<proptest::sample::Index>(), 1u8..9).prop_map(|(nth, value)| Edit::Batch { nth, value }),
    ]
}

/// `text` with `edit` applied (unchanged when there is nothing to edit).
fn apply(text: &str, edit: &Edit) -> String {
    match edit {
        Edit::Number { nth, value } => {
            // Integers inside the bodies (after `(` or `, `), not in names.
            let spots: Vec<(usize, usize)> = text
                .match_indices(|c: char| c.is_ascii_digit())
                .filter(|(i, _)| text[..*i].ends_with(", ") || text[..*i].ends_with('('))
                .map(|(i, _)| (i, text[i..].find(|c: char| !c.is_ascii_digit()).map_or(text.len(), |n| i + n)))
                .collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let (start, end) = spots[nth.index(spots.len())];
            format!("{}{value}{}", &text[..start], &text[end..])
        }
        Edit::Activation { nth } => {
            let spots: Vec<usize> =
                text.match_indices("relu(").chain(text.match_indices("gelu(")).map(|(i, _)| i).collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let at = spots[nth.index(spots.len())];
            let swapped = if text[at..].starts_with("relu(") { "gelu(" } else { "relu(" };
            format!("{}{swapped}{}", &text[..at], &text[at + 5..])
        }
        Edit::Batch { nth, value } => {
            let spots: Vec<(usize, usize)> = text
                .match_indices("batch ")
                .map(|(i, b)| i + b.len())
                .map(|i| (i, text[i..].find(|c: char| !c.is_ascii_digit()).map_or(text.len(), |n| i + n)))
                .filter(|(start, end)| end > start)
                .collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let (start, end) = spots[nth.index(spots.len())];
            format!("{}{value}{}", &text[..start], &text[end..])
        }
        Edit::Repeat { nth } => {
            let lines: Vec<&str> = text.lines().collect();
            let spots: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_start().starts_with("x = ")).collect();
            if spots.is_empty() {
                return text.to_string();
            }
            let at = spots[nth.index(spots.len())];
            let mut out: Vec<&str> = lines[..=at].to_vec();
            out.extend(&lines[at..]);
            out.join("\n") + "\n"
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// After any sequence of edits of a zoo model, the scenarios' graphs (made reusing the
    /// calls of the previous ones) equal a fresh database's.
    #[test]
    fn graphs_after_edits_of_zoo_models_equal_fresh_ones(
        module in prop::sample::select(vec!["std.models.resnet", "std.models.gpt2", "std.models.vit", "std.models.mobilenet"]),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let source = netc::db::STDLIB_SOURCES.iter().find(|(m, _)| *m == module).expect("a zoo module").1;
        let mut db = Database::new();
        let name = FileName::new("zoo.net");
        let file = db.set_file(name.clone(), source.to_string());
        // The first two scenarios of the file.
        for scenario in scenarios(&db, file).into_iter().take(2) {
            let _ = scenario_graph(&db, scenario);
        }
        let mut text = source.to_string();
        for edit in &edits {
            text = apply(&text, edit);
            db.set_file(name.clone(), text.clone());
            let mut fresh = Database::new();
            let fresh_file = fresh.set_file(name.clone(), text.clone());
            for (scenario, fresh_scenario) in scenarios(&db, file).into_iter().zip(scenarios(&fresh, fresh_file)).take(2) {
                let graph = scenario_graph(&db, scenario).clone();
                let expected = scenario_graph(&fresh, fresh_scenario).clone();
                prop_assert_eq!(graph.as_deref(), expected.as_deref(), "after {:?}", edit);
            }
        }
    }
}

#[test]
fn replaced_elaborations_are_dropped() {
    // The cache lets go of a replaced elaboration one elaboration late and frees it on a
    // background thread: the old graph must be freed, not kept.
    let mut session = Session::new(&chain(4));
    let first = std::sync::Arc::downgrade(scenario_graph(&session.db, session.scenario()).as_ref().expect("a graph"));
    session.edit("h = relu(linear(x, width))", "h = gelu(linear(x, width))");
    session.edit("h = gelu(linear(x, width))", "h = relu(linear(x, width))");
    session.edit("h = relu(linear(x, width))", "h = gelu(linear(x, width))");
    let freed = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        first.upgrade().is_none()
    });
    assert!(freed, "the first graph is still held after three elaborations");
}

#[test]
fn a_file_removed_and_made_again_is_not_read_from_before() {
    // `main.net` calls a block of `lib.net`; `lib.net` is deleted and created again with
    // another body (a new file of the same name): the call must not be copied from before.
    let mut db = Database::new();
    db.set_file(FileName::new("lib.net"), "block layer(x) {\n    return relu(x)\n}\n".to_string());
    // The call of `layer` is inside a block of `main.net`, which did not change.
    let main = "use \"lib.net\"\n\nblock wrap(x) {\n    return layer(x)\n}\n\nmodel m() {\n    input x: f32[N, 8]\n    return wrap(x)\n}\n\ninfer run { model m()  batch 2 }\n";
    let file = db.set_file(FileName::new("main.net"), main.to_string());
    let loc = ItemLoc::new(&db, file, 3);
    let before = scenario_graph(&db, loc).clone().expect("a graph");
    assert_eq!(before.nodes[0].op.name(), "relu");
    db.remove_file(&FileName::new("lib.net"));
    db.set_file(FileName::new("lib.net"), "block layer(x) {\n    return gelu(x)\n}\n".to_string());
    let after = scenario_graph(&db, ItemLoc::new(&db, file, 3)).clone().expect("a graph");
    assert_eq!(after.nodes[0].op.name(), "gelu");
}

#[test]
fn calls_marked_for_checkpointing_keep_their_segments_when_copied() {
    // Marked calls in the model's body and inside a block: an edit that moves them copies
    // them with their segments renumbered; an edit inside one runs it alone. The graph (and
    // so each node's segment) is a fresh elaboration's after every edit.
    let text = "\
block layer(x) {
    return relu(linear(x, 64))
}

block stack(x, n: int) {
    y = x
    for _ in 0..n {
        y = checkpoint(layer(y))
    }
    return y
}

model m() {
    input x: f32[N, 64]
    y = checkpoint(layer(x))
    y = stack(y, 3)
    y = checkpoint(layer(y))
    return y
}

train fit { model m()  batch 8  optimizer sgd  checkpoint }
";
    let mut session = Session::new(text);
    assert_eq!(session.db.elaboration_cache().counts(), counts(6, 0));
    // A line above moves every call of the body: copied, none runs.
    assert_eq!(
        session.edit("    y = checkpoint(layer(x))\n", "    y = gelu(x)\n    y = checkpoint(layer(y))\n"),
        counts(0, 6)
    );
    // A new marked call before the stack: the calls after it are copied into later segments.
    assert_eq!(
        session.edit("    y = stack(y, 3)\n", "    y = checkpoint(layer(y))\n    y = stack(y, 3)\n"),
        counts(1, 6)
    );
    // The stack's markers removed: it runs again (its segments are gone), the rest is copied.
    assert_eq!(session.edit("y = checkpoint(layer(y))\n    }", "y = layer(y)\n    }"), counts(4, 3));
    // And back: the last call is copied into the segment after the stack's three.
    assert_eq!(session.edit("y = layer(y)\n    }", "y = checkpoint(layer(y))\n    }"), counts(4, 3));
}
