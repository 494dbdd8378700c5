//! The block YAML that Kubernetes tooling writes, read without the general scanner.
//!
//! Generated CRDs, manifests and most hand-written documents use a small part of YAML: block
//! mappings and sequences (indentless ones too), plain scalars (folded over lines), quoted
//! scalars (over lines too), literal and folded block scalars, flow collections of scalars on
//! one line, anchors and aliases on values, comments and document markers. This reader reads
//! exactly that part, line by line, and hands the same events, at the same positions, to the
//! same builder the general reader feeds. Anything else — tags, complex keys, directives, an
//! anchor on a key, a flow collection over lines, tabs, CRLF line ends, a text whose last
//! line has no line break, anything malformed — is declined, and the general reader
//! (yaml-rust2) reads the text instead: it alone words syntax errors. Which of the two read a
//! document is never visible in what is read; tests in `source.rs` assert it on every YAML
//! fixture, and the fuzz harness on every input.

use std::borrow::Cow;

use yaml_rust2::parser::Event;
use yaml_rust2::scanner::TScalarStyle;

use super::{Builder, Position, MAX_DEPTH};

/// The text uses YAML outside what this reader reads (or is not YAML): read it the general
/// way.
#[derive(Debug)]
pub(super) struct Declined;

type Read<T> = Result<T, Declined>;

/// Read `text` (without a byte-order mark) into `out`, or decline it. Documents finished
/// before a decline have been handed on by `out`.
pub(super) fn read(text: &str, out: &mut Builder<'_>) -> Read<()> {
    if !text.ends_with('\n') || !printable(text) {
        return Err(Declined);
    }
    let ascii = text.is_ascii();
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        ascii,
        line_start: 0,
        line_end: 0,
        indent: 0,
        line: 1,
        depth: 0,
        anchors: Default::default(),
        last_anchor: 0,
        anchor: 0,
        out,
    };
    r.enter(0);
    r.stream()
}

/// Whether every character is one YAML prints as itself and this reader splits lines on:
/// no tab, carriage return or other control character, no Unicode line separator.
fn printable(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Without short cuts, so that the loop runs over whole vectors.
    let plain =
        |chunk: &[u8]| chunk.iter().fold(true, |ok, &b| ok & ((b >= 0x20) | (b == b'\n')) & (b != 0x7f));
    if !bytes.chunks(64).all(plain) {
        return false;
    }
    bytes.is_ascii()
        || !text.chars().any(|c| {
            matches!(c, '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
        })
}

/// A mapping key read on its line.
struct Key<'t> {
    text: Cow<'t, str>,
    style: TScalarStyle,
    /// Byte offset of its first character (or quote).
    start: usize,
    /// Byte offset of the `:` after it.
    colon: usize,
}

struct Reader<'t, 'o, 's> {
    text: &'t str,
    bytes: &'t [u8],
    /// Whether the text is ASCII (a column is then a byte count).
    ascii: bool,
    /// Byte offset of the current line's first character.
    line_start: usize,
    /// Byte offset of the current line's end (its line break, or the text's end).
    line_end: usize,
    /// Leading spaces of the current line.
    indent: usize,
    /// The current line, 1-based.
    line: usize,
    /// Collections open.
    depth: usize,
    /// The anchors of the current document, by name, and the id the last one got.
    anchors: std::collections::HashMap<&'t str, usize>,
    last_anchor: usize,
    /// The anchor the next node carries (0: none).
    anchor: usize,
    out: &'o mut Builder<'s>,
}

/// Characters that cannot begin a plain scalar (or begin one only in ways not read here).
fn indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

impl<'t> Reader<'t, '_, '_> {
    fn eof(&self) -> bool {
        self.line_start >= self.bytes.len()
    }

    /// Make the line starting at byte `start` the current one.
    fn enter(&mut self, start: usize) {
        let rest = &self.bytes[start..];
        self.line_start = start;
        self.line_end = memchr::memchr(b'\n', rest).map_or(self.bytes.len(), |i| start + i);
        self.indent = rest.iter().take_while(|&&b| b == b' ').count();
    }

    fn line_end(&self) -> usize {
        self.line_end
    }

    fn next_line(&mut self) {
        self.line += 1;
        self.enter((self.line_end + 1).min(self.bytes.len()));
    }

    fn indent(&self) -> usize {
        self.indent
    }

    /// The first byte at or after `from` on the current line that is not a space (the line's
    /// end if there is none).
    fn past_spaces(&self, from: usize) -> usize {
        from + self.bytes[from..self.line_end].iter().take_while(|&&b| b == b' ').count()
    }

    /// Where byte `at` of the current line is.
    fn at(&self, at: usize) -> Position {
        let before = &self.text[self.line_start..at];
        let column = if self.ascii { before.len() } else { before.chars().count() };
        Position { line: self.line, column: column + 1 }
    }

    /// Where the current line's content starts (the end of the text at its end).
    fn here(&self) -> Position {
        if self.eof() {
            Position { line: self.line, column: 1 }
        } else {
            self.at(self.line_start + self.indent())
        }
    }

    fn emit(&mut self, event: Event, at: Position) {
        self.out.on(event, at);
    }

    fn scalar(&mut self, text: String, style: TScalarStyle, at: Position) {
        let anchor = std::mem::take(&mut self.anchor);
        self.emit(Event::Scalar(text, style, anchor, None), at);
    }

    /// Whether the rest of the current line from `from` holds nothing but spaces and a
    /// comment (a `#` after a space, or at `from` when `after_space`).
    fn void_from(&self, from: usize, after_space: bool) -> bool {
        let end = self.line_end();
        let rest = &self.bytes[from..end];
        let content = rest.iter().position(|&b| b != b' ');
        match content {
            None => true,
            Some(i) => rest[i] == b'#' && (i > 0 || after_space),
        }
    }

    /// Skip lines that are empty or hold only a comment.
    fn skip_void(&mut self) {
        while !self.eof() && self.void_from(self.line_start, true) {
            self.next_line();
        }
    }

    /// Whether the current line is a document marker (`---` or `...` at its start).
    fn document_marker(&self) -> bool {
        let line = &self.bytes[self.line_start..self.line_end()];
        (line.starts_with(b"---") || line.starts_with(b"...")) && matches!(line.get(3), None | Some(b' '))
    }

    /// Whether byte `at` begins a block sequence entry (`-` then a space or the line's end).
    fn entry_at(&self, at: usize) -> bool {
        self.bytes[at] == b'-' && matches!(self.bytes.get(at + 1), Some(b' ' | b'\n'))
    }

    fn deeper(&mut self) -> Read<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Declined);
        }
        Ok(())
    }

    fn stream(&mut self) -> Read<()> {
        self.emit(Event::StreamStart, Position { line: 1, column: 1 });
        loop {
            self.skip_void();
            if self.eof() {
                break;
            }
            let start = self.here();
            if self.bytes[self.line_start] == b'%' {
                return Err(Declined);
            }
            if self.document_marker() {
                if self.bytes[self.line_start] == b'.' {
                    // An end marker with no document before it.
                    self.next_line();
                    continue;
                }
                if !self.void_from(self.line_start + 3, true) {
                    return Err(Declined);
                }
                self.next_line();
                self.skip_void();
            }
            self.emit(Event::DocumentStart, start);
            self.anchors.clear();
            if self.eof() || self.document_marker() {
                self.scalar(String::new(), TScalarStyle::Plain, self.here());
            } else {
                let indent = self.indent();
                let at = self.line_start + indent;
                if self.entry_at(at) {
                    self.sequence(indent, false)?;
                } else {
                    let key = self.key(at)?.ok_or(Declined)?;
                    self.mapping(indent, key)?;
                }
                self.skip_void();
                if !self.eof() && !self.document_marker() {
                    return Err(Declined);
                }
            }
            let end = self.here();
            if !self.eof() && self.bytes[self.line_start] == b'.' {
                if !self.void_from(self.line_start + 3, true) {
                    return Err(Declined);
                }
                self.next_line();
            }
            self.emit(Event::DocumentEnd, end);
        }
        self.emit(Event::StreamEnd, self.here());
        Ok(())
    }

    /// A mapping key at byte `at` of the current line: `None` when what is there is not a key.
    fn key(&mut self, at: usize) -> Read<Option<Key<'t>>> {
        let end = self.line_end();
        let (text, style, after) = match self.bytes[at] {
            // A quoted scalar that does not close on its line is no key (it may be a value).
            b'"' | b'\'' => {
                let Ok(quoted) = self.quoted(at, None) else { return Ok(None) };
                quoted
            }
            b if indicator(b) => return Ok(None),
            _ => {
                let line = &self.bytes[at..end];
                let mut colon = None;
                for i in memchr::memchr2_iter(b':', b'#', line) {
                    if line[i] == b'#' {
                        if line[i - 1] == b' ' {
                            break;
                        }
                    } else if matches!(line.get(i + 1), None | Some(b' ')) {
                        colon = Some(i);
                        break;
                    }
                }
                let Some(colon) = colon else { return Ok(None) };
                let key = &self.text[at..at + colon];
                if key.ends_with(' ') || key.len() > 1000 {
                    return Err(Declined);
                }
                (Cow::Borrowed(key), TScalarStyle::Plain, at + colon)
            }
        };
        let is_key =
            self.bytes.get(after) == Some(&b':') && matches!(self.bytes.get(after + 1), Some(b' ' | b'\n'));
        if style != TScalarStyle::Plain && (!is_key || after - at > 1000) {
            return if is_key { Err(Declined) } else { Ok(None) };
        }
        Ok(Some(Key { text, style, start: at, colon: after }))
    }

    /// Past empty and comment lines, whether the next line continues the collection at
    /// column `indent` (`false` when the collection has ended there; a line indented further
    /// than it, with no node to belong to, is declined).
    fn sibling(&mut self, indent: usize) -> Read<bool> {
        self.skip_void();
        if self.eof() || self.document_marker() || self.indent() < indent {
            return Ok(false);
        }
        if self.indent() > indent {
            return Err(Declined);
        }
        Ok(true)
    }

    /// A block mapping whose keys sit at column `indent`, its first key read.
    fn mapping(&mut self, indent: usize, first: Key<'t>) -> Read<()> {
        self.deeper()?;
        let anchor = std::mem::take(&mut self.anchor);
        self.emit(Event::MappingStart(anchor, None), self.at(first.colon));
        let mut key = first;
        loop {
            let at = self.at(key.start);
            self.scalar(key.text.into_owned(), key.style, at);
            self.value_after(key.colon + 1, indent)?;
            if !self.sibling(indent)? {
                break;
            }
            key = self.key(self.line_start + indent)?.ok_or(Declined)?;
        }
        self.emit(Event::MappingEnd, self.here());
        self.depth -= 1;
        Ok(())
    }

    /// The value of a key whose `:` ends just before `from`, the key at column `indent`.
    fn value_after(&mut self, from: usize, indent: usize) -> Read<()> {
        let end = self.line_end();
        let mut at = self.past_spaces(from);
        if self.bytes[at] == b'&' {
            at = self.anchor_at(at)?;
        }
        if at == end || self.bytes[at] == b'#' {
            self.next_line();
            return self.block_node(indent, true);
        }
        if self.entry_at(at) {
            return Err(Declined);
        }
        self.inline_value(at, indent)
    }

    /// A node on the lines after the current one, belonging to something at column `parent`:
    /// a collection indented further (or, when `indentless` is allowed, a sequence at the
    /// parent's own column), else an empty scalar.
    fn block_node(&mut self, parent: usize, indentless: bool) -> Read<()> {
        self.skip_void();
        if self.eof() || self.document_marker() {
            self.scalar(String::new(), TScalarStyle::Plain, self.here());
            return Ok(());
        }
        let indent = self.indent();
        let at = self.line_start + indent;
        if indent > parent {
            if self.entry_at(at) {
                return self.sequence(indent, false);
            }
            let key = self.key(at)?.ok_or(Declined)?;
            return self.mapping(indent, key);
        }
        if indent == parent && indentless && self.entry_at(at) {
            return self.sequence(indent, true);
        }
        self.scalar(String::new(), TScalarStyle::Plain, self.here());
        Ok(())
    }

    /// A block sequence whose `-` sit at column `indent`, the current line holding the first.
    /// An indentless sequence (a mapping value at its key's column) starts where its first
    /// item's content does, as the general reader places it.
    fn sequence(&mut self, indent: usize, indentless: bool) -> Read<()> {
        self.deeper()?;
        let dash = self.line_start + indent;
        let start = if indentless {
            let end = self.line_end();
            let content = self.past_spaces(dash + 1);
            if content == end || self.bytes[content] == b'#' {
                return Err(Declined);
            }
            self.at(content)
        } else {
            self.at(dash)
        };
        let anchor = std::mem::take(&mut self.anchor);
        self.emit(Event::SequenceStart(anchor, None), start);
        loop {
            let dash = self.line_start + indent;
            let end = self.line_end();
            let mut at = self.past_spaces(dash + 1);
            if self.bytes[at] == b'&' {
                at = self.anchor_at(at)?;
            }
            if at == end || self.bytes[at] == b'#' {
                // The item is on the lines below.
                self.next_line();
                self.skip_void();
                if self.eof() || self.document_marker() || self.indent() <= indent {
                    return Err(Declined);
                }
                self.block_node(indent, false)?;
            } else if self.entry_at(at) {
                self.sequence(at - self.line_start, false)?;
            } else if let Some(key) = self.key(at)? {
                self.mapping(at - self.line_start, key)?;
            } else {
                self.inline_value(at, indent)?;
            }
            if !self.sibling(indent)? {
                break;
            }
            if !self.entry_at(self.line_start + indent) {
                if indentless {
                    break;
                }
                return Err(Declined);
            }
        }
        self.emit(Event::SequenceEnd, self.here());
        self.depth -= 1;
        Ok(())
    }

    /// The anchor (`&name`) at byte `at`, taken for the node after it: the byte where that
    /// node begins on this line (or the line's end, the node then being on the lines below).
    /// An anchor on a key, or on a collection that starts on its line, is not read here.
    fn anchor_at(&mut self, at: usize) -> Read<usize> {
        let (name, after) = self.anchor_name(at + 1)?;
        let end = self.line_end();
        let next = self.past_spaces(after);
        if next < end && (after == next || self.entry_at(next) || self.key(next)?.is_some()) {
            return Err(Declined);
        }
        self.last_anchor += 1;
        self.anchors.insert(name, self.last_anchor);
        self.anchor = self.last_anchor;
        Ok(next)
    }

    /// An anchor's name starting at byte `at`: the name and the byte after it.
    fn anchor_name(&self, at: usize) -> Read<(&'t str, usize)> {
        let end = self.line_end();
        let len = self.bytes[at..end]
            .iter()
            .take_while(|&&b| !matches!(b, b' ' | b',' | b'[' | b']' | b'{' | b'}'))
            .count();
        if len == 0 {
            return Err(Declined);
        }
        Ok((&self.text[at..at + len], at + len))
    }

    /// A scalar (or an empty flow collection) starting at byte `at` of the current line,
    /// inside something at column `parent`. Leaves the reader on the line after it.
    fn inline_value(&mut self, at: usize, parent: usize) -> Read<()> {
        let begin = self.at(at);
        match self.bytes[at] {
            b'|' | b'>' => return self.block_scalar(at, parent),
            b'"' | b'\'' => {
                let (text, style, after) = self.quoted(at, Some(parent))?;
                if !self.void_from(after, false) {
                    return Err(Declined);
                }
                self.scalar(text.into_owned(), style, begin);
            }
            b'[' | b'{' => {
                let after = self.flow(at)?;
                if !self.void_from(after, false) {
                    return Err(Declined);
                }
            }
            b'*' if self.anchor == 0 => {
                let (name, after) = self.anchor_name(at + 1)?;
                let id = *self.anchors.get(name).ok_or(Declined)?;
                if !self.void_from(after, false) {
                    return Err(Declined);
                }
                self.emit(Event::Alias(id), begin);
            }
            b'-' if self.bytes.get(at + 1) != Some(&b' ') => return self.plain(at, parent),
            b if indicator(b) => return Err(Declined),
            _ => return self.plain(at, parent),
        }
        self.next_line();
        Ok(())
    }

    /// The first line of a plain scalar (from byte `from` to the line's end or a comment):
    /// `None` when it holds what would make it something else.
    fn plain_line(&self, from: usize) -> Read<(&'t str, bool)> {
        let end = self.line_end();
        let line = &self.text[from..end];
        let comment =
            memchr::memchr_iter(b'#', line.as_bytes()).find(|&i| i > 0 && line.as_bytes()[i - 1] == b' ');
        let (content, comment) = match comment {
            Some(i) => (&line[..i - 1], true),
            None => (line, false),
        };
        let content = content.trim_end_matches(' ');
        if content.contains(": ") || content.ends_with(':') {
            return Err(Declined);
        }
        Ok((content, comment))
    }

    /// A plain scalar at byte `at`, folded over the more indented lines that follow it.
    fn plain(&mut self, at: usize, parent: usize) -> Read<()> {
        let begin = self.at(at);
        let (first, comment) = self.plain_line(at)?;
        let mut text = Cow::Borrowed(first);
        self.next_line();
        if !comment {
            loop {
                let mut breaks = 0;
                while !self.eof() && self.void_from(self.line_start, false) && !self.comment_line() {
                    breaks += 1;
                    self.next_line();
                }
                if self.eof() || self.indent() <= parent || self.comment_line() {
                    break;
                }
                let from = self.line_start + self.indent();
                if matches!(self.bytes[from], b'-' | b'?' | b':')
                    && matches!(self.bytes[from + 1], b' ' | b'\n')
                {
                    return Err(Declined);
                }
                let (more, comment) = self.plain_line(from)?;
                if comment {
                    return Err(Declined);
                }
                let text = text.to_mut();
                if breaks == 0 {
                    text.push(' ');
                } else {
                    text.extend(std::iter::repeat_n('\n', breaks));
                }
                text.push_str(more);
                self.next_line();
            }
        }
        self.scalar(text.into_owned(), TScalarStyle::Plain, begin);
        Ok(())
    }

    /// Whether the current line holds only a comment.
    fn comment_line(&self) -> bool {
        self.bytes.get(self.line_start + self.indent()) == Some(&b'#')
    }

    /// A literal (`|`) or folded (`>`) block scalar whose header is at byte `at`, inside
    /// something at column `parent`.
    fn block_scalar(&mut self, at: usize, parent: usize) -> Read<()> {
        let literal = self.bytes[at] == b'|';
        let mut after = at + 1;
        let chomp = match self.bytes[after] {
            b'-' | b'+' => {
                after += 1;
                self.bytes[after - 1]
            }
            _ => b' ',
        };
        if !matches!(self.bytes[after], b' ' | b'\n') || !self.void_from(after, false) {
            return Err(Declined);
        }
        self.next_line();
        if self.eof() || self.void_from(self.line_start, false) {
            // Leading empty lines, or no content: left to the general reader.
            return Err(Declined);
        }
        let indent = self.indent();
        if indent <= parent {
            return Err(Declined);
        }
        let begin = self.at(self.line_start + indent);
        let mut text = String::new();
        let mut breaks = 0usize;
        let mut first = true;
        while !self.eof() {
            let end = self.line_end();
            let line = &self.text[self.line_start..end];
            let spaces = self.indent();
            if spaces == line.len() && spaces <= indent {
                breaks += 1;
                self.next_line();
                continue;
            }
            if spaces < indent {
                break;
            }
            let content = &line[indent..];
            if !first {
                if literal {
                    text.extend(std::iter::repeat_n('\n', 1 + breaks));
                } else if breaks == 0 {
                    text.push(' ');
                } else {
                    text.extend(std::iter::repeat_n('\n', breaks));
                }
            }
            if !literal && content.starts_with(' ') {
                // A more indented line of a folded scalar keeps its breaks: not read here.
                return Err(Declined);
            }
            text.push_str(content);
            breaks = 0;
            first = false;
            self.next_line();
        }
        match chomp {
            b'-' => {}
            b'+' => text.extend(std::iter::repeat_n('\n', 1 + breaks)),
            _ => text.push('\n'),
        }
        let style = if literal { TScalarStyle::Literal } else { TScalarStyle::Folded };
        self.scalar(text, style, begin);
        Ok(())
    }

    /// A quoted scalar whose opening quote is at byte `at`: its text and the byte after its
    /// closing quote, on the line the reader is then on. With `parent` (the column its lines
    /// must be indented past) it may run over lines, folded as YAML folds them; without, it
    /// must close on its line (a key, an item of a flow collection).
    fn quoted(&mut self, at: usize, parent: Option<usize>) -> Read<(Cow<'t, str>, TScalarStyle, usize)> {
        let quote = self.bytes[at];
        let style = if quote == b'"' { TScalarStyle::DoubleQuoted } else { TScalarStyle::SingleQuoted };
        let mut text: Cow<'t, str> = Cow::Borrowed("");
        let mut run = at + 1;
        let mut i = at + 1;
        loop {
            let end = self.line_end();
            let mut joined = false;
            while i < end {
                let b = self.bytes[i];
                if b == quote {
                    if quote == b'\'' && self.bytes.get(i + 1) == Some(&b'\'') {
                        text.to_mut().push_str(&self.text[run..=i]);
                        i += 2;
                        run = i;
                        continue;
                    }
                    let tail = &self.text[run..i];
                    match &mut text {
                        Cow::Borrowed(_) => text = Cow::Borrowed(tail),
                        Cow::Owned(s) => s.push_str(tail),
                    }
                    return Ok((text, style, i + 1));
                }
                if b != b'\\' || quote != b'"' {
                    i += 1;
                    continue;
                }
                let owned = text.to_mut();
                owned.push_str(&self.text[run..i]);
                let (c, len) = match self.bytes.get(i + 1) {
                    Some(b'\\') => ('\\', 2),
                    Some(b'"') => ('"', 2),
                    Some(b'/') => ('/', 2),
                    Some(b' ') => (' ', 2),
                    Some(b'n') => ('\n', 2),
                    Some(b't') => ('\t', 2),
                    Some(b'r') => ('\r', 2),
                    Some(b'b') => ('\u{8}', 2),
                    Some(b'f') => ('\u{c}', 2),
                    Some(b'0') => ('\0', 2),
                    Some(b'u') => {
                        let hex =
                            self.text.get(i + 2..i + 6).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
                        let c = hex
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .and_then(char::from_u32)
                            .ok_or(Declined)?;
                        (c, 6)
                    }
                    // An escaped line break: the lines join without a space.
                    Some(b'\n') => {
                        joined = true;
                        run = end;
                        break;
                    }
                    _ => return Err(Declined),
                };
                owned.push(c);
                i += len;
                run = i;
            }
            let parent = parent.ok_or(Declined)?;
            if !joined {
                // Spaces that end a line are not part of the text.
                let tail = self.text[run..end].trim_end_matches(' ');
                text.to_mut().push_str(tail);
            }
            self.next_line();
            let mut breaks = 0;
            while !self.eof() && self.indent() == self.line_end() - self.line_start {
                breaks += 1;
                self.next_line();
            }
            if self.eof() || self.document_marker() || self.indent() <= parent {
                return Err(Declined);
            }
            let owned = text.to_mut();
            if breaks > 0 {
                owned.extend(std::iter::repeat_n('\n', breaks));
            } else if !joined {
                owned.push(' ');
            }
            i = self.line_start + self.indent();
            run = i;
        }
    }

    /// A flow sequence or mapping of scalars on one line, its bracket at byte `at`: the byte
    /// after its closing bracket.
    fn flow(&mut self, at: usize) -> Read<usize> {
        let mapping = self.bytes[at] == b'{';
        let close = if mapping { b'}' } else { b']' };
        self.deeper()?;
        let anchor = std::mem::take(&mut self.anchor);
        let start =
            if mapping { Event::MappingStart(anchor, None) } else { Event::SequenceStart(anchor, None) };
        self.emit(start, self.at(at));
        let end = self.line_end();
        let mut i = at + 1;
        let mut entries = 0;
        loop {
            i = self.past_spaces(i);
            if i == end {
                return Err(Declined);
            }
            if self.bytes[i] == close && entries == 0 {
                break;
            }
            if mapping {
                i = self.flow_scalar(i, end, true)?;
                if self.bytes.get(i..i + 2) != Some(b": ") {
                    return Err(Declined);
                }
                i = self.past_spaces(i + 2);
            }
            i = self.flow_scalar(i, end, false)?;
            entries += 1;
            i = self.past_spaces(i);
            match self.bytes.get(i) {
                Some(b',') => i += 1,
                Some(&b) if b == close => break,
                _ => return Err(Declined),
            }
        }
        let end = if mapping { Event::MappingEnd } else { Event::SequenceEnd };
        self.emit(end, self.at(i));
        self.depth -= 1;
        Ok(i + 1)
    }

    /// A scalar inside a flow collection at byte `at` (before `end`, the line's end): a
    /// quoted one, or a plain one without indicators; the byte after it. A `key` ends at `:`.
    fn flow_scalar(&mut self, at: usize, end: usize, key: bool) -> Read<usize> {
        let begin = self.at(at);
        let b = self.bytes[at];
        if b == b'"' || b == b'\'' {
            let (text, style, after) = self.quoted(at, None)?;
            self.scalar(text.into_owned(), style, begin);
            return Ok(after);
        }
        if (b == b'[' || b == b'{') && !key {
            return self.flow(at);
        }
        if indicator(b) {
            return Err(Declined);
        }
        let mut j = at;
        while j < end {
            match self.bytes[j] {
                b',' | b']' | b'}' => break,
                b':' if key && self.bytes.get(j + 1) == Some(&b' ') => break,
                b'[' | b'{' | b':' | b'#' | b'"' | b'\'' => return Err(Declined),
                _ => j += 1,
            }
        }
        let text = self.text[at..j].trim_end_matches(' ');
        if text.is_empty() || text.len() > 1000 {
            return Err(Declined);
        }
        self.scalar(text.to_string(), TScalarStyle::Plain, begin);
        Ok(j)
    }
}
