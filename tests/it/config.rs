//! `netc.toml`: project-wide and per-path levels, the command line winning over the file,
//! unknown lint names (W0404), malformed files (E0403), and the nearest file winning. Each
//! test writes its files to a fresh temporary directory and runs `netc check` in-process.

use std::collections::BTreeMap;

use netc::config::configured_level;
use netc::db::Level;
use netc::diagnostics::{Code, Severity};

use crate::cli::{OVER, TempDir, WARNING, check};

/// Only L0013 `unused` (a warning): `h` is never used.
const UNUSED: &str = "\
model m() {
    input x: f32[N, 8]
    h = relu(x)
    return linear(x, 4)
}
infer serve { model m()  batch 1  no_grad }
";

/// `file:line:col: severity[CODE]` of each diagnostic of a `--format short` output (the
/// temporary directory as `<tmp>`), and the summary line.
fn short(dir: &TempDir, flags: &[&str]) -> (u8, Vec<String>) {
    let mut all = vec!["--format", "short", "--color", "never"];
    all.extend_from_slice(flags);
    let run = check(&all, &[&dir.path]);
    assert_eq!(run.err, "", "{}", run.out);
    let out = dir.redact(&run.out);
    let lines = out
        .lines()
        .map(|l| match l.find("]: ") {
            Some(end) => l[..=end].to_string(),
            None => l.to_string(),
        })
        .collect();
    (run.code, lines)
}

#[test]
fn project_wide_levels() {
    let dir = TempDir::new("project");
    dir.write("netc.toml", "[lints]\nbudget-exceeded = \"warn\"\n\"L0006\" = \"allow\"\nwarnings = \"deny\"\n");
    dir.write("over.net", OVER);
    dir.write("unused.net", UNUSED);
    let (code, lines) = short(&dir, &[]);
    // budget-exceeded named as `warn` stays a warning (a name wins over `warnings` in the
    // same file); L0006 is allowed; `unused`, a warning, is denied by `warnings`.
    assert_eq!(
        lines,
        [
            "<tmp>/over.net:5:45: warning[L0001]",
            "<tmp>/unused.net:3:5: error[L0013]",
            "checked 2 files: 1 error, 1 warning"
        ]
    );
    assert_eq!(code, 1);

    // Without the file, the defaults.
    std::fs::remove_file(dir.path("netc.toml")).expect("remove");
    let (code, lines) = short(&dir, &[]);
    assert_eq!(
        lines,
        [
            "<tmp>/over.net:3:12: help[L0006]",
            "<tmp>/over.net:5:45: error[L0001]",
            "<tmp>/unused.net:3:5: warning[L0013]",
            "checked 2 files: 1 error, 1 warning"
        ]
    );
    assert_eq!(code, 1);
    // The command line can set the same levels: error-level lints included, errors not.
    let (code, lines) = short(&dir, &["-W", "budget-exceeded", "-A", "L0006", "-D", "warnings"]);
    assert_eq!(
        lines,
        [
            "<tmp>/over.net:5:45: warning[L0001]",
            "<tmp>/unused.net:3:5: error[L0013]",
            "checked 2 files: 1 error, 1 warning"
        ]
    );
    assert_eq!(code, 1);
    let run = check(&["-A", "undefined-name"], &[&dir.path]);
    assert_eq!(run.code, 2);
    assert!(run.err.contains("`undefined-name` is not a lint or warning that can be configured"), "{}", run.err);
}

#[test]
fn per_path_overrides() {
    let dir = TempDir::new("overrides");
    dir.write(
        "netc.toml",
        r#"[lints]
unused = "deny"

[[overrides]]
paths = ["legacy/**", "examples/*.net"]
lints = { unused = "allow" }

# Later entries win over earlier ones.
[[overrides]]
paths = ["examples/strict_*.net", "./generated"]
lints = { "L0013" = "warn" }
"#,
    );
    for name in [
        "unused.net",
        "legacy/unused.net",
        "legacy/deep/unused.net",
        "examples/unused.net",
        "examples/sub/unused.net",
        "examples/strict_unused.net",
        "generated/a/unused.net",
    ] {
        dir.write(name, UNUSED);
    }
    let (code, lines) = short(&dir, &[]);
    assert_eq!(
        lines,
        [
            "<tmp>/examples/strict_unused.net:3:5: warning[L0013]",
            "<tmp>/examples/sub/unused.net:3:5: error[L0013]",
            "<tmp>/generated/a/unused.net:3:5: warning[L0013]",
            "<tmp>/unused.net:3:5: error[L0013]",
            "checked 7 files: 2 errors, 2 warnings"
        ]
    );
    assert_eq!(code, 1);
}

#[test]
fn the_command_line_wins_over_the_file() {
    let dir = TempDir::new("command-line");
    dir.write("netc.toml", "[lints]\nunused = \"allow\"\nineffective-setting = \"deny\"\nwarnings = \"deny\"\n");
    dir.write("unused.net", UNUSED);
    dir.write("warn.net", WARNING);
    let (code, lines) = short(&dir, &[]);
    assert_eq!(lines, ["<tmp>/warn.net:6:52: error[W0306]", "checked 2 files: 1 error, 0 warnings"]);
    assert_eq!(code, 1);

    // A name on the command line wins over the file's name and over its `warnings`.
    let (code, lines) = short(&dir, &["-W", "ineffective-setting", "-W", "L0013"]);
    assert_eq!(
        lines,
        [
            "<tmp>/unused.net:3:5: warning[L0013]",
            "<tmp>/warn.net:6:52: warning[W0306]",
            "checked 2 files: 0 errors, 2 warnings"
        ]
    );
    assert_eq!(code, 0);
    let (_, lines) = short(&dir, &["-A", "W0306"]);
    assert_eq!(lines, ["checked 2 files: no problems found"]);

    // `-D warnings` denies what would be a warning; what the file allows stays allowed.
    let (_, lines) = short(&dir, &["-D", "warnings"]);
    assert_eq!(lines, ["<tmp>/warn.net:6:52: error[W0306]", "checked 2 files: 1 error, 0 warnings"]);
    dir.write("netc.toml", "[lints]\nunused = \"warn\"\n");
    let (code, lines) = short(&dir, &["-D", "warnings"]);
    assert_eq!(
        lines,
        [
            "<tmp>/unused.net:3:5: error[L0013]",
            "<tmp>/warn.net:6:52: error[W0306]",
            "checked 2 files: 2 errors, 0 warnings"
        ]
    );
    assert_eq!(code, 1);
}

#[test]
fn unknown_lint_names_are_warnings_located_in_the_file() {
    let dir = TempDir::new("unknown");
    dir.write(
        "netc.toml",
        "[lints]\nunsued = \"allow\"\n\n[[overrides]]\npaths = [\"*\"]\nlints = { undefined-name = \"allow\" }\n",
    );
    dir.write("unused.net", UNUSED);
    let run = check(&["--format", "short", "--color", "never"], &[&dir.path]);
    let out = dir.redact(&run.out);
    assert_eq!(
        out,
        "<tmp>/netc.toml:2:1: warning[W0404]: unknown lint `unsued` in `<tmp>/netc.toml`\n\
         <tmp>/netc.toml:6:11: warning[W0404]: `undefined-name` is an error, and errors cannot be configured\n\
         <tmp>/unused.net:3:5: warning[L0013]: unused variable `h`\n\
         checked 1 file: 0 errors, 3 warnings\n"
    );
    assert_eq!(run.code, 0);

    // The human format shows the line of netc.toml, with the suggestion.
    let human = check(&["--color", "never"], &[&dir.path]);
    assert!(human.out.contains("unsued = \"allow\""), "{}", human.out);
    assert!(human.out.contains("no lint or warning has this name or code"), "{}", human.out);
    assert!(human.out.contains("did you mean `unused`?"), "{}", human.out);

    // JSON names the file; W0404 has a level like any warning.
    let json = check(&["--format", "json"], &[&dir.path]);
    let json: serde_json::Value = serde_json::from_str(&json.out).expect("JSON");
    assert_eq!(json["diagnostics"][0]["code"], "W0404");
    assert_eq!(json["diagnostics"][0]["name"], "unknown-lint-in-config");
    assert_eq!(dir.redact(json["diagnostics"][0]["file"].as_str().expect("file")), "<tmp>/netc.toml");
    assert_eq!(json["diagnostics"][0]["start"], serde_json::json!({ "line": 2, "column": 1 }));
    let denied = check(&["--format", "short", "-D", "warnings"], &[&dir.path]);
    assert_eq!(denied.code, 1);
    assert!(denied.out.contains("error[W0404]"), "{}", denied.out);
    let (_, lines) = short(&dir, &["-A", "unknown-lint-in-config"]);
    assert_eq!(lines, ["<tmp>/unused.net:3:5: warning[L0013]", "checked 1 file: 0 errors, 1 warning"]);
    // The file's own `[lints]` applies to it too.
    dir.write("netc.toml", "[lints]\nunsued = \"allow\"\nwarnings = \"deny\"\n");
    let (code, lines) = short(&dir, &[]);
    assert_eq!(
        lines,
        [
            "<tmp>/netc.toml:2:1: error[W0404]",
            "<tmp>/unused.net:3:5: error[L0013]",
            "checked 1 file: 2 errors, 0 warnings"
        ]
    );
    assert_eq!(code, 1);
}

#[test]
fn a_malformed_file_is_an_error_naming_it() {
    let dir = TempDir::new("malformed");
    dir.write("unused.net", UNUSED);
    let cases = [
        (
            "[lints]\nunused = \"warning\"\n",
            "2:10",
            "unknown variant `warning`, expected one of `allow`, `warn`, `deny`",
        ),
        ("[lints\nunused = \"allow\"\n", "1:7", ""),
        ("[lint]\nunused = \"allow\"\n", "1:2", "unknown field `lint`"),
        ("[[overrides]]\npaths = [\"a/***\"]\n", "2:10", "invalid glob `a/***`"),
        ("[lints]\nunused = 1\n", "2:10", ""),
    ];
    for (text, at, detail) in cases {
        dir.write("netc.toml", text);
        let run = check(&["--format", "short", "--color", "never"], &[&dir.path]);
        let out = dir.redact(&run.out);
        let prefix = format!("<tmp>/netc.toml:{at}: error[E0403]: invalid configuration in `<tmp>/netc.toml`: ");
        assert!(out.starts_with(&prefix), "{text:?}:\n{out}");
        assert!(out.lines().next().expect("a line").contains(detail), "{text:?}:\n{out}");
        // The other files are still checked, with the default levels; the exit code is 2.
        assert!(out.contains("<tmp>/unused.net:3:5: warning[L0013]"), "{text:?}:\n{out}");
        assert!(out.ends_with("checked 1 file: 1 error, 1 warning\n"), "{text:?}:\n{out}");
        assert_eq!(run.code, 2, "{text:?}");
    }
    let human = check(&["--color", "never"], &[&dir.path]);
    assert!(human.out.contains("netc.toml holds `[lints]`"), "{}", human.out);
}

#[test]
fn the_nearest_file_wins() {
    let dir = TempDir::new("nearest");
    dir.write("netc.toml", "[lints]\nunused = \"allow\"\n");
    dir.write("unused.net", UNUSED);
    dir.write("warn.net", WARNING);
    // sub/ has its own file: the root's is not merged into it.
    dir.write(
        "sub/netc.toml",
        "[lints]\nineffective-setting = \"allow\"\n\n[[overrides]]\npaths = [\"deeper\"]\nlints = { unused = \"deny\" }\n",
    );
    dir.write("sub/unused.net", UNUSED);
    dir.write("sub/warn.net", WARNING);
    // sub/deeper/ has none: sub/netc.toml governs it, its paths relative to sub/.
    dir.write("sub/deeper/unused.net", UNUSED);
    dir.write("sub/deeper/warn.net", WARNING);
    let (_, lines) = short(&dir, &[]);
    assert_eq!(
        lines,
        [
            "<tmp>/sub/deeper/unused.net:3:5: error[L0013]",
            "<tmp>/sub/unused.net:3:5: warning[L0013]",
            "<tmp>/warn.net:6:52: warning[W0306]",
            "checked 6 files: 1 error, 2 warnings"
        ]
    );
    // A file named alone finds the same file.
    let run = check(&["--format", "short"], &[&dir.path("sub/deeper/unused.net")]);
    assert!(dir.redact(&run.out).starts_with("<tmp>/sub/deeper/unused.net:3:5: error[L0013]"), "{}", run.out);
}

#[test]
fn imported_files_take_their_own_nearest_file() {
    let dir = TempDir::new("imports");
    // The project's root (imports stay inside it), which sets no level.
    dir.write("netc.toml", "");
    dir.write("lib/netc.toml", "[lints]\nunused = \"allow\"\n");
    dir.write("lib/layers.net", "block head(x) {\n    h = relu(x)\n    return linear(x, 4)\n}\n");
    let main = dir.write(
        "app/main.net",
        "use \"../lib/layers.net\"\n\nmodel m() {\n    input x: f32[N, 8]\n    h = relu(x)\n    return head(x)\n}\n",
    );
    let run = check(&["--format", "short", "--color", "never"], &[&main]);
    let out = dir.redact(&run.out);
    assert!(out.starts_with("<tmp>/app/main.net:5:5: warning[L0013]: unused variable `h`\n"), "{out}");
    assert!(!out.contains("layers.net"), "{out}");
    assert!(out.ends_with("checked 2 files: 0 errors, 1 warning\n"), "{out}");
}

#[test]
fn sarif_and_github_carry_config_diagnostics() {
    let dir = TempDir::new("formats");
    dir.write("netc.toml", "[lints]\nunsued = \"allow\"\n");
    dir.write("unused.net", UNUSED);
    let run = check(&["--format", "github"], &[&dir.path]);
    let out = dir.redact(&run.out);
    assert!(
        out.starts_with(
            "::warning file=<tmp>/netc.toml,line=2,col=1,endLine=2,endColumn=7,title=W0404 unknown-lint-in-config::"
        ),
        "{out}"
    );
    let run = check(&["--format", "sarif"], &[&dir.path]);
    let log: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "W0404");
    let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().expect("uri");
    assert!(uri.starts_with("file:///") && uri.ends_with("/netc.toml"), "{uri}");
}

/// The rule of levels, on its own: the strongest layer that names a diagnostic decides; a
/// warning then takes `warnings` from a stronger layer.
#[test]
fn level_resolution() {
    let layer = |pairs: &[(&str, Level)]| -> BTreeMap<String, Level> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    };
    let unused = Code::Unused.info();
    let level = |layers: &[&BTreeMap<String, Level>]| configured_level(layers, unused, Severity::Warning);
    let empty = layer(&[]);
    assert_eq!(level(&[&empty, &empty]), None);
    assert_eq!(level(&[&layer(&[("warnings", Level::Deny)]), &empty]), Some(Level::Deny));
    // A name beats `warnings` of the same layer and of weaker ones.
    let file = layer(&[("unused", Level::Warn), ("warnings", Level::Deny)]);
    assert_eq!(level(&[&file, &empty]), Some(Level::Warn));
    // ... but not `warnings` of a stronger one.
    assert_eq!(level(&[&file, &layer(&[("warnings", Level::Deny)])]), Some(Level::Deny));
    // `warnings` leaves alone what is allowed or denied.
    let allowed = layer(&[("L0013", Level::Allow)]);
    assert_eq!(level(&[&allowed, &layer(&[("warnings", Level::Deny)])]), Some(Level::Allow));
    // The stronger name wins; the name beats the code within a layer.
    let both = layer(&[("unused", Level::Deny), ("L0013", Level::Allow)]);
    assert_eq!(level(&[&both, &empty]), Some(Level::Deny));
    assert_eq!(level(&[&both, &layer(&[("L0013", Level::Warn)])]), Some(Level::Warn));
    // `warnings` does not reach help-level lints, unless a name makes them warnings.
    let help = Code::LinearDominates.info();
    let deny_all = layer(&[("warnings", Level::Deny)]);
    assert_eq!(configured_level(&[&deny_all], help, Severity::Help), None);
    let warn_it = layer(&[("linear-dominates-parameters", Level::Warn)]);
    assert_eq!(configured_level(&[&warn_it, &deny_all], help, Severity::Help), Some(Level::Deny));
}
