//! The integration tests of netc: one test binary, one module per concern.

// The whole crate is test code, helpers included: `unwrap` says what failed well enough
// here (the workspace denies it elsewhere).
#![allow(clippy::unwrap_used)]

mod analyze;
mod calibration;
mod cancellation;
mod cli;
mod config;
mod diagnostics;
mod files;
mod fmt;
mod hints;
mod ide;
mod incrementality;
mod lints;
mod lsp;
mod memory;
mod no_panic;
mod ops_doc;
mod parser;
mod reparse;
mod reuse;
mod scaling;
mod shapes;
mod snapshot_cmd;
mod spec_examples;
mod support;
mod svg;
mod tidy;
mod zoo;
