//! What the benches share (the `ide`, `shapes` and `scaling` benches here, and `netc-lsp`'s `latency`,
//! which includes this file by path). Each uses a part of it.

#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The best time of `runs` runs of `f`.
pub fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .expect("runs > 0")
}

/// A generated file of `blocks` blocks (each a documented block of five ops with a comment),
/// a model chaining them, and a training scenario: the large file of the `ide` and `shapes`
/// benches (1,250 blocks: 12,507 lines, 6,250 ops).
pub fn generated(blocks: usize) -> String {
    let mut text = String::new();
    for b in 0..blocks {
        text.push_str(&format!(
            "## Block {b}.\nblock b{b}(x, width: int) {{\n    h = relu(linear(x, width))\n    h = layernorm(h)\n    # A comment.\n    y = linear(h, width)\n    return x + y\n}}\n\n"
        ));
    }
    text.push_str("model m() {\n    input x: f32[N, 64]\n    y = x\n");
    for b in 0..blocks {
        text.push_str(&format!("    y = b{b}(y, 64)\n"));
    }
    text.push_str("    return y\n}\n\ntrain fit { model m()  batch 32  optimizer adam }\n");
    text
}

/// A zoo family's source (`std.models.resnet`), as a user's own file would hold it.
pub fn zoo(module: &str) -> String {
    netc::db::STDLIB_SOURCES.iter().find(|(m, _)| *m == module).expect("a zoo module").1.to_string()
}

/// An edit: replace the first `from` with `to` (the benches undo it on every other run).
pub type Edit = Option<(&'static str, &'static str)>;

/// The kinds of edit, in the order of [`Case::edits`]. All but `new line`, `same graph` and
/// `model line` keep the text's length, so the `latency` bench can send them as one-range
/// changes.
pub const EDITS: [&str; 6] = ["comment edit", "new line", "same graph", "statement edit", "figures edit", "model line"];

/// A file the latency benches measure: its name, text, the scenario whose hints are shown,
/// and one edit of each kind (`None` where the file has none).
pub struct Case {
    /// The file's name.
    pub name: &'static str,
    /// Its text.
    pub text: String,
    /// The scenario made active (its figures are the hints).
    pub scenario: &'static str,
    /// One edit of each kind of [`EDITS`].
    pub edits: [Edit; 6],
}

/// The zoo sources as a user's own files, and the generated file.
pub fn cases() -> [Case; 3] {
    [
        Case {
            name: "resnet.net",
            text: zoo("std.models.resnet"),
            scenario: "resnet50_train",
            edits: [
                Some(("# ResNets (He", "# ResNets [He")),
                Some(("# ResNets (He", "# ResNets\n# (He")),
                None,
                Some(("k=7, stride=2, pad=3, bias=false", "k=7, stride=2, pad=3, bias=true ")),
                Some(("model resnet50()\n    batch 256", "model resnet50()\n    batch 255")),
                None,
            ],
        },
        Case {
            name: "gpt2.net",
            text: zoo("std.models.gpt2"),
            scenario: "gpt2_train",
            edits: [
                Some(("# GPT-2 (Radford", "# GPT-2 [Radford")),
                Some(("# GPT-2 (Radford", "# GPT-2\n# (Radford")),
                None,
                Some(("h = dropout(h, p=p)", "h = dropout(h, p=0)")),
                Some(("batch 12", "batch 11")),
                None,
            ],
        },
        Case {
            name: "generated.net",
            text: generated(1_250),
            scenario: "fit",
            edits: [
                Some(("# A comment.", "# A comment!")),
                Some(("# A comment.", "# A\n# comment.")),
                Some(("linear(h, width)", "linear(h, 64)")),
                Some(("h = relu(linear(x, width))", "h = gelu(linear(x, width))")),
                Some(("batch 32", "batch 31")),
                Some(("    y = b600(y, 64)\n", "    y = b600(y, 64)\n    y = relu(y)\n")),
            ],
        },
    ]
}
