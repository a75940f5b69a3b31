//! Tidiness of the code base itself, as rust-analyzer's `xtask tidy`: the `netc` crate's
//! top-level modules import each other without a cycle (the layers point one way), every
//! source file starts with its `//!` documentation, and every path ARCHITECTURE.md names
//! exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::root;

/// The `.rs` files below `dir`, recursively, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The source without its comments and its `#[cfg(test)]` part (which may reach anywhere).
fn code_of(source: &str) -> String {
    let source = source.split("#[cfg(test)]").next().unwrap_or("");
    source.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules a file's code names as `crate::<module>`.
fn crate_references(code: &str) -> BTreeSet<String> {
    let ident = |text: &str| -> String { text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.insert(ident(rest));
            continue;
        };
        // `use crate::{a::b, c::{d, e}};`: the first segment of each path at depth 0.
        let mut depth = 0;
        let mut at_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => at_start = true,
                c if at_start && !c.is_whitespace() => {
                    out.insert(ident(&group[i..]));
                    at_start = false;
                }
                _ => {}
            }
        }
    }
    out.remove("");
    out
}

/// Which top-level module of the `netc` crate imports which, from the code (tests excluded).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("compiler/src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in rust_files(&src) {
        let relative = path.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(crate_references(&code).into_iter().filter(|m| *m != module));
    }
    graph
}

/// A cycle of the graph, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut cycle: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_crates_modules_import_each_other_without_a_cycle() {
    let graph = module_graph();
    assert!(graph.len() > 20, "the module graph was not read: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between top-level modules of compiler/src: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let edges = |pairs: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            graph.entry(a.to_string()).or_default().insert(b.to_string());
            graph.entry(b.to_string()).or_default();
        }
        graph
    };
    assert_eq!(find_cycle(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(find_cycle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])).map(|c| c.len()), Some(4));
    let code = "use crate::{db::Db, graph::{Graph, Node}};\nlet x = crate::op::Op::Add; // crate::host";
    assert_eq!(
        crate_references(&code_of(code)).into_iter().collect::<Vec<_>>(),
        ["db", "graph", "op"].map(String::from)
    );
}

#[test]
fn every_source_file_starts_with_its_module_documentation() {
    let mut missing = Vec::new();
    for dir in ["compiler/src", "lsp/src", "cli/src"] {
        for path in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.starts_with("//!") {
                missing.push(path.strip_prefix(root()).unwrap().display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "files without a `//!` module documentation first: {missing:?}");
}

#[test]
fn every_path_architecture_md_names_exists() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut named = 0;
    let mut missing = Vec::new();
    // A path is named from the repository's root, or (a bare file name or folder) from a
    // folder named before it in the same paragraph or list item.
    for paragraph in text.split("\n\n").flat_map(|p| p.split("\n- ")) {
        let mut folders: Vec<PathBuf> = vec![root()];
        for (i, chunk) in paragraph.split('`').enumerate() {
            // Odd chunks are inside backquotes; a path has a slash or a file extension, starts
            // with a letter or a dot-folder, and has no spaces or placeholders.
            let is_path = i % 2 == 1
                && chunk.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.')
                && !chunk.contains(char::is_whitespace)
                && !chunk.contains(['<', '*', '(', '{', ':'])
                && (chunk.contains('/') || [".rs", ".md", ".net", ".toml"].iter().any(|e| chunk.ends_with(e)))
                && chunk.len() > 4;
            if !is_path {
                continue;
            }
            named += 1;
            match folders.iter().rev().map(|f| f.join(chunk)).find(|p| p.exists()) {
                Some(found) if found.is_dir() => folders.push(found),
                Some(_) => {}
                None => missing.push(chunk.to_string()),
            }
        }
    }
    assert!(named > 30, "ARCHITECTURE.md names only {named} paths");
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}
