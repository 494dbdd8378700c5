//! Structural defaulting, as the API server applies it to a custom resource before it
//! validates it: every absent property (or a `null` one the schema does not call nullable)
//! whose schema states a `default` takes it, at every level, inside defaulted values too, in
//! objects, maps and list items. Validating the value as written instead would refuse what the
//! API server admits (a CEL rule reading `self.kind` that only the default supplies).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Additional, Schema};

/// How deep defaulting walks; past it a value is left as written (the validator's own depth
/// bound reports such a value).
const DEPTH: usize = 128;

/// `value` with the defaults `schema` states applied; `None` when none applies (the value
/// stays as written, uncopied).
pub fn defaulted(schema: &Schema, value: &Value) -> Option<Value> {
    walk(schema, value, 0)
}

fn walk(schema: &Schema, value: &Value, depth: usize) -> Option<Value> {
    if depth > DEPTH {
        return None;
    }
    match value {
        Value::Object(map) => {
            let mut changed: Option<Map<String, Value>> = None;
            for (key, property) in &schema.properties {
                let Some(default) = &property.default else { continue };
                let absent = match map.get(key) {
                    None => true,
                    Some(Value::Null) => !property.nullable,
                    Some(_) => false,
                };
                if absent {
                    changed.get_or_insert_with(|| map.clone()).insert(key.clone(), default.clone());
                }
            }
            // Each member (a defaulted one too) walked with its schema; what changes inside one
            // is written back after the walk.
            let current = changed.as_ref().unwrap_or(map);
            let mut inside: Vec<(String, Value)> = Vec::new();
            for (key, v) in current {
                let child: Option<&Arc<Schema>> = schema.properties.get(key).or(match &schema.additional {
                    Additional::Schema(s) => Some(s),
                    _ => None,
                });
                if let Some(new) = child.and_then(|child| walk(child, v, depth + 1)) {
                    inside.push((key.clone(), new));
                }
            }
            if !inside.is_empty() {
                changed.get_or_insert_with(|| map.clone()).extend(inside);
            }
            changed.map(Value::Object)
        }
        Value::Array(list) => {
            let items = schema.items.as_ref()?;
            let mut changed: Option<Vec<Value>> = None;
            for (i, item) in list.iter().enumerate() {
                if let Some(new) = walk(items, item, depth + 1) {
                    changed.get_or_insert_with(|| list.clone())[i] = new;
                }
            }
            changed.map(Value::Array)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Type;
    use serde_json::json;

    fn with_default(mut s: Schema, d: Value) -> Schema {
        s.default = Some(d);
        s
    }

    #[test]
    fn absent_and_non_nullable_null_properties_take_their_defaults_at_every_level() {
        let reference = Schema::object([
            ("name", Schema::of(Type::String)),
            ("kind", with_default(Schema::of(Type::String), json!("Service"))),
            ("group", with_default(Schema::of(Type::String), json!(""))),
        ]);
        let spec = Schema::object([("refs", Schema::array(reference))]);
        let root = Schema::object([("spec", spec)]);
        let value =
            json!({"spec": {"refs": [{"name": "a"}, {"name": "b", "kind": "Gateway", "group": null}]}});
        let out = defaulted(&root, &value).expect("defaults apply");
        assert_eq!(
            out,
            json!({"spec": {"refs": [
                {"name": "a", "kind": "Service", "group": ""},
                {"name": "b", "kind": "Gateway", "group": ""}
            ]}})
        );
        // Nothing to default: no copy.
        assert!(defaulted(&root, &out).is_none());
    }

    #[test]
    fn a_defaulted_object_is_defaulted_inside_too() {
        let inner = Schema::object([("port", with_default(Schema::of(Type::Integer), json!(80)))]);
        let root = Schema::object([("backend", with_default(inner, json!({})))]);
        assert_eq!(defaulted(&root, &json!({})), Some(json!({"backend": {"port": 80}})));
    }
}
