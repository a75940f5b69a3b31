//! Tensor types: a dtype and a shape of [`Dim`]s.

use std::fmt;

use super::dim::{Dim, mul_i128};

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 64-bit float.
    F64,
    /// 32-bit float.
    F32,
    /// 16-bit float.
    F16,
    /// bfloat16.
    BF16,
    /// 64-bit integer (ids, pooling indices).
    I64,
    /// 32-bit integer.
    I32,
    /// 16-bit integer.
    I16,
    /// 8-bit integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// Boolean (one byte).
    Bool,
    /// Complex of two 32-bit floats (`torch.complex64`: `view_as_complex` of float32 pairs,
    /// `torch.polar` of float32 tensors).
    C64,
    /// Complex of two 64-bit floats (`torch.complex128`).
    C128,
}

impl DType {
    /// The dtype written `name` in a `.net` file.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Every dtype, in the order the docs list them.
    pub const ALL: [DType; 12] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U8,
        DType::Bool,
        DType::C64,
        DType::C128,
    ];

    /// Every dtype's name, as a `.net` file writes it (`f32[N, 3]`, `to(x, "bf16")`).
    pub const NAMES: [&'static str; 12] = {
        let mut names = [""; 12];
        let mut i = 0;
        while i < names.len() {
            names[i] = DType::ALL[i].name();
            i += 1;
        }
        names
    };

    /// How it is written.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Bool => "bool",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> i128 {
        match self {
            DType::C128 => 16,
            DType::F64 | DType::I64 | DType::C64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// Whether it is a floating-point type (real: complex types are not).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::BF16)
    }

    /// Whether it is a complex type.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// Whether a tensor of it can require gradients (floating-point and complex types, as
    /// autograd's `isDifferentiableType`).
    pub fn is_differentiable(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The complex type whose real and imaginary parts are of this float type (`f32` ->
    /// `c64`, `f64` -> `c128`), as `view_as_complex` and `torch.polar` make.
    pub fn complex(self) -> Option<DType> {
        match self {
            DType::F32 => Some(DType::C64),
            DType::F64 => Some(DType::C128),
            _ => None,
        }
    }

    /// The float type of a complex type's parts (`c64` -> `f32`), as `view_as_real` makes.
    pub fn real_part(self) -> Option<DType> {
        match self {
            DType::C64 => Some(DType::F32),
            DType::C128 => Some(DType::F64),
            _ => None,
        }
    }

    /// Type promotion's category (`c10::ScalarType`'s order of kinds): bool < integers <
    /// floats < complex; a higher category wins whatever the width.
    fn category(self) -> u8 {
        match self {
            DType::Bool => 0,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => 1,
            DType::F64 | DType::F32 | DType::F16 | DType::BF16 => 2,
            DType::C64 | DType::C128 => 3,
        }
    }

    /// The dtype two operands of an elementwise op meet in, as `torch.promote_types`: a
    /// complex beats a float, a float an integer and an integer bool; within a kind the wider
    /// wins; f16 with bf16 is f32, u8 with i8 is i16 (neither holds the other's values) and
    /// c64 with f64 is c128.
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (F16, BF16) | (BF16, F16) => F32,
            (C64, F64) | (F64, C64) => C128,
            (U8, I8) | (I8, U8) => I16,
            (a, b) if a.category() != b.category() => {
                if a.category() > b.category() {
                    a
                } else {
                    b
                }
            }
            (a, b) => {
                if a.size() >= b.size() {
                    a
                } else {
                    b
                }
            }
        }
    }

    /// The dtype of an op on `operands`, each a dtype and whether its tensor is 0-dim, as
    /// `torch.result_type`: the dimensioned operands promote together, the 0-dim ones
    /// together, and a 0-dim result only counts when it is of a higher kind (`bf16[n] *
    /// f32[]` stays bf16; `i64[n] * f32[]` is f32). `None` without operands.
    pub fn result_type(operands: impl IntoIterator<Item = (DType, bool)>) -> Option<DType> {
        let (mut dimensioned, mut zero_dim) = (None::<DType>, None::<DType>);
        for (dtype, is_zero_dim) in operands {
            let slot = if is_zero_dim { &mut zero_dim } else { &mut dimensioned };
            *slot = Some(slot.map_or(dtype, |d| d.promote(dtype)));
        }
        match (dimensioned, zero_dim) {
            (Some(d), Some(z)) if z.category() > d.category() => Some(d.promote(z)),
            (Some(d), _) => Some(d),
            (None, z) => z,
        }
    }
}

/// The type of a tensor: dtype and shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Element type.
    pub dtype: DType,
    /// Dimensions, outermost first.
    pub shape: Vec<Dim>,
}

impl TensorType {
    /// A tensor type.
    pub fn new(dtype: DType, shape: Vec<Dim>) -> Self {
        TensorType { dtype, shape }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements, `None` on overflow.
    pub fn numel(&self) -> Option<Dim> {
        // Known sizes multiply as integers (the usual case: every tensor of a scenario).
        let mut known: i128 = 1;
        for (i, d) in self.shape.iter().enumerate() {
            match d {
                Dim::Known(v) => known = mul_i128(known, *v)?,
                Dim::Sym(_) => return self.shape[i..].iter().try_fold(Dim::Known(known), |acc, d| acc.mul(d)),
            }
        }
        Some(Dim::Known(known))
    }

    /// The bytes of its storage, `None` on overflow.
    pub fn bytes(&self) -> Option<Dim> {
        self.numel()?.mul(&Dim::Known(self.dtype.size()))
    }

    /// The same shape with another dtype.
    pub fn with_dtype(&self, dtype: DType) -> Self {
        TensorType { dtype, shape: self.shape.clone() }
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype.name())?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row is `(a, a is 0-dim, b, b is 0-dim, torch.result_type)`, as torch 2.15 answers
    /// `torch.result_type(torch.ones(3 or (), dtype=a), torch.ones(3 or (), dtype=b))`.
    const RESULT_TYPES: &[(&str, bool, &str, bool, &str)] = &[
        ("bf16", false, "f32", false, "f32"),
        ("bf16", false, "f32", true, "bf16"),
        ("f32", true, "bf16", false, "bf16"),
        ("f16", false, "bf16", false, "f32"),
        ("u8", false, "i8", false, "i16"),
        ("bool", false, "i64", true, "i64"),
        ("i32", false, "i64", true, "i32"),
        ("i64", false, "f64", true, "f64"),
        ("i64", false, "f32", false, "f32"),
        ("bool", false, "bool", false, "bool"),
        ("f32", true, "f64", true, "f64"),
    ];

    #[test]
    fn result_type_follows_torch() {
        for &(a, a_zero_dim, b, b_zero_dim, want) in RESULT_TYPES {
            let dtype = |name| DType::from_name(name).unwrap();
            let got = DType::result_type([(dtype(a), a_zero_dim), (dtype(b), b_zero_dim)]).unwrap();
            assert_eq!(got.name(), want, "{a} (0-dim: {a_zero_dim}) and {b} (0-dim: {b_zero_dim})");
        }
    }
}
