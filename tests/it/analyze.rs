//! `netc::analyze`, the library entry point for users' test suites, used the way a user uses
//! it: `insta::assert_yaml_snapshot!(netc::analyze(path)?)`.
//!
//! - Every zoo file (`stdlib/std/models/*.net`) is analyzed by its path, as any `.net` file on
//!   disk: the zoo files are ordinary files that `use std.blocks`, which resolves to the
//!   embedded standard library, so no probe file and no special case are needed. Two of
//!   them, the smallest convolutional network and the smallest transformer, pin the
//!   serialized schema as reviewed YAML snapshots (`analyze_<family>`); the figures of
//!   every family are held by `zoo`, `memory` and `shapes`.
//! - The serialized report is deterministic and does not depend on where the repository is:
//!   an absolute path is named relative to the current directory.
//! - A program with errors gives the errors, a missing path says so.

use std::path::{Path, PathBuf};

/// The zoo files, sorted, as paths relative to this crate (the current directory of tests).
fn zoo_files() -> Vec<PathBuf> {
    let dir = Path::new("../stdlib/std/models");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the zoo directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "net"))
        .collect();
    files.sort();
    files
}

/// The families whose reports are snapshotted: enough to pin the schema (a CNN and a
/// transformer, both with `train` and `infer` scenarios), small enough to review.
const SNAPSHOTTED: [&str; 2] = ["alexnet", "bert"];

// Reviewed: each scenario with its peak, where it happens, the ledgers and breakdown at the
// peak, the phases and the lines; the figures are those of the `netc report` tables of the
// same files (`report_of_every_zoo_file`) and the scenario names those of the files. File
// names are `../stdlib/std/models/<family>.net` (as given, relative to tests/) and
// `<std>/blocks.net` for the standard library's blocks.
#[test]
fn every_zoo_file() -> Result<(), netc::AnalyzeError> {
    let files = zoo_files();
    assert_eq!(files.len(), 75, "the zoo has seventy-five families");
    for path in files {
        let report = netc::analyze(&path)?;
        let text = std::fs::read_to_string(&path).expect("readable");
        let declared = text.lines().filter(|l| l.starts_with("train ") || l.starts_with("infer ")).count();
        assert_eq!(report.scenarios.len(), declared, "{}: every scenario is reported", path.display());
        for s in &report.scenarios {
            assert_eq!(s.file.as_str(), path.to_str().expect("UTF-8"), "named as given");
            assert!(s.peak_bytes > 0 && s.total_bytes >= s.peak_bytes, "{}: a peak", s.name);
        }
        let family = path.file_stem().expect("a stem").to_string_lossy().into_owned();
        if SNAPSHOTTED.contains(&family.as_str()) {
            insta::assert_yaml_snapshot!(format!("analyze_{family}"), report);
        }
    }
    Ok(())
}

#[test]
fn the_report_is_deterministic_and_independent_of_the_checkout() {
    let relative = Path::new("../examples/resnet18.net");
    let absolute = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let a = netc::analyze(relative).expect("no errors");
    let b = netc::analyze(&absolute).expect("no errors");
    assert_eq!(a, b, "an absolute path is named relative to the current directory");
    let (ya, yb) = (serde_json::to_string(&a).expect("json"), serde_json::to_string(&b).expect("json"));
    assert_eq!(ya, yb);
    assert!(!ya.contains(env!("CARGO_MANIFEST_DIR")), "no absolute path in the report");
    let files: Vec<&str> = a.scenarios.iter().map(|s| s.file.as_str()).collect();
    assert_eq!(files, ["../examples/resnet18.net", "../examples/resnet18.net"]);
    // The lines of the block file are named as it is reached from the model.
    assert!(a.scenarios[0].lines.iter().any(|l| l.file.as_str() == "../examples/blocks.net"));
}

#[test]
fn a_directory_gives_every_scenario_below_it() {
    let report = netc::analyze("../examples").expect("no errors");
    // The files in name order, each file's scenarios in source order.
    let mut expected = Vec::new();
    for file in ["../examples/articles_cnn.net", "../examples/blocks.net", "../examples/resnet18.net"] {
        expected.extend(netc::analyze(file).expect("no errors").scenarios);
    }
    assert_eq!(report.scenarios, expected);
    assert!(report.scenarios.len() >= 3);
}

/// A fresh directory for one test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netc-analyze-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

#[test]
fn errors_are_given_back_with_their_diagnostics() {
    let dir = temp_dir("errors");
    let file = dir.join("broken.net");
    std::fs::write(&file, "model m() {\n    input x: f32[N, 4]\n    return linaer(x, 2)\n}\n").expect("write");
    let Err(error) = netc::analyze(&file) else { panic!("an error") };
    let netc::AnalyzeError::Diagnostics { diagnostics, .. } = &error else { panic!("diagnostics: {error}") };
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].code.info().code, "E0206");
    let shown = error.to_string();
    assert!(shown.contains("linaer") && shown.ends_with("cannot analyze: 1 error"), "{shown}");
    // `{:?}` (what `unwrap` and `?` in a test print) shows the same text.
    assert_eq!(format!("{error:?}"), shown);
    let missing = netc::analyze(dir.join("missing.net")).expect_err("no such file");
    assert!(matches!(missing, netc::AnalyzeError::NotFound(_)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn warnings_do_not_stop_it() {
    let dir = temp_dir("warnings");
    let file = dir.join("lint.net");
    // Inference without `no_grad`: a lint, not an error.
    let text = "model m() {\n    input x: f32[N, 4]\n    return linear(x, 2)\n}\ninfer serve { model m()  batch 2 }\n";
    std::fs::write(&file, text).expect("write");
    let report = netc::analyze(&file).expect("warnings are allowed");
    assert_eq!(report.scenarios.len(), 1);
    assert_eq!(report.scenarios[0].params, 10);
    let _ = std::fs::remove_dir_all(&dir);
}
