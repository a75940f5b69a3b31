//! netc: a static memory analyzer and linter for neural-network definitions (`.net` files).
//!
//! The data flows one way, each step a salsa query over the inputs of [`db`]:
//! text -> [`syntax`] -> [`semantics`] (files, scopes, checks, scenario setups) ->
//! [`elaborate`] (the op graph of [`graph`], shapes from [`shapes`]) -> [`costs`] (the run
//! replayed in PyTorch's semantics) -> [`lints`] and [`report`]; [`host`] holds the database and
//! a file's diagnostics from every layer. [`op`] and [`knobs`] are the vocabulary (ops,
//! precisions, optimizers, devices) every layer shares, [`stack`] the room every deep recursion
//! gets. At the edge: [`render`] (diagnostics as text), [`workspace`] (the only reading) and
//! [`safe_write`] (the only writing, atomic), [`cli`], and [`ide`] for editors.
//! ARCHITECTURE.md is the map.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod costs;
pub mod db;
pub mod diagnostics;
pub mod elaborate;
pub mod format;
pub mod graph;
pub mod host;
pub mod ide;
pub mod knobs;
pub mod lints;
pub mod op;
pub mod paths;
pub mod render;
pub mod report;
pub mod safe_write;
pub mod semantics;
pub mod shapes;
pub mod snapshot;
pub mod stack;
pub mod suggest;
pub mod svg;
pub mod syntax;
pub mod units;
pub mod whatif;
pub mod workspace;

pub use analysis::{AnalyzeError, analyze};
