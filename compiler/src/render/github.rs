//! GitHub Actions workflow commands: one `::error`, `::warning` or `::notice` line per
//! diagnostic, which a workflow run shows as an annotation on the file and line.
//!
//! `::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=E0204 undefined-name::MESSAGE`:
//! positions as in the JSON format (1-based, columns in characters, the end just after the
//! range), without the columns when the range spans several lines (GitHub takes columns only
//! on one line); the message carries the notes and help on lines of their own. Property
//! values escape `%`, `\r`, `\n`, `:` and `,`; the message escapes `%`, `\r` and `\n`.

use super::{Index, Sources};
use crate::diagnostics::{Diagnostic, Severity};

/// Escapes the message of a workflow command.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Renders one workflow command per diagnostic, each on its own line.
pub fn github(diagnostics: &[Diagnostic], sources: &dyn Sources) -> String {
    let mut out = String::new();
    let index = Index::new(diagnostics, sources);
    for d in diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Help => "notice",
        };
        let primary = d.primary();
        let (start, end) = index.bounds(primary);
        let (start, end) = (start.line_col(), end.line_col());
        let info = d.code.info();
        let mut message = d.message.clone();
        for note in &d.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = &d.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let position = if start.line == end.line {
            format!("line={},col={},endLine={},endColumn={}", start.line, start.column, end.line, end.column)
        } else {
            format!("line={},endLine={}", start.line, end.line)
        };
        out.push_str(&format!(
            "::{command} file={},{position},title={}::{}\n",
            escape_property(primary.file.as_str()),
            escape_property(&format!("{} {}", info.code, info.name)),
            escape_data(&message),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::diagnostics::{Code, FileName, Place, TextRange};

    #[test]
    fn ranges_over_several_lines_have_no_columns() {
        let file = FileName::new("m.net");
        let sources = BTreeMap::from([(file.clone(), "block b(x) {\n    return x\n}\n".to_string())]);
        let d = Diagnostic::new(Code::MissingReturn, "m", &file, Place::Range(TextRange::new(6, 25)));
        assert_eq!(github(&[d], &sources), "::error file=m.net,line=1,endLine=2,title=E0215 missing-return::m\n");
        let d = Diagnostic::new(Code::MissingReturn, "m", &file, Place::Range(TextRange::new(6, 7)));
        assert_eq!(
            github(&[d], &sources),
            "::error file=m.net,line=1,col=7,endLine=1,endColumn=8,title=E0215 missing-return::m\n"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_data("100% sure\r\nnext: a, b"), "100%25 sure%0D%0Anext: a, b");
        assert_eq!(escape_property("C:\\a,b%\n"), "C%3A\\a%2Cb%25%0A");
    }
}
