//! The integration tests of netc: one test binary, one module per concern.

mod calibration;
mod cli;
mod diagnostics;
mod incrementality;
mod memory;
mod no_panic;
mod parser;
mod shapes;
mod spec_examples;
mod support;
