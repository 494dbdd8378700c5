//! Finding the document files under a path: what `check`, `diff`, the offline cluster view
//! and the tests read. A directory is walked in name order, `.git` left out, and a directory
//! reached twice through a symlink walked once and named.

use std::path::{Path, PathBuf};

/// What is said of a directory named to be read that holds no document file.
pub const NO_DOCUMENT_FILES: &str = "holds no *.yaml, *.yml or *.json file";

/// The document files at `path` (itself if it is a file, else those `discover` finds below
/// it), each read whole, in name order. A directory that holds none is an error, never an
/// empty answer: a path named to be read was meant to hold something. An error comes with the
/// path it is about.
pub fn read_all(path: &Path) -> Result<Vec<(PathBuf, String)>, (PathBuf, std::io::Error)> {
    let files = discover(path).map_err(|e| (path.to_path_buf(), e))?;
    if files.is_empty() {
        let none = std::io::Error::new(std::io::ErrorKind::NotFound, NO_DOCUMENT_FILES);
        return Err((path.to_path_buf(), none));
    }
    files
        .into_iter()
        .map(|file| match std::fs::read_to_string(&file) {
            Ok(text) => Ok((file, text)),
            Err(e) => Err((file, e)),
        })
        .collect()
}

/// Whether a file name is one `check` reads: `*.yaml`, `*.yml` or `*.json`.
pub fn is_document_file(path: &Path) -> bool {
    matches!(path.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
}

/// The files under a path: the path itself if it is a file, else every `*.yaml`, `*.yml`
/// and `*.json` below it, sorted.
pub fn discover(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    walk(path, &globset::GlobSet::empty()).map(|w| w.files)
}

/// What a directory walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// The document files, sorted.
    pub files: Vec<PathBuf>,
    /// What the walk left out and why (a directory reached twice through a symlink).
    pub notes: Vec<String>,
}

/// Walk `path` for document files: `.git` directories are skipped, paths (relative to
/// `path`) or file names matching `exclude` are left out, and a directory reached again
/// through a symlink (a loop, or a second way in) is walked once and reported once.
pub fn walk(path: &Path, exclude: &globset::GlobSet) -> std::io::Result<Walked> {
    let meta = std::fs::metadata(path)?;
    let mut walked = Walked::default();
    if meta.is_file() {
        walked.files.push(path.to_path_buf());
        return Ok(walked);
    }
    let excluded = |p: &Path| {
        let relative = p.strip_prefix(path).unwrap_or(p);
        exclude.is_match(relative) || p.file_name().is_some_and(|n| exclude.is_match(n))
    };
    let mut visited = std::collections::HashSet::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if !visited.insert(std::fs::canonicalize(&dir)?) {
            walked.notes.push(format!(
                "{} was not walked: it leads (through a symlink) to a directory already walked",
                dir.display()
            ));
            continue;
        }
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(&dir)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
        entries.sort();
        for p in entries.into_iter().rev() {
            if excluded(&p) {
                continue;
            }
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == ".git") {
                    continue;
                }
                stack.push(p);
            } else if is_document_file(&p) {
                walked.files.push(p);
            }
        }
    }
    walked.files.sort();
    Ok(walked)
}
