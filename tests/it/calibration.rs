//! Calibration: netc's parameters, MACs and per-layer shapes against PyTorch's own figures.
//!
//! Each model of the calibration harness is written in `tests/fixtures/calibration/<model>.net`
//! (as torchvision or the harness builds it) with an `infer` scenario at batch 1, and the figures
//! PyTorch measured for it are in `<model>.json` next to it (copied from the harness's
//! `results.json`, see that folder's README.md). For each model the test elaborates the
//! scenario through the database and requires:
//!
//! - no diagnostics;
//! - the model's input and output shapes, total parameters and total MACs equal to PyTorch's,
//!   exactly;
//! - layer by layer: each PyTorch layer that has a counterpart op ([`LAYER_OPS`]) is matched with
//!   the graph's nodes of that op, both in execution order (a layer called `calls` times takes
//!   `calls` nodes), with equal input shapes, output shapes, parameters and MACs; every node of
//!   those ops must be matched, except the ones PyTorch runs as functions ([`FUNCTIONAL`]).
//!
//! Every mismatch of every model is collected, and the test fails once, listing them all; each
//! message names the model, the PyTorch layer path and the `.net` line of the node.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use netc::db::lookup_file;
use netc::diagnostics::FileName;
use netc::elaborate::scenario_graph;
use netc::graph::{Graph, Node, Site, TensorId};
use netc::host::{Database, file_diagnostics};
use netc::render;
use netc::semantics::files::{ItemLoc, parse_file, syntax_tree};
use netc::shapes::Dim;
use netc::syntax::{Item, NodeId, ScenarioKind};
use serde_json::Value;

/// The calibration models, each a `<model>.net` and a `<model>.json` fixture.
const MODELS: &[&str] =
    &["simple_cnn", "simple_cnn_relu", "mlp", "resnet18", "vgg16", "mobilenet_v2", "alexnet", "gpt2_small"];

/// Where the fixtures are, relative to the workspace root (for messages).
const FIXTURES: &str = "tests/fixtures/calibration";

/// What is compared between a PyTorch layer and its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    /// Input shapes, output shapes, parameters and MACs.
    Full,
    /// Parameters and MACs only: the layer is a module whose own cost is ops inside its
    /// forward, and its shapes are those of the whole module, not of those ops.
    Cost,
}

/// PyTorch layer type -> the netc op, how many nodes of that op one call makes, what is
/// compared.
const LAYER_OPS: &[(&str, &str, usize, Compare)] = &[
    ("Conv2d", "conv2d", 1, Compare::Full),
    ("Linear", "linear", 1, Compare::Full),
    // GPT-2's output head: F.linear(x, wte.weight), a linear op sharing the embedding's weight.
    ("TiedLMHead", "linear", 1, Compare::Full),
    ("BatchNorm2d", "batchnorm", 1, Compare::Full),
    ("LayerNorm", "layernorm", 1, Compare::Full),
    ("Embedding", "embedding", 1, Compare::Full),
    ("ReLU", "relu", 1, Compare::Full),
    ("ReLU6", "relu6", 1, Compare::Full),
    ("GELU", "gelu", 1, Compare::Full),
    ("Dropout", "dropout", 1, Compare::Full),
    ("MaxPool2d", "maxpool2d", 1, Compare::Full),
    ("AdaptiveAvgPool2d", "adaptive_avgpool2d", 1, Compare::Full),
    ("Flatten", "flatten", 1, Compare::Full),
    // The harness's explicit attention: its own MACs are its two torch.matmul calls (q k^T and
    // att v); its Linear and Dropout children are rows of their own.
    ("GPT2Attention", "matmul", 2, Compare::Cost),
];

/// PyTorch layer types without a counterpart in a graph, skipped, and why.
const SKIPPED_TYPES: &[(&str, &str)] = &[
    // GPT2Small is listed because it owns a buffer: the (1, 1, 1024, 1024) bool causal mask.
    // It has no parameters or MACs of its own; the `.net` leaves the mask out (masked_fill
    // changes no shape and costs no MAC).
    ("GPT2Small", "the root module, listed for its causal-mask buffer only"),
];

/// Nodes of [`LAYER_OPS`] ops that have no layer row because the PyTorch model calls a function
/// rather than a module: (model, op, how many, the PyTorch call).
const FUNCTIONAL: &[(&str, &str, usize, &str)] = &[
    ("resnet18", "flatten", 1, "torch.flatten(x, 1)"),
    ("vgg16", "flatten", 1, "torch.flatten(x, 1)"),
    ("alexnet", "flatten", 1, "torch.flatten(x, 1)"),
    ("mobilenet_v2", "adaptive_avgpool2d", 1, "nn.functional.adaptive_avg_pool2d(x, (1, 1))"),
    ("mobilenet_v2", "flatten", 1, "torch.flatten(x, 1)"),
];

/// One row of a fixture's `layers`.
struct Layer {
    path: String,
    ty: String,
    calls: usize,
    inputs: Vec<Vec<i128>>,
    outputs: Vec<Vec<i128>>,
    same_shapes: bool,
    params: i128,
    macs: i128,
}

fn int(v: &Value, what: &str) -> i128 {
    v.as_i64().unwrap_or_else(|| panic!("{what}: not an integer: {v}")) as i128
}

fn shape(v: &Value, what: &str) -> Vec<i128> {
    v.as_array().unwrap_or_else(|| panic!("{what}: not a shape: {v}")).iter().map(|d| int(d, what)).collect()
}

fn shapes(v: &Value, what: &str) -> Vec<Vec<i128>> {
    v.as_array().unwrap_or_else(|| panic!("{what}: not a list of shapes: {v}")).iter().map(|s| shape(s, what)).collect()
}

fn layers(fixture: &Value, model: &str) -> Vec<Layer> {
    let rows = fixture["layers"].as_array().unwrap_or_else(|| panic!("{model}.json: no `layers`"));
    rows.iter()
        .map(|row| {
            let what = format!("{model}.json: {}", row["path"]);
            Layer {
                path: row["path"].as_str().unwrap_or_else(|| panic!("{what}: no path")).to_string(),
                ty: row["type"].as_str().unwrap_or_else(|| panic!("{what}: no type")).to_string(),
                calls: int(&row["calls"], &what) as usize,
                inputs: if row["input_shapes"].is_null() { Vec::new() } else { shapes(&row["input_shapes"], &what) },
                outputs: if row["output_shapes"].is_null() { Vec::new() } else { shapes(&row["output_shapes"], &what) },
                same_shapes: row["all_calls_same_shapes"].as_bool().unwrap_or(false),
                params: int(&row["params"], &what),
                macs: int(&row["macs"], &what),
            }
        })
        .collect()
}

fn fmt_shape(dims: &[i128]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn fmt_shapes(shapes: &[Vec<i128>]) -> String {
    let parts: Vec<String> = shapes.iter().map(|s| fmt_shape(s)).collect();
    parts.join(", ")
}

/// A tensor's shape, with an unknown (symbolic) dimension as -1, which no PyTorch shape has.
fn tensor_shape(graph: &Graph, id: TensorId) -> Vec<i128> {
    graph.tensor(id).shape.iter().map(|d| d.known().unwrap_or(-1)).collect()
}

fn known(d: &Dim) -> i128 {
    d.known().unwrap_or(-1)
}

/// `file:line` of a site.
fn line_of(db: &Database, site: &Site) -> String {
    let Some(file) = lookup_file(db, &site.file) else { return format!("{}:?", site.file) };
    let range = parse_file(db, file)
        .spans
        .get(site.at.item as usize)
        .map(|spans| spans.range(NodeId(site.at.node)))
        .unwrap_or_default();
    format!("{}:{}", site.file, render::line_col(file.text(db), range.start).line)
}

/// Where a node comes from: its line, then the block calls that led there, innermost first.
fn origin(db: &Database, node: &Node) -> String {
    let mut out = line_of(db, &node.origin.expr);
    if !node.origin.chain.is_empty() {
        let calls: Vec<String> = node.origin.chain.iter().rev().map(|site| line_of(db, site)).collect();
        let _ = write!(out, " (called from {})", calls.join(" <- "));
    }
    out
}

/// What one model's check found.
struct Outcome {
    summary: String,
    failures: Vec<String>,
}

fn check_model(model: &str) -> Outcome {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/calibration");
    let read =
        |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{FIXTURES}/{name}: {e}"));
    let fixture: Value = serde_json::from_str(&read(&format!("{model}.json")))
        .unwrap_or_else(|e| panic!("{FIXTURES}/{model}.json: {e}"));
    let name = format!("{FIXTURES}/{model}.net");
    let text = read(&format!("{model}.net"));

    let mut failures = Vec::new();
    let mut fail = |message: String| failures.push(format!("{model}: {message}"));

    let mut db = Database::new();
    let file = db.set_file(FileName::new(name.as_str()), text.clone());

    // Lints are advice (the MLP's first layer holds most of its parameters, as it should).
    let diagnostics: Vec<_> =
        file_diagnostics(&db, file).iter().filter(|d| !d.code.info().is_lint()).cloned().collect();
    if !diagnostics.is_empty() {
        let mut sources: BTreeMap<FileName, String> = BTreeMap::new();
        sources.insert(FileName::new(name.as_str()), text.clone());
        for label in diagnostics.iter().flat_map(|d| &d.labels) {
            if let Some(f) = lookup_file(&db, &label.file) {
                sources.entry(label.file.clone()).or_insert_with(|| f.text(&db).clone());
            }
        }
        fail(format!("diagnostics:\n{}", render::short(&diagnostics, &sources, false).trim_end()));
    }

    let scenario = syntax_tree(&db, file)
        .iter()
        .position(|item| matches!(item, Item::Scenario(s) if s.kind == ScenarioKind::Infer))
        .unwrap_or_else(|| panic!("{name}: no `infer` scenario"));
    let Some(graph) = scenario_graph(&db, ItemLoc::new(&db, file, scenario as u32)).as_ref() else {
        fail("the scenario could not be elaborated".to_string());
        return Outcome { summary: format!("{model}: not elaborated"), failures };
    };

    // Totals.
    let (params, macs) = (graph.params().as_ref().map_or(-1, known), graph.macs().as_ref().map_or(-1, known));
    let (torch_params, torch_macs) = (int(&fixture["total_params"], model), int(&fixture["total_macs_bs1"], model));
    if params != torch_params {
        fail(format!("total params: netc {params}, PyTorch {torch_params} (difference {})", params - torch_params));
    }
    if macs != torch_macs {
        fail(format!("total MACs at batch 1: netc {macs}, PyTorch {torch_macs} (difference {})", macs - torch_macs));
    }

    // The model's input and outputs.
    let torch_input = shape(&fixture["input_shape"], model);
    match graph.inputs.first() {
        Some((input, id)) if tensor_shape(graph, *id) != torch_input => fail(format!(
            "input `{input}`: netc {}, PyTorch {}",
            fmt_shape(&tensor_shape(graph, *id)),
            fmt_shape(&torch_input)
        )),
        None => fail("the model has no input".to_string()),
        _ => {}
    }
    let outputs: Vec<Vec<i128>> = graph.outputs.iter().map(|t| tensor_shape(graph, *t)).collect();
    let torch_outputs = shapes(&fixture["output_shapes"], model);
    if outputs != torch_outputs {
        fail(format!("outputs: netc {}, PyTorch {}", fmt_shapes(&outputs), fmt_shapes(&torch_outputs)));
    }

    // Layer by layer, per op, in execution order.
    let layers = layers(&fixture, model);
    let mut streams: BTreeMap<&str, Vec<&Node>> = BTreeMap::new();
    for (_, op, _, _) in LAYER_OPS {
        streams.insert(op, graph.nodes.iter().filter(|n| n.op.name() == *op).map(|n| &**n).collect());
    }
    let mut next: BTreeMap<&str, usize> = BTreeMap::new();
    let mut compared = 0;
    for layer in &layers {
        if SKIPPED_TYPES.iter().any(|(ty, _)| *ty == layer.ty) {
            continue;
        }
        let Some(&(_, op, per_call, how)) = LAYER_OPS.iter().find(|(ty, ..)| *ty == layer.ty) else {
            fail(format!(
                "layer `{}`: type {} has no entry in LAYER_OPS or SKIPPED_TYPES (tests/it/calibration.rs)",
                layer.path, layer.ty
            ));
            continue;
        };
        let stream = &streams[op];
        let start = next.get(op).copied().unwrap_or(0);
        let wanted = layer.calls * per_call;
        if start + wanted > stream.len() {
            fail(format!(
                "layer `{}` ({}): no `{op}` node left for it: the graph has {} `{op}` nodes, {start} already matched",
                layer.path,
                layer.ty,
                stream.len()
            ));
            next.insert(op, stream.len());
            continue;
        }
        next.insert(op, start + wanted);
        compared += 1;
        let nodes = &stream[start..start + wanted];
        let at = origin(&db, nodes[0]);
        let what = format!("layer `{}` ({}) vs `{op}` at {at}", layer.path, layer.ty);
        let node_params: i128 = nodes.iter().map(|n| known(&n.params)).sum();
        if node_params != layer.params {
            fail(format!("{what}: params netc {node_params}, PyTorch {}", layer.params));
        }
        let node_macs: i128 = nodes.iter().map(|n| known(&n.result.macs)).sum();
        if node_macs != layer.macs {
            fail(format!("{what}: MACs netc {node_macs}, PyTorch {}", layer.macs));
        }
        if how == Compare::Cost || layer.calls == 0 {
            continue;
        }
        // The first call's shapes, and every call's when PyTorch saw the same shapes each time.
        let checked_calls = if layer.same_shapes { layer.calls } else { 1 };
        for (call, node) in nodes.iter().take(checked_calls).enumerate() {
            let what =
                if call == 0 { what.clone() } else { format!("{what}, call {} at {}", call + 1, origin(&db, node)) };
            let inputs: Vec<Vec<i128>> = node.inputs.iter().map(|t| tensor_shape(graph, *t)).collect();
            if inputs != layer.inputs {
                fail(format!(
                    "{what}: input shapes netc {}, PyTorch {}",
                    fmt_shapes(&inputs),
                    fmt_shapes(&layer.inputs)
                ));
            }
            let outputs: Vec<Vec<i128>> = node.outputs.iter().map(|t| tensor_shape(graph, *t)).collect();
            if outputs != layer.outputs {
                fail(format!(
                    "{what}: output shapes netc {}, PyTorch {}",
                    fmt_shapes(&outputs),
                    fmt_shapes(&layer.outputs)
                ));
            }
        }
    }

    // Every node of a compared op is a layer's, or one of the model's functional calls.
    for (op, stream) in &streams {
        let matched = next.get(op).copied().unwrap_or(0);
        let functional: Vec<_> = FUNCTIONAL.iter().filter(|(m, o, ..)| *m == model && o == op).collect();
        let expected: usize = functional.iter().map(|(_, _, count, _)| count).sum();
        if !functional.is_empty() && matched > 0 {
            panic!("{model}: `{op}` is both a module and a function; FUNCTIONAL cannot tell which node is which");
        }
        if stream.len() - matched != expected {
            let extra: Vec<String> = stream[matched..].iter().map(|n| origin(&db, n)).collect();
            let calls: Vec<&str> = functional.iter().map(|(.., call)| *call).collect();
            fail(format!(
                "{} `{op}` nodes match no PyTorch layer (expected {expected}{}): {}",
                stream.len() - matched,
                if calls.is_empty() { String::new() } else { format!(": {}", calls.join(", ")) },
                extra.join(", ")
            ));
        }
    }

    let summary = format!(
        "{model}: params netc {params} / PyTorch {torch_params}, MACs netc {macs} / PyTorch {torch_macs}, \
         {compared} layers compared, {} mismatches",
        failures.len()
    );
    Outcome { summary, failures }
}

#[test]
fn calibration_models_match_pytorch() {
    let mut failures = Vec::new();
    for model in MODELS {
        let outcome = check_model(model);
        println!("{}", outcome.summary);
        failures.extend(outcome.failures);
    }
    assert!(failures.is_empty(), "{} calibration mismatches:\n{}", failures.len(), failures.join("\n"));
}
