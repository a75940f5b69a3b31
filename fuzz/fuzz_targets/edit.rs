//! The input of the edit targets (`reparse`, `reelaborate`): an old text and a new one.
//! With a 0xFF byte, the text before it is the old text and the text after it the new one;
//! without, the new text is the old one with a span replaced by a copy of another span (a
//! cut-and-paste, placed by a hash of the input).

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

/// The old and the new text of an input (lossily decoded as UTF-8).
pub fn old_and_new(data: &[u8]) -> (String, String) {
    let (old, new) = match data.iter().position(|&b| b == 0xFF) {
        Some(split) => (data[..split].to_vec(), data[split + 1..].to_vec()),
        None => {
            // FNV-1a: any change to the input moves the edit.
            let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
            (data.to_vec(), paste(data, seed))
        }
    };
    (String::from_utf8_lossy(&old).into_owned(), String::from_utf8_lossy(&new).into_owned())
}
