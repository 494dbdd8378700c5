//! The loader for property schemas as covenant's registries write them (the launcher's
//! vocabulary: `type` or a `types` union, `enum`, `required`, `properties`, `items`, `open`,
//! `additionalProperties`, `default`, `description`). Strict like everything covenant reads:
//! an undeclared key, an unknown type, `type` beside `types`, or a malformed union is a
//! problem naming its path.

use serde_json::Value;

use super::{Additional, Schema, Type, Types};
use crate::pointer::Location;

/// The keys a property schema may carry.
pub const KEYS: [&str; 9] =
    ["type", "types", "enum", "required", "properties", "items", "open", "additionalProperties", "default"];
const DESCRIPTION: &str = "description";

pub use super::LoadProblem;

/// Load a property schema at `at`; every problem is returned.
pub fn load(value: &Value, at: &Location) -> Result<Schema, Vec<LoadProblem>> {
    let mut problems = Vec::new();
    let schema = node(value, at, &mut problems);
    if problems.is_empty() {
        Ok(schema)
    } else {
        Err(problems)
    }
}

fn node(value: &Value, at: &Location, problems: &mut Vec<LoadProblem>) -> Schema {
    let mut problem = |at: Location, message: String| problems.push(LoadProblem { at, message });
    let Some(map) = value.as_object() else {
        problem(at.clone(), format!("expected a schema mapping, found {}", super::validate::found(value)));
        return Schema::any();
    };
    let mut schema = Schema::default();
    let mut deferred: Vec<(&str, &Value)> = Vec::new();
    for (key, v) in map {
        let here = at.key(key);
        match key.as_str() {
            "type" => match v.as_str().and_then(Type::parse) {
                Some(t) => schema.types = smallvec::smallvec![t],
                None => problem(
                    here,
                    format!(
                        "unsupported type {v}; expected string, integer, number, boolean, array or object"
                    ),
                ),
            },
            "types" => {
                let members: Vec<Option<Type>> = v
                    .as_array()
                    .map(|a| a.iter().map(|t| t.as_str().and_then(Type::parse)).collect())
                    .unwrap_or_default();
                let scalar = |t: &Option<Type>| {
                    matches!(t, Some(Type::String | Type::Integer | Type::Number | Type::Boolean))
                };
                let mut distinct: Types = members.iter().flatten().copied().collect();
                distinct.dedup();
                if members.len() < 2 || !members.iter().all(scalar) || distinct.len() != members.len() {
                    problem(here, format!("a union lists at least two distinct scalar types (string, integer, number, boolean), found {v}"));
                } else {
                    schema.types = distinct;
                }
            }
            "enum" => match v.as_array() {
                Some(a) if !a.is_empty() => schema.enumeration = Some(a.clone()),
                _ => problem(
                    here,
                    format!("expected a non-empty list of values, found {}", super::validate::found(v)),
                ),
            },
            "required" => match v
                .as_array()
                .map(|a| a.iter().map(|k| k.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
            {
                Some(Some(keys)) => schema.required = keys,
                _ => problem(here, "expected a list of property names".into()),
            },
            "open" => match v.as_bool() {
                Some(true) => schema.additional = Additional::Open,
                Some(false) => {}
                None => problem(here, format!("expected a boolean, found {}", super::validate::found(v))),
            },
            "default" => schema.default = Some(v.clone()),
            DESCRIPTION => schema.description = v.as_str().map(str::to_string),
            "properties" | "items" | "additionalProperties" => deferred.push((key.as_str(), v)),
            other => {
                let hint = crate::suggest::hint(other, KEYS.iter().copied().chain([DESCRIPTION]));
                problem(
                    here,
                    format!(
                        "key \"{other}\" is not declared (allowed: {}, {DESCRIPTION}){hint}",
                        KEYS.join(", ")
                    ),
                );
            }
        }
    }
    if map.contains_key("type") && map.contains_key("types") {
        problem(at.clone(), "\"type\" and \"types\" are mutually exclusive".into());
    }
    for (key, v) in deferred {
        let here = at.key(key);
        match key {
            "properties" => match v.as_object() {
                Some(props) => {
                    for (name, s) in props {
                        let child = node(s, &here.key(name), problems);
                        schema.properties.insert(name.clone(), std::sync::Arc::new(child));
                    }
                }
                None => problems
                    .push(LoadProblem { at: here, message: "expected a mapping of property schemas".into() }),
            },
            "items" => schema.items = Some(std::sync::Arc::new(node(v, &here, problems))),
            _ => schema.additional = Additional::Schema(std::sync::Arc::new(node(v, &here, problems))),
        }
    }
    // An object with declared properties is closed unless marked open; an untyped schema
    // with no properties accepts anything.
    if schema.types.is_empty() && schema.properties.is_empty() && schema.additional == Additional::Closed {
        schema.additional = Additional::Open;
    }
    for key in &schema.required {
        if !schema.properties.contains_key(key) && schema.additional == Additional::Closed {
            problems.push(LoadProblem {
                at: at.key("required"),
                message: format!("required key \"{key}\" is not among the declared properties"),
            });
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::validate::{validate, Required};
    use serde_json::json;

    fn loc() -> Location {
        Location::new("/schema", "schema")
    }

    #[test]
    fn a_launcher_schema_loads_and_judges() {
        let s = load(
            &json!({"type": "object", "required": ["image"], "properties": {
                "image": {"type": "string"},
                "replicas": {"type": "integer", "default": 1},
                "quantity": {"types": ["string", "integer"]},
                "cpu": {},
                "delivery": {"type": "string", "enum": ["native", "template"]},
                "values": {"type": "object", "open": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "env": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}
            }}),
            &loc(),
        )
        .unwrap();
        let ok = json!({"image": "x", "quantity": 2, "cpu": [1], "delivery": "native", "values": {"a": {"b": 1}},
                        "labels": {"a": "b"}, "env": [{"name": "A"}]});
        assert!(validate(&s, &ok, &Location::default(), Required::NestedOnly).violations.is_empty());
        let bad = json!({"labels": {"a": 1}, "env": [{}], "delivery": "helm", "extra": 1});
        let got: Vec<String> = validate(&s, &bad, &Location::default(), Required::NestedOnly)
            .violations
            .iter()
            .map(|v| v.at.pointer.clone())
            .collect();
        assert_eq!(got, ["/delivery", "/env/0", "/extra", "/labels/a"]);
    }

    #[test]
    fn every_schema_problem_is_reported_with_its_path() {
        let problems = load(
            &json!({"type": "object", "propertees": {}, "properties": {
                "a": {"type": "str"},
                "b": {"type": "string", "types": ["string", "integer"]},
                "c": {"types": ["string"]},
                "d": {"types": ["string", "object"]}
            }, "required": ["zz"]}),
            &loc(),
        )
        .unwrap_err();
        let got: Vec<(&str, &str)> =
            problems.iter().map(|p| (p.at.pointer.as_str(), p.message.split(';').next().unwrap())).collect();
        assert_eq!(got.len(), 6, "{got:?}");
        assert!(problems[0].message.contains("did you mean \"properties\"?"), "{}", problems[0].message);
        assert!(got.iter().any(|(p, m)| *p == "/schema/properties/a/type" && m.contains("unsupported type")));
        assert!(got.iter().any(|(p, m)| *p == "/schema/properties/b" && m.contains("mutually exclusive")));
        assert!(got.iter().any(|(p, _)| *p == "/schema/properties/c/types"));
        assert!(got.iter().any(|(p, _)| *p == "/schema/properties/d/types"));
        assert!(got.iter().any(|(p, m)| *p == "/schema/required" && m.contains("\"zz\"")));
    }

    #[test]
    fn an_empty_object_schema_is_closed_and_an_untyped_one_is_open() {
        let closed = load(&json!({"type": "object"}), &loc()).unwrap();
        assert_eq!(
            validate(&closed, &json!({"k": 1}), &Location::default(), Required::NestedOnly).violations.len(),
            1
        );
        let untyped = load(&json!({}), &loc()).unwrap();
        assert!(validate(&untyped, &json!({"k": 1}), &Location::default(), Required::NestedOnly)
            .violations
            .is_empty());
    }
}
