//! Name resolution for the editor: every name of a file with what it refers to.
//!
//! The checks of [`crate::semantics`] resolve names too, but keep only what is wrong. Here a
//! walk over each item records every occurrence of a name (definitions and uses) with its
//! byte range and its [`Symbol`]: an item (through the file's scope), a local (a parameter,
//! an input, an assigned variable, a symbolic dimension), a callee's parameter (a keyword
//! argument), a scenario setting or one of its values, an imported file, a field, a unit.

use std::collections::HashMap;

use crate::db::{SourceFile, lookup_file};
use crate::diagnostics::{FileName, TextRange};
use crate::elaborate::Db;
use crate::semantics::Builtin;
use crate::semantics::files::{file_imports, file_scope, parse_file, syntax_tree};
use crate::semantics::scope::{DefKind, Scope};
use crate::syntax::settings::setting;
use crate::syntax::{
    Arg, Body, Callable, Expr, ExprKind, ForIter, Item, ItemSpans, Name, Param, SettingValue, StmtKind, TypeExpr,
    UseTarget,
};

use super::NavTarget;

/// What a local name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalKind {
    /// A parameter of the item.
    Param,
    /// An `input` of a model.
    Input,
    /// A name assigned in a body.
    Variable,
    /// The variable of a `for` loop.
    LoopVariable,
    /// A symbolic dimension declared by an input's type (`N`, `H`).
    Dim,
}

impl LocalKind {
    /// For hovers.
    pub fn describe(self) -> &'static str {
        match self {
            LocalKind::Param => "parameter",
            LocalKind::Input => "input",
            LocalKind::Variable => "variable",
            LocalKind::LoopVariable => "loop variable",
            LocalKind::Dim => "symbolic dimension",
        }
    }
}

/// What a name refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// A top-level item (op, block, model, scenario) of some file.
    Item {
        /// The file that defines it.
        file: FileName,
        /// Its index there.
        item: u32,
    },
    /// A parameter of a callee, named by a keyword argument (`stride=2`).
    Param {
        /// The callee's file.
        file: FileName,
        /// The callee's index.
        item: u32,
        /// The parameter.
        name: String,
    },
    /// A name local to an item of this file.
    Local {
        /// The item.
        item: u32,
        /// The name.
        name: String,
        /// What it is (at its first definition).
        kind: LocalKind,
    },
    /// A built-in function (`min`, `max`, `len`) called where no item has its name.
    Builtin(Builtin),
    /// A scenario setting key.
    Setting(&'static str),
    /// A named value of a setting (`t4` of `device`, `adam` of `optimizer`).
    SettingValue {
        /// The setting.
        key: &'static str,
        /// The value.
        value: String,
    },
    /// A file named by `use` (a stdlib module is its file too).
    File(FileName),
    /// A dimension bound by a scenario (`dim H = 512`).
    Dim(String),
    /// A field (`shape`, `ndim`).
    Field(String),
    /// A size unit.
    Unit(String),
}

/// One name in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Its bytes.
    pub range: TextRange,
    /// The name as written.
    pub text: String,
    /// What it refers to.
    pub symbol: Symbol,
    /// Whether this occurrence defines it.
    pub def: bool,
    /// The index of the item it is in.
    pub item: u32,
    /// The order of evaluation: in `y = f(y)` the use of `y` comes before its definition.
    pub seq: u32,
}

/// Every name of a file, in source order. A query: hovers, definitions, references,
/// completion and semantic tokens all start from it.
#[salsa::tracked(returns(ref))]
pub fn occurrences(db: &dyn Db, file: SourceFile) -> Vec<Occurrence> {
    let parse = parse_file(db, file);
    let scope = file_scope(db, file);
    let name = file.name(db).clone();
    let mut out = Vec::new();
    for (index, (item, spans)) in parse.tree.iter().zip(&parse.spans).enumerate() {
        let mut w = Walker { db, scope, spans, file: &name, item: index as u32, out: &mut out, env: HashMap::new() };
        w.item(file, item);
    }
    out.sort_by_key(|o| (o.range.start, o.range.end));
    out
}

/// The occurrence at `offset` (touching it from either side; the right one preferred).
pub fn occurrence_at(occurrences: &[Occurrence], offset: u32) -> Option<usize> {
    let inside = occurrences.iter().position(|o| o.range.start <= offset && offset < o.range.end);
    inside.or_else(|| occurrences.iter().position(|o| o.range.end == offset && o.range.start < offset))
}

struct Walker<'a> {
    db: &'a dyn Db,
    scope: &'a Scope,
    spans: &'a ItemSpans,
    file: &'a FileName,
    item: u32,
    out: &'a mut Vec<Occurrence>,
    /// Locals defined so far, with their kind at definition (a map: a generated body has
    /// tens of thousands of names, and every use looks one up).
    env: HashMap<String, LocalKind>,
}

impl Walker<'_> {
    fn push(&mut self, name: &Name, symbol: Symbol, def: bool) {
        let range = self.spans.range(name.id);
        if range.is_empty_at_zero() {
            return;
        }
        let seq = self.out.len() as u32;
        self.out.push(Occurrence { range, text: name.text.to_string(), symbol, def, item: self.item, seq });
    }

    fn define_local(&mut self, name: &Name, kind: LocalKind) {
        let kind = *self.env.entry(name.text.to_string()).or_insert(kind);
        let symbol = Symbol::Local { item: self.item, name: name.text.to_string(), kind };
        self.push(name, symbol, true);
    }

    fn item_symbol(&self, name: &str) -> Option<Symbol> {
        let def = self.scope.get(name)?;
        Some(Symbol::Item { file: def.file.clone(), item: def.item })
    }

    fn item(&mut self, file: SourceFile, item: &Item) {
        let own = Symbol::Item { file: self.file.clone(), item: self.item };
        match item {
            Item::Use(u) => {
                let Some(target) = &u.target else { return };
                let (id, text) = match target {
                    UseTarget::File { id, path } => (*id, path.clone()),
                    UseTarget::Module { id, segments } => {
                        (*id, segments.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("."))
                    }
                };
                // The imports are in item order.
                let imports = file_imports(self.db, file);
                let resolved = imports
                    .binary_search_by_key(&self.item, |i| i.item)
                    .ok()
                    .and_then(|i| imports[i].target.as_ref().ok())
                    .map(|f| f.name(self.db).clone())
                    .or_else(|| crate::semantics::files::import_name(self.db, file, target));
                if let Some(target_name) = resolved {
                    let range = self.spans.range(id);
                    let seq = self.out.len() as u32;
                    let symbol = Symbol::File(target_name);
                    self.out.push(Occurrence { range, text, symbol, def: false, item: self.item, seq });
                }
            }
            Item::Op(op) => {
                self.push(&op.name, own, true);
                self.params(&op.params);
            }
            Item::Block(c) | Item::Model(c) => {
                self.push(&c.name, own, true);
                self.callable(c);
            }
            Item::Scenario(s) => {
                self.push(&s.name, own, true);
                for set in &s.settings {
                    let key = setting(&set.key.text).map(|spec| spec.key);
                    if let Some(key) = key {
                        self.push(&set.key, Symbol::Setting(key), false);
                    }
                    match &set.value {
                        SettingValue::Flag => {}
                        SettingValue::Value(e) => match (key, &e.kind) {
                            (Some("model"), ExprKind::Name(n)) => {
                                if let Some(sym) = self.item_symbol(&n.text) {
                                    self.push(n, sym, false);
                                }
                            }
                            (Some("model"), ExprKind::Call { callee, args }) => self.call(callee, args),
                            (Some(key), ExprKind::Name(n)) => {
                                self.push(n, Symbol::SettingValue { key, value: n.text.to_string() }, false)
                            }
                            (Some(key), ExprKind::Call { callee, args }) => {
                                self.push(callee, Symbol::SettingValue { key, value: callee.text.to_string() }, false);
                                for a in args {
                                    self.expr(&a.value);
                                }
                            }
                            _ => self.expr(e),
                        },
                        SettingValue::Dim { name, value } => {
                            self.push(name, Symbol::Dim(name.text.to_string()), false);
                            self.expr(value);
                        }
                        SettingValue::Args(args) => {
                            for a in args {
                                self.expr(&a.value);
                            }
                        }
                    }
                }
            }
        }
    }

    fn params(&mut self, params: &[Param]) {
        for p in params {
            if let Some(ty) = &p.ty {
                self.type_expr(ty, false);
            }
            if let Some(d) = &p.default {
                // Defaults see no locals.
                let saved = std::mem::take(&mut self.env);
                self.expr(d);
                self.env = saved;
            }
            self.define_local(&p.name, LocalKind::Param);
        }
    }

    fn callable(&mut self, c: &Callable) {
        self.params(&c.params);
        self.body(&c.body);
    }

    fn body(&mut self, body: &Body) {
        for stmt in &body.stmts {
            match &stmt.kind {
                StmtKind::Input { name, ty } => {
                    self.type_expr(ty, true);
                    self.define_local(name, LocalKind::Input);
                }
                StmtKind::Assign { targets, values } => {
                    for value in values {
                        self.expr(value);
                    }
                    for t in targets {
                        self.define_local(t, LocalKind::Variable);
                    }
                }
                StmtKind::Return { values } => {
                    for v in values {
                        self.expr(v);
                    }
                }
                StmtKind::If { cond, then_body, else_body } => {
                    self.expr(cond);
                    self.body(then_body);
                    if let Some(e) = else_body {
                        self.body(e);
                    }
                }
                StmtKind::For { var, iter, body } => {
                    match iter {
                        ForIter::Range { start, end } => {
                            self.expr(start);
                            self.expr(end);
                        }
                        ForIter::Each(list) => self.expr(list),
                    }
                    self.define_local(var, LocalKind::LoopVariable);
                    self.body(body);
                }
            }
        }
    }

    /// A type; in an `input`, a bare unknown name in the shape declares a dimension.
    fn type_expr(&mut self, ty: &TypeExpr, declares_dims: bool) {
        if let TypeExpr::List { elem, .. } = ty {
            self.type_expr(elem, declares_dims);
        }
        if let TypeExpr::Tensor { dims, .. } = ty {
            for d in dims {
                match &d.kind {
                    ExprKind::Name(n) if declares_dims && !self.env.contains_key(n.text.as_str()) => {
                        self.define_local(n, LocalKind::Dim)
                    }
                    _ => self.expr(d),
                }
            }
        }
    }

    fn call(&mut self, callee: &Name, args: &[Arg]) {
        let target = self.scope.get(&callee.text).cloned();
        if let Some(def) = &target {
            self.push(callee, Symbol::Item { file: def.file.clone(), item: def.item }, false);
        } else if let Some(builtin) = Builtin::from_name(&callee.text) {
            self.push(callee, Symbol::Builtin(builtin), false);
        }
        for a in args {
            if let (Some(kw), Some(def)) = (&a.keyword, &target)
                && matches!(def.kind, DefKind::Op | DefKind::Block | DefKind::Model)
            {
                let symbol = Symbol::Param { file: def.file.clone(), item: def.item, name: kw.text.to_string() };
                self.push(kw, symbol, false);
            }
            self.expr(&a.value);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => {
                if let Some(kind) = self.env.get(n.text.as_str()) {
                    let symbol = Symbol::Local { item: self.item, name: n.text.to_string(), kind: *kind };
                    self.push(n, symbol, false);
                } else if let Some(sym) = self.item_symbol(&n.text) {
                    self.push(n, sym, false);
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args),
            ExprKind::List(elems) => {
                for x in elems {
                    self.expr(x);
                }
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Field { base, field } => {
                self.expr(base);
                self.push(field, Symbol::Field(field.text.to_string()), false);
            }
            ExprKind::Index { base, index } => {
                self.expr(base);
                self.expr(index);
            }
            ExprKind::Repeat { count, call } => {
                self.expr(count);
                self.expr(call);
            }
            ExprKind::Size { unit, .. } => self.push(unit, Symbol::Unit(unit.text.to_string()), false),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Error => {}
        }
    }
}

trait EmptyAtZero {
    fn is_empty_at_zero(&self) -> bool;
}

impl EmptyAtZero for TextRange {
    /// Node 0 of a broken item's placeholder: no position.
    fn is_empty_at_zero(&self) -> bool {
        self.start == 0 && self.end == 0
    }
}

/// The declaration of parameter `name` of item `item` (`stride: int = 1`) and its name range.
pub fn param_decl(db: &dyn Db, file: SourceFile, item: u32, name: &str) -> Option<(String, TextRange)> {
    let parse = parse_file(db, file);
    let params = match parse.tree.get(item as usize)? {
        Item::Op(op) => &op.params,
        Item::Block(c) | Item::Model(c) => &c.params,
        _ => return None,
    };
    let spans = parse.spans.get(item as usize)?;
    let p = params.iter().find(|p| p.name.text == name)?;
    let text = file.text(db).get(spans.range(p.id).to_range())?;
    Some((text.split_whitespace().collect::<Vec<_>>().join(" "), spans.range(p.name.id)))
}

/// Where the symbol of occurrence `at` is defined.
pub fn definition(db: &dyn Db, file: SourceFile, occurrences: &[Occurrence], at: usize) -> Option<NavTarget> {
    let occ = &occurrences[at];
    match &occ.symbol {
        Symbol::Item { file: def_file, item } => super::item_target(db, def_file, *item),
        Symbol::Param { file: def_file, item, name } => {
            let f = lookup_file(db, def_file)?;
            let (_, range) = param_decl(db, f, *item, name)?;
            Some(NavTarget { file: def_file.clone(), full_range: range, focus_range: range })
        }
        Symbol::Local { item, name, .. } => {
            // The last definition before this occurrence, else the first one after it.
            let defs: Vec<&Occurrence> = occurrences
                .iter()
                .filter(|o| o.def && o.item == *item && matches!(&o.symbol, Symbol::Local { name: n, .. } if n == name))
                .collect();
            let def = defs.iter().filter(|o| o.seq <= occ.seq).max_by_key(|o| o.seq).or_else(|| defs.first())?;
            Some(NavTarget { file: file.name(db).clone(), full_range: def.range, focus_range: def.range })
        }
        Symbol::File(name) => {
            lookup_file(db, name)?;
            let empty = TextRange::empty(0);
            Some(NavTarget { file: name.clone(), full_range: empty, focus_range: empty })
        }
        Symbol::Builtin(_)
        | Symbol::Setting(_)
        | Symbol::SettingValue { .. }
        | Symbol::Dim(_)
        | Symbol::Field(_)
        | Symbol::Unit(_) => None,
    }
}

/// Every occurrence of `symbol`: items and keyword parameters across the workspace, locals in
/// their item.
pub fn references(db: &dyn Db, file: SourceFile, symbol: &Symbol, include_declaration: bool) -> Vec<NavTarget> {
    let files: Vec<SourceFile> = match symbol {
        Symbol::Item { .. } | Symbol::Param { .. } | Symbol::File(_) => {
            db.workspace().files(db).values().copied().collect()
        }
        _ => vec![file],
    };
    let mut out = Vec::new();
    for f in files {
        let name = f.name(db).clone();
        for o in occurrences(db, f) {
            if o.symbol == *symbol && (include_declaration || !o.def) {
                out.push(NavTarget { file: name.clone(), full_range: o.range, focus_range: o.range });
            }
        }
    }
    if include_declaration {
        // A parameter's declaration, and definitions in files outside the workspace (stdlib).
        let decl = match symbol {
            Symbol::Param { file: def_file, item, name } => lookup_file(db, def_file)
                .and_then(|f| param_decl(db, f, *item, name))
                .map(|(_, r)| NavTarget { file: def_file.clone(), full_range: r, focus_range: r }),
            Symbol::Item { file: def_file, item } if db.workspace().files(db).get(def_file).is_none() => {
                super::item_target(db, def_file, *item).map(|t| NavTarget { full_range: t.focus_range, ..t })
            }
            _ => None,
        };
        if let Some(d) = decl
            && !out.contains(&d)
        {
            out.push(d);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The kind of the item a symbol names, if it names one.
pub fn item_kind(db: &dyn Db, symbol: &Symbol) -> Option<DefKind> {
    let Symbol::Item { file, item } = symbol else { return None };
    let f = lookup_file(db, file)?;
    Some(match syntax_tree(db, f).get(*item as usize)? {
        Item::Op(_) => DefKind::Op,
        Item::Block(_) => DefKind::Block,
        Item::Model(_) => DefKind::Model,
        Item::Scenario(s) => match s.kind {
            crate::syntax::ScenarioKind::Train => DefKind::Train,
            crate::syntax::ScenarioKind::Infer => DefKind::Infer,
        },
        Item::Use(_) => return None,
    })
}

/// Whether a file is part of the standard library.
pub fn is_stdlib(db: &dyn Db, name: &FileName) -> bool {
    db.stdlib().modules(db).values().any(|f| f.name(db) == name)
}
