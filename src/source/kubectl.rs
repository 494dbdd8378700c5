//! kubectl's reading, where it differs from YAML's: one place for everything covenant reads
//! as kubectl reads it (go-yaml v2 through sigs.k8s.io/yaml), or says kubectl reads otherwise.
//! The general reader (`source`: the line reader and yaml-rust2, into values with positions)
//! knows none of it but the calls made here:
//!
//! - **Tabs after a key's `:`** (`name:\tweb`): go-yaml reads the tab as the space it
//!   separates with; yaml-rust2 refuses it. `TabsAsSpaces` gives the characters of each
//!   document with every such tab as a space before the scanner sees them, found by one
//!   reading of the document (`tabs::tabs_after_colons`); a tab in a quoted or block scalar
//!   or a comment stays a tab. No reading is decided by what an error message says.
//! - **Tabs go-yaml refuses** where yaml-rust2 reads them (a tab beginning a line, after a
//!   `-`, in indentation): `go_yaml_refused_tab`, which `check` reports.
//! - **Where kubectl splits a stream** otherwise than YAML (`---` inside a block scalar, a
//!   marker with text after it): `kubectl_split`.
//! - **Streams of JSON objects** (`jq -c` output, no `---` between them): kubectl reads each
//!   value as a document; YAML stops after the first. `json_stream_after`.
//! - **Scalars and keys** (`scalars`): go-yaml's resolution of plain and tagged scalars, the
//!   JSON member names kubectl makes of keys, and the plain scalars kubectl reads as something
//!   other than text (`on`, `.inf`: CVN-110).

use serde_json::Value;

use super::{general_from, Position, Resume, SourceDocument, SyntaxError};

mod scalars;
mod split;
mod tabs;

pub(super) use scalars::{json_key, reads_otherwise, scalar};
pub use split::{kubectl_split, KubectlSplit};
pub(super) use split::{Scanned, SplitScan};
pub use tabs::{go_yaml_refused_tab, RefusedTab};

/// The characters of a stream, a document at a time, with every run of tabs after a mapping
/// key's `:` that go-yaml reads as a space given as spaces (a tab and a space are one
/// character each, so every position stays where it was). A document is held while it is
/// looked at — from a line that begins one (`---`, or `...` that ends the one before) to the
/// next — and looked at only when it holds a `:` with a tab after it.
pub(super) struct TabsAsSpaces<I: Iterator<Item = char>> {
    chars: I,
    /// The document being given, and how far.
    document: String,
    at: usize,
    /// The start of the marker line that ended the last document read: the next one's start.
    carry: String,
    done: bool,
}

impl<I: Iterator<Item = char>> TabsAsSpaces<I> {
    pub(super) fn new(chars: I) -> TabsAsSpaces<I> {
        TabsAsSpaces { chars, document: String::new(), at: 0, carry: String::new(), done: false }
    }

    /// Read the next document (with the marker line that begins it, and up to the one that
    /// begins the next), its tabs after keys' colons taken for spaces.
    fn read_document(&mut self) {
        let mut document = std::mem::take(&mut self.carry);
        document.reserve(4096);
        // Where the current line starts; the document's own first line is never a marker
        // that ends it.
        let mut line = document.rfind('\n').map_or(0, |i| i + 1);
        let mut first_line = line == 0;
        let mut colon_tab = document.contains(":\t");
        let mut last = document.chars().next_back();
        while !self.done {
            let Some(c) = self.chars.next() else {
                self.done = true;
                break;
            };
            colon_tab |= c == '\t' && last == Some(':');
            last = Some(c);
            document.push(c);
            if c == '\n' {
                line = document.len();
                first_line = false;
            } else if !first_line && document.len() - line == 3 && matches!(&document[line..], "---" | "...")
            {
                // A marker, when a blank, a line's end or the text's end follows.
                match self.chars.next() {
                    next @ (None | Some(' ' | '\t' | '\r' | '\n')) => {
                        self.carry = document.split_off(line);
                        self.carry.extend(next);
                        self.done = next.is_none();
                        break;
                    }
                    Some(c) => {
                        last = Some(c);
                        document.push(c);
                    }
                }
            }
        }
        if colon_tab {
            space_tabs_after_colons(&mut document);
        }
        self.document = document;
        self.at = 0;
    }
}

/// Every run of tabs after a key's `:` in `document` made spaces (a tab and a space are one
/// byte each: every position stays where it was).
fn space_tabs_after_colons(document: &mut String) {
    // Each run is given by the index, in characters, of the character after it, in order.
    let mut runs = tabs::tabs_after_colons(document.chars()).into_iter().peekable();
    let offsets = document.char_indices().map(|(byte, _)| byte).chain([document.len()]);
    let ends: Vec<usize> =
        offsets.enumerate().filter_map(|(n, byte)| runs.next_if_eq(&n).map(|_| byte)).collect();
    for end in ends {
        let run = document[..end].bytes().rev().take_while(|b| *b == b'\t').count();
        document.replace_range(end - run..end, &" ".repeat(run));
    }
}

impl<I: Iterator<Item = char>> Iterator for TabsAsSpaces<I> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        loop {
            if let Some(c) = self.document[self.at..].chars().next() {
                self.at += c.len_utf8();
                return Some(c);
            }
            if self.done && self.carry.is_empty() {
                return None;
            }
            self.read_document();
        }
    }
}

/// Where YAML stopped at `error`, the rest of a text that is a stream of JSON objects, as
/// kubectl reads one (`jq -c` output: objects one after another, no `---` between them): each
/// value a document of its own, at its own line and column. Else the error stands.
pub(super) fn json_stream_after(
    text: &str,
    error: SyntaxError,
    sink: &mut dyn FnMut(SourceDocument),
) -> Option<SyntaxError> {
    let spans = match json_stream(text) {
        JsonStream::Values(spans) => spans,
        JsonStream::Broken(e, documents_before) => return Some(json_error(text, &e, documents_before)),
        JsonStream::Not => return Some(error),
    };
    // YAML reads the first object, and stops where the next begins.
    let first = error.documents_before;
    if first >= spans.len() {
        return Some(error);
    }
    for (index, span) in spans.into_iter().enumerate().skip(first) {
        let before = &text[..span.start];
        let lines = memchr::memchr_iter(b'\n', before.as_bytes()).count();
        let column = before[before.rfind('\n').map_or(0, |n| n + 1)..].chars().count();
        let value = format!("{}{}", " ".repeat(column), &text[span]);
        let from = Resume { lines, documents: index, skip: 0 };
        if let Some(error) = general_from(value.chars(), from, sink) {
            return Some(error);
        }
    }
    None
}

/// What a text that YAML cannot read is, read as JSON.
enum JsonStream {
    /// Two or more JSON values with only whitespace between them: their spans.
    Values(Vec<std::ops::Range<usize>>),
    /// A text that starts with `{` and is not JSON either: JSON's error, after how many values.
    Broken(serde_json::Error, usize),
    /// Not JSON-looking, or one value JSON reads (YAML's error stands).
    Not,
}

/// `text` read as a stream of JSON values, if it starts with `{` as JSON does.
fn json_stream(text: &str) -> JsonStream {
    if !text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') {
        return JsonStream::Not;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut spans = Vec::new();
    loop {
        let from = values.byte_offset();
        match values.next() {
            None => break,
            Some(Ok(_)) => {
                let end = values.byte_offset();
                let blank =
                    text[from..end].len() - text[from..end].trim_start_matches([' ', '\t', '\n', '\r']).len();
                spans.push(from + blank..end);
            }
            // Stepped over, a value's error is worded less well ("key must be a string" for
            // a trailing comma): what is wrong is read again, into values.
            Some(Err(stepped)) => {
                let mut again = serde_json::Deserializer::from_str(text).into_iter::<Value>();
                return JsonStream::Broken(again.find_map(Result::err).unwrap_or(stepped), spans.len());
            }
        }
    }
    if spans.len() > 1 {
        JsonStream::Values(spans)
    } else {
        JsonStream::Not
    }
}

/// JSON's error as a syntax error at its character: serde_json counts a column in bytes, a
/// position here counts characters.
fn json_error(text: &str, e: &serde_json::Error, documents_before: usize) -> SyntaxError {
    let said = e.to_string();
    let reason = said.rsplit_once(" at line ").map_or(said.as_str(), |(reason, _)| reason).to_string();
    let line_text = text.split('\n').nth(e.line().saturating_sub(1)).unwrap_or_default();
    let bytes = e.column().saturating_sub(1).min(line_text.len());
    let column = line_text.get(..bytes).map_or(e.column(), |before| before.chars().count() + 1);
    SyntaxError { reason, at: Position { line: e.line(), column }, documents_before, json: true }
}
