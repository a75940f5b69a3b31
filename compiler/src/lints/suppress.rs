//! Inline suppressions: `# netc: allow(name, ...)`.
//!
//! A suppression at the end of a line silences the named lints on that line. On a line of
//! its own it silences them on the next line, and when that line starts a block, model or
//! scenario, in the whole item. Names are lint names or codes; an unknown one is itself
//! reported (L0014 unknown-lint).

use crate::diagnostics::{Code, Diagnostic, FileName, Place, TextRange, line_end, line_start, next_line_start};
use crate::syntax::{Comment, Parse};

/// One suppression: which lints, over which byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    /// Lint names or codes.
    pub names: Vec<String>,
    /// The bytes it covers.
    pub range: TextRange,
}

fn line_bounds(text: &str, offset: usize) -> (usize, usize) {
    (line_start(text, offset), line_end(text, offset))
}

/// The suppressions of a file, and diagnostics for names that are no lint.
pub fn suppressions(file: &FileName, text: &str, parse: &Parse) -> (Vec<Suppression>, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut unknown = Vec::new();
    for Comment { range, trailing, .. } in &parse.comments {
        let body = &text[range.to_range()];
        let Some(at) = body.find("netc: allow(") else { continue };
        let list_start = at + "netc: allow(".len();
        let Some(close) = body[list_start..].find(')') else { continue };
        let names: Vec<String> = body[list_start..list_start + close]
            .split(',')
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        for name in &names {
            let known = Code::ALL.iter().any(|c| {
                let info = c.info();
                info.is_lint() && (info.name == name || info.code == name)
            });
            if !known {
                let lints: Vec<&str> =
                    Code::ALL.iter().map(|c| c.info()).filter(|i| i.is_lint()).map(|i| i.name).collect();
                let mut d = Diagnostic::new(
                    Code::UnknownLint,
                    format!("`{name}` is not a lint"),
                    file,
                    Place::Range(TextRange::new(
                        range.start + list_start as u32,
                        range.start + (list_start + close) as u32,
                    )),
                );
                d.help = crate::suggest::closest(name, lints.iter().copied()).map(|s| format!("did you mean `{s}`?"));
                unknown.push(d);
            }
        }
        let (line_start, line_end) = line_bounds(text, range.start as usize);
        let covered = if *trailing {
            TextRange::new(line_start as u32, line_end as u32)
        } else {
            // The next line; if it starts an item, the item.
            let next = next_line_start(text, line_end);
            let (next_start, next_end) = line_bounds(text, next);
            let item = parse
                .spans
                .iter()
                .map(|s| s.range(crate::syntax::NodeId(0)))
                .find(|r| r.start as usize >= next_start && (r.start as usize) <= next_end);
            item.unwrap_or(TextRange::new(next_start as u32, next_end as u32))
        };
        out.push(Suppression { names, range: covered });
    }
    (out, unknown)
}

/// Whether a diagnostic is silenced by one of `suppressions`.
pub fn is_suppressed(d: &Diagnostic, suppressions: &[Suppression]) -> bool {
    let info = d.code.info();
    if !info.is_lint() {
        return false;
    }
    let Place::Range(r) = d.primary().place else { return false };
    suppressions.iter().any(|s| {
        s.range.start <= r.start && r.start <= s.range.end && s.names.iter().any(|n| n == info.name || n == info.code)
    })
}
