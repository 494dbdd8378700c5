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
    let walked = walk(path, &globset::GlobSet::empty()).map_err(|e| (path.to_path_buf(), e))?;
    if walked.files.is_empty() {
        let why = walked.left_out("; ");
        let none = std::io::Error::new(std::io::ErrorKind::NotFound, format!("{NO_DOCUMENT_FILES}{why}"));
        return Err((path.to_path_buf(), none));
    }
    walked
        .files
        .into_iter()
        .map(|file| match read_text(&file) {
            Ok(text) => Ok((file, text)),
            Err(e) => Err((file, e)),
        })
        .collect()
}

/// A document file's text: UTF-8, or UTF-16 that begins with its byte-order mark (what
/// Windows PowerShell's `>` writes), read into UTF-8 as kubectl and the launcher read it (both
/// through go-yaml, which decodes it). Anything else is `InvalidData`, as `read_to_string`
/// says it.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    text_of(read_bounded(std::fs::File::open(path)?, &path.display().to_string())?)
}

/// The most bytes covenant reads from one file, pipe or stdin: a file past it (a sparse 2 GB
/// file, `/dev/zero` named as input, `check - < /dev/zero`) is refused, never read into memory.
/// Far above any manifest stream (a 50 000-document `helm template` is 171 MB).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Everything `reader` holds, refused past [`MAX_INPUT_BYTES`] (`name` says what it is).
pub fn read_bounded(reader: impl std::io::Read, name: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(name));
    }
    Ok(bytes)
}

/// The refusal of an input over [`MAX_INPUT_BYTES`].
pub fn too_large(name: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "{name} holds more than {} MiB, more than covenant reads from one input",
            MAX_INPUT_BYTES >> 20
        ),
    )
}

/// Why a regular file is too large to read, from its size (sparse files included).
pub fn oversized(path: &Path) -> Option<String> {
    let len = std::fs::metadata(path).ok()?.len();
    (len > MAX_INPUT_BYTES).then(|| {
        format!("is {len} bytes, more than the {} MiB covenant reads from one input", MAX_INPUT_BYTES >> 20)
    })
}

/// The byte order a UTF-16 text's mark says, from its first two bytes.
#[derive(Clone, Copy)]
enum Utf16 {
    Little,
    Big,
}

impl Utf16 {
    fn of(mark: &[u8]) -> Option<Utf16> {
        match mark.get(..2)? {
            [0xFF, 0xFE] => Some(Utf16::Little),
            [0xFE, 0xFF] => Some(Utf16::Big),
            _ => None,
        }
    }

    /// The mark a file begins with, if it begins with one.
    fn of_file(path: &Path) -> Option<Utf16> {
        use std::io::Read;
        let mut mark = [0u8; 2];
        std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut mark)).ok()?;
        Utf16::of(&mark)
    }

    fn mark(self) -> [u8; 2] {
        match self {
            Utf16::Little => [0xFF, 0xFE],
            Utf16::Big => [0xFE, 0xFF],
        }
    }

    fn unit(self, pair: [u8; 2]) -> u16 {
        match self {
            Utf16::Little => u16::from_le_bytes(pair),
            Utf16::Big => u16::from_be_bytes(pair),
        }
    }

    fn bytes(self, unit: u16) -> [u8; 2] {
        match self {
            Utf16::Little => unit.to_le_bytes(),
            Utf16::Big => unit.to_be_bytes(),
        }
    }
}

/// `read_text` of bytes already read (stdin).
pub fn text_of(bytes: Vec<u8>) -> std::io::Result<String> {
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let Some(order) = Utf16::of(&bytes) else {
        return String::from_utf8(bytes).map_err(|_| invalid("stream did not contain valid UTF-8".into()));
    };
    let units = bytes[2..].chunks(2).map(|pair| match *pair {
        [a, b] => Ok(order.unit([a, b])),
        _ => Err(()),
    });
    let (mut text, mut at) = (String::with_capacity(bytes.len()), 2);
    for c in char::decode_utf16(units.map_while(Result::ok)) {
        let c = c.map_err(|_| invalid(format!("not valid UTF-16: an unpaired surrogate at byte {at}")))?;
        at += 2 * c.len_utf16();
        text.push(c);
    }
    if !bytes.len().is_multiple_of(2) {
        return Err(invalid(format!("not valid UTF-16: an odd byte at its end (byte {})", bytes.len() - 1)));
    }
    Ok(text)
}

/// Write `text` over the document file at `path` in the encoding it has now: UTF-16 with the
/// same byte-order mark if it begins with one (`read_text` read it into UTF-8), else UTF-8. A
/// pin moved or a stamp written in place changes no other byte.
pub fn write_text(path: &Path, text: &str) -> std::io::Result<()> {
    let Some(order) = Utf16::of_file(path) else { return std::fs::write(path, text) };
    let bytes: Vec<u8> =
        order.mark().into_iter().chain(text.encode_utf16().flat_map(|u| order.bytes(u))).collect();
    std::fs::write(path, bytes)
}

/// `target` as a path relative to `from`, both resolved (symlinks, `.`, `..`) first: how a
/// kustomize overlay names its base (kustomize refuses absolute paths) and a baseline names a
/// checked file. Either missing is an error.
pub fn relative_to(target: &Path, from: &Path) -> std::io::Result<PathBuf> {
    let (target, from) = (std::fs::canonicalize(target)?, std::fs::canonicalize(from)?);
    let common = target.components().zip(from.components()).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in from.components().skip(common) {
        out.push("..");
    }
    for c in target.components().skip(common) {
        out.push(c);
    }
    Ok(out)
}

/// Whether `path` names a pipe or a device (`<(helm template …)`, `/dev/stdin`): text that can
/// be read once, as it comes, and must be kept if it is needed again.
pub fn is_stream(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_dir() && !m.is_file())
}

/// Whether a file begins with a UTF-16 byte-order mark (`read_text` reads it whole).
pub fn is_utf16(path: &Path) -> bool {
    Utf16::of_file(path).is_some()
}

/// The extensions of the files `check` reads in a directory, as kubectl does: lower case only.
const DOCUMENT_EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// Whether a file name is one `check` reads: `*.yaml`, `*.yml` or `*.json`.
pub fn is_document_file(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e))
}

/// A file name's extension when it is a document file's in another case (`.YAML`, `.Json`):
/// a file `check` leaves out of a directory, as kubectl does, but says so.
fn document_extension_cased_otherwise(path: &Path) -> Option<&str> {
    let ext = path.extension()?.to_str()?;
    DOCUMENT_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)).then_some(ext)
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

impl Walked {
    /// What the walk left out, each note after `separator`: said with an error about a
    /// directory that held no document file, since what was left out may be why.
    pub fn left_out(&self, separator: &str) -> String {
        self.notes.iter().map(|n| format!("{separator}{n}")).collect()
    }
}

/// Whether `exclude` leaves out `p`, an entry met walking `root`: by its path relative to
/// `root`, or by its name.
fn excluded_here(root: &Path, p: &Path, exclude: &globset::GlobSet) -> bool {
    let relative = p.strip_prefix(root).unwrap_or(p);
    exclude.is_match(relative) || p.file_name().is_some_and(|n| exclude.is_match(n))
}

/// Whether a walk of `root` would leave out `file` (a path below it): it, or a directory on
/// the way to it, is excluded. For files listed otherwise than by a walk (a git ref's).
pub fn excluded_below(root: &Path, file: &Path, exclude: &globset::GlobSet) -> bool {
    file.ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && *a != root)
        .any(|a| excluded_here(root, a, exclude))
}

/// Walk `path` for document files: `.git` directories are skipped, paths (relative to
/// `path`) or file names matching `exclude` are left out, and a directory reached again
/// through a symlink (a loop, or a second way in) is walked once and reported once.
pub fn walk(path: &Path, exclude: &globset::GlobSet) -> std::io::Result<Walked> {
    let meta = std::fs::metadata(path)?;
    let mut walked = Walked::default();
    // A file, or a pipe (`<(helm template …)`) or device named as one.
    if !meta.is_dir() {
        walked.files.push(path.to_path_buf());
        return Ok(walked);
    }
    let excluded = |p: &Path| excluded_here(path, p, exclude);
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
            } else if is_document_file(&p) && std::fs::metadata(&p).is_ok_and(|m| !m.is_file()) {
                // A FIFO (which would block with no writer), a device (`/dev/zero` behind a
                // symlink) or a socket is never read from a walk; named alone, it is read.
                walked.notes.push(format!(
                    "{} was not read: it is not a regular file (a pipe, device or socket); name it on its own to read it",
                    p.display()
                ));
            } else if is_document_file(&p) {
                walked.files.push(p);
            } else if let Some(ext) = document_extension_cased_otherwise(&p) {
                walked.notes.push(format!(
                    "{} was not read: kubectl too skips it in a directory, where it reads *.yaml, *.yml and \
                     *.json in lower case only (name it *.{} to have both read it)",
                    p.display(),
                    ext.to_lowercase()
                ));
            }
        }
    }
    walked.files.sort();
    Ok(walked)
}

#[cfg(test)]
mod tests {
    use super::text_of;

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let mut bytes = if big_endian { vec![0xFE, 0xFF] } else { vec![0xFF, 0xFE] };
        for unit in text.encode_utf16() {
            bytes.extend(if big_endian { unit.to_be_bytes() } else { unit.to_le_bytes() });
        }
        bytes
    }

    #[test]
    fn utf16_with_its_mark_is_read_as_utf8_and_anything_else_not_utf8_is_refused() {
        let text = "kind: ConfigMap\ndata: {emoji: \"\u{1F600}\", é: ü}\n";
        assert_eq!(text_of(text.as_bytes().to_vec()).unwrap(), text);
        assert_eq!(text_of(utf16(text, false)).unwrap(), text);
        assert_eq!(text_of(utf16(text, true)).unwrap(), text);
        // Where UTF-16 breaks is said: a surrogate pair counts four bytes.
        let mut broken = utf16("\u{1F600}a", false);
        broken.extend([0x00, 0xD8, b'b', 0x00]);
        let err = text_of(broken).unwrap_err();
        assert!(err.to_string().contains("unpaired surrogate at byte 8"), "{err}");
        let mut odd = utf16("ab", true);
        odd.push(b'c');
        assert!(text_of(odd).unwrap_err().to_string().contains("odd byte at its end (byte 6)"));
        // Neither UTF-8 nor marked UTF-16 (Latin-1): refused, as before.
        assert_eq!(text_of(b"name: caf\xe9\n".to_vec()).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
    }
}
