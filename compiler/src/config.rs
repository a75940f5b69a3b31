//! `netc.toml`, the project configuration: text in, levels and diagnostics out. The loader
//! ([`crate::workspace::configure`]) finds the file nearest to each checked file and reads it;
//! this module only parses and matches paths.
//!
//! ```toml
//! [lints]                              # every file the configuration governs
//! budget-exceeded = "warn"             # by name
//! "L0008" = "allow"                    # or by code
//! warnings = "deny"                    # every warning
//!
//! [[overrides]]                        # some files: later entries win over earlier ones
//! paths = ["stdlib/**", "examples/*.net"]
//! lints = { unused = "allow" }
//! ```
//!
//! Paths are globs relative to the directory of the `netc.toml` (`*` and `?` stay within one
//! directory, `**` crosses any number); a pattern that matches a directory matches every file
//! below it. A malformed file is E0403 (`invalid-config`); a level for a name that is no
//! configurable lint or warning is W0404 (`unknown-lint-in-config`), and is ignored.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::db::{Db, Level, SourceFile};
use crate::diagnostics::{Code, CodeInfo, Diagnostic, FileName, Place, Severity, TextRange};

/// The name of the configuration file.
pub const FILE_NAME: &str = "netc.toml";

/// A parsed `netc.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectConfig {
    /// `[lints]`: levels for every file the configuration governs.
    pub lints: BTreeMap<String, Level>,
    /// `[[overrides]]`, in the file's order (later entries win over earlier ones).
    pub overrides: Vec<PathOverride>,
}

/// One `[[overrides]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOverride {
    /// The globs of `paths`.
    pub paths: Vec<glob::Pattern>,
    /// Its `lints`.
    pub lints: BTreeMap<String, Level>,
}

impl PathOverride {
    /// Whether the entry applies to the file at `path`, relative to the directory of the
    /// `netc.toml` with `/` separators: a glob matches the path or one of its directories.
    pub fn matches(&self, path: &str) -> bool {
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        let mut candidates = vec![path];
        candidates.extend(path.match_indices('/').map(|(at, _)| &path[..at]));
        self.paths.iter().any(|glob| candidates.iter().any(|c| glob.matches_with(c, options)))
    }
}

type RawLints = BTreeMap<Spanned<String>, Spanned<Level>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    lints: RawLints,
    #[serde(default)]
    overrides: Vec<RawOverride>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    paths: Vec<Spanned<String>>,
    #[serde(default)]
    lints: RawLints,
}

/// What the file may hold, for the help of E0403.
const SHAPE: &str = "netc.toml holds `[lints]` (`NAME = \"allow\" | \"warn\" | \"deny\"`, NAME a lint, a warning, \
                     a code or `warnings`) and `[[overrides]]` entries with `paths = [\"GLOB\", ...]` and `lints = { ... }`";

/// Parses a `netc.toml` named `name`: the configuration (`None` when the file is malformed)
/// and its diagnostics, located in the file.
pub fn parse(name: &FileName, text: &str) -> (Option<ProjectConfig>, Vec<Diagnostic>) {
    let invalid = |message: &str, span: Option<std::ops::Range<usize>>| {
        let mut lines = message.trim().lines();
        let first = lines.next().unwrap_or("malformed").trim_end_matches('.');
        let mut d = Diagnostic::new(
            Code::InvalidConfig,
            format!("invalid configuration in `{name}`: {first}"),
            name,
            Place::Range(span.map_or(TextRange::empty(0), |s| TextRange::new(s.start as u32, s.end as u32))),
        )
        .with_help(SHAPE);
        let rest: Vec<&str> = lines.map(str::trim).filter(|l| !l.is_empty()).collect();
        if !rest.is_empty() {
            d = d.with_note(rest.join("; "));
        }
        d
    };
    let raw: RawConfig = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => return (None, vec![invalid(e.message(), e.span())]),
    };
    let mut diagnostics = Vec::new();
    let lints = levels(name, raw.lints, &mut diagnostics);
    let mut overrides = Vec::new();
    for entry in raw.overrides {
        let mut paths = Vec::new();
        for path in entry.paths {
            let text = path.get_ref().trim_end_matches('/');
            let text = text.strip_prefix("./").unwrap_or(text);
            match glob::Pattern::new(text) {
                Ok(glob) => paths.push(glob),
                Err(e) => {
                    return (
                        None,
                        vec![invalid(&format!("invalid glob `{}`: {}", path.get_ref(), e.msg), Some(path.span()))],
                    );
                }
            }
        }
        overrides.push(PathOverride { paths, lints: levels(name, entry.lints, &mut diagnostics) });
    }
    (Some(ProjectConfig { lints, overrides }), diagnostics)
}

/// Whether `name` (a name, a code, or `warnings`) is something whose level can be set.
pub fn is_configurable_name(name: &str) -> bool {
    name == "warnings"
        || Code::ALL.iter().any(|c| {
            let info = c.info();
            info.is_configurable() && (info.name == name || info.code == name)
        })
}

/// The names of everything whose level can be set, `warnings` last.
pub fn configurable_names() -> Vec<&'static str> {
    Code::ALL.iter().map(|c| c.info()).filter(|i| i.is_configurable()).map(|i| i.name).chain(["warnings"]).collect()
}

/// The levels of a `lints` table; names that are no configurable lint or warning are reported
/// (W0404) and left out.
fn levels(file: &FileName, raw: RawLints, diagnostics: &mut Vec<Diagnostic>) -> BTreeMap<String, Level> {
    let mut levels = BTreeMap::new();
    for (key, level) in raw {
        let span = key.span();
        let name = key.into_inner();
        if is_configurable_name(&name) {
            levels.insert(name, *level.get_ref());
            continue;
        }
        let place = Place::Range(TextRange::new(span.start as u32, span.end as u32));
        let error = Code::ALL.iter().map(|c| c.info()).find(|i| i.name == name || i.code == name);
        let d = match error {
            Some(info) => Diagnostic::new(
                Code::UnknownConfigLint,
                format!("`{name}` is an error, and errors cannot be configured"),
                file,
                place,
            )
            .with_primary_message(format!("{} means the program is wrong", info.code))
            .with_help("remove this line: only lints and warnings have levels"),
            None => {
                let d =
                    Diagnostic::new(Code::UnknownConfigLint, format!("unknown lint `{name}` in `{file}`"), file, place)
                        .with_primary_message("no lint or warning has this name or code");
                let names = configurable_names();
                match crate::suggest::closest(&name, names.iter().copied()) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d.with_help("the names are listed in spec/lints/README.md and spec/diagnostics.md"),
                }
            }
        };
        diagnostics.push(d);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn override_for(paths: &[&str]) -> PathOverride {
        PathOverride {
            paths: paths.iter().map(|p| glob::Pattern::new(p).expect("a glob")).collect(),
            lints: BTreeMap::new(),
        }
    }

    #[test]
    fn globs_match_files_and_directories() {
        let stdlib = override_for(&["stdlib/**"]);
        assert!(stdlib.matches("stdlib/std/nn.net"));
        assert!(stdlib.matches("stdlib/a.net"));
        assert!(!stdlib.matches("examples/a.net"));
        let examples = override_for(&["examples/*.net"]);
        assert!(examples.matches("examples/a.net"));
        assert!(!examples.matches("examples/sub/a.net"));
        assert!(!examples.matches("a.net"));
        let directory = override_for(&["models"]);
        assert!(directory.matches("models/a/b.net"));
        assert!(!directory.matches("models2/a.net"));
        let anywhere = override_for(&["**/gen_*.net"]);
        assert!(anywhere.matches("gen_a.net"));
        assert!(anywhere.matches("x/y/gen_a.net"));
    }

    #[test]
    fn parses_levels_and_reports_unknown_names() {
        let name = FileName::new("netc.toml");
        let text = "[lints]\nbudget-exceeded = \"warn\"\n\"L0008\" = \"allow\"\nwarnings = \"deny\"\nunsued = \"allow\"\n\n\
                    [[overrides]]\npaths = [\"stdlib/**\"]\nlints = { unused = \"allow\", undefined-name = \"allow\" }\n";
        let (config, diagnostics) = parse(&name, text);
        let config = config.expect("valid");
        assert_eq!(config.lints.len(), 3);
        assert_eq!(config.lints["L0008"], Level::Allow);
        assert_eq!(config.overrides[0].lints, BTreeMap::from([("unused".to_string(), Level::Allow)]));
        let codes: Vec<Code> = diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::UnknownConfigLint, Code::UnknownConfigLint]);
        assert_eq!(diagnostics[0].help.as_deref(), Some("did you mean `unused`?"));
        let Place::Range(r) = diagnostics[0].primary().place else { panic!("a range") };
        assert_eq!(&text[r.to_range()], "unsued");
    }

    #[test]
    fn malformed_files_are_one_error() {
        let name = FileName::new("netc.toml");
        for text in [
            "[lints\n",
            "[lints]\nunused = \"warning\"\n",
            "[lint]\n",
            "[[overrides]]\nlints = {}\n",
            "[[overrides]]\npaths = [\"a/***\"]\n",
        ] {
            let (config, diagnostics) = parse(&name, text);
            assert!(config.is_none(), "{text}");
            assert_eq!(diagnostics.len(), 1, "{text}");
            assert_eq!(diagnostics[0].code, Code::InvalidConfig, "{text}");
            assert!(diagnostics[0].message.starts_with("invalid configuration in `netc.toml`: "), "{text}");
        }
    }
}

/// The level configured for a diagnostic of code `info` and default `severity`, from
/// `layers` of level settings, weakest first (a `netc.toml`'s `[lints]`, its matching
/// `[[overrides]]`, the command line), or `None` to keep its default.
///
/// The strongest layer that names the diagnostic (by name, else by code) decides. If the
/// result is a warning, `warnings` in a stronger layer than that one (in any layer when none
/// names it) then decides: `-D warnings` denies a lint that `netc.toml` sets to `warn`, but not
/// one that it allows, and `-W unused` on the command line wins over `warnings = "deny"`.
pub fn configured_level(layers: &[&BTreeMap<String, Level>], info: CodeInfo, severity: Severity) -> Option<Level> {
    let named =
        layers.iter().enumerate().rev().find_map(|(rank, layer)| {
            layer.get(info.name).or_else(|| layer.get(info.code)).map(|&level| (rank, level))
        });
    let warning = match named {
        Some((_, level)) => level == Level::Warn,
        None => severity == Severity::Warning,
    };
    let stronger = named.map_or(0, |(rank, _)| rank + 1);
    let group = if warning { layers[stronger..].iter().rev().find_map(|layer| layer.get("warnings")) } else { None };
    group.copied().or(named.map(|(_, level)| level))
}

/// The level settings that apply to a file, weakest first: its `netc.toml`'s `[lints]` and
/// matching `[[overrides]]`, then the command line's. Equal across configuration changes
/// that do not concern the file, so its diagnostics are not re-run by them.
#[salsa::tracked(returns(ref))]
pub fn file_levels(db: &dyn Db, file: SourceFile) -> Vec<BTreeMap<String, Level>> {
    let config = db.config();
    let name = file.name(db);
    let mut layers: Vec<BTreeMap<String, Level>> =
        config.overrides(db).iter().filter(|o| o.files.contains(name)).map(|o| o.levels.clone()).collect();
    layers.push(config.levels(db).clone());
    layers
}
