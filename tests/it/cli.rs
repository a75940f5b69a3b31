//! The command line, run in-process through `netc::cli::run` on files written to fresh
//! temporary directories: exit codes, file discovery, imports from disk, the three output
//! formats, colour, and the usage errors. One smoke test runs the real binary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system's temporary directory, removed on drop.
pub(crate) struct TempDir {
    pub(crate) path: PathBuf,
}

impl TempDir {
    pub(crate) fn new(test: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let unique = format!(
            "netc-cli-{}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
        );
        let path = std::env::temp_dir().join(unique).join(test);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir { path }
    }

    /// Writes `contents` to `name` (a relative path; parent directories are created).
    pub(crate) fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path.join(name);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create directories");
        std::fs::write(&path, contents).expect("write a file");
        path
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// `text` with this directory's path replaced by `<tmp>`, for snapshots.
    pub(crate) fn redact(&self, text: &str) -> String {
        let prefix = self.path.to_string_lossy().replace('\\', "/");
        text.replace(&prefix, "<tmp>")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let root = self.path.parent().expect("the unique directory");
        let _ = std::fs::remove_dir_all(root);
    }
}

/// What a run of netc printed, and its exit code.
pub(crate) struct Run {
    pub(crate) code: u8,
    pub(crate) out: String,
    pub(crate) err: String,
}

/// Runs `netc ARGS...` in-process, with stdout not a terminal.
pub(crate) fn netc<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    run_with_terminal(args, false)
}

fn run_with_terminal<I, S>(args: I, terminal: bool) -> Run
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let mut argv: Vec<OsString> = vec!["netc".into()];
    argv.extend(args.into_iter().map(Into::into));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(argv, &mut out, &mut err, terminal);
    let out = String::from_utf8(out).expect("stdout is UTF-8");
    let err = String::from_utf8(err).expect("stderr is UTF-8");
    Run { code, out, err }
}

/// `netc check [flags] paths...`.
pub(crate) fn check(flags: &[&str], paths: &[&Path]) -> Run {
    let mut args: Vec<OsString> = vec!["check".into()];
    args.extend(flags.iter().map(OsString::from));
    args.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    netc(args)
}

const CLEAN: &str = "\
block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    s = x
    if stride != 1 {
        s = batchnorm(conv2d(x, planes, k=1, stride=stride, bias=false))
    }
    return relu(y + s)
}

model net(classes: int = 10) {
    input x: f32[N, 3, 32, 32]
    y = basic(x, 64, stride=2)
    return linear(flatten(adaptive_avgpool2d(y, 1)), classes)
}

infer serve { model net(); batch 1; no_grad; eval; budget 64 MiB }
";

/// Three errors of different layers: a name, a keyword argument and a syntax error.
const ERRORS: &str = "\
block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1)))
    return relu(y + z)
}

model net(classes: int = 10) {
    input x: f32[N, 3, 32, 32]
    y = basic(x, 64, stride=2)
    y = linear(flatten(y) classes)
    return y
}
";

/// Only a warning: `margin` without `budget`.
pub(crate) const WARNING: &str = "\
model net() {
    input x: f32[N, 8]
    return linear(x, 2)
}

infer serve { model net(); batch 1; no_grad; eval; margin 1.2 }
";

// ---------------------------------------------------------------------------------------
// Exit codes

#[test]
fn clean_file_exits_0() {
    let dir = TempDir::new("clean");
    let file = dir.write("clean.net", CLEAN);
    let run = check(&[], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(run.out, "checked 1 file: no problems found\n");
    assert_eq!(run.err, "");
}

#[test]
fn file_with_errors_exits_1() {
    let dir = TempDir::new("errors");
    let file = dir.write("errors.net", ERRORS);
    let run = check(&["--color", "never"], &[&file]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert!(run.out.ends_with("checked 1 file: 3 errors, 0 warnings\n"), "{}", run.out);
    assert_eq!(run.err, "");
}

#[test]
fn warnings_alone_exit_0_and_deny_makes_them_errors() {
    let dir = TempDir::new("warnings");
    let file = dir.write("warn.net", WARNING);
    let run = check(&["--format", "short"], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert!(run.out.contains("warning[W0306]"), "{}", run.out);
    assert!(run.out.ends_with("checked 1 file: 0 errors, 1 warning\n"), "{}", run.out);

    let denied = check(&["--format", "short", "-D", "warnings"], &[&file]);
    assert_eq!(denied.code, 1, "{}", denied.out);
    assert!(denied.out.contains("error[W0306]"), "{}", denied.out);

    let allowed = check(&["--format", "short", "-A", "ineffective-setting"], &[&file]);
    assert_eq!(allowed.code, 0);
    assert_eq!(allowed.out, "checked 1 file: no problems found\n");

    let unknown = check(&["-A", "ineffective-settings"], &[&file]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.err.contains("did you mean `ineffective-setting`?"), "{}", unknown.err);
    assert_eq!(unknown.out, "");
}

#[test]
fn nonexistent_path_exits_2() {
    let dir = TempDir::new("missing");
    let run = check(&[], &[&dir.path("missing.net")]);
    assert_eq!(run.code, 2);
    assert!(run.err.contains("no such file or directory"), "{}", run.err);
    assert!(run.err.contains("missing.net"), "{}", run.err);
    assert_eq!(run.out, "");
}

/// Makes `path` a file that exists but cannot be read: no permissions, or, where that does
/// not stop this process (root), a link to `/proc/self/mem` (reading it fails with EIO).
/// `None` where neither works.
fn make_unreadable(dir: &TempDir, name: &str) -> Option<PathBuf> {
    let path = dir.write(name, "model m() {\n}\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).ok()?;
        if std::fs::read(&path).is_err() {
            return Some(path);
        }
        std::fs::remove_file(&path).ok()?;
        std::os::unix::fs::symlink("/proc/self/mem", &path).ok()?;
        if path.exists() && std::fs::read(&path).is_err() {
            return Some(path);
        }
    }
    None
}

#[test]
fn unreadable_file_exits_2_and_the_others_are_checked() {
    let dir = TempDir::new("unreadable");
    let Some(unreadable) = make_unreadable(&dir, "unreadable.net") else {
        eprintln!("skipped: cannot make an unreadable file on this system");
        return;
    };
    let errors = dir.write("errors.net", ERRORS);
    let clean = dir.write("clean.net", CLEAN);
    let run = check(&["--format", "short"], &[&unreadable, &errors, &clean]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    assert!(out.contains("<tmp>/unreadable.net:1:1: error[E0401]: cannot read `<tmp>/unreadable.net`"), "{out}");
    assert!(out.contains("<tmp>/errors.net:3:21: error[E0204]"), "{out}");
    assert!(out.ends_with("checked 2 files: 4 errors, 0 warnings\n"), "{out}");
}

#[test]
fn non_utf8_file_exits_2_and_the_others_are_checked() {
    let dir = TempDir::new("latin1");
    let latin1 = dir.write("latin1.net", b"# caf\xe9\nmodel m() {\n    return x\n}\n");
    let errors = dir.write("errors.net", ERRORS);
    let run = check(&["--format", "short"], &[&latin1, &errors]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    // The position of the first invalid byte.
    assert!(out.contains("<tmp>/latin1.net:1:6: error[E0402]: `<tmp>/latin1.net` is not valid UTF-8"), "{out}");
    assert!(out.contains("<tmp>/errors.net:3:21: error[E0204]"), "{out}");

    // The human format shows the file, decoded lossily.
    let human = check(&["--color", "never"], &[&latin1]);
    assert_eq!(human.code, 2);
    assert!(human.out.contains("invalid UTF-8 starts here"), "{}", human.out);
}

// ---------------------------------------------------------------------------------------
// Finding files

#[test]
fn directories_expand_to_their_net_files_sorted_skipping_hidden_ones() {
    let dir = TempDir::new("tree");
    let error = |name: &str| format!("model {name}() {{\n    input x: f32[N]\n    return undefined_{name}\n}}\n");
    dir.write("b.net", error("b"));
    dir.write("a.net", error("a"));
    dir.write("sub/c.net", error("c"));
    dir.write("sub/deeper/d.net", error("d"));
    dir.write("z.net", error("z"));
    dir.write(".hidden/h.net", error("h"));
    dir.write("sub/.git/g.net", error("g"));
    dir.write("notes.txt", "not a .net file");
    dir.write("net", "no extension");
    dir.write("a.net.bak", error("bak"));
    let run = check(&["--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    let files: Vec<&str> = out.lines().filter_map(|l| l.split(':').next()).filter(|f| f.ends_with(".net")).collect();
    assert_eq!(files, ["<tmp>/a.net", "<tmp>/b.net", "<tmp>/sub/c.net", "<tmp>/sub/deeper/d.net", "<tmp>/z.net"]);
    assert!(out.ends_with("checked 5 files: 5 errors, 0 warnings\n"), "{out}");
}

#[test]
fn a_file_and_its_directory_are_checked_once() {
    let dir = TempDir::new("twice");
    let file = dir.write("errors.net", ERRORS);
    let run = check(&["--format", "short"], &[&file, &dir.path, &file]);
    assert_eq!(run.code, 1);
    assert!(run.out.ends_with("checked 1 file: 3 errors, 0 warnings\n"), "{}", run.out);
}

#[test]
fn use_follows_imports_from_disk() {
    let dir = TempDir::new("imports");
    dir.write(
        "lib/layers.net",
        "use \"norm.net\"\n\nblock conv_bn(x, c: int) {\n    return norm(conv2d(x, c, k=3, pad=1))\n}\n",
    );
    dir.write("lib/norm.net", "block norm(x) {\n    return relu(batchnorm(x))\n}\n");
    dir.write("lib/unused.net", "block unused(x) {\n    return undefined_thing\n}\n");
    let main = dir.write(
        "main.net",
        "use \"lib/layers.net\"\n\nmodel m() {\n    input x: f32[N, 3, 32, 32]\n    return conv_bn(x, 16)\n}\n",
    );
    let run = check(&[], &[&main]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    // main.net, lib/layers.net and lib/norm.net (found through lib/layers.net); not lib/unused.net.
    assert_eq!(run.out, "checked 3 files: no problems found\n");

    // An error in an imported file is reported in that file.
    dir.write("lib/norm.net", "block norm(x) {\n    return relu(batchnorm(x), inplace=maybe)\n}\n");
    let run = check(&["--format", "short"], &[&main]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert!(dir.redact(&run.out).starts_with("<tmp>/lib/norm.net:2:39: error[E0204]"), "{}", run.out);

    // A missing import is an error at the `use`.
    std::fs::remove_file(dir.path("lib/norm.net")).expect("remove");
    let run = check(&["--format", "short"], &[&main]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    assert!(out.starts_with("<tmp>/lib/layers.net:1:5: error[E0201]: cannot find file `norm.net`"), "{out}");
}

#[test]
fn import_cycles_through_disk_are_reported() {
    let dir = TempDir::new("cycle");
    let a = dir.write("a.net", "use \"b.net\"\nblock fa(x) {\n    return x\n}\n");
    dir.write("b.net", "use \"a.net\"\nblock fb(x) {\n    return x\n}\n");
    let run = check(&["--format", "short"], &[&a]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert!(run.out.contains("error[E0203]: import cycle"), "{}", run.out);
    assert!(run.out.contains("checked 2 files"), "{}", run.out);
}

// ---------------------------------------------------------------------------------------
// Formats

#[test]
fn short_format_is_one_line_per_diagnostic() {
    let dir = TempDir::new("short");
    let file = dir.write("errors.net", ERRORS);
    let run = check(&["--format", "short", "--color", "never"], &[&file]);
    assert_eq!(run.code, 1);
    let lines: Vec<&str> = run.out.lines().collect();
    assert_eq!(lines.len(), 4, "three diagnostics and the summary:\n{}", run.out);
    let name = file.to_string_lossy().replace('\\', "/");
    for line in &lines[..3] {
        // file:line:col: error[CODE]: message
        let rest = line.strip_prefix(&format!("{name}:")).unwrap_or_else(|| panic!("{line}"));
        let mut parts = rest.splitn(3, ':');
        let line_no = parts.next().expect("line");
        let col = parts.next().expect("column");
        let tail = parts.next().expect("rest");
        assert!(line_no.parse::<u32>().is_ok_and(|n| n >= 1), "{line}");
        assert!(col.parse::<u32>().is_ok_and(|n| n >= 1), "{line}");
        let tail = tail.strip_prefix(" error[E").unwrap_or_else(|| panic!("{line}"));
        let (code, message) = tail.split_once("]: ").unwrap_or_else(|| panic!("{line}"));
        assert!(code.len() == 4 && code.chars().all(|c| c.is_ascii_digit()), "{line}");
        assert!(!message.is_empty(), "{line}");
    }
    assert_eq!(lines[3], "checked 1 file: 3 errors, 0 warnings");
}

#[test]
fn json_format() {
    let dir = TempDir::new("json");
    let errors = dir.write("errors.net", ERRORS);
    let warning = dir.write("warn.net", WARNING);
    let clean = dir.write("clean.net", CLEAN);
    let run = check(&["--format", "json"], &[&errors, &warning, &clean]);
    assert_eq!(run.code, 1, "{}", run.err);
    let json: serde_json::Value = serde_json::from_str(&run.out).expect("the output is JSON");
    assert_eq!(json["version"], 1);
    assert_eq!(json["summary"], serde_json::json!({ "files": 3, "errors": 3, "warnings": 1 }));
    let diagnostics = json["diagnostics"].as_array().expect("an array");
    assert_eq!(diagnostics.len(), 4);
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().expect("a code")).collect();
    assert_eq!(codes, ["E0204", "E0209", "E0104", "W0306"], "{}", run.out);
    let errors_name = errors.to_string_lossy().replace('\\', "/");
    for d in diagnostics {
        for key in ["code", "name", "severity", "message", "file", "start", "end", "labels"] {
            assert!(d.get(key).is_some(), "`{key}` missing in {d}");
        }
        let labels = d["labels"].as_array().expect("labels");
        assert!(!labels.is_empty());
        assert_eq!(labels[0]["primary"], true);
        assert_eq!(d["file"], labels[0]["file"]);
        assert_eq!(d["start"], labels[0]["start"]);
        assert_eq!(d["end"], labels[0]["end"]);
        for label in labels {
            assert!(label["range"]["start"].as_u64() <= label["range"]["end"].as_u64(), "{label}");
        }
    }
    let first = &diagnostics[0];
    assert_eq!(first["name"], "undefined-name");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["message"], "undefined name `z`");
    assert_eq!(first["file"], errors_name.as_str());
    assert_eq!(first["start"], serde_json::json!({ "line": 3, "column": 21 }));
    assert_eq!(first["end"], serde_json::json!({ "line": 3, "column": 22 }));
    assert_eq!(diagnostics[3]["severity"], "warning");
    assert_eq!(diagnostics[3]["name"], "ineffective-setting");

    // A clean run is a document too.
    let run = check(&["--format", "json"], &[&clean]);
    assert_eq!(run.code, 0);
    let json: serde_json::Value = serde_json::from_str(&run.out).expect("the output is JSON");
    assert_eq!(json["diagnostics"], serde_json::json!([]));
    assert_eq!(json["summary"], serde_json::json!({ "files": 1, "errors": 0, "warnings": 0 }));
}

/// Two lints: L0006 `linear-dominates-parameters` (help, with a `%` in its message) and
/// L0001 `budget-exceeded` (an error).
pub(crate) const OVER: &str = "\
model m() {
    input x: f32[N, 1024]
    return linear(x, 1024)
}
infer serve { model m()  batch 64  no_grad  budget 1 MiB }
";

/// A scenario that runs without `no_grad`: L0003 `missing-no-grad`, which has a fix.
const MISSING_NO_GRAD: &str = "use std.models.resnet\ninfer serve { model resnet18()  batch 8  eval }\n";

/// Errors after a character that takes two UTF-16 code units (and one `char`), a secondary
/// label, and a `%` in a message.
const UNICODE: &str =
    "block b(x) {\n    y = linear(\"\u{1F600}\", zz)\n    return y\n}\nblock b(x) {\n    return x % 2\n}\n";

/// The official SARIF 2.1.0 schema (tests/fixtures/sarif/README.md), formats checked.
fn sarif_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sarif/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
    // The OASIS Standard's language-tag pattern has a stray `]`, which is no ECMA-262 regex
    // (the validator checks the schema against its meta-schema); the approved errata replace
    // it with this one. netc writes no `language`.
    let fixed = serde_json::json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
    for definition in ["run", "toolComponent"] {
        let pattern = &mut schema["definitions"][definition]["properties"]["language"]["pattern"];
        assert_eq!(pattern, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$", "the vendored schema changed");
        *pattern = fixed.clone();
    }
    jsonschema::options().should_validate_formats(true).build(&schema).expect("the schema compiles")
}

fn assert_valid_sarif(validator: &jsonschema::Validator, log: &serde_json::Value) {
    let errors: Vec<String> = validator.iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "invalid SARIF:\n{}\n{log:#}", errors.join("\n"));
}

#[test]
fn sarif_format_is_valid_sarif_2_1_0() {
    let validator = sarif_validator();
    // The validator does reject what is not SARIF.
    let broken = serde_json::json!({
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "netc", "helpUri": "spec/x.md" } },
            "results": [{ "level": "fatal", "message": { "text": "m" } }],
        }],
    });
    assert!(validator.iter_errors(&broken).count() >= 2, "the schema must reject a bad level and a relative helpUri");

    let dir = TempDir::new("sarif");
    let errors = dir.write("errors.net", ERRORS);
    let warning = dir.write("warn.net", WARNING);
    let unicode = dir.write("unicode.net", UNICODE);
    let clean = dir.write("clean.net", CLEAN);
    let run = check(&["--format", "sarif", "--color", "always"], &[&errors, &warning, &unicode, &clean]);
    assert_eq!(run.code, 1, "{}", run.err);
    assert!(!run.out.contains('\x1b'), "SARIF is never coloured");
    let log: serde_json::Value = serde_json::from_str(&run.out).expect("the output is JSON");
    assert_valid_sarif(&validator, &log);
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let run0 = &runs[0];
    assert_eq!(run0["columnKind"], "utf16CodeUnits");

    // The tool, with a rule for every code.
    let driver = &run0["tool"]["driver"];
    assert_eq!(driver["name"], "netc");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), netc::diagnostics::Code::ALL.len());
    for (rule, code) in rules.iter().zip(netc::diagnostics::Code::ALL) {
        let info = code.info();
        assert_eq!(rule["id"], info.code);
        assert_eq!(rule["name"], info.name);
        assert_eq!(rule["shortDescription"]["text"], info.summary);
        let level = match info.severity {
            netc::diagnostics::Severity::Error => "error",
            netc::diagnostics::Severity::Warning => "warning",
            netc::diagnostics::Severity::Help => "note",
        };
        assert_eq!(rule["defaultConfiguration"]["level"], level, "{}", info.code);
        let page = rule["properties"]["documentation"].as_str().expect("the page");
        assert!(rule["help"]["text"].as_str().expect("help").contains(page), "{rule}");
    }

    // The results, in the order of the other formats.
    let results = run0["results"].as_array().expect("results");
    let ids: Vec<&str> = results.iter().map(|r| r["ruleId"].as_str().expect("ruleId")).collect();
    assert_eq!(ids, ["E0204", "E0209", "E0104", "W0306", "E0211", "E0204", "E0205", "E0221"], "{}", run.out);
    for result in results {
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
    let first = &results[0];
    assert_eq!(first["level"], "error");
    assert_eq!(first["message"]["text"], "undefined name `z`\nhelp: did you mean `x`?");
    let location = &first["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], format!("file://{}", errors.to_string_lossy().replace('\\', "/")));
    assert_eq!(
        location["region"],
        serde_json::json!({ "startLine": 3, "startColumn": 21, "endLine": 3, "endColumn": 22 })
    );
    assert_eq!(results[3]["level"], "warning");

    // Columns count UTF-16 code units: the emoji is two, so `zz` is one column further right
    // than in the JSON format, which counts characters.
    let zz = &results[5]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(zz, &serde_json::json!({ "startLine": 2, "startColumn": 22, "endLine": 2, "endColumn": 24 }));
    let json = check(&["--format", "json"], &[&unicode]);
    let json: serde_json::Value = serde_json::from_str(&json.out).expect("JSON");
    assert_eq!(json["diagnostics"][1]["start"], serde_json::json!({ "line": 2, "column": 21 }));

    // Secondary labels are related locations; notes and help follow the message.
    let duplicate = &results[6];
    assert_eq!(duplicate["message"]["text"], "`b` is defined twice\nhelp: rename one of them");
    assert_eq!(duplicate["locations"][0]["message"]["text"], "block `b` redefined here");
    let related = duplicate["relatedLocations"].as_array().expect("related locations");
    assert_eq!(related.len(), 1);
    assert_eq!(related[0]["message"]["text"], "first defined here (block)");
    assert_eq!(related[0]["physicalLocation"]["region"]["startLine"], 1);
    assert!(results[0].get("relatedLocations").is_none());
    assert!(results[0].get("fixes").is_none());

    // A clean run is a log with no results.
    let run = check(&["--format", "sarif"], &[&clean]);
    assert_eq!(run.code, 0);
    let log: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    assert_valid_sarif(&validator, &log);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
}

/// Every rule names a page that exists: a lint's page, or a section of spec/diagnostics.md
/// (by GitHub's heading anchor).
#[test]
fn sarif_rules_name_pages_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let catalogue = std::fs::read_to_string(root.join("spec/diagnostics.md")).expect("the catalogue");
    let anchors: std::collections::HashSet<String> = catalogue
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|heading| {
            let text = heading.trim_start_matches('#').trim().to_lowercase();
            let kept: String = text.chars().filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_')).collect();
            kept.replace(' ', "-")
        })
        .collect();
    for code in netc::diagnostics::Code::ALL {
        let page = netc::render::sarif::documentation_path(code.info());
        match page.split_once('#') {
            Some((file, anchor)) => {
                assert_eq!(file, "spec/diagnostics.md");
                assert!(anchors.contains(anchor), "no section `{anchor}` in spec/diagnostics.md");
            }
            None => assert!(root.join(&page).is_file(), "{page} does not exist"),
        }
    }
}

#[test]
fn sarif_fixes_are_replacements() {
    let dir = TempDir::new("sarif-fix");
    let file = dir.write("serve.net", MISSING_NO_GRAD);
    let run = check(&["--format", "sarif"], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    let log: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    assert_valid_sarif(&sarif_validator(), &log);
    let results = log["runs"][0]["results"].as_array().expect("results");
    let result = results.iter().find(|r| r["ruleId"] == "L0003").expect("missing-no-grad");
    assert_eq!(result["level"], "warning");
    let fixes = result["fixes"].as_array().expect("fixes");
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0]["description"]["text"], "add `no_grad`");
    let changes = fixes[0]["artifactChanges"].as_array().expect("changes");
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["artifactLocation"], result["locations"][0]["physicalLocation"]["artifactLocation"]);
    let replacement = &changes[0]["replacements"][0];
    // An insertion after `eval`: an empty region where the text goes.
    let column = MISSING_NO_GRAD.lines().nth(1).expect("line 2").find("eval").expect("eval") + "eval".len() + 1;
    let at = serde_json::json!({ "startLine": 2, "startColumn": column, "endLine": 2, "endColumn": column });
    assert_eq!(replacement["deletedRegion"], at);
    assert_eq!(replacement["insertedContent"]["text"], "  no_grad");

    // Applying the replacement fixes the lint.
    let line = MISSING_NO_GRAD.lines().nth(1).expect("line 2");
    let fixed_line = format!("{}  no_grad{}", &line[..column - 1], &line[column - 1..]);
    let fixed = MISSING_NO_GRAD.replace(line, &fixed_line);
    std::fs::write(&file, fixed).expect("write");
    let run = check(&["--format", "sarif"], &[&file]);
    let log: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    assert!(
        log["runs"][0]["results"].as_array().expect("results").iter().all(|r| r["ruleId"] != "L0003"),
        "{}",
        run.out
    );
}

#[test]
fn github_format_is_workflow_commands() {
    let dir = TempDir::new("github");
    let errors = dir.write("errors.net", ERRORS);
    let warning = dir.write("warn.net", WARNING);
    // Commas, colons and percent signs in a file name are escaped in the `file` property.
    let odd = dir.write("a,b:c%.net", UNICODE);
    let run = check(&["--format", "github", "--color", "always"], &[&errors, &warning, &odd]);
    assert_eq!(run.code, 1, "{}", run.err);
    let out = dir.redact(&run.out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 9, "eight diagnostics and the summary:\n{out}");
    assert_eq!(
        lines[0],
        "::error file=<tmp>/errors.net,line=3,col=21,endLine=3,endColumn=22,title=E0204 undefined-name::undefined name `z`%0Ahelp: did you mean `x`?"
    );
    assert!(lines[3].starts_with("::warning file=<tmp>/warn.net,line=6,"), "{}", lines[3]);
    assert!(lines[3].contains(",title=W0306 ineffective-setting::"), "{}", lines[3]);
    let odd_name = "<tmp>/a%2Cb%3Ac%25.net";
    assert!(
        lines[4].starts_with(&format!(
            "::error file={odd_name},line=2,col=16,endLine=2,endColumn=19,title=E0211 argument-kind-mismatch::"
        )),
        "{}",
        lines[4]
    );
    // Columns count characters, as in the JSON format.
    assert!(lines[5].starts_with(&format!("::error file={odd_name},line=2,col=21,")), "{}", lines[5]);
    assert_eq!(
        lines[6],
        format!(
            "::error file={odd_name},line=5,col=7,endLine=5,endColumn=8,title=E0205 duplicate-definition::`b` is defined twice%0Ahelp: rename one of them"
        )
    );
    // `%` in a message is escaped; `:` and `,` are not.
    assert!(
        lines[7].ends_with("title=E0221 invalid-operand::`%25` cannot combine a tensor and an integer"),
        "{}",
        lines[7]
    );
    for line in &lines[..8] {
        assert!(!line.contains('\r') && !line.contains('\x1b'), "{line:?}");
    }
    assert_eq!(lines[8], "checked 3 files: 7 errors, 1 warning");

    // Help-level lints are notices; a clean run prints the summary alone.
    let over = dir.write("over.net", OVER);
    let run = check(&["--format", "github"], &[&over]);
    let out = dir.redact(&run.out);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("::notice file=<tmp>/over.net,line=3,col=12,"), "{out}");
    assert!(lines[0].contains("::this linear layer holds 100 %25 of the model's parameters"), "{out}");
    assert!(lines[1].starts_with("::error file=<tmp>/over.net,line=5,"), "{out}");
    assert!(lines[1].contains(",title=L0001 budget-exceeded::"), "{out}");
    let clean = dir.write("clean.net", CLEAN);
    let run = check(&["--format", "github"], &[&clean]);
    assert_eq!((run.code, run.out.as_str()), (0, "checked 1 file: 0 errors, 0 warnings\n"));
}

#[test]
fn color() {
    let dir = TempDir::new("color");
    let file = dir.write("errors.net", ERRORS);
    for format in ["human", "short"] {
        let never = check(&["--format", format, "--color", "never"], &[&file]);
        assert!(!never.out.contains('\x1b'), "{format} --color never has escapes:\n{}", never.out);
        let always = check(&["--format", format, "--color", "always"], &[&file]);
        assert!(always.out.contains('\x1b'), "{format} --color always has no escapes:\n{}", always.out);
        assert_eq!(never.code, always.code);
        // `auto` colours only a terminal (NO_COLOR aside); the tests' output is not one.
        let mut args = vec!["check", "--format", format, "--color", "auto"];
        let path = file.to_string_lossy().into_owned();
        args.push(&path);
        let auto = run_with_terminal(args, false);
        assert!(!auto.out.contains('\x1b'), "{format} --color auto off a terminal has escapes");
    }
    let json = check(&["--format", "json", "--color", "always"], &[&file]);
    assert!(!json.out.contains('\x1b'), "JSON is never coloured");
}

#[test]
fn human_and_short_output_snapshots() {
    let dir = TempDir::new("snap");
    let file = dir.write("errors.net", ERRORS);
    let human = check(&["--color", "never"], &[&file]);
    assert_eq!(human.code, 1);
    insta::assert_snapshot!("human", dir.redact(&human.out));
    let short = check(&["--format", "short", "--color", "never"], &[&file]);
    assert_eq!(short.code, 1);
    insta::assert_snapshot!("short", dir.redact(&short.out));
}

// ---------------------------------------------------------------------------------------
// Reports of programs with errors (issue 19)

/// Three scenarios of one model: `ok` fits, `over` is over its budget (L0001, an error-level
/// lint), `bad` names an unknown device (E0304): it cannot be simulated.
const MIXED: &str = "\
model m() {
    input x: f32[N, 1024]
    return linear(x, 1024)
}
infer ok { model m()  batch 1  no_grad  eval }
infer over { model m()  batch 64  no_grad  eval  budget 1 MiB }
infer bad { model m()  batch 1  no_grad  eval  device rtx9999 }
";

/// `netc report` shows every scenario that simulates, whatever the errors of the others;
/// the errors go to standard error and fail the run.
#[test]
fn report_shows_every_scenario_that_simulates() {
    let dir = TempDir::new("report-errors");
    let file = dir.write("m.net", MIXED);
    let run = netc(["report".as_ref(), file.as_os_str(), "--scenario".as_ref(), "ok".as_ref()]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    assert!(out.starts_with("infer scenario `ok` (<tmp>/m.net): model `m`, batch 1, device cpu\n"), "{out}");
    assert!(out.contains("  total 4.0 MiB (no budget)\n"), "{out}");
    let err = dir.redact(&run.err);
    assert!(err.contains("L0001") && err.contains("E0304"), "{err}");
    assert!(err.ends_with("error: 2 errors\n"), "{err}");

    // Every scenario: `bad` in its place, saying why.
    let run = netc(["report".as_ref(), file.as_os_str(), "--color".as_ref(), "never".as_ref()]);
    assert_eq!(run.code, 1);
    let out = dir.redact(&run.out);
    let headings: Vec<&str> = out.lines().filter(|l| !l.starts_with(' ') && !l.is_empty()).collect();
    assert_eq!(
        headings,
        [
            "infer scenario `ok` (<tmp>/m.net): model `m`, batch 1, device cpu",
            "infer scenario `over` (<tmp>/m.net): model `m`, batch 64, device cpu",
            "infer scenario `bad` (<tmp>/m.net): not simulated: 1 error stops its simulation",
        ]
    );
    assert!(out.ends_with("not simulated: 1 error stops its simulation\n  <tmp>/m.net:7:55: error[E0304]: unknown device `rtx9999`\n\n"), "{out}");
    assert!(dir.redact(&run.err).ends_with("error: 2 errors; 1 scenario not simulated\n"), "{}", run.err);

    // Markdown: a heading per scenario, as the editor's report view splits it.
    let run = netc(["report".as_ref(), file.as_os_str(), "--format".as_ref(), "markdown".as_ref()]);
    assert_eq!(run.code, 1);
    let out = dir.redact(&run.out);
    assert!(out.contains("### infer scenario `bad` (<tmp>/m.net): not simulated: 1 error stops its simulation\n\n- `<tmp>/m.net:7:55` error[E0304]: unknown device `rtx9999`\n"), "{out}");
    assert_eq!(out.matches("### ").count(), 3, "{out}");
}

/// The JSON report lists the scenario that cannot be simulated in its place, with an `error`
/// and the errors; the others are complete (schema version 2, spec/report.md).
#[test]
fn report_json_lists_a_scenario_that_cannot_be_simulated_in_its_place() {
    let dir = TempDir::new("report-json-errors");
    let file = dir.write("m.net", MIXED);
    let run = netc(["report".as_ref(), file.as_os_str(), "--format".as_ref(), "json".as_ref()]);
    assert_eq!(run.code, 1, "{}", run.err);
    assert!(run.err.contains("E0304"), "the errors go to standard error: {}", run.err);
    let json: serde_json::Value = serde_json::from_str(&dir.redact(&run.out)).expect("the output is JSON");
    assert_eq!(json["version"], 2);
    let scenarios = json["scenarios"].as_array().expect("scenarios");
    let names: Vec<&str> = scenarios.iter().map(|s| s["name"].as_str().expect("a name")).collect();
    assert_eq!(names, ["ok", "over", "bad"]);
    for s in &scenarios[..2] {
        assert!(s.get("error").is_none() && s["peak_bytes"].as_i64().is_some_and(|b| b > 0), "{s}");
    }
    assert_eq!(
        scenarios[2],
        serde_json::json!({
            "name": "bad",
            "kind": "infer",
            "file": "<tmp>/m.net",
            "error": "1 error stops its simulation",
            "errors": [{
                "code": "E0304",
                "name": "invalid-setting-value",
                "message": "unknown device `rtx9999`",
                "file": "<tmp>/m.net",
                "line": 7,
                "column": 55,
            }],
        })
    );
}

/// An error in the model stops every scenario of it; the report lists them all, each with
/// the error, and `--scenario` still finds a scenario that is not simulated.
#[test]
fn an_error_in_the_model_stops_every_scenario() {
    let dir = TempDir::new("report-model-error");
    let file = dir.write("m.net", MIXED.replace("linear(x, 1024)", "linear(y, 1024)"));
    let run = netc(["report".as_ref(), file.as_os_str(), "--scenario".as_ref(), "ok".as_ref()]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert_eq!(
        dir.redact(&run.out),
        "infer scenario `ok` (<tmp>/m.net): not simulated: 1 error stops its simulation\n  <tmp>/m.net:3:19: error[E0204]: undefined name `y`\n\n"
    );
    let all = netc(["report".as_ref(), file.as_os_str(), "--format".as_ref(), "json".as_ref()]);
    let json: serde_json::Value = serde_json::from_str(&all.out).expect("JSON");
    let errors: Vec<usize> = json["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| s["errors"].as_array().map_or(0, Vec::len))
        .collect();
    // `bad` has its own error too.
    assert_eq!(errors, [1, 1, 2]);
}

/// The device is a budget: ResNet-50 trained at batch 512 needs about 42 GiB, which no
/// `budget` checks, on a 24 GB card (L0015, an error); a budget over the device is a warning
/// (L0016).
#[test]
fn a_scenario_that_does_not_fit_its_device_fails_check() {
    let dir = TempDir::new("device");
    let big = dir.write(
        "big.net",
        "use std.models.resnet\ntrain big { model resnet50()  batch 512  optimizer adam  device rtx4090 }\n",
    );
    let run = check(&["--format", "short"], &[&big]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert_eq!(
        dir.redact(&run.out),
        "<tmp>/big.net:2:58: error[L0015]: scenario `big` needs 41.9 GiB but device `rtx4090` holds 24.0 GiB (over by 17.9 GiB)\n\
         checked 1 file: 1 error, 0 warnings\n"
    );
    let over = dir.write(
        "over.net",
        "use std.models.resnet\ninfer s { model resnet18()  batch 1  no_grad  eval  device t4  budget 16 GiB }\n",
    );
    let run = check(&["--format", "short"], &[&over]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert!(
        run.out.contains(
            "warning[L0016]: the budget of scenario `s`, 16.0 GiB, is more than device `t4` holds (15.0 GiB)"
        ),
        "{}",
        run.out
    );
}

// ---------------------------------------------------------------------------------------
// Conventions (issue 19)

/// `netc explain` shows a lint's page or a code's section of the catalogue, offline, by code
/// or name; every lint's page is embedded, as spec/lints/ has it.
#[test]
fn explain_shows_the_documentation_of_a_code() {
    let root = crate::support::root();
    for code in netc::diagnostics::Code::ALL.iter().map(|c| c.info()).filter(|i| i.is_lint()) {
        let page = std::fs::read_to_string(root.join(format!("spec/lints/{}.md", code.name))).expect("the page");
        for key in [code.code, code.name] {
            let run = netc(["explain", key]);
            assert_eq!((run.code, run.err.as_str()), (0, ""), "{key}");
            assert_eq!(run.out, page, "{key}: the embedded page is stale");
        }
    }
    let run = netc(["explain", "e0304"]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(run.out.starts_with("### E0304 `invalid-setting-value`\n"), "{}", run.out);
    assert!(!run.out.contains("\n### "), "one section: {}", run.out);
    let run = netc(["explain", "budget-exceded"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.err, "error: no diagnostic code or lint `budget-exceded`; did you mean `budget-exceeded`?\n");
    assert_eq!(run.out, "");
}

/// `netc fmt -` formats standard input to standard output; with `--check` it only says
/// whether it is formatted, with `--diff` shows the change; a syntax error prints nothing to
/// standard output (an editor piping its buffer keeps it). `--diff` on files writes nothing.
#[test]
fn fmt_reads_standard_input_and_shows_diffs() {
    let fmt = |args: &[&str], input: &str| {
        let mut argv: Vec<OsString> = vec!["netc".into(), "fmt".into()];
        argv.extend(args.iter().map(OsString::from));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = netc::cli::run_with_input(argv, &mut input.as_bytes(), &mut out, &mut err, false);
        Run { code, out: String::from_utf8(out).expect("UTF-8"), err: String::from_utf8(err).expect("UTF-8") }
    };
    let messy = "model m() {\n  input x: f32[N, 8]\n  return linear(x,4)\n}\n";
    let tidy = "model m() {\n    input x: f32[N, 8]\n    return linear(x, 4)\n}\n";
    let run = fmt(&["-"], messy);
    assert_eq!((run.code, run.out.as_str(), run.err.as_str()), (0, tidy, ""));
    let run = fmt(&["--check", "-"], messy);
    assert_eq!((run.code, run.out.as_str()), (1, "<stdin>\n"));
    assert_eq!(fmt(&["--check", "-"], tidy).code, 0);
    let run = fmt(&["--diff", "-"], messy);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.out,
        "--- <stdin> (now)\n+++ <stdin> (formatted)\n@@ -1,4 +1,4 @@\n model m() {\n-  input x: f32[N, 8]\n-  return linear(x,4)\n+    input x: f32[N, 8]\n+    return linear(x, 4)\n }\n"
    );
    let run = fmt(&["--color", "never", "-"], "model m( {\n");
    assert_eq!((run.code, run.out.as_str()), (1, ""));
    assert!(run.err.contains("<stdin>") && run.err.contains("error: not formatted: syntax errors"), "{}", run.err);
    assert_eq!(fmt(&["-", "x.net"], tidy).code, 2);

    let dir = TempDir::new("fmt-diff");
    let file = dir.write("m.net", messy);
    let run = netc(["fmt".as_ref(), "--diff".as_ref(), file.as_os_str()]);
    assert_eq!(run.code, 1, "{}", run.err);
    assert!(
        dir.redact(&run.out).starts_with("--- <tmp>/m.net (now)\n+++ <tmp>/m.net (formatted)\n@@ -1,4 +1,4 @@\n"),
        "{}",
        run.out
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), messy, "--diff writes nothing");
}

/// A mistyped `--scenario` names the closest scenario.
#[test]
fn a_mistyped_scenario_gets_a_suggestion() {
    let dir = TempDir::new("scenario-typo");
    let file = dir.write("m.net", MIXED);
    let run = netc(["report".as_ref(), file.as_os_str(), "--scenario".as_ref(), "ovr".as_ref()]);
    assert_eq!(run.code, 2);
    assert_eq!(run.err, "error: no scenario named `ovr` in the given files; did you mean `over`?\n");
    assert_eq!(run.out, "");
    let run = netc(["report".as_ref(), file.as_os_str(), "--scenario".as_ref(), "zzzzzz".as_ref()]);
    assert_eq!(run.err, "error: no scenario named `zzzzzz` in the given files (the scenarios are: ok, over, bad)\n");
}

/// Independent errors of a file are reported in one run: an unknown device in one scenario
/// used to stop the elaboration of the whole file, hiding the model's shape errors and the
/// other scenarios' lints.
#[test]
fn independent_errors_are_reported_in_one_run() {
    let dir = TempDir::new("one-pass");
    let text = "\
model m() {
    input x: f32[N, 8]
    return linear(x, 4) + linear(x, 5)
}
infer bad { model m()  batch 1  no_grad  eval  device rtx9999 }
infer ok { model m()  batch 2  no_grad  eval }
";
    let file = dir.write("m.net", text);
    let run = check(&["--format", "short"], &[&file]);
    assert_eq!(run.code, 1);
    let codes: Vec<&str> = run.out.lines().filter_map(|l| l.split_once("error[").map(|(_, r)| &r[..5])).collect();
    assert_eq!(codes, ["E0501", "E0304"], "{}", run.out);
}

// ---------------------------------------------------------------------------------------
// Usage

#[test]
fn version_and_help_exit_0() {
    let version = netc(["--version"]);
    assert_eq!(version.code, 0);
    assert_eq!(version.out, format!("netc {}\n", env!("CARGO_PKG_VERSION")));
    assert_eq!(version.err, "");
    for args in [&["--help"][..], &["-h"], &["help"], &["check", "--help"], &["help", "check"]] {
        let run = netc(args.iter().copied());
        assert_eq!(run.code, 0, "{args:?}: {}", run.err);
        assert!(run.out.contains("Usage: netc"), "{args:?}: {}", run.out);
        assert_eq!(run.err, "");
    }
    assert!(netc(["check", "--help"]).out.contains("--format"));
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[&[&str]] = &[
        &["--frobnicate"],
        &["check", "--frobnicate"],
        &["check", "--format", "xml"],
        &["check", "--color", "sometimes"],
        &["frobnicate"],
        &[],
    ];
    for args in cases {
        let run = netc(args.iter().copied());
        assert_eq!(run.code, 2, "{args:?}");
        assert!(!run.err.is_empty(), "{args:?}: no message");
        assert_eq!(run.out, "", "{args:?}");
    }
    assert!(netc(["check", "--frobnicate"]).err.contains("--frobnicate"));
}

// ---------------------------------------------------------------------------------------
// The real binary

/// `target/<profile>/netc`, next to the directory of this test executable (`deps/`).
pub(crate) fn netc_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = format!("netc{}", std::env::consts::EXE_SUFFIX);
    exe.ancestors().skip(1).take(3).map(|dir| dir.join(&name)).find(|p| p.is_file())
}

#[test]
fn smoke_test_of_the_binary() {
    let Some(binary) = netc_binary() else {
        eprintln!(
            "skipped: the netc binary is not built next to {:?}; run `cargo build -p netc` first",
            std::env::current_exe().ok()
        );
        return;
    };
    let dir = TempDir::new("binary");
    let clean = dir.write("clean.net", CLEAN);
    let errors = dir.write("errors.net", ERRORS);
    let run =
        |path: &Path| std::process::Command::new(&binary).arg("check").arg(path).output().expect("run the netc binary");
    let ok = run(&clean);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "checked 1 file: no problems found\n");
    let failed = run(&errors);
    assert_eq!(failed.status.code(), Some(1), "{}", String::from_utf8_lossy(&failed.stdout));
    // Output to a pipe is not a terminal: no colour.
    assert!(!failed.stdout.contains(&0x1b));
    let missing = run(&dir.path("missing.net"));
    assert_eq!(missing.status.code(), Some(2));
}

/// The README shows what its first command, `netc report examples/articles_cnn.net --scenario
/// serve`, prints: the report the CLI renders for that file under that name, byte for byte.
#[test]
fn the_readme_shows_what_its_first_command_prints() {
    let root = crate::support::root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("the README");
    let command = "cargo run -p netc-cli -- report examples/articles_cnn.net --scenario serve";
    let setup = readme.find("## Set up and run").expect("a set-up section");
    let first = readme[setup..].find("cargo run").map(|at| setup + at).expect("a first command");
    assert!(readme[first..].starts_with(command), "the README's first command is not `{command}`");
    let start = readme[first..].find("```text\n").expect("its output, in a text block") + first + "```text\n".len();
    let shown = &readme[start..start + readme[start..].find("```").expect("the block's end")];

    let name = netc::diagnostics::FileName::new("examples/articles_cnn.net");
    let text = std::fs::read_to_string(root.join("examples/articles_cnn.net")).expect("the example");
    let mut db = netc::host::Database::new();
    let file = db.set_file(name, text);
    let printed = netc::report::table(&netc::report::report(&db, &[file], Some("serve")));
    assert_eq!(shown, printed, "README.md's output of `{command}` is stale");
}

// ---------------------------------------------------------------------------------------
// `netc check --fix`

/// An inference scenario without `no_grad` (L0003) nor `eval` (L0004): two fixes that add a
/// setting after the same one.
const TWO_FIXES: &str = "use std.models.resnet\ninfer serve { model resnet18()  batch 8 }\n";

#[test]
fn fix_applies_the_fixes_and_a_second_run_changes_nothing() {
    let dir = TempDir::new("fix");
    let file = dir.write("serve.net", TWO_FIXES);
    let run = check(&["--fix", "--format", "short"], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(run.err, "");
    assert_eq!(
        dir.redact(&run.out),
        "fixed <tmp>/serve.net: add `no_grad`, add `eval`\nchecked 1 file: no problems found\n"
    );
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert_eq!(fixed, "use std.models.resnet\ninfer serve { model resnet18()  batch 8  no_grad  eval }\n");
    // Idempotent: nothing left to fix, nothing written.
    let again = check(&["--fix", "--format", "short"], &[&file]);
    assert_eq!((again.code, again.out.as_str(), again.err.as_str()), (0, "checked 1 file: no problems found\n", ""));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), fixed);
    // Without --fix, check writes nothing.
    let other = dir.write("other.net", TWO_FIXES);
    assert_eq!(check(&["--format", "short"], &[&other]).code, 0);
    assert_eq!(std::fs::read_to_string(&other).expect("read"), TWO_FIXES);
}

#[test]
fn fix_leaves_files_with_syntax_errors_and_allowed_lints_alone() {
    let dir = TempDir::new("fix-syntax");
    let broken_text = format!("{TWO_FIXES}model m( {{\n");
    let broken = dir.write("broken.net", &broken_text);
    let run = check(&["--fix", "--format", "short"], &[&broken]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert_eq!(dir.redact(&run.err), "error: `<tmp>/broken.net` not fixed: it has syntax errors\n");
    assert!(!run.out.contains("fixed"), "{}", run.out);
    assert_eq!(std::fs::read_to_string(&broken).expect("read"), broken_text);

    // An allowed lint is not reported, so its fix is not applied.
    let file = dir.write("serve.net", TWO_FIXES);
    let run = check(&["--fix", "--format", "short", "-A", "missing-no-grad"], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(dir.redact(&run.out), "fixed <tmp>/serve.net: add `eval`\nchecked 1 file: no problems found\n");
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert_eq!(fixed, "use std.models.resnet\ninfer serve { model resnet18()  batch 8  eval }\n");
}

#[test]
fn fix_with_machine_readable_output_says_what_it_fixed_on_stderr() {
    let dir = TempDir::new("fix-json");
    let file = dir.write("serve.net", TWO_FIXES);
    let run = check(&["--fix", "--format", "json"], &[&file]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    let json: serde_json::Value = serde_json::from_str(&run.out).expect("stdout is JSON alone");
    assert_eq!(json["diagnostics"], serde_json::json!([]), "{}", run.out);
    assert_eq!(dir.redact(&run.err), "fixed <tmp>/serve.net: add `no_grad`, add `eval`\n");
}

// ---------------------------------------------------------------------------------------
// What-if settings and `netc fit`

const FIT: &str = "\
use std.models.resnet
train big { model resnet50()  batch 512  optimizer adam  device rtx4090 }
infer serve { model resnet50()  batch 8  no_grad  eval  device l4  budget 2 GiB }
";

/// The `total_bytes` of each scenario of a `report --format json` run.
fn totals(run: &Run) -> Vec<(String, i64)> {
    let report: serde_json::Value = serde_json::from_str(&run.out).expect("JSON on stdout");
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| (s["name"].as_str().expect("a name").to_string(), s["total_bytes"].as_i64().expect("a total")))
        .collect()
}

/// `netc report PATH --scenario SCENARIO EXTRA... --format json`.
fn report_json(path: &Path, scenario: &str, extra: &[&str]) -> Run {
    let mut args: Vec<OsString> = vec!["report".into(), path.into(), "--scenario".into(), scenario.into()];
    args.extend(extra.iter().map(OsString::from));
    args.extend(["--format".into(), "json".into()]);
    netc(args)
}

#[test]
fn what_if_settings_report_what_the_edited_file_would_and_leave_the_file_alone() {
    let dir = TempDir::new("what_if");
    let path = dir.write("models.net", FIT);
    let edited = dir.write("edited.net", FIT.replace("batch 8", "batch 64").replace("device l4", "device h100_80gb"));
    let what_if = report_json(&path, "serve", &["--batch", "64", "--device", "h100_80gb"]);
    let written = report_json(&edited, "serve", &[]);
    // The same answer, and the same verdict (`big` is over its device in both: exit 1).
    assert_eq!((what_if.code, totals(&what_if)), (written.code, totals(&written)), "{}", what_if.err);
    assert_eq!(std::fs::read_to_string(&path).expect("the file"), FIT, "the file on disk is never written");
    // A setting the scenario does not have is added: four micro-batches for the training one,
    // which needs what the file with `grad_accum 4` written in it needs, and less than before.
    let accumulated = dir.write("accumulated.net", FIT.replace("optimizer adam", "optimizer adam  grad_accum 4"));
    let report_of = |path: &Path, extra: &[&str]| totals(&report_json(path, "big", extra));
    let plain = report_of(&path, &[]);
    let what_if = report_of(&path, &["--set", "grad_accum=4"]);
    assert_eq!(what_if, report_of(&accumulated, &[]));
    assert!(what_if[0].1 < plain[0].1, "{what_if:?} {plain:?}");
}

#[test]
fn what_if_mistakes_are_named() {
    let dir = TempDir::new("what_if_mistakes");
    let path = dir.write("models.net", FIT);
    let cases: [(&[&str], &str); 4] = [
        (&["--set", "bach=64"], "error: `--set bach=64`: `bach` is not a scenario setting; did you mean `batch`?\n"),
        (&["--set", "no_grad=1"], "error: `--set no_grad=1`: `no_grad` is a flag and takes no value, found `1`\n"),
        (&["--set", "zero"], "error: `--set zero`: `zero` needs a value\n"),
        (
            &["--fix", "--batch", "4"],
            "error: `--fix` writes the files, and what-if settings are not in them: use one or the other\n",
        ),
    ];
    for (flags, expected) in cases {
        let run = check(flags, &[&path]);
        assert_eq!((run.code, run.err.as_str()), (2, expected), "{flags:?}");
    }
    // A mistyped value is the diagnostic the file would get, at the edited setting.
    let run = check(&["--device", "a100"], &[&path]);
    assert_eq!(run.code, 1);
    assert!(run.out.contains("unknown device `a100`") && run.out.contains("did you mean `a100_40gb`?"), "{}", run.out);
}

#[test]
fn fit_finds_the_largest_batch_and_the_next_one_does_not_fit() {
    let dir = TempDir::new("fit");
    let path = dir.write("models.net", FIT);
    let run = netc(["fit".as_ref(), path.as_os_str(), "--format".as_ref(), "json".as_ref()]);
    assert_eq!(run.code, 0, "{}", run.err);
    let fits: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    let fits = fits["fits"].as_array().expect("fits");
    assert_eq!(fits.len(), 2);
    for fit in fits {
        let scenario = fit["scenario"].as_str().expect("a name");
        let largest = fit["largest"].as_i64().expect("a batch fits");
        let limit = fit["limit_bytes"].as_i64().expect("a limit");
        // The answer, checked by simulating it and the next batch through `report`.
        let total_at = |batch: i64| totals(&report_json(&path, scenario, &["--batch", &batch.to_string()]))[0].1;
        assert!(total_at(largest) <= limit, "{scenario}: batch {largest} does not fit");
        assert!(total_at(largest + 1) > limit, "{scenario}: batch {} fits too", largest + 1);
    }
    assert_eq!(fits[0]["limit"], "device rtx4090 (24.0 GiB)");
    assert_eq!(fits[1]["limit"], "budget 2.0 GiB");
    // The table names the answer first; a sequence length is searched the same way.
    let table = netc(["fit".as_ref(), path.as_os_str(), "--scenario".as_ref(), "serve".as_ref()]);
    assert!(
        table.out.starts_with(&format!("scenario `serve` ({}): fits up to batch ", path.display())),
        "{}",
        table.out
    );
    // With gradient accumulation the batch grows by whole micro-batches.
    let accum = dir.write("accum.net", FIT.replace("optimizer adam", "optimizer adam  grad_accum 4"));
    let run = netc([
        "fit".as_ref(),
        accum.as_os_str(),
        "--scenario".as_ref(),
        "big".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let fits: serde_json::Value = serde_json::from_str(&run.out).expect("JSON");
    let largest = fits["fits"][0]["largest"].as_i64().expect("a batch fits");
    assert_eq!(largest % 4, 0, "{largest}");
    assert!(largest > 4 * 280, "four micro-batches of nearly 289: {largest}");
    let no_limit =
        dir.write("cpu.net", "use std.models.resnet\ninfer cpu { model resnet18()  batch 1  no_grad  eval }\n");
    let run = netc(["fit".as_ref(), no_limit.as_os_str()]);
    assert_eq!(run.code, 1);
    assert_eq!(run.err, "error: scenario `cpu` has no budget and its device (cpu) no capacity: give it a `budget`\n");
}
