//! A guard in front of the protocol library: every frame the client sends is checked, and a
//! frame that is not a JSON-RPC message is replaced by a request the server answers with the
//! right error (`-32700` parse error, `-32600` invalid request).
//!
//! Bytes that are not a frame (stray output, a broken header block) are answered with one
//! parse error and skipped up to the next `Content-Length:` header, so the message after them
//! is not lost. Header lines may end with `\r\n`, as the protocol says, or with a bare `\n`.
//!
//! Why: the protocol library (tower-lsp-server, over tokio-util's framed reader) answers a
//! malformed message and then stops reading, so one bad frame would end the session. Here
//! it only gets well-formed messages.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The method of the replacement requests; the server answers them with an error.
pub const MALFORMED: &str = "netc/malformedMessage";

/// The largest message accepted (a bigger `Content-Length` is treated as garbage).
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// A message as the protocol frames it: a `Content-Length` header, a blank line, the body.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The replacement of a frame that is not a message.
fn replacement(code: i64, id: Value) -> Vec<u8> {
    let request = json!({ "jsonrpc": "2.0", "id": id, "method": MALFORMED, "params": { "code": code } });
    frame(request.to_string().as_bytes())
}

/// Whether `value` is a message the protocol library reads: an object with `"jsonrpc": "2.0"`,
/// a string `method` if any, an integer, string or null `id` if any.
fn is_message(value: &Value) -> bool {
    let Some(object) = value.as_object() else { return false };
    let id_ok = match object.get("id") {
        None | Some(Value::Null | Value::String(_)) => true,
        Some(Value::Number(n)) => n.is_i64(),
        Some(_) => false,
    };
    let method_ok = object.get("method").is_none_or(Value::is_string);
    object.get("jsonrpc") == Some(&json!("2.0")) && id_ok && method_ok
}

/// What to pass on for one frame's body; notes in `shutdown` a `shutdown` request.
fn check(body: &[u8], shutdown: &AtomicBool) -> Vec<u8> {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) if is_message(&value) => {
            if value.get("method") == Some(&json!("shutdown")) && value.get("id").is_some() {
                shutdown.store(true, Ordering::SeqCst);
            }
            frame(body)
        }
        Ok(value) => {
            let id = value.get("id").filter(|id| id.is_string() || id.as_i64().is_some()).cloned();
            replacement(-32600, id.unwrap_or(Value::Null))
        }
        Err(_) => replacement(-32700, Value::Null),
    }
}

/// The longest header block accepted: more without its blank line is garbage.
const MAX_HEADERS: usize = 64 * 1024;

/// The header that frames a message, lowercase (header names are case-insensitive).
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// What the start of the buffer holds.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    /// A header block of `headers` bytes (its blank line included) announcing a body of
    /// `body` bytes.
    Message { headers: usize, body: usize },
    /// The start of a header block: more bytes are needed to tell.
    Incomplete,
    /// Not a header block.
    Garbage,
}

/// Reads the header block at the start of `buffer`. Header lines end with `\r\n` or, as a
/// tolerance, a bare `\n` (some clients and hand-written scripts send those); a blank line
/// ends the block. Every line must be `Name: value`, and `Content-Length` must be there
/// with a valid length; other headers (`Content-Type`) are ignored.
fn head(buffer: &[u8]) -> Head {
    let mut at = 0;
    let mut length = None;
    loop {
        let Some(end) = buffer[at..].iter().position(|&b| b == b'\n').map(|p| at + p) else {
            return if buffer.len() > MAX_HEADERS { Head::Garbage } else { Head::Incomplete };
        };
        let line = &buffer[at..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        at = end + 1;
        if at > MAX_HEADERS {
            return Head::Garbage;
        }
        if line.is_empty() {
            return match length {
                Some(body) => Head::Message { headers: at, body },
                _ => Head::Garbage,
            };
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else { return Head::Garbage };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() || !name.iter().all(u8::is_ascii_graphic) {
            return Head::Garbage;
        }
        if name.eq_ignore_ascii_case(&CONTENT_LENGTH[..CONTENT_LENGTH.len() - 1]) {
            let value = std::str::from_utf8(value).ok().map(str::trim);
            match value.and_then(|v| v.parse::<usize>().ok()).filter(|&n| n <= MAX_MESSAGE) {
                Some(n) => length = Some(n),
                None => return Head::Garbage,
            }
        }
    }
}

/// Where the next `Content-Length:` header begins in `bytes` (any case), if anywhere.
fn next_header(bytes: &[u8]) -> Option<usize> {
    bytes.windows(CONTENT_LENGTH.len()).position(|w| w.eq_ignore_ascii_case(CONTENT_LENGTH))
}

/// Copies messages from `input` to `output`, replacing the malformed ones, until `input` ends;
/// sets `shutdown` when a `shutdown` request passes (the exit code depends on it).
///
/// Bytes that are not a header block (stray output of a client, a header line without its
/// `:`, a block without a valid `Content-Length`) are garbage: the garbage between two
/// messages is answered with one parse error, and reading starts again at the next
/// `Content-Length:` header, so the message after it is read as it was sent (a `didChange` lost there would put the document out of
/// sync without a word).
pub async fn sanitize<R, W>(mut input: R, mut output: W, shutdown: Arc<AtomicBool>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    // Whether garbage came since the last message: a run of it is answered once.
    let mut in_garbage = false;
    loop {
        // Pass on every complete frame in the buffer.
        loop {
            match head(&buffer) {
                Head::Incomplete => break,
                Head::Message { headers, body } => {
                    if buffer.len() < headers + body {
                        break;
                    }
                    let out = check(&buffer[headers..headers + body], &shutdown);
                    buffer.drain(..headers + body);
                    in_garbage = false;
                    if output.write_all(&out).await.is_err() {
                        return;
                    }
                }
                Head::Garbage => {
                    // Up to the next header; without one, all but what may be the start of
                    // one (the rest of it not read yet).
                    let resync = buffer.get(1..).and_then(next_header).map(|p| p + 1);
                    let skip = resync.unwrap_or(buffer.len().saturating_sub(CONTENT_LENGTH.len() - 1));
                    if !in_garbage && output.write_all(&replacement(-32700, Value::Null)).await.is_err() {
                        return;
                    }
                    in_garbage = true;
                    if skip == 0 {
                        break;
                    }
                    buffer.drain(..skip);
                }
            }
        }
        let _ = output.flush().await;
        match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let _ = output.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_pass_and_others_are_replaced() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        let shutdown = AtomicBool::new(false);
        let check = |body: &[u8]| super::check(body, &shutdown);
        assert_eq!(check(ok), frame(ok));
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        assert!(text(check(b"{oops")).contains("-32700"));
        assert!(text(check(b"[1,2]")).contains("-32600"));
        assert!(text(check(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#)).contains(r#""id":7"#));
        assert!(text(check(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)).contains("-32600"));
        // A `shutdown` notification is no `shutdown` request.
        check(br#"{"jsonrpc":"2.0","method":"shutdown"}"#);
        assert!(!shutdown.load(Ordering::SeqCst));
        check(br#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#);
        assert!(shutdown.load(Ordering::SeqCst));
    }

    #[test]
    fn header_blocks() {
        let message = |headers, body| Head::Message { headers, body };
        assert_eq!(head(b"Content-Length: 12\r\n\r\n{}"), message(22, 12));
        assert_eq!(head(b"content-length:12\r\nContent-Type: x\r\n\r\n"), message(38, 12));
        // Bare line feeds, and a mix.
        assert_eq!(head(b"Content-Length: 12\n\n"), message(20, 12));
        assert_eq!(head(b"Content-Length: 12\r\n\n"), message(21, 12));
        // Not yet complete.
        for partial in [&b""[..], b"Content-Len", b"Content-Length: 12\r\n", b"Content-Length: 12\r\n\r"] {
            assert_eq!(head(partial), Head::Incomplete, "{:?}", String::from_utf8_lossy(partial));
        }
        // Garbage: no `:`, no length, a bad length, stray bytes before the header, a blank
        // line alone, a header block that never ends.
        for garbage in [
            &b"oops\r\n"[..],
            b"Content-Type: x\r\n\r\n",
            b"Content-Length: twelve\r\n",
            b"Content-Length: 99999999999999\r\n",
            b"junkContent-Length: 2\r\n\r\n{}",
            b"\r\n",
            b"\n",
            b"a b: c\n",
        ] {
            assert_eq!(head(garbage), Head::Garbage, "{:?}", String::from_utf8_lossy(garbage));
        }
        assert_eq!(head(&vec![b'x'; MAX_HEADERS + 1]), Head::Garbage);
        assert_eq!(next_header(b"junkCONTENT-LENGTH: 2"), Some(4));
    }

    /// The body of a frame.
    fn body_of(frame: &[u8]) -> Vec<u8> {
        let Head::Message { headers, body } = head(frame) else { panic!("{:?}", String::from_utf8_lossy(frame)) };
        frame[headers..headers + body].to_vec()
    }

    /// The bodies `sanitize` passes on for `input`, written in one piece, then in small pieces
    /// (byte by byte if it is short): the same.
    fn sanitized(input: &[u8]) -> Vec<String> {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let run = |pieces: Vec<Vec<u8>>| {
            runtime.block_on(async {
                let (mut client, server) = tokio::io::duplex(1 << 20);
                let (out, mut read) = tokio::io::duplex(1 << 20);
                let task = tokio::spawn(sanitize(server, out, Arc::default()));
                for piece in pieces {
                    client.write_all(&piece).await.unwrap();
                    tokio::task::yield_now().await;
                }
                drop(client);
                task.await.unwrap();
                let mut all = Vec::new();
                read.read_to_end(&mut all).await.unwrap();
                all
            })
        };
        let whole = run(vec![input.to_vec()]);
        let piece = if input.len() < 1000 { 1 } else { 4096 };
        let bytes = run(input.chunks(piece).map(<[u8]>::to_vec).collect());
        assert_eq!(String::from_utf8_lossy(&whole), String::from_utf8_lossy(&bytes), "piece by piece");
        // Split into frames (the output is well framed).
        let mut bodies = Vec::new();
        let mut rest = &whole[..];
        while !rest.is_empty() {
            let body = body_of(rest);
            rest = &rest[frame(&body).len()..];
            bodies.push(String::from_utf8(body).unwrap());
        }
        bodies
    }

    #[test]
    fn garbage_is_answered_once_and_the_next_message_read() {
        let change = br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{}}"#;
        let text = |body: &[u8]| String::from_utf8(body.to_vec()).unwrap();
        let expected = [text(&body_of(&replacement(-32700, Value::Null))), text(change)];
        for junk in [
            &b"junk"[..],
            b"junk\r\n",
            b"junk\r\n\r\n",
            b"\r\n",
            b"Content-Length: x\r\n\r\n",
            b"Content-Length: 5\r\nContent-Length: x\r\n\r\n",
            b"{}",
        ] {
            let mut input = junk.to_vec();
            input.extend(frame(change));
            assert_eq!(sanitized(&input), expected, "after {:?}", String::from_utf8_lossy(junk));
        }
        // Headers with bare line feeds are messages.
        let mut input = format!("Content-Length: {}\n\n", change.len()).into_bytes();
        input.extend(change);
        assert_eq!(sanitized(&input), [text(change)]);
        // A long run of garbage is answered once.
        let mut input = vec![b'x'; 3 * MAX_HEADERS];
        input.extend(frame(change));
        assert_eq!(sanitized(&input), expected);
    }
}
