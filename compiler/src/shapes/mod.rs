//! Shapes: dimensions (exact or symbolic), tensor types, and the semantics of the built-in
//! ops (shape rule, parameters, MACs).

pub mod dim;
pub mod ops;
pub mod types;

pub use dim::Dim;
pub use types::{DType, TensorType};
