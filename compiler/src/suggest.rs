//! "Did you mean ...?" suggestions: the closest candidate by edit distance.

use crate::knobs::{DeviceModel, Optimizer, Precision};
use crate::op::Op;

/// The candidate closest to `word` by edit distance (case-insensitive), if it is close
/// enough to be a plausible typo: at most one edit per three characters, and at least one.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    // PyTorch's spellings of netc's names.
    if let Some((_, target)) = ALIASES.iter().find(|(alias, _)| *alias == word)
        && let Some(found) = candidates.iter().find(|c| *c == target)
    {
        return Some(found);
    }
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(&word, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// Words users bring from PyTorch and the netc names they mean (ops and knobs named from
/// their tables, so that a renamed op or value cannot leave a stale alias).
const ALIASES: &[(&str, &str)] = &[
    ("padding", "pad"),
    ("kernel_size", "k"),
    ("kernel", "k"),
    ("num_classes", "classes"),
    ("in_features", "out_features"),
    ("bfloat16", Precision::Bf16.name()),
    ("float16", Precision::Fp16.name()),
    ("half", Precision::Fp16.name()),
    ("float32", Precision::Fp32.name()),
    ("mixed", Precision::Amp.name()),
    ("a100", DeviceModel::A100_40gb.name()),
    ("h100", DeviceModel::H100_80gb.name()),
    ("v100", DeviceModel::V100_16gb.name()),
    ("Conv2d", Op::Conv2d.name()),
    ("Linear", Op::Linear.name()),
    ("BatchNorm2d", Op::BatchNorm.name()),
    ("batchnorm2d", Op::BatchNorm.name()),
    ("MaxPool2d", Op::MaxPool2d.name()),
    ("LayerNorm", Op::LayerNorm.name()),
    ("ReLU", Op::Relu.name()),
    ("cat", Op::Concat.name()),
    ("view", Op::Reshape.name()),
    ("SGD", Optimizer::Sgd.name()),
    ("Adam", Optimizer::Adam.name()),
    ("AdamW", Optimizer::AdamW.name()),
];

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
        assert_eq!(closest("padding", ["pad", "stride"]), Some("pad"));
        assert_eq!(closest("bfloat16", ["fp32", "bf16"]), Some("bf16"));
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("bacth", "batch"), 1);
    }
}
