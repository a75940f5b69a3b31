//! Semantics that need no shapes: scopes, name resolution, call and kind checks, scenario
//! settings, as pure functions over syntax trees (`check`, `scenario`, `scope`, `kinds`,
//! `sizes`, `builtins`) and the queries that run them (`files`, `queries`, `setup`).

pub mod builtins;
pub mod check;
pub mod files;
pub mod kinds;
pub mod queries;
pub mod scenario;
pub mod scope;
pub mod setup;
pub mod sizes;

pub use builtins::Builtin;
pub use kinds::ValueKind;
pub use scope::{Binding, DefKind, Definition, Outputs, ParamSig, Scope, Signature};
