//! Budget snapshots: what `netc snapshot` writes next to each model file (`model.net` ->
//! `model.netsnap`) and what `netc snapshot --check` compares, so that a memory regression
//! shows up in review like a failing test.
//!
//! A snapshot is text for people and diffs: per scenario the peak and where it happens, the
//! ledgers at the peak, the budget and margin, and per block the sums of its lines' figures.
//! Headline figures are exact bytes (a change of one byte is a change) with binary units to
//! read them by; the block table is in binary units, one decimal, and changes when what it
//! shows changes. `--check` fails exactly when `netc snapshot` would write something else;
//! [`compare`] then names every figure that moved and [`unified_diff`] shows the lines.
//!
//! Everything here is text in, text out; `cli.rs` reads and writes the files (only regular
//! files: a snapshot that is a symbolic link is refused). File names in a
//! snapshot are relative to the snapshot's directory, so it does not depend on where netc
//! runs from.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::db::SourceFile;
use crate::diagnostics::FileName;
use crate::elaborate::Db;
use crate::report::{BlockTotals, ScenarioReport, block_totals, scenarios};
use crate::units::{bytes_with, thousands};

/// The extension of snapshot files.
pub const EXTENSION: &str = "netsnap";

/// Whether `file` gets a snapshot: only `.net` files do, so that the name of a snapshot
/// names one source (`model.txt` and `model.net` would share `model.netsnap`) and is never
/// the source itself (`weird.netsnap`).
pub fn has_snapshot(file: &FileName) -> bool {
    std::path::Path::new(file.as_str()).extension().is_some_and(|e| e == "net")
}

/// Where the snapshot of `file` (a `.net` file, [`has_snapshot`]) lives: beside it, with the
/// extension `.netsnap`.
pub fn snapshot_path(file: &FileName) -> PathBuf {
    PathBuf::from(file.as_str()).with_extension(EXTENSION)
}

/// The directory part of a file name (`""` for the current directory).
fn directory(name: &str) -> &str {
    name.rfind('/').map_or("", |i| &name[..i])
}

/// `name` (relative to the current directory, as files are named) relative to `dir`.
fn relative_to(name: &str, dir: &str) -> String {
    // Both relative to the current directory, or both absolute; otherwise as it is.
    if dir.is_empty() || name.starts_with('<') || name.starts_with('/') != dir.starts_with('/') {
        return name.to_string();
    }
    let to: Vec<&str> = name.split('/').filter(|c| !c.is_empty()).collect();
    let from: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    // A directory given with `..` cannot be walked back lexically: keep the name.
    if from[common..].contains(&"..") {
        return name.to_string();
    }
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

/// `file:line` with the file relative to `dir`.
fn relative_line(line: &str, dir: &str) -> String {
    match line.rsplit_once(':') {
        Some((file, n)) => format!("{}:{n}", relative_to(file, dir)),
        None => line.to_string(),
    }
}

const KEY: usize = 14;
const VALUE: usize = 20;

fn figure(out: &mut String, indent: &str, key: &str, value: i128, note: &str) {
    let key_width = KEY + 2 - indent.len();
    let exact = format!("{} B", thousands(value));
    let units = format!("({})", readable(value));
    let line = format!("{indent}{key:<key_width$}  {exact:>VALUE$}  {units:<12}  {note}");
    let _ = writeln!(out, "{}", line.trim_end());
}

fn text(out: &mut String, key: &str, value: &str) {
    let _ = writeln!(out, "  {key:<KEY$}  {value}");
}

/// The snapshot of one scenario.
fn scenario_section(out: &mut String, s: &ScenarioReport, blocks: &[BlockTotals], dir: &str) {
    let _ = writeln!(out, "scenario {}", s.name);
    let batch = s.batch.map(|b| format!(", batch {b}")).unwrap_or_default();
    text(out, "run", &format!("{}, model {}{batch}, device {}", s.kind, s.model, s.device));
    figure(out, "  ", "peak", s.peak_bytes, "allocated");
    let step = if s.kind == "train" { format!("step {}, ", s.peak_step) } else { String::new() };
    let line = s.peak_line.as_deref().map(|l| format!(", {}", relative_line(l, dir))).unwrap_or_default();
    text(out, "peak at", &format!("{step}{}, `{}`{line}", s.peak_phase, s.peak_op));
    figure(out, "  ", "reserved", s.reserved_bytes, "allocations rounded by the allocator");
    let runtime = if s.runtime_bytes > 0 { "CUDA context and framework" } else { "" };
    figure(out, "  ", "runtime", s.runtime_bytes, runtime);
    figure(out, "  ", "total", s.total_bytes, "reserved + runtime");
    match s.budget_bytes {
        Some(budget) => {
            let needs = (s.total_bytes as f64 * s.margin) as i128;
            let share = 100.0 * needs as f64 / budget.max(1) as f64;
            let verdict = if needs <= budget { "fits" } else { "over" };
            let note = format!("total x margin = {}: {share:.0} % of the budget, {verdict}", readable(needs));
            figure(out, "  ", "budget", budget, &note);
        }
        None => text(out, "budget", "none"),
    }
    text(out, "margin", &format!("{}", s.margin));
    if s.host_bytes > 0 {
        let note = match s.host_budget_bytes {
            Some(b) => format!("dataloader; host budget {}", readable(b)),
            None => "dataloader".to_string(),
        };
        figure(out, "  ", "host", s.host_bytes, &note);
    }
    let _ = writeln!(out, "  at the peak");
    let l = &s.ledgers;
    for (key, value) in [
        ("weights", l.weights),
        ("buffers", l.buffers),
        ("gradients", l.gradients),
        ("optimizer", l.optimizer),
        ("activations", l.activations),
        ("workspace", l.workspace),
    ] {
        figure(out, "    ", key, value, "");
    }
    // A scenario with a cache: the cache's own ledger, at the peak and after the step.
    if s.kv_cache_bytes > 0 || l.kv_cache > 0 {
        figure(out, "    ", "kv cache", l.kv_cache, "");
        figure(out, "  ", "kv cache after the step", s.kv_cache_bytes, "");
    }
    // Per block, and the model's lines as a whole for reference.
    let titles = ["weights", "gradients", "optimizer", "activations", "workspace"];
    let all = |f: fn(&crate::report::LineReport) -> i128| s.lines.iter().map(f).sum::<i128>();
    let model_row = (
        format!("model {}", s.model),
        [
            all(|l| l.weight_bytes + l.buffer_bytes),
            all(|l| l.gradient_bytes),
            all(|l| l.optimizer_bytes),
            all(|l| l.activation_bytes),
            s.lines.iter().map(|l| l.workspace_bytes).max().unwrap_or(0),
        ],
    );
    let rows: Vec<(String, [i128; 5])> = std::iter::once(model_row)
        .chain(blocks.iter().map(|b| {
            (
                b.name.clone(),
                [
                    b.weight_bytes + b.buffer_bytes,
                    b.gradient_bytes,
                    b.optimizer_bytes,
                    b.activation_bytes,
                    b.workspace_bytes,
                ],
            )
        }))
        .collect();
    let name_width = rows.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max(KEY - 2);
    let cells: Vec<[String; 5]> = rows.iter().map(|(_, v)| v.map(readable)).collect();
    let widths: Vec<usize> =
        (0..5).map(|i| cells.iter().map(|c| c[i].len()).chain([titles[i].len()]).max().unwrap_or(0)).collect();
    let mut header = format!("  {:<w$}", "blocks", w = name_width + 2);
    for (t, w) in titles.iter().zip(&widths) {
        let _ = write!(header, "  {t:>w$}");
    }
    let _ = writeln!(out, "{header}");
    for ((name, _), cells) in rows.iter().zip(&cells) {
        let mut row = format!("    {name:<name_width$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(row, "  {c:>w$}");
        }
        let _ = writeln!(out, "{row}");
    }
}

/// A file's snapshot, as [`render_with`] makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The text.
    pub text: String,
    /// How many scenarios the file declares.
    pub scenarios: usize,
    /// The scenarios that could not be simulated (their sections say why), by name.
    pub not_simulated: Vec<String>,
}

/// The snapshot of a file: every scenario it declares, in source order. `None` when it
/// declares none (or none can be elaborated).
pub fn render(db: &dyn Db, file: SourceFile) -> Option<String> {
    render_with(db, file, &|_, _| Vec::new()).filter(|s| s.not_simulated.is_empty()).map(|s| s.text)
}

/// The snapshot of a file, with `stopping` the errors that stop each of its scenarios (file,
/// item index): a scenario with any, or that cannot be simulated for another reason, gets a
/// section that says `not simulated` and lists them, in its place. `None` when the file
/// declares no scenario.
pub fn render_with(
    db: &dyn Db,
    file: SourceFile,
    stopping: &dyn Fn(SourceFile, u32) -> Vec<crate::report::StoppingError>,
) -> Option<Snapshot> {
    let name = file.name(db).clone();
    let dir = directory(name.as_str());
    let own = relative_to(name.as_str(), dir);
    let mut out = format!(
        "# netc budget snapshot of {own}: `netc snapshot` writes it, `netc snapshot --check` fails when it\n\
         # would write something else. Bytes are exact; binary units (1 MiB = 1,048,576 B) to read by.\n\
         # Blocks: the sums of the per-line figures of the lines that ran inside each block, over the\n\
         # run; a line counts in every block it ran inside (a block's callers include it).\n"
    );
    let mut count = 0;
    let mut not_simulated = Vec::new();
    for (f, index) in scenarios(db, &[file], None) {
        count += 1;
        out.push('\n');
        let errors = stopping(f, index);
        match errors.is_empty().then(|| block_totals(db, f, index)).flatten() {
            Some((report, blocks)) => scenario_section(&mut out, &report, &blocks, dir),
            None => {
                let Some(crate::syntax::Item::Scenario(s)) =
                    crate::semantics::files::syntax_tree(db, f).get(index as usize)
                else {
                    continue;
                };
                let _ = writeln!(out, "scenario {}", s.name.text);
                let why = match errors.len() {
                    0 => "it cannot be simulated".to_string(),
                    1 => "1 error stops its simulation".to_string(),
                    n => format!("{n} errors stop its simulation"),
                };
                text(&mut out, NOT_SIMULATED, &why);
                for e in &errors {
                    let at = relative_to(e.file.as_str(), dir);
                    let _ = writeln!(out, "    {at}:{}:{}: error[{}]: {}", e.line, e.column, e.code, e.message);
                }
                not_simulated.push(s.name.text.to_string());
            }
        }
    }
    (count > 0).then_some(Snapshot { text: out, scenarios: count, not_simulated })
}

/// The key of the line that says a scenario was not simulated.
const NOT_SIMULATED: &str = "not simulated";

/// A figure read back from a snapshot.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// Exact bytes.
    Bytes(i128),
    /// Bytes in a binary unit, as shown, and about how many bytes that is.
    Units(String, f64),
    /// Anything else.
    Text(String),
}

/// `12.3 MiB` back to bytes.
fn parse_units(text: &str) -> Option<f64> {
    let (number, unit) = text.split_once(' ')?;
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0f64.powi(2),
        "GiB" => 1024.0f64.powi(3),
        "TiB" => 1024.0f64.powi(4),
        "PiB" => 1024.0f64.powi(5),
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

/// `1,234 B` back to bytes.
fn parse_exact(text: &str) -> Option<i128> {
    text.strip_suffix(" B")?.replace(',', "").parse().ok()
}

/// Splits a line into its columns: runs of two spaces or more separate them.
fn columns(line: &str) -> Vec<String> {
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
}

/// The figures of a snapshot, per scenario, in order.
type Figures = Vec<(String, Vec<(String, Value)>)>;

/// Reads the figures of a snapshot, leniently: lines it does not understand are skipped.
fn parse(text: &str) -> Figures {
    let mut figures: Figures = Vec::new();
    #[derive(PartialEq)]
    enum Section {
        Top,
        Peak,
        Blocks(Vec<String>),
    }
    let mut section = Section::Top;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("scenario ") {
            figures.push((name.trim().to_string(), Vec::new()));
            section = Section::Top;
            continue;
        }
        let Some((_, list)) = figures.last_mut() else { continue };
        let indent = line.len() - line.trim_start().len();
        let cols = columns(line);
        let Some(first) = cols.first() else { continue };
        if indent <= 2 {
            if first == "at the peak" {
                section = Section::Peak;
            } else if first == "blocks" {
                section = Section::Blocks(cols[1..].to_vec());
            } else {
                section = Section::Top;
                let value = match cols.get(1).and_then(|v| parse_exact(v)) {
                    Some(b) => Value::Bytes(b),
                    None => Value::Text(cols[1..].join("  ")),
                };
                list.push((first.clone(), value));
            }
            continue;
        }
        match &section {
            Section::Peak => {
                let value = match cols.get(1).and_then(|v| parse_exact(v)) {
                    Some(b) => Value::Bytes(b),
                    None => Value::Text(cols[1..].join("  ")),
                };
                list.push((format!("{first} at the peak"), value));
            }
            Section::Blocks(titles) => {
                for (title, cell) in titles.iter().zip(&cols[1..]) {
                    let value = match parse_units(cell) {
                        Some(b) => Value::Units(cell.clone(), b),
                        None => Value::Text(cell.clone()),
                    };
                    list.push((format!("{title} of {first}"), value));
                }
            }
            Section::Top => {}
        }
    }
    figures
}

/// A change `old -> new`, with the difference.
fn change(old: &Value, new: &Value) -> String {
    let moved = |a: f64, b: f64, shown_a: String, shown_b: String| {
        let delta = b - a;
        let sign = if delta >= 0.0 { "+" } else { "-" };
        let percent = if a != 0.0 { format!(", {sign}{:.1} %", (delta / a * 100.0).abs()) } else { String::new() };
        format!("{shown_a} -> {shown_b} ({sign}{}{percent})", readable(delta.abs().round() as i128))
    };
    match (old, new) {
        (Value::Bytes(a), Value::Bytes(b)) => {
            // As read in the file, or with more decimals if that tells them apart, else exact.
            let shown = [(readable(*a), readable(*b)), (bytes_with(*a, 3), bytes_with(*b, 3))]
                .into_iter()
                .find(|(x, y)| x != y)
                .unwrap_or_else(|| (format!("{} B", thousands(*a)), format!("{} B", thousands(*b))));
            moved(*a as f64, *b as f64, shown.0, shown.1)
        }
        (Value::Units(sa, a), Value::Units(sb, b)) => moved(*a, *b, sa.clone(), sb.clone()),
        (Value::Text(a), Value::Text(b)) => {
            // Lists that differ in some items: only those items.
            let (x, y): (Vec<&str>, Vec<&str>) = (a.split(", ").collect(), b.split(", ").collect());
            if x.len() == y.len() && x.len() > 1 {
                let (from, to): (Vec<&str>, Vec<&str>) = x.iter().zip(&y).filter(|(p, q)| p != q).unzip();
                format!("{} -> {}", from.join(", "), to.join(", "))
            } else {
                format!("{a} -> {b}")
            }
        }
        _ => format!("{} -> {}", shown(old), shown(new)),
    }
}

/// Bytes in a binary unit to about three significant digits: `1.47 GiB`, `931.9 MiB`.
pub fn readable(v: i128) -> String {
    let units = (v.unsigned_abs() as f64).log(1024.0).floor().clamp(0.0, 5.0) as i32;
    let value = v.unsigned_abs() as f64 / 1024f64.powi(units);
    bytes_with(v, if value < 9.995 { 2 } else { 1 })
}

fn shown(v: &Value) -> String {
    match v {
        Value::Bytes(b) => readable(*b),
        Value::Units(s, _) | Value::Text(s) => s.clone(),
    }
}

/// Every figure that differs between the stored snapshot `old` and the one netc would write
/// now, `new`, one line each: `resnet18.net scenario imagenet: peak 1.5 GiB -> 1.6 GiB (+...)`.
/// `file` names the model file in the messages.
pub fn compare(file: &str, old: &str, new: &str) -> Vec<String> {
    compare_within(file, old, new, 0.0).moved
}

/// What [`compare_within`] found: the changes beyond the tolerance, and the figures that
/// moved within it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Every change that fails the check, one line each, as [`compare`] names them: a figure
    /// that moved by more than the tolerance, and any other change (a text such as `peak
    /// at`, a scenario or figure new or gone).
    pub moved: Vec<String>,
    /// The figures (bytes) that moved by at most the tolerance, one line each.
    pub within: Vec<String>,
}

/// Whether the figure `old` moved to `new` by at most `tolerance` percent of `old`. Only
/// byte figures can; with a tolerance of 0 nothing that changed is within it.
fn within_tolerance(old: &Value, new: &Value, tolerance: f64) -> bool {
    let (a, b) = match (old, new) {
        (Value::Bytes(a), Value::Bytes(b)) => (*a as f64, *b as f64),
        (Value::Units(_, a), Value::Units(_, b)) => (*a, *b),
        _ => return false,
    };
    tolerance > 0.0 && (b - a).abs() <= a.abs() * tolerance / 100.0
}

/// [`compare`], with the figures that moved by at most `tolerance` percent of their stored
/// value apart ([`Comparison::within`]): `netc snapshot --check --tolerance PERCENT`.
pub fn compare_within(file: &str, old: &str, new: &str, tolerance: f64) -> Comparison {
    let (old, new) = (parse(old), parse(new));
    let mut messages = Vec::new();
    let mut within = Vec::new();
    let find = |figures: &Figures, name: &str| -> Option<usize> { figures.iter().position(|(n, _)| n == name) };
    let why = |figures: &[(String, Value)]| figures.iter().find(|(k, _)| k == NOT_SIMULATED).map(|(_, v)| shown(v));
    for (name, figures) in &new {
        let Some(i) = find(&old, name) else {
            messages.push(format!("{file} scenario {name}: new (not in the snapshot)"));
            continue;
        };
        // A scenario that cannot be simulated now has no figures to compare: one line says
        // why, rather than every figure as gone.
        if let Some(reason) = why(figures)
            && why(&old[i].1).is_none()
        {
            messages.push(format!("{file} scenario {name}: not simulated ({reason})"));
            continue;
        }
        let before: BTreeMap<&str, &Value> = old[i].1.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let now: BTreeMap<&str, &Value> = figures.iter().map(|(k, v)| (k.as_str(), v)).collect();
        for (key, value) in figures {
            match before.get(key.as_str()) {
                Some(b) if *b == value => {}
                Some(b) if within_tolerance(b, value, tolerance) => {
                    within.push(format!("{file} scenario {name}: {key} {}", change(b, value)));
                }
                Some(b) => messages.push(format!("{file} scenario {name}: {key} {}", change(b, value))),
                None => messages.push(format!("{file} scenario {name}: {key} {} (new)", shown(value))),
            }
        }
        for (key, value) in &old[i].1 {
            if !now.contains_key(key.as_str()) {
                messages.push(format!("{file} scenario {name}: {key} {} (gone)", shown(value)));
            }
        }
    }
    for (name, _) in &old {
        if find(&new, name).is_none() {
            messages.push(format!("{file} scenario {name}: gone (in the snapshot only)"));
        }
    }
    Comparison { moved: messages, within }
}

/// One step of an edit script.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Edit {
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// The shortest edit script from `a` to `b` (longest common subsequence; common prefix and
/// suffix first, then a table; past a few million cells the middle is replaced whole).
fn edits(a: &[&str], b: &[&str]) -> Vec<Edit> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut out: Vec<Edit> = (0..prefix).map(|i| Edit::Same(i, i)).collect();
    let (n, m) = (a_mid.len(), b_mid.len());
    if n * m > 4_000_000 {
        out.extend((0..n).map(|i| Edit::Delete(prefix + i)));
        out.extend((0..m).map(|j| Edit::Insert(prefix + j)));
    } else {
        // lcs[i][j]: the longest common subsequence of a_mid[i..] and b_mid[j..].
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[at(i, j)] = if a_mid[i] == b_mid[j] {
                    lcs[at(i + 1, j + 1)] + 1
                } else {
                    lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && a_mid[i] == b_mid[j] {
                out.push(Edit::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
                // Deletions first, as diff shows them.
                out.push(Edit::Delete(prefix + i));
                i += 1;
            } else {
                out.push(Edit::Insert(prefix + j));
                j += 1;
            }
        }
    }
    out.extend((0..suffix).map(|k| Edit::Same(a.len() - suffix + k, b.len() - suffix + k)));
    out
}

/// A unified diff of `old` and `new` (three lines of context; each hunk names the scenario
/// it is in), or an empty string when they are equal.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let script = edits(&a, &b);
    let changed: Vec<usize> =
        script.iter().enumerate().filter(|(_, e)| !matches!(e, Edit::Same(..))).map(|(i, _)| i).collect();
    if changed.is_empty() {
        return String::new();
    }
    const CONTEXT: usize = 3;
    // Runs of the script to show: each change with its context, overlapping runs merged.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &c in &changed {
        let (start, end) = (c.saturating_sub(CONTEXT), (c + CONTEXT + 1).min(script.len()));
        match runs.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => runs.push((start, end)),
        }
    }
    let mut out = format!("--- {old_label}\n+++ {new_label}\n");
    for (start, end) in runs {
        // Line numbers where the hunk starts, in each text (1-based).
        let (mut a_line, mut b_line) = (0, 0);
        for e in &script[..start] {
            match e {
                Edit::Same(..) => {
                    a_line += 1;
                    b_line += 1;
                }
                Edit::Delete(_) => a_line += 1,
                Edit::Insert(_) => b_line += 1,
            }
        }
        let hunk = &script[start..end];
        let a_len = hunk.iter().filter(|e| !matches!(e, Edit::Insert(_))).count();
        let b_len = hunk.iter().filter(|e| !matches!(e, Edit::Delete(_))).count();
        let scenario =
            a[..a_line.min(a.len())].iter().rev().find(|l| l.starts_with("scenario ")).copied().unwrap_or_default();
        let scenario = if scenario.is_empty() { String::new() } else { format!(" {scenario}") };
        let _ = writeln!(out, "@@ -{},{a_len} +{},{b_len} @@{scenario}", a_line + 1, b_line + 1);
        for e in hunk {
            let _ = match *e {
                Edit::Same(i, _) => writeln!(out, " {}", a[i]),
                Edit::Delete(i) => writeln!(out, "-{}", a[i]),
                Edit::Insert(j) => writeln!(out, "+{}", b[j]),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_relative_to_the_snapshot() {
        assert_eq!(relative_to("examples/blocks.net", "examples"), "blocks.net");
        assert_eq!(relative_to("lib/blocks.net", "models/cv"), "../../lib/blocks.net");
        assert_eq!(relative_to("<std>/blocks.net", "models"), "<std>/blocks.net");
        assert_eq!(relative_to("a.net", ""), "a.net");
        assert_eq!(relative_to("/tmp/x/lib/b.net", "/tmp/x/models"), "../lib/b.net");
        assert_eq!(relative_to("/tmp/x/b.net", "models"), "/tmp/x/b.net");
        assert_eq!(relative_line("examples/blocks.net:7", "examples"), "blocks.net:7");
    }

    #[test]
    fn a_diff_shows_the_changed_lines_with_context() {
        let old = "scenario a\n  x  1\n  y  2\n  z  3\n";
        let new = "scenario a\n  x  1\n  y  5\n  z  3\n";
        let diff = unified_diff(old, new, "old", "new");
        assert_eq!(diff, "--- old\n+++ new\n@@ -1,4 +1,4 @@\n scenario a\n   x  1\n-  y  2\n+  y  5\n   z  3\n");
        assert_eq!(unified_diff(old, old, "old", "new"), "");
    }

    #[test]
    fn moved_figures_are_named() {
        let old = "scenario fit\n  peak          1,000 B  (1000 B)\n  at the peak\n    weights     10 B  (10 B)\n";
        let new = "scenario fit\n  peak          1,100 B  (1.1 KiB)\n  at the peak\n    weights     10 B  (10 B)\n";
        assert_eq!(compare("m.net", old, new), ["m.net scenario fit: peak 1000 B -> 1.07 KiB (+100 B, +10.0 %)"]);
    }

    #[test]
    fn figures_within_the_tolerance_are_apart() {
        let old = "scenario fit\n  peak          1,000 B  (1000 B)\n  run  train, batch 1\n";
        let new = "scenario fit\n  peak          1,100 B  (1.1 KiB)\n  run  train, batch 1\n";
        let moved = "m.net scenario fit: peak 1000 B -> 1.07 KiB (+100 B, +10.0 %)";
        // 10 % moved: within 10 %, not within 9.9 % nor 0 (exact).
        assert_eq!(compare_within("m.net", old, new, 10.0), Comparison { moved: vec![], within: vec![moved.into()] });
        assert_eq!(compare_within("m.net", old, new, 9.9), Comparison { moved: vec![moved.into()], within: vec![] });
        assert_eq!(compare_within("m.net", old, new, 0.0).within, Vec::<String>::new());
        // A text is not a figure: no tolerance lets it change.
        let batch = new.replace("batch 1", "batch 2");
        assert_eq!(compare_within("m.net", old, &batch, 50.0).moved, ["m.net scenario fit: run batch 1 -> batch 2"]);
        // A figure stored as 0 moves by more than any percentage of it.
        let zero = old.replace("1,000 B  (1000 B)", "0 B  (0 B)");
        assert_eq!(compare_within("m.net", &zero, new, 1000.0).within, Vec::<String>::new());
    }
}
