//! The document separator lines kubectl refuses. kubectl splits a YAML stream into documents
//! by lines before any YAML is read (apimachinery's `YAMLReader`): a line that begins with
//! `---` ends a document, and anything but spaces and a comment after those three dashes stops
//! the stream with `invalid Yaml document separator: …`. YAML itself (and the launcher's
//! yaml.v3) reads `--- {apiVersion: v1, …}` as a document that begins on its marker's line,
//! so a file can read well and still be refused by `kubectl apply`. The scan watches every
//! byte once, as it is read, so a stream read in pieces is never read twice.

use super::Position;

/// The first separator line kubectl refuses: where what follows the dashes begins, and what
/// it is (as kubectl words it, trimmed; cut at a length fit for a message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedSeparator {
    /// Where the text after `---` begins.
    pub at: Position,
    /// That text, to the line's end.
    pub content: String,
}

/// Where the scan is in the current line.
#[derive(Clone, Copy, Debug, Default)]
enum State {
    /// At the line's start.
    #[default]
    Start,
    /// One or two dashes read at the line's start.
    Dashes(u8),
    /// After `---`: spaces so far.
    AfterDashes,
    /// Text after `---` that is not a comment: refused.
    Content,
    /// A line that is not a separator, to its end.
    Other,
}

/// The longest content kept for the message, in bytes.
const KEPT: usize = 120;

/// A scan of a stream's bytes, fed as they are read.
#[derive(Debug, Default)]
pub struct SeparatorScan {
    state: State,
    /// Lines ended so far.
    lines: usize,
    /// Bytes read of the current line.
    column: usize,
    content: Vec<u8>,
    content_at: Position,
    found: Option<RefusedSeparator>,
}

impl SeparatorScan {
    /// Read the next bytes of the stream.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.found.is_none() {
            if let State::Other = self.state {
                // Nothing on this line matters: to the next one at once.
                match memchr::memchr(b'\n', bytes) {
                    Some(i) => {
                        self.end_line();
                        bytes = &bytes[i + 1..];
                    }
                    None => return,
                }
                continue;
            }
            let b = bytes[0];
            bytes = &bytes[1..];
            if b == b'\n' {
                self.end_line();
                continue;
            }
            self.state = match (self.state, b) {
                (State::Start, b'-') => State::Dashes(1),
                (State::Dashes(n), b'-') if n < 2 => State::Dashes(n + 1),
                (State::Dashes(2), b'-') => State::AfterDashes,
                (State::AfterDashes, b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => State::AfterDashes,
                (State::AfterDashes, b'#') => State::Other,
                (State::AfterDashes, _) => {
                    self.content_at = Position { line: self.lines + 1, column: self.column + 1 };
                    self.content.push(b);
                    State::Content
                }
                (State::Content, _) => {
                    if self.content.len() < KEPT {
                        self.content.push(b);
                    }
                    State::Content
                }
                _ => State::Other,
            };
            self.column += 1;
        }
    }

    /// The stream has ended: the first refused separator, if there is one.
    pub fn finish(mut self) -> Option<RefusedSeparator> {
        self.end_line();
        self.found
    }

    fn end_line(&mut self) {
        if let State::Content = self.state {
            let mut content = String::from_utf8_lossy(&self.content).trim_end().to_string();
            if self.content.len() >= KEPT {
                content.push('…');
            }
            self.found = Some(RefusedSeparator { at: self.content_at, content });
        }
        self.state = State::Start;
        self.lines += 1;
        self.column = 0;
        self.content.clear();
    }
}

/// The first separator line kubectl refuses in `text`.
pub fn refused_separator(text: &str) -> Option<RefusedSeparator> {
    let mut scan = SeparatorScan::default();
    scan.feed(text.as_bytes());
    scan.finish()
}

/// A reader whose bytes are scanned as they are taken from it.
pub struct Scanned<'a, R> {
    /// What is read.
    pub reader: R,
    /// What scans it.
    pub scan: &'a mut SeparatorScan,
}

impl<R: std::io::BufRead> std::io::Read for Scanned<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.reader.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Scanned<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if let Ok(taken) = self.reader.fill_buf() {
            self.scan.feed(&taken[..amount.min(taken.len())]);
        }
        self.reader.consume(amount);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_separator_followed_by_anything_but_a_comment_is_found_where_kubectl_stops() {
        let found = |t: &str| refused_separator(t).map(|s| (s.at.line, s.at.column, s.content));
        // What kubectl reads: a bare marker, spaces, a comment, CRLF, dashes elsewhere.
        for ok in [
            "a: 1\n---\nb: 2\n",
            "---   \na: 1\n",
            "--- # the next one\na: 1\n",
            "---\r\na: 1\r\n",
            "a: |\n  --- {x}\n",
            "a: 1 --- b\n",
            "--",
            "",
        ] {
            assert_eq!(found(ok), None, "{ok:?}");
        }
        assert_eq!(found("a: 1\n--- {b: 2}\n"), Some((2, 5, "{b: 2}".into())));
        assert_eq!(found("---apiVersion: v1\n"), Some((1, 4, "apiVersion: v1".into())));
        assert_eq!(found("---\t  !!map {}  \r\n--- {c}\n"), Some((1, 7, "!!map {}".into())));
        assert_eq!(found("a: 1\n-----END KEY-----"), Some((2, 4, "--END KEY-----".into())));
        let long = format!("--- {}\n", "x".repeat(500));
        let content = found(&long).unwrap().2;
        assert!(content.ends_with('…') && content.len() < 130, "{content}");
    }

    #[test]
    fn bytes_fed_in_any_pieces_are_scanned_as_one_stream() {
        let text = "a: 1\n--\n---  # fine\nb: [1]\n--- {c: 3}\n";
        let whole = refused_separator(text);
        assert_eq!(whole.as_ref().map(|s| (s.at.line, s.at.column)), Some((5, 5)));
        for size in 1..text.len() {
            let mut scan = SeparatorScan::default();
            text.as_bytes().chunks(size).for_each(|c| scan.feed(c));
            assert_eq!(scan.finish(), whole, "pieces of {size}");
        }
        let mut scan = SeparatorScan::default();
        let mut read = String::new();
        let reader = std::io::BufReader::with_capacity(3, text.as_bytes());
        std::io::Read::read_to_string(&mut Scanned { reader, scan: &mut scan }, &mut read).unwrap();
        assert_eq!((read.as_str(), scan.finish()), (text, whole));
    }
}
