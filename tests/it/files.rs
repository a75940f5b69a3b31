//! What the loader reads from disk, and what it refuses: link loops end and each directory is
//! walked once, a directory that cannot be listed is named and the rest is still checked, a
//! FIFO, a device or a huge file named `*.net` is an error rather than a hang, and a `use` or
//! a link out of the project is refused without showing anything of the file it names. Each
//! test is the reproduction of a finding, in a temporary directory, run in-process.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::cli::{Run, TempDir, netc};

/// A clean model with a scenario (so that `report` and `snapshot` have something to do).
const CLEAN: &str = "\
model net() {
    input x: f32[N, 8]
    return linear(x, 2)
}

infer serve { model net(); batch 1; no_grad; eval }
";

/// One E0204 (an undefined name) in a model called `name`.
fn error(name: &str) -> String {
    format!("model {name}() {{\n    input x: f32[N]\n    return undefined_{name}\n}}\n")
}

/// Runs `f` on a thread of its own and fails the test if it has not finished within a
/// minute: the reproductions of these findings hung.
fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{what} did not finish within a minute"))
}

/// `netc ARGS... PATHS...`, within a minute.
fn timed(args: &[&str], paths: &[&Path]) -> Run {
    let mut argv: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    argv.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    let what = format!("netc {}", args.join(" "));
    within_a_minute(&what, move || netc(argv))
}

/// The files the short format's lines are about, in order.
fn files_of(dir: &TempDir, out: &str) -> Vec<String> {
    dir.redact(out)
        .lines()
        .filter_map(|l| l.split(':').next())
        .filter(|f| f.starts_with("<tmp>"))
        .map(String::from)
        .collect()
}

/// Makes a FIFO at `path`; `false` where `mkfifo` is not available.
fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
}

#[cfg(unix)]
fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).expect("make a symbolic link");
}

// ---------------------------------------------------------------------------------------
// Walking directories

/// `ln -s . l1; ln -s . l2; netc check .` walked 2^depth trees (a file checked 41 times
/// for one such link); each real directory is listed once now.
#[cfg(unix)]
#[test]
fn link_loops_end_and_each_directory_is_walked_once() {
    let dir = TempDir::new("loops");
    dir.write("a.net", error("a"));
    dir.write("sub/b.net", error("b"));
    symlink(".", dir.path("l1"));
    symlink(".", dir.path("l2"));
    symlink("..", dir.path("sub/up"));
    // A second way into `sub`: its files are not checked twice.
    symlink("sub", dir.path("alias"));
    // A link to itself cannot be resolved: it is neither a directory nor a `.net` file.
    symlink("self", dir.path("self"));
    let run = timed(&["check", "--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    // `alias` sorts before `sub`: its name is the one `sub`'s files are found under.
    assert_eq!(files_of(&dir, &run.out), ["<tmp>/a.net", "<tmp>/alias/b.net"], "{}", run.out);
    assert!(run.out.ends_with("checked 2 files: 2 errors, 0 warnings\n"), "{}", run.out);
}

/// `netc check DIR` checked generated and vendored files that `.gitignore` leaves out.
/// Now the walk respects `.gitignore` and `.ignore` files (gitignore's rules: a deeper file
/// wins, `!pattern` takes a file back, `dir/` is directories only), also through a link
/// loop; a file named on the command line is read whatever they say.
#[cfg(unix)]
#[test]
fn ignore_files_leave_files_out_of_walks() {
    let dir = TempDir::new("gitignore");
    dir.write(".gitignore", "gen/\n*.tmp.net\n# a comment\n");
    dir.write(".ignore", "sub/e.net\n");
    dir.write("a.net", error("a"));
    let generated = dir.write("gen/b.net", error("b"));
    dir.write("c.tmp.net", error("c"));
    dir.write("sub/.gitignore", "!keep.tmp.net\n");
    dir.write("sub/keep.tmp.net", error("keep"));
    dir.write("sub/e.net", error("e"));
    // A file named `gen` is not a directory: `gen/` does not match it.
    dir.write("sub/gen", "not netc's\n");
    symlink("..", dir.path("sub/up"));
    let run = timed(&["check", "--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert_eq!(files_of(&dir, &run.out), ["<tmp>/a.net", "<tmp>/sub/keep.tmp.net"], "{}", run.out);
    assert!(run.out.ends_with("checked 2 files: 2 errors, 0 warnings\n"), "{}", run.out);

    // Named, an ignored file is read.
    let run = timed(&["check", "--format", "short"], &[&generated]);
    assert_eq!(files_of(&dir, &run.out), ["<tmp>/gen/b.net"], "{}", run.out);

    // `fmt` walks the same way: the ignored file is left as it is.
    let messy = "model m(){\n  input x: f32[N]\n  return x\n}\n";
    dir.write("gen/messy.net", messy);
    let run = timed(&["fmt", "--check"], &[&dir.path]);
    assert!(!run.out.contains("messy"), "{}", run.out);
    assert_eq!(std::fs::read_to_string(dir.path("gen/messy.net")).unwrap(), messy);
}

/// In a git repository, the ignore files above the walked directory count too, up to the
/// repository's root.
#[test]
fn ignore_files_of_the_repository_above_count() {
    let dir = TempDir::new("repository");
    std::fs::create_dir_all(dir.path(".git")).expect("a repository");
    dir.write(".gitignore", "models/generated/\n");
    dir.write("models/a.net", error("a"));
    dir.write("models/generated/b.net", error("b"));
    let run = timed(&["check", "--format", "short"], &[&dir.path("models")]);
    assert_eq!(files_of(&dir, &run.out), ["<tmp>/models/a.net"], "{}", run.out);
}

/// `--exclude GLOB` (repeatable) leaves out of walks what a `.gitignore` line would, for
/// `check`, `fmt`, `report` and `snapshot`; a file named is still read; a pattern that is not
/// one is a usage error.
#[test]
fn exclude_leaves_files_out_of_walks() {
    let dir = TempDir::new("exclude");
    dir.write("a.net", CLEAN);
    dir.write("old/b.net", CLEAN.replace("serve", "serve_old"));
    dir.write("c.gen.net", CLEAN.replace("serve", "serve_gen"));
    let root = dir.path.clone();
    let flags = ["--exclude", "old/", "--exclude", "*.gen.net"];

    let run = timed(&[&["check", "--format", "short"][..], &flags].concat(), &[&root]);
    assert_eq!((run.code, run.out.as_str()), (0, "checked 1 file: no problems found\n"), "{}", run.err);
    let all = timed(&["check", "--format", "short"], &[&root]);
    assert_eq!(all.out, "checked 3 files: no problems found\n");

    let run = timed(&[&["report", "--format", "json"][..], &flags].concat(), &[&root]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(run.out.contains("\"serve\"") && !run.out.contains("serve_old") && !run.out.contains("serve_gen"));

    let run = timed(&[&["snapshot"][..], &flags].concat(), &[&root]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(run.out.ends_with("1 snapshot: 1 written, 0 unchanged\n"), "{}", run.out);
    assert!(!dir.path("old/b.netsnap").exists() && !dir.path("c.gen.netsnap").exists());

    dir.write("old/messy.net", "model m(){\n  input x: f32[N]\n  return x\n}\n");
    let run = timed(&[&["fmt", "--check"][..], &flags].concat(), &[&root]);
    assert_eq!((run.code, run.out.as_str()), (0, ""), "{}", run.err);

    // Named, an excluded file is read.
    let run = timed(&[&["check", "--format", "short"][..], &flags].concat(), &[&dir.path("c.gen.net")]);
    assert_eq!(run.out, "checked 1 file: no problems found\n");

    let run = timed(&["check", "--exclude", "ok", "--exclude", "{a"], &[&root]);
    assert_eq!((run.code, run.out.as_str()), (2, ""));
    assert!(run.err.starts_with("error: --exclude `{a`: "), "{}", run.err);
}

/// Restores a directory's permissions when dropped (so that the temporary directory can be
/// removed even when an assertion fails).
#[cfg(unix)]
struct Locked(PathBuf);

#[cfg(unix)]
impl Drop for Locked {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

/// A subdirectory that cannot be listed stopped the walk with `cannot read directory '.'`
/// (the wrong path) and nothing else was checked or formatted. Now it is named, and the other
/// files are checked and formatted (exit 2, as for any file that cannot be read).
#[cfg(unix)]
#[test]
fn an_unreadable_directory_is_named_and_the_rest_is_checked() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("locked");
    dir.write("a.net", error("a"));
    dir.write("locked/hidden.net", error("hidden"));
    dir.write("z.net", error("z"));
    let locked = Locked(dir.path("locked"));
    std::fs::set_permissions(&locked.0, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::read_dir(&locked.0).is_ok() {
        eprintln!("note: skipped: this process lists a directory without permissions (root?)");
        return;
    }
    let run = timed(&["check", "--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    assert!(
        out.contains("<tmp>/locked:1:1: error[E0401]: cannot read directory `<tmp>/locked`: Permission denied"),
        "{out}"
    );
    assert_eq!(files_of(&dir, &run.out), ["<tmp>/locked", "<tmp>/a.net", "<tmp>/z.net"], "{out}");
    assert!(out.ends_with("checked 2 files: 3 errors, 0 warnings\n"), "{out}");

    // `fmt` formats the files it can read, and names the directory it cannot.
    let messy = dir.write("messy.net", "model m(){\n  input x: f32[N]\n  return x\n}\n");
    let run = timed(&["fmt", "--color", "never"], &[&dir.path]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    assert!(dir.redact(&run.err).contains("cannot read directory `<tmp>/locked`"), "{}", run.err);
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), "model m() {\n    input x: f32[N]\n    return x\n}\n");
}

// ---------------------------------------------------------------------------------------
// Only regular files, of a bounded size

/// A FIFO named `*.net` (or `*.netsnap`) hung check, fmt, report and snapshot forever: the
/// file was opened, which waits for a writer. Now it is an error, found before opening.
#[cfg(unix)]
#[test]
fn a_fifo_is_an_error_not_a_hang() {
    let dir = TempDir::new("fifo");
    let clean = dir.write("clean.net", CLEAN);
    let fifo = dir.path("fifo.net");
    if !mkfifo(&fifo) {
        eprintln!("note: skipped: mkfifo is not available");
        return;
    }
    let message = "cannot read `<tmp>/fifo.net`: not a regular file (a FIFO)";
    let run = timed(&["check", "--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    assert!(dir.redact(&run.out).contains(&format!("<tmp>/fifo.net:1:1: error[E0401]: {message}")), "{}", run.out);
    assert!(run.out.ends_with("checked 1 file: 1 error, 0 warnings\n"), "{}", run.out);
    // Named on the command line, too.
    let run = timed(&["check", "--format", "short"], &[&fifo]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    assert!(dir.redact(&run.out).contains(message), "{}", run.out);
    for command in ["fmt", "report", "snapshot"] {
        let run = timed(&[command, "--color", "never"], &[&dir.path]);
        assert_eq!(run.code, 2, "{command}: {}{}", run.out, run.err);
        assert!(dir.redact(&run.err).contains(message), "{command}: {}", run.err);
    }

    // A FIFO where the snapshot is stored.
    std::fs::remove_file(&fifo).unwrap();
    // `netc snapshot` above wrote the snapshot of `clean.net`, which is fine whatever the
    // FIFO beside it.
    std::fs::remove_file(dir.path("clean.netsnap")).unwrap();
    assert!(mkfifo(&dir.path("clean.netsnap")));
    for args in [&["snapshot"][..], &["snapshot", "--check"]] {
        let run = timed(args, &[&clean]);
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.out, run.err);
        let err = dir.redact(&run.err);
        assert!(err.contains("cannot read `<tmp>/clean.netsnap`: not a regular file (a FIFO)"), "{args:?}: {err}");
    }
}

/// `zero.net -> /dev/zero` was read until memory ran out.
#[cfg(unix)]
#[test]
fn a_link_to_a_device_is_an_error_not_an_endless_read() {
    let dir = TempDir::new("zero");
    dir.write("clean.net", CLEAN);
    let zero = dir.path("zero.net");
    symlink("/dev/zero", &zero);
    for paths in [&[dir.path.as_path()][..], &[zero.as_path()]] {
        let run = timed(&["check", "--format", "short"], paths);
        assert_eq!(run.code, 2, "{}{}", run.out, run.err);
        let out = dir.redact(&run.out);
        // Its target is outside the project (and not a `.net` file, nor a regular file).
        assert!(
            out.contains("<tmp>/zero.net:1:1: error[E0401]: cannot read `<tmp>/zero.net`: it links to `/dev/zero`"),
            "{out}"
        );
    }
    // The reading itself refuses a device, whatever its name.
    let error = netc::workspace::read_regular(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(error.to_string(), "not a regular file (a device)");
}

/// A file larger than the limit is an error, not a read of everything.
#[test]
fn a_file_over_the_size_limit_is_an_error() {
    let dir = TempDir::new("huge");
    let huge = dir.path("huge.net");
    // Sparse: no disk space is used.
    std::fs::File::create(&huge).unwrap().set_len(netc::workspace::MAX_FILE_SIZE + 1).unwrap();
    let run = timed(&["check", "--format", "short"], &[&dir.path]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    assert!(dir.redact(&run.out).contains("cannot read `<tmp>/huge.net`: larger than 64 MiB"), "{}", run.out);
}

// ---------------------------------------------------------------------------------------
// Imports and links stay inside the project

/// Secret text no output may show.
const SECRET: &str = "SECRET-TOKEN-1234";

/// `use "/proc/self/environ"` printed the environment in the human diagnostic's snippet;
/// `../` paths and any other file too. A `use` out of the project, of a file that is not
/// `.net` or of something that is not a regular file is E0223 now, and nothing is read.
#[test]
fn use_outside_the_project_is_refused_and_nothing_of_it_is_shown() {
    let dir = TempDir::new("confined");
    dir.write("outside/secret.txt", SECRET);
    dir.write("outside/secret.net", format!("block leaked(x) {{ {SECRET} }}\n"));
    dir.write("project/notes.txt", SECRET);
    let mut uses =
        vec!["../outside/secret.txt", "../outside/secret.net", "notes.txt", "../../../../../../../etc/passwd"];
    let environ = Path::new("/proc/self/environ").exists();
    if environ {
        uses.push("/proc/self/environ");
    }
    let mut text: String = uses.iter().map(|u| format!("use \"{u}\"\n")).collect();
    text.push_str("model m() {\n    input x: f32[N, 8]\n    return helper(x)\n}\n");
    let main = dir.write("project/main.net", &text);

    let run = timed(&["check", "--format", "short"], &[&main]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    let project = dir.path("project").canonicalize().unwrap();
    let project = dir.redact(&project.to_string_lossy());
    let expected = [
        format!("cannot use `../outside/secret.txt`: outside the project (`{project}`)"),
        format!("cannot use `../outside/secret.net`: outside the project (`{project}`)"),
        "cannot use `notes.txt`: not a `.net` file".to_string(),
        format!("cannot use `../../../../../../../etc/passwd`: outside the project (`{project}`)"),
    ];
    for (line, message) in out.lines().zip(&expected) {
        assert!(line.contains("error[E0223]") && line.ends_with(message.as_str()), "{line}\n{out}");
    }
    assert_eq!(out.matches("error[E0223]").count(), uses.len(), "{out}");
    // The call of a name the refused files might define is not reported.
    assert!(run.out.ends_with(&format!("checked 1 file: {} errors, 0 warnings\n", uses.len())), "{out}");

    // The human format shows the `use`, nothing of the files.
    let human = timed(&["check", "--color", "never"], &[&main]);
    assert_eq!(human.code, 1);
    assert!(human.out.contains("a `use` names a `.net` file inside the project"), "{}", human.out);
    assert!(!human.out.contains(SECRET), "{}", human.out);
    if environ {
        assert!(!human.out.contains("PATH="), "{}", human.out);
    }
}

/// A link in the checked tree whose target is outside the project, or is not a `.net` file,
/// is not read either: `model.net -> ~/.ssh/id_rsa` in a pull request shows nothing.
#[cfg(unix)]
#[test]
fn links_out_of_the_project_are_not_read() {
    let dir = TempDir::new("links");
    let secret = dir.write("outside/secret.txt", SECRET);
    let secret_net = dir.write("outside/secret.net", format!("block leaked(x) {{ {SECRET} }}\n"));
    let project = dir.path("project");
    dir.write("project/clean.net", CLEAN);
    symlink(&secret, project.join("evil.net"));
    symlink(&secret_net, project.join("evil2.net"));
    symlink(dir.path("outside"), project.join("ext"));
    // A netc.toml that is a link to another file: its text would be shown as invalid TOML.
    symlink(&secret, project.join("netc.toml"));
    let run = timed(&["check", "--format", "short"], &[&project]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    let out = dir.redact(&run.out);
    assert!(!out.contains(SECRET), "{out}");
    let real = |p: &Path| dir.redact(&p.canonicalize().unwrap().to_string_lossy());
    let (secret, secret_net, outside) = (real(&secret), real(&secret_net), real(&dir.path("outside")));
    for message in [
        format!("cannot read directory `<tmp>/project/ext`: it links to `{outside}`, which is outside the project"),
        format!("cannot read `<tmp>/project/evil.net`: it links to `{secret}`, which is outside the project"),
        format!("cannot read `<tmp>/project/evil2.net`: it links to `{secret_net}`, which is outside the project"),
        // Shown relative to the current directory when below it.
        format!("project/netc.toml`: it links to `{secret}`, which is not a `netc.toml`"),
    ] {
        assert!(out.contains(&message), "{message}\n{out}");
    }
    assert!(out.ends_with("checked 1 file: 4 errors, 0 warnings\n"), "{out}");
    // Named on the command line, the link is refused too, and the human format shows nothing.
    let run = timed(&["check", "--color", "never"], &[&project.join("evil.net")]);
    assert_eq!(run.code, 2, "{}{}", run.out, run.err);
    assert!(!run.out.contains(SECRET), "{}", run.out);
}

/// The project is the directory of the nearest `netc.toml`: with one above, a `use` of a
/// sibling directory resolves; without it, the checked file's directory is the project.
#[test]
fn a_netc_toml_makes_its_directory_the_project() {
    let dir = TempDir::new("project-root");
    dir.write("lib/blocks.net", "block helper(x) {\n    return relu(x)\n}\n");
    let main = dir.write(
        "app/main.net",
        "use \"../lib/blocks.net\"\n\nmodel m() {\n    input x: f32[N, 8]\n    return helper(x)\n}\n",
    );
    let run = timed(&["check", "--format", "short"], &[&main]);
    assert_eq!(run.code, 1, "{}{}", run.out, run.err);
    assert!(run.out.contains("error[E0223]: cannot use `../lib/blocks.net`: outside the project"), "{}", run.out);

    dir.write("netc.toml", "");
    let run = timed(&["check"], &[&main]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert_eq!(run.out, "checked 2 files: no problems found\n");
}

/// `netc fmt` formats the files it is given and reads nothing they import: a 50 MB file's
/// formatting held the parses of its imports too (finding 12 of issue 21).
#[test]
fn the_formatter_loads_the_files_it_formats_and_not_their_imports() {
    let dir = TempDir::new("fmt-roots");
    dir.write("lib.net", "block helper(x) {\n    return relu(x)\n}\n");
    let main =
        dir.write("main.net", "use \"lib.net\"\n\nmodel m() {\n    input x: f32[N, 8]\n    return helper(x)\n}\n");
    let lib = netc::diagnostics::FileName::new(dir.path("lib.net").to_string_lossy());

    let mut db = netc::host::Database::new();
    let loaded = netc::workspace::load_roots(&mut db, std::slice::from_ref(&main));
    assert_eq!(loaded.roots.len(), 1);
    assert_eq!(loaded.files, loaded.roots);
    assert!(db.file(&lib).is_none(), "the formatter read an import");

    // `check` follows the same `use`.
    let mut db = netc::host::Database::new();
    let loaded = netc::workspace::load(&mut db, &[main]);
    assert_eq!(loaded.files.len(), 2);
    assert!(db.file(&lib).is_some());
}
