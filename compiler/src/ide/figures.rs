//! The figures an editor shows beside the code: per statement line, the output shape and
//! bytes in the active scenario (inlay hints, hovers); per scenario, parameters and MACs
//! (code lenses).
//!
//! The per-line figures are the rows of [`crate::report::unlocated_lines`] (one per
//! statement, without positions, so an edit that only moves lines reuses them); only the
//! lines an editor shows are then found in the text. They are the figures of `netc report`,
//! but need only the start of the scenario's simulation ([`crate::costs::scenario_lines`]):
//! after an edit, inlay hints and a line's hover do not wait for the whole run. What shows
//! the peak (code lenses, a scenario's hover) reads the whole report,
//! [`crate::report::unlocated`].
//!
//! The *active scenario* of a file is the one its figures come from: the scenario the user
//! chose, if it runs any line of the file; otherwise the first scenario of the file that
//! elaborates; otherwise the first scenario of the workspace that runs a line of the file
//! (a file of blocks gets its figures from a model's scenario elsewhere).

use crate::costs::fit;
use std::collections::BTreeMap;

use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::{FileName, NodeRef, TextRange};
use crate::elaborate::{Db, scenario_graph};
use crate::graph::SiteMap;
use crate::report::{
    LineReport, ScenarioReport, bytes, count, line_of, line_starts, line_text, thousands, unlocated, unlocated_lines,
};
use crate::semantics::files::{ItemLoc, item_tree, parse_file, syntax_tree};
use crate::syntax::{Body, Item, ItemSpans, StmtKind};

/// Names a scenario: its file and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScenarioRef {
    /// The file that declares it.
    pub file: FileName,
    /// Its name.
    pub name: String,
}

/// Every scenario of the workspace: file, item index, name.
fn all_scenarios(db: &dyn Db) -> Vec<(SourceFile, u32, String)> {
    let mut out = Vec::new();
    for &file in db.workspace().files(db).values() {
        for (index, item) in syntax_tree(db, file).iter().enumerate() {
            if let Item::Scenario(s) = item {
                out.push((file, index as u32, s.name.text.to_string()));
            }
        }
    }
    out
}

/// The whole report of a scenario without positions (its peak, and its rows without line
/// numbers), or `None` when it does not elaborate.
fn report_of(db: &dyn Db, file: SourceFile, index: u32) -> Option<&ScenarioReport> {
    unlocated(db, ItemLoc::new(db, file, index)).as_ref()
}

/// The rows of a scenario without line numbers (not waiting for its peak), or `None` when it
/// does not elaborate.
fn rows_of(db: &dyn Db, file: SourceFile, index: u32) -> Option<&[LineReport]> {
    unlocated_lines(db, ItemLoc::new(db, file, index)).as_ref().map(|lines| lines.rows.as_slice())
}

fn covers(rows: &[LineReport], name: &FileName) -> bool {
    rows.iter().any(|l| &l.file == name)
}

/// The scenario whose figures `file` shows (see the module documentation).
pub fn active_scenario(db: &dyn Db, file: SourceFile, chosen: Option<&ScenarioRef>) -> Option<(SourceFile, u32)> {
    let name = file.name(db);
    let scenarios = all_scenarios(db);
    if let Some(chosen) = chosen
        && let Some((f, i, _)) = scenarios.iter().find(|(f, _, n)| f.name(db) == &chosen.file && *n == chosen.name)
        && rows_of(db, *f, *i).is_some_and(|r| covers(r, name))
    {
        return Some((*f, *i));
    }
    let own = scenarios.iter().find(|(f, i, _)| *f == file && rows_of(db, *f, *i).is_some());
    let elsewhere = || scenarios.iter().find(|(f, i, _)| rows_of(db, *f, *i).is_some_and(|r| covers(r, name)));
    own.or_else(elsewhere).map(|(f, i, _)| (*f, *i))
}

/// The figures of one source line in one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineFigures {
    /// The scenario.
    pub scenario: ScenarioRef,
    /// The report's row.
    pub row: LineReport,
}

impl LineFigures {
    /// The figures as Markdown, for a hover.
    pub fn markdown(&self) -> String {
        let r = &self.row;
        let mut out = format!("**In scenario `{}`** (`{}`)\n\n", self.scenario.name, self.scenario.file);
        out.push_str(&format!("- output: `{}`\n", r.shape));
        out.push_str(&format!("- output bytes: {}\n", bytes(r.output_bytes)));
        out.push_str(&format!("- params: {}\n", thousands(r.params)));
        out.push_str(&format!("- MACs: {}\n", count(r.macs)));
        out.push_str(&format!("- instances: {}\n", r.instances));
        // The line's memory, by ledger.
        out.push_str(&format!(
            "- activations (kept for backward, or made without autograd): {}\n",
            bytes(r.activation_bytes)
        ));
        let ledgers = [
            ("weights", r.weight_bytes),
            ("buffers", r.buffer_bytes),
            ("gradients", r.gradient_bytes),
            ("optimizer state", r.optimizer_bytes),
            ("workspace", r.workspace_bytes),
            ("kv cache after the step", r.kv_cache_bytes),
        ];
        for (name, value) in ledgers.iter().filter(|(_, v)| *v > 0) {
            out.push_str(&format!("- {name}: {}\n", bytes(*value)));
        }
        out.trim_end().to_string()
    }
}

/// What inlay hints show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintConfig {
    /// Whether to show hints at all.
    pub enabled: bool,
    /// The output shape.
    pub shape: bool,
    /// The line's memory: the bytes it keeps for backward (or makes, without autograd).
    pub bytes: bool,
    /// The line's parameters.
    pub params: bool,
    /// The line's MACs.
    pub macs: bool,
    /// How many times the line ran, when more than once.
    pub instances: bool,
    /// The longest label, in characters.
    pub max_length: usize,
}

impl Default for HintConfig {
    fn default() -> Self {
        HintConfig {
            enabled: true,
            shape: true,
            bytes: true,
            params: false,
            macs: false,
            instances: true,
            max_length: 30,
        }
    }
}

/// An inlay hint: a label shown after `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// Where it goes (the end of a statement).
    pub offset: u32,
    /// What it says (at most [`HintConfig::max_length`] characters).
    pub label: String,
    /// The full figures (Markdown).
    pub tooltip: String,
}

/// A shape written without spaces: `f32[64,3,224,224]`.
fn compact(shape: &str) -> String {
    shape.replace(", ", ",")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// The label of a row under `config`: the output shape and the chosen figures, at most
/// `max_length` characters. When too long, the shape loses its spaces, then the instance
/// count goes (the tooltip keeps it), then the shape is cut.
pub fn hint_label(row: &LineReport, config: &HintConfig) -> String {
    let mut figures: Vec<String> = Vec::new();
    // The line's memory cost, as the report's table shows it: what its ops keep for backward
    // (or make, without autograd), over every run of the line, and their workspace. A line
    // that only calls a block keeps nothing itself (the block's lines do): no figure.
    if config.bytes {
        if row.activation_bytes > 0 {
            figures.push(bytes(row.activation_bytes));
        }
        if row.workspace_bytes > 0 {
            figures.push(format!("{} workspace", bytes(row.workspace_bytes)));
        }
        if row.kv_cache_bytes > 0 {
            figures.push(format!("{} kv cache", bytes(row.kv_cache_bytes)));
        }
    }
    if config.params && row.params > 0 {
        figures.push(format!("{} params", count(row.params)));
    }
    if config.macs && row.macs > 0 {
        figures.push(format!("{} MACs", count(row.macs)));
    }
    let instances = (config.instances && row.instances > 1).then(|| format!("×{}", row.instances));
    let join = |shape: Option<&str>, with_instances: bool| -> String {
        let mut parts: Vec<&str> = Vec::new();
        if let Some(s) = shape.filter(|s| !s.is_empty()) {
            parts.push(s);
        }
        parts.extend(figures.iter().map(String::as_str));
        if with_instances && let Some(i) = &instances {
            parts.push(i);
        }
        parts.join(" · ")
    };
    let max = config.max_length;
    let fits = |s: &String| s.chars().count() <= max;
    let shape = config.shape.then_some(row.shape.as_str());
    let compacted = shape.map(compact);
    let candidates = [join(shape, true), join(compacted.as_deref(), true), join(compacted.as_deref(), false)];
    if let Some(label) = candidates.into_iter().find(fits) {
        return label;
    }
    // Cut the shape so that the figures still show.
    let tail = join(None, false);
    match compacted {
        Some(shape) if tail.chars().count() + 3 < max => {
            let room = max - tail.chars().count() - 3;
            if tail.is_empty() { truncate(&shape, max) } else { format!("{} · {tail}", truncate(&shape, room)) }
        }
        _ => truncate(&tail, max),
    }
}

/// The statements that can have figures (not `if`; a `for` and its body's statements) of the items of `file` that share a line
/// with `range` (every item when `None`): range and node, in source order.
fn statements(db: &dyn Db, file: SourceFile, range: Option<TextRange>) -> Vec<(TextRange, NodeRef)> {
    fn walk(item: u32, body: &Body, spans: &ItemSpans, out: &mut Vec<(TextRange, NodeRef)>) {
        for stmt in &body.stmts {
            match &stmt.kind {
                StmtKind::If { then_body, else_body, .. } => {
                    walk(item, then_body, spans, out);
                    if let Some(e) = else_body {
                        walk(item, e, spans, out);
                    }
                }
                StmtKind::For { body, .. } => {
                    // Its header may make tensors (`for t in split(x, 4)`), its body more.
                    out.push((spans.range(stmt.id), NodeRef { item, node: stmt.id.0 }));
                    walk(item, body, spans, out);
                }
                _ => out.push((spans.range(stmt.id), NodeRef { item, node: stmt.id.0 })),
            }
        }
    }
    let parse = parse_file(db, file);
    // Whole lines: a hint goes after the last statement that starts on its line, which may
    // belong to another item (`block a(x) { ... }; block b(x) { ... }`).
    let lines = range.map(|r| {
        let starts = line_starts(db, file);
        let first = line_of(starts, r.start) as usize;
        let last = line_of(starts, r.end) as usize;
        TextRange::new(starts[first - 1], starts.get(last).copied().unwrap_or(u32::MAX))
    });
    let mut out = Vec::new();
    for (index, (item, spans)) in parse.tree.iter().zip(&parse.spans).enumerate() {
        let whole = spans.whole();
        if lines.is_some_and(|l| whole.end < l.start || whole.start > l.end) {
            continue;
        }
        if let Item::Block(c) | Item::Model(c) = item {
            walk(index as u32, &c.body, spans, &mut out);
        }
    }
    out.sort_by_key(|(r, _)| (r.start, r.end));
    out
}

/// One line's figures in a scenario.
struct LineRow {
    /// Where its hint goes: the end of the last statement that starts on the line.
    offset: u32,
    /// The rows of the statements on the line, merged.
    row: LineReport,
}

/// The figures, in the active scenario of `file`, of the lines with statements in the items
/// that share a line with `range` (all when `None`) and whose hint offset `keep` keeps, by
/// 1-based line.
fn line_rows(
    db: &dyn Db,
    file: SourceFile,
    chosen: Option<&ScenarioRef>,
    range: Option<TextRange>,
    keep: impl Fn(u32) -> bool,
) -> Option<(ScenarioRef, BTreeMap<u32, LineRow>)> {
    let (sf, index) = active_scenario(db, file, chosen)?;
    let loc = ItemLoc::new(db, sf, index);
    let Some(Item::Scenario(s)) = item_tree(db, loc).as_deref() else { return None };
    let scenario_lines = unlocated_lines(db, loc).as_ref()?;
    let graph = scenario_graph(db, loc).as_ref()?;
    let scenario_rows = &scenario_lines.rows;
    let scenario = ScenarioRef { file: sf.name(db).clone(), name: s.name.text.to_string() };
    let name = file.name(db);
    let starts = line_starts(db, file);
    // Each line's hint offset and statements; only the lines asked for are kept (a range
    // inside a large model's body reaches all of that body's statements).
    let mut lines: BTreeMap<u32, (u32, Vec<NodeRef>)> = BTreeMap::new();
    for (stmt, at) in statements(db, file, range) {
        let (offset, stmts) = lines.entry(line_of(starts, stmt.start)).or_insert((stmt.end, Vec::new()));
        *offset = (*offset).max(stmt.end);
        stmts.push(at);
    }
    lines.retain(|_, (offset, _)| keep(*offset));
    let wanted: SiteMap<NodeRef, u32> =
        lines.iter().flat_map(|(&line, (_, stmts))| stmts.iter().map(move |&at| (at, line))).collect();
    // One pass over the scenario's rows finds those of the statements on screen, in the
    // report's order (the order lines first ran): no index of all its rows is built again
    // after each edit (a large model has thousands). Rows of other files are passed over
    // before hashing.
    let mut rows_of: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (row, site) in scenario_lines.sites.iter().enumerate() {
        if site.file == *name
            && let Some(&line) = wanted.get(&site.at)
        {
            rows_of.entry(line).or_default().push(row);
        }
    }
    let text = file.text(db);
    let mut out = BTreeMap::new();
    for (line, mut rows) in rows_of {
        let offset = lines[&line].0;
        rows.sort_unstable();
        let Some((&first, rest)) = rows.split_first() else { continue };
        let mut row = scenario_rows[first].clone();
        // Two statements on one line (`a = f(x); b = g(a)`): one hint with the last shape.
        row.shape = scenario_lines.shape(graph, *rest.last().unwrap_or(&first));
        for other in rest.iter().map(|&i| &scenario_rows[i]) {
            row.params += other.params;
            row.macs += other.macs;
            row.output_bytes += other.output_bytes;
            row.activation_bytes += other.activation_bytes;
            row.workspace_bytes = row.workspace_bytes.max(other.workspace_bytes);
            row.weight_bytes += other.weight_bytes;
            row.buffer_bytes += other.buffer_bytes;
            row.gradient_bytes += other.gradient_bytes;
            row.optimizer_bytes += other.optimizer_bytes;
            row.instances = row.instances.max(other.instances);
        }
        row.line = line;
        row.source = line_text(text, starts, line).to_string();
        out.insert(line, LineRow { offset, row });
    }
    Some((scenario, out))
}

/// Inlay hints for the statements of `file` that end inside `range` (all when `None`).
pub fn inlay_hints(
    db: &dyn Db,
    file: SourceFile,
    range: Option<TextRange>,
    chosen: Option<&ScenarioRef>,
    config: &HintConfig,
) -> Vec<InlayHint> {
    if !config.enabled {
        return Vec::new();
    }
    // A hint goes at the end of its line's statements, which must be inside the range.
    let inside = |offset: u32| range.is_none_or(|r| r.start <= offset && offset <= r.end);
    let Some((scenario, lines)) = line_rows(db, file, chosen, range, inside) else { return Vec::new() };
    let mut out = Vec::new();
    for LineRow { offset, row } in lines.into_values() {
        let figures = LineFigures { scenario: scenario.clone(), row };
        let label = hint_label(&figures.row, config);
        if label.is_empty() {
            continue;
        }
        out.push(InlayHint { offset, label, tooltip: figures.markdown() });
    }
    out
}

/// The figures of the statement at `offset` (the innermost one), with its range.
pub fn line_figures_at(
    db: &dyn Db,
    file: SourceFile,
    offset: u32,
    chosen: Option<&ScenarioRef>,
) -> Option<(TextRange, LineFigures)> {
    let here = Some(TextRange::empty(offset));
    let (stmt, _) = statements(db, file, here).into_iter().rfind(|(r, _)| r.start <= offset && offset <= r.end)?;
    let (scenario, mut lines) = line_rows(db, file, chosen, Some(stmt), |_| true)?;
    let line = line_of(line_starts(db, file), stmt.start);
    let LineRow { row, .. } = lines.remove(&line)?;
    Some((stmt, LineFigures { scenario, row }))
}

/// A code lens: a line of text above a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLens {
    /// The scenario's name.
    pub range: TextRange,
    /// What it says.
    pub title: String,
    /// The scenario (the lens's command makes it the active one).
    pub scenario: ScenarioRef,
    /// Whether it is the active scenario of this file.
    pub active: bool,
    /// The memory the scenario needs, when it elaborates (for clients that show it
    /// elsewhere, like a status bar, without reading the title).
    pub total_bytes: Option<i128>,
    /// Its budget, if it has one.
    pub budget_bytes: Option<i128>,
    /// The largest batch that fits its budget or its device (`netc fit`), when it has a
    /// limit: `Some(0)` when not even 1 does.
    pub fits_batch: Option<i128>,
}

/// One lens per scenario of `file`: its parameters and MACs, and whether it is active.
pub fn code_lenses(db: &dyn Db, file: SourceFile, chosen: Option<&ScenarioRef>) -> Vec<CodeLens> {
    let parse = parse_file(db, file);
    let active = active_scenario(db, file, chosen);
    let mut out = Vec::new();
    for (index, (item, spans)) in parse.tree.iter().zip(&parse.spans).enumerate() {
        let Item::Scenario(s) = item else { continue };
        let index = index as u32;
        let is_active = active == Some((file, index));
        let report = report_of(db, file, index);
        let figures = match report {
            Some(r) => format!("{} · {} · {} MACs{}", memory(r), params(r), count(r.macs), cache(r)),
            None => "no figures: the scenario does not elaborate".to_string(),
        };
        // The largest batch that fits (`netc fit`): a search of re-bound graphs, about 20
        // simulations (the whole zoo's 50 scenarios take a second in a release build).
        let fit = report.and_then(|_| fit::fit(db, file, index, fit::Axis::Batch).ok());
        let fits = fit.as_ref().map(|f| {
            let limit = match f.limit {
                fit::Limit::Device(device) => format!("on {}", device.name()),
                fit::Limit::Budget(_) => "within budget".to_string(),
            };
            match f.largest {
                Some(batch) => format!(" · fits up to batch {batch} {limit}"),
                None => format!(" · over even at batch 1 {limit}"),
            }
        });
        let figures = format!("{figures}{}", fits.unwrap_or_default());
        let title = if is_active { format!("● active · {figures}") } else { format!("○ set active · {figures}") };
        out.push(CodeLens {
            range: spans.range(s.name.id),
            title,
            scenario: ScenarioRef { file: file.name(db).clone(), name: s.name.text.to_string() },
            active: is_active,
            total_bytes: report.map(|r| r.total_bytes),
            budget_bytes: report.and_then(|r| r.budget_bytes),
            fits_batch: fit.map(|f| f.largest.unwrap_or(0)),
        });
    }
    out
}

/// The parameters, with the trainable ones when some are frozen: `8.04 G params (13.63 M
/// trainable)`.
fn params(r: &ScenarioReport) -> String {
    let mut kinds = Vec::new();
    if r.trainable_params < r.params {
        kinds.push(format!("{} trainable", count(r.trainable_params)));
    }
    if r.active_params < r.params {
        kinds.push(format!("{} active", count(r.active_params)));
    }
    match kinds.is_empty() {
        true => format!("{} params", count(r.params)),
        false => format!("{} params ({})", count(r.params), kinds.join(", ")),
    }
}

/// The key/value cache after the step, for a scenario with one: ` · kv cache 8.0 GiB`.
fn cache(r: &ScenarioReport) -> String {
    if r.kv_cache_bytes > 0 { format!(" · kv cache {}", bytes(r.kv_cache_bytes)) } else { String::new() }
}

/// The memory a scenario needs, against its budget: `2.0 GiB of 12.0 GiB budget (16 %)`.
fn memory(r: &ScenarioReport) -> String {
    match r.budget_bytes {
        Some(budget) if budget > 0 => format!(
            "{} of {} budget ({} %)",
            bytes(r.total_bytes),
            bytes(budget),
            r.total_bytes.saturating_mul(100) / budget
        ),
        _ => format!("{} total", bytes(r.total_bytes)),
    }
}

/// A scenario's totals, as Markdown, for a hover of its name.
pub fn scenario_summary(db: &dyn Db, scenario: &ScenarioRef) -> Option<String> {
    let file = lookup_file(db, &scenario.file)?;
    let index =
        syntax_tree(db, file).iter().position(|i| matches!(i, Item::Scenario(s) if s.name.text == scenario.name))?;
    let r = report_of(db, file, index as u32)?;
    let batch = r.batch.map(|b| format!(", batch {b}")).unwrap_or_default();
    let mut kinds = Vec::new();
    if r.trainable_params < r.params {
        kinds.push(format!(
            "{} trainable, {} frozen",
            thousands(r.trainable_params),
            thousands(r.params - r.trainable_params)
        ));
    }
    if r.active_params < r.params {
        kinds.push(format!("{} active per token", thousands(r.active_params)));
    }
    let frozen = if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join("; ")) };
    let cache = if r.kv_cache_bytes > 0 {
        format!("\n\nkv cache {} after the step ({} at the peak)", bytes(r.kv_cache_bytes), bytes(r.ledgers.kv_cache))
    } else {
        String::new()
    };
    Some(format!(
        "model `{}`{batch}: {} params{frozen}, {} MACs per forward pass\n\npeak {} ({} phase, step {}); needs {}{cache}",
        r.model,
        thousands(r.params),
        count(r.macs),
        bytes(r.peak_bytes),
        r.peak_phase,
        r.peak_step,
        memory(r),
    ))
}
