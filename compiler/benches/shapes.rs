//! Elaboration and shape inference speed: a 96-layer GPT-3-sized transformer (d = 12288),
//! each calibration model and a generated 12,500-line file (1,250 blocks chained by one
//! model), through the database from a cold start and after a one-line edit, and the memory
//! simulation of the elaborated graph. Prints a table; run with
//! `cargo bench -p netc-compiler --bench shapes`.

mod support;

use std::time::{Duration, Instant};

use netc::costs::scenario_costs;
use netc::db::SourceFile;
use netc::diagnostics::{FileName, Severity};
use netc::elaborate::scenario_graph;
use netc::host::{Database, file_diagnostics};
use netc::semantics::files::{ItemLoc, syntax_tree};
use netc::syntax::Item;
use support::generated;

const GPT3: &str = r#"
## One pre-norm transformer layer, GPT-3 style.
block layer(x, d: int, heads: int) {
    n = x.shape[0]
    s = x.shape[1]
    h = layernorm(x)
    q = reshape(linear(h, d), [n, s, heads, d / heads])
    k = reshape(linear(h, d), [n, s, heads, d / heads])
    v = reshape(linear(h, d), [n, s, heads, d / heads])
    a = sdpa(permute(q, [0, 2, 1, 3]), permute(k, [0, 2, 1, 3]), permute(v, [0, 2, 1, 3]), causal=true, flash=true)
    a = reshape(permute(a, [0, 2, 1, 3]), [n, s, d])
    x = x + linear(a, d)
    h = layernorm(x)
    return x + linear(gelu(linear(h, 4 * d)), d)
}

model gpt3(vocab: int = 50257, d: int = 12288, heads: int = 96, layers: int = 96) {
    input ids: i64[N, S]
    x = embedding(ids, vocab, d, share="wte")
    x = repeat layers layer(x, d, heads)
    return linear(layernorm(x), vocab, bias=false, share="wte")
}

train pretrain { model gpt3()  batch 8  seq 2048  optimizer adam  precision bf16  checkpoint }
"#;

/// GPT-3's layer, `layers` of them inside one block call, trained with checkpointing: the
/// whole model is one checkpoint segment, recomputed in one piece (the simulation must stay
/// linear in its ops).
fn one_segment(layers: usize) -> String {
    let (layer, _) = GPT3.split_once("model gpt3").expect("GPT3 has a model");
    format!(
        "{layer}
block stack(x, d: int, heads: int, layers: int) {{
    return repeat layers layer(x, d, heads)
}}

model deep(d: int = 256, heads: int = 4) {{
    input x: f32[N, S, 256]
    return stack(x, d, heads, {layers})
}}

train finetune {{ model deep()  batch 1  seq 128  optimizer adam  checkpoint }}
"
    )
}

const CALIBRATION: &[(&str, &str)] = &[
    ("simple_cnn", include_str!("../../tests/fixtures/calibration/simple_cnn.net")),
    ("mlp", include_str!("../../tests/fixtures/calibration/mlp.net")),
    ("resnet18", include_str!("../../tests/fixtures/calibration/resnet18.net")),
    ("vgg16", include_str!("../../tests/fixtures/calibration/vgg16.net")),
    ("mobilenet_v2", include_str!("../../tests/fixtures/calibration/mobilenet_v2.net")),
    ("alexnet", include_str!("../../tests/fixtures/calibration/alexnet.net")),
    ("gpt2_small", include_str!("../../tests/fixtures/calibration/gpt2_small.net")),
];

/// The best of `runs` timings of `f`.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let value = f();
        best = best.min(start.elapsed());
        out = Some(value);
    }
    (best, out.expect("runs > 0"))
}

fn scenarios(db: &Database, file: SourceFile) -> Vec<ItemLoc<'_>> {
    syntax_tree(db, file)
        .iter()
        .enumerate()
        .filter(|(_, item)| matches!(item, Item::Scenario(_)))
        .map(|(index, _)| ItemLoc::new(db, file, index as u32))
        .collect()
}

fn main() {
    println!(
        "{:<14} {:>8} {:>16} {:>18} {:>12} {:>14} {:>12}",
        "model", "nodes", "params", "MACs", "cold", "batch edit", "simulate"
    );
    let mut cases: Vec<(&str, String)> = vec![("gpt3_96x12288", GPT3.to_string())];
    cases.extend(CALIBRATION.iter().map(|(n, t)| (*n, t.to_string())));
    cases.push(("generated", generated(1_250)));
    cases.push(("segment_800", one_segment(800)));
    cases.push(("segment_3200", one_segment(3_200)));
    for (name, text) in cases {
        let (cold, (nodes, params, macs)) = best(5, || {
            let mut db = Database::new();
            let file = db.set_file(FileName::new(format!("{name}.net")), text.clone());
            // Lints may help (a dominant linear layer); errors would mean the model is not elaborated.
            let errors = file_diagnostics(&db, file).iter().filter(|d| d.severity == Severity::Error).count();
            assert_eq!(errors, 0, "{name} has errors");
            let loc = scenarios(&db, file)[0];
            let graph = scenario_graph(&db, loc).as_ref().expect("elaborates");
            let params = graph.params().and_then(|d| d.known()).unwrap_or(-1);
            let macs = graph.macs().and_then(|d| d.known()).unwrap_or(-1);
            (graph.nodes.len(), params, macs)
        });
        // The simulation alone, of a graph already elaborated.
        let mut simulation = Duration::MAX;
        for _ in 0..5 {
            let mut db = Database::new();
            let file = db.set_file(FileName::new(format!("{name}.net")), text.clone());
            let loc = scenarios(&db, file)[0];
            let _ = scenario_graph(&db, loc);
            let start = Instant::now();
            assert!(scenario_costs(&db, loc).is_some(), "{name} is simulated");
            simulation = simulation.min(start.elapsed());
        }
        // A one-line edit that changes the scenario (its batch size): elaborated again.
        let mut db = Database::new();
        let file = db.set_file(FileName::new(format!("{name}.net")), text.clone());
        let _ = file_diagnostics(&db, file);
        let texts = [text.clone(), bump_batch(&text)];
        let mut turn = 0;
        let (edit, _) = best(6, || {
            turn += 1;
            db.set_file(FileName::new(format!("{name}.net")), texts[turn % 2].clone());
            let loc = scenarios(&db, file)[0];
            let _ = file_diagnostics(&db, file);
            scenario_graph(&db, loc).is_some()
        });
        println!(
            "{name:<14} {nodes:>8} {params:>16} {macs:>18} {:>10.2}ms {:>12.2}ms {:>10.2}ms",
            ms(cold),
            ms(edit),
            ms(simulation)
        );
    }
    println!(
        "\ncold: a new database to the file's diagnostics and the first scenario's graph; batch edit:\nthe batch size changed, then the diagnostics and the graph again; simulate: the first\nscenario's memory simulation (scenario_costs) of a graph already elaborated. Best of 5-6."
    );
}

/// The text with the first `batch N` setting changed to `batch N+1`.
fn bump_batch(text: &str) -> String {
    let at = text
        .match_indices("batch ")
        .map(|(i, _)| i + "batch ".len())
        .find(|&i| text[i..].starts_with(|c: char| c.is_ascii_digit()))
        .expect("a scenario sets its batch");
    let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().expect("a batch size");
    format!("{}{}{}", &text[..at], n + 1, &text[at + digits.len()..])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
