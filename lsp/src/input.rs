//! A guard in front of the protocol library: every frame the client sends is checked, and a
//! frame that is not a JSON-RPC message is replaced by a request the server answers with the
//! right error (`-32700` parse error, `-32600` invalid request).
//!
//! Why: the protocol library (tower-lsp-server, over tokio-util's framed reader) answers a
//! malformed message and then stops reading, so one bad frame would end the session. Here
//! it only gets well-formed messages.

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

/// What to pass on for one frame's body.
fn check(body: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) if is_message(&value) => frame(body),
        Ok(value) => {
            let id = value.get("id").filter(|id| id.is_string() || id.as_i64().is_some()).cloned();
            replacement(-32600, id.unwrap_or(Value::Null))
        }
        Err(_) => replacement(-32700, Value::Null),
    }
}

/// The length announced by a header block, if it has a valid one.
fn content_length(headers: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(headers).ok()?;
    let mut length = None;
    for line in text.split("\r\n") {
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    length.filter(|&n| n <= MAX_MESSAGE)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Copies messages from `input` to `output`, replacing the malformed ones, until `input` ends.
pub async fn sanitize<R, W>(mut input: R, mut output: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        // Pass on every complete frame in the buffer.
        loop {
            let Some(end) = find(&buffer, b"\r\n\r\n") else {
                if buffer.len() > 1024 * 1024 {
                    // No header block in a megabyte: garbage; keep from the next header on.
                    let skip = find(&buffer[1..], b"Content-Length").map_or(buffer.len(), |p| p + 1);
                    buffer.drain(..skip);
                    if output.write_all(&replacement(-32700, Value::Null)).await.is_err() {
                        return;
                    }
                    continue;
                }
                break;
            };
            match content_length(&buffer[..end]) {
                Some(length) => {
                    let start = end + 4;
                    if buffer.len() < start + length {
                        break;
                    }
                    let out = check(&buffer[start..start + length]);
                    buffer.drain(..start + length);
                    if output.write_all(&out).await.is_err() {
                        return;
                    }
                }
                None => {
                    // Garbage headers: answer once, then skip to the next header block.
                    let skip = find(&buffer[end + 4..], b"Content-Length").map_or(buffer.len(), |p| end + 4 + p);
                    buffer.drain(..skip);
                    if output.write_all(&replacement(-32700, Value::Null)).await.is_err() {
                        return;
                    }
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
        assert_eq!(check(ok), frame(ok));
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        assert!(text(check(b"{oops")).contains("-32700"));
        assert!(text(check(b"[1,2]")).contains("-32600"));
        assert!(text(check(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#)).contains(r#""id":7"#));
        assert!(text(check(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)).contains("-32600"));
        assert_eq!(content_length(b"Content-Length: 12"), Some(12));
        assert_eq!(content_length(b"Content-Type: x"), None);
    }
}
