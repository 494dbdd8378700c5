//! Scalars and keys as kubectl reads them (go-yaml v2, through sigs.k8s.io/yaml) — the
//! launcher's yaml.v3 agrees on all of it but the YAML 1.1 booleans. A plain scalar resolves
//! as go-yaml resolves it, where YAML 1.2's core schema reads otherwise; a tagged scalar is
//! what go-yaml makes of its tag; a mapping key becomes the JSON member name kubectl makes of
//! it; and a plain scalar that covenant reads as text and kubectl as something else is named
//! (`reads_otherwise`, CVN-110), since a change kubectl would see there is one a YAML 1.2
//! reader does not.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::{Number, Value};
use yaml_rust2::parser::Tag;
use yaml_rust2::scanner::TScalarStyle;

use crate::source::KubectlReads;

/// The JSON member name of a scalar mapping key, as kubectl (sigs.k8s.io/yaml) makes one of
/// the key go-yaml read: a string as it is, an integer in decimal, a boolean as `true` or `false`, a
/// float as Go's `FormatFloat(f, 'g', -1, 32)` writes it. A null key, and an integer above
/// the int64 range (go-yaml reads it as uint64), kubectl refuses: `unsupported map key`.
pub(in crate::source) fn json_key(key: Value) -> Result<String, &'static str> {
    match key {
        Value::String(s) => Ok(s),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(i.to_string()),
            (None, _) if n.is_u64() => {
                Err("the mapping key is an integer above 9223372036854775807, which kubectl cannot make a \
                 JSON key of (it refuses the document: unsupported map key of type uint64); quote it")
            }
            (None, f) => Ok(go_float_key(f.unwrap_or(f64::NAN))),
        },
        _ => Err("the mapping key is null (`~`, `null`, or nothing before the `:`), which kubectl \
             cannot make a JSON key of (it refuses the document: unsupported map key of type <nil>); \
             quote it if it is text"),
    }
}

/// A float mapping key as kubectl writes it: Go's `strconv.FormatFloat(f, 'g', -1, 32)` (the
/// shortest digits that read back as the same float32; an exponent below -4 or from 6 up
/// written as `e±dd`), with `.inf`, `-.inf` and `.nan` for what has no digits.
fn go_float_key(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)] // float32, as kubectl formats it
    let single = f as f32;
    if single.is_nan() {
        return ".nan".into();
    }
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let sign = if single.is_sign_negative() { "-" } else { "" };
    if single == 0.0 {
        return format!("{sign}0");
    }
    // Rust's shortest float32 digits, the same digits Go's shortest formatting finds.
    let shortest = format!("{:e}", single.abs());
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let digits = mantissa.replace('.', "");
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let sign_e = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{point}{rest}e{sign_e}{:02}", exponent.abs());
    }
    // Digits before the point: the exponent plus one (none or fewer than the digits).
    let before = usize::try_from(exponent + 1).unwrap_or(0);
    if exponent < 0 {
        let zeros = "0".repeat(usize::try_from(-exponent - 1).unwrap_or(0));
        format!("{sign}0.{zeros}{digits}")
    } else if before >= digits.len() {
        format!("{sign}{digits}{}", "0".repeat(before - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..before], &digits[before..])
    }
}

/// A scalar's value: a plain one resolved, a quoted or block one text, a tagged one as its tag
/// says. The error is why a tagged scalar cannot be what its tag names.
pub(in crate::source) fn scalar(
    text: String,
    style: TScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, String> {
    match tag {
        Some(tag) => tagged(text, tag),
        None if style == TScalarStyle::Plain => Ok(resolve_plain(text)),
        None => Ok(Value::String(text)),
    }
}

/// A scalar with an explicit tag, read as go-yaml reads it (kubectl's v2 and the launcher's v3
/// agree), whatever the scalar's style. `!!int`, `!!float`, `!!bool`, `!!null` and
/// `!!timestamp` resolve the text and refuse one that is not of their kind, as go-yaml's
/// "cannot decode !!str `abc` as a !!int" does; `!!bool` takes YAML 1.1's `yes`/`on`/… too, and
/// `!!float` makes an integer a float. `!!binary` is its base64 decoded; a timestamp stays text,
/// as go-yaml leaves it for a JSON document. `!!str` and every tag go-yaml does not resolve (a
/// local `!name`, the non-specific `!`, `!!set`, another domain's) keep the text.
fn tagged(text: String, tag: &Tag) -> Result<Value, String> {
    const CORE: &str = "tag:yaml.org,2002:";
    let name = format!("{}{}", tag.handle, tag.suffix);
    let Some(kind) = name.strip_prefix(CORE) else { return Ok(Value::String(text)) };
    let refused = |found: &Value| {
        let found = match found {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            _ => "str",
        };
        let wanted = match kind {
            "int" => "an integer",
            "float" => "a number",
            "bool" => "a boolean",
            "null" => "null",
            _ => "a timestamp",
        };
        format!(
            "the scalar `{text}` is tagged !!{kind} but is not {wanted} (kubectl and the launcher \
             refuse it: cannot decode !!{found} `{text}` as a !!{kind})"
        )
    };
    match kind {
        "int" => match resolve_plain(text.clone()) {
            Value::Number(n) if !n.is_f64() => Ok(Value::Number(n)),
            found => Err(refused(&found)),
        },
        "float" => match resolve_plain(text.clone()) {
            Value::Number(n) => {
                Ok(n.as_f64().and_then(Number::from_f64).map_or(Value::Number(n), Value::Number))
            }
            found => Err(refused(&found)),
        },
        "bool" => match reads_otherwise(&text, false) {
            Some(KubectlReads::Boolean(b)) => Ok(Value::Bool(b)),
            _ => match resolve_plain(text.clone()) {
                Value::Bool(b) => Ok(Value::Bool(b)),
                found => Err(refused(&found)),
            },
        },
        "null" => match resolve_plain(text.clone()) {
            Value::Null => Ok(Value::Null),
            found => Err(refused(&found)),
        },
        "timestamp" if go_timestamp(&text) => Ok(Value::String(text)),
        "timestamp" => Err(refused(&resolve_plain(text.clone()))),
        "binary" => {
            use base64::Engine;
            let packed: String = text.split_ascii_whitespace().collect();
            match base64::engine::general_purpose::STANDARD.decode(packed) {
                Ok(bytes) => Ok(Value::String(String::from_utf8_lossy(&bytes).into_owned())),
                Err(e) => Err(format!("the scalar tagged !!binary is not base64 ({e})")),
            }
        }
        _ => Ok(Value::String(text)),
    }
}

/// Whether a text is a timestamp in one of the forms go-yaml takes (Go's `2006-1-2`,
/// `2006-1-2T15:4:5.999999999Z07:00` with `T` or `t`, `2006-1-2 15:4:5.999999999`), each
/// field in its range.
fn go_timestamp(text: &str) -> bool {
    static FORM: OnceLock<regex::Regex> = OnceLock::new();
    let form = FORM.get_or_init(|| {
        regex::Regex::new(
            r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?(?:Z|[-+]([0-9]{2}):([0-9]{2})))|(?: ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?))?$",
        )
        .expect("a valid pattern")
    });
    let Some(fields) = form.captures(text) else { return false };
    let field = |i: usize| fields.get(i).map(|m| m.as_str().parse::<u32>().unwrap_or(u32::MAX));
    let date = match (field(1), field(2), field(3)) {
        (Some(year), Some(month), Some(day)) => u8::try_from(month)
            .ok()
            .and_then(|m| time::Month::try_from(m).ok())
            .zip(i32::try_from(year).ok())
            .is_some_and(|(month, year)| {
                u8::try_from(day).is_ok_and(|d| time::Date::from_calendar_date(year, month, d).is_ok())
            }),
        _ => false,
    };
    let below = |i: usize, limit: u32| field(i).is_none_or(|v| v < limit);
    date && below(4, 24)
        && below(5, 60)
        && below(6, 60)
        && below(7, 24)
        && below(8, 60)
        && below(9, 24)
        && below(10, 60)
        && below(11, 60)
}

/// A plain scalar's value as go-yaml resolves it: kubectl reads manifests with go-yaml v2 and
/// the launcher reads its files with v3, and the two agree on all of this. Where YAML 1.2's
/// core schema (and yaml-rust2) reads otherwise, go-yaml is followed, so that what covenant
/// judges is what is applied: `Null` and `NULL` are null; an integer may carry `_` between
/// digits (`1_000`), a sign before a base prefix (`-0x10`), `0b` for binary, and a leading `0`
/// makes it octal (`0755` is 493). A float is written as JSON floats are, or with a leading
/// `.` (`.5`). Infinities and NaN, which JSON cannot hold, stay text (and are noted: kubectl
/// refuses them), as does every other word (`yes`, `on`: v3 reads them as text, v2 as
/// booleans, also noted).
fn resolve_plain(text: String) -> Value {
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let number = match text.as_bytes()[0] {
        b'.' => text.parse::<f64>().ok().and_then(Number::from_f64),
        b'+' | b'-' | b'0'..=b'9' => {
            let plain =
                if text.contains('_') { Cow::Owned(text.replace('_', "")) } else { Cow::Borrowed(&*text) };
            go_integer(&plain).or_else(|| go_float(&plain))
        }
        _ => None,
    };
    number.map_or(Value::String(text), Value::Number)
}

/// An integer as Go's `strconv.ParseInt(s, 0, 64)` (or, unsigned and larger, `ParseUint`)
/// reads it: an optional sign, then `0x`, `0o`, `0b` or a leading `0` (octal) for the base.
fn go_integer(text: &str) -> Option<Number> {
    let (negative, signed, body) = match text.as_bytes().first()? {
        b'-' => (true, true, &text[1..]),
        b'+' => (false, true, &text[1..]),
        _ => (false, false, text),
    };
    let (radix, digits) = match body.get(..2) {
        Some("0x" | "0X") => (16, &body[2..]),
        Some("0o" | "0O") => (8, &body[2..]),
        Some("0b" | "0B") => (2, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    match (negative, signed) {
        (true, _) => i64::try_from(-i128::from(magnitude)).ok().map(Number::from),
        // `ParseInt` takes a `+` within the signed range; `ParseUint` takes no sign.
        (false, true) => i64::try_from(magnitude).ok().map(Number::from),
        (false, false) => Some(Number::from(magnitude)),
    }
}

/// A float in the form go-yaml takes (`[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`),
/// if it is finite.
fn go_float(text: &str) -> Option<Number> {
    static FORM: OnceLock<regex::Regex> = OnceLock::new();
    let form = FORM.get_or_init(|| {
        regex::Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").expect("a valid pattern")
    });
    form.is_match(text).then(|| text.parse::<f64>().ok()).flatten().and_then(Number::from_f64)
}

/// What go-yaml v2 reads a plain scalar as, where covenant reads text (CVN-110); a key is
/// named by what kubectl makes of it, and only a boolean key is named otherwise (`.inf` is
/// ".inf").
pub(in crate::source) fn reads_otherwise(text: &str, key: bool) -> Option<KubectlReads> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(KubectlReads::Boolean(true)),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(KubectlReads::Boolean(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF" | ".nan"
        | ".NaN" | ".NAN"
            if !key =>
        {
            Some(KubectlReads::NonFinite)
        }
        _ => None,
    }
}
