//! The integration tests of netc: one test binary, one module per concern.

mod calibration;
mod cli;
mod diagnostics;
mod fmt;
mod incrementality;
mod lints;
mod lsp;
mod memory;
mod no_panic;
mod ops_doc;
mod parser;
mod shapes;
mod spec_examples;
mod support;
mod zoo;
