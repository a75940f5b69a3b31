//! SARIF 2.1.0 (OASIS), the format code-scanning services read: one run of the tool `netc`,
//! with a rule for every code and a result for every diagnostic.
//!
//! Positions are 1-based lines and columns counted in UTF-16 code units (SARIF's default
//! `columnKind`, stated in the run); `endColumn` is the column just after the region.
//! Secondary labels are `relatedLocations`; fixes are `fixes` with their replacements. File
//! names become URI references: relative ones stay relative (to the directory netc ran in,
//! which code scanning takes as the repository root), absolute ones become `file:` URIs.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Index, Sources, range_of};
use crate::diagnostics::{Code, CodeInfo, Diagnostic, Edit, FileName, Label, Severity, TextRange};

/// The JSON schema that `$schema` names.
pub const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json";

/// The repository-relative page that documents a code: `spec/lints/NAME.md` for a lint, the
/// code's section of `spec/diagnostics.md` otherwise (GitHub's heading anchor).
pub fn documentation_path(info: CodeInfo) -> String {
    if info.is_lint() {
        format!("spec/lints/{}.md", info.name)
    } else {
        format!("spec/diagnostics.md#{}-{}", info.code.to_lowercase(), info.name)
    }
}

/// The absolute `helpUri` of a code's page, when netc's package names its repository: SARIF
/// requires an absolute URI there, so without one the page is named in `help` only.
fn help_uri(repository: &str, path: &str) -> Option<String> {
    let repository = repository.trim_end_matches('/');
    if repository.starts_with("https://") { Some(format!("{repository}/blob/HEAD/{path}")) } else { None }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Help => "note",
    }
}

/// A file name as a URI reference: percent-encoded; absolute paths as `file:` URIs.
pub fn file_uri(name: &FileName) -> String {
    let path = name.as_str().replace('\\', "/");
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    } else if drive {
        out.push_str("file:///");
    }
    for (i, &b) in bytes.iter().enumerate() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) || (drive && i == 1);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn region(index: &Index<'_>, file: &FileName, range: TextRange) -> Value {
    let lines = index.of(file);
    let (start, end) = (lines.position(range.start).line_col_utf16(), lines.position(range.end).line_col_utf16());
    json!({
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    })
}

fn location(index: &Index<'_>, label: &Label) -> Value {
    let mut location = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": file_uri(&label.file) },
            "region": region(index, &label.file, range_of(label)),
        }
    });
    if !label.message.is_empty() {
        location["message"] = json!({ "text": label.message });
    }
    location
}

/// The message of a result: the diagnostic's, then its notes and help on lines of their own.
fn message_text(d: &Diagnostic) -> String {
    let mut text = d.message.clone();
    for note in &d.notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\nhelp: {help}"));
    }
    text
}

fn edit_region(index: &Index<'_>, edit: &Edit) -> Value {
    region(index, &edit.file, edit.target().unwrap_or_default())
}

fn fix(index: &Index<'_>, fix: &crate::diagnostics::Fix) -> Value {
    // One artifactChange per file, its replacements in the fix's order.
    let mut by_file: BTreeMap<&FileName, Vec<Value>> = BTreeMap::new();
    for edit in &fix.edits {
        by_file.entry(&edit.file).or_default().push(json!({
            "deletedRegion": edit_region(index, edit),
            "insertedContent": { "text": edit.text },
        }));
    }
    let changes: Vec<Value> = by_file
        .into_iter()
        .map(|(file, replacements)| {
            json!({ "artifactLocation": { "uri": file_uri(file) }, "replacements": replacements })
        })
        .collect();
    json!({ "description": { "text": fix.title }, "artifactChanges": changes })
}

fn rule(info: CodeInfo) -> Value {
    let path = documentation_path(info);
    let mut rule = json!({
        "id": info.code,
        "name": info.name,
        "shortDescription": { "text": info.summary },
        "help": {
            "text": format!("{}. Documented in {path} in the netc repository.", info.summary),
            "markdown": format!("{}. Documented in `{path}` in the netc repository.", info.summary),
        },
        "defaultConfiguration": { "level": level(info.severity) },
        "properties": { "documentation": path, "tags": [if info.is_lint() { "lint" } else { "check" }] },
    });
    if let Some(uri) = help_uri(env!("CARGO_PKG_REPOSITORY"), &path) {
        rule["helpUri"] = json!(uri);
    }
    rule
}

/// The SARIF log of `diagnostics` as a JSON value.
pub fn sarif_log(diagnostics: &[Diagnostic], sources: &dyn Sources) -> Value {
    let rules: Vec<Value> = Code::ALL.iter().map(|c| rule(c.info())).collect();
    let index = Index::new(diagnostics, sources);
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let info = d.code.info();
            let mut result = json!({
                "ruleId": info.code,
                "ruleIndex": Code::ALL.iter().position(|&c| c == d.code).unwrap_or(0),
                "level": level(d.severity),
                "message": { "text": message_text(d) },
                "locations": [location(&index, d.primary())],
            });
            let related: Vec<Value> = d
                .labels
                .iter()
                .filter(|l| !l.primary)
                .enumerate()
                .map(|(id, l)| {
                    let mut location = location(&index, l);
                    location["id"] = json!(id);
                    location
                })
                .collect();
            if !related.is_empty() {
                result["relatedLocations"] = json!(related);
            }
            let fixes: Vec<Value> = d.fixes.iter().filter(|f| !f.edits.is_empty()).map(|f| fix(&index, f)).collect();
            if !fixes.is_empty() {
                result["fixes"] = json!(fixes);
            }
            result
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "netc",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "columnKind": "utf16CodeUnits",
            "results": results,
        }]
    })
}

/// Renders the SARIF log of `diagnostics`, pretty-printed.
pub fn sarif(diagnostics: &[Diagnostic], sources: &dyn Sources) -> String {
    serde_json::to_string_pretty(&sarif_log(diagnostics, sources)).expect("plain data serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_become_uri_references() {
        assert_eq!(file_uri(&FileName::new("examples/resnet18.net")), "examples/resnet18.net");
        assert_eq!(file_uri(&FileName::new("/tmp/a b/c.net")), "file:///tmp/a%20b/c.net");
        assert_eq!(file_uri(&FileName::new("C:\\models\\a.net")), "file:///C:/models/a.net");
        assert_eq!(file_uri(&FileName::new("<std>/nn.net")), "%3Cstd%3E/nn.net");
        assert_eq!(file_uri(&FileName::new("a:b.net")), "a%3Ab.net");
        assert_eq!(file_uri(&FileName::new("caf\u{e9}.net")), "caf%C3%A9.net");
    }

    #[test]
    fn help_uris_are_absolute_or_absent() {
        assert_eq!(help_uri("", "spec/lints/unused.md"), None);
        assert_eq!(
            help_uri("https://example.org/netc/", "spec/lints/unused.md").as_deref(),
            Some("https://example.org/netc/blob/HEAD/spec/lints/unused.md")
        );
        let undefined = Code::UndefinedName.info();
        assert_eq!(documentation_path(undefined), "spec/diagnostics.md#e0204-undefined-name");
        assert_eq!(documentation_path(Code::Unused.info()), "spec/lints/unused.md");
    }
}
