//! Numbers for people: thousands separators, bytes with binary units, counts with decimal
//! suffixes. Shared by reports and lint messages.

/// `1234567` as `1,234,567`.
pub fn thousands(v: i128) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 { format!("-{out}") } else { out }
}

/// Bytes with a binary unit: `12.3 MiB`.
pub fn bytes(v: i128) -> String {
    bytes_with(v, 1)
}

/// Bytes with a binary unit and `decimals` decimals (exact bytes below 1 KiB).
pub fn bytes_with(v: i128, decimals: usize) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = v as f64;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{v} B") } else { format!("{value:.decimals$} {}", UNITS[unit]) }
}

/// A count with a decimal suffix: `1.94 G`.
pub fn count(v: i128) -> String {
    const UNITS: [&str; 6] = ["", " K", " M", " G", " T", " P"];
    let mut value = v as f64;
    let mut unit = 0;
    while value.abs() >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 { v.to_string() } else { format!("{value:.2}{}", UNITS[unit]) }
}
