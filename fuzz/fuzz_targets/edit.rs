//! The input of the edit targets (`reparse`, `reelaborate`): an old text and a new one.
//! With a 0xFF byte, the text before it is the old text and the text after it the new one;
//! without, the new text is the old one with a span replaced by a copy of another span (a
//! cut-and-paste, placed by a hash of the input), or, for one input in four, with one of its
//! numbers changed (in a scenario, a batch-size edit).

/// `old` with a span replaced by a copy of another span, both chosen by `seed`.
fn paste(old: &[u8], seed: u64) -> Vec<u8> {
    let len = old.len() as u64 + 1;
    let at = (seed % len) as usize;
    let remove = ((seed >> 16) % 64).min(len - 1 - at as u64) as usize;
    let from = ((seed >> 24) % len) as usize;
    let take = ((seed >> 40) % 48) as usize;
    let copied = &old[from..(from + take).min(old.len())];
    [&old[..at], copied, &old[at + remove..]].concat()
}

/// `old` with one of its numbers (a run of digits), chosen by `seed`, replaced by another:
/// in a scenario, an edit of its sizes only (a batch, a `dim`); `None` without a number.
fn renumber(old: &[u8], seed: u64) -> Option<Vec<u8>> {
    let runs = digit_runs(old);
    let (start, end) = *runs.get((seed % runs.len().max(1) as u64) as usize)?;
    let number = ((seed >> 16) % 64 + 1).to_string();
    Some([&old[..start], number.as_bytes(), &old[end..]].concat())
}

/// The old and the new text of an input (lossily decoded as UTF-8).
pub fn old_and_new(data: &[u8]) -> (String, String) {
    let (old, new) = match data.iter().position(|&b| b == 0xFF) {
        Some(split) => (data[..split].to_vec(), data[split + 1..].to_vec()),
        None => {
            // FNV-1a: any change to the input moves the edit.
            let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            // One input in four changes a number instead of pasting.
            let new = if seed >> 62 == 0 { renumber(data, seed >> 2) } else { None };
            (data.to_vec(), new.unwrap_or_else(|| paste(data, seed)))
        }
    };
    (String::from_utf8_lossy(&old).into_owned(), String::from_utf8_lossy(&new).into_owned())
}

/// The byte ranges of the runs of digits of `text` (its numbers), in order.
pub fn digit_runs(text: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if text[at].is_ascii_digit() {
            let start = at;
            while at < text.len() && text[at].is_ascii_digit() {
                at += 1;
            }
            runs.push((start, at));
        } else {
            at += 1;
        }
    }
    runs
}
