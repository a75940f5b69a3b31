//! The syntax tree of a `.net` file.
//!
//! The tree holds no byte positions: every node that a diagnostic may point at carries a
//! [`NodeId`], local to its top-level item, and the positions live beside the tree in
//! [`ItemSpans`]. So the tree of a file is equal before and after an edit of whitespace or
//! comments, and salsa cuts off recomputation there (see ARCHITECTURE.md, "early cutoff").

use std::sync::Arc;

use crate::diagnostics::TextRange;

/// Identifies a node within its top-level item; index into [`ItemSpans::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodeId(pub u32);

/// A name as written, with its node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name {
    /// The node of the name itself.
    pub id: NodeId,
    /// The text (names are short: held inline, without an allocation of their own).
    pub text: smol_str::SmolStr,
}

/// A parsed file: its top-level items in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SourceTree {
    /// The items, in source order. Shared: a reparse after an edit reuses the items it did
    /// not touch, and comparing two trees skips the items they share.
    pub items: Vec<Arc<Item>>,
}

impl SourceTree {
    /// The items, in source order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Item> + Clone {
        self.items.iter().map(|item| &**item)
    }

    /// The item at `index`.
    pub fn get(&self, index: usize) -> Option<&Item> {
        self.items.get(index).map(|item| &**item)
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Byte positions of the nodes of one item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemSpans {
    /// The offset the ranges are kept relative to (the smallest start of a node), so that an
    /// edit above the item moves it by changing this alone.
    base: u32,
    /// `relative[id]` is the range of node `id` less `base`; node 0 is the whole item. Shared
    /// by the parses before and after an edit that did not touch the item.
    relative: Arc<[TextRange]>,
    /// The `##` documentation comment right above the item, without the `##` markers.
    pub doc: Option<String>,
}

impl ItemSpans {
    /// The spans of an item's nodes, `nodes[id]` the range of node `id` (node 0 the whole item).
    pub fn new(nodes: Vec<TextRange>) -> Self {
        let base = nodes.iter().map(|r| r.start).min().unwrap_or(0);
        let relative = nodes.iter().map(|r| r.shifted(-i64::from(base))).collect();
        ItemSpans { base, relative, doc: None }
    }

    /// The range of a node (an empty range at 0 if the id is unknown, which cannot happen for
    /// ids taken from the matching tree).
    pub fn range(&self, id: NodeId) -> TextRange {
        self.relative.get(id.0 as usize).map_or_else(TextRange::default, |r| r.shifted(i64::from(self.base)))
    }

    /// Every node's range, by id.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = TextRange> + '_ {
        self.relative.iter().map(|r| r.shifted(i64::from(self.base)))
    }

    /// The range of the whole item (node 0).
    pub fn whole(&self) -> TextRange {
        self.range(NodeId(0))
    }

    /// The same spans in a text where `delta` bytes were inserted (or removed, when negative)
    /// before the item (its documentation kept).
    pub fn shifted(&self, delta: i64) -> Self {
        let base = TextRange::empty(self.base).shifted(delta).start;
        ItemSpans { base, relative: Arc::clone(&self.relative), doc: self.doc.clone() }
    }
}

/// A top-level item. Its node 0 is the whole item.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Item {
    /// `use std.nn` or `use "blocks.net"`.
    Use(Use),
    /// `op conv2d(x: tensor, ...) -> tensor`: the signature of a built-in op.
    Op(OpDecl),
    /// `block name(params) { body }`.
    Block(Callable),
    /// `model name(params) { body }`.
    Model(Callable),
    /// `train name { settings }` or `infer name { settings }`.
    Scenario(Scenario),
}

impl Item {
    /// The name the item defines, if it defines one (`use` does not).
    pub fn name(&self) -> Option<&Name> {
        match self {
            Item::Use(_) => None,
            Item::Op(op) => Some(&op.name),
            Item::Block(c) | Item::Model(c) => Some(&c.name),
            Item::Scenario(s) => Some(&s.name),
        }
    }

    /// `use`, `op`, `block`, `model`, `train` or `infer`.
    pub fn keyword(&self) -> &'static str {
        match self {
            Item::Use(_) => "use",
            Item::Op(_) => "op",
            Item::Block(_) => "block",
            Item::Model(_) => "model",
            Item::Scenario(s) => s.kind.keyword(),
        }
    }
}

/// What a `use` names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UseTarget {
    /// A standard-library module, `std.nn`.
    Module {
        /// The node of the whole path.
        id: NodeId,
        /// The path's segments.
        segments: Vec<Name>,
    },
    /// A file, relative to the file that uses it.
    File {
        /// The node of the string literal.
        id: NodeId,
        /// The path as written (escapes resolved).
        path: String,
    },
}

/// `use ...`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Use {
    /// What is imported; `None` when the line was malformed.
    pub target: Option<UseTarget>,
}

/// A type written after `:`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeExpr {
    /// `int`, `float`, `bool`, `str`, `dim`, `tensor`, or an unknown word (checked later).
    Named(Name),
    /// `[int]`: a list.
    List {
        /// The node of the whole type.
        id: NodeId,
        /// The element type.
        elem: Box<TypeExpr>,
    },
    /// `f32[N, 3, H, W]`: a tensor with a dtype and a shape.
    Tensor {
        /// The node of the whole type.
        id: NodeId,
        /// The dtype name.
        dtype: Name,
        /// The dimensions: integer expressions over symbolic dimensions.
        dims: Vec<Expr>,
    },
}

impl TypeExpr {
    /// The node of the whole type.
    pub fn id(&self) -> NodeId {
        match self {
            TypeExpr::Named(n) => n.id,
            TypeExpr::List { id, .. } | TypeExpr::Tensor { id, .. } => *id,
        }
    }
}

/// A parameter of an op, block or model: `name`, `name: type`, `name: type = default`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Param {
    /// The node of the whole parameter.
    pub id: NodeId,
    /// The parameter's name.
    pub name: Name,
    /// Its declared type; a parameter without one is a tensor unless its default says otherwise.
    pub ty: Option<TypeExpr>,
    /// Its default value.
    pub default: Option<Expr>,
}

/// What an op returns: one tensor, a fixed number of tensors, or a variable number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpOutputs {
    /// `-> (tensor, tensor)`: exactly this many.
    Fixed(u32),
    /// `-> tensors`: as many as the arguments say (split, chunk).
    Variadic,
}

/// `op name(params) -> outputs`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpDecl {
    /// The op's name.
    pub name: Name,
    /// Its parameters.
    pub params: Vec<Param>,
    /// What it returns (one tensor when the arrow is absent).
    pub outputs: OpOutputs,
    /// The signature had a syntax error: it holds only the parameters that parsed, and calls
    /// of the op are not checked against it.
    pub broken: bool,
}

/// A block or a model: a name, parameters and a body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Callable {
    /// Its name.
    pub name: Name,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Its statements.
    pub body: Body,
    /// The header had a syntax error: the parameters are those that parsed, the body is
    /// empty, and calls are not checked against the signature.
    pub broken: bool,
}

/// Statements between braces.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Body {
    /// The node of the whole body, braces included.
    pub id: NodeId,
    /// The statements that parsed.
    pub stmts: Vec<Stmt>,
    /// Whether a syntax error was recovered from inside: checks that need the whole body
    /// (such as "missing return") are skipped then, so one typo gives one error.
    pub recovered: bool,
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stmt {
    /// The node of the whole statement.
    pub id: NodeId,
    /// What kind of statement.
    pub kind: StmtKind,
}

/// The kinds of statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StmtKind {
    /// `input x: f32[N, 3, 224, 224]` (models only).
    Input {
        /// The input's name.
        name: Name,
        /// Its tensor type.
        ty: TypeExpr,
    },
    /// `y = expr`, `a, b = expr` (a call's several tensors, a list's items) or Python's
    /// `a, b = e1, e2` (each value made, left to right, before any name is bound).
    Assign {
        /// The names assigned, left to right.
        targets: Vec<Name>,
        /// The values on the right, left to right: one in most statements
        /// ([`ExprKind::Error`] when the right-hand side did not parse).
        values: Vec<Expr>,
    },
    /// `return a` or `return a, b`.
    Return {
        /// The returned values.
        values: Vec<Expr>,
    },
    /// `if cond { ... } else { ... }`; `else if` nests another `If` in the else body.
    If {
        /// The condition.
        cond: Expr,
        /// The body run when the condition holds.
        then_body: Body,
        /// The body run otherwise.
        else_body: Option<Body>,
    },
    /// `for i in 0..n { ... }` or `for t in list { ... }`: the body once per value, in the
    /// enclosing frame (as Python runs a loop: no scope of its own).
    For {
        /// The loop variable, bound to each value in turn.
        var: Name,
        /// What the loop runs over.
        iter: ForIter,
        /// The body run for each value.
        body: Body,
    },
}

/// What a `for` loop runs over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ForIter {
    /// `start..end`: the integers from `start` up to, not including, `end`.
    Range {
        /// The first value.
        start: Expr,
        /// One past the last value.
        end: Expr,
    },
    /// A list: its elements in order.
    Each(Expr),
}

/// An expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Expr {
    /// The node of the whole expression.
    pub id: NodeId,
    /// What kind of expression.
    pub kind: ExprKind,
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
}

/// A binary operator, lowest precedence first in the spec's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (floor division on integers)
    Div,
    /// `//` (floor division, on integers and floats)
    FloorDiv,
    /// `%`
    Rem,
    /// `@`
    MatMul,
    /// `**` (Python's power: right-associative, above unary minus on its left)
    Pow,
}

impl BinaryOp {
    /// How the operator is written.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Or => "or",
            And => "and",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            FloorDiv => "//",
            Rem => "%",
            MatMul => "@",
            Pow => "**",
        }
    }
}

/// An argument of a call: positional (`x`) or keyword (`stride=2`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Arg {
    /// The node of the whole argument.
    pub id: NodeId,
    /// The keyword, for a keyword argument.
    pub keyword: Option<Name>,
    /// The value.
    pub value: Expr,
}

/// The kinds of expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExprKind {
    /// An integer literal.
    Int(i64),
    /// A float literal, as the bits of an `f64` (so that the tree is `Eq` and `Hash`).
    Float(u64),
    /// `true` or `false`.
    Bool(bool),
    /// A string literal, escapes resolved.
    Str(String),
    /// A size: a number and a unit, `12 GiB`, `1.5 GB`. The unit is checked later.
    Size {
        /// The number, as the bits of an `f64`.
        value: u64,
        /// Whether the number was written as an integer.
        integer: bool,
        /// The unit as written.
        unit: Name,
    },
    /// A name.
    Name(Name),
    /// `callee(args)`.
    Call {
        /// The op or block called.
        callee: Name,
        /// The arguments, in order.
        args: Vec<Arg>,
    },
    /// `[a, b, c]`.
    List(Vec<Expr>),
    /// `-x`, `not x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// `a + b` and the other binary operators.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `base.field`, such as `x.shape`.
    Field {
        /// The value the field is read from.
        base: Box<Expr>,
        /// The field's name.
        field: Name,
    },
    /// `base[index]`, such as `x.shape[1]`.
    Index {
        /// The indexed value.
        base: Box<Expr>,
        /// The index.
        index: Box<Expr>,
    },
    /// `repeat n block(x, ...)`: `n` calls in a row, each taking the previous result as its
    /// first argument.
    Repeat {
        /// How many times.
        count: Box<Expr>,
        /// The call repeated (an [`ExprKind::Call`], or an error).
        call: Box<Expr>,
    },
    /// Something that did not parse; already reported, and accepted by every later check.
    Error,
}

impl ExprKind {
    /// The value of a `Float` or `Size` literal's bits.
    pub fn float_value(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

/// `train` or `infer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScenarioKind {
    /// A training step: forward, loss, backward, optimizer step.
    Train,
    /// A forward pass.
    Infer,
}

impl ScenarioKind {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            ScenarioKind::Train => "train",
            ScenarioKind::Infer => "infer",
        }
    }
}

/// `train name { settings }` / `infer name { settings }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scenario {
    /// Train or infer.
    pub kind: ScenarioKind,
    /// The scenario's name.
    pub name: Name,
    /// The settings, in order.
    pub settings: Vec<Setting>,
    /// A syntax error was recovered from inside: checks of what is missing are skipped.
    pub recovered: bool,
}

/// One scenario setting, such as `batch 64` or `no_grad`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Setting {
    /// The node of the whole setting.
    pub id: NodeId,
    /// The setting's keyword.
    pub key: Name,
    /// Its value.
    pub value: SettingValue,
}

/// The value of a setting; which form a key takes is fixed by [`super::settings::SETTINGS`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SettingValue {
    /// A flag: `no_grad`.
    Flag,
    /// One value: `batch 64`, `budget 12 GiB`, `model resnet18()`.
    Value(Expr),
    /// `dim H = 512`.
    Dim {
        /// The dimension bound.
        name: Name,
        /// Its value.
        value: Expr,
    },
    /// `dataloader(workers=8, ...)`: keyword arguments.
    Args(Vec<Arg>),
}

/// Moves every node id of a subtree by `by` (a statement reused by a reparse, in an item
/// where the statements before it now have more or fewer nodes).
pub(crate) trait ShiftIds {
    /// Adds `by` to every node id.
    fn shift_ids(&mut self, by: i64);
}

impl ShiftIds for NodeId {
    fn shift_ids(&mut self, by: i64) {
        self.0 = (i64::from(self.0) + by) as u32;
    }
}

impl ShiftIds for Name {
    fn shift_ids(&mut self, by: i64) {
        self.id.shift_ids(by);
    }
}

impl<T: ShiftIds> ShiftIds for Vec<T> {
    fn shift_ids(&mut self, by: i64) {
        self.iter_mut().for_each(|x| x.shift_ids(by));
    }
}

impl<T: ShiftIds> ShiftIds for Option<T> {
    fn shift_ids(&mut self, by: i64) {
        if let Some(x) = self {
            x.shift_ids(by);
        }
    }
}

impl<T: ShiftIds> ShiftIds for Box<T> {
    fn shift_ids(&mut self, by: i64) {
        (**self).shift_ids(by);
    }
}

impl ShiftIds for Body {
    fn shift_ids(&mut self, by: i64) {
        self.id.shift_ids(by);
        self.stmts.shift_ids(by);
    }
}

impl ShiftIds for Stmt {
    fn shift_ids(&mut self, by: i64) {
        self.id.shift_ids(by);
        match &mut self.kind {
            StmtKind::Input { name, ty } => {
                name.shift_ids(by);
                ty.shift_ids(by);
            }
            StmtKind::Assign { targets, values } => {
                targets.shift_ids(by);
                values.shift_ids(by);
            }
            StmtKind::Return { values } => values.shift_ids(by),
            StmtKind::If { cond, then_body, else_body } => {
                cond.shift_ids(by);
                then_body.shift_ids(by);
                else_body.shift_ids(by);
            }
            StmtKind::For { var, iter, body } => {
                var.shift_ids(by);
                match iter {
                    ForIter::Range { start, end } => {
                        start.shift_ids(by);
                        end.shift_ids(by);
                    }
                    ForIter::Each(list) => list.shift_ids(by),
                }
                body.shift_ids(by);
            }
        }
    }
}

impl ShiftIds for TypeExpr {
    fn shift_ids(&mut self, by: i64) {
        match self {
            TypeExpr::Named(name) => name.shift_ids(by),
            TypeExpr::List { id, elem } => {
                id.shift_ids(by);
                elem.shift_ids(by);
            }
            TypeExpr::Tensor { id, dtype, dims } => {
                id.shift_ids(by);
                dtype.shift_ids(by);
                dims.shift_ids(by);
            }
        }
    }
}

impl ShiftIds for Arg {
    fn shift_ids(&mut self, by: i64) {
        self.id.shift_ids(by);
        self.keyword.shift_ids(by);
        self.value.shift_ids(by);
    }
}

impl ShiftIds for Expr {
    fn shift_ids(&mut self, by: i64) {
        self.id.shift_ids(by);
        match &mut self.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Error => {}
            ExprKind::Size { unit, .. } => unit.shift_ids(by),
            ExprKind::Name(name) => name.shift_ids(by),
            ExprKind::Call { callee, args } => {
                callee.shift_ids(by);
                args.shift_ids(by);
            }
            ExprKind::List(items) => items.shift_ids(by),
            ExprKind::Unary { operand, .. } => operand.shift_ids(by),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.shift_ids(by);
                rhs.shift_ids(by);
            }
            ExprKind::Field { base, field } => {
                base.shift_ids(by);
                field.shift_ids(by);
            }
            ExprKind::Index { base, index } => {
                base.shift_ids(by);
                index.shift_ids(by);
            }
            ExprKind::Repeat { count, call } => {
                count.shift_ids(by);
                call.shift_ids(by);
            }
        }
    }
}
