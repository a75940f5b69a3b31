#[path = "../benches/support/mod.rs"]
mod support;
use netc::db::Database;
use netc::diagnostics::{FileName, TextRange};
use netc::ide::{HintConfig, ScenarioRef, inlay_hints};
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let which: usize = std::env::args().nth(1).map_or(5, |s| s.parse().unwrap());
    let n: usize = std::env::args().nth(2).map_or(400, |s| s.parse().unwrap());
    let case = support::cases().into_iter().nth(2).unwrap();
    let (from, to) = case.edits[which].unwrap();
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
    let mut times = vec![];
    for i in 0..n {
        let t = std::time::Instant::now();
        db.set_file(name.clone(), if i % 2 == 0 { edited.clone() } else { text.clone() });
        let _ = inlay_hints(&db, file, range, chosen.as_ref(), &config);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("min {:.2} p10 {:.2} median {:.2}", times[0], times[n / 10], times[n / 2]);
}
