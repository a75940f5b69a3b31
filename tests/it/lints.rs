//! The lints: each triggers on its fixture and not on its clean twin; its documentation
//! page in spec/lints/ is generated from its source's `///` comment (`NETC_BLESS=1` rewrites
//! the pages); suppressions, fixes and configured levels work.

use std::collections::BTreeMap;

use netc::db::Level;
use netc::diagnostics::{Code, Diagnostic, FileName, Place, Severity};
use netc::host::{Database, file_diagnostics};

use crate::support::{check, diagnostics_and_sources, root};

fn lint_codes() -> Vec<Code> {
    Code::ALL.iter().copied().filter(|c| c.info().is_lint()).collect()
}

fn diagnostics(text: &str, levels: BTreeMap<String, Level>) -> Vec<Diagnostic> {
    let mut db = Database::new();
    db.set_levels(levels);
    let file = db.set_file(FileName::new("main.net"), text.to_string());
    file_diagnostics(&db, file).clone()
}

#[test]
fn every_lint_triggers_on_its_fixture_and_not_on_its_clean_twin() {
    let mut checked = 0;
    for code in lint_codes() {
        let name = code.info().name;
        if code == Code::UnknownLint {
            continue;
        }
        let dir = root().join("tests/fixtures/lints").join(name);
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{name}/{f}: {e}"));
        let triggers = diagnostics(&read("triggers.net"), BTreeMap::new());
        assert!(
            triggers.iter().any(|d| d.code == code),
            "{name}: triggers.net gives {:?}",
            triggers.iter().map(|d| (d.code.info().name, &d.message)).collect::<Vec<_>>()
        );
        let clean = diagnostics(&read("clean.net"), BTreeMap::new());
        assert!(
            !clean.iter().any(|d| d.code == code || d.severity == Severity::Error),
            "{name}: clean.net gives {:?}",
            clean.iter().map(|d| (d.code.info().name, &d.message)).collect::<Vec<_>>()
        );
        checked += 1;
    }
    assert_eq!(checked, lint_codes().len() - 1);
}

/// The `///` block above `pub struct` in a lint's source, without the markers.
fn doc_comment(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("pub struct")).expect("a lint struct");
    let mut start = at;
    while start > 0 && lines[start - 1].starts_with("///") {
        start -= 1;
    }
    lines[start..at]
        .iter()
        .map(|l| l.trim_start_matches("///").strip_prefix(' ').unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The documentation pages, generated from the lints' sources.
fn pages() -> BTreeMap<String, String> {
    let dir = root().join("compiler/src/lints");
    let mut pages = BTreeMap::new();
    let mut index = String::from(
        "# Lints\n\nGenerated from the lints' sources (compiler/src/lints/) by tests/it/lints.rs; do not edit.\nLevels can be changed with `-A`/`-W`/`-D NAME`, in `netc.toml` (see ../diagnostics.md), or suppressed inline with `# netc: allow(NAME)`.\n\n| code | name | default level | what it reports |\n|---|---|---|---|\n",
    );
    for code in lint_codes() {
        let info = code.info();
        let doc = if code == Code::UnknownLint {
            "## What it does\nReports a name in `# netc: allow(...)` that is no lint's name or code.\n\n## Why is this bad?\nThe suppression silences nothing: usually a typo.\n\n## How to fix\nUse a name from the table in spec/lints/README.md.".to_string()
        } else {
            let file = dir.join(format!("{}.rs", info.name.replace('-', "_")));
            let file = if file.exists() {
                file
            } else {
                // Files are named after the lint's struct where the name is long.
                std::fs::read_dir(&dir)
                    .expect("the lints' directory")
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(&format!("Code::{code:?}\n"))))
                    .unwrap_or_else(|| panic!("no source file for {}", info.name))
            };
            doc_comment(&std::fs::read_to_string(file).expect("readable")).replace("```net", "```text")
        };
        let level = format!("{:?}", info.severity).to_lowercase();
        let page = format!(
            "# {} {}\n\nDefault level: {level}. {}.\n\n{doc}\n",
            info.code,
            info.name,
            capitalize(info.summary)
        );
        index
            .push_str(&format!("| {} | [{}]({}.md) | {level} | {} |\n", info.code, info.name, info.name, info.summary));
        pages.insert(format!("{}.md", info.name), page);
    }
    pages.insert("README.md".into(), index);
    pages
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

#[test]
fn lint_pages_are_up_to_date() {
    let dir = root().join("spec/lints");
    let bless = std::env::var_os("NETC_BLESS").is_some();
    if bless {
        std::fs::create_dir_all(&dir).expect("create spec/lints");
    }
    for (file, page) in pages() {
        let path = dir.join(&file);
        if bless {
            std::fs::write(&path, &page).expect("write the page");
        } else {
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                on_disk == page,
                "spec/lints/{file} is out of date: run `NETC_BLESS=1 cargo test -p netc-tests lint_pages`"
            );
        }
    }
}

const SERVE: &str = "use std.models.resnet\ninfer serve { model resnet18()  batch 8  eval }\n";

#[test]
fn suppressions_silence_lints_on_their_line_or_item() {
    let has = |text: &str, code: Code| diagnostics(text, BTreeMap::new()).iter().any(|d| d.code == code);
    assert!(has(SERVE, Code::MissingNoGrad));
    let trailing = SERVE.replace("eval }", "eval }  # netc: allow(missing-no-grad)");
    assert!(!has(&trailing, Code::MissingNoGrad));
    let above = SERVE.replace("infer serve", "# netc: allow(L0003)\ninfer serve");
    assert!(!has(&above, Code::MissingNoGrad));
    // Another lint's name does not silence it; an unknown name is reported.
    let other = SERVE.replace("eval }", "eval }  # netc: allow(missing-eval, missing-no-gard)");
    let found = diagnostics(&other, BTreeMap::new());
    assert!(found.iter().any(|d| d.code == Code::MissingNoGrad));
    let unknown = found.iter().find(|d| d.code == Code::UnknownLint).expect("L0014");
    assert_eq!(unknown.help.as_deref(), Some("did you mean `missing-no-grad`?"));
}

#[test]
fn fixes_make_the_lint_go_away() {
    for (text, code) in [
        (SERVE.to_string(), Code::MissingNoGrad),
        ("use std.models.vgg\ninfer serve { model vgg16()  batch 1  no_grad }\n".to_string(), Code::MissingEval),
    ] {
        let found = diagnostics(&text, BTreeMap::new());
        let d = found.iter().find(|d| d.code == code).expect("the lint fires");
        let fix = d.fixes.first().expect("a fix");
        let mut fixed = text.clone();
        for edit in fix.edits.iter().rev() {
            let Place::Range(r) = edit.place else { panic!("resolved to a range") };
            if edit.insert_after {
                fixed.insert_str(r.end as usize, &edit.text);
            } else {
                fixed.replace_range(r.to_range(), &edit.text);
            }
        }
        let after = diagnostics(&fixed, BTreeMap::new());
        assert!(!after.iter().any(|d| d.code == code), "{fixed}\n{after:?}");
        assert!(!after.iter().any(|d| d.severity == Severity::Error), "{fixed}\n{after:?}");
    }
}

#[test]
fn levels_change_lints_but_not_errors() {
    let over =
        "use std.models.resnet\ninfer serve { model resnet50()  batch 512  no_grad  eval  device t4  budget 4 GiB }\n";
    let severity = |levels: BTreeMap<String, Level>| {
        diagnostics(over, levels).iter().find(|d| d.code == Code::BudgetExceeded).map(|d| d.severity)
    };
    assert_eq!(severity(BTreeMap::new()), Some(Severity::Error));
    assert_eq!(severity(BTreeMap::from([("budget-exceeded".into(), Level::Warn)])), Some(Severity::Warning));
    assert_eq!(severity(BTreeMap::from([("L0001".into(), Level::Allow)])), None);
    // `--deny warnings` turns warning-level lints into errors.
    let warns = diagnostics(SERVE, BTreeMap::from([("warnings".into(), Level::Deny)]));
    assert_eq!(warns.iter().find(|d| d.code == Code::MissingNoGrad).map(|d| d.severity), Some(Severity::Error));
}

#[test]
fn budget_messages_name_the_peak_and_the_top_costs() {
    let over =
        "use std.models.resnet\ninfer serve { model resnet50()  batch 512  no_grad  eval  device t4  budget 4 GiB }\n";
    let d = diagnostics(over, BTreeMap::new()).into_iter().find(|d| d.code == Code::BudgetExceeded).expect("L0001");
    assert!(d.message.contains("over by"), "{}", d.message);
    assert!(d.notes.iter().any(|n| n.starts_with("the peak is at forward, in `")), "{:?}", d.notes);
    assert!(d.notes.iter().any(|n| n.starts_with("largest costs at the peak: activations")), "{:?}", d.notes);
}

/// The edits of a diagnostic's fixes, one line each: `title: replace main.net:2:5 `old` with
/// "new"` or `title: insert after main.net:2:5 `anchor`: "new"`.
fn fixes_of(diagnostics: &[Diagnostic], sources: &BTreeMap<FileName, String>) -> String {
    let mut out = String::new();
    for d in diagnostics {
        for fix in &d.fixes {
            for edit in &fix.edits {
                let Place::Range(r) = edit.place else { panic!("fixes are resolved to ranges: {edit:?}") };
                let text = sources.get(&edit.file).map_or("", String::as_str);
                let at = netc::render::line_col(text, r.start);
                let old = text.get(r.to_range()).unwrap_or("?");
                let place = format!("{}:{}:{}", edit.file, at.line, at.column);
                let what = if edit.insert_after {
                    format!("insert after {place} `{old}`: {:?}", edit.text)
                } else {
                    format!("replace {place} `{old}` with {:?}", edit.text)
                };
                out.push_str(&format!("{} {}: {what}\n", d.code.info().code, fix.title));
            }
        }
    }
    if out.is_empty() { "(none)\n".to_string() } else { out }
}

// Reviewed: each lint's full report on its fixture (message, labels, notes, help) as
// `netc check` prints it, and its fixes' edits.
// QUESTIONABLE (lint_missing-eval): `vgg16`'s classifier has `# netc: allow(linear-dominates-
// parameters)` in <std>/models/vgg.net, yet L0006 is reported there when main.net's scenario
// runs the model: `file_diagnostics` reads the suppressions of the file being checked only,
// not those of the file a diagnostic points into.
#[test]
fn every_lints_report_on_its_fixture() {
    let dir = root().join("tests/fixtures/lints");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the lint fixtures")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert_eq!(names.len(), lint_codes().len() - 1, "a fixture per lint but unknown-lint");
    for name in names {
        let text = std::fs::read_to_string(dir.join(&name).join("triggers.net")).expect("triggers.net");
        let (diagnostics, sources) = diagnostics_and_sources(&[("main.net", &text)]);
        let mut rendered = check(&text);
        rendered.push_str("=== fixes\n");
        rendered.push_str(&fixes_of(&diagnostics, &sources));
        insta::assert_snapshot!(format!("lint_{name}"), rendered);
    }
}

/// Help looks at the scenario: a setting already made is not suggested (issue 19: the budget
/// error used to suggest `precision amp` and `zero` with `amp_bf16` and `zero 3` set).
#[test]
fn budget_help_suggests_only_what_the_scenario_does_not_do() {
    let cases = [
        (
            "train t { model resnet50()  batch 256  optimizer adam  device a100_80gb  budget 1 GiB }",
            "lower the batch, use `precision amp_bf16` (or `amp`), `checkpoint` activations, split the batch with `grad_accum`, or shard with `zero`/`fsdp` over `data_parallel` devices",
        ),
        (
            "train t { model resnet50()  batch 256  optimizer adam  precision amp_bf16  data_parallel 8  zero 3  device a100_80gb  budget 1 GiB }",
            "lower the batch, `checkpoint` activations, or split the batch with `grad_accum`",
        ),
        (
            "train t { model resnet50()  batch 256  optimizer adam  precision amp_bf16  data_parallel 8  zero 1  checkpoint  grad_accum 2  device a100_80gb  budget 1 GiB }",
            "lower the batch, or shard with `zero 3`/`fsdp`",
        ),
        (
            "infer s { model resnet50()  batch 512  eval  device t4  budget 1 GiB }",
            "lower the batch, use `precision amp`, or run under `no_grad`",
        ),
    ];
    for (scenario, expected) in cases {
        let text = format!("use std.models.resnet\n{scenario}\n");
        let found = diagnostics(&text, BTreeMap::new());
        let budget =
            found.iter().find(|d| d.code == Code::BudgetExceeded).unwrap_or_else(|| panic!("{scenario}: {found:?}"));
        assert_eq!(budget.help.as_deref(), Some(expected), "{scenario}");
    }
}
