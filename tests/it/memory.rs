//! Accuracy of the memory simulation against PyTorch: every calibration model, every
//! measured scenario (inference with and without no_grad, SGD, momentum, Adam for-loop and
//! foreach), both batch sizes, on the `cpu` device whose semantics the measurements used.
//!
//! The measured figures are in tests/fixtures/calibration/memory.json, copied from the
//! calibration harness's results.json (PyTorch 2.15.0, exact live storage bytes; see the
//! README there). The bar: allocated peak within 5 %, never under by more than 5 %, the
//! peak's phase right, and each category of the breakdown at the peak within 10 % of the
//! peak.

use std::collections::BTreeMap;

use netc::costs::scenario_costs;
use netc::db::{Database, ItemLoc, file_diagnostics, syntax_tree};
use netc::diagnostics::FileName;
use netc::syntax::Item;
use serde_json::Value;

const MODELS: &[(&str, &str)] = &[
    ("simple_cnn", include_str!("../fixtures/calibration/simple_cnn.net")),
    ("simple_cnn_relu", include_str!("../fixtures/calibration/simple_cnn_relu.net")),
    ("mlp", include_str!("../fixtures/calibration/mlp.net")),
    ("resnet18", include_str!("../fixtures/calibration/resnet18.net")),
    ("vgg16", include_str!("../fixtures/calibration/vgg16.net")),
    ("mobilenet_v2", include_str!("../fixtures/calibration/mobilenet_v2.net")),
    ("alexnet", include_str!("../fixtures/calibration/alexnet.net")),
    ("gpt2_small", include_str!("../fixtures/calibration/gpt2_small.net")),
];

const SCENARIOS: &[(&str, &str)] = &[
    ("infer_nograd", "infer {name} {{ model {model}()  batch {batch}{seq}  no_grad  eval  device cpu }}"),
    ("infer_grad_eval", "infer {name} {{ model {model}()  batch {batch}{seq}  eval  device cpu }}"),
    ("train_sgd", "train {name} {{ model {model}()  batch {batch}{seq}  optimizer sgd  device cpu }}"),
    ("train_sgd_momentum", "train {name} {{ model {model}()  batch {batch}{seq}  optimizer momentum  device cpu }}"),
    ("train_adam", "train {name} {{ model {model}()  batch {batch}{seq}  optimizer adam  device cpu }}"),
    (
        "train_adam_foreach",
        "train {name} {{ model {model}()  batch {batch}{seq}  optimizer adam(foreach=true)  device cpu }}",
    ),
];

/// One predicted-vs-measured comparison.
pub struct Case {
    pub model: &'static str,
    pub batch: String,
    pub scenario: &'static str,
    pub predicted: i128,
    pub measured: i128,
    pub predicted_phase: String,
    pub measured_phase: String,
    /// Worst category difference at the peak, as a fraction of the measured peak.
    pub worst_category: (String, f64),
}

impl Case {
    /// Relative error of the peak.
    pub fn error(&self) -> f64 {
        (self.predicted - self.measured) as f64 / self.measured as f64
    }
}

fn model_name(text: &str) -> &str {
    let at = text.find("\nmodel ").expect("a model") + "\nmodel ".len();
    let end = text[at..].find('(').expect("parameters") + at;
    &text[at..end]
}

/// Runs every calibration case.
pub fn cases() -> Vec<Case> {
    let fixture: Value =
        serde_json::from_str(include_str!("../fixtures/calibration/memory.json")).expect("the fixture parses");
    let mut out = Vec::new();
    for (model, text) in MODELS {
        let measured = &fixture["models"][model];
        let name = model_name(text);
        for (batch, figures) in measured.as_object().expect("batches") {
            let b = batch.trim_start_matches("bs");
            let seq = if *model == "gpt2_small" { "  seq 512" } else { "" };
            let mut source = text.to_string();
            for (scenario, template) in SCENARIOS {
                let line = template
                    .replace("{name}", &format!("c_{scenario}"))
                    .replace("{model}", name)
                    .replace("{batch}", b)
                    .replace("{seq}", seq)
                    .replace("{{", "{")
                    .replace("}}", "}");
                source.push_str(&format!("\n{line}\n"));
            }
            let mut db = Database::new();
            let file = db.set_file(FileName::new(format!("{model}.net")), source);
            let diagnostics = file_diagnostics(&db, file);
            assert!(diagnostics.is_empty(), "{model}: {diagnostics:?}");
            let scenarios: BTreeMap<String, u32> = syntax_tree(&db, file)
                .items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| match item {
                    Item::Scenario(s) => Some((s.name.text.clone(), i as u32)),
                    _ => None,
                })
                .collect();
            for (scenario, _) in SCENARIOS {
                let m = &figures[*scenario];
                let index = scenarios[&format!("c_{scenario}")];
                let costs = scenario_costs(&db, ItemLoc::new(&db, file, index)).as_ref().expect("simulates");
                let peak = &costs.simulation.peak;
                let measured_peak = m["peak_bytes"].as_i64().expect("peak") as i128;
                let breakdown = serde_json::to_value(peak.breakdown).expect("serializes");
                let mut worst = (String::new(), 0.0f64);
                for (category, value) in m["breakdown"].as_object().expect("breakdown") {
                    let predicted = breakdown.get(category).and_then(Value::as_i64).unwrap_or(0);
                    let diff = (predicted - value.as_i64().unwrap_or(0)).abs() as f64 / measured_peak as f64;
                    if diff > worst.1 {
                        worst = (category.clone(), diff);
                    }
                }
                out.push(Case {
                    model,
                    batch: batch.clone(),
                    scenario,
                    predicted: peak.bytes,
                    measured: measured_peak,
                    predicted_phase: peak.phase.name().to_string(),
                    measured_phase: m["phase"].as_str().unwrap_or("").to_string(),
                    worst_category: worst,
                });
            }
        }
    }
    out
}

#[test]
fn peaks_match_pytorch() {
    let cases = cases();
    let mut report = String::new();
    for c in &cases {
        report.push_str(&format!(
            "{:<16} {:>5} {:<20} predicted {:>14} measured {:>14} {:>+7.2}%  phase {:<9} vs {:<9} worst {} {:.1}%\n",
            c.model,
            c.batch,
            c.scenario,
            c.predicted,
            c.measured,
            100.0 * c.error(),
            c.predicted_phase,
            c.measured_phase,
            c.worst_category.0,
            100.0 * c.worst_category.1
        ));
    }
    println!("{report}");
    let failures: Vec<&Case> = cases
        .iter()
        .filter(|c| c.error().abs() > 0.05 || c.predicted_phase != c.measured_phase || c.worst_category.1 > 0.10)
        .collect();
    assert!(failures.is_empty(), "{} of {} cases off:\n{report}", failures.len(), cases.len());
}
