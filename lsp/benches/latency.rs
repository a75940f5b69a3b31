//! Editor latency through the language server: from a one-line `textDocument/didChange` to
//! the answer of `textDocument/inlayHint` for the first 60 lines, over the JSON-RPC protocol
//! of `netc lsp` (in-process, on an in-memory pipe instead of stdio). The `ide` bench of the
//! library measures the same without the protocol. Then the time to answer after the edit
//! that once froze the editor, and the server's resident memory over 10,000 edits (Linux).
//! Prints tables; run with `cargo bench -p netc-lsp --bench latency`.

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
    println!();
    runtime.block_on(measure_rss());
}

/// The process's resident set in MiB, from `/proc/self/status` (`None` off Linux). The
/// server runs in this process; the client's share is a few buffers.
fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.trim_start_matches("VmRSS:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib / 1024.0)
}

/// Resident memory over 10,000 edits of the three bench files, open side by side: each edit
/// of each kind is made and undone in turn, with the hints after every edit and the code
/// lenses after every tenth (what an editor asks while a user types). Memory that an edit
/// leaves behind grows the column; a server that keeps its caches to the current texts
/// stays flat after the first round.
async fn measure_rss() {
    const EDITS_MADE: usize = 10_000;
    let mut client = Client::connect().await;
    let mut files = Vec::new();
    for case in cases() {
        let uri = format!("file:///bench/{}", case.name);
        let document = json!({ "uri": uri, "languageId": "net", "version": 1, "text": case.text });
        client.notify("textDocument/didOpen", json!({ "textDocument": document })).await;
        let command = json!({ "command": netc_lsp::SET_ACTIVE_SCENARIO, "arguments": [uri, case.scenario] });
        client.request("workspace/executeCommand", command).await;
        let edits: Vec<(&str, &str)> = case.edits.iter().flatten().copied().collect();
        files.push((uri, case.text, edits));
    }
    let range = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 60, "character": 0 } });
    let Some(opened) = rss_mib() else {
        println!("resident memory over {EDITS_MADE} edits: not measured (no /proc/self/status)");
        return;
    };
    println!("Resident memory over {EDITS_MADE} edits of the three files (each edit made, then undone):");
    println!();
    println!("| edits | RSS (MiB) |");
    println!("|---:|---:|");
    println!("| 0 | {opened:.0} |");
    let started = Instant::now();
    let mut version = 1;
    for made in 1..=EDITS_MADE {
        let (uri, text, edits) = &mut files[made % 3];
        // Edit k made on its way out (odd rounds) and undone on its way back.
        let (from, to) = edits[(made / 6) % edits.len()];
        let (old, new) = if (made / 3) % 2 == 0 { (from, to) } else { (to, from) };
        let Some(at) = text.find(old) else { continue };
        let (start, end) = (position_at(text, at), position_at(text, at + old.len()));
        text.replace_range(at..at + old.len(), new);
        version += 1;
        let change = json!({ "range": { "start": start, "end": end }, "text": new });
        let document = json!({ "uri": uri, "version": version });
        client.notify("textDocument/didChange", json!({ "textDocument": document, "contentChanges": [change] })).await;
        let hints = json!({ "textDocument": { "uri": uri }, "range": range });
        client.request("textDocument/inlayHint", hints).await;
        if made % 10 == 0 {
            client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri } })).await;
        }
        if made % 1_000 == 0 {
            println!("| {made} | {:.0} |", rss_mib().unwrap_or(f64::NAN));
        }
    }
    println!();
    println!("({:.1} s in all; release build, mimalloc as in the `netc` binary)", started.elapsed().as_secs_f64());
    client.request("shutdown", Value::Null).await;
    client.notify("exit", Value::Null).await;
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
