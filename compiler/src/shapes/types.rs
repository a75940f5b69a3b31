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
}

impl DType {
    /// The dtype written `name` in a `.net` file.
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "f64" => DType::F64,
            "f32" => DType::F32,
            "f16" => DType::F16,
            "bf16" => DType::BF16,
            "i64" => DType::I64,
            "i32" => DType::I32,
            "i16" => DType::I16,
            "i8" => DType::I8,
            "u8" => DType::U8,
            "bool" => DType::Bool,
            _ => return None,
        })
    }

    /// How it is written.
    pub fn name(self) -> &'static str {
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
        }
    }

    /// Bytes per element.
    pub fn size(self) -> i128 {
        match self {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::BF16)
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
