//! Where kubectl's way of splitting a file into documents parts from YAML's. kubectl cuts a
//! YAML stream into parts at the lines that begin with `---` before any YAML is read
//! (apimachinery's `YAMLReader`), then reads one document from each part (go-yaml's
//! `Unmarshal`). Two texts read well as YAML and still do not reach the cluster as written:
//!
//! - a `---` line with anything but spaces and a comment after its dashes
//!   (`--- {apiVersion: v1, …}`): kubectl stops there, `invalid Yaml document separator: …`,
//!   and applies nothing of the file;
//! - a document after an end marker (`...`) with no `---` line between them: it is in the
//!   same part as the document before it, and kubectl never reads it.
//!
//! The launcher reads its documents with yaml.v3, as YAML does. The scan watches every line
//! once, as it is read, so a stream read in pieces is never read twice.

use crate::source::Position;

/// What kubectl makes differently of a file than YAML does: the first of each kind of place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubectlSplit {
    /// The first separator line kubectl refuses: where the text after `---` begins, and that
    /// text (trimmed, cut at a length fit for a message).
    pub refused_separator: Option<(Position, String)>,
    /// The first document kubectl does not read: where it begins, and the line of the end
    /// marker before it.
    pub unread_document: Option<(Position, usize)>,
    /// Whether the text holds a tab anywhere: go-yaml refuses tabs in places yaml-rust2 reads
    /// them (`go_yaml_refused_tab` finds where), and most texts hold none.
    pub holds_tab: bool,
}

/// The most of a line kept to judge it, in bytes (the text after a refused `---` is cut
/// here).
const KEPT: usize = 120;

/// A scan of a stream's lines, fed as its bytes are read.
#[derive(Debug, Default)]
pub struct SplitScan {
    /// Lines ended so far.
    lines: usize,
    /// Whether the next byte begins a line.
    mid_line: bool,
    /// Whether the current line is kept (it may matter: it begins with `-` or `.`, or follows
    /// an end marker).
    keep: bool,
    /// The kept line's first bytes.
    line: Vec<u8>,
    /// The line of the end marker that ends the current part's document, if one does.
    ended: Option<usize>,
    found: KubectlSplit,
}

impl SplitScan {
    /// Read the next bytes of the stream.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.found.holds_tab = self.found.holds_tab || memchr::memchr(b'\t', bytes).is_some();
        while !bytes.is_empty() {
            if !self.mid_line && self.ended.is_none() && !matches!(bytes[0], b'-' | b'.') {
                // Most lines: begun with neither `-` nor `.`, with no end marker open, they
                // cannot matter and are only counted.
                match memchr::memchr(b'\n', bytes) {
                    Some(i) => {
                        self.lines += 1;
                        bytes = &bytes[i + 1..];
                        continue;
                    }
                    None => {
                        (self.mid_line, self.keep) = (true, false);
                        return;
                    }
                }
            }
            if !self.mid_line {
                self.mid_line = true;
                self.keep = self.ended.is_some() || matches!(bytes[0], b'-' | b'.');
            }
            let end = memchr::memchr(b'\n', bytes);
            if self.keep {
                let part = &bytes[..end.unwrap_or(bytes.len())];
                let room = KEPT.saturating_sub(self.line.len());
                self.line.extend_from_slice(&part[..part.len().min(room)]);
            }
            match end {
                Some(i) => {
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => return,
            }
        }
    }

    /// The stream has ended: what was found.
    pub fn finish(mut self) -> KubectlSplit {
        if self.mid_line {
            self.end_line();
        }
        self.found
    }

    fn end_line(&mut self) {
        let number = self.lines + 1;
        let line = std::mem::take(&mut self.line);
        if let Some(rest) = line.strip_prefix(b"---") {
            // A new part.
            self.ended = None;
            let (said, text, column) = after_marker(rest);
            if said && self.found.refused_separator.is_none() {
                let mut text = String::from_utf8_lossy(text).trim_end().to_string();
                if line.len() >= KEPT {
                    text.push('…');
                }
                self.found.refused_separator = Some((Position { line: number, column }, text));
            }
        } else if line.strip_prefix(b"...").is_some_and(|rest| !after_marker(rest).0) {
            // An end marker (a second one ends nothing more).
            self.ended = self.ended.or(Some(number));
        } else if let Some(end) = self.ended {
            // After an end marker: a line with anything but a comment (or a directive, which
            // belongs to the next part's document) begins a document kubectl never reads.
            let indent = line.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\r')).count();
            if line.get(indent).is_some_and(|b| !matches!(b, b'#' | b'%')) {
                if self.found.unread_document.is_none() {
                    self.found.unread_document = Some((Position { line: number, column: indent + 1 }, end));
                }
                self.ended = None;
            }
        }
        self.lines += 1;
        self.mid_line = false;
    }
}

/// What follows a marker's three characters: whether it says anything (is not spaces and a
/// comment), its text from its first character, and the column that begins at.
fn after_marker(rest: &[u8]) -> (bool, &[u8], usize) {
    let spaces = rest.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)).count();
    let text = &rest[spaces..];
    (!(text.is_empty() || text[0] == b'#'), text, 4 + spaces)
}

/// What kubectl makes differently of `text` than YAML does.
pub fn kubectl_split(text: &str) -> KubectlSplit {
    let mut scan = SplitScan::default();
    scan.feed(text.as_bytes());
    scan.finish()
}

/// A reader whose bytes are scanned as they are read: each buffer the reader fills, whole,
/// when it is first seen (a buffer at a time, not a line at a time as a line reader consumes
/// it). What is scanned ahead of what is consumed is at most a buffer read and never taken,
/// when the reading stops early; nothing is scanned twice.
pub struct Scanned<'a, R> {
    reader: R,
    scan: &'a mut SplitScan,
    /// Bytes at the front of the reader's buffer already scanned.
    ahead: usize,
}

impl<'a, R> Scanned<'a, R> {
    /// `reader`, scanned by `scan`.
    pub fn new(reader: R, scan: &'a mut SplitScan) -> Scanned<'a, R> {
        Scanned { reader, scan, ahead: 0 }
    }
}

impl<R: std::io::BufRead> std::io::Read for Scanned<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = std::io::BufRead::fill_buf(self)?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Scanned<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let available = self.reader.fill_buf()?;
        if let Some(new) = available.get(self.ahead..).filter(|new| !new.is_empty()) {
            self.scan.feed(new);
            self.ahead = available.len();
        }
        Ok(available)
    }

    fn consume(&mut self, amount: usize) {
        self.ahead = self.ahead.saturating_sub(amount);
        self.reader.consume(amount);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn separator(t: &str) -> Option<(usize, usize, String)> {
        kubectl_split(t).refused_separator.map(|(at, text)| (at.line, at.column, text))
    }

    fn unread(t: &str) -> Option<(usize, usize, usize)> {
        kubectl_split(t).unread_document.map(|(at, end)| (at.line, at.column, end))
    }

    #[test]
    fn a_separator_followed_by_anything_but_a_comment_is_found_where_kubectl_stops() {
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
            assert_eq!(kubectl_split(ok), KubectlSplit::default(), "{ok:?}");
        }
        assert_eq!(separator("a: 1\n--- {b: 2}\n"), Some((2, 5, "{b: 2}".into())));
        assert_eq!(separator("---apiVersion: v1\n"), Some((1, 4, "apiVersion: v1".into())));
        assert_eq!(separator("---\t  !!map {}  \r\n--- {c}\n"), Some((1, 7, "!!map {}".into())));
        assert_eq!(separator("a: 1\n-----END KEY-----"), Some((2, 4, "--END KEY-----".into())));
        let long = format!("--- {}\n", "x".repeat(500));
        let text = separator(&long).unwrap().2;
        assert!(text.ends_with('…') && text.len() < 130, "{text}");
    }

    #[test]
    fn a_document_after_an_end_marker_in_the_same_part_is_one_kubectl_does_not_read() {
        for ok in [
            "a: 1\n...\n",
            "a: 1\n...\n---\nb: 2\n",
            "a: 1\n... # end\n\n# a comment\n  \n--- # next\nb: 2\n",
            "a: 1\n...\n%YAML 1.2\n---\nb: 2\n",
            "a: 1\n...\n...\n",
            "a: |\n  ...\n  b: 2\n",
        ] {
            assert_eq!(kubectl_split(ok), KubectlSplit::default(), "{ok:?}");
        }
        assert_eq!(unread("a: 1\n...\nb: 2\n"), Some((3, 1, 2)));
        assert_eq!(unread("a: 1\n...\r\n\n  {b: 2}\n...\nc: 3\n"), Some((4, 3, 2)));
        assert_eq!(unread("---\na: 1\n... # end\n- b\n"), Some((4, 1, 3)));
    }

    #[test]
    fn bytes_fed_in_any_pieces_are_scanned_as_one_stream() {
        let text = "a: 1\n--\n---  # fine\nb: [1]\n...\nc: 3\n--- {c: 3}\n";
        let whole = kubectl_split(text);
        assert_eq!(
            (whole.refused_separator.as_ref().map(|s| s.0), whole.unread_document.map(|u| u.0)),
            (Some(Position { line: 7, column: 5 }), Some(Position { line: 6, column: 1 }))
        );
        for size in 1..text.len() {
            let mut scan = SplitScan::default();
            text.as_bytes().chunks(size).for_each(|c| scan.feed(c));
            assert_eq!(scan.finish(), whole, "pieces of {size}");
        }
        let mut scan = SplitScan::default();
        let mut read = String::new();
        let reader = std::io::BufReader::with_capacity(3, text.as_bytes());
        std::io::Read::read_to_string(&mut Scanned::new(reader, &mut scan), &mut read).unwrap();
        assert_eq!((read.as_str(), scan.finish()), (text, whole));
    }
}
