//! Editor latency through the language server: from a one-line `textDocument/didChange` to
//! the answer of `textDocument/inlayHint` for the first 60 lines, over the JSON-RPC protocol
//! of `netc lsp` (in-process, on an in-memory pipe instead of stdio). The `ide` bench of the
//! library measures the same without the protocol. Prints a table; run with
//! `cargo bench -p netc-lsp --bench latency`.

#[path = "../../compiler/benches/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Case, EDITS, cases};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// The allocator of the `netc` binary (cli/src/main.rs), so that the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A JSON-RPC client on the server's pipe.
struct Client {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
    next_id: u64,
}

impl Client {
    /// Starts a server on an in-memory pipe and initializes it.
    async fn connect() -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        tokio::spawn(netc_lsp::serve(server_read, server_write));
        let (read, write) = tokio::io::split(client_side);
        let mut client = Client { read: BufReader::new(read), write, next_id: 0 };
        client.request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": {} })).await;
        client.notify("initialized", json!({})).await;
        client
    }

    async fn send(&mut self, message: Value) {
        let frame = netc_lsp::input::frame(message.to_string().as_bytes());
        self.write.write_all(&frame).await.expect("the server reads");
    }

    async fn receive(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.read.read_line(&mut line).await.expect("the server writes");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        self.read.read_exact(&mut body).await.expect("a whole message");
        serde_json::from_slice(&body).expect("JSON")
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params })).await;
    }

    /// Sends a request and waits for its answer; the server's notifications are skipped and
    /// its requests answered with `null`.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        loop {
            let message = self.receive().await;
            match (message.get("id"), message.get("method")) {
                (Some(answered), None) if answered == &json!(id) => return message,
                (Some(request), Some(_)) => {
                    let request = request.clone();
                    self.send(json!({ "jsonrpc": "2.0", "id": request, "result": null })).await;
                }
                _ => {}
            }
        }
    }
}

/// The LSP position of byte `offset` of `text` (ASCII columns: the bench files are ASCII).
fn position_at(text: &str, offset: usize) -> Value {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = offset - before.rfind('\n').map_or(0, |p| p + 1);
    json!({ "line": line, "character": column })
}

/// The edits of [`support::cases`] measured here: those that keep the text's length.
const MEASURED: [usize; 3] = [0, 3, 4];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().expect("tokio");
    print!("{:<14} {:>6} {:>11}", "file", "lines", "open->hints");
    for name in MEASURED.map(|i| EDITS[i]) {
        print!(" {name:>14}");
    }
    println!();
    for case in cases() {
        runtime.block_on(measure(case));
    }
    println!(
        "\nOver JSON-RPC on an in-memory pipe, release build: open -> hints is didOpen, then the hints\n\
         of the first 60 lines; each edit is a didChange of one line (undone on every other run),\n\
         then the same request, timed until its answer. The edits are those of the `ide` bench (an\n\
         edit keeps its length, so positions stay). Best of 10."
    );
    println!();
    runtime.block_on(measure_typo());
}

/// The edit that froze the editor: `000` typed after GPT-2 XL's layer count (48 layers become
/// 48,000) while the code lenses of that scenario are being computed, then undone. Timed: from
/// the undo to the answer of the next hints request, which must not wait for the huge
/// model's elaboration or simulation (they are cancelled).
async fn measure_typo() {
    let (_, zoo) = netc::db::STDLIB_SOURCES.iter().find(|(m, _)| *m == "std.models.gpt2").expect("GPT-2's zoo file");
    let at = zoo.find("1600, 48, 25").expect("GPT-2 XL's layer count") + "1600, 48".len();
    let typed = position_at(zoo, at);
    let mut client = Client::connect().await;
    let uri = "file:///bench/gpt2.net";
    let document = json!({ "uri": uri, "languageId": "net", "version": 1, "text": zoo });
    client.notify("textDocument/didOpen", json!({ "textDocument": document })).await;
    let command = json!({ "command": netc_lsp::SET_ACTIVE_SCENARIO, "arguments": [uri, "gpt2_xl_train"] });
    client.request("workspace/executeCommand", command).await;
    let range = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 60, "character": 0 } });
    let hints = json!({ "textDocument": { "uri": uri }, "range": range });
    client.request("textDocument/inlayHint", hints.clone()).await;
    let mut best = Duration::MAX;
    let mut version = 1;
    for _ in 0..3 {
        let typo = json!({ "range": { "start": typed, "end": typed }, "text": "000" });
        version += 1;
        let change = json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [typo] });
        client.notify("textDocument/didChange", change).await;
        // The code lenses of the huge model: not waited for (their answer is skipped).
        client.next_id += 1;
        let lenses = json!({ "textDocument": { "uri": uri } });
        client
            .send(
                json!({ "jsonrpc": "2.0", "id": client.next_id, "method": "textDocument/codeLens", "params": lenses }),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut end = typed.clone();
        end["character"] = json!(typed["character"].as_u64().expect("a column") + 3);
        let undo = json!({ "range": { "start": typed, "end": end }, "text": "" });
        version += 1;
        let started = Instant::now();
        let change = json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [undo] });
        client.notify("textDocument/didChange", change).await;
        let answer = client.request("textDocument/inlayHint", hints.clone()).await;
        best = best.min(started.elapsed());
        assert!(answer.get("result").is_some(), "gpt2.net: {answer}");
    }
    println!(
        "gpt2.net, `000` typed after GPT-2 XL's 48 layers while its code lenses compute, then undone:\n\
         {:.2}ms from the undo to the hints (best of 3)",
        ms(best)
    );
    client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
}

async fn measure(case: Case) {
    let mut client = Client::connect().await;
    let uri = format!("file:///bench/{}", case.name);
    let start = Instant::now();
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "net", "version": 1, "text": case.text } }),
        )
        .await;
    client
        .request(
            "workspace/executeCommand",
            json!({ "command": netc_lsp::SET_ACTIVE_SCENARIO, "arguments": [uri, case.scenario] }),
        )
        .await;
    let range = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 60, "character": 0 } });
    let hints = json!({ "textDocument": { "uri": uri }, "range": range });
    let answer = client.request("textDocument/inlayHint", hints.clone()).await;
    let open = start.elapsed();
    let count = answer["result"].as_array().map_or(0, Vec::len);
    assert!(count > 0, "{}: no hints: {answer}", case.name);
    print!("{:<14} {:>6} {:>9.2}ms", case.name, case.text.lines().count(), ms(open));
    let mut version = 1;
    for (from, to) in MEASURED.iter().filter_map(|&i| case.edits[i]) {
        assert_eq!(from.len(), to.len(), "{from:?}: an edit keeps its length");
        let at = case.text.find(from).expect("the edited text");
        let (start, end) = (position_at(&case.text, at), position_at(&case.text, at + from.len()));
        let mut best = Duration::MAX;
        for run in 0..10 {
            version += 1;
            let text = if run % 2 == 0 { to } else { from };
            client
                .notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": { "uri": uri, "version": version },
                        "contentChanges": [{ "range": { "start": start, "end": end }, "text": text }],
                    }),
                )
                .await;
            let started = Instant::now();
            let answer = client.request("textDocument/inlayHint", hints.clone()).await;
            best = best.min(started.elapsed());
            assert!(answer.get("result").is_some(), "{}: {answer}", case.name);
        }
        print!(" {:>12.2}ms", ms(best));
    }
    println!();
    client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
