//! netc: a static memory analyzer and linter for neural-network definitions (`.net` files).
//!
//! The data flows one way: text -> [`syntax`] -> [`semantics`] -> diagnostics, each step a
//! salsa query in [`db`]. Rendering happens at the edge ([`render`]); the command line is
//! [`cli`], a thin layer over [`workspace`] (the only IO) and [`render`].

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
pub mod semantics;
pub mod shapes;
pub mod snapshot;
pub mod suggest;
pub mod svg;
pub mod syntax;
pub mod units;
pub mod workspace;

pub use analysis::{AnalyzeError, analyze};
