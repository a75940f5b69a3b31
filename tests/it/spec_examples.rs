//! Every example in `spec/*.md` is a test.
//!
//! A fenced block tagged ```` ```net ```` must check with no diagnostics at all (warnings
//! included). A block tagged ```` ```net,error ```` must start with a comment
//! `# expect: E0204 E0214` and must produce exactly those codes, in that order (the order of
//! `netc check`: by position in the file). Other blocks (```` ```text ````, ...) are not
//! checked. Each example is checked alone, as a file named `main.net`.

use std::path::{Path, PathBuf};

use crate::support::codes;

/// One fenced example.
struct Example {
    /// The Markdown file.
    file: PathBuf,
    /// The 1-based line of the opening fence.
    line: usize,
    /// Whether it is tagged `net,error`.
    error: bool,
    /// The code between the fences.
    text: String,
}

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec")
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// The `net` and `net,error` blocks of a Markdown text. An unterminated fence is an error.
fn examples_in(file: &Path, markdown: &str) -> Result<Vec<Example>, String> {
    let mut examples = Vec::new();
    let mut open: Option<(usize, String, String)> = None; // (line, fence, info)
    let mut body = String::new();
    for (index, line) in markdown.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        match &open {
            None => {
                let fence_len = trimmed.chars().take_while(|&c| c == '`' || c == '~').count();
                if fence_len >= 3 {
                    let fence = trimmed[..fence_len].to_string();
                    let info = trimmed[fence_len..].trim().to_string();
                    open = Some((number, fence, info));
                    body.clear();
                }
            }
            Some((start, fence, info)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed[fence.len()..].trim().is_empty() {
                    let info = info.replace(' ', "");
                    if info == "net" || info == "net,error" {
                        examples.push(Example {
                            file: file.to_path_buf(),
                            line: *start,
                            error: info == "net,error",
                            text: body.clone(),
                        });
                    } else if info.starts_with("net") {
                        return Err(format!(
                            "{}:{start}: unknown example tag `{info}` (use `net` or `net,error`)",
                            file.display()
                        ));
                    }
                    open = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    if let Some((start, _, _)) = open {
        return Err(format!("{}:{start}: code block never closed", file.display()));
    }
    Ok(examples)
}

/// The codes an error example expects: its first line, `# expect: E0204 E0214`.
fn expected_codes(example: &Example) -> Result<Vec<String>, String> {
    let first = example.text.lines().next().unwrap_or("");
    let Some(list) = first.trim().strip_prefix("# expect:") else {
        return Err("a `net,error` example must start with `# expect: CODE ...`".to_string());
    };
    let codes: Vec<String> = list.split_whitespace().map(str::to_string).collect();
    if codes.is_empty() {
        return Err("`# expect:` lists no codes".to_string());
    }
    Ok(codes)
}

fn check_example(example: &Example) -> Result<(), String> {
    let all: Vec<String> = codes(&example.text).into_iter().map(str::to_string).collect();
    // Lints (L codes) are advice about a correct program: an example is checked for them
    // only when its `# expect:` names one.
    let expects_lints = example.error && expected_codes(example)?.iter().any(|c| c.starts_with('L'));
    let actual: Vec<String> = all.into_iter().filter(|c| expects_lints || !c.starts_with('L')).collect();
    if example.error {
        let expected = expected_codes(example)?;
        if actual != expected {
            return Err(format!("expected {expected:?}, got {actual:?}"));
        }
    } else if !actual.is_empty() {
        return Err(format!("expected no diagnostics, got {actual:?}"));
    }
    Ok(())
}

#[test]
fn every_spec_example_checks_as_documented() {
    let dir = spec_dir();
    let mut files = Vec::new();
    markdown_files(&dir, &mut files);
    assert!(!files.is_empty(), "no Markdown files in {}", dir.display());
    let mut failures = Vec::new();
    let mut counted = (0, 0);
    for file in &files {
        let markdown = std::fs::read_to_string(file).expect("spec files are UTF-8");
        let examples = match examples_in(file, &markdown) {
            Ok(examples) => examples,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        for example in &examples {
            if example.error {
                counted.1 += 1;
            } else {
                counted.0 += 1;
            }
            if let Err(e) = check_example(example) {
                let shown = example.file.strip_prefix(&dir).unwrap_or(&example.file);
                failures.push(format!("spec/{}:{}: {e}\n{}", shown.display(), example.line, example.text));
            }
        }
    }
    assert!(failures.is_empty(), "{} spec example(s) failed:\n\n{}", failures.len(), failures.join("\n"));
    // The spec has examples of both kinds; finding none means the extraction broke.
    assert!(counted.0 >= 10 && counted.1 >= 10, "too few examples found: {} net, {} net,error", counted.0, counted.1);
}

#[test]
fn extraction_finds_tagged_blocks_and_their_lines() {
    let md =
        "text\n```net\nblock a(x) { return x }\n```\n\n```text\nignored\n```\n```net,error\n# expect: E0204\nx\n```\n";
    let examples = examples_in(Path::new("t.md"), md).expect("well-formed");
    assert_eq!(examples.len(), 2);
    assert_eq!((examples[0].line, examples[0].error), (2, false));
    assert_eq!(examples[0].text, "block a(x) { return x }\n");
    assert_eq!((examples[1].line, examples[1].error), (9, true));
    assert_eq!(expected_codes(&examples[1]).expect("has codes"), ["E0204"]);
    assert!(examples_in(Path::new("t.md"), "```net\nnever closed\n").is_err());
    assert!(examples_in(Path::new("t.md"), "```netc\nx\n```\n").is_err());
}
