//! The kinds of value in the language: the checks before shapes are known.

use crate::syntax::ExprKind;

/// The kind of a value. Shapes and dtypes come later (elaboration); kinds are enough to
/// catch a tensor passed where an integer is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueKind {
    /// A tensor.
    Tensor,
    /// A tensor or a number (an op operand PyTorch's schema takes as `Tensor` or `Scalar`:
    /// `torch.where(cond, x, 0.0)`); written `tensor_or_float`.
    TensorOrFloat,
    /// Several tensors returned by one call (`a, b = lstm(...)`).
    Tensors(u32),
    /// An integer (possibly symbolic: `N`, `H / 2`).
    Int,
    /// A float.
    Float,
    /// A boolean.
    Bool,
    /// A string.
    Str,
    /// A list of integers, such as a shape.
    IntList,
    /// A list of tensors (`concat([a, b])`).
    TensorList,
    /// A size with a unit (scenarios only).
    Size,
    /// Not known because of an earlier error; accepted everywhere so errors do not cascade.
    Unknown,
}

impl ValueKind {
    /// The kind a type name denotes (`int`, `dim`, `float`, `bool`, `str`, `tensor`).
    pub fn from_type_name(name: &str) -> Option<ValueKind> {
        Some(match name {
            "int" | "dim" => ValueKind::Int,
            "float" => ValueKind::Float,
            "bool" => ValueKind::Bool,
            "str" => ValueKind::Str,
            "tensor" => ValueKind::Tensor,
            "tensor_or_float" => ValueKind::TensorOrFloat,
            _ => return None,
        })
    }

    /// The type names that exist, for suggestions.
    pub const TYPE_NAMES: &'static [&'static str] =
        &["int", "dim", "float", "bool", "str", "tensor", "tensor_or_float"];

    /// How a value of this kind is described in messages ("a tensor", "an integer").
    pub fn describe(self) -> String {
        match self {
            ValueKind::Tensor => "a tensor".into(),
            ValueKind::TensorOrFloat => "a tensor or a number".into(),
            ValueKind::Tensors(n) => format!("{n} tensors"),
            ValueKind::Int => "an integer".into(),
            ValueKind::Float => "a float".into(),
            ValueKind::Bool => "a bool".into(),
            ValueKind::Str => "a string".into(),
            ValueKind::IntList => "a list of integers".into(),
            ValueKind::TensorList => "a list of tensors".into(),
            ValueKind::Size => "a size".into(),
            ValueKind::Unknown => "an unknown value".into(),
        }
    }

    /// How the kind is written as a type.
    pub fn describe_type(self) -> &'static str {
        match self {
            ValueKind::Tensor | ValueKind::Tensors(_) => "tensor",
            ValueKind::TensorOrFloat => "tensor_or_float",
            ValueKind::Int => "int",
            ValueKind::Float => "float",
            ValueKind::Bool => "bool",
            ValueKind::Str => "str",
            ValueKind::IntList => "[int]",
            ValueKind::TensorList => "[tensor]",
            ValueKind::Size => "size",
            ValueKind::Unknown => "?",
        }
    }

    /// Whether a value of kind `self` can be passed where `expected` is wanted. Integers
    /// widen to floats; a tensor or a number fits `tensor_or_float`; unknown values are
    /// accepted both ways.
    pub fn fits(self, expected: ValueKind) -> bool {
        self == expected
            || self == ValueKind::Unknown
            || expected == ValueKind::Unknown
            || (self == ValueKind::Int && expected == ValueKind::Float)
            || (expected == ValueKind::TensorOrFloat
                && matches!(self, ValueKind::Tensor | ValueKind::Int | ValueKind::Float))
    }

    /// Whether the kind is a number.
    pub fn is_number(self) -> bool {
        matches!(self, ValueKind::Int | ValueKind::Float | ValueKind::Unknown)
    }
}

/// The kind of a literal, for parameters whose type is given by their default.
pub fn literal_kind(kind: &ExprKind) -> Option<ValueKind> {
    Some(match kind {
        ExprKind::Int(_) => ValueKind::Int,
        ExprKind::Float(_) => ValueKind::Float,
        ExprKind::Bool(_) => ValueKind::Bool,
        ExprKind::Str(_) => ValueKind::Str,
        ExprKind::List(_) => ValueKind::IntList,
        ExprKind::Unary { operand, .. } => return literal_kind(&operand.kind),
        _ => return None,
    })
}
