//! The `netc` binary: see [`netc::cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(netc::cli::main())
}
