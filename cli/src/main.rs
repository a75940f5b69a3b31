//! The `netc` binary: the command line of [`netc::cli`], with the language server of
//! [`netc_lsp`] behind `netc lsp`. The compiler library cannot depend on the language server
//! (which depends on it), so this package joins the two.

/// mimalloc instead of the system allocator: an edit that re-elaborates a large model frees
/// and allocates tens of thousands of small objects, and glibc's malloc spent about a third
/// of that time consolidating its heap in a long-running language server.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(netc::cli::main_with(&netc_lsp::run_stdio))
}
