//! Parser conformance: every file in `tests/fixtures/syntax/` exercises one construct of the
//! grammar (spec/language.md) and must parse without errors; every file in
//! `tests/fixtures/syntax_errors/` has one mistake and must give exactly one syntax error
//! with the rest of the file still parsed (unless it is marked `# BUG:`, in which case the
//! snapshot records the current, wrong, output and the comment says what is expected).
//!
//! Each fixture is snapshotted as its input, then the tree as S-expressions (items,
//! bodies, statements and settings with their source range `@line:col..line:col`; columns
//! count characters), then the comments, then the syntax errors. The dump also checks that
//! every name node's range holds exactly the name's text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use netc::diagnostics::{FileName, Place, TextRange};
use netc::render::line_col;
use netc::syntax::{
    Arg, Body, Callable, Expr, ExprKind, ForIter, Item, ItemSpans, Name, OpOutputs, Param, Parse, Scenario,
    SettingValue, Stmt, StmtKind, TypeExpr, UnaryOp, UseTarget, parse,
};

/// Writes a parse as text. Expressions are written inline; items, statements and settings
/// one per line, indented.
struct Dump<'a> {
    text: &'a str,
    out: String,
    spans: &'a ItemSpans,
}

impl<'a> Dump<'a> {
    fn at(&self, range: TextRange) -> String {
        let s = line_col(self.text, range.start);
        let e = line_col(self.text, range.end);
        format!("@{}:{}..{}:{}", s.line, s.column, e.line, e.column)
    }

    fn range(&self, id: netc::syntax::NodeId) -> TextRange {
        self.spans.range(id)
    }

    fn line(&mut self, indent: usize, text: &str) {
        self.out.push_str(&"  ".repeat(indent));
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Appends `)` to the last line written.
    fn close(&mut self) {
        if self.out.ends_with('\n') {
            self.out.pop();
        }
        self.out.push_str(")\n");
    }

    /// A name, checked against the source text at its node.
    fn name(&self, n: &Name) -> String {
        let r = self.range(n.id);
        let written = self.text.get(r.to_range()).unwrap_or("<out of range>");
        assert_eq!(written, n.text, "the node of name `{}` covers `{written}`", n.text);
        n.text.to_string()
    }

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(bits) => format!("{:?}", f64::from_bits(*bits)),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Size { value, integer, unit } => {
                let v = f64::from_bits(*value);
                let v = if *integer { format!("{v}") } else { format!("{v:?}") };
                format!("(size {v} {})", self.name(unit))
            }
            ExprKind::Name(n) => self.name(n),
            ExprKind::Call { callee, args } => {
                let mut s = format!("(call {}", self.name(callee));
                for a in args {
                    s.push(' ');
                    s.push_str(&self.arg(a));
                }
                s.push(')');
                s
            }
            ExprKind::List(elems) => {
                let items: Vec<String> = elems.iter().map(|x| self.expr(x)).collect();
                if items.is_empty() { "(list)".to_string() } else { format!("(list {})", items.join(" ")) }
            }
            ExprKind::Unary { op, operand } => {
                let op = match op {
                    UnaryOp::Neg => "neg",
                    UnaryOp::Not => "not",
                };
                format!("({op} {})", self.expr(operand))
            }
            ExprKind::Binary { op, lhs, rhs } => {
                format!("({} {} {})", op.symbol(), self.expr(lhs), self.expr(rhs))
            }
            ExprKind::Field { base, field } => format!("(. {} {})", self.expr(base), self.name(field)),
            ExprKind::Index { base, index } => format!("(index {} {})", self.expr(base), self.expr(index)),
            ExprKind::Repeat { count, call } => format!("(repeat {} {})", self.expr(count), self.expr(call)),
            ExprKind::Error => "<error>".to_string(),
        }
    }

    fn arg(&self, a: &Arg) -> String {
        match &a.keyword {
            Some(kw) => format!("({}= {})", self.name(kw), self.expr(&a.value)),
            None => self.expr(&a.value),
        }
    }

    fn ty(&self, t: &TypeExpr) -> String {
        match t {
            TypeExpr::Named(n) => self.name(n),
            TypeExpr::List { elem, .. } => format!("[{}]", self.ty(elem)),
            TypeExpr::Tensor { dtype, dims, .. } => {
                let dims: Vec<String> = dims.iter().map(|d| self.expr(d)).collect();
                if dims.is_empty() {
                    format!("(tensor {})", self.name(dtype))
                } else {
                    format!("(tensor {} {})", self.name(dtype), dims.join(" "))
                }
            }
        }
    }

    fn param(&self, p: &Param) -> String {
        let mut s = format!("({}", self.name(&p.name));
        if let Some(t) = &p.ty {
            s.push_str(&format!(" : {}", self.ty(t)));
        }
        if let Some(d) = &p.default {
            s.push_str(&format!(" = {}", self.expr(d)));
        }
        s.push(')');
        s
    }

    fn params(&self, params: &[Param]) -> String {
        let ps: Vec<String> = params.iter().map(|p| self.param(p)).collect();
        if ps.is_empty() { "(params)".to_string() } else { format!("(params {})", ps.join(" ")) }
    }

    fn body(&mut self, indent: usize, head: &str, b: &Body) {
        let recovered = if b.recovered { " recovered" } else { "" };
        let at = self.at(self.range(b.id));
        self.line(indent, &format!("({head} {at}{recovered}"));
        for s in &b.stmts {
            self.stmt(indent + 1, s);
        }
        self.close();
    }

    fn stmt(&mut self, indent: usize, s: &Stmt) {
        let at = self.at(self.range(s.id));
        match &s.kind {
            StmtKind::Input { name, ty } => {
                let line = format!("(input {at} {} {})", self.name(name), self.ty(ty));
                self.line(indent, &line);
            }
            StmtKind::Assign { targets, values } => {
                let names: Vec<String> = targets.iter().map(|n| self.name(n)).collect();
                let values: Vec<String> = values.iter().map(|v| self.expr(v)).collect();
                let line = format!("(assign {at} ({}) {})", names.join(" "), values.join(" "));
                self.line(indent, &line);
            }
            StmtKind::Return { values } => {
                let values: Vec<String> = values.iter().map(|v| self.expr(v)).collect();
                self.line(indent, &format!("(return {at} {})", values.join(" ")));
            }
            StmtKind::If { cond, then_body, else_body } => {
                let line = format!("(if {at} {}", self.expr(cond));
                self.line(indent, &line);
                self.body(indent + 1, "then", then_body);
                if let Some(e) = else_body {
                    self.body(indent + 1, "else", e);
                }
                self.close();
            }
            StmtKind::For { var, iter, body } => {
                let iter = match iter {
                    ForIter::Range { start, end } => format!("(range {} {})", self.expr(start), self.expr(end)),
                    ForIter::Each(list) => self.expr(list),
                };
                let line = format!("(for {at} {} {iter}", self.name(var));
                self.line(indent, &line);
                self.body(indent + 1, "body", body);
                self.close();
            }
        }
    }

    fn callable(&mut self, keyword: &str, c: &Callable, at: &str) {
        let broken = if c.broken { " broken" } else { "" };
        let line = format!("({keyword} {} {at}{broken} {}", self.name(&c.name), self.params(&c.params));
        self.line(0, &line);
        self.doc();
        self.body(1, "body", &c.body);
        self.close();
    }

    fn doc(&mut self) {
        if let Some(doc) = &self.spans.doc {
            let line = format!("(doc {doc:?})");
            self.line(1, &line);
        }
    }

    fn scenario(&mut self, s: &Scenario, at: &str) {
        let line = format!("({} {} {at}", s.kind.keyword(), self.name(&s.name));
        self.line(0, &line);
        self.doc();
        for setting in &s.settings {
            let at = self.at(self.range(setting.id));
            let key = self.name(&setting.key);
            let value = match &setting.value {
                SettingValue::Flag => String::new(),
                SettingValue::Value(e) => format!(" {}", self.expr(e)),
                SettingValue::Dim { name, value } => format!(" {} = {}", self.name(name), self.expr(value)),
                SettingValue::Args(args) => {
                    let args: Vec<String> = args.iter().map(|a| format!(" {}", self.arg(a))).collect();
                    format!(" (args{})", args.concat())
                }
            };
            self.line(1, &format!("({key} {at}{value})"));
        }
        self.close();
    }

    fn item(&mut self, item: &Item) {
        let at = self.at(self.spans.whole());
        match item {
            Item::Use(u) => {
                let target = match &u.target {
                    Some(UseTarget::Module { segments, .. }) => {
                        segments.iter().map(|s| self.name(s)).collect::<Vec<_>>().join(".")
                    }
                    Some(UseTarget::File { path, .. }) => format!("{path:?}"),
                    None => "<missing>".to_string(),
                };
                self.line(0, &format!("(use {at} {target}"));
                self.doc();
                self.close();
            }
            Item::Op(op) => {
                let outputs = match op.outputs {
                    OpOutputs::Fixed(n) => format!("(outputs {n})"),
                    OpOutputs::Variadic => "(outputs variadic)".to_string(),
                };
                let broken = if op.broken { " broken" } else { "" };
                let line = format!("(op {} {at}{broken} {} {outputs}", self.name(&op.name), self.params(&op.params));
                self.line(0, &line);
                self.doc();
                self.close();
            }
            Item::Block(c) => self.callable("block", c, &at),
            Item::Model(c) => self.callable("model", c, &at),
            Item::Scenario(s) => self.scenario(s, &at),
        }
    }
}

/// The snapshot text of a parse: input, tree, comments, errors.
fn dump(text: &str, parse: &Parse) -> String {
    let mut out = String::new();
    out.push_str("=== input\n");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("=== tree\n");
    assert_eq!(parse.tree.items.len(), parse.spans.len(), "one ItemSpans per item");
    for (item, spans) in parse.tree.iter().zip(&parse.spans) {
        for r in spans.nodes() {
            assert!(r.start <= r.end && r.end as usize <= text.len(), "node range {r:?} outside the text");
        }
        let mut d = Dump { text, out: String::new(), spans };
        d.item(item);
        out.push_str(&d.out);
    }
    out.push_str("=== comments\n");
    for c in &parse.comments {
        let lc = line_col(text, c.range.start);
        let kind = match (c.doc, c.trailing) {
            (true, false) => "doc",
            (true, true) => "doc trailing",
            (false, false) => "line",
            (false, true) => "trailing",
        };
        let _ = writeln!(out, "{}:{} {kind} {:?}", lc.line, lc.column, &text[c.range.to_range()]);
    }
    out.push_str("=== errors\n");
    if parse.errors.is_empty() {
        out.push_str("(none)\n");
    }
    for e in &parse.errors {
        let info = e.code.info();
        let place = |p: &Place| match p {
            Place::Range(r) => {
                let (s, t) = (line_col(text, r.start), line_col(text, r.end));
                format!("@{}:{}..{}:{}", s.line, s.column, t.line, t.column)
            }
            Place::Node(n) => format!("@node {}/{}", n.item, n.node),
        };
        let _ = writeln!(out, "{} {} {}: {}", info.code, info.name, place(&e.primary().place), e.message);
        for label in &e.labels {
            if !label.message.is_empty() {
                let kind = if label.primary { "primary" } else { "label" };
                let _ = writeln!(out, "  {kind} {}: {}", place(&label.place), label.message);
            }
        }
        for note in &e.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        if let Some(help) = &e.help {
            let _ = writeln!(out, "  help: {help}");
        }
    }
    out
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "net"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// Parses every fixture of `dir`, checks it with `check`, and snapshots it as
/// `<prefix>__<file stem>`. Reports every failing fixture, not only the first.
fn run_fixtures(dir: &str, prefix: &str, check: impl Fn(&Path, &str, &Parse)) {
    let mut failures = Vec::new();
    for path in fixtures(dir) {
        let text = std::fs::read_to_string(&path).expect("fixtures are UTF-8");
        let stem = path.file_stem().expect("a file name").to_string_lossy().into_owned();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let file = FileName::new(format!("{stem}.net"));
            let parse = parse(&file, &text);
            check(&path, &text, &parse);
            let mut settings = insta::Settings::clone_current();
            settings.set_input_file(&path);
            settings.set_omit_expression(true);
            settings.bind(|| insta::assert_snapshot!(format!("{prefix}__{stem}"), dump(&text, &parse)));
        }));
        if outcome.is_err() {
            failures.push(path.display().to_string());
        }
    }
    assert!(failures.is_empty(), "failing fixtures (see the messages above):\n  {}", failures.join("\n  "));
}

#[test]
fn conformance_fixtures_parse_without_errors() {
    run_fixtures("syntax", "syntax", |path, _text, parse| {
        let codes: Vec<_> = parse.errors.iter().map(|e| e.code.info().code).collect();
        assert!(codes.is_empty(), "{}: syntax errors {codes:?}", path.display());
    });
}

#[test]
fn one_mistake_gives_one_syntax_error() {
    run_fixtures("syntax_errors", "syntax_error", |path, text, parse| {
        if text.contains("# BUG:") {
            return;
        }
        let codes: Vec<_> = parse.errors.iter().map(|e| e.code.info().code).collect();
        assert_eq!(codes.len(), 1, "{}: expected exactly one syntax error, got {codes:?}", path.display());
        assert!(!parse.tree.items.is_empty(), "{}: nothing parsed after recovery", path.display());
    });
}

/// The same source parses to the same tree when only whitespace and comments change (the
/// fixtures' trees do not depend on layout).
#[test]
fn trees_do_not_depend_on_comments() {
    for path in fixtures("syntax") {
        let text = std::fs::read_to_string(&path).expect("fixtures are UTF-8");
        let file = FileName::new("f.net");
        let stripped: String = text
            .lines()
            .map(|line| {
                // Drop whole-line comments only: a `#` inside a string must stay.
                if line.trim_start().starts_with('#') { "" } else { line }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let a = parse(&file, &text);
        let b = parse(&file, &stripped);
        assert_eq!(a.tree, b.tree, "{}: removing comment lines changed the tree", path.display());
    }
}
