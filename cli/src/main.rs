//! The `netc` binary: the command line of [`netc::cli`], with the language server of
//! [`netc_lsp`] behind `netc lsp`. The compiler library cannot depend on the language server
//! (which depends on it), so this package joins the two.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(netc::cli::main_with(&netc_lsp::run_stdio))
}
