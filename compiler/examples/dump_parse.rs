use netc::diagnostics::FileName;
fn main() {
    let mut out = String::new();
    for dir in std::env::args().skip(1) {
        let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths.into_iter().filter(|p| p.is_file()) {
            let bytes = std::fs::read(&p).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let parse = netc::syntax::parse(&FileName::new("f.net"), &text);
            out.push_str(&format!("{}\n{:?}\n", p.display(), parse));
        }
    }
    print!("{out}");
}
