//! The language server through the protocol: what `netc-lsp` adds to `netc::ide`, whose
//! answers `ide.rs` tests as a library. Here: UTF-16 positions, pushed and pulled
//! diagnostics, the settings (`initializationOptions`, `workspace/didChangeConfiguration`,
//! `netc.toml`), watched files, the `netc.setActiveScenario` command and the refresh
//! requests it sends, the custom `netc/stdlibSource` method, cancellation (`$/cancelRequest`;
//! `ContentModified` in the stress test), malformed frames and a large file, and one smoke
//! test per feature that only checks the server answers it (the content is `ide.rs`'s).
//! A stress test applies thousands of random edits (with requests in between) and compares
//! the final answers with those of a fresh server that only saw the final text.
//!
//! `netc_lsp::serve` runs in this process, as `netc lsp` runs it on stdio (a tokio runtime
//! blocking on it, here on a thread of its own), over two in-memory pipes, with a small
//! JSON-RPC client written here: no binary is needed. `cli/tests/binary.rs` checks that the
//! `netc lsp` binary itself answers `initialize` and exits on `exit`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::runtime::Handle;

const TIMEOUT: Duration = Duration::from_secs(60);

/// The size of the in-memory pipes' buffers (a write waits while the server has not read).
const PIPE: usize = 1 << 16;

/// A fresh directory, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(test: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let unique = format!("netc-lsp-{}-{}-{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(unique).join(test);
        std::fs::create_dir_all(&path).expect("create a temporary directory");
        // The server sees canonical paths (macOS' /tmp is a link).
        TempDir(path.canonicalize().expect("canonical"))
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
        std::fs::write(&path, text).expect("write");
        path
    }

    pub fn uri(&self, name: &str) -> String {
        format!("file://{}", self.0.join(name).display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().expect("unique parent"));
    }
}

/// A server running [`netc_lsp::serve`] in this process, and the client side of its
/// connection: two in-memory pipes, as stdin and stdout would be.
pub struct Server {
    /// The runtime the server runs on (its `serve` future runs on a thread of its own).
    runtime: Handle,
    /// The pipe the server reads; dropped, the server sees the end of its input.
    input: Option<DuplexStream>,
    /// Says when `serve` returned, with the exit code (disconnected if it panicked).
    served: Receiver<u8>,
    incoming: Receiver<Value>,
    /// Notifications and server requests not consumed yet.
    queue: VecDeque<Value>,
    next_id: i64,
}

fn frame(body: &Value) -> Vec<u8> {
    netc_lsp::input::frame(body.to_string().as_bytes())
}

/// Reads the server's messages from `output` and sends them on, until the output ends.
async fn read_messages(output: DuplexStream, tx: std::sync::mpsc::Sender<Value>) {
    let mut reader = BufReader::new(output);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse::<usize>().ok();
            }
        }
        let Some(length) = length else { return };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(&body) else { return };
        if tx.send(value).is_err() {
            return;
        }
    }
}

impl Server {
    /// Starts the server and initializes it with `root` as the workspace folder.
    pub fn start(root: Option<&Path>, options: Value) -> Self {
        Self::start_with(root, options, json!({}))
    }

    /// Like [`Server::start`], with `text_document` capabilities added to the client's.
    pub fn start_with(root: Option<&Path>, options: Value, text_document: Value) -> Self {
        // As `netc lsp` runs it (`netc_lsp::run_stdio`): a multi-threaded runtime that
        // blocks on `serve`, here on a thread of its own, with pipes for stdin and stdout.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let handle = runtime.handle().clone();
        let (input, server_input) = tokio::io::duplex(PIPE);
        let (server_output, output) = tokio::io::duplex(PIPE);
        let (done, served) = channel();
        std::thread::Builder::new()
            .name("netc-lsp".into())
            .spawn(move || {
                let code = runtime.block_on(netc_lsp::serve(server_input, server_output));
                // Blocking tasks still computing stale answers are not waited for.
                runtime.shutdown_background();
                let _ = done.send(code);
            })
            .expect("start the server thread");
        let (tx, incoming) = channel();
        let reader = handle.clone();
        std::thread::Builder::new()
            .name("netc-lsp-client".into())
            .spawn(move || reader.block_on(read_messages(output, tx)))
            .expect("start the client's reader");
        let mut server =
            Server { runtime: handle, input: Some(input), served, incoming, queue: VecDeque::new(), next_id: 0 };
        let root_uri = root.map(|r| format!("file://{}", r.display()));
        let folders = root_uri.as_ref().map(|u| json!([{ "uri": u, "name": "root" }]));
        let mut capabilities = json!({ "publishDiagnostics": { "relatedInformation": true, "versionSupport": true } });
        if let (Some(all), Value::Object(extra)) = (capabilities.as_object_mut(), text_document) {
            all.extend(extra);
        }
        let init = server.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": root_uri,
                "workspaceFolders": folders,
                "initializationOptions": options,
                "capabilities": {
                    "workspace": {
                        "didChangeWatchedFiles": { "dynamicRegistration": true },
                        "inlayHint": { "refreshSupport": true },
                        "codeLens": { "refreshSupport": true }
                    },
                    "textDocument": capabilities
                }
            }),
        );
        assert!(init["result"]["capabilities"]["inlayHintProvider"].as_bool().unwrap_or(false), "{init}");
        server.notify("initialized", json!({}));
        server
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input open");
        self.runtime.block_on(input.write_all(bytes)).expect("write to the server");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send_raw(&frame(&json!({ "jsonrpc": "2.0", "method": method, "params": params })));
    }

    /// Sends a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_raw(&frame(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })));
        id
    }

    /// The next message from the server; requests from the server are answered with null.
    fn receive(&mut self, deadline: Instant) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(message) => {
                if message.get("method").is_some() && message.get("id").is_some() {
                    let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": null });
                    self.send_raw(&frame(&reply));
                }
                message
            }
            Err(RecvTimeoutError::Timeout) => panic!("the server did not answer in {TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// The response to request `id` (the whole message: `result` or `error`).
    pub fn response(&mut self, id: i64) -> Value {
        if let Some(i) = self.queue.iter().position(|m| m["id"] == json!(id) && m.get("method").is_none()) {
            return self.queue.remove(i).expect("found");
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self.receive(deadline);
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            self.queue.push_back(message);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// The result of a request that must succeed.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// Waits for a message from the server that satisfies `matches`.
    pub fn wait_for(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.queue.iter().position(&matches) {
            return self.queue.remove(i).expect("found");
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self.receive(deadline);
            if matches(&message) {
                return message;
            }
            self.queue.push_back(message);
        }
    }

    /// The diagnostics published for `uri` at `version` (the latest such notification).
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let message = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        message["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// The codes of the first diagnostics published for `uri` that satisfy `until` (an
    /// earlier publication of the same version may still be queued).
    pub fn codes_until(&mut self, uri: &str, until: impl Fn(&[String]) -> bool) -> Vec<String> {
        let codes_of = |m: &Value| -> Vec<String> {
            let list = m["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
            list.iter().map(|d| d["code"].as_str().unwrap_or("").to_string()).collect()
        };
        let message = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && until(&codes_of(m))
        });
        codes_of(&message)
    }

    /// The severity of `code` in the first publication that has it.
    pub fn next_severity_of(&mut self, code: &str) -> Value {
        let has = |m: &Value| {
            m["params"]["diagnostics"].as_array().and_then(|l| l.iter().find(|d| d["code"] == code).cloned())
        };
        let message = self.wait_for(|m| m["method"] == "textDocument/publishDiagnostics" && has(m).is_some());
        has(&message).expect("found")["severity"].clone()
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        let doc = json!({ "uri": uri, "languageId": "net", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
    }

    pub fn change(&mut self, uri: &str, version: i64, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes }),
        );
    }

    /// `shutdown`, then `exit`: `serve` returns 0 (with the input still open, as a client
    /// that does not close the server's stdin leaves it).
    pub fn shutdown(mut self) {
        let _ = self.call("shutdown", Value::Null);
        assert_eq!(self.exit(), 0, "the exit code after `shutdown`");
    }

    /// Sends `exit`: the exit code `serve` returns.
    pub fn exit(&mut self) -> u8 {
        self.notify("exit", Value::Null);
        match self.served.recv_timeout(TIMEOUT) {
            Ok(code) => code,
            Err(RecvTimeoutError::Timeout) => panic!("the server did not return from `serve` after `exit`"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server panicked"),
        }
    }
}

fn pos(line: u32, character: u32) -> Value {
    json!({ "line": line, "character": character })
}

fn doc_pos(uri: &str, line: u32, character: u32) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": pos(line, character) })
}

/// The (line, UTF-16 column) of the first occurrence of `needle` in `text`, plus `shift`.
fn find(text: &str, needle: &str, shift: usize) -> (u32, u32) {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in the text")) + shift;
    let line = text[..at].matches('\n').count() as u32;
    let start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    (line, text[start..at].encode_utf16().count() as u32)
}

/// The byte offset of an LSP position in `text`.
fn offset_of(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(p) => start += p + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |p| start + p);
    let mut units = 0u64;
    for (i, c) in text[start..end].char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16() as u64;
    }
    end
}

const BLOCKS: &str = include_str!("../../examples/blocks.net");
const RESNET: &str = include_str!("../../examples/resnet18.net");

/// A workspace with the ResNet-18 example and its blocks, and a server on it with
/// `resnet18.net` open.
fn resnet_workspace(test: &str) -> (TempDir, Server, String) {
    let dir = TempDir::new(test);
    dir.write("blocks.net", BLOCKS);
    dir.write("resnet18.net", RESNET);
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("resnet18.net");
    server.open(&uri, RESNET);
    // No errors or warnings (lints may give advice: severity 3 or 4).
    let diagnostics = server.diagnostics(&uri, 1);
    assert!(diagnostics.iter().all(|d| d["severity"].as_u64() > Some(2)), "{diagnostics:?}");
    (dir, server, uri)
}

fn whole(text: &str) -> Value {
    let lines = text.matches('\n').count() as u32;
    json!({ "start": pos(0, 0), "end": pos(lines + 1, 0) })
}

// ---------------------------------------------------------------------------------------
// Positions and text sync

#[test]
fn incremental_changes_use_utf16_columns() {
    let dir = TempDir::new("utf16");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("emoji.net");
    // `😀` is two UTF-16 units and four bytes; `é` one unit and two bytes.
    let text = "block b(x) {  # 😀 é\n    y = relu(x)  # 😀😀\n    return y\n}\n";
    server.open(&uri, text);
    assert!(server.diagnostics(&uri, 1).is_empty());
    // Insert after the emoji of line 1's comment (UTF-16 column 23, byte column 27), and
    // replace the `y` of `return y` by `zé`.
    server.change(
        &uri,
        2,
        json!([
            { "range": { "start": pos(1, 23), "end": pos(1, 23) }, "text": " é😀" },
            { "range": { "start": pos(2, 11), "end": pos(2, 12) }, "text": "zé" }
        ]),
    );
    let d = server.diagnostics(&uri, 2);
    // `é` is not a name character (E0101, dropped), so `z` is undefined (E0204).
    let found: Vec<(&str, &Value)> = d.iter().map(|d| (d["code"].as_str().unwrap(), &d["range"])).collect();
    let e0204 = json!({ "start": pos(2, 11), "end": pos(2, 12) });
    let e0101 = json!({ "start": pos(2, 12), "end": pos(2, 13) });
    assert_eq!(found, [("E0204", &e0204), ("E0101", &e0101)], "{d:#?}");
    // The comment got the insertion: a hover on line 1 past it still works.
    let hover = server.call("textDocument/hover", doc_pos(&uri, 1, 10));
    assert!(hover["contents"]["value"].as_str().unwrap().contains("relu"), "{hover}");
    server.shutdown();
}

/// Lines end at `\n`, `\r\n` and a lone `\r`, as LSP counts them: a document with lone
/// `\r`s (or all three) gets the answers of its `\n` twin, position for position. (The server
/// once counted `\n` only: hints, hovers and diagnostics were lines off after a lone `\r`,
/// and the formatting edit ended a line early, so the client kept the last line twice.)
#[test]
fn lone_carriage_returns_end_lines_as_lsp_counts_them() {
    let (dir, mut server, lf_uri) = resnet_workspace("lone-cr");
    let lines = RESNET.matches('\n').count() as u32;
    let twins = [
        ("cr.net", RESNET.replace('\n', "\r")),
        ("mixed.net", RESNET.replace("\n\n", "\r\r\n").replace(")\n", ")\r").replace("{\n", "{\r\n")),
    ];
    let hover_at = find(RESNET, "conv2d(x, 64", 2);
    let answers = |server: &mut Server, uri: &str| {
        let mut out = answers(server, uri, RESNET);
        out.push(server.call("textDocument/hover", doc_pos(uri, hover_at.0, hover_at.1)));
        // Made independent of the document's name (its URI, its path in tooltips).
        let path = uri.trim_start_matches("file://");
        serde_json::to_string(&out).unwrap().replace(uri, "URI").replace(path, "PATH")
    };
    let expected = answers(&mut server, &lf_uri);
    assert!(expected.contains("op conv2d("), "{expected}");
    let params =
        |uri: &str| json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } });
    assert_eq!(server.call("textDocument/formatting", params(&lf_uri)), json!([]));
    for (name, text) in twins {
        assert_ne!(text, RESNET);
        let uri = dir.uri(name);
        server.open(&uri, &text);
        assert_eq!(answers(&mut server, &uri), expected, "{name}");
        // Formatting gives the `\n` text, in one edit over the whole document.
        let edits = server.call("textDocument/formatting", params(&uri));
        assert_eq!(edits[0]["newText"], RESNET, "{name}");
        assert_eq!(edits[0]["range"], json!({ "start": pos(0, 0), "end": pos(lines, 0) }), "{name}");
    }
    // A diagnostic after lone `\r`s, and an incremental change on the line they end.
    let uri = dir.uri("main.net");
    server.open(&uri, "block b(x) {\r    y = relu(x)\r    return z\r}\r");
    let d = server.diagnostics(&uri, 1);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["range"], json!({ "start": pos(2, 11), "end": pos(2, 12) }), "{d:?}");
    server.change(&uri, 2, json!([{ "range": { "start": pos(2, 11), "end": pos(2, 12) }, "text": "y" }]));
    assert_eq!(server.diagnostics(&uri, 2), Vec::<Value>::new());
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Diagnostics: pushed or pulled

#[test]
fn diagnostics_are_pushed_with_codes_and_related_information() {
    let dir = TempDir::new("diagnostics");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("main.net");
    let text = "block b(x) {\n    y = conv2d(x, 64, 3, 1, 0, 1, 1, true, 9)\n    return undefined_name\n}\n";
    server.open(&uri, text);
    let diagnostics = server.diagnostics(&uri, 1);
    let codes: Vec<&str> = diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["E0207", "E0204"], "{diagnostics:#?}");
    let too_many = &diagnostics[0];
    assert_eq!(too_many["severity"], 1);
    assert_eq!(too_many["source"], "netc");
    let (line, col) = find(text, "9)", 0);
    assert_eq!(too_many["range"]["start"], pos(line, col));
    let related = too_many["relatedInformation"].as_array().expect("related information");
    // The label points into the standard library, at the declaration of `conv2d`.
    assert!(related.iter().any(|r| r["message"].as_str().unwrap().starts_with("defined as `conv2d(")), "{related:?}");
    // Fixing the file clears them.
    server.change(&uri, 2, json!([{ "range": { "start": pos(2, 11), "end": pos(2, 25) }, "text": "y" }]));
    let d2 = server.diagnostics(&uri, 2);
    assert_eq!(d2.len(), 1, "{d2:?}");
    let (line, col) = find(text, ", 9)", 0);
    server.change(&uri, 3, json!([{ "range": { "start": pos(line, col), "end": pos(line, col + 3) }, "text": "" }]));
    assert_eq!(server.diagnostics(&uri, 3), Vec::<Value>::new());
    // Saving publishes again; closing clears.
    server.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }));
    server.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    let cleared = server.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["version"].is_null()
    });
    assert_eq!(cleared["params"]["diagnostics"], json!([]));
    server.shutdown();
}

#[test]
fn a_client_that_pulls_diagnostics_gets_them_on_request_and_none_pushed() {
    let dir = TempDir::new("pull");
    let text = "model m() {\n    input x: f32[N, 8]\n    return linear(y, 4)\n}\n";
    dir.write("m.net", text);
    let mut server = Server::start_with(Some(&dir.0), Value::Null, json!({ "diagnostic": {} }));
    let uri = dir.uri("m.net");
    server.open(&uri, text);
    let report = server.call("textDocument/diagnostic", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(report["kind"], "full", "{report}");
    let codes: Vec<&str> = report["items"].as_array().unwrap().iter().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["E0204"], "{report}");
    // The fix is seen on the next pull.
    server.change(&uri, 2, json!([{ "text": text.replace("(y,", "(x,") }]));
    let report = server.call("textDocument/diagnostic", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(report["items"], json!([]), "{report}");
    // Nothing was pushed: the client would show each problem twice.
    server.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    while let Ok(message) = server.incoming.recv_timeout(std::time::Duration::from_millis(200)) {
        server.queue.push_back(message);
    }
    assert!(!server.queue.iter().any(|m| m["method"] == "textDocument/publishDiagnostics"), "{:?}", server.queue);
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Settings

#[test]
fn the_hint_settings_choose_the_figures() {
    let (_dir, mut server, uri) = resnet_workspace("hint-settings");
    let settings =
        json!({ "netc": { "inlayHints": { "shape": false, "bytes": false, "params": true, "macs": true } } });
    server.notify("workspace/didChangeConfiguration", json!({ "settings": settings }));
    let hints =
        server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    let first = hints[0]["label"].as_str().unwrap();
    assert!(first.contains("params") && first.contains("MACs") && !first.contains("f32"), "{hints}");
    server.notify(
        "workspace/didChangeConfiguration",
        json!({ "settings": { "netc": { "inlayHints": { "enabled": false } } } }),
    );
    let none = server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    assert_eq!(none, json!([]));
    server.shutdown();
}

/// A model whose inference scenario lacks `no_grad` (L0003, a warning): with nested calls,
/// autograd keeps the first `relu`'s output alive.
const NEEDS_NO_GRAD: &str = "model m() {\n    input x: f32[N, 512]\n    return linear(relu(linear(relu(linear(x, 2048)), 2048)), 10)\n}\ninfer serve { model m()  batch 256  eval }\n";

#[test]
fn lint_levels_come_from_the_settings() {
    let dir = TempDir::new("levels");
    let text = NEEDS_NO_GRAD;
    dir.write("m.net", text);
    let mut server = Server::start(Some(&dir.0), json!({ "lints": { "missing-no-grad": "allow" } }));
    let uri = dir.uri("m.net");
    server.open(&uri, text);
    let diagnostics = server.diagnostics(&uri, 1);
    assert!(!diagnostics.iter().any(|d| d["code"] == "L0003"), "{diagnostics:?}");
    // By code, from a configuration change: now an error.
    server.notify(
        "workspace/didChangeConfiguration",
        json!({ "settings": { "netc": { "lints": { "L0003": "deny" } } } }),
    );
    assert_eq!(server.next_severity_of("L0003"), 1, "now an error");
    // A value that is no level is ignored, and said in the log.
    server.notify("workspace/didChangeConfiguration", json!({ "settings": { "lints": { "unused": "loud" } } }));
    let log = server.wait_for(|m| m["method"] == "window/logMessage");
    assert!(log["params"]["message"].as_str().unwrap().contains("unused = \"loud\""), "{log}");
    server.shutdown();
}

#[test]
fn netc_toml_sets_levels_and_is_read_again_when_it_changes() {
    let dir = TempDir::new("netc-toml");
    let text = NEEDS_NO_GRAD;
    dir.write("m.net", text);
    dir.write("netc.toml", "[lints]\nmissing-no-grad = \"allow\"\n");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("m.net");
    server.open(&uri, text);
    let diagnostics = server.diagnostics(&uri, 1);
    assert!(!diagnostics.iter().any(|d| d["code"] == "L0003"), "{diagnostics:?}");
    // The file changes on disk; the client's watcher says so.
    dir.write("netc.toml", "[lints]\nmissing-no-grad = \"deny\"\n");
    server
        .notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": dir.uri("netc.toml"), "type": 2 }] }));
    assert_eq!(server.next_severity_of("L0003"), 1, "now an error");
    // A malformed netc.toml is said to the user; the file keeps the default levels.
    dir.write("netc.toml", "[lints\n");
    server
        .notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": dir.uri("netc.toml"), "type": 2 }] }));
    let shown = server.wait_for(|m| m["method"] == "window/showMessage");
    assert!(shown["params"]["message"].as_str().unwrap().contains("E0403"), "{shown}");
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Files on disk

#[test]
fn files_on_disk_are_read_and_watched() {
    let dir = TempDir::new("watched");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    server.wait_for(|m| m["method"] == "client/registerCapability");
    let uri = dir.uri("main.net");
    let text = "use \"extra.net\"\nmodel m() {\n    input x: f32[N, 8]\n    return helper(x)\n}\n";
    server.open(&uri, text);
    assert_eq!(server.codes_until(&uri, |c| !c.is_empty()), ["E0201"]);
    // The file appears on disk: the import resolves.
    dir.write("extra.net", "block helper(x) { return relu(x) }\n");
    let change = json!({ "changes": [{ "uri": dir.uri("extra.net"), "type": 1 }] });
    server.notify("workspace/didChangeWatchedFiles", change);
    assert_eq!(server.codes_until(&uri, |c| c.is_empty()), Vec::<String>::new());
    // It changes on disk: the new text counts.
    dir.write("extra.net", "block helper(x, n: int) { return relu(x) }\n");
    server
        .notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": dir.uri("extra.net"), "type": 2 }] }));
    assert_eq!(server.codes_until(&uri, |c| !c.is_empty()), ["E0208"]);
    // It is deleted: the import fails again.
    std::fs::remove_file(dir.0.join("extra.net")).expect("delete");
    server
        .notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": dir.uri("extra.net"), "type": 3 }] }));
    assert_eq!(server.codes_until(&uri, |c| c.iter().any(|c| c == "E0201")), ["E0201"]);
    // The server never wrote anything.
    let mut names: Vec<String> =
        std::fs::read_dir(&dir.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, Vec::<String>::new());
    server.shutdown();
}

/// `ln -s . l1; ln -s . l2` in the workspace: the scan of the folder never ended (and grew by
/// megabytes a second). It ends now, with each file once.
#[cfg(unix)]
#[test]
fn the_workspace_scan_ends_on_link_loops() {
    let dir = TempDir::new("link-loops");
    dir.write("sub/deep.net", "block deep_block(x) { return relu(x) }\n");
    std::os::unix::fs::symlink(".", dir.0.join("l1")).unwrap();
    std::os::unix::fs::symlink(".", dir.0.join("l2")).unwrap();
    std::os::unix::fs::symlink("..", dir.0.join("sub/up")).unwrap();
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let deadline = Instant::now() + TIMEOUT;
    let uris = loop {
        // A request that overlaps the scan's write is answered "content modified": ask again.
        let found = server.request("workspace/symbol", json!({ "query": "deep_block" }));
        let found = found["result"].as_array().cloned().unwrap_or_default();
        let uris: Vec<String> = found.iter().map(|s| s["location"]["uri"].as_str().unwrap().to_string()).collect();
        if !uris.is_empty() || Instant::now() > deadline {
            break uris;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(uris, [dir.uri("sub/deep.net")]);
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Commands, refresh requests, custom methods, cancellation

#[test]
fn the_set_active_scenario_command_switches_the_figures_and_asks_for_a_refresh() {
    let (dir, mut server, uri) = resnet_workspace("lenses");
    let lenses = server.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let titles: Vec<&str> =
        lenses.as_array().unwrap().iter().map(|l| l["command"]["title"].as_str().unwrap()).collect();
    assert!(
        titles.len() == 2 && titles[0].starts_with("● active") && titles[1].starts_with("○ set active"),
        "{titles:?}"
    );
    let before =
        server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    // The lens's command makes `serve` the active scenario.
    let command = lenses[1]["command"].clone();
    assert_eq!(command["command"], "netc.setActiveScenario");
    let result = server.request(
        "workspace/executeCommand",
        json!({ "command": command["command"], "arguments": command["arguments"] }),
    );
    assert!(result.get("error").is_none(), "{result}");
    // The server asks the client to refresh its hints and lenses.
    server.wait_for(|m| m["method"] == "workspace/inlayHint/refresh");
    server.wait_for(|m| m["method"] == "workspace/codeLens/refresh");
    let lenses = server.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    assert!(lenses[1]["command"]["title"].as_str().unwrap().starts_with("● active"), "{lenses}");
    let after =
        server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    assert_ne!(before, after);
    assert!(after[0]["label"].as_str().unwrap().starts_with("f32[1,3,224,224] · "), "{after}");
    // The lens carries its figures as numbers too (a status bar reads them).
    let data = &lenses[1]["data"];
    assert_eq!(data["active"], true, "{data}");
    // The same figures as the library's report of the file.
    let report = netc::analyze(dir.0.join("resnet18.net")).expect("the example analyzes");
    let serve = &report.scenarios[1];
    assert_eq!(data["scenario"], serve.name.as_str());
    assert_eq!(data["totalBytes"].as_f64(), Some(serve.total_bytes as f64), "{data}");
    assert_eq!(data["budgetBytes"].as_f64(), serve.budget_bytes.map(|b| b as f64), "{data}");
    assert_eq!(lenses[0]["data"]["active"], false);
    // `null` for the name goes back to the default scenario.
    let result = server.request(
        "workspace/executeCommand",
        json!({ "command": command["command"], "arguments": [command["arguments"][0], null] }),
    );
    assert!(result.get("error").is_none(), "{result}");
    let lenses = server.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    assert!(lenses[0]["command"]["title"].as_str().unwrap().starts_with("● active"), "{lenses}");
    let back = server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    assert_eq!(before, back);
    // An unknown command is an error, not a crash.
    let unknown = server.request("workspace/executeCommand", json!({ "command": "netc.nothing", "arguments": [] }));
    assert!(unknown.get("error").is_some());
    server.shutdown();
}

#[test]
fn the_what_if_command_answers_another_batch_and_device_without_editing_the_document() {
    let (dir, mut server, uri) = resnet_workspace("what-if");
    let text_before = std::fs::read_to_string(dir.0.join("resnet18.net")).expect("the example");
    let answer = server.call(
        "workspace/executeCommand",
        json!({ "command": "netc.whatIf", "arguments": [uri, "serve", { "batch": "64", "device": "h100_80gb" }] }),
    );
    // The same figures as the command line's what-if, and as the file edited by hand.
    let edited = dir.0.join("edited.net");
    std::fs::write(
        &edited,
        text_before
            .replace("serve { model resnet18()  batch 1", "serve { model resnet18()  batch 64")
            .replace("device t4", "device h100_80gb"),
    )
    .expect("write");
    let report = netc::analyze(&edited).expect("the edited example analyzes");
    let serve = report.scenarios.iter().find(|s| s.name == "serve").expect("serve");
    assert_eq!(answer["report"]["total_bytes"].as_i64(), Some(serve.total_bytes as i64), "{answer}");
    assert_eq!(answer["report"]["batch"], 64, "{answer}");
    assert_eq!(answer["report"]["device"], "h100_80gb", "{answer}");
    // The document and the figures the editor shows are untouched.
    let lenses = server.call("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let original = netc::analyze(dir.0.join("resnet18.net")).expect("the example analyzes");
    assert_eq!(lenses[1]["data"]["totalBytes"].as_f64(), Some(original.scenarios[1].total_bytes as f64));
    // A wrong value is answered with the error it causes.
    let wrong = server.call(
        "workspace/executeCommand",
        json!({ "command": "netc.whatIf", "arguments": [uri, "serve", { "device": "a100" }] }),
    );
    assert_eq!(wrong["errors"][0], "unknown device `a100`", "{wrong}");
    // The settings as a scenario writes them give the same answer.
    let written = server.call(
        "workspace/executeCommand",
        json!({ "command": "netc.whatIf", "arguments": [uri, "serve", "batch 64  device h100_80gb"] }),
    );
    assert_eq!(written, answer);
    server.shutdown();
}

#[test]
fn stdlib_source_answers_the_text_of_a_standard_library_file() {
    let (_dir, mut server, uri) = resnet_workspace("stdlib-source");
    // `conv2d` is defined in the standard library: a file of the repository, or
    // `netc-std:///nn.net` where the sources are not on disk.
    let (line, col) = find(RESNET, "conv2d(x", 0);
    let target = server.call("textDocument/definition", doc_pos(&uri, line, col))[0]["uri"].clone();
    let text = server.call("netc/stdlibSource", json!({ "uri": target }));
    assert!(text.as_str().is_some_and(|t| t.contains("op conv2d(")), "{target}: {text}");
    // Not a standard-library file: nothing.
    assert!(server.call("netc/stdlibSource", json!({ "uri": uri })).is_null());
    server.shutdown();
}

#[test]
fn a_cancelled_request_is_answered_and_the_session_goes_on() {
    let (_dir, mut server, uri) = resnet_workspace("cancel");
    let id = server
        .send_request("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }));
    server.notify("$/cancelRequest", json!({ "id": id }));
    // Answered either way: with its result if it finished first, else as cancelled.
    let response = server.response(id);
    if let Some(error) = response.get("error") {
        assert_eq!(error["code"], -32800, "{response}");
    }
    assert!(
        server
            .call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(RESNET) }))
            .is_array()
    );
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// One smoke test per feature: the server answers it through the protocol

/// `text` open as `main.net` in a fresh workspace, its first diagnostics received.
fn one_file(test: &str, text: &str) -> (TempDir, Server, String) {
    let dir = TempDir::new(test);
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("main.net");
    server.open(&uri, text);
    let _ = server.diagnostics(&uri, 1);
    (dir, server, uri)
}

#[test]
fn hover_answers_in_markdown() {
    let (_dir, mut server, uri) = resnet_workspace("hover");
    let (line, col) = find(RESNET, "conv2d(x, 64", 2);
    let hover = server.call("textDocument/hover", doc_pos(&uri, line, col));
    assert!(
        hover["contents"]["kind"] == "markdown" && hover["contents"]["value"].as_str().unwrap().contains("op conv2d("),
        "{hover}"
    );
    server.shutdown();
}

#[test]
fn completion_answers_items_that_replace_the_word_before_the_cursor() {
    let text = "model m() {\n    input x: f32[N, 3, 32, 32]\n    y = con\n    return x\n}\n";
    let (_dir, mut server, uri) = one_file("completion", text);
    let (line, col) = find(text, "y = con", 7);
    let items = server.call("textDocument/completion", doc_pos(&uri, line, col));
    let conv = items.as_array().unwrap().iter().find(|i| i["label"] == "conv2d").expect("conv2d offered");
    assert_eq!(conv["textEdit"]["range"], json!({ "start": pos(2, 8), "end": pos(2, 11) }), "{conv}");
    server.shutdown();
}

#[test]
fn signature_help_answers_the_active_parameter() {
    let text = "block b(x) {\n    y = conv2d(x, 64, stride=2, )\n    return y\n}\n";
    let (_dir, mut server, uri) = one_file("signature", text);
    let (line, col) = find(text, "64", 0);
    let help = server.call("textDocument/signatureHelp", doc_pos(&uri, line, col));
    assert_eq!(help["activeParameter"], 1, "{help}");
    server.shutdown();
}

#[test]
fn definition_answers_a_location_in_another_file() {
    let (dir, mut server, uri) = resnet_workspace("definition");
    let (line, col) = find(RESNET, "basic(y, 128", 0);
    let result = server.call("textDocument/definition", doc_pos(&uri, line, col));
    assert_eq!(result[0]["uri"], dir.uri("blocks.net"), "{result}");
    server.shutdown();
}

#[test]
fn references_answer_locations_across_the_workspace() {
    let (_dir, mut server, uri) = resnet_workspace("references");
    let (line, col) = find(RESNET, "basic(y, 128", 0);
    let params = json!({ "textDocument": { "uri": uri }, "position": pos(line, col), "context": { "includeDeclaration": true } });
    let refs = server.call("textDocument/references", params);
    // The declaration in blocks.net and seven calls in resnet18.net.
    assert_eq!(refs.as_array().unwrap().len(), 8, "{refs}");
    server.shutdown();
}

#[test]
fn document_symbols_answer_the_items_with_their_kinds() {
    let (_dir, mut server, uri) = resnet_workspace("document-symbols");
    let symbols = server.call("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!((&symbols[1]["name"], &symbols[1]["kind"]), (&json!("resnet18"), &json!(5)), "{symbols}");
    server.shutdown();
}

#[test]
fn workspace_symbols_include_the_files_on_disk_nobody_opened() {
    let (_dir, mut server, _uri) = resnet_workspace("workspace-symbols");
    let found = server.call("workspace/symbol", json!({ "query": "bas" }));
    let names: Vec<&str> = found.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"basic"), "{names:?}");
    server.shutdown();
}

#[test]
fn inlay_hints_answer_for_the_lines_of_the_range() {
    let (_dir, mut server, uri) = resnet_workspace("hints");
    let some = server.call(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": uri }, "range": { "start": pos(5, 0), "end": pos(7, 0) } }),
    );
    let lines: Vec<u64> = some.as_array().unwrap().iter().map(|h| h["position"]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [5, 6], "{some}");
    server.shutdown();
}

#[test]
fn semantic_tokens_answer_in_the_legend_with_modifier_bits() {
    let (_dir, mut server, uri) = resnet_workspace("tokens");
    // The legend of `initialize`; modifiers: 1 declaration, 2 default library, 4 documentation.
    let legend = [
        "keyword",
        "function",
        "method",
        "class",
        "event",
        "variable",
        "parameter",
        "property",
        "enumMember",
        "type",
        "number",
        "string",
        "comment",
        "operator",
        "namespace",
    ];
    let result = server.call("textDocument/semanticTokens/full", json!({ "textDocument": { "uri": uri } }));
    let data: Vec<u64> = result["data"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    let (mut line, mut col) = (0u64, 0u64);
    let mut decoded: Vec<(&str, &str, u64)> = Vec::new();
    for chunk in data.chunks(5) {
        if chunk[0] > 0 {
            line += chunk[0];
            col = chunk[1];
        } else {
            col += chunk[1];
        }
        let a = offset_of(RESNET, line, col);
        let b = offset_of(RESNET, line, col + chunk[2]);
        decoded.push((&RESNET[a..b], legend[chunk[3] as usize], chunk[4]));
    }
    let class_of = |word: &str| decoded.iter().find(|(w, _, _)| *w == word).map(|(_, c, m)| (*c, *m));
    let words = ["model", "resnet18", "conv2d", "## ResNet-18 for ImageNet-sized inputs."];
    let expected = [("keyword", 0), ("class", 1), ("function", 2), ("comment", 4)];
    assert_eq!(words.map(class_of), expected.map(Some));
    server.shutdown();
}

#[test]
fn folding_ranges_answer_lines_and_kinds() {
    let text = "# one\n# two\nblock b(x) {\n    return x\n}\n";
    let (_dir, mut server, uri) = one_file("folding", text);
    let folds = server.call("textDocument/foldingRange", json!({ "textDocument": { "uri": uri } }));
    let first = &folds[0];
    assert_eq!((&first["startLine"], &first["endLine"], &first["kind"]), (&json!(0), &json!(1), &json!("comment")));
    server.shutdown();
}

#[test]
fn code_actions_offer_the_fixes_of_the_diagnostics_in_the_range() {
    let dir = TempDir::new("fixes");
    let text = NEEDS_NO_GRAD;
    dir.write("m.net", text);
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("m.net");
    server.open(&uri, text);
    let diagnostics = server.diagnostics(&uri, 1);
    assert!(diagnostics.iter().any(|d| d["code"] == "L0003"), "{diagnostics:?}");
    let actions = server.call(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": uri },
            "range": { "start": pos(4, 0), "end": pos(4, 10) },
            "context": { "diagnostics": [] }
        }),
    );
    let fix = actions
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["title"] == "add `no_grad`")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    assert_eq!(fix["kind"], "quickfix");
    let edits = fix["edit"]["changes"][uri.as_str()].as_array().expect("edits of this file");
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["newText"], "  no_grad");
    // Inserted after the last setting, `eval`.
    let after_eval = "infer serve { model m()  batch 256  eval".len() as u32;
    assert_eq!(edits[0]["range"]["start"], pos(4, after_eval));
    // Outside the diagnostic's range there is nothing to offer.
    let none = server.call(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": pos(1, 0), "end": pos(1, 4) }, "context": { "diagnostics": [] } }),
    );
    assert!(none.is_null() || none.as_array().is_some_and(|a| a.is_empty()), "{none}");
    server.shutdown();
}

#[test]
fn formatting_answers_one_edit_none_or_an_error() {
    let dir = TempDir::new("formatting");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("main.net");
    let ugly = "block b( x ){\nreturn relu(x) # done\n}\n";
    server.open(&uri, ugly);
    let params = json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } });
    let edits = server.call("textDocument/formatting", params.clone());
    assert_eq!(edits.as_array().unwrap().len(), 1);
    assert_eq!(edits[0]["newText"], "block b(x) {\n    return relu(x)  # done\n}\n");
    assert_eq!(edits[0]["range"], json!({ "start": pos(0, 0), "end": pos(3, 0) }));
    // Formatted text: no edits. Broken text: an error, and the text is left alone.
    server.change(&uri, 2, json!([{ "text": "block b(x) {\n    return relu(x)  # done\n}\n" }]));
    assert_eq!(server.call("textDocument/formatting", params.clone()), json!([]));
    server.change(&uri, 3, json!([{ "text": "block b(x) {\n    return relu(x\n}\n" }]));
    let broken = server.request("textDocument/formatting", params);
    assert!(broken["error"]["message"].as_str().unwrap().contains("syntax error"), "{broken}");
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Robustness

#[test]
fn bad_messages_and_positions_do_not_stop_the_server() {
    let dir = TempDir::new("robust");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    // Malformed JSON: a parse error answer.
    server.send_raw(b"Content-Length: 9\r\n\r\n{\"oops\": ");
    let error = server.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
    assert_eq!(error["error"]["code"], -32700, "{error}");
    // Valid JSON that is not a message, a request without params.
    server.send_raw(b"Content-Length: 5\r\n\r\n[1,2]");
    let _ = server.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
    let r = server.request("textDocument/hover", Value::Null);
    assert!(r.get("error").is_some(), "{r}");
    // Unknown methods.
    let unknown = server.request("netc/nothing", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    server.notify("netc/nothingEither", json!({}));
    // A document nobody opened, which is not on disk.
    let ghost = dir.uri("ghost.net");
    assert!(server.call("textDocument/hover", doc_pos(&ghost, 0, 0)).is_null());
    assert!(
        server
            .call("textDocument/inlayHint", json!({ "textDocument": { "uri": ghost }, "range": whole("") }))
            .is_null()
    );
    server.change(&ghost, 2, json!([{ "text": "x" }]));
    // Positions out of range and inside a surrogate pair; a document full of errors.
    let uri = dir.uri("broken.net");
    let text =
        "# 😀\nblock b(x {\n    y = relu(x\n    return y +\n}\ninfer s { model b()  batch -1  device t5 }\nmodel \n";
    server.open(&uri, text);
    let d = server.diagnostics(&uri, 1);
    assert!(!d.is_empty());
    let positions = [pos(0, 3), pos(1, 9999), pos(9999, 0), pos(9999, 9999), pos(2, 8), pos(6, 6)];
    for p in &positions {
        let at = json!({ "textDocument": { "uri": uri }, "position": p });
        for method in
            ["textDocument/hover", "textDocument/completion", "textDocument/signatureHelp", "textDocument/definition"]
        {
            let r = server.request(method, at.clone());
            assert!(r.get("error").is_none(), "{method} at {p}: {r}");
        }
        let refs = json!({ "textDocument": { "uri": uri }, "position": p, "context": { "includeDeclaration": true } });
        assert!(server.request("textDocument/references", refs).get("error").is_none());
    }
    let doc = json!({ "textDocument": { "uri": uri } });
    for method in [
        "textDocument/codeLens",
        "textDocument/documentSymbol",
        "textDocument/semanticTokens/full",
        "textDocument/foldingRange",
    ] {
        let r = server.request(method, doc.clone());
        assert!(r.get("error").is_none(), "{method}: {r}");
    }
    let huge_range = json!({ "textDocument": { "uri": uri }, "range": { "start": pos(9999, 0), "end": pos(0, 0) } });
    assert!(server.request("textDocument/inlayHint", huge_range).get("error").is_none());
    // Edits with ranges out of range or reversed.
    server.change(&uri, 2, json!([{ "range": { "start": pos(9999, 5), "end": pos(0, 1) }, "text": "\u{1F600}" }]));
    server.change(&uri, 3, json!([{ "range": { "start": pos(0, 3), "end": pos(0, 3) }, "text": "x" }]));
    let _ = server.diagnostics(&uri, 3);
    // Still serving.
    assert!(server.call("textDocument/documentSymbol", doc).is_array());
    server.shutdown();
}

/// Bytes that are no frame before a message (stray output, headers with bare line feeds) are
/// answered with a parse error and the message is read: a `didChange` after them used to be
/// swallowed with them, and the document went out of sync without a word.
#[test]
fn stray_bytes_do_not_swallow_the_next_message() {
    let (_dir, mut server, uri) = one_file("stray", "block b(x) {\n    return x\n}\n");
    let change = |version: i64, text: &str| {
        let params =
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] });
        frame(&json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": params }))
    };
    let junk: [&[u8]; 4] = [b"junk", b"junk\r\n", b"Content-Length: 5\r\nContent-Length: x\r\n\r\n", b"\r\n"];
    for (i, junk) in junk.iter().enumerate() {
        let version = 2 + i as i64;
        let mut bytes = junk.to_vec();
        bytes.extend(change(version, &format!("block b(x) {{\n    return undefined_{i}\n}}\n")));
        server.send_raw(&bytes);
        let error = server.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
        assert_eq!(error["error"]["code"], -32700, "{error}");
        let d = server.diagnostics(&uri, version);
        assert!(d.len() == 1 && d[0]["message"].as_str().unwrap().contains(&format!("undefined_{i}")), "{d:?}");
    }
    // Headers that end with a bare `\n` are read as headers.
    let body = change(9, "block b(x) {\n    return x\n}\n");
    let body = &body[body.iter().position(|&b| b == b'{').unwrap()..];
    let mut bytes = format!("Content-Length: {}\n\n", body.len()).into_bytes();
    bytes.extend(body);
    server.send_raw(&bytes);
    assert!(server.diagnostics(&uri, 9).is_empty());
    server.shutdown();
}

/// The protocol's exit codes: 0 for `exit` after `shutdown` ([`Server::shutdown`] checks it
/// in every test), 1 for an `exit` without it.
#[test]
fn exit_without_shutdown_exits_with_1() {
    let (_dir, mut server, _uri) = one_file("exit", "block b(x) {\n    return x\n}\n");
    assert_eq!(server.exit(), 1);
}

#[test]
fn a_five_megabyte_file_is_served() {
    let dir = TempDir::new("large");
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("large.net");
    let mut text = String::from("model big() {\n    input x: f32[N, 64]\n    y = x\n");
    let padding = "# ".to_string() + &"padding ".repeat(12);
    let mut lines = 0;
    while text.len() < 5_000_000 {
        // Mostly comments: `netc report`'s per-line figures cost time per statement line.
        if lines % 100 == 0 {
            text.push_str("    y = relu(y)\n");
        } else {
            text.push_str(&padding);
            text.push('\n');
        }
        lines += 1;
    }
    text.push_str("    return y\n}\ninfer s { model big()  batch 2 }\n");
    let started = Instant::now();
    server.open(&uri, &text);
    let d = server.diagnostics(&uri, 1);
    assert!(d.is_empty(), "{:?}", &d[..d.len().min(3)]);
    let last_line = text.matches('\n').count() as u32 - 2;
    let hints = server.call(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": uri }, "range": { "start": pos(last_line - 20, 0), "end": pos(last_line, 0) } }),
    );
    assert!(!hints.as_array().unwrap().is_empty(), "{hints}");
    server.change(&uri, 2, json!([{ "range": { "start": pos(2, 4), "end": pos(2, 5) }, "text": "z" }]));
    let d = server.diagnostics(&uri, 2);
    assert!(!d.is_empty());
    assert!(server.call("textDocument/hover", doc_pos(&uri, 3, 9)).is_object());
    eprintln!("5 MB file: {:?} for open, diagnostics, hints, an edit and a hover", started.elapsed());
    server.shutdown();
}

// ---------------------------------------------------------------------------------------
// Stress: random edits, requests in between, final state equal to a fresh analysis

/// A small deterministic random generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The LSP position of a byte offset of `text`.
fn position_of(text: &str, offset: usize) -> Value {
    let line = text[..offset].matches('\n').count();
    let start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    pos(line as u32, text[start..offset].encode_utf16().count() as u32)
}

/// The answers that describe a document completely enough to compare two servers.
fn answers(server: &mut Server, uri: &str, text: &str) -> Vec<Value> {
    let doc = json!({ "textDocument": { "uri": uri } });
    let mut out = Vec::new();
    for method in [
        "textDocument/semanticTokens/full",
        "textDocument/documentSymbol",
        "textDocument/foldingRange",
        "textDocument/codeLens",
    ] {
        out.push(server.call(method, doc.clone()));
    }
    out.push(server.call("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": whole(text) })));
    let middle = text.len() / 2;
    let middle = (0..=middle).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let at = json!({ "textDocument": { "uri": uri }, "position": position_of(text, middle) });
    out.push(server.call("textDocument/hover", at.clone()));
    out.push(server.call("textDocument/completion", at));
    out
}

fn stress(edits: usize, seed: u64) {
    let dir = TempDir::new("stress");
    dir.write("blocks.net", BLOCKS);
    let mut server = Server::start(Some(&dir.0), Value::Null);
    let uri = dir.uri("resnet18.net");
    let mut text = format!("# Ünïcödé 😀 in a comment\n{RESNET}");
    server.open(&uri, &text);
    let _ = server.diagnostics(&uri, 1);
    const PIECES: &[&str] = &[
        "",
        " ",
        "\n",
        "y",
        "x",
        "relu(",
        ")",
        "(",
        "conv2d(x, 8, k=3)",
        "é",
        "😀",
        "# c\n",
        "{",
        "}",
        "=",
        ",",
        "64",
        "model",
        "batch 2",
        "\"s\"",
        "basic(y, 64)",
        "\n    y = relu(y)",
        "infer t { model resnet18()  batch 4 }\n",
        "#",
        "return",
        "    ",
        "[",
        "]",
        "-",
        "1e3",
        "GiB",
    ];
    let mut rng = Rng(seed);
    let mut pending = Vec::new();
    let mut version = 1;
    for i in 0..edits {
        let boundaries: Vec<usize> = (0..=text.len()).filter(|&b| text.is_char_boundary(b)).collect();
        let a = boundaries[rng.below(boundaries.len())];
        let b = boundaries.iter().copied().filter(|&b| b >= a).take(1 + rng.below(12)).last().unwrap_or(a);
        let piece = PIECES[rng.below(PIECES.len())];
        let range = json!({ "start": position_of(&text, a), "end": position_of(&text, b) });
        version += 1;
        server.change(&uri, version, json!([{ "range": range, "text": piece }]));
        text.replace_range(a..b, piece);
        if i % 5 == 0 {
            let offset = boundaries[rng.below(boundaries.len())].min(text.len());
            let offset = (0..=offset).rev().find(|&o| text.is_char_boundary(o)).unwrap_or(0);
            let at = json!({ "textDocument": { "uri": uri }, "position": position_of(&text, offset) });
            let method = [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/inlayHint",
                "textDocument/semanticTokens/full",
                "textDocument/codeLens",
            ][rng.below(5)];
            let params = if method == "textDocument/hover" || method == "textDocument/completion" {
                at
            } else if method == "textDocument/inlayHint" {
                json!({ "textDocument": { "uri": uri }, "range": whole(&text) })
            } else {
                json!({ "textDocument": { "uri": uri } })
            };
            pending.push(server.send_request(method, params));
        }
        // Text replaced whole now and then.
        if i % 500 == 499 {
            version += 1;
            server.change(&uri, version, json!([{ "text": text.clone() }]));
        }
    }
    // Every request was answered, with a result or as stale.
    let mut stale = 0;
    for id in pending {
        let response = server.response(id);
        if let Some(error) = response.get("error") {
            assert_eq!(error["code"], -32801, "{response}");
            stale += 1;
        }
    }
    let final_diagnostics = server.diagnostics(&uri, version);
    let after = answers(&mut server, &uri, &text);
    server.shutdown();
    // A fresh server that only sees the final text.
    let mut fresh = Server::start(Some(&dir.0), Value::Null);
    fresh.open(&uri, &text);
    let fresh_diagnostics = fresh.diagnostics(&uri, 1);
    let expected = answers(&mut fresh, &uri, &text);
    fresh.shutdown();
    assert_eq!(final_diagnostics, fresh_diagnostics, "diagnostics differ; final text:\n{text}");
    for (got, want) in after.iter().zip(&expected) {
        assert_eq!(got, want, "answers differ; final text:\n{text}");
    }
    eprintln!("{edits} edits, {stale} stale answers");
}

#[test]
fn stress_random_edits_end_in_the_state_of_a_fresh_analysis() {
    let edits = std::env::var("NETC_LSP_STRESS_EDITS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let started = Instant::now();
    stress(edits, 0x9e37_79b9_7f4a_7c15);
    eprintln!("stress: {:?}", started.elapsed());
}

#[test]
fn the_library_command_line_says_the_server_is_not_built_in() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(["netc", "lsp"].map(std::ffi::OsString::from), &mut out, &mut err, false);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(String::from_utf8_lossy(&err).contains("no language server"));
    // With a server handed in, `netc lsp` runs it.
    let code = netc::cli::run_with(["netc", "lsp"].map(std::ffi::OsString::from), &mut out, &mut err, false, &|| 7);
    assert_eq!(code, 7);
}
