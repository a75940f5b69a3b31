#[path = "../benches/support/mod.rs"]
mod support;
use netc::costs::scenario_lines;
use netc::db::{Database, ItemLoc, model_graph, scenario_graph, syntax_tree};
use netc::diagnostics::{FileName, TextRange};
use netc::ide::{HintConfig, ScenarioRef, inlay_hints};
use netc::report::unlocated_lines;
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let which: usize = std::env::args().nth(1).map_or(5, |s| s.parse().unwrap());
    let n: usize = std::env::args().nth(2).map_or(400, |s| s.parse().unwrap());
    let case = support::cases().into_iter().nth(2).unwrap();
    let (from, to) = match which {
        9 => ("    y = b600(y, 64)\n", "    y = b601(y, 64)\n"),
        8 => ("    y = b600(y, 64)\n", "    y = b600(y, 64) # c\n"),
        _ => case.edits[which].unwrap(),
    };
    let text = case.text.clone();
    let edited = text.replacen(from, to, 1);
    let name = FileName::new(case.name);
    let chosen = Some(ScenarioRef { file: name.clone(), name: case.scenario.into() });
    let end = text.match_indices('\n').nth(59).unwrap().0 as u32;
    let range = Some(TextRange::new(0, end));
    let config = HintConfig::default();
    let mut db = Database::new();
    let file = db.set_file(name.clone(), text.clone());
    let _ = inlay_hints(&db, file, range, chosen.as_ref(), &config);
    let mut parts = vec![vec![]; 8];
    for i in 0..n {
        let t = std::time::Instant::now();
        let mut marks = vec![];
        db.set_file(name.clone(), if i % 2 == 0 { edited.clone() } else { text.clone() });
        marks.push(t.elapsed());
        let _ = syntax_tree(&db, file);
        marks.push(t.elapsed());
        if std::env::var("MG").is_ok() {
            let _ = model_graph(&db, ItemLoc::new(&db, file, 1250));
        }
        marks.push(t.elapsed());
        let _ = scenario_graph(&db, ItemLoc::new(&db, file, 1251));
        marks.push(t.elapsed());
        let _ = scenario_lines(&db, ItemLoc::new(&db, file, 1251));
        marks.push(t.elapsed());
        let _ = unlocated_lines(&db, ItemLoc::new(&db, file, 1251));
        marks.push(t.elapsed());
        let _ = inlay_hints(&db, file, range, chosen.as_ref(), &config);
        marks.push(t.elapsed());
        let mut prev = 0.0;
        for (k, m) in marks.iter().enumerate() {
            let v = m.as_secs_f64() * 1000.0;
            parts[k].push(v - prev);
            prev = v;
        }
        parts[7].push(prev);
    }
    for (k, label) in
        ["set_file", "syntax", "model_graph", "scenario_graph", "scenario_lines", "unlocated", "hints", "total"]
            .iter()
            .enumerate()
    {
        let mut v = parts[k].clone();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("{label:>15} p10 {:.2} median {:.2}", v[n / 10], v[n / 2]);
    }
}
