//! Checks of one item that need no shapes: names, calls and argument kinds in block and
//! model bodies, duplicate parameters, types, definite assignment across `if` branches.
//!
//! Diagnostics point at nodes ([`Place::Node`]), never at byte ranges, so the result of a
//! check does not change when only whitespace or comments move.

use std::collections::BTreeMap;

use crate::diagnostics::{Code, Diagnostic, FileName, NodeRef, Place};
use crate::suggest::closest;
use crate::syntax::{
    Arg, BinaryOp, Body, Callable, Expr, ExprKind, ForIter, Item, Name, NodeId, Param, Stmt, StmtKind, TypeExpr,
    UnaryOp,
};

use super::builtins::Builtin;
use super::kinds::ValueKind;
use super::scope::{Binding, DefKind, Definition, Outputs, Scope, Signature, param_kind};

mod calls;

/// The dtypes an input may have.
pub const DTYPES: &[&str] = &crate::shapes::DType::NAMES;

/// Context shared by the checks of one item.
pub struct ItemChecker<'a> {
    /// The file being checked.
    pub file: &'a FileName,
    /// The item's index in its file.
    pub item: u32,
    /// The file's scope.
    pub scope: &'a Scope,
    /// Diagnostics found so far.
    pub diagnostics: Vec<Diagnostic>,
}

/// A local variable: its kind and where it was (last) defined.
#[derive(Debug, Clone, Copy)]
struct Var {
    kind: ValueKind,
    def: NodeId,
}

/// Why a name is defined on some paths only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// It is assigned in one branch of an `if`.
    Branch,
    /// It is assigned in the body of a `for` loop that may run no times.
    Loop,
}

/// Where a name defined on some paths only was assigned, and why only there.
type Maybe = (NodeId, Path);

/// The statement a body is nested in, for the messages of statements that must be at the
/// top of an item's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Within {
    /// The item's own body.
    Item,
    /// An `if` or `else` body.
    If,
    /// A `for` body.
    For,
}

impl Within {
    fn keyword(self) -> &'static str {
        match self {
            Within::Item => "",
            Within::If => "if",
            Within::For => "for",
        }
    }
}

/// The variables of a body while it is walked: those surely defined, and those defined on
/// some paths only (assigned in one branch of an `if`, or in a loop that may not run).
///
/// The branches of an `if` are walked in this one environment, each change journaled and
/// undone after the branch ([`Env::rewind`]): a copy of the environment per branch made a
/// body of 50,000 `if` statements, each assigning a new name, quadratic.
#[derive(Debug, Default)]
struct Env {
    defined: BTreeMap<String, Var>,
    maybe: BTreeMap<String, Maybe>,
    /// Every change, as the name and its entries before it.
    journal: Vec<(String, Option<Var>, Option<Maybe>)>,
}

/// What a branch changed: each name it touched, with its entries at the branch's end.
type Changes = BTreeMap<String, (Option<Var>, Option<Maybe>)>;

impl Env {
    fn save(&mut self, name: &str) {
        self.journal.push((name.to_string(), self.defined.get(name).copied(), self.maybe.get(name).copied()));
    }

    /// `name` is surely defined (and no longer maybe).
    fn define(&mut self, name: &str, var: Var) {
        self.save(name);
        self.defined.insert(name.to_string(), var);
        self.maybe.remove(name);
    }

    /// `name` is defined; whether it was maybe defined is left as it is.
    fn declare(&mut self, name: &str, var: Var) {
        self.save(name);
        self.defined.insert(name.to_string(), var);
    }

    fn set_maybe(&mut self, name: &str, maybe: Maybe) {
        self.save(name);
        self.maybe.insert(name.to_string(), maybe);
    }

    /// Undoes every change since the journal had `mark` entries; returns what they were.
    fn rewind(&mut self, mark: usize) -> Changes {
        let mut changes = Changes::new();
        for (name, _, _) in &self.journal[mark..] {
            if !changes.contains_key(name) {
                let now = (self.defined.get(name).copied(), self.maybe.get(name).copied());
                changes.insert(name.clone(), now);
            }
        }
        while self.journal.len() > mark {
            let Some((name, defined, maybe)) = self.journal.pop() else { break };
            match defined {
                Some(var) => self.defined.insert(name.clone(), var),
                None => self.defined.remove(&name),
            };
            match maybe {
                Some(node) => self.maybe.insert(name, node),
                None => self.maybe.remove(&name),
            };
        }
        changes
    }
}

impl<'a> ItemChecker<'a> {
    /// A checker for item `item` of `file`.
    pub fn new(file: &'a FileName, item: u32, scope: &'a Scope) -> Self {
        ItemChecker { file, item, scope, diagnostics: Vec::new() }
    }

    /// The place of a node of this item.
    pub fn at(&self, node: NodeId) -> Place {
        Place::Node(NodeRef { item: self.item, node: node.0 })
    }

    /// Reports an error at a node.
    pub fn error(&mut self, code: Code, node: NodeId, message: impl Into<String>) -> &mut Diagnostic {
        let d = Diagnostic::new(code, message, self.file, self.at(node));
        self.diagnostics.push(d);
        self.diagnostics.last_mut().expect("just pushed")
    }

    /// Checks one item.
    pub fn check_item(&mut self, item: &Item) {
        match item {
            Item::Use(_) => {}
            Item::Op(op) => {
                self.check_params(&op.params);
            }
            Item::Block(c) => self.check_callable(c, false),
            Item::Model(c) => self.check_callable(c, true),
            Item::Scenario(s) => super::scenario::check_scenario(self, s),
        }
    }

    fn check_params(&mut self, params: &[Param]) -> Env {
        let mut env = Env::default();
        let mut seen: BTreeMap<&str, NodeId> = BTreeMap::new();
        for p in params {
            if let Some(first) = seen.get(p.name.text.as_str()) {
                let first = self.at(*first);
                let file = self.file.clone();
                self.error(
                    Code::DuplicateDefinition,
                    p.name.id,
                    format!("parameter `{}` is declared twice", p.name.text),
                )
                .with_label_mut(&file, first, "first declared here");
                continue;
            }
            seen.insert(&p.name.text, p.name.id);
            if let Some(ty) = &p.ty {
                self.check_type(ty, false);
            }
            let kind = param_kind(p);
            if let Some(default) = &p.default {
                let found = self.expr_kind(default, &Env::default());
                if !found.fits(kind) {
                    let msg = format!(
                        "default of `{}` is {}, but the parameter takes {}",
                        p.name.text,
                        found.describe(),
                        kind.describe()
                    );
                    self.error(Code::ArgumentKind, default.id, msg);
                }
            }
            env.declare(&p.name.text, Var { kind, def: p.name.id });
        }
        env
    }

    /// Checks a written type. `tensor_required` is set for `input` statements.
    fn check_type(&mut self, ty: &TypeExpr, tensor_required: bool) {
        match ty {
            TypeExpr::Named(n) => {
                if ValueKind::from_type_name(&n.text).is_none() {
                    let is_dtype = DTYPES.contains(&n.text.as_str());
                    let d = self.error(Code::UnknownType, n.id, format!("unknown type `{}`", n.text));
                    if is_dtype {
                        d.help = Some(format!("a tensor type needs a shape: `{}[N, C, H, W]`", n.text));
                    } else if let Some(s) = closest(&n.text, ValueKind::TYPE_NAMES.iter().copied()) {
                        d.help = Some(format!("did you mean `{s}`?"));
                    }
                } else if tensor_required {
                    self.error(
                        Code::UnknownType,
                        n.id,
                        format!("an input needs a dtype and a shape, not `{}`", n.text),
                    )
                    .help = Some("write a dtype and a shape: `input x: f32[N, 3, 224, 224]`".into());
                }
            }
            TypeExpr::List { elem, .. } => {
                if tensor_required {
                    self.error(Code::UnknownType, ty.id(), "an input must be a tensor, not a list").help =
                        Some("write a dtype and a shape: `input x: f32[N, 3, 224, 224]`".into());
                }
                match type_kind_of(elem) {
                    Some(ValueKind::Int | ValueKind::Tensor) | None => self.check_type(elem, false),
                    Some(other) => {
                        self.error(
                            Code::UnknownType,
                            elem.id(),
                            format!("lists of {} are not supported", other.describe_type()),
                        )
                        .help = Some("use `[int]` or `[tensor]`".into());
                    }
                }
            }
            TypeExpr::Tensor { dtype, .. } => {
                if !DTYPES.contains(&dtype.text.as_str()) {
                    let suggestion = closest(&dtype.text, DTYPES.iter().copied());
                    let d = self.error(Code::UnknownType, dtype.id, format!("unknown dtype `{}`", dtype.text));
                    d.help = Some(match suggestion {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("the dtypes are {}", DTYPES.join(", ")),
                    });
                }
            }
        }
    }

    fn check_callable(&mut self, c: &Callable, is_model: bool) {
        let mut env = self.check_params(&c.params);
        self.check_body(&c.body, &mut env, is_model, Within::Item);
        let has_return = c.body.stmts.iter().any(|s| matches!(s.kind, StmtKind::Return { .. }));
        if !has_return && !c.body.recovered && !c.broken {
            let what = if is_model { "model" } else { "block" };
            self.error(Code::MissingReturn, c.name.id, format!("{what} `{}` has no `return`", c.name.text)).help =
                Some("end the body with `return y` (or `return a, b` for several outputs)".into());
        }
    }

    fn check_body(&mut self, body: &Body, env: &mut Env, is_model: bool, within: Within) {
        let mut returned: Option<NodeId> = None;
        for stmt in &body.stmts {
            if let Some(ret) = returned {
                let file = self.file.clone();
                let at = self.at(ret);
                self.error(Code::MisplacedStatement, stmt.id, "statement after `return`").with_label_mut(
                    &file,
                    at,
                    "the body returns here",
                );
                break;
            }
            self.check_stmt(stmt, env, is_model, within);
            if matches!(stmt.kind, StmtKind::Return { .. }) {
                returned = Some(stmt.id);
            }
        }
    }

    fn check_stmt(&mut self, stmt: &Stmt, env: &mut Env, is_model: bool, within: Within) {
        match &stmt.kind {
            StmtKind::Input { name, ty } => {
                if !is_model {
                    self.error(Code::MisplacedStatement, stmt.id, "`input` in a block").help = Some(
                        "a block receives tensors as parameters: `block b(x, ...)`; `input` declares a model's inputs"
                            .into(),
                    );
                } else if within != Within::Item {
                    let message = format!("`input` inside `{}`", within.keyword());
                    self.error(Code::MisplacedStatement, stmt.id, message).help =
                        Some("declare inputs at the top of the model's body".into());
                }
                self.check_type(ty, true);
                if env.defined.contains_key(name.text.as_str()) {
                    self.error(Code::DuplicateDefinition, name.id, format!("`{}` is already defined", name.text));
                    // The first definition stays; going on with a rebound name would cascade.
                    return;
                }
                // Bare names in the shape declare symbolic dimensions, visible in the body.
                if let TypeExpr::Tensor { dims, .. } = ty {
                    for dim in dims {
                        self.declare_dims(dim, env);
                    }
                }
                env.define(&name.text, Var { kind: ValueKind::Tensor, def: name.id });
            }
            StmtKind::Assign { targets, values } if values.len() > 1 => {
                // Python's `a, b = e1, e2`: a tuple of one value per name.
                let kinds: Vec<ValueKind> = values.iter().map(|v| self.expr_kind(v, env)).collect();
                let kinds = if kinds.len() == targets.len() {
                    kinds
                } else {
                    let at = values.get(targets.len()).unwrap_or(&values[values.len() - 1]);
                    let names = match targets.len() {
                        1 => "1 name is assigned".to_string(),
                        k => format!("{k} names are assigned"),
                    };
                    let msg = format!("{names}, but {} values are given", values.len());
                    let help = if targets.len() == 1 {
                        "there are no tuples: assign a name to each value (`a, b = x, y`), or make a list (`[x, y]`)"
                    } else {
                        "assign one name to each value, as Python unpacks a tuple"
                    };
                    let label = if values.len() > targets.len() { "a value with no name" } else { "the last value" };
                    let d = self.error(Code::OutputCount, at.id, msg);
                    if let Some(primary) = d.labels.first_mut() {
                        primary.message = label.to_string();
                    }
                    d.help = Some(help.to_string());
                    vec![ValueKind::Unknown; targets.len()]
                };
                self.define_targets(targets, kinds, env);
            }
            StmtKind::Assign { targets, values } => {
                let value = &values[0];
                let kind = self.expr_kind_top(value, env, targets.len());
                let kinds: Vec<ValueKind> = match kind {
                    ValueKind::Tensors(n) if n as usize == targets.len() => vec![ValueKind::Tensor; targets.len()],
                    ValueKind::Tensors(n) => {
                        let assigned = match targets.len() {
                            1 => "1 name is assigned".to_string(),
                            k => format!("{k} names are assigned"),
                        };
                        let msg = format!("this call returns {n} tensors, but {assigned}");
                        self.error(Code::OutputCount, value.id, msg).help =
                            Some(format!("assign {n} names: `{}`", placeholder_names(n)));
                        vec![ValueKind::Unknown; targets.len()]
                    }
                    // Python unpacks a list (`b, s, _ = x.shape`); its length is checked once
                    // it is made.
                    ValueKind::IntList if targets.len() > 1 => vec![ValueKind::Int; targets.len()],
                    ValueKind::TensorList if targets.len() > 1 => vec![ValueKind::Tensor; targets.len()],
                    other if targets.len() > 1 && other != ValueKind::Unknown => {
                        let msg = format!(
                            "{} names are assigned, but the value is one {}",
                            targets.len(),
                            other.describe_type()
                        );
                        self.error(Code::OutputCount, value.id, msg);
                        vec![ValueKind::Unknown; targets.len()]
                    }
                    other => vec![other; targets.len()],
                };
                self.define_targets(targets, kinds, env);
            }
            StmtKind::Return { values } => {
                match within {
                    Within::Item => {}
                    Within::If => {
                        self.error(Code::MisplacedStatement, stmt.id, "`return` inside `if`").help = Some(
                            "assign the value in each branch and return it after the `if`: `if c { y = a } else { y = b }` then `return y`"
                                .into(),
                        );
                    }
                    Within::For => {
                        self.error(Code::MisplacedStatement, stmt.id, "`return` inside `for`").help = Some(
                            "assign the value in the loop and return it after the loop: `for i in 0..n { y = f(y) }` then `return y`"
                                .into(),
                        );
                    }
                }
                for v in values {
                    let kind = self.expr_kind(v, env);
                    if !kind.fits(ValueKind::Tensor) {
                        self.error(
                            Code::ArgumentKind,
                            v.id,
                            format!("a block or model returns tensors, not {}", kind.describe()),
                        );
                    }
                }
            }
            StmtKind::If { cond, then_body, else_body } => {
                let kind = self.expr_kind(cond, env);
                if !kind.fits(ValueKind::Bool) {
                    self.error(
                        Code::InvalidOperand,
                        cond.id,
                        format!("the condition is {}, not a bool", kind.describe()),
                    )
                    .help = Some("compare it: `if stride != 1 { ... }`".into());
                }
                let mark = env.journal.len();
                self.check_body(then_body, env, is_model, Within::If);
                let then_changes = env.rewind(mark);
                if let Some(else_body) = else_body {
                    self.check_body(else_body, env, is_model, Within::If);
                }
                let else_changes = env.rewind(mark);
                merge_branches(env, then_changes, else_changes, Path::Branch);
            }
            StmtKind::For { var, iter, body } => {
                let (var_kind, surely_runs) = self.for_iter_kind(iter, env);
                let mark = env.journal.len();
                env.define(&var.text, Var { kind: var_kind, def: var.id });
                self.check_body(body, env, is_model, Within::For);
                if !surely_runs {
                    // The body may run no times: what it assigns is defined on some paths only.
                    let changes = env.rewind(mark);
                    merge_branches(env, changes, Changes::new(), Path::Loop);
                }
            }
        }
    }

    /// The kind of a `for` loop's variable, and whether its body surely runs (a range of
    /// literals that is not empty).
    fn for_iter_kind(&mut self, iter: &ForIter, env: &Env) -> (ValueKind, bool) {
        match iter {
            ForIter::Range { start, end } => {
                for bound in [start, end] {
                    let kind = self.expr_kind(bound, env);
                    if !kind.fits(ValueKind::Int) {
                        self.error(
                            Code::InvalidOperand,
                            bound.id,
                            format!("a range's bounds are integers, not {}", kind.describe()),
                        );
                    }
                }
                let surely_runs = matches!((literal_int(start), literal_int(end)), (Some(a), Some(b)) if a < b);
                (ValueKind::Int, surely_runs)
            }
            ForIter::Each(list) => {
                let kind = match self.expr_kind(list, env) {
                    ValueKind::IntList => ValueKind::Int,
                    ValueKind::TensorList => ValueKind::Tensor,
                    ValueKind::Unknown => ValueKind::Unknown,
                    other => {
                        self.error(Code::InvalidOperand, list.id, format!("cannot loop over {}", other.describe()))
                            .help = Some("loop over a list, `for t in parts`, or a range, `for i in 0..n`".into());
                        ValueKind::Unknown
                    }
                };
                let surely_runs = matches!(&list.kind, ExprKind::List(items) if !items.is_empty());
                (kind, surely_runs)
            }
        }
    }

    fn declare_dims(&mut self, dim: &Expr, env: &mut Env) {
        match &dim.kind {
            ExprKind::Name(n) if !env.defined.contains_key(n.text.as_str()) => {
                env.declare(&n.text, Var { kind: ValueKind::Int, def: n.id });
            }
            _ => {
                let kind = self.expr_kind(dim, env);
                if !kind.fits(ValueKind::Int) {
                    self.error(
                        Code::ArgumentKind,
                        dim.id,
                        format!("a dimension must be an integer, not {}", kind.describe()),
                    );
                }
            }
        }
    }

    /// The kind of an expression on the right of an assignment of `targets` names: there, a
    /// call may return several tensors.
    fn expr_kind_top(&mut self, e: &Expr, env: &Env, targets: usize) -> ValueKind {
        match &e.kind {
            ExprKind::Call { callee, args } => self.call_kind(e.id, callee, args, env, targets),
            _ => self.expr_kind(e, env),
        }
    }

    /// The kind of an expression used as one value.
    fn expr_kind(&mut self, e: &Expr, env: &Env) -> ValueKind {
        let kind = match &e.kind {
            ExprKind::Call { callee, args } => self.call_kind(e.id, callee, args, env, 1),
            _ => self.value_kind(e, env),
        };
        if let ValueKind::Tensors(n) = kind {
            self.error(Code::OutputCount, e.id, format!("this call returns {n} tensors, used here as one value"))
                .help = Some(format!("assign them first: `{} = ...`", placeholder_names(n)));
            return ValueKind::Unknown;
        }
        kind
    }

    fn value_kind(&mut self, e: &Expr, env: &Env) -> ValueKind {
        match &e.kind {
            ExprKind::Int(_) => ValueKind::Int,
            ExprKind::Float(_) => ValueKind::Float,
            ExprKind::Bool(_) => ValueKind::Bool,
            ExprKind::Str(_) => ValueKind::Str,
            ExprKind::Size { .. } => ValueKind::Size,
            ExprKind::Error => ValueKind::Unknown,
            ExprKind::Name(n) => self.name_kind(n, env),
            ExprKind::Call { .. } => self.expr_kind(e, env),
            ExprKind::List(elems) => {
                let kinds: Vec<ValueKind> = elems.iter().map(|x| self.expr_kind(x, env)).collect();
                if kinds.is_empty() {
                    // An empty list fits both a list of integers and a list of tensors.
                    ValueKind::Unknown
                } else if kinds.iter().all(|k| k.fits(ValueKind::Int)) {
                    ValueKind::IntList
                } else if kinds.iter().all(|k| k.fits(ValueKind::Tensor)) {
                    ValueKind::TensorList
                } else {
                    self.error(Code::InvalidOperand, e.id, "a list must hold only integers or only tensors");
                    ValueKind::Unknown
                }
            }
            ExprKind::Unary { op, operand } => {
                let k = self.expr_kind(operand, env);
                match (op, k) {
                    (_, ValueKind::Unknown) => ValueKind::Unknown,
                    (UnaryOp::Neg, ValueKind::Int | ValueKind::Float | ValueKind::Tensor) => k,
                    (UnaryOp::Not, ValueKind::Bool) => ValueKind::Bool,
                    (UnaryOp::Neg, _) => {
                        self.error(Code::InvalidOperand, e.id, format!("cannot negate {}", k.describe()));
                        ValueKind::Unknown
                    }
                    (UnaryOp::Not, _) => {
                        self.error(Code::InvalidOperand, e.id, format!("`not` needs a bool, found {}", k.describe()));
                        ValueKind::Unknown
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.expr_kind(lhs, env);
                let r = self.expr_kind(rhs, env);
                // Python's `2 ** -1` is 0.5: an integer to a negative power is a float.
                let negative_power = matches!(rhs.kind, ExprKind::Unary { op: UnaryOp::Neg, .. });
                match self.binary_kind(e.id, *op, l, r) {
                    ValueKind::Int if *op == BinaryOp::Pow && negative_power => ValueKind::Float,
                    kind => kind,
                }
            }
            ExprKind::Field { base, field } => {
                let k = self.expr_kind(base, env);
                match (k, field.text.as_str()) {
                    (ValueKind::Unknown, _) => ValueKind::Unknown,
                    (ValueKind::Tensor, "shape") => ValueKind::IntList,
                    (ValueKind::Tensor, "ndim") => ValueKind::Int,
                    _ => {
                        self.error(
                            Code::InvalidOperand,
                            field.id,
                            format!("{} has no field `{}`", k.describe(), field.text),
                        )
                        .help = Some("a tensor has the fields `shape` and `ndim`".into());
                        ValueKind::Unknown
                    }
                }
            }
            ExprKind::Index { base, index } => {
                let b = self.expr_kind(base, env);
                let i = self.expr_kind(index, env);
                if !i.fits(ValueKind::Int) {
                    self.error(
                        Code::InvalidOperand,
                        index.id,
                        format!("an index must be an integer, not {}", i.describe()),
                    );
                }
                match b {
                    ValueKind::IntList => ValueKind::Int,
                    ValueKind::TensorList => ValueKind::Tensor,
                    ValueKind::Unknown => ValueKind::Unknown,
                    other => {
                        self.error(Code::InvalidOperand, base.id, format!("cannot index {}", other.describe()));
                        ValueKind::Unknown
                    }
                }
            }
            ExprKind::Repeat { count, call } => self.repeat_kind(count, call, env),
        }
    }

    /// Defines the names an assignment binds, with their kinds; a name twice in one
    /// statement is E0205 (`_`, Python's name for a value thrown away, may repeat).
    fn define_targets(&mut self, targets: &[Name], kinds: Vec<ValueKind>, env: &mut Env) {
        let mut seen = std::collections::BTreeSet::new();
        for (target, kind) in targets.iter().zip(kinds) {
            if target.text != "_" && !seen.insert(target.text.as_str()) {
                self.error(
                    Code::DuplicateDefinition,
                    target.id,
                    format!("`{}` is assigned twice in one statement", target.text),
                );
            }
            env.define(&target.text, Var { kind, def: target.id });
        }
    }

    fn binary_kind(&mut self, id: NodeId, op: BinaryOp, l: ValueKind, r: ValueKind) -> ValueKind {
        use ValueKind::*;
        // `feats = []` then `feats = feats + [f]`: the empty list's kind is unknown, the sum's
        // is the other list's.
        if op == BinaryOp::Add
            && (l == Unknown || r == Unknown)
            && [l, r].iter().any(|k| matches!(k, IntList | TensorList))
        {
            return if l == Unknown { r } else { l };
        }
        let comparison =
            matches!(op, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge);
        // A comparison with a tensor is a mask (a bool tensor).
        if comparison && (l == Tensor || r == Tensor) {
            let other = if l == Tensor { r } else { l };
            if matches!(other, Tensor | Int | Float | Unknown) {
                return Tensor;
            }
        }
        if l == Unknown || r == Unknown {
            return match op {
                BinaryOp::Or
                | BinaryOp::And
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => Bool,
                _ => Unknown,
            };
        }
        let result = match op {
            BinaryOp::Or | BinaryOp::And => (l == Bool && r == Bool).then_some(Bool),
            BinaryOp::Eq | BinaryOp::Ne => {
                let comparable = (l.is_number() && r.is_number()) || (l == r && matches!(l, Bool | Str | IntList));
                comparable.then_some(Bool)
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                (l.is_number() && r.is_number()).then_some(Bool)
            }
            BinaryOp::MatMul => (l == Tensor && r == Tensor).then_some(Tensor),
            BinaryOp::Add if l == r && matches!(l, IntList | TensorList) => Some(l),
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Rem => {
                match (l, r) {
                    (Int, Int) => Some(Int),
                    (Int | Float, Int | Float) => Some(Float),
                    (Tensor, Tensor | Int | Float) if op != BinaryOp::Rem => Some(Tensor),
                    (Int | Float, Tensor) if !matches!(op, BinaryOp::Rem | BinaryOp::FloorDiv) => Some(Tensor),
                    _ => None,
                }
            }
            BinaryOp::Pow => match (l, r) {
                (Int, Int) => Some(Int),
                (Int | Float, Int | Float) => Some(Float),
                (Tensor, Tensor | Int | Float) | (Int | Float, Tensor) => Some(Tensor),
                _ => None,
            },
        };
        result.unwrap_or_else(|| {
            let msg = format!("`{}` cannot combine {} and {}", op.symbol(), l.describe(), r.describe());
            self.error(Code::InvalidOperand, id, msg);
            Unknown
        })
    }

    fn name_kind(&mut self, n: &Name, env: &Env) -> ValueKind {
        if let Some(var) = env.defined.get(n.text.as_str()) {
            return var.kind;
        }
        if let Some(&(assigned, path)) = env.maybe.get(n.text.as_str()) {
            let file = self.file.clone();
            let at = self.at(assigned);
            let (label, help) = match path {
                Path::Branch => (
                    "assigned only in this branch",
                    format!("assign `{}` before the `if`, or in every branch (add an `else`)", n.text),
                ),
                Path::Loop => {
                    ("assigned only in a loop that may run no times", format!("assign `{}` before the `for`", n.text))
                }
            };
            self.error(Code::PossiblyUndefined, n.id, format!("`{}` may be undefined here", n.text))
                .with_label_mut(&file, at, label)
                .help = Some(help);
            return ValueKind::Unknown;
        }
        if let Some(binding) = self.scope.names.get(n.text.as_str()) {
            let what = match binding {
                Binding::Unique(def) => def.kind.describe(),
                Binding::Ambiguous(_) => "definition",
            };
            self.error(Code::UndefinedName, n.id, format!("`{}` is {} {what}, not a value", n.text, article(what)))
                .help = Some(format!("call it: `{}(...)`", n.text));
            return ValueKind::Unknown;
        }
        let suggestion = closest(&n.text, env.defined.keys().map(String::as_str));
        let looks_like_dimension = n.text.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        let d = self.error(Code::UndefinedName, n.id, format!("undefined name `{}`", n.text));
        d.help = match suggestion {
            Some(s) => Some(format!("did you mean `{s}`?")),
            None if looks_like_dimension => Some(
                "a symbolic dimension is visible only in the model whose `input` declares it; in a block, read it from a tensor: `x.shape[0]`"
                    .to_string(),
            ),
            None => None,
        };
        ValueKind::Unknown
    }

    /// Resolves a callee and checks its kind; `None` when it is not callable here (reported).
    pub(crate) fn resolve_callee(&mut self, callee: &Name, allowed: &[DefKind]) -> Option<Definition> {
        match self.scope.names.get(callee.text.as_str()) {
            // The name may be defined in a file that failed to import (already reported).
            None if self.scope.incomplete => None,
            None => {
                let candidates = self
                    .scope
                    .names
                    .iter()
                    .filter(|(_, b)| matches!(b, Binding::Unique(d) if allowed.contains(&d.kind)))
                    .map(|(n, _)| n.as_str());
                let suggestion = closest(&callee.text, candidates);
                let what = if allowed == [DefKind::Model] { "model" } else { "op or block" };
                let code = if allowed == [DefKind::Model] { Code::UnknownModel } else { Code::UnknownCallee };
                let d = self.error(code, callee.id, format!("unknown {what} `{}`", callee.text));
                d.help = match suggestion {
                    Some(s) => Some(format!("did you mean `{s}`?")),
                    None if allowed != [DefKind::Model] => {
                        Some("define it with `block`, or `use` the file that defines it".to_string())
                    }
                    None => None,
                };
                None
            }
            Some(Binding::Ambiguous(defs)) => {
                let files: Vec<String> = defs.iter().map(|d| format!("`{}`", d.file)).collect();
                let file = self.file.clone();
                let mut d = Diagnostic::new(
                    Code::AmbiguousName,
                    format!("`{}` is defined by several imported files", callee.text),
                    &file,
                    self.at(callee.id),
                )
                .with_note(format!("defined in {}", files.join(" and ")));
                for def in defs {
                    d = d.with_label(
                        &def.file,
                        Place::Node(NodeRef { item: def.item, node: def.name_node.0 }),
                        "defined here",
                    );
                }
                d.help = Some("rename one of the definitions".into());
                self.diagnostics.push(d);
                None
            }
            Some(Binding::Unique(def)) => {
                if allowed.contains(&def.kind) {
                    return Some(def.clone());
                }
                let def = def.clone();
                let message = match (def.kind, allowed) {
                    (DefKind::Model, _) => {
                        format!("`{}` is a model: models are run by scenarios, not called", callee.text)
                    }
                    (DefKind::Block, [DefKind::Model]) => format!("`{}` is a block, not a model", callee.text),
                    (kind, _) => format!(
                        "`{}` is {} {}, not something to call here",
                        callee.text,
                        article(kind.describe()),
                        kind.describe()
                    ),
                };
                let help = match (def.kind, allowed) {
                    (DefKind::Model, _) => Some("turn the model's body into a `block` and call that".to_string()),
                    (DefKind::Block, [DefKind::Model]) => {
                        Some("a scenario runs a model: wrap the block in `model m(...) { ... }`".to_string())
                    }
                    _ => None,
                };
                let place = Place::Node(NodeRef { item: def.item, node: def.name_node.0 });
                let d = self.error(Code::NotCallableHere, callee.id, message).with_label_mut(
                    &def.file,
                    place,
                    format!("{} defined here", def.kind.describe()),
                );
                d.help = help;
                None
            }
        }
    }

    /// The kinds of arguments given where there are no variables (a scenario's model call);
    /// names are reported as undefined.
    pub(crate) fn argument_kinds_without_variables(&mut self, args: &[Arg]) -> Vec<ValueKind> {
        args.iter().map(|a| self.expr_kind(&a.value, &Env::default())).collect()
    }
}

/// Adds a secondary label to a diagnostic being built in place.
pub(crate) trait LabelExt {
    fn with_label_mut(&mut self, file: &FileName, place: Place, message: impl Into<String>) -> &mut Self;
}

impl LabelExt for Diagnostic {
    fn with_label_mut(&mut self, file: &FileName, place: Place, message: impl Into<String>) -> &mut Self {
        self.labels.push(crate::diagnostics::Label {
            file: file.clone(),
            place,
            message: message.into(),
            primary: false,
        });
        self
    }
}

fn type_kind_of(ty: &TypeExpr) -> Option<ValueKind> {
    match ty {
        TypeExpr::Named(n) => ValueKind::from_type_name(&n.text),
        TypeExpr::List { .. } => Some(ValueKind::IntList),
        TypeExpr::Tensor { .. } => Some(ValueKind::Tensor),
    }
}

/// "a" or "an" for a word.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

/// The value of an integer literal, negated or not.
fn literal_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Unary { op: UnaryOp::Neg, operand } => literal_int(operand).map(|v| -v),
        _ => None,
    }
}

fn placeholder_names(n: u32) -> String {
    let names: Vec<String> = (0..n).map(|i| ((b'a' + (i % 26) as u8) as char).to_string()).collect();
    names.join(", ")
}

/// After an `if`: a name is surely defined if it was before or in both branches; a name
/// assigned in only one branch is "maybe defined" (using it is an error). `env` is as before
/// the `if`; only the names a branch changed can change.
fn merge_branches(env: &mut Env, then_changes: Changes, else_changes: Changes, path: Path) {
    let defined_in = |changes: &Changes, name: &str| changes.get(name).is_some_and(|(var, _)| var.is_some());
    for (name, (var, _)) in &then_changes {
        let Some(var) = var else { continue };
        if env.defined.contains_key(name) {
            continue;
        }
        if defined_in(&else_changes, name) {
            env.define(name, *var);
        } else {
            env.set_maybe(name, (var.def, path));
        }
    }
    for (name, (var, _)) in &else_changes {
        let Some(var) = var else { continue };
        if !env.defined.contains_key(name) && !defined_in(&then_changes, name) {
            env.set_maybe(name, (var.def, path));
        }
    }
    for (name, (_, maybe)) in then_changes.iter().chain(&else_changes) {
        if let Some(node) = maybe
            && !env.defined.contains_key(name)
            && !env.maybe.contains_key(name)
        {
            env.set_maybe(name, *node);
        }
    }
}
