//! The strict validator: a value against a schema, every problem collected (not only the
//! first), each with its pointer and readable path, what was found and what was expected.
//! Closed wherever the schema declares properties and is not marked open. It also returns
//! the value normalised as the schema reads it (an integral `3.0` becomes `3`; a union value
//! takes the first member type that accepts it).

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

use serde_json::{Number, Value};

use super::evaluate::{Evaluator, Verdict};
use super::{Additional, Schema, Type};
use crate::pointer::Location;

/// Where `required` is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Required {
    /// At every level.
    Everywhere,
    /// Below the top level only: the launcher's authored properties, where a cluster profile
    /// capability may still supply a top-level key (seed 000, "Required fields are checked at
    /// nested levels only").
    NestedOnly,
}

/// What is wrong at one place.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// A key the schema does not declare, with the allowed keys and the nearest one.
    Undeclared {
        /// The key.
        key: String,
        /// The declared keys, sorted.
        allowed: Vec<String>,
        /// The nearest declared key, if one is near.
        nearest: Option<String>,
    },
    /// A value of the wrong type.
    Type {
        /// The declared type(s), such as `integer` or `string or integer`.
        expected: String,
        /// What was there, such as `a string "three"`.
        found: String,
    },
    /// An integral value beyond the 64-bit integer range.
    OutOfRange {
        /// What was there.
        found: String,
    },
    /// A value outside the enum.
    NotInEnum {
        /// What was there.
        found: String,
        /// The allowed values, as JSON.
        allowed: Vec<String>,
    },
    /// A required key that is absent (or null).
    Missing {
        /// The key.
        key: String,
    },
    /// A value outside a stated bound (minimum, maxLength, minItems, …).
    Bound {
        /// The bound, such as `at least 1` or `at most 63 characters`.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A value the `not` schema accepts.
    Not {
        /// What was there.
        found: String,
    },
    /// An item that appears twice in a list stating `uniqueItems`.
    Duplicate {
        /// The repeated item.
        found: String,
    },
    /// A string the `pattern` (RE2) does not match.
    Pattern {
        /// The pattern.
        pattern: String,
        /// What was there.
        found: String,
    },
    /// A string not of the `format` the apiserver validates.
    Format {
        /// The format.
        format: String,
        /// What was there.
        found: String,
    },
    /// A CEL rule (`x-kubernetes-validations`) the value fails.
    Rule {
        /// The rule's message, naming the rule.
        message: String,
    },
    /// A list whose `x-kubernetes-list-type` (`set`, `map`) it breaks.
    ListType {
        /// What is duplicated.
        detail: String,
    },
    /// A value no `anyOf` member accepts, or not exactly one `oneOf` member.
    Branch {
        /// `anyOf` or `oneOf`.
        keyword: &'static str,
        /// How many members accepted.
        accepted: usize,
    },
}

/// One problem at one location.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Where.
    pub at: Location,
    /// What.
    pub problem: Problem,
    /// Whether the location is inside a list item (a capability rendering never merges into
    /// a list, so such a required key is judged as written).
    pub in_list: bool,
}

impl Violation {
    /// The message: what was found and what was expected.
    pub fn message(&self) -> String {
        match &self.problem {
            Problem::Undeclared { key, allowed, nearest } => {
                let allowed = if allowed.is_empty() { "(none)".to_string() } else { allowed.join(", ") };
                let near = nearest.as_ref().map(|n| format!("; did you mean \"{n}\"?")).unwrap_or_default();
                format!("key \"{key}\" is not declared (allowed: {allowed}){near}")
            }
            Problem::Type { expected, found } => format!("expected {expected}, found {found}"),
            Problem::OutOfRange { found } => {
                format!("expected an integer within the 64-bit range, found {found}")
            }
            Problem::NotInEnum { found, allowed } => {
                format!("expected one of [{}], found {found}", allowed.join(", "))
            }
            Problem::Missing { key } => format!("required key \"{key}\" is missing"),
            Problem::Bound { expected, found } => format!("expected {expected}, found {found}"),
            Problem::Pattern { pattern, found } => {
                format!("expected a string matching {pattern:?}, found {found}")
            }
            Problem::Format { format, found } => {
                format!("expected a string of format {format:?}, found {found}")
            }
            Problem::Rule { message } => message.clone(),
            Problem::ListType { detail } => detail.clone(),
            Problem::Not { found } => format!("expected a value the `not` schema refuses, found {found}"),
            Problem::Duplicate { found } => {
                format!("expected unique items (uniqueItems), found {found} twice")
            }
            Problem::Branch { keyword: "oneOf", accepted } => {
                format!("expected a value exactly one oneOf member accepts, {accepted} accept it")
            }
            Problem::Branch { keyword, .. } => format!("expected a value some {keyword} member accepts"),
        }
    }
}

/// The outcome of validating one value.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The value as the schema reads it, where that differs from the value as written (an
    /// integral `3.0` read as `3`); `None`: it reads as written. Built copy-on-write, so a
    /// value that needs no normalising is walked without being copied.
    pub normalized: Option<Value>,
    /// Every problem, in document order (keys sorted within a mapping).
    pub violations: Vec<Violation>,
}

/// How a value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Where `required` is enforced.
    pub required: Required,
    /// Whether a string holding a `${...}` placeholder stands for a value of any type (a
    /// package's parameter not yet substituted): it is accepted where any type is expected.
    pub placeholders: bool,
}

impl Options {
    /// Required enforced as given, no placeholders.
    pub const fn required(required: Required) -> Options {
        Options { required, placeholders: false }
    }
}

/// Whether a string holds a `${...}` placeholder.
pub fn is_placeholder(s: &str) -> bool {
    // Byte searches: a substring search's set-up costs more than most property values.
    let b = s.as_bytes();
    memchr::memchr_iter(b'$', b)
        .find(|&i| b.get(i + 1) == Some(&b'{'))
        .is_some_and(|i| memchr::memchr(b'}', &b[i + 2..]).is_some())
}

/// Validate `value` at `at` against `schema`.
pub fn validate(schema: &Schema, value: &Value, at: &Location, required: Required) -> Outcome {
    validate_with(schema, value, at, Options::required(required))
}

/// Validate `value` at `at` against `schema`, read as `options` say.
pub fn validate_with(schema: &Schema, value: &Value, at: &Location, options: Options) -> Outcome {
    walk(schema, value, at, options, None)
}

/// Validate as the apiserver does: everything `validate` checks, plus `pattern` (RE2),
/// `format`, `x-kubernetes-list-type` and CEL rules, through `ev` (which caches what it
/// compiles across calls and collects what it could not evaluate in `ev.unprovable`).
pub fn validate_evaluating(
    schema: &Schema,
    value: &Value,
    at: &Location,
    required: Required,
    ev: &mut Evaluator,
) -> Outcome {
    ev.begin_object();
    // The walk itself runs where it is called, as the plain walk does: only parsing and
    // evaluating a CEL rule moves to a stack of its own (`bounds::on_deep_stack`), so a
    // consumer review whose schema states no rule pays nothing for it.
    walk(schema, value, at, Options::required(required), Some(ev))
}

fn walk(
    schema: &Schema,
    value: &Value,
    at: &Location,
    options: Options,
    ev: Option<&mut Evaluator>,
) -> Outcome {
    let mut violations = Vec::new();
    let mut branches = Branches::default();
    let mut walker = Walker {
        options,
        out: &mut violations,
        base: at,
        steps: Vec::with_capacity(8),
        ev,
        branches: &mut branches,
        walked: FxHashSet::default(),
    };
    let normalized = walker.walk(schema, value, 0, false);
    Outcome { normalized, violations }
}

/// Describe a value for "found …".
pub fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("a boolean {b}"),
        Value::Number(n) => format!("a number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("a string \"{}…\"", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("a string \"{s}\""),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a mapping".into(),
    }
}

enum Accept {
    /// Accepted; with the value as the type reads it when that differs.
    Yes(Option<Value>),
    No,
    OutOfRange,
}

/// Whether `value` is a value of type `t` as it stands (`accept` says `Yes(None)`).
#[inline]
fn as_is(t: Type, value: &Value) -> bool {
    match (t, value) {
        (Type::String, Value::String(_))
        | (Type::Boolean, Value::Bool(_))
        | (Type::Number, Value::Number(_))
        | (Type::Array, Value::Array(_))
        | (Type::Object, Value::Object(_)) => true,
        (Type::Integer, Value::Number(n)) => n.is_i64(),
        _ => false,
    }
}

fn accept(t: Type, value: &Value) -> Accept {
    if as_is(t, value) {
        return Accept::Yes(None);
    }
    match (t, value) {
        (Type::Integer, Value::Number(n)) => {
            if n.is_u64() {
                Accept::OutOfRange
            } else {
                match n.as_f64() {
                    Some(f) if f.is_finite() && f.fract() == 0.0 => {
                        // i64::MAX as f64 rounds up to 2^63, which is out of range.
                        if f >= -(2f64.powi(63)) && f < 2f64.powi(63) {
                            Accept::Yes(Some(Value::Number(Number::from(f as i64))))
                        } else {
                            Accept::OutOfRange
                        }
                    }
                    _ => Accept::No,
                }
            }
        }
        _ => Accept::No,
    }
}

fn enum_member(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        // A compound member is compared element by element with the same exact numeric
        // equality: `[1.0, 2]` is the member `[1, 2]`.
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| enum_member(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| enum_member(a, b)))
        }
        _ => a == b,
    }
}

/// One step below the walk's base location, kept borrowed until a problem needs it spelled.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// The walk: where it stands is the base location plus a stack of borrowed steps, so a
/// location is spelled out (two strings) only for a problem, never for a clean node.
struct Walker<'o, 'v> {
    options: Options,
    out: &'o mut Vec<Violation>,
    base: &'o Location,
    steps: Vec<Step<'v>>,
    ev: Option<&'o mut Evaluator>,
    /// Whether an `anyOf`/`oneOf` member accepts a value, by (member, value) node: a shared
    /// definition under nested compositions is tried once per value, not once per path.
    branches: &'o mut Branches,
    /// The `allOf` members already walked on a value by this walker (their problems are in
    /// `out` already).
    walked: FxHashSet<(usize, usize)>,
}

/// Branch outcomes by (schema node, value node) address, for one validation (addresses need
/// no keyed hash).
type Branches = FxHashMap<(usize, usize), bool>;

fn key(schema: &Arc<Schema>, value: &Value) -> (usize, usize) {
    (Arc::as_ptr(schema) as usize, value as *const Value as usize)
}

impl<'o, 'v> Walker<'o, 'v> {
    fn here(&self) -> Location {
        self.steps.iter().fold(self.base.clone(), |at, step| match step {
            Step::Key(k) => at.key(k),
            Step::Index(i) => at.index(*i),
        })
    }

    fn push(&mut self, in_list: bool, problem: Problem) {
        let at = self.here();
        self.out.push(Violation { at, problem, in_list });
    }

    /// Walk a member or item: a scalar its schema only types is judged here, without a walk
    /// of its own — most of a document's nodes are such leaves, and a walk's frame costs
    /// more than their check. What the walk would find for them is nothing either way.
    #[inline(always)]
    fn child(&mut self, schema: &Schema, value: &'v Value, depth: usize, in_list: bool) -> Option<Value> {
        let plain = matches!(value, Value::String(_) | Value::Bool(_) | Value::Number(_))
            && self.ev.is_none()
            && schema.enumeration.is_none()
            && schema.bounds.is_empty()
            && schema.all_of.is_empty()
            && schema.any_of.is_empty()
            && schema.one_of.is_empty()
            && schema.types.iter().any(|&t| as_is(t, value));
        if plain {
            return None;
        }
        self.walk(schema, value, depth, in_list)
    }

    /// Walk `value`; returns the value as the schema reads it where that differs from
    /// `value`, else `None`.
    fn walk(&mut self, schema: &Schema, value: &'v Value, depth: usize, in_list: bool) -> Option<Value> {
        // Null constrains nothing: under an optional field it means absent (required keys are
        // checked by the parent, which counts null as missing), and where the schema is
        // `nullable` it is a value of its own.
        if value.is_null() {
            return None;
        }
        if self.options.placeholders && value.as_str().is_some_and(is_placeholder) {
            return None;
        }

        let mut replaced = None;
        if !schema.types.is_empty() {
            let mut out_of_range = false;
            let mut accepted = false;
            for &t in &schema.types {
                match accept(t, value) {
                    Accept::Yes(v) => {
                        accepted = true;
                        replaced = v;
                        break;
                    }
                    Accept::OutOfRange => out_of_range = true,
                    Accept::No => {}
                }
            }
            if !accepted {
                let problem = if out_of_range {
                    Problem::OutOfRange { found: found(value) }
                } else {
                    let names: Vec<&str> = schema.types.iter().map(|t| t.as_str()).collect();
                    Problem::Type { expected: names.join(" or "), found: found(value) }
                };
                self.push(in_list, problem);
                return None;
            }
        }
        // Only a scalar is ever replaced, so children are walked on `value` itself.
        let read = replaced.as_ref().unwrap_or(value);

        if let Some(allowed) = &schema.enumeration {
            if !allowed.iter().any(|a| enum_member(a, read)) {
                let problem = Problem::NotInEnum {
                    found: found(read),
                    allowed: allowed.iter().map(Value::to_string).collect(),
                };
                self.push(in_list, problem);
            }
        }
        if !schema.bounds.is_empty() {
            if let Some(problem) = bound(&schema.bounds, read) {
                self.push(in_list, problem);
            }
        }
        if self.ev.is_some() {
            self.evaluate(schema, read, in_list);
        }
        for member in &schema.all_of {
            if self.walked.insert(key(member, value)) {
                self.walk(member, value, depth, in_list);
            }
        }
        for (keyword, members) in [("anyOf", &schema.any_of), ("oneOf", &schema.one_of)] {
            if members.is_empty() {
                continue;
            }
            let accepted = members
                .iter()
                .filter(|m| {
                    if let Some(known) = self.branches.get(&key(m, value)) {
                        return *known;
                    }
                    let accepts = self.accepts(m, value, depth, in_list);
                    self.branches.insert(key(m, value), accepts);
                    accepts
                })
                .count();
            if accepted == 0 || (keyword == "oneOf" && accepted > 1) {
                self.push(in_list, Problem::Branch { keyword, accepted });
            }
        }

        let children = match value {
            Value::Object(map) if schema.types.contains(&Type::Object) || !schema.properties.is_empty() => {
                let mut changed: Option<serde_json::Map<String, Value>> = None;
                for (key, item) in map {
                    self.steps.push(Step::Key(key));
                    let v = match (schema.properties.get(key), &schema.additional) {
                        (Some(s), _) => self.child(s, item, depth + 1, in_list),
                        (None, Additional::Schema(s)) => self.child(s, item, depth + 1, in_list),
                        (None, Additional::Open | Additional::Unstated) => None,
                        (None, Additional::Closed) => {
                            let allowed: Vec<String> = schema.properties.keys().cloned().collect();
                            let nearest = crate::suggest::closest(key, allowed.iter().map(String::as_str))
                                .first()
                                .map(|s| s.to_string());
                            self.push(in_list, Problem::Undeclared { key: key.clone(), allowed, nearest });
                            None
                        }
                    };
                    self.steps.pop();
                    if let Some(v) = v {
                        changed.get_or_insert_with(|| map.clone()).insert(key.clone(), v);
                    }
                }
                if depth > 0 || self.options.required == Required::Everywhere {
                    for key in &schema.required {
                        if map.get(key).is_none_or(Value::is_null) {
                            self.push(in_list, Problem::Missing { key: key.clone() });
                        }
                    }
                }
                changed.map(Value::Object)
            }
            Value::Array(items) => match &schema.items {
                Some(item_schema) => {
                    let mut changed: Option<Vec<Value>> = None;
                    for (i, item) in items.iter().enumerate() {
                        self.steps.push(Step::Index(i));
                        let v = self.child(item_schema, item, depth + 1, true);
                        self.steps.pop();
                        if let Some(v) = v {
                            changed.get_or_insert_with(|| items.clone())[i] = v;
                        }
                    }
                    changed.map(Value::Array)
                }
                None => None,
            },
            _ => None,
        };
        children.or(replaced)
    }
}

impl Walker<'_, '_> {
    /// Whether `schema` accepts `value`: a trial walk whose problems are not kept.
    fn accepts(&mut self, schema: &Schema, value: &Value, depth: usize, in_list: bool) -> bool {
        let mut scratch = Vec::new();
        let mut trial = Walker {
            options: self.options,
            out: &mut scratch,
            base: self.base,
            steps: self.steps.clone(),
            ev: self.ev.as_deref_mut(),
            branches: &mut *self.branches,
            walked: FxHashSet::default(),
        };
        trial.walk(schema, value, depth, in_list);
        scratch.is_empty()
    }

    /// What only the apiserver's own validation checks: pattern, format, list type, CEL;
    /// and `uniqueItems` and `not`, which the plain walk leaves to it.
    fn evaluate(&mut self, schema: &Schema, value: &Value, in_list: bool) {
        if self.ev.is_none() {
            return;
        }
        let mut problems = Vec::new();
        let mut unprovable = Vec::new();
        if let Some(not) = &schema.not {
            if self.accepts(not, value, 0, in_list) {
                problems.push(Problem::Not { found: found(value) });
            }
        }
        let Some(ev) = self.ev.as_deref_mut() else { return };
        if let (Some(pattern), Value::String(s)) = (&schema.pattern, value) {
            match ev.pattern(pattern, s) {
                Ok(true) => {}
                Ok(false) => {
                    problems.push(Problem::Pattern { pattern: pattern.clone(), found: found(value) })
                }
                Err(e) => unprovable.push(format!("pattern {pattern:?} is not an RE2 expression: {e}")),
            }
        }
        if let (Some(format), Value::String(s)) = (&schema.format, value) {
            match ev.format(format, s) {
                Some(true) => {}
                Some(false) => problems.push(Problem::Format { format: format.clone(), found: found(value) }),
                // The formats the apiserver does not validate either say nothing of a string.
                None if NOT_VALIDATED_FORMATS.contains(&format.as_str()) => {}
                None => unprovable.push(format!("format {format:?} is not one covenant checks")),
            }
        }
        // An embedded resource carries what identifies it, as the apiserver requires.
        if let (true, Value::Object(map)) = (schema.embedded_resource, value) {
            for key in ["apiVersion", "kind"] {
                if map.get(key).is_none_or(|v| v.as_str().is_none_or(str::is_empty)) {
                    problems.push(Problem::Missing { key: key.to_string() });
                }
            }
        }
        if let (true, Value::Array(items)) = (schema.unique_items, value) {
            let mut seen = std::collections::HashSet::new();
            if let Some(twice) = items.iter().find(|i| !seen.insert(i.to_string())) {
                problems.push(Problem::Duplicate { found: found(twice) });
            }
        }
        if let (Some(list_type), Value::Array(items)) = (schema.list_type.as_deref(), value) {
            if let Some(detail) = list_type_violation(list_type, &schema.list_map_keys, items) {
                problems.push(Problem::ListType { detail });
            }
        }
        for rule in &schema.validations {
            match ev.rule(rule, value) {
                Verdict::Pass => {}
                Verdict::Fail(message) => problems.push(Problem::Rule { message }),
                Verdict::Unprovable(why) => unprovable.push(why),
            }
        }
        for why in unprovable {
            if !ev.unprovable.contains(&why) {
                ev.unprovable.push(why);
            }
        }
        for p in problems {
            self.push(in_list, p);
        }
    }
}

/// The formats the apiserver accepts and does not validate (the OpenAPI number formats and
/// `password`): a value under them is not left unchecked by covenant.
const NOT_VALIDATED_FORMATS: [&str; 5] = ["int32", "int64", "float", "double", "password"];

/// A `set` list with a duplicate, or a `map` list with two items of one key.
fn list_type_violation(list_type: &str, keys: &[String], items: &[Value]) -> Option<String> {
    let key_of = |item: &Value| -> Value {
        match list_type {
            "map" => Value::Array(keys.iter().map(|k| item.get(k).cloned().unwrap_or(Value::Null)).collect()),
            _ => item.clone(),
        }
    };
    if !matches!(list_type, "set" | "map") {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    for item in items {
        let key = key_of(item).to_string();
        if !seen.insert(key.clone()) {
            return Some(match list_type {
                "map" => format!(
                    "expected items unique by {} (x-kubernetes-list-type: map), found {key} twice",
                    keys.join(", ")
                ),
                _ => format!("expected unique items (x-kubernetes-list-type: set), found {key} twice"),
            });
        }
    }
    None
}

fn bound(b: &super::Bounds, value: &Value) -> Option<Problem> {
    let fail = |expected: String| Some(Problem::Bound { expected, found: found(value) });
    let count = |n: usize, min: Option<u64>, max: Option<u64>, what: &str| {
        if let Some(m) = min.filter(|m| (n as u64) < *m) {
            return fail(format!("at least {m} {what}"));
        }
        if let Some(m) = max.filter(|m| (n as u64) > *m) {
            return fail(format!("at most {m} {what}"));
        }
        None
    };
    match value {
        Value::Number(n) => {
            let x = n.as_f64()?;
            if let Some(m) = b.minimum {
                if x < m || (b.exclusive_minimum && x == m) {
                    let op = if b.exclusive_minimum { "greater than" } else { "at least" };
                    return fail(format!("a number {op} {m}"));
                }
            }
            if let Some(m) = b.maximum {
                if x > m || (b.exclusive_maximum && x == m) {
                    let op = if b.exclusive_maximum { "less than" } else { "at most" };
                    return fail(format!("a number {op} {m}"));
                }
            }
            if let Some(m) = b.multiple_of.filter(|m| *m > 0.0) {
                if ((x / m) - (x / m).round()).abs() > 1e-9 {
                    return fail(format!("a multiple of {m}"));
                }
            }
            None
        }
        Value::String(s) => count(s.chars().count(), b.min_length, b.max_length, "characters"),
        Value::Array(a) => count(a.len(), b.min_items, b.max_items, "items"),
        Value::Object(o) => count(o.len(), b.min_properties, b.max_properties, "properties"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env() -> Schema {
        Schema::array(
            Schema::object([
                ("name", Schema::of(Type::String)),
                ("value", Schema::of(Type::String)),
                (
                    "valueFrom",
                    Schema::object([(
                        "secretKeyRef",
                        Schema::object([
                            ("name", Schema::of(Type::String)),
                            ("key", Schema::of(Type::String)),
                        ])
                        .requiring(&["name", "key"]),
                    )]),
                ),
            ])
            .requiring(&["name"]),
        )
    }

    fn webservice() -> Schema {
        Schema::object([
            ("image", Schema::of(Type::String)),
            ("port", Schema::of(Type::Integer)),
            ("replicas", Schema::of(Type::Integer)),
            ("env", env()),
            ("resources", Schema::object([("limits", Schema::of(Type::Object).open())])),
            (
                "quantity",
                Schema { types: smallvec::smallvec![Type::String, Type::Integer], ..Schema::default() },
            ),
            ("protocol", Schema::of(Type::String).one_of([json!("TCP"), json!("UDP")])),
            ("cpuUtilization", Schema::of(Type::Integer).one_of([json!(80), json!(90)])),
            ("anything", Schema::any()),
        ])
        .requiring(&["image"])
    }

    fn run(value: Value) -> Outcome {
        validate(&webservice(), &value, &Location::new("/properties", "properties"), Required::NestedOnly)
    }

    #[test]
    fn a_valid_value_has_no_violation() {
        let o = run(json!({"image": "x", "port": 80, "env": [{"name": "A", "value": "1"}],
                           "resources": {"limits": {"cpu": "1", "whatever": {"deep": 1}}}}));
        assert!(o.violations.is_empty(), "{:?}", o.violations);
    }

    #[test]
    fn a_placeholder_is_a_dollar_brace_closed_later() {
        for s in ["${x}", "a-${b}-c", "$${a}", "$x${y}", "${}", "€${ü}"] {
            assert!(is_placeholder(s), "{s}");
        }
        for s in ["", "$", "${", "$}{", "}${", "$ {x}", "{x}", "€$"] {
            assert!(!is_placeholder(s), "{s}");
        }
    }

    #[test]
    fn an_undeclared_key_names_the_allowed_keys_and_the_nearest() {
        let o = run(json!({"image": "x", "replicaz": 2}));
        assert_eq!(o.violations.len(), 1);
        let v = &o.violations[0];
        assert_eq!(v.at.pointer, "/properties/replicaz");
        assert_eq!(v.at.path, "properties.replicaz");
        assert!(v.message().contains("did you mean \"replicas\"?"), "{}", v.message());
        assert!(v.message().contains("allowed: anything, cpuUtilization, env,"), "{}", v.message());
    }

    #[test]
    fn every_problem_is_collected_with_its_location() {
        let o =
            run(json!({"image": 3, "port": "80", "env": [{"value": "1", "nmae": "A"}], "protocol": "SCTP"}));
        let got: Vec<(&str, String)> =
            o.violations.iter().map(|v| (v.at.pointer.as_str(), v.message())).collect();
        assert_eq!(
            got,
            [
                (
                    "/properties/env/0/nmae",
                    "key \"nmae\" is not declared (allowed: name, value, valueFrom); did you mean \"name\"?"
                        .to_string()
                ),
                ("/properties/env/0", "required key \"name\" is missing".to_string()),
                ("/properties/image", "expected string, found a number 3".to_string()),
                ("/properties/port", "expected integer, found a string \"80\"".to_string()),
                (
                    "/properties/protocol",
                    "expected one of [\"TCP\", \"UDP\"], found a string \"SCTP\"".to_string()
                ),
            ]
        );
        assert_eq!(o.violations[0].at.path, "properties.env[0].nmae");
    }

    #[test]
    fn top_level_required_is_not_enforced_but_nested_required_is() {
        let o = run(json!({"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}}]}));
        let missing: Vec<_> = o.violations.iter().map(|v| (v.at.pointer.as_str(), v.message())).collect();
        assert_eq!(
            missing,
            [("/properties/env/0/valueFrom/secretKeyRef", "required key \"key\" is missing".into())]
        );
        let everywhere = validate(&webservice(), &json!({}), &Location::default(), Required::Everywhere);
        assert_eq!(everywhere.violations[0].problem, Problem::Missing { key: "image".into() });
    }

    #[test]
    fn integers_accept_integral_values_in_range_and_normalise_them() {
        let o = run(json!({"image": "x", "replicas": 3.0}));
        assert!(o.violations.is_empty());
        let normalized = o.normalized.unwrap();
        assert_eq!(normalized["replicas"], json!(3));
        assert!(normalized["replicas"].is_i64());
        // A value that reads as written is not copied.
        assert_eq!(run(json!({"image": "x", "replicas": 3})).normalized, None);
        let o = run(json!({"image": "x", "replicas": 3.5}));
        assert!(matches!(o.violations[0].problem, Problem::Type { .. }));
        for huge in [json!(18446744073709551615u64), json!(1e30)] {
            let o = run(json!({"image": "x", "replicas": huge}));
            assert!(matches!(o.violations[0].problem, Problem::OutOfRange { .. }), "{:?}", o.violations);
        }
    }

    #[test]
    fn a_union_accepts_any_member_and_normalises_by_the_first_that_accepts() {
        for ok in [json!("500m"), json!(2), json!(2.0)] {
            let o = run(json!({"image": "x", "quantity": ok}));
            assert!(o.violations.is_empty(), "{:?}", o.violations);
        }
        assert_eq!(run(json!({"image": "x", "quantity": 2.0})).normalized.unwrap()["quantity"], json!(2));
        let o = run(json!({"image": "x", "quantity": true}));
        assert_eq!(o.violations[0].message(), "expected string or integer, found a boolean true");
    }

    #[test]
    fn enum_members_compare_numbers_numerically() {
        assert!(run(json!({"image": "x", "cpuUtilization": 80.0})).violations.is_empty());
        assert_eq!(run(json!({"image": "x", "cpuUtilization": 85})).violations.len(), 1);
    }

    #[test]
    fn compound_enum_members_compare_element_by_element() {
        let members = vec![json!([1, 2]), json!({"a": [3], "b": "x"})];
        let schema = Schema { enumeration: Some(members), ..Schema::default() };
        let at = Location::default();
        for accepted in [json!([1.0, 2]), json!([1, 2.0]), json!({"b": "x", "a": [3.0]})] {
            let out = validate(&schema, &accepted, &at, Required::Everywhere);
            assert!(out.violations.is_empty(), "{accepted}: {:?}", out.violations);
        }
        for refused in [
            json!([1.5, 2]),
            json!([1, 2, 3]),
            json!([2, 1]),
            json!({"a": [3], "b": "x", "c": 1}),
            json!({"a": [3]}),
        ] {
            let out = validate(&schema, &refused, &at, Required::Everywhere);
            assert_eq!(out.violations.len(), 1, "{refused}");
        }
    }

    /// A tiny deterministic generator, so the property test needs no extra crate and
    /// reproduces exactly.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn gen_schema(rng: &mut Rng, depth: u32) -> Schema {
        match if depth == 0 { rng.next(4) } else { rng.next(7) } {
            0 => Schema::of(Type::String),
            1 => Schema::of(Type::Integer),
            2 => Schema::of(Type::Boolean),
            3 => Schema { types: smallvec::smallvec![Type::Integer, Type::String], ..Schema::default() },
            4 => Schema::array(gen_schema(rng, depth - 1)),
            5 => Schema::of(Type::Object).open(),
            _ => {
                let mut o = Schema::of(Type::Object);
                for i in 0..=rng.next(4) {
                    o.properties.insert(format!("p{i}"), std::sync::Arc::new(gen_schema(rng, depth - 1)));
                }
                o.required = o.properties.keys().filter(|_| rng.next(2) == 0).cloned().collect();
                o
            }
        }
    }

    fn gen_value(schema: &Schema, rng: &mut Rng) -> Value {
        match schema.types.first() {
            Some(Type::String) => json!(format!("s{}", rng.next(100))),
            Some(Type::Integer) => json!(rng.next(1000)),
            Some(Type::Boolean) => json!(rng.next(2) == 1),
            Some(Type::Array) => {
                let items = schema.items.as_deref().cloned().unwrap_or_else(Schema::any);
                Value::Array((0..rng.next(3)).map(|_| gen_value(&items, rng)).collect())
            }
            Some(Type::Object) if schema.additional == Additional::Open => json!({"free": {"x": 1}}),
            Some(Type::Object) => {
                let mut m = serde_json::Map::new();
                for (k, s) in &schema.properties {
                    if schema.required.contains(k) || rng.next(2) == 0 {
                        m.insert(k.clone(), gen_value(s, rng));
                    }
                }
                Value::Object(m)
            }
            _ => json!("untyped"),
        }
    }

    /// Pointers of every closed object in a value, per its schema.
    fn closed_objects(schema: &Schema, value: &Value, at: &Location, out: &mut Vec<String>) {
        match value {
            Value::Object(map)
                if schema.additional == Additional::Closed && schema.types.contains(&Type::Object) =>
            {
                out.push(at.pointer.clone());
                for (k, v) in map {
                    closed_objects(&schema.properties[k], v, &at.key(k), out);
                }
            }
            Value::Array(items) => {
                if let Some(s) = &schema.items {
                    for (i, v) in items.iter().enumerate() {
                        closed_objects(s, v, &at.index(i), out);
                    }
                }
            }
            _ => {}
        }
    }

    #[test]
    fn property_generated_values_validate_clean_and_one_stray_key_gives_one_violation_there() {
        let mut rng = Rng(0x853c_49e6_748f_ea9b);
        let mut injected = 0;
        for _ in 0..300 {
            let mut schema = gen_schema(&mut rng, 4);
            if schema.types[..] != [Type::Object] || schema.additional != Additional::Closed {
                schema = Schema::object([("root", schema)]);
            }
            let value = gen_value(&schema, &mut rng);
            let clean = validate(&schema, &value, &Location::default(), Required::Everywhere);
            assert!(clean.violations.is_empty(), "{schema:?}\n{value}\n{:?}", clean.violations);
            let mut targets = Vec::new();
            closed_objects(&schema, &value, &Location::default(), &mut targets);
            for target in targets {
                let mut mangled = value.clone();
                let obj = mangled.pointer_mut(&target).and_then(Value::as_object_mut).unwrap();
                obj.insert("zz_stray".into(), json!(1));
                let o = validate(&schema, &mangled, &Location::default(), Required::Everywhere);
                assert_eq!(o.violations.len(), 1, "{target}: {:?}", o.violations);
                assert_eq!(o.violations[0].at.pointer, format!("{target}/zz_stray"));
                assert!(matches!(o.violations[0].problem, Problem::Undeclared { .. }));
                injected += 1;
            }
        }
        assert!(injected > 300, "the generator reached too few closed objects: {injected}");
    }

    #[test]
    fn null_means_absent_and_open_objects_stop_strictness() {
        let o = run(json!({"image": "x", "port": null, "anything": {"a": [1, {"b": 2}]}}));
        assert!(o.violations.is_empty(), "{:?}", o.violations);
        let closed_empty = Schema::of(Type::Object);
        let o = validate(&closed_empty, &json!({"k": 1}), &Location::default(), Required::NestedOnly);
        assert_eq!(o.violations[0].message(), "key \"k\" is not declared (allowed: (none))");
    }
}
