//! Semantics that need no shapes: scopes, name resolution, call and kind checks, scenario
//! settings. Pure functions over syntax trees; [`crate::db`] runs them as salsa queries.

pub mod check;
pub mod kinds;
pub mod scenario;
pub mod scope;
pub mod sizes;

pub use kinds::ValueKind;
pub use scope::{Binding, DefKind, Definition, Outputs, ParamSig, Scope, Signature};
