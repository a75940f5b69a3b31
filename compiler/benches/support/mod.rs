//! What the benches share (the `ide` and `shapes` benches here, and `netc-lsp`'s `latency`,
//! which includes this file by path). Each uses a part of it.

#![allow(dead_code)]

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
