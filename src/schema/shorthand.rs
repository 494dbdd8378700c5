//! The loader for OpenChoreo's compact schema syntax ("ocSchema"): a mapping of field names
//! to leaves such as `"integer | default=1 minimum=0"`, nested mappings for structures, and
//! reusable types under `$types`. It is read by translating it into the JSON Schema it stands
//! for and loading that with the JSON Schema loader, so both spellings end in one model and
//! diff, validate and render alike. Problems are named where the shorthand says them.
//!
//! The syntax, as this loader reads it:
//! - a leaf is `TYPE` or `TYPE | marker=value …`; types are `string`, `integer`, `number`,
//!   `boolean`, `[]T` or `array<T>`, `map<T>` or `map[string]T`, and a name declared under
//!   `$types` (a mapping, or a leaf that other leaves refine);
//! - a nested mapping is an object; `$default` in it is the object's default;
//! - a field is required unless it has a `default=`, `required=false`, or is of a declared
//!   type whose definition carries a `$default`;
//! - marker values may be quoted: `'…'` with `''` for a quote, or `"…"` with backslash
//!   escapes; `enum=` takes a comma-separated list whose items may be quoted one by one;
//! - `oc:…` markers are annotations for tools, kept as `x-oc:…` extensions.
//!
//! Objects are closed, as everywhere in covenant: a key the shorthand does not declare is
//! refused, the same as under the equivalent `openAPIV3Schema`.

use serde_json::{json, Map, Value};

use super::openapi::{load, Dialect};
use super::{LoadProblem, Schema};
use crate::pointer::{escape, Location};
use crate::strict::describe;

/// The markers a leaf may carry (besides `oc:…` annotations).
const MARKERS: &[&str] = &[
    "required",
    "default",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "nullable",
    "pattern",
    "format",
    "title",
    "description",
    "example",
];

/// The key that declares reusable types.
const TYPES: &str = "$types";
/// The key that gives an object its default.
const DEFAULT: &str = "$default";

/// Load a shorthand schema: its fields, found at `at`, and its reusable types when it has
/// any (`$types` among the fields, or a `types` mapping beside them in the older layout).
/// Every problem is returned, each at the shorthand's own path.
pub fn load_shorthand(
    fields: &Value,
    types: Option<(&Value, Location)>,
    at: &Location,
) -> Result<Schema, Vec<LoadProblem>> {
    let mut t = Translator { types: Map::new(), problems: Vec::new(), places: Vec::new() };
    let Value::Object(root) = fields else {
        return Err(vec![LoadProblem {
            at: at.clone(),
            message: format!("expected a mapping of field names to types, found {}", describe(fields)),
        }]);
    };
    let mut types_at = at.key(TYPES);
    if let Some((types, here)) = types {
        match types {
            Value::Object(types) => t.types = types.clone(),
            other => t.problem(
                here.clone(),
                format!("expected a mapping of type names to definitions, found {}", describe(other)),
            ),
        }
        types_at = here;
    }
    let mut defs = Map::new();
    for (name, def) in &t.types.clone() {
        let here = types_at.key(name);
        let pointer = format!("/$defs/{}", escape(name));
        let schema = match def {
            Value::Object(fields) => t.object(fields, &pointer, &here),
            Value::String(leaf) => t.leaf(leaf, &pointer, &here).0,
            other => {
                t.problem(here, format!("expected a mapping of fields or a type, found {}", describe(other)));
                continue;
            }
        };
        defs.insert(name.clone(), schema);
    }
    let fields: Map<String, Value> =
        root.iter().filter(|(k, _)| *k != TYPES).map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut schema = t.object(&fields, "", at);
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    if !t.problems.is_empty() {
        return Err(t.problems);
    }
    load(&schema, &Location::default(), Dialect::JsonSchema).map_err(|problems| {
        problems
            .into_iter()
            .map(|p| LoadProblem { at: t.place(&p.at.pointer, at), message: p.message })
            .collect()
    })
}

/// Where a field of the data (`/resources/limits/cpu`) is declared in a shorthand schema's
/// fields: as deep as nested mappings go (a field of a declared type stops at the field
/// that names the type).
pub fn field_pointer(fields: &Value, data_pointer: &str) -> String {
    let mut out = String::new();
    let mut node = fields;
    for token in data_pointer.split('/').skip(1) {
        match node.get(crate::pointer::unescape(token)) {
            Some(next) if token != TYPES && token != DEFAULT => {
                out.push('/');
                out.push_str(token);
                node = next;
            }
            _ => break,
        }
    }
    out
}

/// What a leaf's values are read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    String,
    Integer,
    Number,
    Boolean,
    /// Arrays, maps and objects: values are written as JSON or YAML flow.
    Structured,
}

struct Translator {
    types: Map<String, Value>,
    problems: Vec<LoadProblem>,
    /// Which shorthand location each translated node came from, by its pointer in the
    /// translation, to name a problem the JSON Schema loader finds where the user wrote it.
    places: Vec<(String, Location)>,
}

impl Translator {
    fn problem(&mut self, at: Location, message: String) {
        self.problems.push(LoadProblem { at, message });
    }

    /// The shorthand location of the translated node at `pointer` (or its nearest ancestor).
    fn place(&self, pointer: &str, base: &Location) -> Location {
        self.places
            .iter()
            .filter(|(p, _)| {
                pointer == p || pointer.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/'))
            })
            .max_by_key(|(p, _)| p.len())
            .map_or_else(|| base.clone(), |(_, l)| l.clone())
    }

    /// A nested mapping: an object with its fields, closed, its required fields listed.
    fn object(&mut self, fields: &Map<String, Value>, pointer: &str, at: &Location) -> Value {
        self.places.push((pointer.to_string(), at.clone()));
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut out = Map::new();
        out.insert("type".into(), json!("object"));
        for (name, field) in fields {
            let here = at.key(name);
            if name == DEFAULT {
                out.insert("default".into(), field.clone());
                continue;
            }
            let child = format!("{pointer}/properties/{}", escape(name));
            let (schema, optional) = match field {
                Value::String(leaf) => self.leaf(leaf, &child, &here),
                Value::Object(nested) => {
                    let optional = nested.contains_key(DEFAULT);
                    (self.object(nested, &child, &here), optional)
                }
                other => {
                    self.problem(
                        here,
                        format!(
                            "expected a type (\"integer | default=1\") or a mapping of fields, found {}",
                            describe(other)
                        ),
                    );
                    continue;
                }
            };
            if !optional {
                required.push(Value::String(name.clone()));
            }
            properties.insert(name.clone(), schema);
        }
        out.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        Value::Object(out)
    }

    /// A leaf: its schema, and whether the field it declares is optional.
    fn leaf(&mut self, leaf: &str, pointer: &str, at: &Location) -> (Value, bool) {
        self.places.push((pointer.to_string(), at.clone()));
        let (type_text, markers) = match leaf.split_once('|') {
            Some((t, m)) => (t.trim(), Some(m)),
            None => (leaf.trim(), None),
        };
        let Some(mut schema) = self.type_expression(type_text, at) else { return (json!({}), true) };
        let base = self.base(type_text, 0);
        let mut optional = self.type_default(type_text);
        let Some(markers) = markers else { return (schema, optional) };
        let markers = match tokenize(markers) {
            Ok(m) => m,
            Err(message) => {
                self.problem(at.clone(), format!("{leaf:?}: {message}"));
                return (schema, optional);
            }
        };
        let Some(object) = schema.as_object_mut() else { return (schema, optional) };
        for marker in markers {
            let key = marker.key.as_str();
            let value = match key {
                "required" => match boolean(&marker.whole) {
                    Ok(b) => {
                        optional = b != Value::Bool(true);
                        continue;
                    }
                    Err(e) => Err(e),
                },
                "default" => {
                    optional = true;
                    typed(&marker.whole, base)
                }
                "example" => typed(&marker.whole, base),
                "enum" => marker
                    .items
                    .iter()
                    .map(|i| typed(i, base))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array),
                "minimum" | "maximum" | "multipleOf" => number(&marker.whole),
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    boolean(&marker.whole).or_else(|_| number(&marker.whole))
                }
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
                    count(&marker.whole)
                }
                "uniqueItems" | "nullable" => boolean(&marker.whole),
                "pattern" | "format" | "title" | "description" => {
                    Ok(Value::String(marker.whole.text.clone()))
                }
                _ if key.starts_with("oc:") => {
                    object.insert(format!("x-{key}"), Value::String(marker.whole.text.clone()));
                    continue;
                }
                _ => {
                    let known = MARKERS.join(", ");
                    self.problem(
                        at.clone(),
                        format!(
                            "{leaf:?}: unknown marker {key:?}; a marker is one of {known}, or oc:… for tools"
                        ),
                    );
                    continue;
                }
            };
            match value {
                Ok(v) => {
                    object.insert(key.to_string(), v);
                }
                Err(expected) => self
                    .problem(at.clone(), format!("{leaf:?}: {key}={} is not {expected}", marker.whole.text)),
            }
        }
        (schema, optional)
    }

    /// The JSON Schema a type expression stands for; a problem and none when it names no type.
    fn type_expression(&mut self, text: &str, at: &Location) -> Option<Value> {
        if let Some(inner) = array_of(text) {
            return Some(json!({"type": "array", "items": self.type_expression(inner, at)?}));
        }
        if let Some(inner) = map_of(text) {
            return Some(json!({"type": "object", "additionalProperties": self.type_expression(inner, at)?}));
        }
        match text {
            "string" | "integer" | "number" | "boolean" => Some(json!({ "type": text })),
            "" => {
                self.problem(at.clone(), "no type: a leaf starts with its type (string, integer, …)".into());
                None
            }
            "object" => {
                self.problem(
                    at.clone(),
                    "\"object\" alone is not a type: declare the fields as a nested mapping, or use map<T>"
                        .into(),
                );
                None
            }
            name if self.types.contains_key(name) => {
                Some(json!({ "$ref": format!("#/$defs/{}", escape(name)) }))
            }
            name => {
                let declared: Vec<&str> = self.types.keys().map(String::as_str).collect();
                let declared = if declared.is_empty() {
                    format!("none is declared under {TYPES}")
                } else {
                    format!("declared under {TYPES}: {}", declared.join(", "))
                };
                self.problem(
                    at.clone(),
                    format!(
                        "unknown type {name:?}: a type is string, integer, number, boolean, []T, map<T>, or a declared type ({declared})"
                    ),
                );
                None
            }
        }
    }

    /// What values of a type expression are read as.
    fn base(&self, text: &str, depth: usize) -> Base {
        match text {
            "string" => Base::String,
            "integer" => Base::Integer,
            "number" => Base::Number,
            "boolean" => Base::Boolean,
            name => match self.types.get(name) {
                // A leaf type refines a base type; follow it, not forever.
                Some(Value::String(leaf)) if depth < 16 => {
                    self.base(leaf.split('|').next().unwrap_or_default().trim(), depth + 1)
                }
                _ => Base::Structured,
            },
        }
    }

    /// Whether a declared type makes every field of it optional (`$default` in its definition).
    fn type_default(&self, text: &str) -> bool {
        matches!(self.types.get(text), Some(Value::Object(fields)) if fields.contains_key(DEFAULT))
    }
}

/// `[]T` or `array<T>`: `T`.
fn array_of(text: &str) -> Option<&str> {
    text.strip_prefix("[]")
        .or_else(|| text.strip_prefix("array<").and_then(|r| r.strip_suffix('>')))
        .map(str::trim)
}

/// `map<T>` or `map[string]T`: `T`.
fn map_of(text: &str) -> Option<&str> {
    text.strip_prefix("map<")
        .and_then(|r| r.strip_suffix('>'))
        .or_else(|| text.strip_prefix("map[string]"))
        .map(str::trim)
}

/// One piece of a marker's value: its text with quotes removed, and whether it was quoted.
#[derive(Clone, Debug, Default, PartialEq)]
struct Text {
    text: String,
    quoted: bool,
}

/// One marker: `key=value`, the value whole and split at commas outside quotes.
#[derive(Debug)]
struct Marker {
    key: String,
    whole: Text,
    items: Vec<Text>,
}

/// Split the part after `|` into markers.
fn tokenize(s: &str) -> Result<Vec<Marker>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        if chars.next_if_eq(&'=').is_none() {
            return Err(format!("marker {key:?} has no value (write {key}=value)"));
        }
        let mut whole = Text::default();
        let mut items = Vec::new();
        let mut item = Text::default();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\'' => {
                    whole.quoted = true;
                    item.quoted = true;
                    loop {
                        match chars.next() {
                            Some('\'') if chars.next_if_eq(&'\'').is_some() => {
                                push(&mut whole, &mut item, '\'')
                            }
                            Some('\'') => break,
                            Some(c) => push(&mut whole, &mut item, c),
                            None => return Err(format!("{key}=: a quote ' is not closed")),
                        }
                    }
                }
                '"' => {
                    whole.quoted = true;
                    item.quoted = true;
                    loop {
                        match chars.next() {
                            Some('\\') => match chars.next() {
                                Some(c) => push(&mut whole, &mut item, c),
                                None => return Err(format!("{key}=: a quote \" is not closed")),
                            },
                            Some('"') => break,
                            Some(c) => push(&mut whole, &mut item, c),
                            None => return Err(format!("{key}=: a quote \" is not closed")),
                        }
                    }
                }
                ',' => {
                    whole.text.push(',');
                    items.push(std::mem::take(&mut item));
                }
                c => push(&mut whole, &mut item, c),
            }
        }
        items.push(item);
        out.push(Marker { key, whole, items });
    }
}

fn push(whole: &mut Text, item: &mut Text, c: char) {
    whole.text.push(c);
    item.text.push(c);
}

/// A value read by the type it is a value of: a quoted value is a string unless the type is
/// structured (then its contents are JSON or YAML flow), an unquoted one is read as the type.
fn typed(t: &Text, base: Base) -> Result<Value, &'static str> {
    match base {
        Base::String => Ok(Value::String(t.text.clone())),
        _ if t.quoted && base != Base::Structured => Ok(Value::String(t.text.clone())),
        Base::Integer => t.text.parse::<i64>().map(Value::from).map_err(|_| "an integer"),
        Base::Number => number(t),
        Base::Boolean => boolean(t),
        Base::Structured => match crate::source::parse_stream(&t.text) {
            (docs, None) if docs.len() == 1 && (docs[0].value.is_array() || docs[0].value.is_object()) => {
                Ok(docs.into_iter().next().map(|d| d.value).unwrap_or_default())
            }
            _ => Err("a list or mapping written as JSON or YAML flow ({} or [])"),
        },
    }
}

fn number(t: &Text) -> Result<Value, &'static str> {
    t.text
        .parse::<i64>()
        .map(Value::from)
        .ok()
        .or_else(|| {
            t.text.parse::<f64>().ok().and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
        })
        .ok_or("a number")
}

fn count(t: &Text) -> Result<Value, &'static str> {
    t.text.parse::<u64>().map(Value::from).map_err(|_| "a whole number ≥ 0")
}

fn boolean(t: &Text) -> Result<Value, &'static str> {
    match t.text.as_str() {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => Err("true or false"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Additional, Type};

    fn read(yaml: &str) -> Result<Schema, Vec<LoadProblem>> {
        let raw = crate::source::parse_stream(yaml).0.remove(0).value;
        let at = Location::new("/spec/parameters/ocSchema", "spec.parameters.ocSchema");
        load_shorthand(&raw, raw.get(TYPES).map(|t| (t, at.key(TYPES))), &at)
    }

    fn messages(yaml: &str) -> Vec<String> {
        read(yaml).unwrap_err().into_iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn leaves_read_into_the_model_with_required_by_default() {
        let s = read(
            r#"
name: string
replicas: "integer | default=1 minimum=0 maximum=10"
tags: "[]string | minItems=1 uniqueItems=true"
labels: "map<string> | default={}"
level: "string | enum=debug,info,'warn, loud' default=info"
ratio: "number | required=false exclusiveMinimum=true minimum=0.5"
"#,
        )
        .unwrap();
        assert_eq!(s.types[..], [Type::Object]);
        assert_eq!(s.additional, Additional::Closed);
        assert_eq!(s.required, vec!["name".to_string(), "tags".to_string()]);
        let replicas = &s.properties["replicas"];
        assert_eq!(replicas.types[..], [Type::Integer]);
        assert_eq!(replicas.default, Some(json!(1)));
        assert_eq!(replicas.bounds.minimum, Some(0.0));
        assert_eq!(replicas.bounds.maximum, Some(10.0));
        assert_eq!(s.properties["tags"].items.as_ref().unwrap().types[..], [Type::String]);
        assert_eq!(s.properties["tags"].bounds.min_items, Some(1));
        assert!(
            matches!(&s.properties["labels"].additional, Additional::Schema(v) if v.types[..] == [Type::String])
        );
        assert_eq!(s.properties["labels"].default, Some(json!({})));
        assert_eq!(
            s.properties["level"].enumeration,
            Some(vec![json!("debug"), json!("info"), json!("warn, loud")])
        );
        assert!(s.properties["ratio"].bounds.exclusive_minimum);
    }

    #[test]
    fn types_nested_mappings_and_object_defaults() {
        let s = read(
            r#"
$types:
  Quantity:
    cpu: "string | default=100m"
    memory: "string | default=256Mi"
  Probe:
    $default: {}
    path: "string | default=/healthz"
  Port: "integer | minimum=1 maximum=65535"
resources:
  requests: "Quantity | default={}"
  limits: Quantity
probe: Probe
ports: "[]Port | default=[8080]"
database:
  $default: {host: localhost}
  host: string
"#,
        )
        .unwrap();
        // `limits` has no default, `probe`'s type has one, `database` has its own.
        assert_eq!(s.required, vec!["resources".to_string()]);
        let resources = &s.properties["resources"];
        assert_eq!(resources.required, vec!["limits".to_string()]);
        let requests = &resources.properties["requests"];
        assert_eq!(requests.default, Some(json!({})));
        assert_eq!(requests.properties["cpu"].default, Some(json!("100m")));
        assert_eq!(s.properties["ports"].default, Some(json!([8080])));
        assert_eq!(s.properties["ports"].items.as_ref().unwrap().bounds.maximum, Some(65535.0));
        assert_eq!(s.properties["database"].default, Some(json!({"host": "localhost"})));
    }

    #[test]
    fn quoting_follows_the_syntax() {
        let s = read(
            r#"
a: "string | default='User''s zone'"
b: 'string | pattern="a|b|c" description="say \"hi\""'
c: "string | title='API Key' oc:ui:hidden=true"
"#,
        )
        .unwrap();
        assert_eq!(s.properties["a"].default, Some(json!("User's zone")));
        assert_eq!(s.properties["b"].pattern.as_deref(), Some("a|b|c"));
        assert_eq!(s.properties["b"].description.as_deref(), Some("say \"hi\""));
        assert_eq!(s.properties["c"].title.as_deref(), Some("API Key"));
        assert_eq!(s.properties["c"].extensions.get("x-oc:ui:hidden"), Some(&json!("true")));
    }

    #[test]
    fn problems_are_named_where_the_shorthand_says_them() {
        let found = messages(
            r#"
a: "strng"
b: "integer | default=one"
c: "string | mxLength=3"
d: object
e: 3
f: "string | default='open"
nested:
  g: "Missing | default={}"
"#,
        );
        let joined = found.join("\n");
        for expected in [
            "spec.parameters.ocSchema.a: unknown type \"strng\"",
            "spec.parameters.ocSchema.b: \"integer | default=one\": default=one is not an integer",
            "spec.parameters.ocSchema.c: \"string | mxLength=3\": unknown marker \"mxLength\"",
            "spec.parameters.ocSchema.d: \"object\" alone is not a type",
            "spec.parameters.ocSchema.e: expected a type",
            "spec.parameters.ocSchema.f: \"string | default='open\": default=: a quote ' is not closed",
            "spec.parameters.ocSchema.nested.g: unknown type \"Missing\"",
        ] {
            assert!(joined.contains(expected), "missing {expected:?} in\n{joined}");
        }
        assert_eq!(found.len(), 7, "{joined}");
    }

    #[test]
    fn a_problem_the_schema_loader_finds_is_named_at_the_leaf() {
        let found = messages("$types:\n  Node:\n    next: Node\nx:\n  y: Node\n");
        assert!(!found.is_empty());
        assert!(found.iter().all(|f| f.starts_with("spec.parameters.ocSchema.$types.Node")), "{found:?}");
    }
}
