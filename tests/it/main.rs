//! The integration tests of netc: one test binary, one module per concern.

mod analyze;
mod calibration;
mod cli;
mod config;
mod diagnostics;
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
mod shapes;
mod snapshot_cmd;
mod spec_examples;
mod support;
mod svg;
mod zoo;
