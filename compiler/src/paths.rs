//! File names: joining a `use` path to the name of the file that has it. Purely textual
//! (no file system access), so the compiler stays free of IO.

use crate::diagnostics::FileName;

/// The name of the file that `use "relative"` in `base` refers to: `relative` joined to the
/// directory of `base`, with `.` and `..` segments resolved. An absolute `relative` is kept.
pub fn resolve_relative(base: &FileName, relative: &str) -> FileName {
    let relative = relative.replace('\\', "/");
    if relative.starts_with('/') {
        return FileName::new(normalize(&relative));
    }
    let dir = match base.as_str().rfind('/') {
        Some(slash) => &base.as_str()[..=slash],
        None => "",
    };
    FileName::new(normalize(&format!("{dir}{relative}")))
}

/// Resolves `.` and `..` segments. Leading `..` segments of a relative path are kept.
fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(base: &str, rel: &str) -> String {
        resolve_relative(&FileName::new(base), rel).to_string()
    }

    #[test]
    fn joins_and_normalizes() {
        assert_eq!(resolve("models/a.net", "blocks.net"), "models/blocks.net");
        assert_eq!(resolve("models/a.net", "../common/b.net"), "common/b.net");
        assert_eq!(resolve("a.net", "./b.net"), "b.net");
        assert_eq!(resolve("a.net", "../b.net"), "../b.net");
        assert_eq!(resolve("/x/y/a.net", "../../../b.net"), "/b.net");
        assert_eq!(resolve("m/a.net", "/abs/c.net"), "/abs/c.net");
    }
}
