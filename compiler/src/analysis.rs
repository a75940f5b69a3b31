//! The library's entry point for test suites: [`analyze`] a file or a directory into a
//! [`Report`], as `netc report --format json` would print it, ready for
//! `insta::assert_yaml_snapshot!`.
//!
//! The report is deterministic: files are named as given, relative to the current
//! directory (an absolute path below or beside it is made relative, so a snapshot does not
//! depend on where the repository is checked out), scenarios and lines come in file and
//! source order, and every figure is an exact integer.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use crate::diagnostics::{Diagnostic, FileName, Severity};
use crate::host::Database;
use crate::report::Report;
use crate::workspace::check_paths;

/// Why [`analyze`] gave no report.
#[derive(Clone, PartialEq)]
pub enum AnalyzeError {
    /// The path does not exist.
    NotFound(PathBuf),
    /// The program has errors (syntax, names, settings, shapes; or a file that cannot be
    /// read): a report of a wrong program would be wrong too.
    Diagnostics {
        /// The error-level diagnostics, in file order.
        diagnostics: Vec<Diagnostic>,
        /// The texts of the files they point into, to render them.
        sources: BTreeMap<FileName, String>,
    },
}

impl fmt::Display for AnalyzeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalyzeError::NotFound(path) => write!(f, "no such file or directory: {}", path.display()),
            AnalyzeError::Diagnostics { diagnostics, sources } => {
                f.write_str(&crate::render::human(diagnostics, sources, false))?;
                let n = diagnostics.len();
                write!(f, "cannot analyze: {n} error{}", if n == 1 { "" } else { "s" })
            }
        }
    }
}

/// As [`fmt::Display`]: `?` and `unwrap` in a test then show the rendered errors.
impl fmt::Debug for AnalyzeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for AnalyzeError {}

/// The components of `path` without `.`, and with `..` taken back lexically where it can be
/// (`/a/b/../c` is `/a/c`).
fn normal(path: &Path) -> Vec<Component<'_>> {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` relative to the current directory when it is absolute and the two share a root
/// (`..` where needed); otherwise as given.
fn relative(path: &Path) -> PathBuf {
    if !path.is_absolute() {
        return path.to_path_buf();
    }
    let Ok(cwd) = std::env::current_dir() else { return path.to_path_buf() };
    let (to, from) = (normal(path), normal(&cwd));
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    // Different roots (Windows drives), or `..` left to resolve: keep the path.
    if common == 0 || to[common..].contains(&Component::ParentDir) {
        return path.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

/// Analyzes `path` (a `.net` file, or a directory: every `.net` file below it) with the files
/// it uses, and returns the report of every scenario declared in it, as `netc report` makes
/// it: per scenario the parameters, MACs, the predicted peak with its phase, op and line, the
/// ledgers and breakdown at the peak, the budget, and the per-line figures. Warnings do not
/// stop it; an error does ([`AnalyzeError::Diagnostics`], which carries the diagnostics).
///
/// ```no_run
/// # fn main() -> Result<(), netc::AnalyzeError> {
/// let report = netc::analyze("models/resnet18.net")?;
/// // insta::assert_yaml_snapshot!(report);
/// assert!(report.scenarios.iter().all(|s| s.budget_bytes.is_none_or(|b| s.total_bytes <= b)));
/// # Ok(())
/// # }
/// ```
pub fn analyze(path: impl AsRef<Path>) -> Result<Report, AnalyzeError> {
    let path = relative(path.as_ref());
    if !path.exists() {
        return Err(AnalyzeError::NotFound(path));
    }
    let mut db = Database::new();
    let checked = check_paths(&mut db, std::slice::from_ref(&path));
    let diagnostics: Vec<Diagnostic> =
        checked.diagnostics.into_iter().filter(|d| d.severity == Severity::Error).collect();
    if !diagnostics.is_empty() {
        return Err(AnalyzeError::Diagnostics { diagnostics, sources: checked.sources });
    }
    Ok(crate::report::report(&db, &checked.roots, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_become_relative_to_the_current_directory() {
        let cwd = std::env::current_dir().expect("a current directory");
        assert_eq!(relative(&cwd.join("models/a.net")), PathBuf::from("models/a.net"));
        assert_eq!(relative(&cwd), PathBuf::from("."));
        let parent = cwd.parent().expect("not the root");
        assert_eq!(relative(&parent.join("stdlib/x.net")), PathBuf::from("../stdlib/x.net"));
        assert_eq!(relative(Path::new("given/as.net")), PathBuf::from("given/as.net"));
        assert_eq!(relative(&cwd.join("../x/../stdlib/./y.net")), PathBuf::from("../stdlib/y.net"));
    }
}
