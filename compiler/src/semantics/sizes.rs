//! Sizes with units: `12 GiB`, `512 MiB`, `1.5 GB`. Decimal (KB, MB, GB, TB: powers of 1000)
//! and binary (KiB, MiB, GiB, TiB: powers of 1024) units are different, as in the SI/IEC
//! standards: `1 MB` is 1,000,000 bytes and `1 MiB` is 1,048,576.

/// Every unit and its size in bytes.
pub const UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// Why a size is invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeError {
    /// The unit is not one of [`UNITS`]; the closest unit, if one is close.
    UnknownUnit(Option<&'static str>),
    /// More bytes than fit in 64 bits.
    TooLarge,
    /// Negative, or not a whole number of bytes.
    NotWholeBytes,
}

/// The number of bytes in one `unit` (units are case-sensitive: `mb` is not a unit).
pub fn unit_bytes(unit: &str) -> Option<u64> {
    UNITS.iter().find(|(u, _)| *u == unit).map(|(_, b)| *b)
}

/// The bytes of `value` `unit`: exact for integers, rounded to the nearest byte otherwise.
pub fn size_bytes(value: f64, integer: bool, unit: &str) -> Result<u64, SizeError> {
    let Some(per_unit) = unit_bytes(unit) else {
        return Err(SizeError::UnknownUnit(crate::suggest::closest(unit, UNITS.iter().map(|(u, _)| *u))));
    };
    if value < 0.0 || !value.is_finite() {
        return Err(SizeError::NotWholeBytes);
    }
    if integer && value < 2f64.powi(63) {
        return (value as u64).checked_mul(per_unit).ok_or(SizeError::TooLarge);
    }
    let bytes = (value * per_unit as f64).round();
    if bytes >= 2f64.powi(64) {
        return Err(SizeError::TooLarge);
    }
    if unit == "B" && value.fract() != 0.0 {
        return Err(SizeError::NotWholeBytes);
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_binary_units_differ() {
        assert_eq!(size_bytes(1.0, true, "MB"), Ok(1_000_000));
        assert_eq!(size_bytes(1.0, true, "MiB"), Ok(1_048_576));
        assert_eq!(size_bytes(12.0, true, "GiB"), Ok(12 * 1024 * 1024 * 1024));
        assert_eq!(size_bytes(1.5, false, "GB"), Ok(1_500_000_000));
        assert_eq!(size_bytes(0.5, false, "KiB"), Ok(512));
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert_eq!(size_bytes(1.0, true, "Gib"), Err(SizeError::UnknownUnit(Some("GiB"))));
        assert_eq!(size_bytes(1.0, true, "parsecs"), Err(SizeError::UnknownUnit(None)));
        assert_eq!(size_bytes(20_000_000.0, true, "TiB"), Err(SizeError::TooLarge));
        assert_eq!(size_bytes(1.5, false, "B"), Err(SizeError::NotWholeBytes));
    }
}
