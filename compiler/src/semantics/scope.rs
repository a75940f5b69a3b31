//! Definitions and scopes: what each top-level name of a file refers to.
//!
//! A file sees, in order of priority: its own items, the items of the files it `use`s
//! (not re-exported further), and the prelude (`std.nn`, the core ops). Two imported files
//! that define the same name make that name ambiguous; the file's own definition wins over
//! both. Everything here is plain data computed from syntax trees; the salsa queries in
//! [`crate::semantics::files`] decide which trees to hand in.

use std::collections::BTreeMap;

use crate::diagnostics::FileName;
use crate::syntax::{Item, NodeId, OpOutputs, Param, SourceTree, StmtKind, TypeExpr};

use super::kinds::ValueKind;

/// What a top-level name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// A built-in op, declared with `op`.
    Op,
    /// A reusable sub-network.
    Block,
    /// An entry point that scenarios run.
    Model,
    /// A `train` scenario.
    Train,
    /// An `infer` scenario.
    Infer,
}

impl DefKind {
    /// The word used in messages.
    pub fn describe(self) -> &'static str {
        match self {
            DefKind::Op => "op",
            DefKind::Block => "block",
            DefKind::Model => "model",
            DefKind::Train => "train scenario",
            DefKind::Infer => "infer scenario",
        }
    }
}

/// One parameter of a callable, as calls see it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParamSig {
    /// The parameter's name.
    pub name: String,
    /// What kind of value it takes.
    pub kind: ValueKind,
    /// Whether it has a default.
    pub has_default: bool,
    /// Whether its kind was written (a type or a default) rather than taken to be a tensor.
    pub typed: bool,
}

/// How many values a callable returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outputs {
    /// Exactly this many tensors.
    Fixed(u32),
    /// A number that depends on the arguments.
    Variadic,
}

/// The parameters and outputs of an op, block or model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    /// The parameters, in order.
    pub params: Vec<ParamSig>,
    /// What it returns.
    pub outputs: Outputs,
    /// The declaration had a syntax error: calls of it are not checked.
    pub broken: bool,
}

impl Signature {
    /// `name(a: int, b: tensor = ...)`, for messages.
    pub fn render(&self, name: &str) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let default = if p.has_default { " = ..." } else { "" };
                format!("{}: {}{default}", p.name, p.kind.describe_type())
            })
            .collect();
        format!("{name}({})", params.join(", "))
    }
}

/// A top-level definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Definition {
    /// The file that defines it.
    pub file: FileName,
    /// The index of the item in that file.
    pub item: u32,
    /// The node of the defining name (within the item).
    pub name_node: NodeId,
    /// What it is.
    pub kind: DefKind,
    /// Its signature (ops, blocks and models).
    pub signature: Option<Signature>,
}

/// What a name refers to in a file's scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Binding {
    /// One definition.
    Unique(Definition),
    /// Defined by several imported files, none of them the file itself.
    Ambiguous(Vec<Definition>),
}

/// The top-level names a file can refer to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Scope {
    /// Name to binding.
    pub names: BTreeMap<String, Binding>,
    /// A `use` of this file failed: a name that is not found may be defined there, so it is
    /// not reported as unknown (the failed `use` is).
    pub incomplete: bool,
}

impl Scope {
    /// The unique definition of `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Definition> {
        match self.names.get(name)? {
            Binding::Unique(def) => Some(def),
            Binding::Ambiguous(_) => None,
        }
    }
}

/// The kind of value a parameter takes, from its type or, without one, from its default.
pub fn param_kind(param: &Param) -> ValueKind {
    match &param.ty {
        Some(ty) => type_kind(ty),
        None => match &param.default {
            Some(default) => super::kinds::literal_kind(&default.kind).unwrap_or(ValueKind::Tensor),
            None => ValueKind::Tensor,
        },
    }
}

/// The kind a written type denotes; `Unknown` for a misspelled type (reported elsewhere).
pub fn type_kind(ty: &TypeExpr) -> ValueKind {
    match ty {
        TypeExpr::Named(n) => ValueKind::from_type_name(&n.text).unwrap_or(ValueKind::Unknown),
        TypeExpr::List { elem, .. } => match type_kind(elem) {
            ValueKind::Int => ValueKind::IntList,
            ValueKind::Tensor => ValueKind::TensorList,
            _ => ValueKind::Unknown,
        },
        TypeExpr::Tensor { .. } => ValueKind::Tensor,
    }
}

fn signature_of(params: &[Param], outputs: Outputs, broken: bool) -> Signature {
    Signature {
        params: params
            .iter()
            .map(|p| ParamSig {
                name: p.name.text.to_string(),
                kind: param_kind(p),
                has_default: p.default.is_some(),
                typed: p.ty.is_some() || p.default.is_some(),
            })
            .collect(),
        outputs,
        broken,
    }
}

/// The definitions a file makes, in source order (duplicates included: checks report them).
pub fn definitions(file: &FileName, tree: &SourceTree) -> Vec<(String, Definition)> {
    let mut defs = Vec::new();
    for (index, item) in tree.iter().enumerate() {
        let (kind, signature) = match item {
            Item::Use(_) => continue,
            Item::Op(op) => {
                let outputs = match op.outputs {
                    OpOutputs::Fixed(n) => Outputs::Fixed(n),
                    OpOutputs::Variadic => Outputs::Variadic,
                };
                (DefKind::Op, Some(signature_of(&op.params, outputs, op.broken)))
            }
            Item::Block(c) | Item::Model(c) => {
                // A block returns as many values as its (last) top-level `return`.
                let returned = c.body.stmts.iter().rev().find_map(|s| match &s.kind {
                    StmtKind::Return { values } => Some(values.len() as u32),
                    _ => None,
                });
                let outputs = if c.broken { Outputs::Variadic } else { Outputs::Fixed(returned.unwrap_or(1)) };
                let kind = if matches!(item, Item::Block(_)) { DefKind::Block } else { DefKind::Model };
                (kind, Some(signature_of(&c.params, outputs, c.broken)))
            }
            Item::Scenario(s) => {
                let kind = match s.kind {
                    crate::syntax::ScenarioKind::Train => DefKind::Train,
                    crate::syntax::ScenarioKind::Infer => DefKind::Infer,
                };
                (kind, None)
            }
        };
        let name = item.name().expect("every item but `use` has a name");
        defs.push((
            name.text.to_string(),
            Definition { file: file.clone(), item: index as u32, name_node: name.id, kind, signature },
        ));
    }
    defs
}

/// Builds the scope of a file from its own definitions, those of the files it imports and
/// those of the prelude.
pub fn build_scope(
    own: &[(String, Definition)],
    imported: &[Vec<(String, Definition)>],
    prelude: &[(String, Definition)],
) -> Scope {
    let mut names: BTreeMap<String, Binding> = BTreeMap::new();
    for (name, def) in prelude {
        names.entry(name.clone()).or_insert_with(|| Binding::Unique(def.clone()));
    }
    // Imports shadow the prelude; two imports of one name are ambiguous.
    let mut from_imports: BTreeMap<String, Vec<Definition>> = BTreeMap::new();
    for defs in imported {
        for (name, def) in defs {
            let entry = from_imports.entry(name.clone()).or_default();
            if !entry.contains(def) {
                entry.push(def.clone());
            }
        }
    }
    for (name, mut defs) in from_imports {
        let binding = if defs.len() == 1 { Binding::Unique(defs.remove(0)) } else { Binding::Ambiguous(defs) };
        names.insert(name, binding);
    }
    // The file's own definitions win; the first of duplicates is the one used.
    let mut seen = std::collections::BTreeSet::new();
    for (name, def) in own {
        if seen.insert(name.clone()) {
            names.insert(name.clone(), Binding::Unique(def.clone()));
        }
    }
    Scope { names, incomplete: false }
}
