//! `spec/ops.md`, the reference of the standard library, is generated from the `##`
//! documentation comments of the embedded stdlib files (`netc::db::STDLIB_SOURCES`): this
//! test renders the page and fails when the checked-in file differs. `NETC_BLESS=1 cargo test
//! -p netc-tests ops_doc` rewrites it.
//!
//! It also requires every op, block, model and scenario of the standard library to be
//! documented, and every op's documentation to say what the editor's hover promises: shape,
//! parameters, MACs, what autograd saves, workspace, and an example.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use netc::db::{STDLIB_SOURCES, stdlib_file_name};
use netc::syntax::{Item, Parse, parse};

/// Where the page is, relative to the workspace root.
const PAGE: &str = "spec/ops.md";

/// The lines each op's documentation must have (a line may cover several: `- Params, MACs:`).
const OP_SECTIONS: &[&str] = &["Shape", "Params", "MACs", "Saves", "Workspace", "Example"];

/// The lines each block's documentation must have.
const BLOCK_SECTIONS: &[&str] = &["Shape", "Example"];

/// One stdlib module, parsed.
struct Module {
    /// `std.nn`.
    name: &'static str,
    /// Its text.
    text: &'static str,
    /// Its parse.
    parse: Parse,
}

fn modules() -> Vec<Module> {
    STDLIB_SOURCES
        .iter()
        .map(|&(name, text)| {
            let parse = parse(&stdlib_file_name(name), text);
            assert!(parse.errors.is_empty(), "{name} has syntax errors: {:#?}", parse.errors);
            Module { name, text, parse }
        })
        .collect()
}

/// The comment at the top of a file (its `#` lines before the first item or blank line),
/// without the markers: the module's description.
fn module_comment(text: &str) -> String {
    let mut lines = Vec::new();
    for line in text.lines() {
        let line = line.trim_end();
        if !line.starts_with('#') || line.starts_with("##") {
            break;
        }
        let content = line.trim_start_matches('#');
        lines.push(content.strip_prefix(' ').unwrap_or(content));
    }
    lines.join("\n").trim().to_string()
}

/// The source text of item `index`.
fn item_text(module: &Module, index: usize) -> &'static str {
    let range = module.parse.spans[index].range(netc::syntax::NodeId(0));
    &module.text[range.start as usize..range.end as usize]
}

/// The header of a block or model: its text up to the `{` of its body.
fn header(text: &str) -> &str {
    text.split('{').next().unwrap_or(text).trim_end()
}

/// The first sentence of a documentation comment, on one line.
fn summary(doc: &str) -> String {
    let paragraph: Vec<&str> = doc.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let paragraph = paragraph.join(" ");
    let end = paragraph.find(". ").map_or(paragraph.len(), |i| i + 1);
    paragraph[..end].replace('|', "\\|")
}

/// The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` removed, spaces
/// as `-`, and `-1`, `-2` ... for repeats.
fn anchor(heading: &str, seen: &mut BTreeMap<String, usize>) -> String {
    let base: String = heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    let count = seen.entry(base.clone()).or_insert(0);
    let anchor = if *count == 0 { base.clone() } else { format!("{base}-{count}") };
    *count += 1;
    anchor
}

/// What a module defines, for the contents table.
fn contents(module: &Module) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for item in module.parse.tree.iter() {
        let kind = match item {
            Item::Op(_) => "ops",
            Item::Block(_) => "blocks",
            Item::Model(_) => "models",
            Item::Scenario(_) => "scenarios",
            Item::Use(_) => continue,
        };
        *counts.entry(kind).or_default() += 1;
    }
    ["ops", "blocks", "models", "scenarios"]
        .iter()
        .filter_map(|k| counts.get(k).map(|n| format!("{n} {}", if *n == 1 { &k[..k.len() - 1] } else { k })))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders the page.
fn render() -> String {
    let modules = modules();
    let mut seen = BTreeMap::new();
    let mut out = String::new();
    out.push_str(
        "# The standard library\n\n\
         <!-- Generated from the `##` comments of stdlib/std/ by tests/it/ops_doc.rs: do not edit.\n\
         \x20    Change the comments, then run `NETC_BLESS=1 cargo test -p netc-tests ops_doc`. -->\n\n\
         This page is generated from the documentation comments of the standard library, the\n\
         `stdlib/std/` files embedded in netc (`netc::db::STDLIB_SOURCES`): the text the editor\n\
         shows on hover and completion. To change it, change the comments and run\n\
         `NETC_BLESS=1 cargo test -p netc-tests ops_doc`; the test fails while the page and the\n\
         comments disagree.\n\n\
         Every file sees the ops of `std.nn` without `use` (the prelude); the other modules are\n\
         imported by name: `use std.blocks`, `use std.models.resnet`. The shape rules, parameters\n\
         and MACs of the ops are specified in [shapes.md](shapes.md), the MAC convention in its\n\
         section 5 (FLOPs = 2 x MACs). \"Saves\" is what PyTorch's autograd keeps for the backward\n\
         pass when the op runs with gradients.\n\n",
    );
    out.push_str("| Module | File | Contents |\n|---|---|---|\n");
    let mut module_anchors = Vec::new();
    for m in &modules {
        let a = anchor(&format!("`{}`", m.name), &mut seen);
        let file = stdlib_file_name(m.name).as_str().replace("<std>", "stdlib/std");
        let _ = writeln!(out, "| [`{}`](#{a}) | `{file}` | {} |", m.name, contents(m));
        module_anchors.push(a);
    }
    for m in &modules {
        let _ = writeln!(out, "\n## `{}`\n", m.name);
        let comment = module_comment(m.text);
        if !comment.is_empty() {
            let _ = writeln!(out, "{comment}\n");
        }
        let items: Vec<(usize, &Item)> = m.parse.tree.iter().enumerate().collect();
        let uses: Vec<String> = items
            .iter()
            .filter(|(_, i)| matches!(i, Item::Use(_)))
            .map(|(index, _)| format!("`{}`", item_text(m, *index).trim()))
            .collect();
        if !uses.is_empty() {
            let _ = writeln!(out, "Imports: {}.\n", uses.join(", "));
        }
        // The index of the ops, blocks and models, then each in full.
        let callables: Vec<(usize, &Item)> =
            items.iter().copied().filter(|(_, i)| matches!(i, Item::Op(_) | Item::Block(_) | Item::Model(_))).collect();
        let mut headings = Vec::new();
        for &(index, item) in &callables {
            let name = item.name().expect("ops, blocks and models have names").text.clone();
            headings.push((index, item, name.clone(), anchor(&format!("`{name}`"), &mut seen)));
        }
        out.push_str("| Name | Kind | Summary |\n|---|---|---|\n");
        for (index, item, name, a) in &headings {
            let doc = m.parse.spans[*index].doc.as_deref().unwrap_or("");
            let _ = writeln!(out, "| [`{name}`](#{a}) | {} | {} |", item.keyword(), summary(doc));
        }
        for (index, item, name, _) in &headings {
            let text = item_text(m, *index);
            let mut signature = if matches!(item, Item::Op(_)) { text.trim_end() } else { header(text) }.to_string();
            if matches!(item, Item::Model(_)) {
                // A model's inputs are part of how it is called.
                for line in text.lines().map(str::trim).filter(|l| l.starts_with("input ")) {
                    let _ = write!(signature, "\n    {line}");
                }
            }
            let _ = writeln!(out, "\n### `{name}`\n\n```text\n{signature}\n```\n");
            if let Some(doc) = &m.parse.spans[*index].doc {
                let _ = writeln!(out, "{doc}");
            }
        }
        let scenarios: Vec<(usize, &Item)> =
            items.iter().copied().filter(|(_, i)| matches!(i, Item::Scenario(_))).collect();
        if !scenarios.is_empty() {
            let _ = writeln!(out, "\n### Scenarios of `{}`\n", m.name);
            out.push_str("| Scenario | Settings | Description |\n|---|---|---|\n");
            for (index, item) in scenarios {
                let text = item_text(m, index);
                let settings = text
                    .split_once('{')
                    .and_then(|(_, rest)| rest.rsplit_once('}'))
                    .map(|(inside, _)| inside.split_whitespace().collect::<Vec<_>>().join(" "))
                    .unwrap_or_default();
                let doc = m.parse.spans[index].doc.as_deref().unwrap_or("");
                let _ = writeln!(
                    out,
                    "| `{}` ({}) | `{}` | {} |",
                    item.name().expect("scenarios have names").text,
                    item.keyword(),
                    settings.replace('|', "\\|"),
                    doc.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|"),
                );
            }
        }
    }
    out
}

#[test]
fn spec_ops_md_is_generated_from_the_stdlib() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(PAGE);
    let page = render();
    if std::env::var_os("NETC_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &page).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != page {
        let first = current
            .lines()
            .zip(page.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(page.lines().count()));
        panic!(
            "{PAGE} is out of date with the documentation comments of the standard library \
             (first difference at line {}: {:?} in the file, {:?} generated).\n\
             Regenerate it with `NETC_BLESS=1 cargo test -p netc-tests ops_doc` and commit it.",
            first + 1,
            current.lines().nth(first).unwrap_or("<end of file>"),
            page.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn every_stdlib_item_is_documented() {
    let mut problems = Vec::new();
    for m in modules() {
        for (index, item) in m.parse.tree.iter().enumerate() {
            let Some(name) = item.name() else { continue };
            let doc = m.parse.spans[index].doc.as_deref().unwrap_or("");
            if doc.trim().is_empty() {
                problems.push(format!("{}: {} `{}` has no `##` documentation", m.name, item.keyword(), name.text));
                continue;
            }
            let required = match item {
                Item::Op(_) => OP_SECTIONS,
                Item::Block(_) => BLOCK_SECTIONS,
                _ => &[],
            };
            // A section is a list item `- Name:` or `- Name, Other:`.
            let sections: Vec<&str> = doc
                .lines()
                .filter_map(|l| l.strip_prefix("- "))
                .filter_map(|l| l.split_once(':'))
                .flat_map(|(names, _)| names.split(", "))
                .collect();
            for section in required {
                if !sections.contains(section) {
                    problems.push(format!("{}: {} `{}` has no `- {section}:` line", m.name, item.keyword(), name.text));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_device_preset_is_listed_in_the_language_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/language.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let section = text
        .split("### 8.4 Device presets")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("spec/language.md has a section 8.4 Device presets");
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        listed,
        netc::knobs::DeviceModel::NAMES,
        "section 8.4 of spec/language.md lists the device presets of DeviceModel, in its order"
    );
}
