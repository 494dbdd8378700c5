//! A JSON text read where it lies: punctuation (`{`, `:`, `,`, `}`, `[`, `]`) read here, each
//! value read by serde_json from where it starts (so what is accepted and refused is what
//! serde_json accepts and refuses), or scanned to its end without being built. The readers
//! that take a text straight into a model (an object's skeleton, a schema's layout) stand on
//! it.

use std::ops::Range;

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::JsonKey;

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
    /// Where strings with escapes are decoded, kept from one string to the next.
    tape: Vec<u8>,
}

impl<'a> Reader<'a> {
    /// A reader of a text, from its start.
    pub(crate) fn of_text(text: &'a str) -> Reader<'a> {
        Reader { text, data: text.as_bytes(), pos: 0, tape: Vec::new() }
    }

    /// The whole text.
    pub(crate) fn text(&self) -> &'a str {
        self.text
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
    #[inline]
    pub(crate) fn string(&mut self) -> Result<JsonKey<'a>, ReadError> {
        // A string without escapes, the most common kind (keys, `"type": "string"`, most
        // descriptions), is sliced straight out of the text: starting a decoder costs more
        // than finding its end. One with an escape is decoded.
        if self.peek() == Some(b'"') {
            if let Some((text, end)) = self.plain_string(self.pos) {
                self.pos = end;
                return Ok(JsonKey(text.into()));
            }
        }
        self.decoded_string()
    }

    /// The string whose opening quote is at `at`, when it holds no escape (nor a byte JSON
    /// refuses in a string): its text, sliced from the text, and where it ends, just past its
    /// closing quote.
    #[inline(always)]
    fn plain_string(&self, at: usize) -> Option<(&'a str, usize)> {
        let end = stop_from(self.data, at + 1)?;
        (self.data[end] == b'"').then_some(())?;
        Some((self.text.get(at + 1..end)?, end + 1))
    }

    /// `string`, for a string with an escape (or no string: serde_json words the error).
    #[inline(never)]
    fn decoded_string(&mut self) -> Result<JsonKey<'a>, ReadError> {
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

    /// Step over the literal `word` (`null`, `true`, `false`) if it is the next value, ended
    /// where JSON ends a value; `false`, nothing consumed, at anything else (a caller that
    /// needs an error to word leaves the value to serde_json).
    pub(crate) fn literal(&mut self, word: &[u8]) -> bool {
        self.peek();
        let rest = &self.data[self.pos..];
        let ends =
            matches!(rest.get(word.len()), None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\t' | b'\r'));
        let found = rest.starts_with(word) && ends;
        if found {
            self.pos += word.len();
        }
        found
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
    #[inline]
    pub(crate) fn key(&mut self, first: &mut bool) -> Result<Option<JsonKey<'a>>, ReadError> {
        // Compact JSON, as the API server and serde_json write it: `"key":`, led by `,` after
        // the first member, with no space and no escape. Taken here in one step; anything else
        // (space, an escape, the mapping's end, an error) is read one token at a time below.
        let at = if *first { self.pos } else { self.pos + 1 };
        if (*first || self.data.get(self.pos) == Some(&b',')) && self.data.get(at) == Some(&b'"') {
            if let Some((text, end)) = self.plain_string(at) {
                if self.data.get(end) == Some(&b':') {
                    self.pos = end + 1;
                    *first = false;
                    return Ok(Some(JsonKey(text.into())));
                }
            }
        }
        self.key_by_tokens(first)
    }

    /// `key`, one token at a time: the mapping's end, a space, an escape, an error.
    #[inline(never)]
    fn key_by_tokens(&mut self, first: &mut bool) -> Result<Option<JsonKey<'a>>, ReadError> {
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

    /// A mapping's keys as `key` reads them (in one step when compact, token by token
    /// otherwise), with serde_json's reading of the same text beside: the same keys in order
    /// for every spacing and escape, and refused where serde_json refuses.
    #[test]
    fn keys_are_read_as_serde_json_reads_them_whatever_the_spacing() {
        let texts = [
            r#"{"uid":"a","kind":{"group":"","version":"v1"},"name":null}"#,
            r#"{ "uid" : "a" , "kind" : { "group" : "" } }"#,
            "{\n  \"uid\": \"a\",\n\t\"kind\":{}\r\n}",
            r#"{"\u0075id":"a","ki\nd":1,"\"q\"":2}"#,
            r#"{"é€":1,"plain":2}"#,
            r#"{}"#,
            r#"{ }"#,
            r#"{"uid":"a",}"#,
            r#"{"uid" "a"}"#,
            r#"{"uid":"a" "kind":1}"#,
            r#"{,"uid":"a"}"#,
            r#"{"uid:"a"}"#,
            "{\"ui\x01d\":1}",
        ];
        for text in texts {
            let serde: Option<Vec<String>> =
                serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
                    .ok()
                    .map(|m| m.keys().cloned().collect());
            let mut r = Reader::of_text(text);
            assert!(r.enter_map(), "{text}");
            let mut first = true;
            let mut ours = Vec::new();
            let read = loop {
                match r.key(&mut first) {
                    Ok(Some(JsonKey(k))) => {
                        ours.push(k.into_owned());
                        if r.skip().is_err() {
                            break None;
                        }
                    }
                    Ok(None) => break (r.peek().is_none()).then_some(ours),
                    Err(_) => break None,
                }
            };
            // serde_json's map keeps keys sorted; the order read is the text's.
            let read = read.map(|mut keys| {
                keys.sort();
                keys
            });
            assert_eq!(read, serde, "{text}");
        }
    }

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
            assert_eq!(stop_from(&base, 0), naive(&base), "{base:?}");
            for at in 0..len {
                for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut b = base.clone();
                    b[at] = stop;
                    assert_eq!(stop_from(&b, 0), naive(&b), "{b:?}");
                    // A second stop later never hides the first.
                    if at + 3 < len {
                        b[at + 3] = b'"';
                        assert_eq!(stop_from(&b, 0), naive(&b), "{b:?}");
                    }
                }
            }
        }
    }
}
