//! The `netc` command line, as a library function so that tests run it in-process: a thin
//! layer over the loader, the queries and the renderers.
//!
//! Exit codes: 0 when clean, 1 when any error-level diagnostic was reported, 2 for usage
//! errors and files that cannot be read (the other files are still checked).

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

use std::collections::BTreeMap;

use crate::db::Level;
use crate::diagnostics::Severity;
use crate::host::Database;
use crate::render;
use crate::safe_write::Links;
use crate::workspace::{check_paths_changed, check_paths_with};

/// netc: static memory analysis and linting of neural-network definitions (.net files).
#[derive(Debug, Parser)]
#[command(name = "netc", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check .net files and report problems (exit 1 on errors, 2 on unreadable files)
    Check(CheckArgs),
    /// Show each scenario per source line: output shape, parameters, MACs, output bytes
    Report(ReportArgs),
    /// Find the largest batch size (or sequence length) at which each scenario fits its budget,
    /// or its device when it has none
    Fit(FitArgs),
    /// Format .net files in place (`--check`: list the files that would change; `--diff`: show
    /// the changes; `-`: standard input to standard output)
    Fmt(FmtArgs),
    /// Write each model file's budget snapshot beside it (`--check`: fail if a figure moved)
    Snapshot(SnapshotArgs),
    /// Run the language server on standard input and output
    Lsp,
    /// Show the documentation of a diagnostic code or lint (`netc explain L0001`, `netc explain
    /// budget-exceeded`), offline
    Explain(ExplainArgs),
}

/// Settings changed for one run (what-if): the scenarios are run as if the files said so,
/// and the files are not written.
#[derive(Debug, Default, clap::Args)]
struct WhatIfArgs {
    /// What if: run the scenarios at this batch size (the files are not changed)
    #[arg(long, value_name = "N", help_heading = "What if")]
    batch: Option<u64>,
    /// What if: this sequence length
    #[arg(long, value_name = "S", help_heading = "What if")]
    seq: Option<u64>,
    /// What if: on this device preset (`h100_80gb`, `rtx4090`, `cpu`, ...)
    #[arg(long, value_name = "NAME", help_heading = "What if")]
    device: Option<String>,
    /// What if: in this precision (`fp32`, `fp16`, `bf16`, `amp`, `amp_bf16`, `int8`)
    #[arg(long, value_name = "POLICY", help_heading = "What if")]
    precision: Option<String>,
    /// What if: with this optimizer (`sgd`, `adam`, `adamw`, ...; training scenarios)
    #[arg(long, value_name = "NAME", help_heading = "What if")]
    optimizer: Option<String>,
    /// What if: with this budget (`24 GiB`, `512 MiB`)
    #[arg(long, value_name = "SIZE", help_heading = "What if")]
    budget: Option<String>,
    /// What if: any other setting, `KEY=VALUE` or a flag (`--set zero=3`, `--set checkpoint`);
    /// repeatable
    #[arg(long = "set", value_name = "KEY[=VALUE]", help_heading = "What if")]
    set: Vec<String>,
}

impl WhatIfArgs {
    /// The changes these arguments ask for, or why one is not a setting.
    fn changes(&self) -> Result<Vec<crate::whatif::Change>, String> {
        use crate::whatif::Change;
        let mut changes = Vec::new();
        let named = [
            ("batch", self.batch.map(|v| v.to_string())),
            ("seq", self.seq.map(|v| v.to_string())),
            ("device", self.device.clone()),
            ("precision", self.precision.clone()),
            ("optimizer", self.optimizer.clone()),
            ("budget", self.budget.clone()),
        ];
        for (key, value) in named {
            if let Some(value) = value {
                changes.push(Change::new(key, Some(&value)));
            }
        }
        for given in &self.set {
            // `KEY=VALUE` is the setting `KEY VALUE`, read as a scenario reads it.
            let written = match given.split_once('=') {
                Some((key, value)) => format!("{} {}", key.trim(), value.trim()),
                None => given.trim().to_string(),
            };
            match crate::whatif::parse_changes(&written) {
                Ok(parsed) if parsed.len() == 1 => changes.extend(parsed),
                Ok(_) => return Err(format!("`--set {given}`: one setting per `--set`")),
                Err(message) => return Err(format!("`--set {given}`: {message}")),
            }
        }
        Ok(changes)
    }
}

#[derive(Debug, clap::Args)]
struct ExplainArgs {
    /// A code (`E0304`, `L0001`) or a name (`invalid-setting-value`, `budget-exceeded`)
    code: String,
}

#[derive(Debug, clap::Args)]
struct FmtArgs {
    /// Files or directories (every .net file below a directory), or `-` for standard input;
    /// default: `.`
    paths: Vec<PathBuf>,
    /// Leave out of the directories walked what this gitignore-style pattern matches
    /// (`generated/`, `*.gen.net`); repeatable. Files named are always read
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Write nothing; list the files that are not formatted and exit 1 if there are any
    #[arg(long)]
    check: bool,
    /// Write nothing; show what would change as a unified diff and exit 1 if anything would
    #[arg(long)]
    diff: bool,
    /// When to use colour (for diagnostics)
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// Files or directories (every .net file below a directory); default: `.`
    paths: Vec<PathBuf>,
    /// Leave out of the directories walked what this gitignore-style pattern matches
    /// (`generated/`, `*.gen.net`); repeatable. Files named are always read
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Only the scenario with this name
    #[arg(long, value_name = "NAME")]
    scenario: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    format: ReportFormat,
    /// When to use colour (for diagnostics)
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Also write the memory timeline of the scenario as an SVG plot to FILE (one scenario:
    /// name it with --scenario when there are several)
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    what_if: WhatIfArgs,
}

#[derive(Debug, clap::Args)]
struct FitArgs {
    /// Files or directories (every .net file below a directory); default: `.`
    paths: Vec<PathBuf>,
    /// Leave out of the directories walked what this gitignore-style pattern matches
    /// (`generated/`, `*.gen.net`); repeatable. Files named are always read
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Only the scenario with this name
    #[arg(long, value_name = "NAME")]
    scenario: Option<String>,
    /// What to grow: the batch size or the sequence length
    #[arg(long, value_enum, default_value_t = FitAxis::Batch)]
    over: FitAxis,
    /// Output format
    #[arg(long, value_enum, default_value_t = FitFormat::Table)]
    format: FitFormat,
    #[command(flatten)]
    what_if: WhatIfArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FitAxis {
    /// The batch size (`batch`, the dimension `N`)
    Batch,
    /// The sequence length (`seq`, the dimension `S`)
    Seq,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FitFormat {
    /// The answer and the values tried, for a terminal
    Table,
    /// JSON: per scenario the limit, the largest value that fits and every value tried
    Json,
}

#[derive(Debug, clap::Args)]
struct SnapshotArgs {
    /// Files or directories (every .net file below a directory); default: `.`
    paths: Vec<PathBuf>,
    /// Leave out of the directories walked what this gitignore-style pattern matches
    /// (`generated/`, `*.gen.net`); repeatable. Files named are always read
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Write nothing; compare with the stored snapshots and exit 1 if a figure moved
    #[arg(long)]
    check: bool,
    /// With --check: a figure that moved by at most PERCENT of its stored value passes (and
    /// is named); default 0, exact
    #[arg(long, value_name = "PERCENT", default_value_t = 0.0, requires = "check", allow_negative_numbers = true,
        value_parser = parse_tolerance)]
    tolerance: f64,
    /// When to use colour (for diagnostics)
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

/// A `--tolerance`: a percentage, finite and not negative (`5`, `2.5`, `0`).
fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        Ok(_) => Err("the tolerance is a percentage of each stored figure: 0 or more, such as `5` or `2.5`".into()),
        Err(_) => Err("not a number; the tolerance is a percentage of each stored figure, such as `5` or `2.5`".into()),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ReportFormat {
    /// Aligned columns for a terminal
    Table,
    /// A Markdown table for a pull-request comment
    Markdown,
    /// JSON (schema in spec/report.md)
    Json,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Files or directories to check (every .net file below a directory); default: `.`
    paths: Vec<PathBuf>,
    /// Leave out of the directories walked what this gitignore-style pattern matches
    /// (`generated/`, `*.gen.net`); repeatable. Files named are always read
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// How to print diagnostics
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// When to use colour
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Do not report this lint or warning (a name such as `unused`, or a code); the command
    /// line wins over netc.toml
    #[arg(short = 'A', long = "allow", value_name = "NAME")]
    allow: Vec<String>,
    /// Report this lint or warning as a warning, overriding netc.toml
    #[arg(short = 'W', long = "warn", value_name = "NAME")]
    warn: Vec<String>,
    /// Report this lint or warning as an error (`--deny warnings`: every warning)
    #[arg(short = 'D', long = "deny", value_name = "NAME")]
    deny: Vec<String>,
    /// Apply the fixes that diagnostics offer to the files checked (not the files they import,
    /// never a file with syntax errors), say what was fixed, then report what is left
    #[arg(long)]
    fix: bool,
    #[command(flatten)]
    what_if: WhatIfArgs,
}

/// The level overrides given on the command line (they win over netc.toml, which the loader
/// reads), or an error naming an unknown lint or warning.
fn levels(args: &CheckArgs) -> Result<BTreeMap<String, Level>, String> {
    let mut levels = BTreeMap::new();
    let given = [(&args.allow, Level::Allow), (&args.warn, Level::Warn), (&args.deny, Level::Deny)];
    for (names, level) in given {
        for name in names {
            if !crate::config::is_configurable_name(name) {
                let names = crate::config::configurable_names();
                let mut message = format!("`{name}` is not a lint or warning that can be configured");
                if let Some(s) = crate::suggest::closest(name, names.iter().copied()) {
                    message.push_str(&format!("; did you mean `{s}`?"));
                } else {
                    message.push_str(&format!(" (the warnings are: {})", names.join(", ")));
                }
                return Err(message);
            }
            levels.insert(name.clone(), level);
        }
    }
    Ok(levels)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    /// Source snippets with labels (miette)
    Human,
    /// One line per diagnostic, like rustc's short format
    Short,
    /// A JSON document (schema in spec/diagnostics.md)
    Json,
    /// SARIF 2.1.0, for code scanning (GitHub and others)
    Sarif,
    /// GitHub Actions workflow commands: annotations in a workflow run
    Github,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Color {
    /// Colour when printing to a terminal and NO_COLOR is unset
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

fn use_color(choice: Color, terminal: bool) -> bool {
    match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// The `--exclude` patterns, or `None` after naming one that is not valid.
fn excludes(globs: &[String], err: &mut dyn Write) -> Option<crate::workspace::Excludes> {
    match crate::workspace::Excludes::new(globs) {
        Ok(excludes) => Some(excludes),
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            None
        }
    }
}

/// The paths given (`.` when none), or `None` after naming one that does not exist.
fn existing_paths(given: &[PathBuf], err: &mut dyn Write) -> Option<Vec<PathBuf>> {
    let paths = if given.is_empty() { vec![PathBuf::from(".")] } else { given.to_vec() };
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        let _ = writeln!(err, "error: no such file or directory: {}", missing.display());
        return None;
    }
    Some(paths)
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn check(args: CheckArgs, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    let Some(paths) = existing_paths(&args.paths, err) else { return 2 };
    let levels = match levels(&args) {
        Ok(levels) => levels,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return 2;
        }
    };
    let Some(excludes) = excludes(&args.exclude, err) else { return 2 };
    let changes = match args.what_if.changes() {
        Ok(changes) => changes,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return 2;
        }
    };
    if args.fix && !changes.is_empty() {
        let _ = writeln!(
            err,
            "error: `--fix` writes the files, and what-if settings are not in them: use one or the other"
        );
        return 2;
    }
    let mut db = Database::new();
    db.set_levels(levels.clone());
    let mut checked =
        check_paths_changed(&mut db, &paths, &excludes, |db, roots| crate::whatif::apply(db, roots, None, &changes));
    let mut fix_failed = false;
    if args.fix {
        // What was fixed goes beside machine-readable output, not into it.
        let machine = matches!(args.format, Format::Json | Format::Sarif | Format::Github);
        let mut fixed = Vec::new();
        fix_failed = !fix(&mut db, &checked.roots, &mut fixed, err);
        let shown: &mut dyn Write = if machine { &mut *err } else { &mut *out };
        for line in &fixed {
            if writeln!(shown, "{line}").is_err() {
                return 2;
            }
        }
        // What is left, read again from disk.
        db = Database::new();
        db.set_levels(levels);
        checked = check_paths_with(&mut db, &paths, &excludes);
    }
    let color = use_color(args.color, terminal);
    let errors = checked.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = checked.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    let output = match args.format {
        Format::Human | Format::Short => {
            let mut text = if matches!(args.format, Format::Human) {
                render::human(&checked.diagnostics, &checked.sources, color)
            } else {
                render::short(&checked.diagnostics, &checked.sources, color)
            };
            let files = plural(checked.files, "file");
            if errors == 0 && warnings == 0 {
                text.push_str(&format!("checked {files}: no problems found\n"));
            } else {
                text.push_str(&format!(
                    "checked {files}: {}, {}\n",
                    plural(errors, "error"),
                    plural(warnings, "warning")
                ));
            }
            text
        }
        Format::Json => {
            let mut text = render::json(&checked.diagnostics, &checked.sources, checked.files);
            text.push('\n');
            text
        }
        Format::Sarif => {
            let mut text = render::sarif(&checked.diagnostics, &checked.sources);
            text.push('\n');
            text
        }
        Format::Github => {
            // The annotations, then the summary as a plain line of the log.
            let mut text = render::github(&checked.diagnostics, &checked.sources);
            text.push_str(&format!(
                "checked {}: {}, {}\n",
                plural(checked.files, "file"),
                plural(errors, "error"),
                plural(warnings, "warning")
            ));
            text
        }
    };
    if out.write_all(output.as_bytes()).is_err() {
        return 2;
    }
    if checked.io_failed || fix_failed {
        2
    } else if errors > 0 {
        1
    } else {
        0
    }
}

/// How many times `--fix` applies the fixes of a file and checks it again: fixes that touch
/// each other (two settings added after the same one) are applied one per pass.
const FIX_PASSES: usize = 8;

/// `netc check --fix`: applies the fixes of the diagnostics of `roots` (loaded and checked in
/// `db`) to those files and writes the ones that changed, through `safe_write`. A file with
/// syntax errors is not touched (said on `err`). The fixes are applied in passes, each over
/// the text the last one left and checked again, until none applies, so that a second run
/// finds nothing to fix; a pass whose result does not parse is dropped. Each fixed file gets a
/// line in `fixed` (`fixed FILE: TITLE, TITLE`). Returns `false` when a file could not be
/// written (named on `err`; it is left as it was).
fn fix(db: &mut Database, roots: &[crate::db::SourceFile], fixed: &mut Vec<String>, err: &mut dyn Write) -> bool {
    let mut ok = true;
    for &file in roots {
        let name = file.name(db).clone();
        let original = file.text(db).clone();
        if crate::syntax::parse(&name, &original).errors.iter().any(|d| d.severity == Severity::Error) {
            let _ = writeln!(err, "error: `{name}` not fixed: it has syntax errors");
            continue;
        }
        let mut titles: Vec<String> = Vec::new();
        for _ in 0..FIX_PASSES {
            let diagnostics = crate::host::file_diagnostics(db, file).clone();
            let fixes: Vec<&crate::diagnostics::Fix> = diagnostics.iter().flat_map(|d| &d.fixes).collect();
            let text = file.text(db).clone();
            let (new, applied) = crate::diagnostics::apply_fixes(&text, &name, &fixes);
            if new == text || crate::syntax::parse(&name, &new).errors.iter().any(|d| d.severity == Severity::Error) {
                break;
            }
            titles.extend(applied.iter().map(|&i| fixes[i].title.clone()));
            db.set_file(name.clone(), new);
        }
        let text = file.text(db).clone();
        if text == original {
            continue;
        }
        match crate::safe_write::write(name.as_str().as_ref(), text.as_bytes(), Links::Follow) {
            Ok(()) => fixed.push(format!("fixed {name}: {}", titles.join(", "))),
            Err(e) => {
                let _ = writeln!(err, "error: {e}; `{name}` was left as it is");
                db.set_file(name, original);
                ok = false;
            }
        }
    }
    ok
}

/// Loads and checks `paths` for `report` and `snapshot`: the database and what was
/// checked, or the exit code after a missing path was named.
fn load_checked(
    paths: &[PathBuf],
    exclude: &[String],
    what_if: &WhatIfArgs,
    only: Option<&str>,
    err: &mut dyn Write,
) -> Result<(Database, crate::workspace::Checked), u8> {
    let Some(paths) = existing_paths(paths, err) else { return Err(2) };
    let Some(excludes) = excludes(exclude, err) else { return Err(2) };
    let changes = what_if.changes().map_err(|message| {
        let _ = writeln!(err, "error: {message}");
        2
    })?;
    let mut db = Database::new();
    let checked =
        check_paths_changed(&mut db, &paths, &excludes, |db, roots| crate::whatif::apply(db, roots, only, &changes));
    Ok((db, checked))
}

/// The errors that stop the scenario at `index` of `file` ([`crate::host::scenario_errors`]),
/// located by line and column for a report.
fn stopping_errors(db: &Database, file: crate::db::SourceFile, index: u32) -> Vec<crate::report::StoppingError> {
    crate::host::scenario_errors(db, file, index)
        .iter()
        .map(|d| {
            let label = d.primary();
            let offset = match label.place {
                crate::diagnostics::Place::Range(r) => r.start,
                crate::diagnostics::Place::Node(_) => 0,
            };
            let text = crate::db::lookup_file(db, &label.file).map(|f| f.text(db).clone()).unwrap_or_default();
            let at = render::line_col(&text, offset);
            let info = d.code.info();
            crate::report::StoppingError {
                code: info.code,
                name: info.name,
                message: d.message.clone(),
                file: label.file.clone(),
                line: at.line,
                column: at.column,
            }
        })
        .collect()
}

/// Shows the error-level diagnostics of `checked` on `err` (human format) with a summary
/// naming how many scenarios they left out of the output; returns their number. `report`
/// and `snapshot` show every scenario that simulates whatever the errors elsewhere, so the
/// errors go beside the output, not instead of it.
fn show_errors(checked: &crate::workspace::Checked, left_out: usize, color: bool, err: &mut dyn Write) -> usize {
    let errors: Vec<_> = checked.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned().collect();
    if !errors.is_empty() {
        let _ = err.write_all(render::human(&errors, &checked.sources, color).as_bytes());
        let summary = plural(errors.len(), "error");
        if left_out == 0 {
            let _ = writeln!(err, "error: {summary}");
        } else {
            let _ = writeln!(err, "error: {summary}; {} not simulated", plural(left_out, "scenario"));
        }
    }
    errors.len()
}

/// The exit code after a command that showed `errors` error-level diagnostics.
fn exit_code(checked: &crate::workspace::Checked, errors: usize) -> u8 {
    if checked.io_failed {
        2
    } else if errors > 0 {
        1
    } else {
        0
    }
}

fn report(args: ReportArgs, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    let (db, checked) = match load_checked(&args.paths, &args.exclude, &args.what_if, args.scenario.as_deref(), err) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let only = args.scenario.as_deref();
    let report =
        crate::report::report_with(&db, &checked.roots, only, &|file, index| stopping_errors(&db, file, index));
    if let Some(name) = &args.scenario
        && report.is_empty()
    {
        let _ = writeln!(err, "{}", unknown_scenario(&db, &checked.roots, name));
        return 2;
    }
    if let Some(path) = &args.svg
        && let Err(message) = write_svg(&db, &checked.roots, &report, only, path)
    {
        let _ = writeln!(err, "error: {message}");
        return 2;
    }
    let text = match args.format {
        ReportFormat::Table => crate::report::table(&report),
        ReportFormat::Markdown => crate::report::markdown(&report),
        ReportFormat::Json => {
            let mut json = serde_json::to_string_pretty(&report).expect("plain data serializes");
            json.push('\n');
            json
        }
    };
    if out.write_all(text.as_bytes()).is_err() {
        return 2;
    }
    let errors = show_errors(&checked, report.not_simulated.len(), use_color(args.color, terminal), err);
    exit_code(&checked, errors)
}

/// `netc fit`: for each scenario (or the one named), the largest batch size or sequence length
/// that fits, with every value tried. A scenario with no limit or that cannot be simulated is
/// named on `err` (exit 1); errors in the files go to `err` as for `report`.
fn fit(args: FitArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let only = args.scenario.as_deref();
    let (db, checked) = match load_checked(&args.paths, &args.exclude, &args.what_if, only, err) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let axis = match args.over {
        FitAxis::Batch => crate::costs::fit::Axis::Batch,
        FitAxis::Seq => crate::costs::fit::Axis::Seq,
    };
    let mut scenarios: Vec<(crate::db::SourceFile, u32, String)> = Vec::new();
    for &file in &checked.roots {
        for (index, item) in crate::semantics::files::syntax_tree(&db, file).iter().enumerate() {
            if let crate::syntax::Item::Scenario(s) = item
                && only.is_none_or(|name| name == s.name.text)
            {
                scenarios.push((file, index as u32, s.name.text.to_string()));
            }
        }
    }
    if let Some(name) = only
        && scenarios.is_empty()
    {
        let _ = writeln!(err, "{}", unknown_scenario(&db, &checked.roots, name));
        return 2;
    }
    let mut fits = Vec::new();
    let mut failed = 0;
    for (file, index, name) in scenarios {
        if !crate::host::scenario_errors(&db, file, index).is_empty() {
            let _ = writeln!(err, "error: scenario `{name}` has errors: see `netc check`");
            failed += 1;
            continue;
        }
        match crate::costs::fit::fit(&db, file, index, axis) {
            Ok(fit) => fits.push((file.name(&db).clone(), fit)),
            Err(message) => {
                let _ = writeln!(err, "error: {message}");
                failed += 1;
            }
        }
    }
    let text = match args.format {
        FitFormat::Json => {
            let list: Vec<serde_json::Value> = fits
                .iter()
                .map(|(file, fit)| {
                    serde_json::json!({
                        "file": file.to_string(),
                        "scenario": fit.scenario,
                        "axis": fit.axis,
                        "limit": limit_text(fit.limit),
                        "limit_bytes": fit.limit.bytes(),
                        "largest": fit.largest,
                        "trials": fit.trials,
                    })
                })
                .collect();
            let mut json = serde_json::to_string_pretty(&serde_json::json!({ "fits": list })).expect("plain data");
            json.push('\n');
            json
        }
        FitFormat::Table => fits.iter().map(|(file, fit)| fit_table(file, fit)).collect::<Vec<_>>().join("\n"),
    };
    if out.write_all(text.as_bytes()).is_err() {
        return 2;
    }
    // The lints of the file as written (a budget exceeded at its batch) are what `fit` answers,
    // not errors of its own: only a scenario it could not search fails the run.
    if checked.io_failed {
        2
    } else if failed > 0 {
        1
    } else {
        0
    }
}

/// "budget 2.0 GiB", "device rtx4090 (24.0 GiB)".
fn limit_text(limit: crate::costs::fit::Limit) -> String {
    use crate::costs::fit::Limit;
    match limit {
        Limit::Budget(bytes) => format!("budget {}", crate::units::bytes(bytes)),
        Limit::Device(device) => format!("device {} ({})", device.name(), crate::units::bytes(limit.bytes())),
    }
}

/// The answer of `fit` for one scenario and the values it tried, smallest first.
fn fit_table(file: &crate::diagnostics::FileName, fit: &crate::costs::fit::Fit) -> String {
    use crate::units::bytes;
    let limit = limit_text(fit.limit);
    let mut out = match fit.largest {
        Some(largest) => {
            format!("scenario `{}` ({file}): fits up to {} {largest} within {limit}\n", fit.scenario, fit.axis)
        }
        None => {
            format!("scenario `{}` ({file}): does not fit within {limit} even at {} 1\n", fit.scenario, fit.axis)
        }
    };
    let mut trials = fit.trials.clone();
    trials.sort_by_key(|t| t.value);
    trials.dedup_by_key(|t| t.value);
    out.push_str(&format!("  {:>10}  {:>12}\n", fit.axis, "needs"));
    for t in trials {
        let (needs, verdict) = match t.total_bytes {
            Some(total) if total <= fit.limit.bytes() => (bytes(total), "fits"),
            Some(total) => (bytes(total), "over"),
            None => ("-".to_string(), "does not simulate"),
        };
        out.push_str(&format!("  {:>10}  {needs:>12}  {verdict}\n", t.value));
    }
    out
}

/// The error for a `--scenario NAME` that no file of `roots` has, with the closest name or
/// the list of names.
fn unknown_scenario(db: &Database, roots: &[crate::db::SourceFile], name: &str) -> String {
    let all = crate::report::report(db, roots, None).names().iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let hint = match crate::suggest::closest(name, all.iter().map(String::as_str)) {
        Some(close) => format!("; did you mean `{close}`?"),
        None if all.is_empty() => String::new(),
        None => format!(" (the scenarios are: {})", all.join(", ")),
    };
    format!("error: no scenario named `{name}` in the given files{hint}")
}

/// Writes the timeline plot of the one scenario of `files` (named `only`; `report` is their
/// report) to `path`.
fn write_svg(
    db: &Database,
    files: &[crate::db::SourceFile],
    report: &crate::report::Report,
    only: Option<&str>,
    path: &Path,
) -> Result<(), String> {
    let found = crate::report::scenarios(db, files, only);
    let [(file, index)] = found[..] else {
        let names: Vec<String> = report.names().iter().map(|name| format!("`{name}`")).collect();
        return Err(if names.is_empty() {
            "--svg: the given files declare no scenario".to_string()
        } else {
            format!("--svg plots one scenario; choose one of {} with --scenario", names.join(", "))
        });
    };
    let svg = match report.not_simulated.first() {
        None => crate::svg::scenario(db, file, index),
        Some(_) => None,
    };
    let Some(svg) = svg else {
        return Err("--svg: the scenario cannot be simulated".to_string());
    };
    crate::safe_write::write(path, svg.as_bytes(), Links::Follow).map_err(|e| e.to_string())
}

/// `netc snapshot`: writes the budget snapshot of every named file that declares scenarios
/// beside it (`model.net` -> `model.netsnap`), or with `--check` compares them with the
/// stored ones and shows what moved. A file with a scenario that cannot be simulated keeps
/// its stored snapshot (its figures would be lost); `--check` shows that scenario as not
/// simulated, in its place. Errors go to standard error and fail the run (exit 1).
fn snapshot(args: SnapshotArgs, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    let (db, checked) = match load_checked(&args.paths, &args.exclude, &WhatIfArgs::default(), None, err) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let (mut written, mut same, mut moved, mut kept, mut code, mut left_out) = (0, 0, 0, 0, 0, 0);
    // Snapshots whose every change is a figure within `--tolerance`: they pass.
    let mut tolerated = 0;
    for &file in &checked.roots {
        let stopping = |file, index| stopping_errors(&db, file, index);
        let Some(snapshot) = crate::snapshot::render_with(&db, file, &stopping) else { continue };
        left_out += snapshot.not_simulated.len();
        let text = snapshot.text.clone();
        let name = file.name(&db).clone();
        // Only `.net` files: `model.txt` and `model.net` would share `model.netsnap`, and a
        // snapshot named after its own source (`weird.netsnap`) would overwrite it.
        if !crate::snapshot::has_snapshot(&name) {
            let _ = writeln!(
                err,
                "error: cannot snapshot `{name}`: only `.net` files get a snapshot (`model.net` -> `model.netsnap`)"
            );
            code = 2;
            continue;
        }
        let path = crate::snapshot::snapshot_path(&name);
        let shown = crate::workspace::file_name_of(&path);
        // A `use` of the snapshot's name (the loader refused it: not a `.net` file) makes it
        // someone's source in spirit: never show or replace it.
        if crate::db::Db::workspace(&db).refused(&db).contains_key(&shown) {
            let _ = writeln!(err, "error: cannot snapshot `{name}`: `{shown}` is named by a `use`");
            code = 2;
            continue;
        }
        // A file none of whose scenarios simulates has nothing to write or compare.
        let names: Vec<String> = snapshot.not_simulated.iter().map(|n| format!("`{n}`")).collect();
        let none = snapshot.not_simulated.len() == snapshot.scenarios;
        if none || (!args.check && !names.is_empty()) {
            let verb = if args.check { "not compared" } else { "not written" };
            let what = if names.len() == 1 { "scenario" } else { "scenarios" };
            let _ = writeln!(err, "error: `{shown}` {verb}: {what} {} cannot be simulated", names.join(", "));
            kept += 1;
            continue;
        }
        let stored = match crate::workspace::read_generated(&path) {
            Ok(stored) => stored,
            Err(reason) => {
                let _ = writeln!(err, "error: cannot read `{shown}`: {reason}");
                code = 2;
                continue;
            }
        };
        if stored.as_deref() == Some(text.as_str()) {
            same += 1;
            continue;
        }
        if !args.check {
            match crate::safe_write::write(&path, text.as_bytes(), Links::Refuse) {
                Ok(()) => {
                    written += 1;
                    let _ = writeln!(out, "wrote {shown}");
                }
                Err(e) => {
                    let _ = writeln!(err, "error: {e}");
                    code = 2;
                }
            }
            continue;
        }
        let comparison =
            stored.as_deref().map(|s| crate::snapshot::compare_within(name.as_str(), s, &text, args.tolerance));
        let within_note = |line: &str| format!("{line} (within the {}% tolerance)\n", args.tolerance);
        // Every change a figure within the tolerance (and at least one: a text that differs
        // otherwise, such as the header, is a change that names no figure).
        if let Some(c) = &comparison
            && c.moved.is_empty()
            && !c.within.is_empty()
        {
            tolerated += 1;
            let lines: String = c.within.iter().map(|l| within_note(l)).collect();
            if out.write_all(lines.as_bytes()).is_err() {
                return 2;
            }
            continue;
        }
        moved += 1;
        let mut report = String::new();
        match (&stored, &comparison) {
            (Some(stored), Some(comparison)) => {
                for line in &comparison.moved {
                    report.push_str(line);
                    report.push('\n');
                }
                for line in &comparison.within {
                    report.push_str(&within_note(line));
                }
                let (old, new) = (format!("{shown} (stored)"), format!("{shown} (now)"));
                report.push_str(&crate::snapshot::unified_diff(stored, &text, &old, &new));
            }
            _ => report.push_str(&format!("{name}: no snapshot `{shown}` (run `netc snapshot {name}`)\n")),
        }
        if out.write_all(report.as_bytes()).and_then(|()| writeln!(out)).is_err() {
            return 2;
        }
    }
    let total = plural(written + same + moved + kept + tolerated, "snapshot");
    let summary = if args.check {
        let mut rest = String::new();
        if tolerated > 0 {
            rest.push_str(&format!(", {tolerated} within the {}% tolerance", args.tolerance));
        }
        if kept > 0 {
            rest.push_str(&format!(", {kept} not compared"));
        }
        if moved == 0 {
            format!("checked {total}: up to date{rest}")
        } else {
            format!("checked {total}: {moved} moved{rest} (run `netc snapshot` to accept the new figures)")
        }
    } else {
        let kept = if kept > 0 { format!(", {kept} not written") } else { String::new() };
        format!("{total}: {written} written, {same} unchanged{kept}")
    };
    if writeln!(out, "{summary}").is_err() {
        return 2;
    }
    let errors = show_errors(&checked, left_out, use_color(args.color, terminal), err);
    match (code, exit_code(&checked, errors)) {
        (0, 0) if moved > 0 => 1,
        (0, checked) => checked,
        (code, _) => code,
    }
}

/// `netc fmt`: formats the named files in place, or with `--check` lists those that would
/// change. Files with syntax errors are not touched: their errors are shown (exit 1).
fn fmt(args: FmtArgs, input: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        if args.paths.len() > 1 {
            let _ = writeln!(err, "error: `-` (standard input) cannot be formatted with other files");
            return 2;
        }
        return fmt_stdin(&args, input, out, err, terminal);
    }
    let Some(paths) = existing_paths(&args.paths, err) else { return 2 };
    let Some(excludes) = excludes(&args.exclude, err) else { return 2 };
    let mut db = Database::new();
    // Only the named files (directories expanded) are formatted, not the files they import.
    let loaded = crate::workspace::load_roots_with(&mut db, &paths, &excludes);
    let mut sources: BTreeMap<crate::diagnostics::FileName, String> = loaded.extra_sources.clone();
    let mut broken = Vec::new();
    let mut unformatted = Vec::new();
    let mut code = 0;
    for &file in &loaded.roots {
        let name = file.name(&db).clone();
        let text = file.text(&db);
        match crate::format::format(&name, text) {
            Ok(formatted) if &formatted == text => {}
            Ok(formatted) => {
                if args.diff {
                    let (old, new) = (format!("{name} (now)"), format!("{name} (formatted)"));
                    let diff = crate::snapshot::unified_diff(text, &formatted, &old, &new);
                    if out.write_all(diff.as_bytes()).is_err() {
                        return 2;
                    }
                    unformatted.push(name);
                } else if args.check {
                    unformatted.push(name);
                } else if let Err(e) =
                    crate::safe_write::write(name.as_str().as_ref(), formatted.as_bytes(), Links::Follow)
                {
                    let _ = writeln!(err, "error: {e}; `{name}` was left as it is");
                    code = 2;
                }
            }
            Err(crate::format::FormatError::Syntax(diagnostics)) => {
                sources.insert(name.clone(), text.clone());
                broken.extend(diagnostics);
            }
            Err(e @ crate::format::FormatError::Internal(_)) => {
                let _ = writeln!(err, "error: {e}; `{name}` was left as it is");
                code = 2;
            }
        }
    }
    if !broken.is_empty() {
        let color = use_color(args.color, terminal);
        let _ = err.write_all(render::human(&broken, &sources, color).as_bytes());
        let _ = writeln!(err, "error: not formatted: files with syntax errors ({})", plural(broken.len(), "error"));
    }
    for name in unformatted.iter().filter(|_| !args.diff) {
        if writeln!(out, "{name}").is_err() {
            return 2;
        }
    }
    if !loaded.io_errors.is_empty() {
        let _ = err.write_all(render::human(&loaded.io_errors, &sources, use_color(args.color, terminal)).as_bytes());
        return 2;
    }
    if code != 0 {
        code
    } else if !broken.is_empty() || !unformatted.is_empty() {
        1
    } else {
        0
    }
}

/// The pages of the lints (spec/lints/), embedded so that `netc explain` works offline, by
/// name.
const LINT_PAGES: &[(&str, &str)] = &include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lints/pages.in"));

/// The catalogue of diagnostics (spec/diagnostics.md), embedded: `netc explain` shows the
/// section of a code.
const DIAGNOSTICS_PAGE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/spec/diagnostics.md"));

/// The documentation of `code` (a code such as `E0304` or a kebab-case name): a lint's page,
/// or the code's section of the diagnostics catalogue (its `### CODE` heading to the next
/// heading).
pub fn explanation(code: &str) -> Option<String> {
    let info = crate::diagnostics::Code::ALL
        .iter()
        .map(|c| c.info())
        .find(|i| i.code.eq_ignore_ascii_case(code) || i.name == code)?;
    if let Some((_, page)) = LINT_PAGES.iter().find(|(name, _)| *name == info.name) {
        return Some(page.to_string());
    }
    let heading = format!("### {} ", info.code);
    let start = DIAGNOSTICS_PAGE.lines().position(|l| l.starts_with(&heading));
    let lines: Vec<&str> = DIAGNOSTICS_PAGE.lines().collect();
    let section = match start {
        Some(start) => {
            let end = lines[start + 1..].iter().position(|l| l.starts_with('#')).map_or(lines.len(), |e| start + 1 + e);
            lines[start..end].join("\n").trim_end().to_string()
        }
        None => format!("### {} `{}`\n\n{}.", info.code, info.name, info.summary),
    };
    Some(format!("{section}\n"))
}

/// `netc explain CODE`: the documentation of a code or lint, or exit 2 naming the closest.
fn explain(code: &str, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match explanation(code) {
        Some(text) => {
            if out.write_all(text.as_bytes()).is_err() {
                return 2;
            }
            0
        }
        None => {
            let names = crate::diagnostics::Code::ALL.iter().flat_map(|c| [c.info().code, c.info().name]);
            let hint =
                crate::suggest::closest(code, names).map(|c| format!("; did you mean `{c}`?")).unwrap_or_default();
            let _ = writeln!(err, "error: no diagnostic code or lint `{code}`{hint}");
            2
        }
    }
}

/// `netc fmt -`: formats standard input to standard output (`--check`: nothing written, exit
/// 1 if it is not formatted; `--diff`: the diff). Text with syntax errors is not formatted:
/// its errors go to standard error (exit 1) and nothing to standard output, so an editor
/// that pipes a buffer through it never replaces the buffer with nothing.
fn fmt_stdin(args: &FmtArgs, input: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    let mut bytes = Vec::new();
    if let Err(e) = input.read_to_end(&mut bytes) {
        let _ = writeln!(err, "error: cannot read standard input: {e}");
        return 2;
    }
    let Ok(text) = String::from_utf8(bytes) else {
        let _ = writeln!(err, "error: standard input is not valid UTF-8");
        return 2;
    };
    let name = crate::diagnostics::FileName::new("<stdin>");
    match crate::format::format(&name, &text) {
        Ok(formatted) => {
            let changed = formatted != text;
            let shown = if args.diff {
                crate::snapshot::unified_diff(&text, &formatted, "<stdin> (now)", "<stdin> (formatted)")
            } else if args.check {
                if changed { "<stdin>\n".to_string() } else { String::new() }
            } else {
                formatted
            };
            if out.write_all(shown.as_bytes()).is_err() {
                return 2;
            }
            u8::from(changed && (args.check || args.diff))
        }
        Err(crate::format::FormatError::Syntax(diagnostics)) => {
            let sources = BTreeMap::from([(name, text)]);
            let _ = err.write_all(render::human(&diagnostics, &sources, use_color(args.color, terminal)).as_bytes());
            let _ = writeln!(err, "error: not formatted: syntax errors ({})", plural(diagnostics.len(), "error"));
            1
        }
        Err(e @ crate::format::FormatError::Internal(_)) => {
            let _ = writeln!(err, "error: {e}; standard input was not formatted");
            2
        }
    }
}

/// Runs netc with `args` (the program name first), writing to `out` and `err`; returns the
/// exit code. `terminal` says whether `out` is a terminal (for `--color auto`). This library
/// has no language server: `netc lsp` says so and exits with 2 (the `netc` binary uses
/// [`run_with`]).
pub fn run(args: impl IntoIterator<Item = OsString>, out: &mut dyn Write, err: &mut dyn Write, terminal: bool) -> u8 {
    dispatch(args, &mut std::io::stdin(), out, err, terminal, None)
}

/// [`run`], reading standard input (`netc fmt -`) from `input`.
pub fn run_with_input(
    args: impl IntoIterator<Item = OsString>,
    input: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: bool,
) -> u8 {
    dispatch(args, input, out, err, terminal, None)
}

/// [`run`], with `language_server` run for `netc lsp` (it serves standard input and output
/// and returns the exit code). The language server lives in the `netc-lsp` crate, which
/// depends on this one, so the binary hands it in.
pub fn run_with(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: bool,
    language_server: &dyn Fn() -> u8,
) -> u8 {
    dispatch(args, &mut std::io::stdin(), out, err, terminal, Some(language_server))
}

fn dispatch(
    args: impl IntoIterator<Item = OsString>,
    input: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: bool,
    language_server: Option<&dyn Fn() -> u8>,
) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with success; usage errors to stderr with 2.
            let text = e.to_string();
            return if e.use_stderr() {
                let _ = err.write_all(text.as_bytes());
                2
            } else {
                let _ = out.write_all(text.as_bytes());
                0
            };
        }
    };
    match cli.command {
        Command::Check(args) => check(args, out, err, terminal),
        Command::Report(args) => report(args, out, err, terminal),
        Command::Fit(args) => fit(args, out, err),
        Command::Fmt(args) => fmt(args, input, out, err, terminal),
        Command::Snapshot(args) => snapshot(args, out, err, terminal),
        Command::Explain(args) => explain(&args.code, out, err),
        Command::Lsp => match language_server {
            Some(serve) => serve(),
            None => {
                let _ =
                    writeln!(err, "error: this build of netc has no language server (build the `netc-cli` package)");
                2
            }
        },
    }
}

/// Runs netc on the process's arguments and standard streams, with `language_server` for
/// `netc lsp`. Standard output is not locked for the whole run: the language server writes
/// to it from other threads.
pub fn main_with(language_server: &dyn Fn() -> u8) -> u8 {
    let terminal = std::io::stdout().is_terminal();
    run_with(std::env::args_os(), &mut std::io::stdout(), &mut std::io::stderr(), terminal, language_server)
}

/// Runs netc on the process's arguments and standard streams, without a language server.
pub fn main() -> u8 {
    let terminal = std::io::stdout().is_terminal();
    run(std::env::args_os(), &mut std::io::stdout(), &mut std::io::stderr(), terminal)
}
