//! `netc snapshot`: budget snapshots beside the model files (`model.net` -> `model.netsnap`),
//! written only by `netc snapshot`, compared by `netc snapshot --check`, which fails (exit 1)
//! with the figures that moved and a unified diff. Every test works in a temporary directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A temporary directory, removed when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new(test: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let unique = format!("netc-snapshot-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(unique).join(test);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        TempDir { path }
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create directories");
        std::fs::write(&path, contents).expect("write a file");
        path
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.path.join(name)).ok()
    }

    /// `text` with this directory's path replaced by `<tmp>`.
    fn redact(&self, text: &str) -> String {
        text.replace(&self.path.to_string_lossy().replace('\\', "/"), "<tmp>")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.path.parent().expect("the unique directory"));
    }
}

struct Run {
    code: u8,
    out: String,
    err: String,
}

fn netc(args: &[&str], paths: &[&Path]) -> Run {
    let mut argv: Vec<OsString> = vec!["netc".into()];
    argv.extend(args.iter().map(OsString::from));
    argv.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(argv, &mut out, &mut err, false);
    Run { code, out: String::from_utf8(out).expect("UTF-8"), err: String::from_utf8(err).expect("UTF-8") }
}

const BLOCKS: &str = "\
block basic(x, planes: int) {
    y = relu(batchnorm(conv2d(x, planes, k=3, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    return relu(y + x)
}
";

fn model(batch: u32) -> String {
    format!(
        "\
use \"../lib/blocks.net\"

model net(classes: int = 10) {{
    input x: f32[N, 64, 32, 32]
    y = basic(x, 64)
    y = basic(y, 64)
    return linear(flatten(adaptive_avgpool2d(y, 1)), classes)
}}

train fit {{ model net()  batch {batch}  optimizer adam  device a100_40gb  budget 2 GiB }}
infer serve {{ model net()  batch 1  no_grad  eval  device t4  budget 512 MiB }}
"
    )
}

/// A project: `lib/blocks.net` (no scenario) and `models/net.net` (two scenarios).
fn project(test: &str, batch: u32) -> TempDir {
    let dir = TempDir::new(test);
    dir.write("lib/blocks.net", BLOCKS);
    dir.write("models/net.net", &model(batch));
    dir
}

// Reviewed: the snapshot of a training and an inference scenario. `fit` peaks in step 2's
// backward (Adam's state is there from step 1); the block `basic` holds every weight but the
// classifier's (2 x 2 x 36,864 + batch-norm parameters), and its lines keep most of the
// activations. Names are relative to the snapshot (`../lib/blocks.net`), never the temporary
// directory.
#[test]
fn snapshot_writes_beside_each_model_file() {
    let dir = project("writes", 32);
    let run = netc(&["snapshot"], &[&dir.path]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert_eq!(dir.redact(&run.out), "wrote <tmp>/models/net.netsnap\n1 snapshot: 1 written, 0 unchanged\n");
    assert_eq!(dir.read("lib/blocks.netsnap"), None, "a file without scenarios has no snapshot");
    let text = dir.read("models/net.netsnap").expect("written");
    assert!(!text.contains(&*dir.path.to_string_lossy()), "no temporary path in the snapshot");
    insta::assert_snapshot!(text);
    // Again: nothing changes.
    let again = netc(&["snapshot"], &[&dir.path]);
    assert_eq!((again.code, again.out.as_str()), (0, "1 snapshot: 0 written, 1 unchanged\n"));
    let check = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!((check.code, check.out.as_str()), (0, "checked 1 snapshot: up to date\n"), "{}", check.err);
}

#[test]
fn check_fails_with_the_figures_that_moved_and_writes_nothing() {
    let dir = project("moved", 32);
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    let stored = dir.read("models/net.netsnap").expect("written");
    // A bigger batch: a memory regression.
    dir.write("models/net.net", &model(48));
    let run = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}", run.err);
    let out = dir.redact(&run.out);
    let first: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(
        first,
        [
            "<tmp>/models/net.net scenario fit: run batch 32 -> batch 48",
            "<tmp>/models/net.net scenario fit: peak 89.7 MiB -> 133.7 MiB (+44.0 MiB, +49.0 %)",
            "<tmp>/models/net.net scenario fit: reserved 89.7 MiB -> 133.7 MiB (+44.0 MiB, +49.0 %)",
        ],
        "{out}"
    );
    assert!(out.contains("\n--- <tmp>/models/net.netsnap (stored)\n+++ <tmp>/models/net.netsnap (now)\n@@ "), "{out}");
    assert!(out.contains("\n-  run             train, model net, batch 32, device a100_40gb\n"), "{out}");
    assert!(out.contains("\n+  run             train, model net, batch 48, device a100_40gb\n"), "{out}");
    assert!(!out.contains("scenario serve:"), "the inference scenario did not move:\n{out}");
    assert!(out.ends_with("checked 1 snapshot: 1 moved (run `netc snapshot` to accept the new figures)\n"), "{out}");
    assert_eq!(dir.read("models/net.netsnap").as_deref(), Some(stored.as_str()), "--check writes nothing");
    // Accepting the new figures.
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    assert_eq!(netc(&["snapshot", "--check"], &[&dir.path]).code, 0);
}

#[test]
fn check_fails_when_a_snapshot_is_missing() {
    let dir = project("missing", 32);
    let run = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!(run.code, 1);
    let out = dir.redact(&run.out);
    assert!(
        out.starts_with(
            "<tmp>/models/net.net: no snapshot `<tmp>/models/net.netsnap` (run `netc snapshot <tmp>/models/net.net`)\n"
        ),
        "{out}"
    );
    assert_eq!(dir.read("models/net.netsnap"), None, "--check writes nothing");
}

#[test]
fn a_scenario_added_or_removed_is_named() {
    let dir = project("scenarios", 32);
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    let text = model(32).replace("infer serve", "infer serve_fp16").replace("no_grad", "no_grad  precision fp16");
    dir.write("models/net.net", &text);
    let run = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!(run.code, 1);
    let out = dir.redact(&run.out);
    assert!(out.contains("<tmp>/models/net.net scenario serve_fp16: new (not in the snapshot)\n"), "{out}");
    assert!(out.contains("<tmp>/models/net.net scenario serve: gone (in the snapshot only)\n"), "{out}");
}

#[test]
fn a_program_with_errors_gets_no_snapshot() {
    let dir = project("errors", 32);
    dir.write("models/net.net", &model(32).replace("flatten(", "flaten("));
    let run = netc(&["snapshot"], &[&dir.path]);
    assert_eq!(run.code, 1);
    // An error in the model stops both scenarios: the file keeps its (here: no) snapshot.
    let err = dir.redact(&run.err);
    assert!(
        err.contains("error: `<tmp>/models/net.netsnap` not written: scenarios `fit`, `serve` cannot be simulated"),
        "{err}"
    );
    assert!(err.ends_with("error: 1 error; 2 scenarios not simulated\n"), "{err}");
    assert_eq!(run.out, "1 snapshot: 0 written, 0 unchanged, 1 not written\n");
    assert_eq!(dir.read("models/net.netsnap"), None);
    let missing = netc(&["snapshot"], &[&dir.path.join("nope.net")]);
    assert_eq!(missing.code, 2);
}

/// A scenario that cannot be simulated does not stop the others (issue 19): a budget error of
/// one scenario is on standard error and fails the run, and the snapshot is written; a
/// broken scenario keeps the stored snapshot, and `--check` names it in its place.
#[test]
fn errors_of_one_scenario_do_not_hide_the_others() {
    let dir = project("partial", 32);
    // `fit` over its budget: an error-level lint, yet the figures are what a snapshot records.
    dir.write("models/net.net", &model(32).replace("budget 2 GiB", "budget 64 MiB"));
    let run = netc(&["snapshot"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert_eq!(dir.redact(&run.out), "wrote <tmp>/models/net.netsnap\n1 snapshot: 1 written, 0 unchanged\n");
    assert!(run.err.contains("L0001") && run.err.ends_with("error: 1 error\n"), "{}", run.err);
    let stored = dir.read("models/net.netsnap").expect("written");
    assert!(stored.contains("scenario fit\n") && stored.contains("scenario serve\n"), "{stored}");

    // `serve` names an unknown device: `fit` is still compared, `serve` is not simulated.
    dir.write("models/net.net", &model(32).replace("budget 2 GiB", "budget 64 MiB").replace("device t4", "device t5"));
    let run = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    let named: Vec<&str> = out.lines().filter(|l| l.starts_with("<tmp>")).collect();
    assert_eq!(named, ["<tmp>/models/net.net scenario serve: not simulated (1 error stops its simulation)"], "{out}");
    assert!(out.contains("+  not simulated   1 error stops its simulation\n"), "{out}");
    assert!(out.contains("+    net.net:11:59: error[E0304]: unknown device `t5`\n"), "{out}");
    assert!(run.err.ends_with("error: 2 errors; 1 scenario not simulated\n"), "{}", run.err);
    // Writing keeps the stored figures of `serve`.
    let run = netc(&["snapshot"], &[&dir.path]);
    assert_eq!(run.code, 1);
    assert!(run.err.contains("not written: scenario `serve` cannot be simulated"), "{}", run.err);
    assert_eq!(dir.read("models/net.netsnap").as_deref(), Some(stored.as_str()));
}

// ---------------------------------------------------------------------------------------
// Snapshots are regular `.netsnap` files beside `.net` files, never anything else (issue 21)

/// A model file with one scenario and no imports.
const SMALL: &str = "\
model m() {
    input x: f32[N, 8]
    return linear(x, 2)
}

infer serve { model m(); batch 1; no_grad; eval }
";

// `ln -s precious.txt b.netsnap`: `netc snapshot` overwrote precious.txt, and `--check`
// printed its contents in the diff. Now the link is refused, read or written.
#[cfg(unix)]
#[test]
fn a_snapshot_that_is_a_symbolic_link_is_neither_read_nor_written() {
    let dir = TempDir::new("symlink");
    let model = dir.write("b.net", SMALL);
    dir.write("precious.txt", "precious data\n");
    std::os::unix::fs::symlink("precious.txt", dir.path.join("b.netsnap")).expect("a link");
    for args in [&["snapshot"][..], &["snapshot", "--check"]] {
        let run = netc(args, &[&model]);
        assert_eq!(run.code, 2, "{args:?}: {}", run.err);
        assert_eq!(
            dir.redact(&run.err),
            "error: cannot read `<tmp>/b.netsnap`: it is a symbolic link, not a regular file\n",
            "{args:?}"
        );
        assert!(!run.out.contains("precious"), "{args:?}: {}", run.out);
    }
    assert_eq!(dir.read("precious.txt").as_deref(), Some("precious data\n"));
    assert!(std::fs::symlink_metadata(dir.path.join("b.netsnap")).expect("there").file_type().is_symlink());
}

#[test]
fn a_snapshot_that_is_not_a_regular_file_is_refused() {
    let dir = TempDir::new("not-a-file");
    let model = dir.write("b.net", SMALL);
    std::fs::create_dir_all(dir.path.join("b.netsnap")).expect("a directory");
    let run = netc(&["snapshot"], &[&model]);
    assert_eq!(run.code, 2);
    assert_eq!(dir.redact(&run.err), "error: cannot read `<tmp>/b.netsnap`: not a regular file (a directory)\n");
    assert!(dir.path.join("b.netsnap").is_dir());
}

// `netc snapshot weird.netsnap` overwrote its own source with its snapshot, and `model.txt`
// and `model.net` both wrote `model.netsnap`. Only `.net` files are read now (E0401 for the
// others, exit 2); the `.net` file's snapshot is its own.
#[test]
fn only_net_files_get_snapshots() {
    let dir = TempDir::new("only-net");
    let weird = dir.write("weird.netsnap", SMALL);
    let net = dir.write("model.net", SMALL);
    let other = SMALL.replace("batch 1", "batch 7");
    let txt = dir.write("model.txt", &other);
    let run = netc(&["snapshot"], &[&weird, &net, &txt]);
    assert_eq!(run.code, 2, "{}", run.err);
    let err = dir.redact(&run.err);
    assert!(err.contains("cannot read `<tmp>/weird.netsnap`: not a `.net` file"), "{err}");
    assert!(err.contains("cannot read `<tmp>/model.txt`: not a `.net` file"), "{err}");
    assert_eq!(dir.read("weird.netsnap").as_deref(), Some(SMALL), "the source is untouched");
    assert_eq!(dir.read("model.txt").as_deref(), Some(other.as_str()));
    // `model.net` is fine: its snapshot is its own (`model.txt` was not read).
    assert!(dir.read("model.netsnap").is_some_and(|s| s.contains("batch 1,")), "model.net's snapshot");
}

// A `.net` file may name a file whose name is its snapshot's in a `use`: that file is not
// read (E0223: not a `.net` file), and it is never compared as a snapshot nor overwritten
// (exit 2, as for any snapshot that is a source).
// Only `.net` files are loaded, so no source can be a snapshot.
#[test]
fn a_snapshot_never_replaces_a_source_file() {
    let dir = TempDir::new("source");
    let helper = "block helper(x) {\n    return x\n}\n";
    dir.write("a.netsnap", helper);
    let model = dir.write("a.net", &format!("use \"a.netsnap\"\n\n{SMALL}"));
    for args in [&["snapshot"][..], &["snapshot", "--check"]] {
        let run = netc(args, &[&model]);
        assert_eq!(run.code, 2, "{args:?}: {}", run.err);
        assert!(run.err.contains("E0223"), "{args:?}: {}", run.err);
        assert!(run.err.contains("a.netsnap` is named by a `use`"), "{args:?}: {}", run.err);
        assert!(!run.out.contains("helper"), "{args:?}: {}", run.out);
    }
    assert_eq!(dir.read("a.netsnap").as_deref(), Some(helper));
}

// A snapshot that cannot be written (its directory is read-only) is left as it was, and the
// error names it. Root may write anywhere: then there is nothing to test.
#[cfg(unix)]
#[test]
fn a_snapshot_that_cannot_be_written_is_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("read-only");
    let model = dir.write("m/b.net", SMALL);
    dir.write("m/b.netsnap", "old\n");
    let locked = dir.path.join("m");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let writable = std::fs::write(locked.join("probe"), "").is_ok();
    let run = netc(&["snapshot"], &[&model]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    if writable {
        eprintln!("skipped: this user may write in a read-only directory");
        return;
    }
    assert_eq!(run.code, 2);
    assert!(dir.redact(&run.err).starts_with("error: cannot write `<tmp>/m/b.netsnap`: "), "{}", run.err);
    assert_eq!(dir.read("m/b.netsnap").as_deref(), Some("old\n"));
}

// ---------------------------------------------------------------------------------------
// `--check --tolerance PERCENT`: figures that moved by at most PERCENT of their stored value
// pass and are named; anything else still fails. The default, 0, is exact.

#[test]
fn figures_within_the_tolerance_pass_and_are_named() {
    let dir = project("tolerance", 32);
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    let stored = dir.read("models/net.netsnap").expect("written");
    // Two more classes: a few more weights, the same run.
    dir.write("models/net.net", &model(32).replace("classes: int = 10", "classes: int = 12"));
    let exact = netc(&["snapshot", "--check"], &[&dir.path]);
    assert_eq!(exact.code, 1, "{}{}", exact.out, exact.err);
    assert!(!exact.out.contains("within the"), "{}", exact.out);
    // The gradients at the peak of `fit` moved by 20 % (2.54 KiB -> 3.05 KiB), the rest by
    // 0.1 % or less: 5 % is not enough.
    let five = netc(&["snapshot", "--check", "--tolerance", "5"], &[&dir.path]);
    assert_eq!(five.code, 1, "{}", five.out);
    let named: Vec<&str> = five.out.lines().filter(|l| l.contains(" scenario ") && l.ends_with("%)")).collect();
    assert_eq!(named.len(), 1, "{}", five.out);
    assert!(
        named[0].ends_with("scenario fit: gradients at the peak 2.54 KiB -> 3.05 KiB (+520 B, +20.0 %)"),
        "{}",
        five.out
    );

    let run = netc(&["snapshot", "--check", "--tolerance", "25"], &[&dir.path]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(run.err, "");
    let out = dir.redact(&run.out);
    let lines: Vec<&str> = out.lines().collect();
    let (summary, named) = lines.split_last().expect("a summary");
    assert_eq!(*summary, "checked 1 snapshot: up to date, 1 within the 25% tolerance", "{out}");
    assert!(!named.is_empty(), "{out}");
    for line in named {
        assert!(
            line.starts_with("<tmp>/models/net.net scenario ") && line.ends_with(" (within the 25% tolerance)"),
            "{out}"
        );
    }
    assert!(named.iter().any(|l| l.contains("scenario fit: peak ")), "{out}");
    assert!(!out.contains("\n--- "), "no diff when every figure is within the tolerance:\n{out}");
    assert_eq!(dir.read("models/net.netsnap").as_deref(), Some(stored.as_str()), "--check writes nothing");

    // A tolerance smaller than the move fails as before, naming the figures beyond it.
    let tight = netc(&["snapshot", "--check", "--tolerance", "0.0001"], &[&dir.path]);
    assert_eq!(tight.code, 1, "{}", tight.out);
    assert!(tight.out.contains("scenario fit: peak ") && tight.out.contains("\n--- "), "{}", tight.out);
    assert!(tight.out.ends_with("1 moved (run `netc snapshot` to accept the new figures)\n"), "{}", tight.out);
}

#[test]
fn a_tolerance_lets_no_text_change() {
    let dir = project("tolerance-text", 32);
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    // The batch is text in the snapshot (`run`): no percentage lets it change.
    dir.write("models/net.net", &model(33));
    let run = netc(&["snapshot", "--check", "--tolerance", "1000"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}", run.out);
    let out = dir.redact(&run.out);
    assert!(out.starts_with("<tmp>/models/net.net scenario fit: run batch 32 -> batch 33\n"), "{out}");
    assert!(out.contains(" (within the 1000% tolerance)\n"), "figures within it are named:\n{out}");
    assert!(out.ends_with("checked 1 snapshot: 1 moved (run `netc snapshot` to accept the new figures)\n"), "{out}");
}

#[test]
fn a_negative_or_non_numeric_tolerance_is_a_usage_error() {
    let dir = project("tolerance-usage", 32);
    assert_eq!(netc(&["snapshot"], &[&dir.path]).code, 0);
    for (value, why) in
        [("-5", "0 or more"), ("abc", "not a number"), ("", "not a number"), ("inf", "0 or more"), ("NaN", "0 or more")]
    {
        let run = netc(&["snapshot", "--check", "--tolerance", value], &[&dir.path]);
        assert_eq!(run.code, 2, "{value:?}: {}", run.err);
        assert_eq!(run.out, "", "{value:?}");
        assert!(run.err.contains(&format!("invalid value '{value}' for '--tolerance <PERCENT>'")), "{}", run.err);
        assert!(run.err.contains(why), "{value:?}: {}", run.err);
    }
    // `5%` is 5.
    assert_eq!(netc(&["snapshot", "--check", "--tolerance", "5%"], &[&dir.path]).code, 0);
    // Only --check compares.
    let run = netc(&["snapshot", "--tolerance", "5"], &[&dir.path]);
    assert_eq!(run.code, 2);
    assert!(run.err.contains("--check"), "{}", run.err);
}

/// A scenario with a key/value cache has the cache's ledger in its snapshot: at the peak and
/// after the step. Two sequences, 7 tokens cached, one new: the cache after the step is
/// `[2, 1, 8, 16]` float32 (1,024 B); at the peak (the append) the old 7 tokens (896 B) are
/// live beside it.
#[test]
fn a_snapshot_has_the_kv_cache_ledger() {
    let mut db = netc::host::Database::new();
    let text = "model lm() {\n    input ids: i64[N, S]\n    h = embedding(ids, 100, 16)\n    k = kv_cache(reshape(linear(h, 16), [ids.shape[0], 1, ids.shape[1], 16]))\n    return linear(h, 100)\n}\ninfer decode { model lm  batch 2  seq 1  context 7  no_grad  eval  cache dynamic }\n";
    let file = db.set_file(netc::diagnostics::FileName::new("lm.net"), text.to_string());
    let snapshot = netc::snapshot::render(&db, file).expect("a snapshot");
    let lines: Vec<&str> = snapshot.lines().filter(|l| l.contains("kv cache")).collect();
    assert_eq!(lines.len(), 2, "{snapshot}");
    assert!(lines[0].trim_start().starts_with("kv cache") && lines[0].contains("1,920"), "{snapshot}");
    assert!(lines[1].trim_start().starts_with("kv cache after the step") && lines[1].contains("1,024"), "{snapshot}");
}
