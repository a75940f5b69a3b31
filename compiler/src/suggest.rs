//! "Did you mean ...?" suggestions: the closest candidate by edit distance.

/// The candidate closest to `word` by edit distance (case-insensitive), if it is close
/// enough to be a plausible typo: at most one edit per three characters, and at least one.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(&word, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// The edit distance between two strings in characters, counting insertions, deletions,
/// substitutions and swaps of adjacent characters (`bacth` is one edit from `batch`).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j] (optimal string alignment).
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words_only() {
        assert_eq!(closest("bacth", ["batch", "budget"]), Some("batch"));
        assert_eq!(closest("Gib", ["GiB", "MiB", "GB"]), Some("GiB"));
        assert_eq!(closest("xyz", ["batch", "budget"]), None);
        assert_eq!(closest("adma", ["adam", "adamw"]), Some("adam"));
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("bacth", "batch"), 1);
    }
}
