//! Writing a file so that it is never left half-written: the one way the command line writes
//! (`netc fmt`, `netc snapshot`, `netc report --svg`).
//!
//! [`write()`] puts the new contents in a temporary file in the target's directory, writes it
//! fully and syncs it, gives it the target's permissions, then renames it over the target. A
//! rename within a directory is atomic: a reader, a crash, a full disk, a `ulimit -f` or a
//! kill in the middle see the old file or the new one, never a truncated one. On any failure
//! the target is untouched, the temporary file is removed (a process killed mid-write may
//! leave one behind: a hidden `.NAME.<pid>-<n>.netc-tmp`, which no command reads), and the
//! error names the file.
//!
//! Symbolic links are never written through by accident: with [`Links::Follow`] a link is
//! resolved to the file it finally points to, that file is replaced atomically in its own
//! directory, and the link stays a link; with [`Links::Refuse`] (snapshots, whose names netc
//! chooses) a link, or anything but a regular file, is an error. Permission to write is
//! checked as a plain write would (a read-only file stays read-only and is not replaced), and
//! a target that is not a regular file (a terminal, a pipe, `/dev/null`) is written to as a
//! stream when links are followed, since there is nothing there to truncate.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// What [`write()`] does when the target is a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Replace the file the link finally points to (atomically, in its own directory); the
    /// link itself is kept.
    Follow,
    /// Refuse a target that is a link or exists but is not a regular file.
    Refuse,
}

/// Why a file was not written: the path as given and what went wrong. Its display is one
/// line, `cannot write `PATH`: REASON`.
#[derive(Debug)]
pub struct WriteError {
    /// The path as the caller gave it.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write `{}`: {}", show(&self.path), self.reason)
    }
}

impl std::error::Error for WriteError {}

/// A path as the command line shows it: `/` separators, no leading `./`.
fn show(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

/// Writes `contents` to `path` atomically (see the module documentation).
pub fn write(path: &Path, contents: &[u8], links: Links) -> Result<(), WriteError> {
    let fail = |reason: String| WriteError { path: path.to_path_buf(), reason };
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if link && links == Links::Refuse {
        return Err(fail("it is a symbolic link, not a regular file".to_string()));
    }
    let target = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Err(fail("it is a directory".to_string())),
        Ok(meta) if !meta.is_file() => {
            if links == Links::Refuse {
                return Err(fail("it is not a regular file".to_string()));
            }
            // A terminal, a pipe, a device: no file to replace, nothing to truncate.
            return OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|mut stream| stream.write_all(contents).and_then(|()| stream.flush()))
                .map_err(|e| fail(e.to_string()));
        }
        Ok(meta) => {
            // As a plain write would: a file this process may not write is not replaced.
            if let Err(e) = OpenOptions::new().write(true).open(path) {
                return Err(fail(e.to_string()));
            }
            let real = if link {
                std::fs::canonicalize(path).map_err(|e| fail(format!("cannot resolve the symbolic link: {e}")))?
            } else {
                path.to_path_buf()
            };
            Target { path: real, existing: Some(meta) }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && link => {
            return Err(fail("it is a symbolic link to a file that does not exist".to_string()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Target { path: path.to_path_buf(), existing: None },
        Err(e) => return Err(fail(e.to_string())),
    };
    replace(&target, contents).map_err(fail)
}

/// A regular file to replace (or create), links resolved.
struct Target {
    path: PathBuf,
    existing: Option<std::fs::Metadata>,
}

/// Writes a temporary file beside `target` and renames it over it; removes the temporary file
/// on failure.
fn replace(target: &Target, contents: &[u8]) -> Result<(), String> {
    let dir = match target.path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (temp_path, file) = create_temporary(&dir, &target.path)?;
    let written = fill(file, contents, target.existing.as_ref())
        .and_then(|()| std::fs::rename(&temp_path, &target.path).map_err(|e| e.to_string()));
    if let Err(reason) = written {
        let _ = std::fs::remove_file(&temp_path);
        return Err(reason);
    }
    sync_directory(&dir);
    Ok(())
}

/// Creates a new temporary file in `dir` for `target` (hidden, and not ending in `.net`, so
/// that no command picks it up).
fn create_temporary(dir: &Path, target: &Path) -> Result<(PathBuf, File), String> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    // A prefix of the target's name, short enough that the temporary name fits the limit of
    // a file name wherever the target's does.
    let name: String = target.file_name().map(|n| n.to_string_lossy().chars().take(32).collect()).unwrap_or_default();
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}-{n}.netc-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(format!("cannot create a temporary file in `{}`: {e}", show(dir))),
        }
    }
    Err(format!(
        "cannot create a temporary file in `{}`: {}",
        show(dir),
        last.map_or_else(|| "too many attempts".to_string(), |e| e.to_string())
    ))
}

/// Writes `contents` to the temporary `file`, gives it the permissions (and, where allowed,
/// the owner) of the file it replaces, and syncs it.
fn fill(mut file: File, contents: &[u8], existing: Option<&std::fs::Metadata>) -> Result<(), String> {
    file.write_all(contents).map_err(|e| e.to_string())?;
    if let Some(meta) = existing {
        file.set_permissions(meta.permissions()).map_err(|e| format!("cannot keep its permissions: {e}"))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            // Best effort: only a privileged process may give a file away.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
    }
    file.sync_all().map_err(|e| e.to_string())
}

/// Syncs the directory entry of the rename, where the platform allows it (best effort: the
/// new contents are already on disk).
fn sync_directory(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("netc-safe-write-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".netc-tmp"))
            .collect()
    }

    #[test]
    fn creates_and_replaces() {
        let dir = temp_dir("replace");
        let path = dir.join("a.txt");
        write(&path, b"one", Links::Refuse).unwrap();
        write(&path, b"two", Links::Refuse).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert!(leftovers(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_follows_links_when_asked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("links");
        let real = dir.join("real.txt");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        let refused = write(&link, b"new", Links::Refuse).unwrap_err();
        assert!(refused.to_string().contains("symbolic link"), "{refused}");
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "old");
        write(&link, b"new", Links::Follow).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
        let dangling = dir.join("dangling.txt");
        std::os::unix::fs::symlink("missing.txt", &dangling).unwrap();
        assert!(write(&dangling, b"x", Links::Follow).is_err());
        assert!(!dir.join("missing.txt").exists());
        assert!(leftovers(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failure_names_the_file_and_leaves_nothing() {
        let dir = temp_dir("fail");
        let missing = dir.join("no/such/dir/a.txt");
        let e = write(&missing, b"x", Links::Follow).unwrap_err();
        assert!(e.to_string().starts_with("cannot write `") && e.to_string().contains("a.txt"), "{e}");
        let e = write(&dir, b"x", Links::Follow).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        // A long name still leaves room for the temporary file's.
        let long = dir.join("x".repeat(250));
        write(&long, b"x", Links::Refuse).unwrap();
        assert!(leftovers(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
