//! `netc report --svg FILE`: the memory timeline of one scenario as a standalone SVG, and the
//! timeline the simulation records for it.
//!
//! - The plot is well-formed XML (a small checker below), with the peak labelled with its op
//!   and source line, and the budget (a line, or a note when it is far above the run).
//! - The timeline keeps every sample of a small run; a long run is downsampled to about
//!   `TIMELINE_POINTS` samples and still has every phase start, the end and the peak.
//! - `docs/timeline-resnet18.svg`, the plot spec/report.md shows, is current
//!   (`NETC_BLESS=1 cargo test -p netc-tests svg` rewrites it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use netc::costs::scenario_costs;
use netc::costs::simulate::TIMELINE_POINTS;
use netc::db::STDLIB_SOURCES;
use netc::diagnostics::FileName;
use netc::host::Database;
use netc::report::{scenario_report, scenarios};
use netc::semantics::files::ItemLoc;

/// Checks that `text` is well-formed XML: one root element, tags balanced and matched,
/// attributes quoted and unique, entities known, no stray `<` or `&`.
fn well_formed(text: &str) -> Result<(), String> {
    let entity_ok = |s: &str| -> bool {
        let mut rest = s;
        while let Some(i) = rest.find('&') {
            let after = &rest[i + 1..];
            let Some(end) = after.find(';') else { return false };
            let name = &after[..end];
            let known = matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
                || (name.starts_with('#') && name[1..].trim_start_matches('x').chars().all(|c| c.is_ascii_hexdigit()));
            if !known {
                return false;
            }
            rest = &after[end + 1..];
        }
        true
    };
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = text.trim_start();
    if let Some(after) = rest.strip_prefix("<?xml") {
        rest = &after[after.find("?>").ok_or("unclosed declaration")? + 2..];
    }
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            if !entity_ok(rest) || (stack.is_empty() && !rest.trim().is_empty()) {
                return Err(format!("bad text at the end: {rest:.40}"));
            }
            break;
        };
        let text_part = &rest[..open];
        if !entity_ok(text_part) || text_part.contains('>') && stack.is_empty() {
            return Err(format!("bad text: {text_part:.60}"));
        }
        if stack.is_empty() && !text_part.trim().is_empty() {
            return Err(format!("text outside the root: {text_part:.60}"));
        }
        rest = &rest[open..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->").ok_or("unclosed comment")? + 3..];
            continue;
        }
        let close = rest.find('>').ok_or("unclosed tag")?;
        let tag = &rest[1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("</{name}> closes nothing"))?;
            if open != name.trim() {
                return Err(format!("<{open}> closed by </{name}>"));
            }
            continue;
        }
        let (body, empty) = match tag.strip_suffix('/') {
            Some(body) => (body, true),
            None => (tag, false),
        };
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = &body[..name_end];
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == ':' || c == '_') {
            return Err(format!("bad tag name in <{tag:.40}>"));
        }
        // Attributes: name="value" pairs.
        let mut attrs = body[name_end..].trim();
        let mut seen = Vec::new();
        while !attrs.is_empty() {
            let eq = attrs.find('=').ok_or(format!("attribute without value in <{name}>: {attrs:.40}"))?;
            let key = attrs[..eq].trim();
            let value = attrs[eq + 1..].trim_start();
            let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'').ok_or("unquoted attribute")?;
            let end = value[1..].find(quote).ok_or("unclosed attribute")?;
            let v = &value[1..1 + end];
            if v.contains('<') || !entity_ok(v) {
                return Err(format!("bad attribute value {key}={v:.40}"));
            }
            if seen.contains(&key) {
                return Err(format!("attribute {key} twice in <{name}>"));
            }
            seen.push(key);
            attrs = value[end + 2..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        if !empty {
            stack.push(name.to_string());
        }
    }
    match (stack.last(), roots) {
        (Some(open), _) => Err(format!("<{open}> is never closed")),
        (None, 1) => Ok(()),
        (None, n) => Err(format!("{n} root elements")),
    }
}

#[test]
fn the_checker_catches_broken_xml() {
    assert!(well_formed("<svg a=\"1\"><g><text>x &amp; y</text></g></svg>").is_ok());
    assert!(well_formed("<svg><g></svg>").is_err());
    assert!(well_formed("<svg><text>a < b</text></svg>").is_err());
    assert!(well_formed("<svg><text>&nbsp;</text></svg>").is_err());
    assert!(well_formed("<svg a=1></svg>").is_err());
    assert!(well_formed("<svg/><svg/>").is_err());
}

/// A fresh temporary directory.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netc-svg-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

fn netc(args: &[&str]) -> (u8, String, String) {
    let mut argv: Vec<OsString> = vec!["netc".into()];
    argv.extend(args.iter().map(OsString::from));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = netc::cli::run(argv, &mut out, &mut err, false);
    (code, String::from_utf8(out).expect("UTF-8"), String::from_utf8(err).expect("UTF-8"))
}

#[test]
fn the_resnet18_training_plot() {
    let dir = temp_dir("resnet18");
    let svg = dir.join("t.svg");
    let svg_arg = svg.to_str().expect("UTF-8");
    let (code, out, err) = netc(&["report", "../examples/resnet18.net", "--scenario", "imagenet", "--svg", svg_arg]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("train scenario `imagenet`"), "the report is printed as usual");
    let text = std::fs::read_to_string(&svg).expect("written");
    well_formed(&text).unwrap_or_else(|e| panic!("not well-formed: {e}"));
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    // The peak, with its op and line.
    assert!(text.contains(r#"<circle class="peak""#));
    assert!(text.contains(">peak 928.8 MiB allocated + 500.0 MiB runtime</tspan>"), "{text}");
    assert!(text.contains(">step 2, backward, _to_copy (autocast cast backward)</tspan>"));
    assert!(text.contains(">../examples/blocks.net:7</tspan>"));
    // The budget (12 GiB) is far above the run (1.4 GiB): a note instead of a line.
    assert!(text.contains(
        r##"class="budget" x="84" y="68" fill="#c0392b">budget 12.0 GiB (÷ margin 1.5 = 8.00 GiB) is above the scale: the total × margin is 17 % of it</text>"##
    ));
    // Phases and steps, ledgers, binary ticks.
    for label in [">forward<", ">backward<", ">step<", ">step 1<", ">step 2<", ">1 GiB<", ">512 MiB<", ">activations<"]
    {
        assert!(text.contains(label), "{label} is missing");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_budget_near_the_run_is_drawn_with_the_margin() {
    let dir = temp_dir("budget");
    let model = dir.join("m.net");
    let text = "\
model mlp() {
    input x: f32[N, 1024]
    h = relu(linear(x, 4096))
    return linear(h, 1000)
}
train fit { model mlp()  batch 256  optimizer adam  device a100_40gb  budget 1 GiB  margin 1.2 }
";
    std::fs::write(&model, text).expect("write");
    let svg = dir.join("fit.svg");
    let (code, _, err) = netc(&["report", model.to_str().expect("UTF-8"), "--svg", svg.to_str().expect("UTF-8")]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&svg).expect("written");
    well_formed(&text).unwrap_or_else(|e| panic!("not well-formed: {e}"));
    assert!(text.contains(r#"<line class="budget" "#), "the budget line");
    assert!(text.contains(">budget 1.0 GiB</text>"));
    assert!(text.contains(r#"<line class="budget-margin" "#), "the budget divided by the margin");
    assert!(text.contains(">budget ÷ margin 1.2 = 853.3 MiB</text>"));
    // The peak is in the first optimizer step, where Adam's state is made: no source line.
    assert!(text.contains(">peak 159.2 MiB allocated + 500.0 MiB runtime</tspan>"), "{text}");
    assert!(text.contains(">step 1, step, adam</tspan>"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_scenarios_need_a_choice() {
    let dir = temp_dir("several");
    let svg = dir.join("x.svg");
    let (code, _, err) = netc(&["report", "../examples/resnet18.net", "--svg", svg.to_str().expect("UTF-8")]);
    assert_eq!(code, 2);
    assert_eq!(err, "error: --svg plots one scenario; choose one of `imagenet`, `serve` with --scenario\n");
    assert!(!svg.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

// The plot is written as `netc fmt` writes (issue 21): whole or not at all, and a failure names
// the file. Here its directory does not exist; an existing plot is replaced whole.
#[test]
fn a_plot_that_cannot_be_written_names_the_file() {
    let dir = temp_dir("unwritable");
    let svg = dir.join("no/such/dir/t.svg");
    let args = ["report", "../examples/resnet18.net", "--scenario", "imagenet", "--svg"];
    let (code, _, err) = netc(&[&args[..], &[svg.to_str().expect("UTF-8")]].concat());
    assert_eq!(code, 2);
    assert!(err.starts_with("error: cannot write `") && err.contains("/no/such/dir/t.svg`: "), "{err}");
    assert!(!svg.exists());
    let old = dir.join("old.svg");
    std::fs::write(&old, "x".repeat(1 << 20)).expect("write");
    let (code, _, err) = netc(&[&args[..], &[old.to_str().expect("UTF-8")]].concat());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&old).expect("written");
    assert!(text.starts_with("<svg ") && !text.contains("xxx"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The timeline of a stdlib zoo scenario.
fn zoo_timeline(module: &str, name: &str) -> (netc::costs::simulate::Simulation, usize) {
    let mut db = Database::new();
    let text = STDLIB_SOURCES.iter().find(|(m, _)| *m == module).expect("a zoo module").1;
    let file = db.set_file(FileName::new("zoo.net"), text.to_string());
    let found = scenarios(&db, &[file], Some(name));
    let (file, index) = found[0];
    let costs = scenario_costs(&db, ItemLoc::new(&db, file, index)).as_ref().expect("simulated");
    (costs.simulation.clone(), costs.simulation.phases.len())
}

#[test]
fn a_small_run_keeps_every_sample() {
    let (simulation, phases) = zoo_timeline("std.models.resnet", "resnet18_infer");
    let t = &simulation.timeline;
    assert_eq!(t.samples.len() as u32, t.recorded, "every sample");
    assert!(t.samples.iter().enumerate().all(|(i, s)| s.at == i as u32));
    // A start per phase and the end.
    assert_eq!(t.samples.iter().filter(|s| s.op.is_empty()).count(), phases + 1);
    let peak = t.peak().expect("the peak is a sample");
    assert_eq!(peak.live.total(), simulation.peak.bytes);
    assert_eq!(peak.live, simulation.peak.breakdown);
    assert_eq!(peak.op, simulation.peak.op);
}

#[test]
fn a_long_run_is_downsampled_and_keeps_the_phases_and_the_peak() {
    let (simulation, phases) = zoo_timeline("std.models.llama", "llama3_8b_train");
    let t = &simulation.timeline;
    assert!(t.recorded as usize > 2 * TIMELINE_POINTS, "a long run: {} samples", t.recorded);
    assert!(t.samples.len() <= TIMELINE_POINTS + 2 * phases + 4, "{} samples kept", t.samples.len());
    assert!(t.samples.len() >= TIMELINE_POINTS / 4, "{} samples kept", t.samples.len());
    assert!(t.samples.windows(2).all(|w| w[0].at < w[1].at), "in run order");
    assert_eq!(t.samples.iter().filter(|s| s.op.is_empty()).count(), phases + 1, "every phase start and the end");
    let peak = t.peak().expect("the peak is kept");
    assert_eq!(peak.live.total(), simulation.peak.bytes);
    assert_eq!((peak.step, peak.phase), (simulation.peak.step, simulation.peak.phase));
    // No kept sample is above the peak (the phase starts included).
    assert!(t.samples.iter().all(|s| s.live.total() <= simulation.peak.bytes));
}

#[test]
fn the_documented_plot_is_current() {
    // Named from the repository's root, as `netc report examples/resnet18.net` names it there.
    let mut db = Database::new();
    for name in ["examples/resnet18.net", "examples/blocks.net"] {
        let text = std::fs::read_to_string(Path::new("..").join(name)).expect("readable");
        db.set_file(FileName::new(name), text);
    }
    let file = db.file(&FileName::new("examples/resnet18.net")).expect("loaded");
    let (file, index) = scenarios(&db, &[file], Some("imagenet"))[0];
    assert!(scenario_report(&db, file, index).is_some());
    let svg = netc::svg::scenario(&db, file, index).expect("a plot");
    well_formed(&svg).unwrap_or_else(|e| panic!("not well-formed: {e}"));
    let path = Path::new("../docs/timeline-resnet18.svg");
    if std::env::var_os("NETC_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("docs/")).expect("create docs/");
        std::fs::write(path, &svg).expect("write docs/timeline-resnet18.svg");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(committed == svg, "docs/timeline-resnet18.svg is stale: NETC_BLESS=1 cargo test -p netc-tests svg");
}
