//! The formatter (`netc::format`, `netc fmt`): on every fixture, example, stdlib file and spec
//! example it keeps the syntax tree and every comment, and is idempotent; whitespace noise
//! added between tokens formats away; files with syntax errors are refused; the command line
//! writes, checks and reports as documented in spec/fmt.md. A snapshot shows the layout.

use std::ffi::OsString;
use std::path::PathBuf;

use netc::diagnostics::FileName;
use netc::format::{FormatError, format};
use netc::syntax::lexer::{TokenKind, lex};
use netc::syntax::parse;
use proptest::prelude::*;

use crate::support::{net_files_below, root};

/// Every `.net` text of the repository that should format: fixtures without syntax errors,
/// examples, the stdlib, and the `net` blocks of spec/*.md.
fn corpus() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for dir in ["tests/fixtures/syntax", "tests/fixtures/calibration", "examples", "stdlib"] {
        net_files_below(&root().join(dir), &mut paths);
    }
    let mut out: Vec<(String, String)> =
        paths.iter().map(|p| (p.display().to_string(), std::fs::read_to_string(p).expect("UTF-8 fixture"))).collect();
    let mut specs: Vec<PathBuf> = std::fs::read_dir(root().join("spec"))
        .expect("spec/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    specs.sort();
    for spec in specs {
        let text = std::fs::read_to_string(&spec).expect("spec is UTF-8");
        let mut block: Option<String> = None;
        for (n, line) in text.lines().enumerate() {
            match &mut block {
                None if line.starts_with("```net") => block = Some(String::new()),
                Some(b) if line.starts_with("```") => {
                    out.push((format!("{}:{}", spec.display(), n + 1), std::mem::take(b)));
                    block = None;
                }
                Some(b) => {
                    b.push_str(line);
                    b.push('\n');
                }
                None => {}
            }
        }
    }
    assert!(out.len() > 50, "the corpus is too small: {}", out.len());
    out
}

/// The comments of a text, trimmed, in order.
fn comments(text: &str) -> Vec<String> {
    let lexed = lex(&FileName::new("t.net"), text);
    lexed.comments.iter().map(|c| text[c.range.to_range()].trim_end().to_string()).collect()
}

/// The tokens of a text (kind and text), without line breaks.
fn tokens(text: &str) -> Vec<(TokenKind, String)> {
    lex(&FileName::new("t.net"), text)
        .tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Newline)
        .map(|t| (t.kind, text[t.range.to_range()].to_string()))
        .collect()
}

#[test]
fn the_corpus_keeps_its_tree_and_comments_and_formats_once() {
    let mut formatted = 0;
    let mut failures = Vec::new();
    for (name, text) in corpus() {
        let file = FileName::new(name.clone());
        let before = parse(&file, &text);
        if !before.errors.is_empty() {
            // Spec examples of errors.
            assert!(matches!(format(&file, &text), Err(FormatError::Syntax(_))), "{name}");
            continue;
        }
        let out = match format(&file, &text) {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        formatted += 1;
        let after = parse(&file, &out);
        if after.tree != before.tree || !after.errors.is_empty() {
            failures.push(format!("{name}: the tree changed"));
        }
        if comments(&out) != comments(&text) {
            failures.push(format!("{name}: comments changed"));
        }
        // Only trailing commas before a closing bracket on the same line may go.
        let strip = |t: Vec<(TokenKind, String)>| -> Vec<(TokenKind, String)> {
            t.into_iter().filter(|(k, _)| *k != TokenKind::Comma).collect()
        };
        if strip(tokens(&out)) != strip(tokens(&text)) {
            failures.push(format!("{name}: tokens changed"));
        }
        let docs = |p: &netc::syntax::Parse| p.spans.iter().map(|s| s.doc.clone()).collect::<Vec<_>>();
        if docs(&after) != docs(&before) {
            failures.push(format!("{name}: documentation comments moved"));
        }
        match format(&file, &out) {
            Ok(again) if again == out => {}
            Ok(again) => failures.push(format!("{name}: not idempotent:\n--- once\n{out}\n--- twice\n{again}")),
            Err(e) => failures.push(format!("{name}: the formatted text does not format: {e}")),
        }
        if out.lines().any(|l| l.ends_with(' ') || l.ends_with('\t')) {
            failures.push(format!("{name}: trailing whitespace"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(formatted > 50, "only {formatted} files formatted");
}

#[test]
fn examples_and_the_prelude_are_formatted() {
    let mut paths = Vec::new();
    net_files_below(&root().join("examples"), &mut paths);
    paths.push(root().join("stdlib/std/nn.net"));
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        let out = format(&FileName::new(path.display().to_string()), &text).expect("formats");
        assert_eq!(out, text, "{} is not formatted: run `netc fmt {}`", path.display(), path.display());
    }
}

#[test]
fn syntax_errors_are_refused_with_their_diagnostics() {
    let mut paths = Vec::new();
    net_files_below(&root().join("tests/fixtures/syntax_errors"), &mut paths);
    assert!(!paths.is_empty());
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("UTF-8");
        let file = FileName::new("broken.net");
        match format(&file, &text) {
            Err(FormatError::Syntax(diagnostics)) => {
                assert_eq!(diagnostics, parse(&file, &text).errors, "{}", path.display());
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

const MESSY: &str = "\u{feff}

# A messy file.
use   std.nn
use \"blocks.net\"
## Documentation stays with its item.
block  basic( x,planes:int,stride :int=1 ){   # trailing comment
  y=relu( batchnorm( conv2d(x,planes,k = 3,stride=stride,pad=1,bias=false) ) )



  s=x ;t = - y*2+x.shape[ 1 ]-(3 - -1)
  if stride!=1 and not(planes==1){s=batchnorm(conv2d(x,planes,k=1,stride=stride,bias=false))}
  else  {   s = x   }
  parts = split(x,2)[0]
	return relu(y+s)
}
op pair(x: tensor, ) -> ( tensor,tensor , )
model m(classes:int=10,shape:[int]=[1,-1]) {
    input x:f32[ N,3,H,W ]
    y = conv2d(
    x,
          16,
  k=3,
      )
    z = (y
  + y)
    y = repeat 2 basic(y,16)
    w = repeat (classes-1) basic(y,16)
    return linear(flatten(adaptive_avgpool2d(y,1)),classes)
}
train fit{model m(classes=100);batch 64,optimizer adamw(foreach=false)
  dim H=32 dim W = 32
    dataloader( workers=8,sample=602KB )
      budget 12GiB}
infer serve { model m()  batch 1  no_grad  eval  device t4  budget 300 MiB  overhead 20 MiB  dim H = 32  dim W = 32 }
infer small {model m() batch -1 dim H = 8 dim W = 8}
";

#[test]
fn layout_snapshot() {
    let out = format(&FileName::new("messy.net"), MESSY).expect("formats");
    assert_eq!(format(&FileName::new("messy.net"), &out).expect("formats again"), out);
    insta::assert_snapshot!(format!("=== input\n{MESSY}=== formatted\n{out}"));
}

// A long scenario that follows another item on its line is split too (issue 21): `netc fmt`
// used to split only a scenario that starts its line, and left this one at 121 columns.
#[test]
fn a_long_scenario_after_another_item_on_its_line_is_split() {
    let m = "model m() {\n    input x: f32[N, 8]\n    return x\n}\n\n";
    let long = "infer serve { model m()  batch 1  no_grad  eval  device t4  budget 300 MiB  overhead 100 MiB }";
    let input = format!("{m}infer small {{ model m()  batch 1 }}; {long}  # c\n");
    let out = format(&FileName::new("t.net"), &input).expect("formats");
    assert_eq!(
        out,
        format!(
            "{m}infer small {{ model m()  batch 1 }}; infer serve {{\n    model m()\n    batch 1\n    no_grad\n    eval\n    device t4\n    budget 300 MiB\n    overhead 100 MiB\n}}  # c\n"
        )
    );
    assert!(out.lines().all(|l| l.len() <= netc::format::MAX_WIDTH), "{out}");
    assert_eq!(format(&FileName::new("t.net"), &out).expect("formats again"), out);
    // A short scenario before the long one on the line stays on it; one that itself reaches
    // past the width is split, and the one after it is measured from its new line (97
    // columns from the `}`: it stays on one line).
    let both = format!(
        "{m}{} {{ model m()  batch 1  no_grad  eval  device t4  budget 300 MiB }}; {long}\n",
        "infer a_scenario_with_a_long_name_to_push_it_past_the_width_of_the_line"
    );
    let out = format(&FileName::new("t.net"), &both).expect("formats");
    assert!(out.contains("\n    budget 300 MiB\n}; infer serve { model m()  batch 1 "), "{out}");
    assert!(out.contains(&format!("\n}}; {long}\n")), "97 columns from the `}}`: not split\n{out}");
    assert!(out.lines().all(|l| l.len() <= netc::format::MAX_WIDTH), "{out}");
    assert_eq!(format(&FileName::new("t.net"), &out).expect("formats again"), out);
}

// ---------------------------------------------------------------------------------------
// Whitespace noise formats away

/// `text` with its spaces between tokens replaced by random runs of spaces and tabs (at
/// least one where there was some), and random indentation. Line breaks stay.
fn add_noise(text: &str, seed: &[u8]) -> String {
    let lexed = lex(&FileName::new("t.net"), text);
    let mut marks: Vec<(usize, usize)> =
        lexed.tokens.iter().map(|t| (t.range.start as usize, t.range.end as usize)).collect();
    marks.extend(lexed.comments.iter().map(|c| (c.range.start as usize, c.range.end as usize)));
    marks.sort();
    let mut out = String::new();
    let mut pos = 0;
    let mut k = 0;
    let mut noise = |min: usize| {
        let b = seed.get(k % seed.len().max(1)).copied().unwrap_or(0) as usize;
        k += 1;
        let n = min + b % 3;
        (0..n).map(|i| if (b >> i) & 1 == 1 { '\t' } else { ' ' }).collect::<String>()
    };
    for (start, end) in marks {
        if start < pos {
            continue;
        }
        let gap = &text[pos..start];
        if gap.contains('\n') {
            // Keep the line breaks, replace the indentation.
            let breaks = gap.matches('\n').count();
            out.push_str(&"\n".repeat(breaks));
            out.push_str(&noise(0));
        } else if pos == 0 {
            out.push_str(&noise(0));
        } else {
            out.push_str(&noise(usize::from(!gap.is_empty())));
        }
        out.push_str(&text[start..end]);
        pos = end;
    }
    out.push_str(&text[pos..].replace([' ', '\t'], ""));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn whitespace_noise_formats_away(pick in 0usize..1000, seed in proptest::collection::vec(any::<u8>(), 1..64)) {
        let corpus: Vec<(String, String)> =
            corpus().into_iter().filter(|(n, t)| !n.contains(".md:") || parse(&FileName::new("t.net"), t).errors.is_empty()).collect();
        let (name, text) = &corpus[pick % corpus.len()];
        let file = FileName::new("t.net");
        if let Ok(clean) = format(&file, text) {
            let noisy = add_noise(text, &seed);
            let out = format(&file, &noisy);
            prop_assert_eq!(out.as_ref().ok(), Some(&clean), "{}\n--- noisy\n{}", name, noisy);
        }
    }

    #[test]
    fn any_text_formats_or_is_refused_without_panicking(text in "[a-z0-9 (){}\\[\\],.=:;+\\-*/#\n\"]{0,200}") {
        let file = FileName::new("t.net");
        match format(&file, &text) {
            Ok(out) => {
                prop_assert_eq!(&parse(&file, &out).tree, &parse(&file, &text).tree);
                prop_assert_eq!(format(&file, &out).ok(), Some(out.clone()));
            }
            Err(FormatError::Syntax(d)) => prop_assert!(!d.is_empty()),
            Err(FormatError::Internal(m)) => prop_assert!(false, "internal error: {}", m),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The command line

struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("netc-fmt-{}-{nanos}", std::process::id())).join(test);
        std::fs::create_dir_all(&path).expect("temporary directory");
        TempDir(path)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().expect("unique parent"));
    }
}

fn netc(args: &[&OsString]) -> (u8, String, String) {
    let mut argv: Vec<OsString> = vec!["netc".into()];
    argv.extend(args.iter().map(|a| (*a).clone()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(argv, &mut out, &mut err, false);
    (code, String::from_utf8(out).expect("UTF-8"), String::from_utf8(err).expect("UTF-8"))
}

const UGLY: &str = "block b(x){\nreturn relu( x )\n}\n";
const PRETTY: &str = "block b(x) {\n    return relu(x)\n}\n";

#[test]
fn fmt_check_lists_files_and_exits_1_without_writing() {
    let dir = TempDir::new("check");
    let ugly = dir.write("a/ugly.net", UGLY);
    let pretty = dir.write("pretty.net", PRETTY);
    let (code, out, err) = netc(&[&"fmt".into(), &"--check".into(), &dir.0.clone().into_os_string()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.trim_end().ends_with("a/ugly.net"), "{out}");
    assert_eq!(std::fs::read_to_string(&ugly).unwrap(), UGLY);
    let (code, out, _) = netc(&[&"fmt".into(), &"--check".into(), &pretty.into_os_string()]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn fmt_writes_in_place_and_then_checks_clean() {
    let dir = TempDir::new("write");
    let ugly = dir.write("ugly.net", UGLY);
    let (code, out, err) = netc(&[&"fmt".into(), &dir.0.clone().into_os_string()]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    assert_eq!(std::fs::read_to_string(&ugly).unwrap(), PRETTY);
    let (code, _, _) = netc(&[&"fmt".into(), &"--check".into(), &ugly.into_os_string()]);
    assert_eq!(code, 0);
}

#[test]
fn fmt_leaves_files_with_syntax_errors_and_shows_why() {
    let dir = TempDir::new("broken");
    let broken = dir.write("broken.net", "block b(x) {\n    y = relu(x\n    return y\n}\n");
    let ugly = dir.write("ugly.net", UGLY);
    let (code, out, err) = netc(&[&"fmt".into(), &"--color".into(), &"never".into(), &dir.0.clone().into_os_string()]);
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(err.contains("E0105") && err.contains("not formatted"), "{err}");
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "block b(x) {\n    y = relu(x\n    return y\n}\n");
    // The other files are still formatted.
    assert_eq!(std::fs::read_to_string(&ugly).unwrap(), PRETTY);
}

#[test]
fn fmt_of_a_missing_path_is_a_usage_error() {
    let (code, _, err) = netc(&[&"fmt".into(), &"/no/such/file.net".into()]);
    assert_eq!(code, 2);
    assert!(err.contains("no such file"), "{err}");
}

// ---------------------------------------------------------------------------------------
// Writes are atomic (issue 21): a file is replaced whole or not at all

/// A file of about 5 KB that `netc fmt` rewrites (every line is indented anew).
fn big_unformatted() -> String {
    let mut text = String::from("model m() {\n    input x: f32[N, 8]\n");
    for i in 0..300 {
        text.push_str(&format!("  y{i}=relu( x )\n"));
    }
    text.push_str("    return x\n}\n");
    text
}

/// The files of `dir` that `netc fmt` may have left behind.
fn temporary_files(dir: &std::path::Path) -> Vec<String> {
    let names = std::fs::read_dir(dir).expect("a directory").map(|e| e.expect("an entry").file_name());
    names.map(|n| n.to_string_lossy().into_owned()).filter(|n| n.ends_with(".netc-tmp")).collect()
}

// `ulimit -f 4` kills netc with SIGXFSZ when it writes past 4 KiB: `std::fs::write` had
// truncated the 5 KB file to 4,096 bytes by then. Now the file is whole. RLIMIT_FSIZE binds
// root too, so this runs under any user; it needs the binary and a POSIX shell.
#[cfg(unix)]
#[test]
fn fmt_killed_while_writing_leaves_the_file_whole() {
    let Some(binary) = crate::cli::netc_binary() else {
        eprintln!("skipped: the netc binary is not built; run `cargo build -p netc-cli` first");
        return;
    };
    let dir = TempDir::new("ulimit");
    let text = big_unformatted();
    assert!(text.len() > 4096);
    let path = dir.write("big.net", &text);
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4 && exec \"$0\" fmt \"$1\"")
        .arg(&binary)
        .arg(&path)
        .status()
        .expect("run sh");
    assert!(!status.success(), "the write past the limit fails");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "the file is as it was");
    // Without the limit it formats (and the killed run's temporary file is no `.net` file).
    let (code, _, err) = netc(&[&"fmt".into(), &path.clone().into_os_string()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format(&FileName::new("big.net"), &text).unwrap());
}

// A write that fails (here: a directory where no file can be made) leaves the file and names
// it. Root may write anywhere: then there is nothing to test.
#[cfg(unix)]
#[test]
fn fmt_that_cannot_write_leaves_the_file_and_names_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("read-only");
    let ugly = dir.write("locked/ugly.net", UGLY);
    let locked = dir.0.join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = locked.join("probe");
    if std::fs::write(&probe, "").is_ok() {
        let _ = std::fs::remove_file(&probe);
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("skipped: this user may write in a read-only directory");
        return;
    }
    let (code, _, err) = netc(&[&"fmt".into(), &ugly.clone().into_os_string()]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, 2);
    assert!(err.starts_with("error: cannot write `") && err.contains("ugly.net`: "), "{err}");
    assert!(err.contains("was left as it is"), "{err}");
    assert_eq!(std::fs::read_to_string(&ugly).unwrap(), UGLY);
    assert!(temporary_files(&locked).is_empty());
}

// A file reached through a symbolic link: its target is replaced atomically and keeps its
// permissions; the link stays a link.
#[cfg(unix)]
#[test]
fn fmt_through_a_symbolic_link_formats_its_target_and_keeps_the_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("link");
    let real = dir.write("real/ugly.net", UGLY);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.0.join("link.net");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, out, err) = netc(&[&"fmt".into(), &link.clone().into_os_string()]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), PRETTY);
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
    assert!(temporary_files(&dir.0).is_empty() && temporary_files(&dir.0.join("real")).is_empty());
}
