//! The `unused` lint: reports a variable that is assigned and never read, a model input that is
//! never used, and a block that nothing in its file calls when the file is a program (it has models
//! or scenarios; a file of blocks only is a library).
//! Its documentation is the `///` comment below (the source of its page in spec/lints/).

use std::collections::{BTreeMap, BTreeSet};

use super::{FileContext, Lint};
use crate::diagnostics::{Code, Diagnostic, NodeRef, Place};
use crate::syntax::{Body, Expr, ExprKind, ForIter, Item, NodeId, StmtKind, TypeExpr};

/// ## What it does
/// Reports a variable that is assigned and never read, a model input that is never used,
/// and a block that nothing in its file calls when the file is a program (it has models or
/// scenarios; a file of blocks only is a library). Names starting with `_` are exempt.
///
/// ## Why is this bad?
/// Unused code is usually a mistake: a layer computed but not connected, an input fed but
/// ignored. It also makes the per-line figures harder to read.
///
/// ## Example
/// ```net
/// model m() {
///     input x: f32[N, 8]
///     h = relu(x)
///     return linear(x, 4)
/// }
/// ```
///
/// ## How to fix
/// Use it, remove it, or rename it with a leading `_` to say it is unused on purpose.
pub struct Unused;

impl Lint for Unused {
    fn code(&self) -> Code {
        Code::Unused
    }

    fn check_file(&self, cx: &FileContext<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut called = BTreeSet::new();
        for (index, item) in cx.tree.iter().enumerate() {
            let at = |node: NodeId| Place::Node(NodeRef { item: index as u32, node: node.0 });
            match item {
                Item::Block(c) | Item::Model(c) => {
                    let mut reads = BTreeSet::new();
                    let mut defs: BTreeMap<String, (NodeId, &'static str)> = BTreeMap::new();
                    walk_body(&c.body, &mut reads, &mut defs, &mut called);
                    for (name, (node, what)) in defs {
                        if !reads.contains(&name) && !name.starts_with('_') {
                            out.push(
                                Diagnostic::new(Code::Unused, format!("unused {what} `{name}`"), cx.file, at(node))
                                    .with_help(format!("use it, remove it, or rename it `_{name}`")),
                            );
                        }
                    }
                }
                Item::Scenario(s) => {
                    for setting in &s.settings {
                        if let crate::syntax::SettingValue::Value(e) = &setting.value {
                            collect_calls(e, &mut called);
                        }
                    }
                }
                _ => {}
            }
        }
        let program = cx.tree.iter().any(|i| matches!(i, Item::Model(_) | Item::Scenario(_)));
        if program {
            for (index, item) in cx.tree.iter().enumerate() {
                if let Item::Block(c) = item
                    && !called.contains(c.name.text.as_str())
                    && !c.name.text.starts_with('_')
                {
                    let place = Place::Node(NodeRef { item: index as u32, node: c.name.id.0 });
                    out.push(
                        Diagnostic::new(
                            Code::Unused,
                            format!("block `{}` is never called", c.name.text),
                            cx.file,
                            place,
                        )
                        .with_help("call it, remove it, or move it to a file of blocks that others `use`"),
                    );
                }
            }
        }
        out
    }
}

fn walk_body(
    body: &Body,
    reads: &mut BTreeSet<String>,
    defs: &mut BTreeMap<String, (NodeId, &'static str)>,
    called: &mut BTreeSet<String>,
) {
    for stmt in &body.stmts {
        match &stmt.kind {
            StmtKind::Input { name, ty } => {
                defs.entry(name.text.to_string()).or_insert((name.id, "input"));
                if let TypeExpr::Tensor { dims, .. } = ty {
                    for d in dims {
                        // Dimension names are declared here, not read.
                        if !matches!(d.kind, ExprKind::Name(_)) {
                            collect(d, reads, called);
                        }
                    }
                }
            }
            StmtKind::Assign { targets, values } => {
                for value in values {
                    collect(value, reads, called);
                }
                for t in targets {
                    defs.entry(t.text.to_string()).or_insert((t.id, "variable"));
                }
            }
            StmtKind::Return { values } => {
                for v in values {
                    collect(v, reads, called);
                }
            }
            StmtKind::If { cond, then_body, else_body } => {
                collect(cond, reads, called);
                walk_body(then_body, reads, defs, called);
                if let Some(b) = else_body {
                    walk_body(b, reads, defs, called);
                }
            }
            StmtKind::For { var, iter, body } => {
                match iter {
                    ForIter::Range { start, end } => {
                        collect(start, reads, called);
                        collect(end, reads, called);
                    }
                    ForIter::Each(list) => collect(list, reads, called),
                }
                defs.entry(var.text.to_string()).or_insert((var.id, "loop variable"));
                walk_body(body, reads, defs, called);
            }
        }
    }
}

fn collect_calls(e: &Expr, called: &mut BTreeSet<String>) {
    collect(e, &mut BTreeSet::new(), called);
}

/// Names read and callees called in an expression.
fn collect(e: &Expr, reads: &mut BTreeSet<String>, called: &mut BTreeSet<String>) {
    match &e.kind {
        ExprKind::Name(n) => {
            reads.insert(n.text.to_string());
        }
        ExprKind::Call { callee, args } => {
            called.insert(callee.text.to_string());
            for a in args {
                collect(&a.value, reads, called);
            }
        }
        ExprKind::List(items) => items.iter().for_each(|x| collect(x, reads, called)),
        ExprKind::Unary { operand, .. } => collect(operand, reads, called),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect(lhs, reads, called);
            collect(rhs, reads, called);
        }
        ExprKind::Field { base, .. } => collect(base, reads, called),
        ExprKind::Index { base, index } => {
            collect(base, reads, called);
            collect(index, reads, called);
        }
        ExprKind::Repeat { count, call } => {
            collect(count, reads, called);
            collect(call, reads, called);
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Size { .. }
        | ExprKind::Error => {}
    }
}
