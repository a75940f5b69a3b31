//! Inlay hints and line figures from the `ide` façade: the hints of a range are exactly the
//! whole file's hints that fall in it (the range is all that is computed), and after edits
//! they equal a fresh database's.

use netc::diagnostics::{FileName, TextRange};
use netc::host::Database;
use netc::ide::{HintConfig, InlayHint, hover, inlay_hints};

/// Blocks on shared lines, two statements on one line, a multi-line call and a model.
const TEXT: &str = "\
## Two blocks on one line.
block a(x) { return relu(x) }; block b(x) { return gelu(x) }
block mlp(x, width: int) {
    h = linear(x, width); h = relu(h)
    y = linear(
        h,
        width,
    )
    return x + y
}

model m() {
    input x: f32[N, 64]
    y = mlp(x, 64)
    y = a(y)
    y = b(y)
    return mlp(y, 64)
}

train fit { model m()  batch 32  optimizer adam }
";

fn hints(db: &Database, name: &str, range: Option<TextRange>) -> Vec<InlayHint> {
    let file = db.file(&FileName::new(name)).expect("loaded");
    inlay_hints(db, file, range, None, &HintConfig::default())
}

#[test]
fn hints_of_a_range_are_the_files_hints_in_it() {
    let mut db = Database::new();
    db.set_file(FileName::new("m.net"), TEXT.to_string());
    let all = hints(&db, "m.net", None);
    // One hint per line with statements: both blocks' returns on line 2 share one, the
    // multi-line call's goes after its `)` on line 8, and the model's five statements.
    let lines_with_hints: Vec<usize> =
        all.iter().map(|h| TEXT[..h.offset as usize].matches('\n').count() + 1).collect();
    assert_eq!(lines_with_hints, [2, 4, 8, 9, 13, 14, 15, 16, 17]);
    let lines: Vec<u32> = std::iter::once(0).chain(TEXT.match_indices('\n').map(|(i, _)| i as u32 + 1)).collect();
    for (i, &start) in lines.iter().enumerate() {
        for &end in &lines[i..] {
            let range = TextRange::new(start, end);
            let expected: Vec<InlayHint> =
                all.iter().filter(|h| range.start <= h.offset && h.offset <= range.end).cloned().collect();
            assert_eq!(hints(&db, "m.net", Some(range)), expected, "range {start}..{end}");
        }
    }
}

#[test]
fn two_statements_on_a_line_make_one_hint_with_the_last_shape() {
    let mut db = Database::new();
    db.set_file(FileName::new("m.net"), TEXT.to_string());
    let line = TEXT.find("h = linear(x, width); h = relu(h)").expect("the line") as u32;
    let end = line + "h = linear(x, width); h = relu(h)".len() as u32;
    let on_line: Vec<InlayHint> = hints(&db, "m.net", Some(TextRange::new(line, end)));
    assert_eq!(on_line.len(), 1, "{on_line:#?}");
    assert_eq!(on_line[0].offset, end);
    assert!(on_line[0].label.starts_with("f32[32, 64]"), "{}", on_line[0].label);
    // Hovering either statement shows that line's figures.
    let file = db.file(&FileName::new("m.net")).expect("loaded");
    let first = hover(&db, file, line + 2, None).expect("a hover").markdown;
    let second = hover(&db, file, end - 2, None).expect("a hover").markdown;
    let figures = |m: &str| m.split("**In scenario").nth(1).map(str::to_string);
    assert!(figures(&first).is_some(), "{first}");
    assert_eq!(figures(&first), figures(&second));
}

#[test]
fn hints_after_edits_equal_a_fresh_databases() {
    let mut db = Database::new();
    db.set_file(FileName::new("m.net"), TEXT.to_string());
    let _ = hints(&db, "m.net", None);
    let edits = [
        TEXT.replace("## Two blocks on one line.", "## Two blocks\n## on one line."),
        TEXT.replace("    y = a(y)\n", "    # a comment\n    y = a(y)\n"),
        TEXT.replace("batch 32", "batch 8"),
        TEXT.replace("h = linear(x, width); h = relu(h)", "h = linear(x, width)\n    h = relu(h)"),
        TEXT.replace("return mlp(y, 64)", "return mlp(y, 64"),
        TEXT.to_string(),
    ];
    for text in edits {
        db.set_file(FileName::new("m.net"), text.clone());
        let mut fresh = Database::new();
        fresh.set_file(FileName::new("m.net"), text.clone());
        assert_eq!(hints(&db, "m.net", None), hints(&fresh, "m.net", None), "after the edit to\n{text}");
    }
}
