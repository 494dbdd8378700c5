//! An object's skeleton: its JSON text read once, the members on the way to some deep values
//! parsed into a tree, and those deep values (the holes) kept as spans of the text, unread —
//! or read, in the same pass, into the model of the family that asked (`ModelReader`).
//!
//! A review's CRD is read this way while the review itself is decoded: the pass that finds
//! where the object ends also reads its version schemas into the schema model, so each
//! schema's text is read once. A hole whose bytes repeat an earlier hole's (the versions of a
//! CRD sharing one schema, an update that leaves a schema as it was) is recognised by
//! comparing bytes, without scanning it, and takes that hole's model: a JSON object is
//! self-delimiting, so text that begins with a complete value's bytes holds that value.
//!
//! Values are read by serde_json (so what is accepted and refused is what serde_json accepts
//! and refuses); only the punctuation between them (`{`, `:`, `,`, `}`, `[`, `]`) is read
//! here.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::source::JsonKey;

/// A step on the way from an object to the values kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The member of this name.
    Key(&'static str),
    /// Every element of a list.
    Each,
}

/// A way from an object to the values kept apart; it ends in a `Key`.
pub type Path = &'static [Step];

/// A value kept apart: where the way to it went through lists (an index per `Each`), its
/// span in the object's text, and what the family made of it in the same pass, if it asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Hole {
    /// The list indices met on the way, one per `Each` of the path.
    pub at: Vec<usize>,
    /// Its bytes in the object's text.
    pub span: Range<usize>,
    /// The family's model of it (`ModelReader`); `None` when it asked for none or its reader
    /// left the value to be read from its text.
    pub model: Option<Model>,
}

/// A value kept apart, read into a family's own model in the pass that found it (the family
/// knows the type and takes it back with `downcast_ref`). Two are equal when they are one.
#[derive(Clone)]
pub struct Model(pub Arc<dyn Any + Send + Sync>);

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Model(..)")
    }
}

impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How a family reads each value kept apart while the review is decoded, so the value's text
/// is read once: given the text from the value's first byte on, and a value read before that
/// it likely repeats in part (the same place in the object before an update, else the value
/// just before it) with that value's own text, the model and how many bytes the value spans.
/// `None` leaves the value to be read from its text later (it is then scanned to find its
/// end): a reader takes only what it reads cleanly, and never accepts what serde_json refuses.
pub type ModelReader = fn(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)>;

/// An object read along a path: the tree of everything but the values at its end, and those
/// values' spans.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The object without the values kept apart.
    pub doc: Value,
    /// The values kept apart, in the order they were met.
    pub holes: Vec<Hole>,
}

/// A value kept apart before, as a later one is compared with it: where it was, its text,
/// and its model.
#[derive(Clone, Debug)]
pub struct Seen<'a> {
    /// The list indices met on the way to it.
    pub at: Vec<usize>,
    /// Its text.
    pub text: &'a str,
    /// Its model, if it was read into one.
    pub model: Option<Model>,
}

impl Skeleton {
    /// Read a JSON text along `path`; the text must hold one value and nothing after it.
    pub fn read(text: &str, path: Path) -> Result<Skeleton, String> {
        Skeleton::read_beside(text, path, None, Vec::new())
    }

    /// Read a JSON text along `path` as `read` does, each value kept apart read by `models`
    /// beside the values of another text read before (the document before an update): a value
    /// whose bytes repeat one of those takes its model, and a changed one is read beside the
    /// one at its place.
    pub fn read_beside<'a>(
        text: &'a str,
        path: Path,
        models: Option<ModelReader>,
        before: Vec<Seen<'a>>,
    ) -> Result<Skeleton, String> {
        let mut reader = Reader::of_text(text);
        reader.seen = before;
        let skeleton = reader.skeleton(path, models).map_err(|e| reader.describe(e))?;
        if reader.peek().is_some() {
            return Err(reader.describe(ReadError::Expected("the end of the text")));
        }
        Ok(skeleton)
    }
}

/// Why reading stopped: a value serde_json refused, or punctuation that is not there.
#[derive(Debug)]
pub enum ReadError {
    Value(serde_json::Error),
    Expected(&'static str),
}

impl From<serde_json::Error> for ReadError {
    fn from(e: serde_json::Error) -> ReadError {
        ReadError::Value(e)
    }
}

/// A reading position in a JSON text.
pub(crate) struct Reader<'a> {
    text: &'a str,
    /// The text's bytes.
    data: &'a [u8],
    pos: usize,
    /// The holes read so far (where, their spans and models), for recognising a repeated one
    /// by its bytes and reading a changed one beside the one it most likely changes.
    seen: Vec<Seen<'a>>,
    /// Where strings with escapes are decoded, kept from one string to the next.
    tape: Vec<u8>,
}

impl<'a> Reader<'a> {
    /// A reader of a text, from its start.
    pub(crate) fn of_text(text: &'a str) -> Reader<'a> {
        Reader { text, data: text.as_bytes(), pos: 0, seen: Vec::new(), tape: Vec::new() }
    }

    /// Where the reader stands.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes from where the reader stands.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// Step over `n` bytes the caller knows to hold a whole value (it compared them with
    /// one).
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.data.len());
    }

    /// Words a stop with the line and column it happened at.
    pub(crate) fn describe(&self, error: ReadError) -> String {
        let before = &self.data[..self.pos.min(self.data.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.len() - before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        match error {
            // serde_json counts from where it was started.
            ReadError::Value(e) => format!("{} (value starting at line {line} column {column})", e),
            ReadError::Expected(what) => format!("expected {what} at line {line} column {column}"),
        }
    }

    /// The next byte that is not JSON whitespace, not consumed.
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.pos = after_space(self.data, self.pos);
        self.data.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), ReadError> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(ReadError::Expected(what))
        }
    }

    /// The next value, read by serde_json.
    pub(crate) fn value<T: Deserialize<'a>>(&mut self) -> Result<T, ReadError> {
        // The reader stands on a character boundary (after punctuation or a whole value).
        let Some(rest) = self.text.get(self.pos..) else { return Err(ReadError::Expected("a value")) };
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        let (next, read) = (values.next(), values.byte_offset());
        match next {
            Some(Ok(v)) => {
                self.pos += read;
                Ok(v)
            }
            Some(Err(e)) => Err(ReadError::Value(e)),
            None => Err(ReadError::Expected("a value")),
        }
    }

    /// The next value, a string: borrowed from the text unless it carries escapes. Strings are
    /// most of a schema's bytes (descriptions); jiter decodes them on one tape kept from string
    /// to string, where a serde_json reader started at each value would grow a new buffer for
    /// every string with an escape. Anything jiter refuses is read by serde_json, which words
    /// the error.
    pub(crate) fn string(&mut self) -> Result<JsonKey<'a>, ReadError> {
        // A string without escapes, the most common kind (keys, `"type": "string"`, most
        // descriptions), is sliced straight out of the text: starting a decoder costs more
        // than finding its end. One with an escape is decoded.
        if self.peek() == Some(b'"') {
            let after = &self.data[self.pos + 1..];
            if let Some(end) = plain_string_end(after) {
                if after[end] == b'"' {
                    if let Some(text) = self.text.get(self.pos + 1..self.pos + 1 + end) {
                        self.pos += end + 2;
                        return Ok(JsonKey(text.into()));
                    }
                }
            }
        }
        let data = self.data;
        let mut jiter = jiter::Jiter::with_tape(&data[self.pos..], std::mem::take(&mut self.tape));
        let read = match jiter.next_str() {
            Ok(s) => {
                // A string without escapes is a slice of the text itself.
                let start = (s.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
                let span = start..start.saturating_add(s.len());
                Some(match self.text.get(span) {
                    Some(text) => JsonKey(text.into()),
                    None => JsonKey(s.to_owned().into()),
                })
            }
            Err(_) => None,
        };
        let (read, used) = (read, jiter.current_index());
        self.tape = jiter.into_tape();
        match read {
            Some(key) => {
                self.pos += used;
                Ok(key)
            }
            None => self.value::<JsonKey<'a>>(),
        }
    }

    /// The span of the next value, scanned and not built.
    pub(crate) fn skip(&mut self) -> Result<Range<usize>, ReadError> {
        self.peek();
        let start = self.pos;
        match value_end(self.data, start) {
            Some(end) => self.pos = end,
            None => {
                self.value::<IgnoredAny>()?;
            }
        }
        Ok(start..self.pos)
    }

    /// Step over the next value, a string (a description the model does not keep): its end
    /// found past its escapes without decoding them, anything else through `skip`.
    pub(crate) fn skip_string(&mut self) -> Result<(), ReadError> {
        if self.peek() == Some(b'"') {
            if let Some(end) = string_end(self.data, self.pos) {
                self.pos = end;
                return Ok(());
            }
        }
        self.skip().map(drop)
    }

    /// Enter a mapping: `true` at its `{`, `false` at anything else (nothing consumed).
    pub(crate) fn enter_map(&mut self) -> bool {
        self.eat(b'{')
    }

    /// The next key of the mapping entered (its `:` consumed), or `None` at its end. `first`
    /// is true before the first member.
    pub(crate) fn key(&mut self, first: &mut bool) -> Result<Option<JsonKey<'a>>, ReadError> {
        if self.eat(b'}') {
            return Ok(None);
        }
        if !*first {
            self.expect(b',', "`,` or `}` after a member")?;
        }
        *first = false;
        if self.peek() != Some(b'"') {
            return Err(ReadError::Expected("a key"));
        }
        let key = self.string()?;
        self.expect(b':', "`:` after a key")?;
        Ok(Some(key))
    }

    /// Enter a list: `true` at its `[`, `false` at anything else (nothing consumed).
    pub(crate) fn enter_list(&mut self) -> bool {
        self.eat(b'[')
    }

    /// Whether the list entered has another element (its `,` consumed). `first` is true
    /// before the first element.
    pub(crate) fn element(&mut self, first: &mut bool) -> Result<bool, ReadError> {
        if self.eat(b']') {
            return Ok(false);
        }
        if !*first {
            self.expect(b',', "`,` or `]` after an element")?;
        }
        *first = false;
        Ok(true)
    }

    /// The object at the reader, read along `path`, each hole read by `models` when given;
    /// its holes are spans counted from where the reader stood.
    pub(crate) fn skeleton(
        &mut self,
        path: Path,
        models: Option<ModelReader>,
    ) -> Result<Skeleton, ReadError> {
        let origin = self.pos;
        let mut holes = Vec::new();
        let doc = self.along(path, models, &mut Vec::new(), &mut holes)?;
        for hole in &mut holes {
            hole.span = hole.span.start - origin..hole.span.end - origin;
        }
        Ok(Skeleton { doc, holes })
    }

    fn along(
        &mut self,
        path: &[Step],
        models: Option<ModelReader>,
        at: &mut Vec<usize>,
        holes: &mut Vec<Hole>,
    ) -> Result<Value, ReadError> {
        match (path.split_first(), self.peek()) {
            (Some((Step::Key(name), rest)), Some(b'{')) => {
                self.pos += 1;
                let mut out = Map::new();
                // Holes are met only under this map's one member on the way; a repeat of that
                // member replaces what the first left, as it replaces it in the tree.
                let before = holes.len();
                let mut first = true;
                while let Some(JsonKey(key)) = self.key(&mut first)? {
                    if key != *name {
                        let v = self.value::<Value>()?;
                        out.insert(key.into_owned(), v);
                        continue;
                    }
                    holes.truncate(before);
                    if rest.is_empty() {
                        holes.push(self.hole(at, models)?);
                        out.remove(*name);
                    } else {
                        let v = self.along(rest, models, at, holes)?;
                        out.insert(key.into_owned(), v);
                    }
                }
                Ok(Value::Object(out))
            }
            (Some((Step::Each, rest)), Some(b'[')) => {
                self.pos += 1;
                let mut out = Vec::new();
                let mut first = true;
                while self.element(&mut first)? {
                    at.push(out.len());
                    let v = self.along(rest, models, at, holes);
                    at.pop();
                    out.push(v?);
                }
                Ok(Value::Array(out))
            }
            // Not the shape the path expects, or the end of it: read as it is.
            _ => self.value::<Value>(),
        }
    }

    /// The value kept apart at `at`: the bytes of an earlier one if they are repeated here
    /// (and its model with them), else read by `models`, else scanned. Only the two holes it
    /// most likely repeats are compared — the one just before it (the versions of a CRD
    /// sharing one schema) and the last one at the same place (the same version in the object
    /// before an update) — so a review with many versions stays linear.
    fn hole(&mut self, at: &[usize], models: Option<ModelReader>) -> Result<Hole, ReadError> {
        self.peek();
        let start = self.pos;
        let rest = &self.data[start..];
        let previous = self.seen.last();
        let same_place = self.seen.iter().rev().find(|seen| seen.at == at);
        let repeated = previous
            .into_iter()
            .chain(same_place)
            .find(|seen| !seen.text.is_empty() && rest.starts_with(seen.text.as_bytes()))
            .map(|seen| (seen.text.len(), seen.model.clone()));
        let (span, model) = match repeated {
            Some((len, model)) => {
                self.pos += len;
                (start..self.pos, model)
            }
            None => {
                let like = same_place.or(previous).and_then(|seen| Some((seen.text, seen.model.as_ref()?)));
                let read = models.and_then(|read| read(self.text.get(start..)?, like));
                match read {
                    Some((model, len)) if len > 0 && len <= rest.len() => {
                        self.pos += len;
                        (start..self.pos, Some(model))
                    }
                    _ => (self.skip()?, None),
                }
            }
        };
        // A value's span falls on character boundaries (a model reader that said otherwise
        // leaves nothing to compare with).
        if let Some(text) = self.text.get(span.clone()) {
            self.seen.push(Seen { at: at.to_vec(), text, model: model.clone() });
        }
        Ok(Hole { at: at.to_vec(), span, model })
    }
}

/// Where the first byte a JSON string cannot hold as itself lies in `bytes`: a quote, a
/// backslash or a control character.
fn plain_string_end(bytes: &[u8]) -> Option<usize> {
    stop_from(bytes, 0)
}

/// Where the first quote, backslash or control byte at or after `at` lies in `data`. Eight
/// bytes are tested at a time: in each word, the lowest byte flagged by the classic "has a
/// zero byte" and "has a byte less than" tests is exact (the borrow that can flag a byte above
/// a true one never flags one below it). Inlined: it runs once or twice for most strings, and
/// a call costs as much as a word.
#[inline(always)]
fn stop_from(data: &[u8], at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |w: u64| w.wrapping_sub(ONES) & !w;
    let mut words = data.get(at..)?.chunks_exact(8);
    let mut from = at;
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        let found =
            (zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | control) & HIGH;
        if found != 0 {
            return Some(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    words.remainder().iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).map(|i| from + i)
}

/// Where the closing quote of the JSON string whose text (after its opening quote) starts at
/// `at` lies in `data`, its escapes stepped over as serde_json steps over them; `None` at
/// anything JSON does not allow in a string (an unknown escape, a `\u` without four hex
/// digits, a control byte) or at an unclosed string.
#[inline(always)]
fn closing_quote(data: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at = stop_from(data, at)?;
        match data[at] {
            b'"' => return Some(at),
            b'\\' => at = past_escape(data, at)?,
            _ => return None,
        }
    }
}

/// Just past the escape whose backslash is at `at`; `None` at one JSON does not allow.
#[inline(never)]
fn past_escape(data: &[u8], at: usize) -> Option<usize> {
    match data.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' if data.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => Some(at + 6),
        _ => None,
    }
}

/// Where the text from `at` stops being JSON whitespace. Compact JSON (what the API server
/// sends) has none, so the first byte is tested before any loop.
#[inline(always)]
fn after_space(data: &[u8], at: usize) -> usize {
    match data.get(at) {
        Some(&b) if b > b' ' => at,
        _ => after_spaces(data, at),
    }
}

#[inline(never)]
fn after_spaces(data: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = data.get(at) {
        at += 1;
    }
    at
}

/// Where the string whose opening quote is at `at` ends, just past its closing quote
/// (`closing_quote` of the text after the opening quote).
#[inline(always)]
fn string_end(data: &[u8], at: usize) -> Option<usize> {
    Some(closing_quote(data, at + 1)? + 1)
}

/// How deep `value_end` follows containers before it leaves the value to serde_json (whose
/// own limit is 128), which then reads it whole and words any error: one bit each of a word.
const SCAN_DEPTH: u32 = 64;

/// Where the JSON value starting at `at` (after any whitespace) ends, found by scanning its
/// grammar without building anything: strings stepped over past their escapes, numbers and
/// the literals checked as JSON writes them, containers followed with one bit each for what
/// they are. `None` at anything it does not take (an error of any kind, nesting deeper than
/// `SCAN_DEPTH`, a number or literal standing alone): serde_json then reads the value, so what
/// is accepted and every error's wording stay serde_json's.
fn value_end(data: &[u8], mut at: usize) -> Option<usize> {
    // The open containers, innermost in bit 0: 1 for a list, 0 for a mapping.
    let (mut depth, mut lists) = (0u32, 0u64);
    loop {
        // A value.
        at = after_space(data, at);
        match *data.get(at)? {
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                let inner = after_space(data, at + 1);
                if *data.get(inner)? == close {
                    at = inner + 1;
                } else if depth == SCAN_DEPTH {
                    return None;
                } else {
                    lists = lists << 1 | u64::from(open == b'[');
                    depth += 1;
                    at = if open == b'{' { member_value(data, inner)? } else { inner };
                    continue;
                }
            }
            b'"' => at = string_end(data, at)?,
            _ if depth == 0 => return None,
            b'-' | b'0'..=b'9' => at = number_end(data, at)?,
            b't' => at += data[at..].starts_with(b"true").then_some(4)?,
            b'f' => at += data[at..].starts_with(b"false").then_some(5)?,
            b'n' => at += data[at..].starts_with(b"null").then_some(4)?,
            _ => return None,
        }
        // After a value: close what it ends, or step to the next element or member.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = after_space(data, at);
            match (*data.get(at)?, lists & 1 == 1) {
                (b',', true) => at += 1,
                (b',', false) => at = member_value(data, at + 1)?,
                (b']', true) | (b'}', false) => {
                    at += 1;
                    depth -= 1;
                    lists >>= 1;
                    continue;
                }
                _ => return None,
            }
            break;
        }
    }
}

/// A member's key and its colon, from `at`: where the member's value starts.
#[inline(always)]
fn member_value(data: &[u8], at: usize) -> Option<usize> {
    let at = after_space(data, at);
    (*data.get(at)? == b'"').then_some(())?;
    let at = after_space(data, string_end(data, at)?);
    (*data.get(at)? == b':').then_some(at + 1)
}

/// Where a JSON number starting at `at` ends: `-`, then `0` or digits not led by `0`, then
/// an optional fraction and exponent, each with at least one digit. `None` for anything else.
fn number_end(data: &[u8], mut at: usize) -> Option<usize> {
    let digits = |at: usize| at + data[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    if data[at] == b'-' {
        at += 1;
    }
    match *data.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits(at),
        _ => return None,
    }
    if data.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        at = (end > at + 1).then_some(end)?;
    }
    if let Some(b'e' | b'E') = data.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = data.get(at) {
            at += 1;
        }
        let end = digits(at);
        at = (end > at).then_some(end)?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: Path = &[Step::Key("spec"), Step::Key("versions"), Step::Each, Step::Key("schema")];

    #[test]
    fn a_string_is_stepped_over_where_serde_json_steps_over_it() {
        // Every sequence of up to three pieces (plain text, each escape JSON allows, escapes
        // it refuses, control bytes, a string left open), closed by a quote and followed by
        // more text: the end found is serde_json's, and a string it refuses is refused.
        let pieces: [&[u8]; 13] = [
            b"plain text, long enough to span a word or two",
            "é€".as_bytes(),
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\u00e9",
            b"\\uD800",
            b"\\uZZ12",
            b"\\u12",
            b"\\x",
            b"\x01",
            b"\\",
        ];
        let mut checked = 0;
        for a in 0..=pieces.len() {
            for b in 0..=pieces.len() {
                for c in 0..=pieces.len() {
                    let mut text = b"\"".to_vec();
                    for i in [a, b, c] {
                        text.extend_from_slice(pieces.get(i).copied().unwrap_or(b""));
                    }
                    text.extend_from_slice(b"\", \"after\"");
                    let mut values =
                        serde_json::Deserializer::from_slice(&text).into_iter::<serde::de::IgnoredAny>();
                    let serde = match values.next() {
                        Some(Ok(_)) => Some(values.byte_offset() - 2),
                        _ => None,
                    };
                    assert_eq!(closing_quote(&text[1..], 0), serde, "{}", String::from_utf8_lossy(&text));
                    checked += usize::from(serde.is_some());
                }
            }
        }
        assert!(checked > 1000, "most of the strings are valid: {checked}");
    }

    /// serde_json's answer for the value at the start of `text`: where it ends, if it reads.
    fn serde_value_end(text: &[u8]) -> Option<usize> {
        let mut values = serde_json::Deserializer::from_slice(text).into_iter::<IgnoredAny>();
        matches!(values.next(), Some(Ok(_))).then(|| values.byte_offset())
    }

    #[test]
    fn a_value_is_scanned_to_where_serde_json_ends_it() {
        // Real review bodies whole, then each mutated at every ASCII byte (replaced by a byte
        // that changes the grammar, or cut off there): wherever the scan finds an end, serde_json
        // reads the same value and ends it there; what the scan does not take, serde_json decides.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/admission");
        let mut bodies = Vec::new();
        for family in std::fs::read_dir(&dir).unwrap() {
            for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
                let path = file.unwrap().path();
                if path.extension().is_some_and(|e| e == "json") {
                    bodies.push(std::fs::read(path).unwrap());
                }
            }
        }
        bodies.sort_by_key(Vec::len);
        assert!(bodies.len() >= 8, "{} bodies", bodies.len());
        // Numbers, literals, escapes and empty containers as JSON allows and refuses them.
        let grammar = br#" {"n": [0, -0, 12, -3.25, 1e5, 6.02E+23, 1.5e-3, [], {}, [[]], true, false, null],
            "s": "a\"b\\c\/\u00e9\n", "e": {}, "x": [{"y": [1, {"z": "w"}]}]} "#;
        for body in &bodies {
            assert_eq!(value_end(body, 0), serde_value_end(body), "{}", String::from_utf8_lossy(body));
        }
        assert_eq!(value_end(grammar, 0), serde_value_end(grammar));
        assert!(value_end(grammar, 0).is_some());
        let swaps =
            [b'"', b'\\', b',', b':', b'[', b']', b'{', b'}', b'0', b'-', b'.', b'e', b'+', b'x', b' ', 0x01];
        let (mut agreed, mut declined) = (0, 0);
        for text in bodies.iter().take(4).map(Vec::as_slice).chain([grammar.as_slice()]) {
            for at in (0..text.len()).filter(|&i| text[i].is_ascii()) {
                let cut = &text[..at];
                let mut variants = vec![cut.to_vec()];
                variants.extend(swaps.iter().filter(|&&b| b != text[at]).map(|&b| {
                    let mut t = text.to_vec();
                    t[at] = b;
                    t
                }));
                for t in variants {
                    match value_end(&t, 0) {
                        Some(end) => {
                            assert_eq!(Some(end), serde_value_end(&t), "{}", String::from_utf8_lossy(&t));
                            agreed += 1;
                        }
                        None => declined += 1,
                    }
                }
            }
        }
        assert!(agreed > 1000 && declined > 10_000, "{agreed} scanned, {declined} left to serde_json");
    }

    #[test]
    fn numbers_literals_and_depth_are_scanned_as_json_writes_them() {
        for (number, good) in [
            ("0", true),
            ("-0", true),
            ("10", true),
            ("1.5", true),
            ("1e5", true),
            ("1E-5", true),
            ("-2.5e+10", true),
            ("01", false),
            ("1.", false),
            (".5", false),
            ("-", false),
            ("1e", false),
            ("1e+", false),
            ("+1", false),
            ("tru", false),
            ("nul", false),
            ("truex", false),
        ] {
            let text = format!("[{number}]");
            let end = value_end(text.as_bytes(), 0);
            assert_eq!(end.is_some(), good, "{text}");
            assert_eq!(serde_value_end(text.as_bytes()).is_some(), good, "{text}");
        }
        // A number or literal alone is left to serde_json (which checks what follows it).
        assert_eq!(value_end(b"12 ", 0), None);
        assert_eq!(value_end(b"\"alone\" ", 0), Some(7));
        // Nesting is followed to `SCAN_DEPTH` open containers (the innermost, empty, opens
        // none) and left to serde_json past it.
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let depth = SCAN_DEPTH as usize + 1;
        assert_eq!(value_end(nested(depth).as_bytes(), 0), Some(2 * depth));
        assert_eq!(value_end(nested(depth + 1).as_bytes(), 0), None);
        let mut r = Reader::of_text(Box::leak(nested(depth + 1).into_boxed_str()));
        assert_eq!(r.skip().map_err(drop), Ok(0..2 * (depth + 1)), "serde_json reads what the scan leaves");
    }

    #[test]
    fn a_plain_string_ends_at_the_first_quote_backslash_or_control_byte() {
        let naive = |b: &[u8]| b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
        // Every length up to three words, every position of every stop byte, over text with
        // bytes on both sides of each class boundary (0x1f/0x20, 0x21/0x22/0x23, 0x5b/0x5c/0x5d,
        // 0x7f/0x80, UTF-8 continuation bytes).
        let fill = "a é!#[]~\u{7f}ü€ ".as_bytes();
        for len in 0..=24 {
            let base: Vec<u8> = fill.iter().cycle().take(len).copied().collect();
            assert_eq!(plain_string_end(&base), naive(&base), "{base:?}");
            for at in 0..len {
                for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut b = base.clone();
                    b[at] = stop;
                    assert_eq!(plain_string_end(&b), naive(&b), "{b:?}");
                    // A second stop later never hides the first.
                    if at + 3 < len {
                        b[at + 3] = b'"';
                        assert_eq!(plain_string_end(&b), naive(&b), "{b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn holes_are_spans_and_everything_else_is_the_tree() {
        let text = r#" { "kind" : "K", "spec": {"versions": [ {"name":"a","schema": {"x": [1, 2.5, "\u00e9"]}},
            {"name":"b"}, {"schema" : {"x": [1, 2.5, "\u00e9"]} , "n": null}, 7 ], "other": {"schema": 1}}} "#;
        let s = Skeleton::read(text, PATH).unwrap();
        let mut expected: Value = serde_json::from_str(text).unwrap();
        for v in expected["spec"]["versions"].as_array_mut().unwrap() {
            if let Some(m) = v.as_object_mut() {
                m.remove("schema");
            }
        }
        assert_eq!(s.doc, expected);
        let at: Vec<_> = s.holes.iter().map(|h| (h.at.clone(), &text[h.span.clone()])).collect();
        assert_eq!(
            at,
            [(vec![0], r#"{"x": [1, 2.5, "\u00e9"]}"#), (vec![2], r#"{"x": [1, 2.5, "\u00e9"]}"#)]
        );
    }

    #[test]
    fn a_repeated_member_on_the_way_replaces_the_first() {
        let text =
            r#"{"spec":{"versions":[{"schema":1}]},"spec":{"versions":[{"n":1},{"schema":2,"schema":3}]}}"#;
        let s = Skeleton::read(text, PATH).unwrap();
        assert_eq!(s.doc, serde_json::json!({"spec":{"versions":[{"n":1},{}]}}));
        let at: Vec<_> = s.holes.iter().map(|h| (h.at.clone(), &text[h.span.clone()])).collect();
        assert_eq!(at, [(vec![1], "3")]);
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for text in [
            r#"{"spec":"#,
            r#"{} trailing"#,
            r#"{"a":1,}"#,
            r#"{,"a":1}"#,
            r#"{"a" 1}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"spec":{"versions":[{"schema":{"a":01}}]}}"#,
            r#"{"spec":{"versions":[{"schema":{"a":"\x"}}]}}"#,
            r#"{"spec":{"versions":[1,]}}"#,
            r#"{"spec":{"versions":[,1]}}"#,
            r#"{"spec":{"versions":[{"schema":{}} {"schema":{}}]}}"#,
            "{\"a\":\"\t\"}",
            r#"{1:2}"#,
            "",
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
            assert!(Skeleton::read(text, PATH).is_err(), "{text}");
        }
        for text in [r#"[]"#, r#"{}"#, "null", r#"{"spec":{"versions":[]}}"#, r#"{"spec":[{"versions":1}]}"#]
        {
            let s = Skeleton::read(text, PATH).unwrap();
            assert_eq!(s.doc, serde_json::from_str::<Value>(text).unwrap(), "{text}");
            assert!(s.holes.is_empty());
        }
    }

    #[test]
    fn a_repeated_hole_is_found_by_its_bytes_and_a_near_repeat_is_scanned() {
        // The second hole begins with the first one's bytes; the third shares a prefix only.
        let text =
            r#"{"spec":{"versions":[{"schema":{"a":[1]}},{"schema":{"a":[1]}},{"schema":{"a":[1,2]}}]}}"#;
        let s = Skeleton::read(text, PATH).unwrap();
        let texts: Vec<_> = s.holes.iter().map(|h| &text[h.span.clone()]).collect();
        assert_eq!(texts, [r#"{"a":[1]}"#, r#"{"a":[1]}"#, r#"{"a":[1,2]}"#]);
    }

    /// A toy model: the value's text and the text of the value it was read beside. It reads
    /// objects only, and declines anything else.
    fn toy(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)> {
        if !text.starts_with('{') {
            return None;
        }
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        let len = values.byte_offset();
        let model: Toy = (text[..len].to_string(), like.map(|(text, _)| text.to_string()));
        Some((Model(Arc::new(model)), len))
    }

    type Toy = (String, Option<String>);

    #[test]
    fn each_hole_is_read_by_the_model_reader_once_beside_the_one_it_likely_repeats() {
        // A review's object, then the object before the update, read by one reader.
        let text = r#"{"spec":{"versions":[{"schema":{"a":1}},{"schema":{"a":1}},{"schema":[2]},{"schema":{"b":3}}]}}
            {"spec":{"versions":[{"schema":{"a":2}},{"schema":{"c":1}}]}}"#;
        let mut reader = Reader::of_text(text);
        let (new, old) =
            (reader.skeleton(PATH, Some(toy)).unwrap(), reader.skeleton(PATH, Some(toy)).unwrap());
        let read = |s: &Skeleton, i: usize| {
            s.holes[i].model.as_ref().map(|m| m.0.downcast_ref::<Toy>().unwrap().clone())
        };
        let toy = |own: &str, like: Option<&str>| Some((own.to_string(), like.map(str::to_string)));
        assert_eq!(read(&new, 0), toy(r#"{"a":1}"#, None));
        // A repeat is the first one's model, not read again.
        assert_eq!(new.holes[1].model, new.holes[0].model);
        // Declined: scanned, and kept as text only.
        assert_eq!((&text[new.holes[2].span.clone()], read(&new, 2)), ("[2]", None));
        // Nothing to read it beside: the one before it has no model.
        assert_eq!(read(&new, 3), toy(r#"{"b":3}"#, None));
        // The object before the update: each read beside the same version after it.
        assert_eq!(read(&old, 0), toy(r#"{"a":2}"#, Some(r#"{"a":1}"#)));
        assert_eq!(read(&old, 1), toy(r#"{"c":1}"#, Some(r#"{"a":1}"#)));
        // The doc and spans are what a reading without models finds.
        let plain = Skeleton::read(&text[..text.find('\n').unwrap()], PATH).unwrap();
        assert_eq!(new.doc, plain.doc);
        let spans = |s: &Skeleton| s.holes.iter().map(|h| (h.at.clone(), h.span.clone())).collect::<Vec<_>>();
        assert_eq!(spans(&new), spans(&plain));
    }
}
