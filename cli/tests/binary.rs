//! The `netc` binary runs, and `netc lsp` answers `initialize` and exits on `exit`: with 0
//! after `shutdown`, with 1 without it (as the protocol says).
//!
//! Having an integration test here also makes `cargo test --workspace` build
//! `target/<profile>/netc` before any test runs, so the CLI smoke test of `tests/it`, which
//! spawns the binary when it is there, finds it up to date. (The language-server tests of
//! `tests/it/lsp.rs` run the server in process and need no binary.)

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

const NETC: &str = env!("CARGO_BIN_EXE_netc");

#[test]
fn version() {
    let out = Command::new(NETC).arg("--version").output().expect("run netc");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("netc {}\n", env!("CARGO_PKG_VERSION")));
}

/// Starts `netc lsp`, sends `messages` (each framed) and closes its input; its exit code.
fn lsp_exit_code(messages: &[&str]) -> Option<i32> {
    let mut child = Command::new(NETC)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start netc lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    for message in messages {
        stdin.write_all(&netc_lsp::input::frame(message.as_bytes())).expect("write");
    }
    stdin.flush().expect("flush");
    drop(stdin);
    child.wait().expect("netc lsp exits").code()
}

#[test]
fn lsp_exits_with_1_without_shutdown() {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    let shutdown = r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#;
    let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
    assert_eq!(lsp_exit_code(&[init, initialized, exit]), Some(1));
    assert_eq!(lsp_exit_code(&[init, initialized, shutdown, exit]), Some(0));
    // A client that goes away without `shutdown`.
    assert_eq!(lsp_exit_code(&[init, initialized]), Some(1));
}

#[test]
fn lsp_initializes_and_exits() {
    let mut child = Command::new(NETC)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start netc lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#;
    stdin.write_all(&netc_lsp::input::frame(init.as_bytes())).expect("write");
    stdin.flush().expect("flush");
    let mut reader = BufReader::new(child.stdout.take().expect("stdout"));
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read a header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("read the body");
    let body = String::from_utf8(body).expect("UTF-8");
    assert!(body.contains(r#""id":1"#) && body.contains("inlayHintProvider"), "{body}");
    for message in [
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
    ] {
        stdin.write_all(&netc_lsp::input::frame(message.as_bytes())).expect("write");
    }
    stdin.flush().expect("flush");
    drop(stdin);
    let status = child.wait().expect("netc lsp exits");
    assert!(status.success(), "{status:?}");
}
