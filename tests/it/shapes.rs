//! Shapes, parameters, MACs and the report (spec/shapes.md, spec/report.md).
//!
//! - the worked example of the articles netc grew from (article 001, section 6) and every
//!   parameter figure they print, with the formula where their arithmetic is wrong, each as
//!   a small `.net` model;
//! - snapshots of the shape diagnostics (E05xx), each with its input, the diagnostics as
//!   `netc check` prints them, and then every label as `line:column` ranges with the text it
//!   covers, so that a reviewer can see that each label points at the right expression;
//! - symbolic shapes of a model elaborated without a scenario;
//! - snapshots of `netc report` in its three formats for the examples;
//! - huge models (GPT-3, a trillion parameters) computed exactly, and an absurd one that
//!   overflows into E0503 instead of wrapping.
//!
//! Cases that once exposed a bug say which in their comment, so that a regression reads as
//! one.

use std::collections::BTreeMap;
use std::sync::Arc;

use netc::db::SourceFile;
use netc::diagnostics::{FileName, Place};
use netc::elaborate::{model_graph, scenario_graph};
use netc::graph::Graph;
use netc::host::{Database, file_diagnostics};
use netc::report::{Report, ScenarioReport, markdown, report, scenario_report, table};
use netc::semantics::files::{ItemLoc, syntax_tree};
use netc::shapes::Dim;
use netc::syntax::Item;

use crate::support::{check, codes, diagnostics_and_sources};

// ---------------------------------------------------------------------------------------
// Helpers

/// Loads `files` (name, text) into a fresh database.
fn load(files: &[(&str, &str)]) -> (Database, Vec<SourceFile>) {
    let mut db = Database::new();
    let handles = files.iter().map(|(name, text)| db.set_file(FileName::new(*name), text.to_string())).collect();
    (db, handles)
}

/// The index of the item called `name` in `file`.
fn item_index(db: &Database, file: SourceFile, name: &str) -> u32 {
    let position = syntax_tree(db, file).iter().position(|item| match item {
        Item::Scenario(s) => s.name.text == name,
        Item::Model(m) => m.name.text == name,
        _ => false,
    });
    position.unwrap_or_else(|| panic!("no scenario or model `{name}`")) as u32
}

/// Asserts that none of the files has a diagnostic (lints, which are advice, aside).
fn assert_clean(db: &Database, files: &[SourceFile]) {
    for &f in files {
        let d: Vec<_> = file_diagnostics(db, f).iter().filter(|d| !d.code.info().is_lint()).collect();
        assert!(d.is_empty(), "{}: unexpected diagnostics: {d:#?}", f.name(db));
    }
}

/// The report of scenario `name` of `file`; the files must be clean.
pub(crate) fn scenario_of(db: &Database, file: SourceFile, name: &str) -> ScenarioReport {
    scenario_report(db, file, item_index(db, file, name)).unwrap_or_else(|| panic!("scenario `{name}` has no report"))
}

/// The graph of scenario `name`.
pub(crate) fn scenario_graph_of(db: &Database, file: SourceFile, name: &str) -> Arc<Graph> {
    let loc = ItemLoc::new(db, file, item_index(db, file, name));
    scenario_graph(db, loc).clone().expect("the scenario elaborates")
}

/// The graph of model `name` elaborated alone, without a scenario.
fn model_graph_of(db: &Database, file: SourceFile, name: &str) -> Arc<Graph> {
    let loc = ItemLoc::new(db, file, item_index(db, file, name));
    model_graph(db, loc).clone().expect("the model elaborates")
}

/// One clean file `main.net`: its report of scenario `serve`.
fn serve(src: &str) -> ScenarioReport {
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    scenario_of(&db, files[0], "serve")
}

fn known(d: &Dim) -> i128 {
    d.known().unwrap_or_else(|| panic!("`{d}` is not a known value"))
}

/// The output types of every node of a graph whose op is `op`, in execution order.
fn outputs_of(graph: &Graph, op: &str) -> Vec<String> {
    graph
        .nodes
        .iter()
        .filter(|n| n.op.name() == op)
        .map(|n| n.outputs.iter().map(|t| graph.tensor(*t).to_string()).collect::<Vec<_>>().join(", "))
        .collect()
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |p| p + 1)..].chars().count() + 1;
    (line, column)
}

/// The snapshot of checking `main.net`: [`check`]'s input and diagnostics, then each label
/// of each diagnostic as `file:line:col-line:col`, the text it covers and its message.
///
/// Secondary labels inside the primary label's range (the operands of `y + x`) are drawn
/// under their operands; the primary label moves to what is between them (`+`).
fn check_with_labels(src: &str) -> String {
    let mut out = check(src);
    let (diagnostics, sources) = diagnostics_and_sources(&[("main.net", src)]);
    out.push_str("=== labels\n");
    for d in &diagnostics {
        out.push_str(&format!("{}: {}\n", d.code, d.message));
        for label in &d.labels {
            let Place::Range(r) = label.place else { panic!("an unresolved label: {label:?}") };
            let text = &sources[&label.file];
            let (l1, c1) = line_col(text, r.start as usize);
            let (l2, c2) = line_col(text, r.end as usize);
            let marker = if label.primary { "primary" } else { "secondary" };
            out.push_str(&format!(
                "  {marker} {}:{l1}:{c1}-{l2}:{c2} `{}`: {}\n",
                label.file,
                &text[r.to_range()],
                label.message
            ));
        }
    }
    out
}

/// Asserts the snapshot of [`check_with_labels`].
macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), check_with_labels($src));
        }
    };
}

// ---------------------------------------------------------------------------------------
// (a) The articles' figures (DIGEST.md)

const ARTICLES_CNN: &str = include_str!("../../examples/articles_cnn.net");
const BLOCKS: &str = include_str!("../../examples/blocks.net");
const RESNET18: &str = include_str!("../../examples/resnet18.net");

/// The articles' example as `netc report` loads it from the repository root.
fn articles() -> (Database, SourceFile) {
    let (db, files) = load(&[("examples/articles_cnn.net", ARTICLES_CNN)]);
    assert_clean(&db, &files);
    (db, files[0])
}

/// ResNet-18 and the file of blocks it uses, under their real names so `use "blocks.net"`
/// resolves.
fn resnet18() -> (Database, SourceFile) {
    let (db, files) = load(&[("examples/blocks.net", BLOCKS), ("examples/resnet18.net", RESNET18)]);
    assert_clean(&db, &files);
    (db, files[1])
}

// DIGEST.md, "The worked example": conv1 3->64, conv2 64->128 s2, conv3 128->256 s2, global
// average pool, linear 256->1000, all with bias, fp32, input 1x3x224x224.
#[test]
fn worked_example_parameters() {
    let (db, file) = articles();
    let s = scenario_of(&db, file, "serve");
    assert_eq!((s.model.as_str(), s.kind, s.batch), ("articles_cnn", "infer", Some(1)));
    let params: Vec<i128> = s.lines.iter().map(|l| l.params).collect();
    assert_eq!(params, [0, 1_792, 73_856, 295_168, 0, 257_000]);
    assert_eq!(s.params, 627_816);
    assert_eq!(1_792 + 73_856 + 295_168 + 257_000, 627_816);
    // ~2.5 MB of fp32 weights.
    assert_eq!(s.params * 4, 2_511_264);
}

#[test]
fn worked_example_activations() {
    let (db, file) = articles();
    let s = scenario_of(&db, file, "serve");
    let rows: Vec<(u32, &str, i128)> = s.lines.iter().map(|l| (l.line, l.shape.as_str(), l.output_bytes)).collect();
    assert_eq!(
        rows,
        [
            (4, "f32[1, 3, 224, 224]", 602_112),
            // 64x224x224 x 4 B = 12.8 MB, 128x112x112 = 6.4 MB, 256x56x56 = 3.2 MB.
            (5, "f32[1, 64, 224, 224]", 12_845_056),
            (6, "f32[1, 128, 112, 112]", 6_422_528),
            (7, "f32[1, 256, 56, 56]", 3_211_264),
            (8, "f32[1, 256]", 1_024),
            (9, "f32[1, 1000]", 4_000),
        ]
    );
    // The same from the graph: the outputs of the three convolutions.
    let graph = scenario_graph_of(&db, file, "serve");
    let conv_bytes: Vec<i128> = graph
        .nodes
        .iter()
        .filter(|n| n.op.name() == "conv2d")
        .map(|n| known(&graph.tensor(n.outputs[0]).bytes().expect("no overflow")))
        .collect();
    assert_eq!(conv_bytes, [12_845_056, 6_422_528, 3_211_264]);
}

#[test]
fn worked_example_macs() {
    let (db, file) = articles();
    let s = scenario_of(&db, file, "serve");
    let macs: Vec<i128> = s.lines.iter().map(|l| l.macs).collect();
    // Cout x Hout x Wout x Cin x 3 x 3 per convolution, 256 x 1000 for the linear layer.
    let conv = |cin: i128, cout: i128, hw: i128| cout * hw * hw * cin * 9;
    let expected = [0, conv(3, 64, 224), conv(64, 128, 112), conv(128, 256, 56), 0, 256 * 1000];
    assert_eq!(macs, expected);
    assert_eq!(expected, [0, 86_704_128, 924_844_032, 924_844_032, 0, 256_000]);
    assert_eq!(s.macs, 1_936_648_192);
}

// The fine-tuning scenario runs the same model with 10 classes, batch 32: the linear layer
// shrinks to 256 x 10 + 10, and activations scale with the batch; weights do not.
#[test]
fn worked_example_at_batch_32() {
    let (db, file) = articles();
    let s = scenario_of(&db, file, "finetune");
    assert_eq!((s.kind, s.batch, s.params), ("train", Some(32), 627_816 - 257_000 + 2_570));
    let serve = scenario_of(&db, file, "serve");
    for (a, b) in serve.lines.iter().zip(&s.lines).take(4) {
        assert_eq!(b.output_bytes, 32 * a.output_bytes, "line {}", a.line);
        assert_eq!(b.macs, 32 * a.macs, "line {}", a.line);
    }
}

/// The parameters of the one-op model `model m() { input x: TYPE; return OP }`.
fn params_of(input: &str, op: &str) -> i128 {
    serve(&format!("model m() {{\n    input x: {input}\n    return {op}\n}}\ninfer serve {{ model m()  batch 1 }}\n"))
        .params
}

// DIGEST.md, Ledger 1: Cout x Cin/groups x Kh x Kw (+ Cout with bias).
#[test]
fn digest_parameter_figures() {
    // 3x3 conv 3->64: 1,728 params, 6.8 KB.
    let p = params_of("f32[N, 3, 224, 224]", "conv2d(x, 64, k=3, pad=1, bias=false)");
    assert_eq!((p, p * 4), (1_728, 6_912));
    // 3x3 256->256: 589,824, 2.25 MB.
    let p = params_of("f32[N, 256, 56, 56]", "conv2d(x, 256, k=3, pad=1, bias=false)");
    assert_eq!((p, p * 4), (589_824, 2_359_296));
    // 7x7 64->64: 200,704, 0.77 MB.
    let p = params_of("f32[N, 64, 56, 56]", "conv2d(x, 64, k=7, pad=3, bias=false)");
    assert_eq!((p, p * 4), (200_704, 802_816));
    // Linear 4096->4096: 16,777,216, 64 MB.
    let p = params_of("f32[N, 4096]", "linear(x, 4096, bias=false)");
    assert_eq!((p, p * 4), (16_777_216, 64 * 1024 * 1024));
    assert_eq!(params_of("f32[N, 4096]", "linear(x, 4096)"), 16_777_216 + 4_096);
    // (001) 3x3 conv 64->128 with bias: 73,856, ~288 KB.
    let p = params_of("f32[N, 64, 56, 56]", "conv2d(x, 128, k=3, pad=1)");
    assert_eq!((p, p * 4), (73_856, 295_424));
    // The bias is Cout.
    assert_eq!(params_of("f32[N, 64, 56, 56]", "conv2d(x, 128, k=3, pad=1, bias=false)"), 73_856 - 128);
}

// DIGEST.md, (001): depthwise 64x3x3 = 576, pointwise 128x64x1x1 = 8,192, 8,768 in all: 12 %
// of the standard convolution's 73,728. Parameters and MACs are separate books: both are
// counted, per layer.
#[test]
fn digest_depthwise_separable() {
    let s = serve(
        r#"model separable() {
    input x: f32[N, 64, 56, 56]
    depthwise = conv2d(x, 64, k=3, pad=1, groups=64, bias=false)
    pointwise = conv2d(depthwise, 128, k=1, bias=false)
    standard = conv2d(x, 128, k=3, pad=1, bias=false)
    return pointwise + standard
}
infer serve { model separable()  batch 1 }
"#,
    );
    let rows: Vec<(i128, i128)> = s.lines.iter().skip(1).take(3).map(|l| (l.params, l.macs)).collect();
    let hw = 56 * 56;
    assert_eq!(rows, [(576, 576 * hw), (8_192, 8_192 * hw), (73_728, 73_728 * hw)]);
    assert_eq!(576 + 8_192, 8_768);
    assert_eq!(s.params, 8_768 + 73_728);
    assert_eq!((8_768 * 100) / 73_728, 11); // 11.9 %: "12 %"
}

// DIGEST.md, Ledger 2 (000): input 32x3x224x224 fp32 ~19 MB; a first convolution to 64
// channels at 112x112 ~100 MB; 128 channels at 56x56 ~51 MB.
#[test]
fn digest_activation_figures() {
    let s = serve(
        r#"model stem() {
    input x: f32[N, 3, 224, 224]
    y = conv2d(x, 64, k=7, stride=2, pad=3)
    return conv2d(y, 128, k=3, stride=2, pad=1)
}
infer serve { model stem()  batch 32 }
"#,
    );
    let rows: Vec<(&str, i128)> = s.lines.iter().map(|l| (l.shape.as_str(), l.output_bytes)).collect();
    assert_eq!(
        rows,
        [
            ("f32[32, 3, 224, 224]", 19_267_584),
            ("f32[32, 64, 112, 112]", 102_760_448),
            ("f32[32, 128, 56, 56]", 51_380_224)
        ]
    );
}

// DIGEST.md, whole models: ResNet-18 ~11.7 M params, ~45 MB fp32; weights do not depend on the
// batch size.
#[test]
fn resnet18_parameters_and_macs() {
    let (db, file) = resnet18();
    let serve = scenario_of(&db, file, "serve");
    let train = scenario_of(&db, file, "imagenet");
    // torchvision.models.resnet18(): 11,689,512 parameters.
    assert_eq!((serve.params, train.params), (11_689_512, 11_689_512));
    assert_eq!(serve.params * 4, 46_758_048); // 44.6 MiB
    // Convolutions and the linear layer, by the formulas of spec/shapes.md: 1.814 G
    // (torchvision's "GFLOPS 1.81", which counts MACs).
    let conv = |cin: i128, cout: i128, k: i128, hw: i128| cin * cout * k * k * hw * hw;
    let mut expected = conv(3, 64, 7, 112) + 4 * conv(64, 64, 3, 56);
    for (cin, c, hw) in [(64, 128, 28), (128, 256, 14), (256, 512, 7)] {
        expected += conv(cin, c, 3, hw) + 3 * conv(c, c, 3, hw) + conv(cin, c, 1, hw);
    }
    expected += 512 * 1000;
    assert_eq!(expected, 1_814_073_344);
    assert_eq!(serve.macs, expected);
    assert_eq!(train.macs, 64 * expected);
}

// ---------------------------------------------------------------------------------------
// (b) Shape diagnostics: one realistic program per case, one mistake each

// A ResNet basic block without its projection shortcut, called where it changes the width and
// the resolution: the residual add gets 128 channels at 28x28 and 64 at 56x56. The labels
// point at both operands with their shapes, and at the call that led into the block.
/// The ops added after the calibration, on symbolic shapes: each op's output type.
#[test]
fn added_ops_shapes() {
    let (db, files) = load(&[("main.net", include_str!("../fixtures/ops/ops_probe.net"))]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "ops_probe");
    let expected = [
        ("sum", "f32[N, 64]"),
        ("amax", "f32[N, 1, 64]"),
        ("cumsum", "f32[N, 16, 64]"),
        ("expand", "f32[N, 16, 64]"),
        ("select", "f32[N, 64]"),
        ("narrow", "f32[N, 8, 64]"),
        ("drop_path", "f32[N, 16, 64]"),
        ("masked_fill", "f32[N, 16, 64]"),
        ("where", "f32[N, 16, 64]"),
        ("exp", "f32[N, 16, 64]"),
        ("rsqrt", "f32[N, 16, 64]"),
        ("neg", "f32[N, 16, 64]"),
        ("pow", "f32[N, 16, 64]"),
        ("topk", "f32[N, 4, 64], i64[N, 4, 64]"),
        ("gather", "f32[N, 4, 64]"),
        ("one_hot", "i64[N, 10]"),
        ("arange", "i64[16]"),
    ];
    for (op, ty) in expected {
        assert_eq!(outputs_of(&graph, op), [ty], "{op}");
    }
}

/// `routed(call, k, of)` counts `k / of` of the parameters the call makes as active, node by
/// node and rounded down, and nested marks multiply: an expert of 1,088 + 1,040 parameters
/// counted 2 of 8 (272 + 260), 1 of 8 (136 + 130) and 1 of 2 within 1 of 2 (272 + 260).
#[test]
fn routed_calls_count_their_share_of_active_parameters() {
    let s = serve(
        r#"block expert(x) {
    return linear(relu(linear(x, 64)), 16)
}
model m() {
    input x: f32[N, 16]
    a = routed(expert(x), 2, 8)
    b = routed(expert(x), 1, 8)
    c = routed(routed(expert(x), 1, 2), 1, 2)
    return a + b + c
}
infer serve { model m()  batch 1 }
"#,
    );
    assert_eq!((s.params, s.active_params), (3 * 2128, 532 + 266 + 532));
}

/// Type promotion as `torch.result_type` (torch 2.15): a bf16 tensor times a float32 one is
/// float32 (OLMo 2's `self.weight * hidden_states`), times a 0-dim float32 one it stays bf16,
/// and an integer tensor plus a 0-dim float is float. The declared types follow it, and so
/// does a bf16 run, where a 0-dim float32 cast (`d`) no longer widens what it multiplies.
#[test]
fn type_promotion_follows_torch() {
    let src = "model promote() {\n    input h: bf16[N, 64]\n    input w: f32[64]\n    input s: f32[]\n    input i: i64[N, 64]\n\
               \x20   a = h * w\n    b = h * s\n    c = i + s\n    d = to(sum(h, dim=[0, 1]), \"f32\")\n    e = h * d\n\
               \x20   f = to(h, \"f32\") * h\n    return a + b + c + e + f\n}\n\
               infer serve { model promote()  batch 2  precision bf16  no_grad  device cpu }\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "promote");
    assert_eq!(outputs_of(&graph, "mul"), ["f32[N, 64]", "bf16[N, 64]", "bf16[N, 64]", "f32[N, 64]"]);
    assert_eq!(outputs_of(&graph, "add")[0], "f32[N, 64]");
    let run = scenario_of(&db, files[0], "serve");
    let shape = |source: &str| run.lines.iter().find(|l| l.source == source).map(|l| l.shape.clone());
    // Under `precision bf16` the float32 inputs are bf16 too; the explicit casts hold.
    let expected = [
        ("a = h * w", "bf16[2, 64]"),
        ("b = h * s", "bf16[2, 64]"),
        ("e = h * d", "bf16[2, 64]"),
        ("f = to(h, \"f32\") * h", "f32[2, 64]"),
    ];
    for (source, want) in expected {
        assert_eq!(shape(source).as_deref(), Some(want), "{source}");
    }
}

/// A Python number in an arithmetic op is a wrapped number (torch 2.15): it changes the dtype
/// only when of a higher kind, to that kind's default (`i64 * 0.5` is float32, `bf16 * 2.0`
/// stays bf16, `i32 + 1` stays int32), and `/` is true division, so integers divide in float32
/// (`position_ids / 16384`, Ministral 3's query scaling), which `floor` keeps; `//` keeps
/// them integers. A bf16 model (`precision bf16`) leaves those float32 (the default dtype,
/// which `model.to(bf16)` does not change), while `h * 2.0` is bf16. `floor` of a bool is
/// E0501 (PyTorch: "not implemented for 'Bool'").
#[test]
fn python_numbers_and_true_division_promote_as_torch_does() {
    let src = "model m() {\n    input i: i64[N, 8]\n    input j: i32[N, 8]\n    input h: bf16[N, 8]\n\
               \x20   a = i * 0.5\n    b = h * 2.0\n    c = j + 1\n    d = i / 16384\n    e = floor(d)\n\
               \x20   f = i // 2\n    g = 2.0 * j\n    return a + e + b\n}\n\
               infer serve { model m()  batch 2  precision bf16  no_grad  device cpu }\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "mul"), ["f32[N, 8]", "bf16[N, 8]", "f32[N, 8]"]);
    assert_eq!(outputs_of(&graph, "add")[0], "i32[N, 8]");
    assert_eq!(outputs_of(&graph, "div"), ["f32[N, 8]"]);
    assert_eq!(outputs_of(&graph, "floor"), ["f32[N, 8]"]);
    assert_eq!(outputs_of(&graph, "floor_divide"), ["i64[N, 8]"]);
    let run = scenario_of(&db, files[0], "serve");
    let shape = |source: &str| run.lines.iter().find(|l| l.source == source).map(|l| l.shape.clone());
    for (source, want) in [("a = i * 0.5", "f32[2, 8]"), ("d = i / 16384", "f32[2, 8]"), ("b = h * 2.0", "bf16[2, 8]")]
    {
        assert_eq!(shape(source).as_deref(), Some(want), "{source}");
    }
    assert_eq!(codes("model m() {\n    input b: bool[N, 4]\n    return floor(b)\n}\n"), ["E0501"]);
}

/// `**` is Python's: right-associative, tighter than a minus on its left (`-2 ** 2` is -4,
/// `2 ** 3 ** 2` is 512), an integer to a negative power a float (`2 ** -1` is 0.5), a
/// dimension squared a product of dimensions; with a tensor on either side it is torch.pow,
/// promoting as `pow` does (bf16 to a float stays bf16, int64 to 0.5 is float32, 2 to an int64
/// tensor stays int64). What Python raises is E0501, and `**` on a string E0221.
#[test]
fn power_is_pythons() {
    let src = "model m() {\n    input x: f32[N, 8]\n    input h: bf16[N, 8]\n    input i: i64[N, 8]\n\
               \x20   a = reshape(x, [-(-2 ** 2), -1])\n    b = reshape(x, [2 ** 3 ** 2 / 64, -1])\n\
               \x20   c = reshape(x, [ceil(16 ** 0.5), ceil(2 ** -1) * -1])\n    d = full([N ** 2, 2 ** 0], 0.0)\n\
               \x20   e = x ** 2\n    f = h ** 2.0\n    g = i ** 0.5\n    k = 2 ** i\n    l = x ** x\n\
               \x20   return a, b, c, d, e, f, g, k, l\n}\n\
               infer serve { model m()  batch 2  no_grad  device cpu }\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "reshape"), ["f32[4, N*2]", "f32[8, N]", "f32[4, N*2]"]);
    assert_eq!(outputs_of(&graph, "full"), ["f32[N*N, 1]"]);
    assert_eq!(outputs_of(&graph, "pow"), ["f32[N, 8]", "bf16[N, 8]", "f32[N, 8]", "i64[N, 8]", "f32[N, 8]"]);
    let run = scenario_of(&db, files[0], "serve");
    let shape = |source: &str| run.lines.iter().find(|l| l.source == source).map(|l| l.shape.clone());
    assert_eq!(shape("a = reshape(x, [-(-2 ** 2), -1])").as_deref(), Some("f32[4, 4]"));
    assert_eq!(shape("d = full([N ** 2, 2 ** 0], 0.0)").as_deref(), Some("f32[4, 1]"));
    for (body, want) in [
        ("    n = 0 ** -1\n", "E0501"),
        ("    n = (-8.0) ** 0.5\n", "E0501"),
        ("    n = 10.0 ** 400\n", "E0501"),
        ("    n = \"a\" ** 2\n", "E0221"),
        ("    n = 2 ** 200\n", "E0503"),
    ] {
        let src = format!("model m() {{\n    input x: f32[N, 4]\n{body}    return x * n\n}}\n");
        assert_eq!(codes(&src), [want], "{body}");
    }
}

/// `tile` is torch.tile (Tensor.repeat): counts aligned with the last dimensions, more add
/// leading ones, fewer count as 1 before them; `logsumexp` reduces as `sum` does, integers into
/// float32; `abs` keeps the dtype, bools are E0501.
#[test]
fn tile_logsumexp_and_abs_shapes() {
    let src = "model m() {\n    input x: f32[N, 4, 8]\n    input i: i64[N, 8]\n    a = tile(x, [1, 2, 1])\n\
               \x20   b = tile(x, [3])\n    c = tile(x, [2, 1, 1, 1])\n    d = logsumexp(x, [-1])\n\
               \x20   e = logsumexp(i, [0, 1], keepdim=true)\n    f = abs(i)\n    return a, b, c, d, e, f\n}\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "tile"), ["f32[N, 8, 8]", "f32[N, 4, 24]", "f32[2, N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "logsumexp"), ["f32[N, 4]", "f32[1, 1]"]);
    assert_eq!(outputs_of(&graph, "abs"), ["i64[N, 8]"]);
    assert_eq!(codes("model m() {\n    input b: bool[N, 4]\n    return abs(b)\n}\n"), ["E0501"]);
    assert_eq!(codes("model m() {\n    input x: f32[N, 4]\n    return tile(x, [1, -2])\n}\n"), ["E0501"]);
}

/// `unsqueeze` inserts a 1 at a dimension of the output (`-1` appends); `squeeze` removes a
/// dimension of size 1 and keeps any other, a symbolic one included, as PyTorch does; the
/// logical ops give bool of any dtypes; `bitwise_or` and `bitwise_not` keep two masks bool,
/// promote integers, and refuse floats (E0501); dimensions out of range are E0501.
#[test]
fn unsqueeze_squeeze_and_mask_op_shapes() {
    let src = "model m() {\n    input x: f32[N, 4, 8]\n    input i: i32[N, 8]\n    input j: i64[N, 8]\n\
               \x20   a = unsqueeze(x, 0)\n    b = unsqueeze(x, -1)\n    c = unsqueeze(x, 2)\n\
               \x20   d = squeeze(a, 0)\n    e = squeeze(x, 1)\n    f = squeeze(x, 0)\n\
               \x20   g = logical_or(x > 0, i)\n    h = logical_and(i, 1.0)\n    k = logical_not(x)\n\
               \x20   l = bitwise_or(i, j)\n    n = bitwise_not(i > 0)\n    return a, b, c, d, e, f, g, h, k, l, n\n}\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "unsqueeze"), ["f32[1, N, 4, 8]", "f32[N, 4, 8, 1]", "f32[N, 4, 1, 8]"]);
    assert_eq!(outputs_of(&graph, "squeeze"), ["f32[N, 4, 8]", "f32[N, 4, 8]", "f32[N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "logical_or"), ["bool[N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "logical_and"), ["bool[N, 8]"]);
    assert_eq!(outputs_of(&graph, "logical_not"), ["bool[N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "bitwise_or"), ["i64[N, 8]"]);
    assert_eq!(outputs_of(&graph, "bitwise_not"), ["bool[N, 8]"]);
    for bad in ["unsqueeze(x, 3)", "unsqueeze(x, -4)", "squeeze(x, 2)", "bitwise_or(x, x)", "bitwise_not(x)"] {
        let src = format!("model m() {{\n    input x: f32[N, 4]\n    return {bad}\n}}\n");
        assert_eq!(codes(&src), ["E0501"], "{bad}");
    }
}

/// `pad` adds (before, after) counts from the last dimension backwards (a negative count
/// crops); `tril` and `triu` keep the shape of a tensor of two dimensions or more; `norm`
/// reduces as `sum` does, floats only, p 1 or 2; `log1p` of integers is float32. Wrong counts,
/// a 1-D triangle, another p, an integer norm and a crop below zero are E0501.
#[test]
fn pad_triangle_norm_and_log1p_shapes() {
    let src = "model m() {\n    input x: f32[N, 4, 8]\n    input i: i64[N, 8]\n    a = pad(x, [1, 2])\n\
               \x20   b = pad(x, [0, 0, 3, -1])\n    c = tril(x)\n    d = triu(x, 1)\n    e = norm(x, [-1])\n\
               \x20   f = norm(x, [1], p=1.0, keepdim=true)\n    g = log1p(i)\n    return a, b, c, d, e, f, g\n}\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "pad"), ["f32[N, 4, 11]", "f32[N, 6, 8]"]);
    assert_eq!(outputs_of(&graph, "tril"), ["f32[N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "triu"), ["f32[N, 4, 8]"]);
    assert_eq!(outputs_of(&graph, "norm"), ["f32[N, 4]", "f32[N, 1, 8]"]);
    assert_eq!(outputs_of(&graph, "log1p"), ["f32[N, 8]"]);
    for bad in
        ["pad(x, [1])", "pad(x, [0, 0, 0, 0, 0, 0])", "pad(x, [0, -5])", "tril(norm(x, [0]))", "norm(x, [0], p=3.0)"]
    {
        let src = format!("model m() {{\n    input x: f32[N, 4]\n    return {bad}\n}}\n");
        assert_eq!(codes(&src), ["E0501"], "{bad}");
    }
    assert_eq!(codes("model m() {\n    input i: i64[N, 4]\n    return norm(i, [1])\n}\n"), ["E0501"]);
}

/// `and` and `or` short-circuit as Python's do: `k > 0 and 3 % k == 0` with `k` 0 never
/// divides by zero, nor does `k == 0 or 3 % k == 0`; with `k` 3 both sides are read.
#[test]
fn and_and_or_short_circuit_as_python_does() {
    for k in [0, 3] {
        let src = format!(
            "model m(k: int = {k}) {{\n    input x: f32[N, 4]\n    if k > 0 and 3 % k == 0 {{\n        x = relu(x)\n    }}\n\
             \x20   if k == 0 or 3 % k == 0 {{\n        x = relu(x)\n    }}\n    return x\n}}\n\
             infer s {{ model m()  batch 1 }}\n"
        );
        let (db, files) = load(&[("main.net", &src)]);
        assert_clean(&db, &files);
        let relus = outputs_of(&model_graph_of(&db, files[0], "m"), "relu").len();
        assert_eq!(relus, if k == 0 { 1 } else { 2 }, "k = {k}");
    }
}

/// The ops of transformers' xIELU (std.blocks' `xielu`): `minimum` promotes as
/// `torch.result_type` (a 0-dim float32 `eps` leaves a bf16 `h` bf16), `expm1` keeps its
/// input's dtype and under autocast runs in float32 (its fp32 policy), and a `[1]` float32
/// parameter is not 0-dim, so `softplus(alpha) * h` is float32; softplus of integers is E0501
/// (PyTorch: "not implemented for 'Long'").
#[test]
fn xielus_ops_promote_as_torch_does() {
    let src = "model m() {\n    input h: bf16[N, 64]\n    input eps: f32[]\n    a = minimum(h, eps)\n    e = expm1(a)\n\
               \x20   p = softplus(parameter([1])) * h\n    b = maximum(h, a)\n    return e + p + b\n}\n\
               infer serve { model m()  batch 2  precision amp_bf16  no_grad  device cpu }\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "minimum"), ["bf16[N, 64]"]);
    assert_eq!(outputs_of(&graph, "maximum"), ["bf16[N, 64]"]);
    assert_eq!(outputs_of(&graph, "expm1"), ["bf16[N, 64]"]);
    let run = scenario_of(&db, files[0], "serve");
    let shape = |source: &str| run.lines.iter().find(|l| l.source == source).map(|l| l.shape.clone());
    assert_eq!(shape("a = minimum(h, eps)").as_deref(), Some("bf16[2, 64]"));
    assert_eq!(shape("e = expm1(a)").as_deref(), Some("f32[2, 64]"));
    assert_eq!(shape("p = softplus(parameter([1])) * h").as_deref(), Some("f32[2, 64]"));
    assert_eq!(codes("model m() {\n    input i: i64[N, 4]\n    return softplus(i)\n}\n"), ["E0501"]);
}

/// An in-place op writes into its first operand and keeps its dtype whatever the operands
/// promote to (`bf16.div_(f32)` is bf16, as DeepSeek-V3's router renormalizes its bf16
/// weights by a float32 sum under autocast); out of place it promotes. Under autocast the
/// run follows: `sum` is float32 there, the in-place quotient stays bf16.
#[test]
fn in_place_ops_keep_their_operands_dtype() {
    let src = "model m() {\n    input h: bf16[N, 4]\n    a = h * 1.0\n    s = to(sum(a, [-1], keepdim=true), \"f32\")\n\
               \x20   q = div(a, s)\n    a = div(a, s, inplace=true)\n    return a + q\n}\n\
               infer serve { model m()  batch 2  precision amp_bf16  no_grad  device cpu }\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "div"), ["f32[N, 4]", "bf16[N, 4]"]);
    let run = scenario_of(&db, files[0], "serve");
    let shape = |source: &str| run.lines.iter().find(|l| l.source == source).map(|l| l.shape.clone());
    assert_eq!(shape("q = div(a, s)").as_deref(), Some("f32[2, 4]"));
    assert_eq!(shape("a = div(a, s, inplace=true)").as_deref(), Some("bf16[2, 4]"));
}

/// The ops transformers builds its masks with (std.models.gemma2's `hf_eager_mask`): tensor
/// comparisons (`<=`, `>`, ...: bool, broadcast, a number on the right), `bitwise_and`, and
/// `new_zeros` / `new_ones` in the dtype of a tensor or a named one.
#[test]
fn mask_ops_shapes() {
    let src = "model masks() {\n    input h: bf16[N, S, 64]\n    input q: i64[1, 1, S, 1]\n    input kv: i64[1, 1, 1, T]\n\
               \x20   a = kv <= q\n    b = kv > q - 4\n    c = bitwise_and(new_ones(q, [], dtype=\"bool\"), b)\n\
               \x20   d = bitwise_and(c, a)\n    e = h < 0.5\n    f = h == h\n    g = h != 1\n    i = q >= kv\n    j = q < kv\n\
               \x20   m = where(expand(d, [N, 1, S, T]), new_zeros(h, []), -1.0)\n    return m\n}\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "masks");
    let expected: [(&str, &[&str]); 9] = [
        ("le", &["bool[1, 1, S, T]"]),
        ("gt", &["bool[1, 1, S, T]"]),
        ("bitwise_and", &["bool[1, 1, S, T]", "bool[1, 1, S, T]"]),
        ("new_ones", &["bool[]"]),
        ("new_zeros", &["bf16[]"]),
        ("lt", &["bool[N, S, 64]", "bool[1, 1, S, T]"]),
        ("eq", &["bool[N, S, 64]"]),
        ("ne", &["bool[N, S, 64]"]),
        ("where", &["bf16[N, 1, S, T]"]),
    ];
    for (op, types) in expected {
        assert_eq!(outputs_of(&graph, op), types, "{op}");
    }
    assert_eq!(outputs_of(&graph, "ge"), ["bool[1, 1, S, T]"]);
}

/// The ops a mixture of experts runs (tests/fixtures/ops/moe.net: `moe_sparse_block` of 4
/// experts of 32, top 2, on `[N, 16, 64]`: T = 16 N tokens, S = 32 N routed rows), each
/// output's type: the router's f32 weights and i64 experts, the sorted ids and permutation,
/// the gathered rows, the int32 counts and offsets, the two grouped GEMMs, the f32 weighted
/// rows (bf16 or f32 rows times f32 weights promote).
#[test]
fn mixture_of_experts_ops_shapes() {
    let (db, files) = load(&[("main.net", include_str!("../fixtures/ops/moe.net"))]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "moe_probe");
    let expected: [(&str, &[&str]); 8] = [
        ("topk", &["f32[N*16, 2], i64[N*16, 2]"]),
        ("div", &["f32[N*16, 2]"]),
        ("sort", &["i64[N*32], i64[N*32]"]),
        ("floor_divide", &["i64[N*32]"]),
        ("index", &["f32[N*32, 64]", "f32[N*32]", "f32[N*32, 64]"]),
        ("histc", &["i32[4]"]),
        ("grouped_mm", &["f32[N*32, 64]", "f32[N*32, 64]"]),
        ("index_put", &["i64[N*32]"]),
    ];
    for (op, types) in expected {
        assert_eq!(outputs_of(&graph, op), types, "{op}");
    }
}

/// torch.utils.flop_counter counts it), equation by equation.
#[test]
fn einsum_shapes_and_macs() {
    let cases = [
        // equation, operands, output, MACs
        ("bhqd,bhkd->bhqk", "f32[2, 4, 8, 16], f32[2, 4, 6, 16]", "f32[2, 4, 8, 6]", 2 * 4 * 8 * 6 * 16),
        ("bqhd,bkhd->bhqk", "f32[2, 8, 4, 16], f32[2, 6, 4, 16]", "f32[2, 4, 8, 6]", 2 * 4 * 8 * 6 * 16),
        ("ij,jk", "f32[3, 5], f32[5, 7]", "f32[3, 7]", 3 * 5 * 7),
        ("...ij,...jk->...ik", "f32[2, 3, 5], f32[5, 7]", "f32[2, 3, 7]", 2 * 3 * 5 * 7),
        ("bi,bj->bij", "f32[2, 3], f32[2, 4]", "f32[2, 3, 4]", 0),
        ("bij->bji", "f32[2, 3, 4]", "f32[2, 4, 3]", 0),
        ("bij", "f32[2, 3, 4]", "f32[2, 3, 4]", 0),
        ("bji", "f32[2, 3, 4]", "f32[2, 4, 3]", 0),
        ("bij->b", "f32[2, 3, 4]", "f32[2]", 0),
        // `k` only in the second operand and not in the output: summed out first.
        ("bi,bjk->bij", "f32[2, 3], f32[2, 4, 5]", "f32[2, 3, 4]", 0),
        ("bd,bdk->bk", "f32[2, 3], f32[2, 3, 5]", "f32[2, 5]", 2 * 3 * 5),
    ];
    for (equation, operands, output, macs) in cases {
        let inputs: Vec<String> = operands.split("], ").map(|t| t.trim_end_matches(']').to_string() + "]").collect();
        let names: Vec<String> = (0..inputs.len()).map(|i| format!("x{i}")).collect();
        let declared: String = inputs.iter().zip(&names).map(|(t, n)| format!("    input {n}: {t}\n")).collect();
        let src = format!(
            "model m() {{\n{declared}    return einsum(\"{equation}\", [{}])\n}}\ninfer serve {{ model m()  batch 1 }}\n",
            names.join(", ")
        );
        let (db, files) = load(&[("main.net", &src)]);
        assert_clean(&db, &files);
        let graph = model_graph_of(&db, files[0], "m");
        assert_eq!(outputs_of(&graph, "einsum"), [output], "{equation}");
        let node = graph.nodes.iter().find(|n| n.op.name() == "einsum").expect("an einsum node");
        assert_eq!(known(&node.result.macs), macs, "{equation}");
    }
}

case!(
    einsum_misuse,
    r#"model m() {
    input q: f32[N, 4, 8, 16]
    input k: f32[N, 4, 6, 16]
    a = einsum("bhqd,bhkd,bhke->bhqe", [q, k, k])
    b = einsum("bhqd->bhq", [q, k])
    c = einsum("bhq,bhkd->bhqk", [q, k])
    d = einsum("bhqq->bhq", [q])
    e = einsum("bhqd,bhqd->bhq", [q, k])
    return q
}
infer serve { model m()  batch 2 }
"#
);

/// `split_sizes` (torch.split with a list of sizes): one view per size; `scatter` of a
/// number into a floating-point tensor (DeepSeek-V3's group mask).
#[test]
fn split_sizes_and_scatter_of_a_number() {
    let src = "model m() {\n    input q: f32[N, 16, 96]\n    input idx: i64[N, 2]\n\
               \x20   q_pass, q_rot = split_sizes(q, [64, 32], dim=-1)\n\
               \x20   mask = scatter(full_like(select(q, 2, 0), 0.0), 1, idx, 1.0)\n    return q_pass\n}\n";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "m");
    assert_eq!(outputs_of(&graph, "split_sizes"), ["f32[N, 16, 64], f32[N, 16, 32]"]);
    assert_eq!(outputs_of(&graph, "scatter"), ["f32[N, 16]"]);
}

case!(
    split_sizes_that_do_not_sum_to_the_dimension,
    "model m() {\n    input x: f32[N, 16, 96]\n    a, b = split_sizes(x, [64, 30], dim=-1)\n    return a\n}\n"
);
case!(
    scatter_of_a_float_tensor_source,
    "model m() {\n    input x: f32[N, 4]\n    input i: i64[N, 2]\n    input v: f32[N, 2]\n    return scatter(x, 1, i, v)\n}\n"
);
case!(expand_only_repeats_size_one, "model m() {\n    input x: f32[N, 4, 8]\n    return expand(x, [-1, 6, 8])\n}\n");
case!(select_index_out_of_range, "model m() {\n    input x: f32[N, 4, 8]\n    return select(x, 1, 4)\n}\n");
case!(
    masked_fill_needs_a_bool_mask_that_fits,
    "model m() {\n    input x: f32[N, 4, 8]\n    input keep: f32[4, 8]\n    return masked_fill(x, keep, 0.0)\n}\n"
);
case!(
    topk_larger_than_the_dimension,
    "model m() {\n    input x: f32[N, 4, 8]\n    a, _b = topk(x, 9)\n    return a\n}\n"
);
case!(
    gather_index_of_another_rank,
    "model m() {\n    input x: f32[N, 4, 8]\n    input i: i64[N, 2]\n    return gather(x, 1, i)\n}\n"
);

case!(
    index_needs_an_integer_index,
    "model m() {\n    input x: f32[T, 8]\n    input keep: bool[T]\n    return index(x, keep)\n}\n"
);
case!(
    index_put_values_that_do_not_fit,
    "model m() {\n    input x: f32[T, 8]\n    input i: i64[S]\n    input v: f32[S, 4]\n    return index_put(x, i, v)\n}\n"
);
case!(
    grouped_mm_inner_dimensions_and_offsets,
    r#"model m() {
    input x: bf16[S, 64]
    input offs: i32[4]
    input bad: f32[4]
    a = grouped_mm(x, parameter([4, 32, 16]), offs)
    b = grouped_mm(x, parameter([8, 64, 16]), offs)
    c = grouped_mm(x, parameter([4, 64, 16]), bad)
    return x
}
"#
);
case!(
    bitwise_and_of_floats_and_a_bad_shape,
    "model m() {\n    input x: f32[N, 8]\n    input y: bool[N, 3]\n    a = bitwise_and(x < 0.0, x)\n    b = new_zeros(x, [4, -2])\n    return x <= y\n}\n"
);
case!(histc_with_an_empty_range, "model m() {\n    input x: f32[S]\n    return histc(x, bins=8, min=7, max=0)\n}\n");
case!(
    parameter_active_beyond_its_slices,
    "model m() {\n    input x: f32[N, 16]\n    return x * parameter([4, 16], active=5)\n}\n"
);

case!(
    e0501_residual_channel_mismatch,
    r#"block basic(x, planes: int, stride: int = 1) {
    y = relu(batchnorm(conv2d(x, planes, k=3, stride=stride, pad=1, bias=false)))
    y = batchnorm(conv2d(y, planes, k=3, pad=1, bias=false))
    return relu(y + x)
}

model net() {
    input x: f32[N, 64, 56, 56]
    y = basic(x, 64)
    y = basic(y, 128, stride=2)
    return y
}

infer serve { model net()  batch 8 }
"#
);

// A per-channel bias written as `[C]` instead of `[C, 1, 1]`: broadcasting aligns it with
// the last dimension (W = 32), not with the channels.
case!(
    e0501_add_not_broadcastable,
    r#"model m() {
    input x: f32[N, 16, 32, 32]
    input scale: f32[16]
    return x * scale
}
infer serve { model m()  batch 2 }
"#
);

// A ViT patch embedding that assumes 16x16 patches of a 224x224 image make a 16x16 grid (it
// is 14x14): the reshape would change the element count.
case!(
    e0501_reshape_changes_element_count,
    r#"model vit_stem(d: int = 768) {
    input x: f32[N, 3, 224, 224]
    y = conv2d(x, d, k=16, stride=16)
    y = reshape(y, [N, d, 16 * 16])
    return transpose(y, 1, 2)
}
infer serve { model vit_stem()  batch 1 }
"#
);

case!(
    e0501_reshape_two_inferred_dimensions,
    r#"model m() {
    input x: f32[N, 3, 32, 32]
    y = reshape(x, [N, -1, -1])
    return y
}
infer serve { model m()  batch 2 }
"#
);

// A CIFAR-sized input through an ImageNet-style downsampling stack: after two stride-2
// convolutions and two poolings the map is 1x1, and a 3x3 convolution without padding has
// nothing to slide over.
case!(
    e0501_convolution_output_empty,
    r#"model m() {
    input x: f32[N, 3, 32, 32]
    y = maxpool2d(conv2d(x, 16, k=3, stride=2), 2)
    y = maxpool2d(conv2d(y, 32, k=3, stride=2), 2)
    y = conv2d(y, 64, k=3)
    return y
}
infer serve { model m()  batch 2 }
"#
);

case!(
    e0501_conv_groups_do_not_divide_channels,
    r#"model m() {
    input x: f32[N, 30, 32, 32]
    y = conv2d(x, 64, k=3, pad=1, groups=4)
    return y
}
infer serve { model m()  batch 2 }
"#
);

// A hand-written attention score whose key projection has the wrong width (32, not 64): the
// matrix product's inner dimensions differ.
// The operands of `@` are labelled with their shapes.
case!(
    e0501_linear_width_feeding_matmul,
    r#"model m() {
    input q: f32[N, 16, 64]
    input k: f32[N, 16, 64]
    kq = linear(k, 32)
    scores = q @ transpose(kq, 1, 2)
    return scores
}
infer serve { model m()  batch 2 }
"#
);

// A U-Net skip connection from the wrong level: 28x28 and 14x14 cannot be concatenated
// along the channels. The message has both shapes; the label ("here") is on the whole list
// (a better one would be on `b`, with its shape).
case!(
    e0501_concat_mismatched_sizes,
    r#"model m() {
    input a: f32[N, 64, 28, 28]
    input b: f32[N, 32, 14, 14]
    return concat([a, b], dim=1)
}
infer serve { model m()  batch 2 }
"#
);

case!(
    e0501_attention_dim_mismatch,
    r#"model m() {
    input x: f32[N, S, 512]
    h = linear(x, 768)
    return attention(h, 512, 8)
}
infer serve { model m()  batch 2  seq 128 }
"#
);

case!(
    e0501_embedding_float_ids,
    r#"model m(vocab: int = 32000) {
    input tokens: f32[N, S]
    return embedding(tokens, vocab, 512)
}
infer serve { model m()  batch 2  seq 128 }
"#
);

// `split` is torch.chunk: 6 rows in chunks of ceil(6 / 4) = 2 make 3 pieces, not 4.
case!(
    e0501_split_is_chunk,
    r#"model m() {
    input x: f32[N, S, 64]
    parts = split(x, 4, dim=1)
    return parts[3]
}
infer serve { model m()  batch 1  seq 6 }
"#
);

case!(
    e0501_pooling_output_empty,
    r#"model m() {
    input x: f32[N, 8, 5, 5]
    y = maxpool2d(x, 2)
    y = maxpool2d(y, 2)
    return avgpool2d(y, 2)
}
infer serve { model m()  batch 1 }
"#
);

case!(
    e0501_batchnorm_on_flat_input,
    r#"model m() {
    input x: f32[N, 3, 32, 32]
    y = flatten(relu(conv2d(x, 8, k=3, pad=1)))
    return batchnorm(y)
}
infer serve { model m()  batch 4 }
"#
);

case!(
    e0501_sdpa_head_size_mismatch,
    r#"model m() {
    input q: f32[N, 8, S, 64]
    input k: f32[N, 8, S, 32]
    input v: f32[N, 8, S, 64]
    return sdpa(q, k, v, causal=true)
}
infer serve { model m()  batch 1  seq 256 }
"#
);

case!(
    e0501_sdpa_mask_of_integers,
    r#"model m() {
    input q: f32[N, 8, S, 64]
    input m: i64[N, 1, S, S]
    return sdpa(q, q, q, mask=m)
}
infer serve { model m()  batch 1  seq 256 }
"#
);

case!(
    e0501_sdpa_mask_that_grows_the_weights,
    r#"model m() {
    input q: f32[N, 8, S, 64]
    input m: bool[N, 16, S, S]
    return sdpa(q, q, q, mask=m)
}
infer serve { model m()  batch 1  seq 256 }
"#
);

case!(
    e0501_sdpa_mask_and_causal,
    r#"model m() {
    input q: f32[N, 8, S, 64]
    input m: bool[1, 1, S, S]
    return sdpa(q, q, q, mask=m, causal=true)
}
infer serve { model m()  batch 1  seq 256 }
"#
);

case!(
    e0502_unbound_dimension,
    r#"model seg(classes: int = 21) {
    input image: f32[N, 3, H, W]
    return conv2d(image, classes, k=1)
}
infer serve { model seg()  batch 1  dim H = 512 }
"#
);

case!(
    e0502_batch_not_given,
    r#"model lm(vocab: int = 32000) {
    input tokens: i64[N, S]
    return linear(embedding(tokens, vocab, 512), vocab)
}
infer serve { model lm()  seq 2048 }
"#
);

// Sizes beyond 2^127: a trillion-by-trillion batch of trillion-wide tokens through a
// trillion-wide layer (10^48 MACs). E0503, never a wrapped number.
case!(
    e0503_overflow_in_an_op,
    r#"model absurd(d: int = 1_000_000_000_000) {
    input x: f32[N, S, 1_000_000_000_000]
    return linear(x, d)
}
infer serve { model absurd()  batch 1_000_000_000_000  seq 1_000_000_000_000 }
"#
);

case!(
    e0503_overflow_in_integer_arithmetic,
    r#"model m() {
    input x: f32[N, 8]
    n = 9_000_000_000_000_000_000 * 9_000_000_000_000_000_000 * 9_000_000_000_000_000_000
    return reshape(x, [n, -1])
}
infer serve { model m()  batch 1 }
"#
);

// The block calls itself: one label at the recursive call and one at the model's call.
case!(
    e0504_block_calls_itself,
    r#"block layer(x, width: int) {
    return layer(relu(linear(x, width)), width)
}
model m() {
    input x: f32[N, 8]
    return layer(x, 8)
}
infer serve { model m()  batch 1 }
"#
);

// ---------------------------------------------------------------------------------------
// (c) Symbolic shapes: a model elaborated without a scenario

/// A backbone with symbolic height and width.
const BACKBONE: &str = r#"model backbone() {
    input x: f32[N, 3, H, W]
    y = relu(batchnorm(conv2d(x, 64, k=7, stride=2, pad=3, bias=false)))
    y = maxpool2d(y, k=3, stride=2, pad=1)
    y = conv2d(y, 128, k=3, stride=2, pad=1)
    y = conv2d(y, 128, k=3, pad=1)
    u = upsample(y)
    t = conv_transpose2d(y, 64, k=4, stride=2, pad=1)
    f = flatten(y)
    g = reshape(y, [N, 128, -1])
    return linear(transpose(g, 1, 2), 10)
}
"#;

#[test]
fn symbolic_shapes_of_a_model_without_scenario() {
    let (db, files) = load(&[("main.net", BACKBONE)]);
    assert_clean(&db, &files);
    let graph = model_graph_of(&db, files[0], "backbone");
    let shapes: Vec<String> = graph.nodes.iter().map(|n| format!("{} {}", n.op, graph.tensor(n.outputs[0]))).collect();
    let expected = [
        // floor((H + 2*3 - 7)/2) + 1
        "conv2d f32[N, 64, (H - 1)/2 + 1, (W - 1)/2 + 1]",
        "batchnorm f32[N, 64, (H - 1)/2 + 1, (W - 1)/2 + 1]",
        "relu f32[N, 64, (H - 1)/2 + 1, (W - 1)/2 + 1]",
        // floor(((H - 1)/2 + 1 + 2 - 3)/2) + 1: nested floors merge.
        "maxpool2d f32[N, 64, (H - 1)/4 + 1, (W - 1)/4 + 1]",
        "conv2d f32[N, 128, (H - 1)/8 + 1, (W - 1)/8 + 1]",
        // 3x3, stride 1, pad 1 keeps the size exactly.
        "conv2d f32[N, 128, (H - 1)/8 + 1, (W - 1)/8 + 1]",
        "upsample f32[N, 128, ((H - 1)/8)*2 + 2, ((W - 1)/8)*2 + 2]",
        // (L - 1)*2 - 2*1 + (4 - 1) + 1 = 2L
        "conv_transpose2d f32[N, 64, ((H - 1)/8)*2 + 2, ((W - 1)/8)*2 + 2]",
    ];
    assert_eq!(shapes[..expected.len()], expected);
    // The linear layer's output is known up to the batch; its width is 10.
    assert_eq!(
        graph.tensor(*graph.outputs.last().expect("an output")).to_string().as_str().split(", ").last(),
        Some("10]")
    );
    // Parameters that do not depend on the input size are known; MACs stay symbolic.
    let conv1 = &graph.nodes[0];
    assert_eq!(conv1.params, Dim::Known(64 * 3 * 7 * 7));
    // Binding the dimensions gives what a scenario computes.
    let bindings = BTreeMap::from([("N".to_string(), 2), ("H".to_string(), 224), ("W".to_string(), 224)]);
    let bound: Vec<Vec<i128>> = graph
        .nodes
        .iter()
        .take(expected.len() + 1)
        .map(|n| {
            graph.tensor(n.outputs[0]).shape.iter().map(|d| known(&d.bind(&bindings).expect("no overflow"))).collect()
        })
        .collect();
    assert_eq!(bound[0], [2, 64, 112, 112]);
    assert_eq!(bound[3], [2, 64, 56, 56]);
    assert_eq!(bound[4], [2, 128, 28, 28]);
    assert_eq!(bound[7], [2, 64, 56, 56]);
    assert_eq!(bound[8], [2, 128 * 28 * 28]);
    assert_eq!(known(&conv1.result.macs.bind(&bindings).expect("no overflow")), 2 * 9408 * 112 * 112);
}

// ResNet-18 on its own: its input is 224x224, so only the batch stays symbolic.
#[test]
fn symbolic_batch_of_resnet18() {
    let (db, file) = resnet18();
    let graph = model_graph_of(&db, file, "resnet18");
    assert!(graph.diagnostics.is_empty(), "{:#?}", graph.diagnostics);
    assert_eq!(graph.tensor(graph.inputs[0].1).to_string(), "f32[N, 3, 224, 224]");
    assert_eq!(outputs_of(&graph, "maxpool2d"), ["f32[N, 64, 56, 56]"]);
    assert_eq!(outputs_of(&graph, "adaptive_avgpool2d"), ["f32[N, 512, 1, 1]"]);
    assert_eq!(outputs_of(&graph, "linear"), ["f32[N, 1000]"]);
    assert_eq!(graph.params(), Some(Dim::Known(11_689_512)));
    assert_eq!(graph.macs().expect("no overflow").to_string(), "N*1814073344");
}

// A floor division that is multiplied by something before it, or that divides by a product,
// must be parenthesized: `N*((H - 1)/2)`, `P/(N*128)`. As displayed today, `N*(H - 1)/2` and
// `(H - 1)/2*(W - 1)/2` read (left to right, `/` being floor division as in the language) as
// `floor(N*(H - 1)/2)` and `floor(floor((H - 1)/2)*(W - 1)/2)`, other values than the ones
// computed; `P/N*128` reads as `(P/N)*128`.
#[test]
fn symbolic_floor_divisions_display_unambiguously() {
    let (db, files) = load(&[("main.net", BACKBONE)]);
    let graph = model_graph_of(&db, files[0], "backbone");
    let flattened = &outputs_of(&graph, "flatten")[0];
    assert!(!flattened.contains("/8*(W - 1)/8"), "{flattened}");
    let reshaped = &outputs_of(&graph, "reshape")[0];
    assert!(!reshaped.contains("/N*128") && !reshaped.contains("N*(H - 1)/8"), "{reshaped}");
    let macs = graph.nodes[0].result.macs.to_string();
    assert!(!macs.contains("N*(H - 1)/2"), "{macs}");
}

// ---------------------------------------------------------------------------------------
// (d) `netc report`: the three formats, for the examples

/// The report of every scenario of `file`, rendered as `netc report` prints it in each
/// format, after the input files.
fn report_snapshot(db: &Database, inputs: &[(&str, &str)], file: SourceFile) -> String {
    let r: Report = report(db, &[file], None);
    let json = serde_json::to_string_pretty(&r).expect("the report serializes");
    let mut out = String::new();
    for (name, text) in inputs {
        out.push_str(&format!("=== {name}\n{text}"));
    }
    out.push_str(&format!("=== table\n{}=== markdown\n{}=== json\n{json}\n", table(&r), markdown(&r)));
    out
}

// Reviewed: 627,816 parameters (1,792 + 73,856 + 295,168 + 257,000), outputs of 12.8 / 6.4 /
// 3.2 MB (12.2 / 6.1 / 3.1 MiB), 1.94 G MACs at batch 1; with 10 classes at batch 32, the
// linear layer has 2,570 parameters and everything else scales by 32.
#[test]
fn report_of_the_articles_example() {
    let (db, file) = articles();
    insta::assert_snapshot!(report_snapshot(&db, &[("examples/articles_cnn.net", ARTICLES_CNN)], file));
}

// Reviewed: 11,689,512 parameters; 1,814,073,344 MACs at batch 1 (64 times that at batch 64);
// the lines of `basic` run 8 times, its downsample shortcut 3 times; `s = x` makes no tensor.
// A block call's line (`y = basic(y, 128, stride=2)`) counts the tensor it assigns, which the
// block's `return` line also counts: lines are views, not a partition of memory.
#[test]
fn report_of_resnet18() {
    let (db, file) = resnet18();
    let inputs = [("examples/blocks.net", BLOCKS), ("examples/resnet18.net", RESNET18)];
    insta::assert_snapshot!(report_snapshot(&db, &inputs, file));
}

#[test]
fn report_json_schema() {
    let (db, file) = resnet18();
    let r = report(&db, &[file], Some("serve"));
    let value = serde_json::to_value(&r).expect("serializes");
    assert_eq!(value["version"], 2);
    let scenarios = value["scenarios"].as_array().expect("an array");
    assert_eq!(scenarios.len(), 1);
    let s = scenarios[0].as_object().expect("an object");
    let keys: Vec<&str> = s.keys().map(String::as_str).collect();
    let mut expected = [
        "name",
        "kind",
        "file",
        "model",
        "batch",
        "params",
        "trainable_params",
        "active_params",
        "macs_per_token",
        "macs",
        "device",
        "peak_bytes",
        "reserved_bytes",
        "runtime_bytes",
        "total_bytes",
        "budget_bytes",
        "margin",
        "peak_step",
        "peak_phase",
        "peak_op",
        "peak_line",
        "ledgers",
        "breakdown",
        "phases",
        "kv_cache_bytes",
        "generate_step",
        "generate_totals",
        "paged_optimizer_state_bytes",
        "host_bytes",
        "host_budget_bytes",
        "lines",
    ];
    expected.sort_unstable();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    assert_eq!(s["params"], 11_689_512);
    assert_eq!(s["macs"], 1_814_073_344_i64);
    let line = s["lines"][0].as_object().expect("an object");
    let mut keys: Vec<&str> = line.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "activation_bytes",
            "buffer_bytes",
            "file",
            "gradient_bytes",
            "instances",
            "kv_cache_bytes",
            "line",
            "macs",
            "optimizer_bytes",
            "output_bytes",
            "params",
            "peak_bytes",
            "shape",
            "source",
            "weight_bytes",
            "workspace_bytes"
        ]
    );
    // The per-line figures add up to the scenario's.
    let lines = &r.scenarios[0].lines;
    assert_eq!(lines.iter().map(|l| l.params).sum::<i128>(), 11_689_512);
    assert_eq!(lines.iter().map(|l| l.macs).sum::<i128>(), 1_814_073_344);
    // Only the scenario asked for.
    assert_eq!(report(&db, &[file], Some("nothing")).scenarios.len(), 0);
    assert_eq!(report(&db, &[file], None).scenarios.len(), 2);
}

// ---------------------------------------------------------------------------------------
// (e) Huge figures: exact, never wrapped

/// A GPT-style decoder: pre-norm layers of attention and a 4x MLP, learned positions, an
/// output head tied to the token embedding.
const GPT: &str = r#"block decoder_layer(x, d: int, heads: int) {
    h = x + attention(layernorm(x), d, heads, causal=true)
    return h + linear(gelu(linear(layernorm(h), 4 * d)), d)
}

model gpt(vocab: int = 50257, context: int = 2048, d: int = 12288, layers: int = 96, heads: int = 96) {
    input tokens: i64[N, S]
    input positions: i64[N, S]
    h = embedding(tokens, vocab, d, share="wte") + embedding(positions, context, d)
    h = repeat layers decoder_layer(h, d, heads)
    return linear(layernorm(h), vocab, bias=false, share="wte")
}

train gpt3 { model gpt()  batch 1  seq 2048 }
train gpt_1t { model gpt(d=25600, layers=128, heads=160)  batch 1  seq 2048 }
infer million_tokens { model gpt(context=1_000_000)  batch 1  seq 1_000_000 }
"#;

/// The parameters of [`GPT`] by formula: per layer 12 d^2 + 13 d (attention 4 d^2 + 4 d, MLP
/// 8 d^2 + 5 d, two layer norms 4 d), the embeddings, the final layer norm; the head is tied.
fn gpt_params(vocab: i128, context: i128, d: i128, layers: i128) -> i128 {
    layers * (12 * d * d + 13 * d) + vocab * d + context * d + 2 * d
}

/// The MACs of [`GPT`] for one sequence of `s` tokens: per layer the projections 4 s d^2,
/// the scores and weighted sum 2 s^2 d, the MLP 8 s d^2; the head s d vocab.
fn gpt_macs(vocab: i128, d: i128, layers: i128, s: i128) -> i128 {
    layers * (4 * s * d * d + 2 * s * s * d + 8 * s * d * d) + s * d * vocab
}

// GPT-3 (96 layers, d = 12288): 174.6 G parameters, the "175B".
#[test]
fn gpt3_figures_are_exact() {
    let (db, files) = load(&[("main.net", GPT)]);
    assert_clean(&db, &files);
    let s = scenario_of(&db, files[0], "gpt3");
    assert_eq!(gpt_params(50257, 2048, 12288, 96), 174_604_259_328);
    assert_eq!(s.params, 174_604_259_328);
    assert_eq!(s.macs, gpt_macs(50257, 12288, 96, 2048));
    assert_eq!(s.macs, 367_402_130_866_176);
    // The last line's parameters are its layer norm's (2 d): the tied head owns none, but its
    // MACs count.
    let head = s.lines.last().expect("lines");
    assert_eq!((head.params, head.macs, head.shape.as_str()), (2 * 12288, 2048 * 12288 * 50257, "f32[1, 2048, 50257]"));
    let graph = scenario_graph_of(&db, files[0], "gpt3");
    let tied: Vec<(String, i128, i128)> = graph
        .nodes
        .iter()
        .filter(|n| matches!(n.args.values.get("share"), Some(netc::shapes::ops::ArgValue::Str(k)) if k == "wte"))
        .map(|n| (n.op.to_string(), known(&n.result.params().expect("no overflow")), known(&n.params)))
        .collect();
    assert_eq!(
        tied,
        [("embedding".to_string(), 50257 * 12288, 50257 * 12288), ("linear".to_string(), 50257 * 12288, 0)]
    );
}

// A trillion-parameter configuration: still exact, no diagnostic.
#[test]
fn trillion_parameter_models_are_exact() {
    let (db, files) = load(&[("main.net", GPT)]);
    let s = scenario_of(&db, files[0], "gpt_1t");
    assert_eq!(s.params, gpt_params(50257, 2048, 25600, 128));
    assert_eq!(s.params, 1_008_014_617_600);
    assert_eq!(s.macs, gpt_macs(50257, 25600, 128, 2048));
    // Exactly 10^12 parameters in one layer.
    let s = serve(
        "model wide() {\n    input x: f32[N, 1_000_000]\n    return linear(x, 1_000_000, bias=false)\n}\ninfer serve { model wide()  batch 1 }\n",
    );
    assert_eq!((s.params, s.macs), (1_000_000_000_000, 1_000_000_000_000));
    assert_eq!(s.lines[1].output_bytes, 4_000_000);
}

// A million-token sequence: the attention scores of one layer are S^2 d MACs, 10^12 x 12288,
// far inside i128.
#[test]
fn million_token_sequences_are_exact() {
    let (db, files) = load(&[("main.net", GPT)]);
    let s = scenario_of(&db, files[0], "million_tokens");
    assert_eq!(s.params, gpt_params(50257, 1_000_000, 12288, 96));
    assert_eq!(s.macs, gpt_macs(50257, 12288, 96, 1_000_000));
    assert_eq!(s.macs, 2_533_859_733_504_000_000);
}

// Beyond 2^127: E0503 and no report, never a wrapped value or a panic.
#[test]
fn absurd_sizes_overflow_into_e0503() {
    let absurd = r#"model absurd(d: int = 1_000_000_000_000) {
    input x: f32[N, S, 1_000_000_000_000]
    return linear(x, d)
}
infer serve { model absurd()  batch 1_000_000_000_000  seq 1_000_000_000_000 }
"#;
    assert_eq!(codes(absurd), ["E0503"]);
    let (db, files) = load(&[("main.net", absurd)]);
    assert_eq!(scenario_report(&db, files[0], item_index(&db, files[0], "serve")), None);
    // The GPT model with a width of 10^12 over 10^12 tokens: 10^48 MACs per projection.
    let huge = GPT.replace(
        "d: int = 12288, layers: int = 96, heads: int = 96",
        "d: int = 1_000_000_000_000, layers: int = 2, heads: int = 64",
    );
    let huge = huge.replace("batch 1  seq 2048", "batch 1_000_000_000  seq 1_000_000_000_000");
    let codes_of_huge = codes(&huge);
    assert!(codes_of_huge.contains(&"E0503"), "{codes_of_huge:?}");
    // `million_tokens` (10^6 tokens, width 10^12) still counts exactly: its own lints are
    // not hidden by another scenario's overflow.
    assert!(codes_of_huge.iter().all(|c| *c == "E0503" || c.starts_with('L')), "{codes_of_huge:?}");
}

// ---------------------------------------------------------------------------------------
// Operators, tied weights, and known bugs (ignored until fixed; each expects the right
// behaviour)

// Tensor `-` and `/` broadcast like `+` and `*`, with a tensor or a number on either side.
#[test]
fn tensor_operators_broadcast() {
    let s = serve(
        r#"model m() {
    input x: f32[N, 16, 8, 8]
    input mean: f32[16, 1, 1]
    y = (x - mean) / 2
    z = 1 - y * x
    return -z + y
}
infer serve { model m()  batch 4 }
"#,
    );
    let shapes: Vec<&str> = s.lines.iter().map(|l| l.shape.as_str()).collect();
    assert_eq!(
        shapes,
        ["f32[4, 16, 8, 8]", "f32[16, 1, 1]", "f32[4, 16, 8, 8]", "f32[4, 16, 8, 8]", "f32[4, 16, 8, 8]"]
    );
    assert_eq!((s.params, s.macs), (0, 0));
}

// BatchNorm: weight and bias are parameters; running_mean, running_var (fp32) and
// num_batches_tracked (int64) are buffers, not parameters.
#[test]
fn batchnorm_buffers_are_not_parameters() {
    let (db, files) = load(&[(
        "main.net",
        "model m() {\n    input x: f32[N, 3, 8, 8]\n    return batchnorm(conv2d(x, 32, k=3, bias=false))\n}\ninfer serve { model m()  batch 1 }\n",
    )]);
    assert_clean(&db, &files);
    let graph = scenario_graph_of(&db, files[0], "serve");
    let bn = graph.nodes.iter().find(|n| n.op.name() == "batchnorm").expect("a batchnorm");
    assert_eq!(bn.params, Dim::Known(64));
    let buffers: Vec<(&str, i128, i128)> =
        bn.result.buffers.iter().map(|b| (b.name, known(&b.numel), b.dtype.size())).collect();
    assert_eq!(buffers, [("running_mean", 32, 4), ("running_var", 32, 4), ("num_batches_tracked", 1, 8)]);
    assert_eq!(graph.params(), Some(Dim::Known(32 * 3 * 9 + 64)));
}

// GPT-2's output head shares the token embedding's weight, and has no bias.
#[test]
fn tied_weights_count_once() {
    let s = serve(
        r#"model m() {
    input tokens: i64[N, S]
    h = embedding(tokens, 1000, 64, share="wte")
    return linear(h, 1000, bias=false, share="wte")
}
infer serve { model m()  batch 1  seq 16 }
"#,
    );
    assert_eq!(s.params, 64_000);
    assert_eq!(s.macs, 16 * 64 * 1000);
}

// `share` ties the weight only, as `head.weight = wte.weight` does in PyTorch: a tied
// linear layer with a bias keeps its own bias.
#[test]
fn tied_linear_with_bias_keeps_its_bias() {
    let s = serve(
        r#"model m() {
    input tokens: i64[N, S]
    h = embedding(tokens, 1000, 64, share="wte")
    return linear(h, 1000, share="wte")
}
infer serve { model m()  batch 1  seq 16 }
"#,
    );
    assert_eq!(s.params, 64_000 + 1_000);
}

// `split` gives as many tensors as torch.chunk makes; here 3, assigned to 2 names: E0217.
#[test]
fn split_into_the_wrong_number_of_names_is_reported() {
    let src = r#"model m() {
    input x: f32[N, 6]
    a, b = split(x, 3)
    return linear(a + b, 4)
}
infer serve { model m()  batch 1 }
"#;
    assert_eq!(codes(src), ["E0217"]);
}

// The model is also elaborated without its scenario, where `S` is unbound; a symbolic
// `repeat` count is not an error there (every scenario binds `S`).
#[test]
fn symbolic_repeat_count_is_not_an_error_of_the_model() {
    let src = r#"model m() {
    input x: f32[N, S, 64]
    y = repeat (S / 64) relu(x)
    return y
}
infer serve { model m()  batch 1  seq 128 }
"#;
    assert_eq!(codes(src), Vec::<&str>::new());
}

// A tensor of 9 x 10^54 elements has more bytes than an i128 holds: E0503, and no report.
#[test]
fn tensor_too_large_to_count_is_e0503() {
    let src = r#"model m() {
    input x: f32[N, 9_000_000_000_000_000_000, 9_000_000_000_000_000_000, 9_000_000_000_000_000_000]
    return relu(x)
}
infer serve { model m()  batch 1 }
"#;
    assert_eq!(codes(src), ["E0503"]);
}

// torch.nn.Linear on int64 ids fails ("mat1 and mat2 must have the same dtype"): E0501.
#[test]
fn linear_on_integer_ids_is_e0501() {
    let src = r#"model m() {
    input tokens: i64[N, S]
    return linear(tokens, 8)
}
infer serve { model m()  batch 1  seq 16 }
"#;
    assert_eq!(codes(src), ["E0501"]);
}

// A statement that assigns the pieces of `split` to one name (a list) has a row in
// execution order with the pieces' types (a run of equal ones once, with its count), 1
// instance and their bytes.
#[test]
fn report_row_of_a_list_of_tensors() {
    let s = serve(
        r#"model pieces() {
    input x: f32[N, 10, 96]
    parts = split(x, 4, dim=1)
    return parts[3]
}
infer serve { model pieces()  batch 1 }
"#,
    );
    let row = &s.lines[1];
    assert_eq!(row.line, 3);
    assert_eq!(row.shape, "f32[1, 3, 96] × 3, f32[1, 1, 96]");
    assert_eq!((row.instances, row.output_bytes), (1, 10 * 96 * 4));
}

// `netc report FILE DIR` reports the scenarios of the file and of every file below the
// directory.
#[test]
fn report_of_a_file_and_a_directory() {
    let root = std::env::temp_dir().join(format!("netc-shapes-{}", std::process::id()));
    let dir = root.join("more");
    std::fs::create_dir_all(&dir).expect("create a directory");
    let model = "model m() {\n    input x: f32[N, 8]\n    return linear(x, 4)\n}\n";
    std::fs::write(root.join("a.net"), format!("{model}infer first {{ model m()  batch 1 }}\n")).expect("write");
    std::fs::write(dir.join("b.net"), format!("{model}infer second {{ model m()  batch 1 }}\n")).expect("write");
    let argv = ["netc", "report", "--format", "json"].map(std::ffi::OsString::from).into_iter();
    let argv = argv.chain([root.join("a.net").into_os_string(), dir.into_os_string()]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(argv, &mut out, &mut err, false);
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let json: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    let names: Vec<&str> =
        json["scenarios"].as_array().expect("scenarios").iter().map(|s| s["name"].as_str().expect("a name")).collect();
    assert_eq!(names, ["first", "second"]);
}

// `mean(x, dim, keepdim)` as `Tensor.mean`: each reduced axis dropped, or kept as 1; a
// negative axis counts from the end; an integer tensor, an axis out of range or given twice
// is E0501 (PyTorch: "mean(): could not infer output dtype", "Dimension out of range",
// "dim 2 appears multiple times in the list of dims").
#[test]
fn mean_over_dimensions() {
    let cases = [
        ("f32[N, 8, 5, 5]", "mean(x, [2, 3])", Ok("f32[2, 8]")),
        ("f32[N, 8, 5, 5]", "mean(x, [2, 3], keepdim=true)", Ok("f32[2, 8, 1, 1]")),
        ("f32[N, 8, 5, 5]", "mean(x, [-1])", Ok("f32[2, 8, 5]")),
        ("f32[N, 16, 64]", "mean(x, [1])", Ok("f32[2, 64]")),
        ("f32[N, 16, 64]", "mean(x, [0, 1, 2])", Ok("f32[]")),
        ("i64[N, 16]", "mean(x, [1])", Err("E0501")),
        ("f32[N, 16, 64]", "mean(x, [3])", Err("E0501")),
        ("f32[N, 16, 64]", "mean(x, [1, -2])", Err("E0501")),
    ];
    for (input, call, expected) in cases {
        let src = format!(
            "model m() {{\n    input x: {input}\n    return {call}\n}}\ninfer serve {{ model m()  batch 2 }}\n"
        );
        match expected {
            Ok(shape) => {
                let (db, files) = load(&[("main.net", &src)]);
                assert_clean(&db, &files);
                let graph = scenario_graph_of(&db, files[0], "serve");
                assert_eq!(outputs_of(&graph, "mean"), [shape], "{call} of {input}");
            }
            Err(code) => assert_eq!(codes(&src), [code], "{call} of {input}"),
        }
    }
}

#[test]
fn mean_of_an_axis_given_twice() {
    insta::assert_snapshot!(check_with_labels(
        "model m() {\n    input x: f32[N, 16, 64]\n    return mean(x, [1, -2])\n}\ninfer serve { model m()  batch 2 }\n"
    ));
}

// A sequence of 7 x 10^18 tokens fed to attention: its score matrix alone is 2 x 10^38 bytes,
// more than an i128 counts. The simulation saturates instead of wrapping (or, in a debug
// build, panicking), and the scenario is E0503, with no lint computed on its figures.
#[test]
fn attention_scores_too_large_to_count_are_e0503() {
    let src = r#"model m() {
    input x: f32[1, 7071067811865475244, 1]
    return attention(x, 1, 1)
}
infer serve { model m()  batch 1 }
"#;
    assert_eq!(codes(src), ["E0503"]);
}

// `repeat 1000000000` built 2,000,000 ops (5.7 GB) before E0504; the limit is 250,000 ops
// now, and a `repeat` that would pass it stops after its first repetition.
#[test]
fn a_repeat_past_the_op_limit_stops_at_its_first_repetition() {
    let src = "block blk(x) {\n    return relu(linear(x, 8))\n}\nmodel m() {\n    input x: f32[N, 8]\n    return repeat 1000000000 blk(x)\n}\ninfer serve { model m()  batch 1 }\n";
    let diagnostics = crate::support::diagnostics_of(&[("main.net", src)]);
    let messages: Vec<_> = diagnostics.iter().map(|d| (d.code.info().code, d.message.as_str())).collect();
    assert_eq!(
        messages,
        [(
            "E0504",
            "`repeat 1000000000` would make 2000000000 ops (2 per repetition); a model may have at most 250000"
        )]
    );
}

/// `repeat` calls that make no op (found by the `numbers` fuzz target: a stem convolution of
/// stride 0, then 2,147,483,648 blocks in ResNet's first stage, spun for minutes). A call
/// that gives back its input unchanged is a fixed point and ends the `repeat`.
#[test]
fn a_repeat_of_calls_that_make_no_op_ends() {
    let block = "block blk(x) {\n    return relu(linear(x, 8))\n}\n";
    let cases = [
        // After an error, each repetition gets and gives an unknown value.
        (
            format!("{block}model m() {{\n    input x: f32[N, 8]\n    y = conv2d(x, 4, k=3, stride=0)\n    return repeat 2147483647 blk(y)\n}}\ninfer serve {{ model m()  batch 1 }}\n"),
            vec![("E0501", "expected a 4-D tensor [N, C, H, W] for conv2d, found f32[1, 8]".to_string())],
        ),
        // A block that returns its argument.
        (
            "block same(x) {\n    return x\n}\nmodel m() {\n    input x: f32[N, 8]\n    return repeat 1000000000 same(x)\n}\ninfer serve { model m()  batch 1 }\n".to_string(),
            vec![],
        ),
    ];
    for (src, expected) in cases {
        let diagnostics = crate::support::diagnostics_of(&[("main.net", &src)]);
        let messages: Vec<_> = diagnostics.iter().map(|d| (d.code.info().code, d.message.clone())).collect();
        assert_eq!(messages, expected, "{src}");
    }
}

/// Loops, list `+`, `//` and the builtins compute what Python would: each `linear`'s width is
/// derived by hand in the comment beside it, in execution order.
#[test]
fn loops_lists_and_builtins_compute_as_python() {
    let src = "model m(depth: int = 3) {
    input x: f32[N, 16]
    y = x
    for i in 0..depth {
        y = linear(y, 8 * (i + 1) // 2)
    }
    feats = []
    for w in [3, 5] {
        feats = feats + [linear(y, w)]
    }
    a = linear(concat(feats, dim=1), min(7, 21 // 2, depth * 3))
    return linear(a, max([2, len(feats) * 3, 4]))
}

infer serve { model m()  batch 2  no_grad }
";
    let (db, files) = load(&[("main.net", src)]);
    assert_clean(&db, &files);
    let graph = scenario_graph_of(&db, files[0], "serve");
    assert_eq!(
        outputs_of(&graph, "linear"),
        [
            "f32[2, 4]",  // 8 * 1 // 2
            "f32[2, 8]",  // 8 * 2 // 2
            "f32[2, 12]", // 8 * 3 // 2
            "f32[2, 3]",  // the list's first element
            "f32[2, 5]",  // and its second, joined by `+`
            "f32[2, 7]",  // min(7, 10, 9)
            "f32[2, 6]",  // max([2, 2 * 3, 4])
        ]
    );
    assert_eq!(outputs_of(&graph, "concat"), ["f32[2, 8]"]);
}

case!(
    concat_does_not_broadcast_a_class_token,
    "model m() {\n    input x: f32[N, 4, 8]\n    return concat([parameter([1, 1, 8]), x], dim=1)\n}\ninfer serve { model m()  batch 2 }\n"
);

/// spec/report.md's examples are what `netc report` prints: its `mlp.net`, reported as each
/// command line the page shows (`$ netc report mlp.net ...`) asks, as the command line
/// renders each format.
#[test]
fn spec_report_examples_are_what_netc_prints() {
    let page = std::fs::read_to_string(crate::support::root().join("spec/report.md")).expect("spec/report.md");
    let at = page.find("For this file, `mlp.net`:").expect("the example file");
    let start = page[at..].find("```net\n").expect("its text") + at + "```net\n".len();
    let model = &page[start..start + page[start..].find("```").expect("its end")];
    let mut db = netc::host::Database::new();
    let file = db.set_file(netc::diagnostics::FileName::new("mlp.net"), model.to_string());
    let mut shown = 0;
    for block in page.split("```text\n$ netc report mlp.net").skip(1) {
        let (command, rest) = block.split_once('\n').expect("a command line");
        let expected = &rest[..rest.find("```").expect("the block's end")];
        let words: Vec<&str> = command.split_whitespace().collect();
        let option = |name: &str| words.iter().position(|w| *w == name).map(|i| words[i + 1]);
        let report = netc::report::report(&db, &[file], option("--scenario"));
        let printed = match option("--format") {
            None | Some("table") => netc::report::table(&report),
            Some("markdown") => netc::report::markdown(&report),
            Some("json") => serde_json::to_string_pretty(&report).expect("JSON") + "\n",
            Some(other) => panic!("no format {other}"),
        };
        assert_eq!(printed, expected, "spec/report.md: `netc report mlp.net{command}` prints otherwise");
        shown += 1;
    }
    assert_eq!(shown, 3, "the table, Markdown and JSON examples");
}

/// `split` by a symbolic count (`split(x, S, dim=1)`, one piece per position) is no error:
/// the model's graph cannot decide it, and each scenario elaborates at its own sizes.
#[test]
fn split_by_a_symbolic_count_takes_the_scenarios_size() {
    let text = r#"model per_position() {
    input x: f32[N, S, 64]
    parts = split(x, S, dim=1)
    return concat(parts, dim=1)
}
infer serve { model per_position()  batch 2  seq 4 }
"#;
    assert!(crate::support::codes(text).is_empty(), "{:?}", crate::support::codes(text));
    let s = serve(text);
    assert_eq!(s.lines[1].shape, "f32[2, 1, 64] × 4");
}

/// `kernel` gives its declared output, parameters and MACs, as expressions of the block that
/// declares it; a negative size and an unknown dtype are errors.
#[test]
fn a_declared_kernel_has_the_shape_params_and_macs_it_declares() {
    let s = serve(
        r#"block router(x, experts: int, k: int = 2) {
    n = x.shape[0]
    d = x.shape[1]
    return kernel([x], [n, k], dtype="i64", params=d * experts, macs=n * d * experts)
}
model m() {
    input x: f32[N, 64]
    return router(x, 8)
}
infer serve { model m()  batch 4 }
"#,
    );
    let row = s.lines.iter().find(|l| l.source.starts_with("return kernel")).expect("the kernel's line");
    assert_eq!((row.shape.as_str(), row.params, row.macs), ("i64[4, 2]", 512, 2048));
    assert_eq!(s.params, 512);
    let errors = crate::support::codes(
        "model m() {\n    input x: f32[N, 4]\n    a = kernel([x], [-1, 4])\n    b = kernel([x], x.shape, scratch=256)\n    return kernel([x], [2], dtype=\"f33\")\n}\ninfer s { model m()  batch 1 }\n",
    );
    assert_eq!(errors, ["E0501", "E0501", "E0501"]);
}

/// An op's list-of-integers parameter takes one integer, as PyTorch's `dim=1` for `dim=(1,)`
/// (`mean(y, dim=1)`); a block's `[int]` parameter does not (its body reads a list).
#[test]
fn one_integer_for_an_ops_list_of_integers() {
    let s = serve(
        r#"model m() {
    input x: f32[N, 8, 4]
    a = mean(x, dim=1)
    b = mean(x, dim=[1])
    return a + b
}
infer serve { model m()  batch 2 }
"#,
    );
    assert_eq!(s.lines[1].shape, "f32[2, 4]");
    assert_eq!(s.lines[1].shape, s.lines[2].shape);
    let codes =
        crate::support::codes("block b(x, widths: [int]) {\n    return x\n}\nblock c(x) {\n    return b(x, 3)\n}\n");
    assert!(codes.contains(&"E0211"), "{codes:?}");
}

/// `outer` of two vectors is their `[n, m]` product; anything but two vectors is E0501.
#[test]
fn outer_of_two_vectors() {
    let s = serve(
        r#"model m() {
    input t: f32[S]
    input f: f32[64]
    return outer(t, f)
}
infer serve { model m()  seq 100 }
"#,
    );
    assert_eq!(s.lines.last().map(|l| l.shape.as_str()), Some("f32[100, 64]"));
    let codes = crate::support::codes(
        "model m() {\n    input x: f32[N, 4]\n    return outer(x, x)\n}\ninfer s { model m()  batch 2 }\n",
    );
    assert_eq!(codes, ["E0501"]);
}

// `layer_norm(x, weight, bias)` as `F.layer_norm(x, [D], weight, bias)`: the output is `x`'s
// type, the op owns no parameters (the given tensors are the model's), and a weight or bias
// that is not `[D]`, or not a tensor, is E0501 (PyTorch: "Expected weight to be of same shape
// as normalized_shape").
#[test]
fn layer_norm_takes_the_weight_and_bias_it_is_given() {
    let cases = [
        ("layer_norm(x, w, b)", Ok(("f32[2, 16, 64]", 128))),
        ("layer_norm(x, w + 1.0)", Ok(("f32[2, 16, 64]", 128))),
        ("layer_norm(x)", Ok(("f32[2, 16, 64]", 128))),
        ("layer_norm(x, bias=b)", Ok(("f32[2, 16, 64]", 128))),
        ("layer_norm(x, reshape(w, [8, 8]))", Err("E0501")),
        ("layer_norm(x, w, parameter([16]))", Err("E0501")),
        ("layer_norm(x, 2.0)", Err("E0501")),
    ];
    for (call, expected) in cases {
        let src = format!(
            "model m() {{\n    input x: f32[N, 16, 64]\n    w = parameter([64])\n    b = parameter([64])\n    return {call}\n}}\ninfer serve {{ model m()  batch 2 }}\n"
        );
        match expected {
            Ok((shape, params)) => {
                let (db, files) = load(&[("main.net", &src)]);
                assert_clean(&db, &files);
                let graph = scenario_graph_of(&db, files[0], "serve");
                assert_eq!(outputs_of(&graph, "layer_norm"), [shape], "{call}");
                assert_eq!(scenario_of(&db, files[0], "serve").params, params, "{call}");
            }
            Err(code) => assert_eq!(codes(&src), [code], "{call}"),
        }
    }
}

// Complex numbers as PyTorch makes them: `view_as_complex` sees float32 (float64) pairs as
// complex64 (complex128) and drops the pair dimension, `view_as_real` adds it back, `polar`
// of two float32 tensors is complex64 in their broadcast shape, and a complex tensor times a
// number or a float tensor stays complex (`torch.result_type`). A half or odd-sized pair, a
// real tensor seen as real, or polar of mixed dtypes is E0501 (PyTorch: "view_as_complex is
// only supported for float and double tensors", "Tensor must have a last dimension of size
// 2", "view_as_real is only supported for complex tensors", "Expected object of scalar type
// Float but got scalar type Double").
#[test]
fn complex_numbers_are_views_of_float_pairs() {
    let cases = [
        ("view_as_complex(reshape(x, [2, 16, 32, 2]))", Ok(("view_as_complex", "c64[2, 16, 32]"))),
        ("view_as_complex(reshape(to(x, \"f64\"), [2, 16, 32, 2]))", Ok(("view_as_complex", "c128[2, 16, 32]"))),
        ("view_as_real(view_as_complex(reshape(x, [2, 16, 32, 2])))", Ok(("view_as_real", "f32[2, 16, 32, 2]"))),
        ("polar(full_like(x, 1.0), x)", Ok(("polar", "c64[2, 16, 64]"))),
        ("polar(full_like(x, 1.0), mean(x, dim=0))", Ok(("polar", "c64[2, 16, 64]"))),
        ("polar(full_like(x, 1.0), x) * 2.0", Ok(("mul", "c64[2, 16, 64]"))),
        ("polar(full_like(x, 1.0), x) * x", Ok(("mul", "c64[2, 16, 64]"))),
        ("polar(full_like(x, 1.0), to(x, \"f64\")) * x", Err("E0501")),
        ("view_as_complex(reshape(to(x, \"bf16\"), [2, 16, 32, 2]))", Err("E0501")),
        ("view_as_complex(x)", Err("E0501")),
        ("view_as_real(x)", Err("E0501")),
    ];
    for (call, expected) in cases {
        let src = format!(
            "model m() {{\n    input x: f32[N, 16, 64]\n    return {call}\n}}\ninfer serve {{ model m()  batch 2 }}\n"
        );
        match expected {
            Ok((op, shape)) => {
                let (db, files) = load(&[("main.net", &src)]);
                assert_clean(&db, &files);
                let graph = scenario_graph_of(&db, files[0], "serve");
                assert_eq!(outputs_of(&graph, op).last().map(String::as_str), Some(shape), "{call}");
            }
            Err(code) => assert_eq!(codes(&src), [code], "{call}"),
        }
    }
}
