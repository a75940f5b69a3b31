//! Reparsing after an edit (`netc::syntax::incremental`) gives exactly the parse from
//! scratch: tree, node positions, comments, documentation and errors, for random edits of
//! every `.net` text in the repository (including the files with syntax errors) and of a
//! large generated file; and it parses only what the edit reached.

use netc::db::STDLIB_SOURCES;
use netc::diagnostics::FileName;
use netc::syntax::incremental::ParseState;
use netc::syntax::parse;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::support::{net_files_below, root};

/// The texts edited: the fixtures (valid and broken), the examples and the stdlib, and texts
/// whose lines end with a lone `\r`, or with all three line ends.
fn corpus() -> Vec<String> {
    let mut paths = Vec::new();
    for dir in ["tests/fixtures", "examples"] {
        net_files_below(&root().join(dir), &mut paths);
    }
    let mut texts: Vec<String> = paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    texts.extend(STDLIB_SOURCES.iter().map(|(_, text)| text.to_string()));
    texts.push(long_body(40));
    texts.push(long_body(15).replace('\n', "\r"));
    texts.push(mixed_line_ends(&long_body(15)));
    texts
}

/// `text` with its line ends made `\n`, `\r\n` and lone `\r`s in turn (a `\r` before a
/// `\r\n` is a line of its own).
fn mixed_line_ends(text: &str) -> String {
    let ends = ["\n", "\r", "\r\n", "\r", "\r\r\n"];
    text.split('\n').enumerate().map(|(i, line)| format!("{line}{}", ends[i % ends.len()])).collect()
}

/// A model whose body is `lines` statements of several forms (calls over several lines,
/// keyword arguments, `if`/`else`, comments between): the statements a reparse takes from
/// the previous parse when an edit leaves them alone.
fn long_body(lines: usize) -> String {
    let mut text =
        String::from("## A long model.\nmodel long(width: int = 64) {\n    input x: f32[N, 64]\n    y = x\n");
    for i in 0..lines {
        text.push_str(&match i % 5 {
            0 => format!("    y = linear(y, width)  # line {i}\n"),
            1 => "    y = layernorm(\n        y,\n        eps=1e-5\n    )\n".to_string(),
            2 => format!("    if width > {i} {{\n        y = relu(y)\n    }} else {{\n        y = gelu(y)\n    }}\n"),
            3 => format!("    # A comment about line {i}.\n    a = y * 2; b = y\n"),
            _ => format!("    y = dropout(y + a - b, p=0.{i}); z = y\n"),
        });
    }
    text.push_str("    return y\n}\n\ntrain fit { model long()  batch 8 }\n");
    text
}

/// What an edit inserts: the pieces that change how the following text parses (brackets,
/// quotes, comment marks, item keywords at a line start, line breaks) and plain text.
const INSERTS: &[&str] = &[
    "",
    "\n",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\"",
    "#",
    "## doc\n",
    ";",
    ",",
    "=",
    "x",
    " ",
    "\n\n",
    "model m() {\n",
    "block b(x) {\n    return x\n}\n",
    "train t { model m()  batch 2 }\n",
    "infer",
    "model",
    "use std.blocks\n",
    "op f(x) -> y\n",
    "y = relu(x)\n",
    "return",
    "if true {",
    "} else {",
    "repeat 3 {",
    "é",
    "🚀",
    "$",
    "1.5e",
    "12 GiB",
    "\t",
    "\r\n",
    "\r",
    "# c\r",
    "\r\"",
];

/// One edit: at a position (moved to a character boundary), remove some bytes and insert.
#[derive(Debug, Clone)]
struct Edit {
    at: Index,
    remove: usize,
    insert: &'static str,
}

fn edit() -> impl Strategy<Value = Edit> {
    (any::<Index>(), prop_oneof![Just(0usize), 1..4usize, 1..40usize], prop::sample::select(INSERTS))
        .prop_map(|(at, remove, insert)| Edit { at, remove, insert })
}

fn apply(text: &str, e: &Edit) -> String {
    let mut start = e.at.index(text.len() + 1);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + e.remove).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    format!("{}{}{}", &text[..start], e.insert, &text[end..])
}

fn assert_same(state: &ParseState, file: &FileName, text: &str) -> Result<(), TestCaseError> {
    let fresh = parse(file, text);
    let again = state.parse();
    prop_assert_eq!(&again.tree, &fresh.tree, "tree of\n{}", text);
    prop_assert_eq!(&again.spans, &fresh.spans, "spans of\n{}", text);
    prop_assert_eq!(&again.comments, &fresh.comments, "comments of\n{}", text);
    prop_assert_eq!(&again.errors, &fresh.errors, "errors of\n{}", text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A chain of edits, each reparsed from the state of the one before.
    #[test]
    fn reparse_equals_parse(pick in any::<Index>(), edits in prop::collection::vec(edit(), 1..8)) {
        let corpus = corpus();
        let mut text = corpus[pick.index(corpus.len())].clone();
        let file = FileName::new("edited.net");
        let mut state = ParseState::new(&file, &text);
        for e in &edits {
            text = apply(&text, e);
            state = state.reparse(&file, &text);
            assert_same(&state, &file, &text)?;
        }
    }
}

/// A file of `blocks` small blocks, each with a doc comment and a comment.
fn generated(blocks: usize) -> String {
    (0..blocks)
        .map(|b| format!("## Block {b}.\nblock b{b}(x) {{\n    # A comment.\n    h = relu(x)\n    return h\n}}\n\n"))
        .collect()
}

#[test]
fn an_edit_inside_one_item_parses_that_item_only() {
    let file = FileName::new("big.net");
    let text = generated(1000);
    let state = ParseState::new(&file, &text);
    assert_eq!(state.steps_parsed(), 1000);
    let edits = [
        (
            "    # A comment.\n    h = relu(x)\n    return h\n}\n\n## Block 500.",
            "    # A comment!\n    h = relu(x)\n    return h\n}\n\n## Block 500.",
        ),
        (
            "block b500(x) {\n    # A comment.\n    h = relu(x)",
            "block b500(x) {\n    # A comment.\n    h = gelu(x + 1)",
        ),
        ("## Block 500.", "## Block five hundred,\n## documented."),
    ];
    for (from, to) in edits {
        let edited = text.replacen(from, to, 1);
        assert_ne!(edited, text);
        let after = state.reparse(&file, &edited);
        assert_eq!(after.steps_parsed(), 1, "{from:?} -> {to:?}");
        assert_eq!(**after.parse(), parse(&file, &edited));
    }
    // An unclosed body ends where the next item starts (the parser's recovery), so the next
    // item's step now starts at its keyword instead of after the blank line before it: that
    // item is parsed again too, and the items after it are reused.
    let opened =
        text.replacen("block b500(x) {\n    # A comment.\n    h = relu(x)\n    return h\n}", "block b500(x) {", 1);
    let after = state.reparse(&file, &opened);
    assert_eq!(after.steps_parsed(), 2);
    assert_eq!(**after.parse(), parse(&file, &opened));
    // Deleting every line break from the middle of the file on (inside the body of block
    // 501) joins the rest into one line, whose first `#` comments out the rest: that block
    // runs to the end of the file. One step parses it; the items before are kept.
    let middle = text.len() / 2;
    let joined = format!("{}{}", &text[..middle], text[middle..].replace('\n', " "));
    let after = state.reparse(&file, &joined);
    assert_eq!(after.steps_parsed(), 1);
    assert_eq!(after.parse().tree.len(), text[..middle].matches("block b").count());
    assert_eq!(**after.parse(), parse(&file, &joined));
}

/// The same with lone `\r` line ends (a file without `\n` was one line to the reparse, parsed
/// whole on every edit), and with `\r\n`.
#[test]
fn an_edit_in_a_file_with_lone_carriage_returns_parses_that_item_only() {
    let file = FileName::new("big.net");
    let edits = [
        ("\r", "# A comment.", "# A comment!"),
        ("\r", "h = relu(x)", "h = gelu(x + 1)"),
        // A `\r` made the start of a `\r\n`, and a `\r\n` split: the line break before
        // the edit is read again.
        ("\r", "{\r", "{\r\n"),
        ("\r\n", "{\r\n", "{\r"),
        ("\r", "relu(x)\r", "relu(x)\r\n"),
        ("\r\n", "relu(x)\r\n", "relu(x)\r"),
        ("\r\n", "h = relu(x)", "h = gelu(x + 1)"),
    ];
    for (end, from, to) in edits {
        let text = generated(1000).replace('\n', end);
        let state = ParseState::new(&file, &text);
        let at = text.find("block b500").expect("block 500");
        let found = at + text[at..].find(from).expect("in block 500");
        let edited = format!("{}{to}{}", &text[..found], &text[found + from.len()..]);
        let after = state.reparse(&file, &edited);
        assert_eq!(**after.parse(), parse(&file, &edited), "{end:?}: {from:?} -> {to:?}");
        assert_eq!(after.steps_parsed(), 1, "{end:?}: {from:?} -> {to:?}");
    }
}

#[test]
fn the_same_text_gives_the_same_parse() {
    let file = FileName::new("same.net");
    let text = generated(3);
    let state = ParseState::new(&file, &text);
    assert_eq!(**state.reparse(&file, &text).parse(), parse(&file, &text));
    assert_eq!(**state.reparse(&file, "").parse(), parse(&file, ""));
    assert_eq!(**ParseState::new(&file, "").reparse(&file, &text).parse(), parse(&file, &text));
}

/// Edits at the edges: the first and last byte, a file without a final line break, CRLF line
/// ends, a byte-order mark, a multi-byte character split by the common prefix, a string
/// left open, a bracket opened across items, and one left open before the next item.
#[test]
fn edits_at_the_edges_equal_a_parse() {
    let file = FileName::new("edges.net");
    let base = "block a(x) {\n    return relu(x)\n}\n\nmodel m() {\n    input x: f32[N, 4]\n    return a(x)\n}\n";
    let crlf = base.replace('\n', "\r\n");
    let cr = base.replace('\n', "\r");
    let cases: Vec<(String, String)> = vec![
        (base.to_string(), format!("#{base}")),
        (base.to_string(), format!("{base}#")),
        (base.to_string(), base.trim_end().to_string()),
        (base.trim_end().to_string(), format!("{}\ninfer s {{ model m() }}", base.trim_end())),
        (crlf.clone(), crlf.replace("relu", "gelu")),
        (crlf.clone(), crlf.replacen("\r\n", "\n", 1)),
        // Lone `\r`s: one made a `\r\n` and back, a `\r\n` split, a comment and a string
        // that end at a `\r`.
        (cr.clone(), cr.replacen("{\r", "{\r\n", 1)),
        (cr.clone(), cr.replacen("\r", "\r\r", 1)),
        (crlf.clone(), crlf.replacen("\r\n", "\r", 2)),
        (crlf.clone(), crlf.replacen("\n", "", 1)),
        (crlf.clone(), crlf.replacen("relu(x)\r\n", "relu(x)\r", 1)),
        (cr.clone(), cr.replacen("relu(x)\r", "relu(x) # done\r", 1)),
        (cr.clone(), cr.replacen("relu(x)\r", "relu(x) \"open\r", 1)),
        (format!("# doc{cr}"), format!("# doc\r{cr}")),
        (format!("## doc\r{cr}"), format!("## doc\r\n{cr}")),
        (format!("\u{feff}{base}"), format!("\u{feff}# doc\n{base}")),
        ("# é\n".to_string() + base, "# è\n".to_string() + base),
        (base.to_string(), base.replace("return relu(x)", "return \"relu(x)")),
        (base.to_string(), base.replace("return relu(x)", "return relu(x")),
        (base.to_string(), base.replace("}\n\nmodel", "\nmodel")),
        (base.to_string(), String::new()),
        (String::new(), base.to_string()),
        // A list left open right before the next item's keyword: whether it is "unclosed"
        // or "a missing `,`" must not depend on a bracket in the next item (found by the
        // reparse fuzz target after 155,069 inputs).
        ("model t(){(s\nuse\n}\n".to_string(), "model t(){(s\nuse\n)\n".to_string()),
    ];
    for (old, new) in cases {
        let state = ParseState::new(&file, &old).reparse(&file, &new);
        assert_eq!(**state.parse(), parse(&file, &new), "from\n{old:?}\nto\n{new:?}");
        let back = state.reparse(&file, &old);
        assert_eq!(**back.parse(), parse(&file, &old), "back from\n{new:?}\nto\n{old:?}");
    }
}

#[test]
fn an_edit_inside_a_long_body_parses_the_statements_it_reached_only() {
    let file = FileName::new("long.net");
    let text = long_body(300);
    let state = ParseState::new(&file, &text);
    assert_eq!(state.stmts_reused(), 0);
    // (edit, at most how many statements are parsed again): the others are taken from the
    // previous parse. The edited lines are found by comparing the texts, so an added or
    // removed line may take the next line with it (its indentation matches either way).
    let edits = [
        // One statement changed: it alone.
        (("    y = linear(y, width)  # line 150\n", "    y = linear(y, 2 * width)  # line 150\n"), 1),
        // A comment changed: no statement.
        (("    # A comment about line 153.\n", "    # A comment about line one hundred fifty-three.\n"), 0),
        // A statement added, with more nodes than any: the statements after it take new ids.
        (
            (
                "    y = linear(y, width)  # line 150\n",
                "    y = linear(y, width)  # line 150\n    y = f(g(h(y), 1), k=[1, 2])\n",
            ),
            2,
        ),
        // A statement removed.
        (("    y = linear(y, width)  # line 150\n", ""), 1),
        // A line break inside a call's arguments: the call only.
        (("        y,\n        eps=1e-5\n", "        y, eps=1e-5\n"), 1),
        // Two statements joined on one line.
        (("    y = linear(y, width)  # line 150\n    y = layernorm(", "    y = linear(y, width); y = layernorm("), 2),
    ];
    let statements_of = |text: &str| {
        let parsed = parse(&file, text);
        let model = parsed.tree.iter().find_map(|item| match item {
            netc::syntax::Item::Model(model) => Some(model.body.stmts.len()),
            _ => None,
        });
        model.expect("a model")
    };
    let statements = statements_of(&text);
    for ((from, to), parsed) in edits {
        let edited = text.replacen(from, to, 1);
        assert_ne!(edited, text, "{from:?}");
        let after = state.reparse(&file, &edited);
        assert_eq!(**after.parse(), parse(&file, &edited), "{from:?} -> {to:?}");
        assert!(
            after.stmts_reused() >= statements_of(&edited) - parsed,
            "{from:?} -> {to:?}: {}",
            after.stmts_reused()
        );
        // And back, from there.
        let back = after.reparse(&file, &text);
        assert_eq!(**back.parse(), parse(&file, &text));
        assert!(back.stmts_reused() >= statements - 2, "{to:?} -> {from:?}: {}", back.stmts_reused());
    }
    // An unclosed bracket swallows the lines after it: they are parsed again, and the parse
    // is the parse from scratch.
    let opened = text.replacen("    y = linear(y, width)  # line 150\n", "    y = linear(y, width\n", 1);
    let after = state.reparse(&file, &opened);
    assert_eq!(**after.parse(), parse(&file, &opened));
}
