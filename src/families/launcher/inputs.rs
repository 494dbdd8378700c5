//! What a launcher build is given besides the document: the cluster profile (capability
//! renderings merged into trait properties), CapabilityDefinitions (custom trait types),
//! and a package's parameter values (`${...}` substitution). `covenant check` reads them from
//! `--profile`, `--capability-def`, `--package` and `--values`; the webhook has none.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{GROUP, VERSION};

/// The build inputs.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// Capability bindings by key (`<trait>` or `<trait>.<scope>`): the rendering.
    pub bindings: BTreeMap<String, Map<String, Value>>,
    /// Custom trait types declared by CapabilityDefinitions, with their rendering schemas.
    pub capabilities: BTreeMap<String, Value>,
    /// Parameter values: the package's defaults with the values file over them. `None`:
    /// nothing is substituted.
    pub values: Option<Map<String, Value>>,
    /// The parameters the package declares, as the schema a values file answers to, with the
    /// package's name; `None` without a package.
    pub parameters: Option<(String, crate::schema::Schema)>,
}

/// An input document that is not what its flag expects.
#[derive(Debug, thiserror::Error)]
#[error("{name}: {message}")]
pub struct InputsError {
    /// The file.
    pub name: String,
    /// What was wrong.
    pub message: String,
}

fn expect_kind<'v>(name: &str, doc: &'v Value, kind: &str) -> Result<&'v Map<String, Value>, InputsError> {
    let err = |message: String| InputsError { name: name.to_string(), message };
    let map = doc.as_object().ok_or_else(|| err(format!("expected a {kind} document, found no mapping")))?;
    let api = map.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let found = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    if api != format!("{GROUP}/{VERSION}") || found != kind {
        return Err(err(format!(
            "expected a {GROUP}/{VERSION} {kind} document, found apiVersion \"{api}\" kind \"{found}\""
        )));
    }
    Ok(map)
}

impl Inputs {
    /// Take the capability bindings of a ClusterProfile.
    pub fn add_profile(&mut self, name: &str, doc: &Value) -> Result<(), InputsError> {
        let map = expect_kind(name, doc, "ClusterProfile")?;
        let caps = map.get("spec").and_then(|s| s.get("capabilities")).and_then(Value::as_object);
        for (key, binding) in caps.into_iter().flatten() {
            let rendering = binding.get("rendering").and_then(Value::as_object).cloned().unwrap_or_default();
            self.bindings.insert(key.clone(), rendering);
        }
        Ok(())
    }

    /// Take the trait type a CapabilityDefinition declares (its `metadata.name`).
    pub fn add_capability_definition(&mut self, name: &str, doc: &Value) -> Result<(), InputsError> {
        let map = expect_kind(name, doc, "CapabilityDefinition")?;
        let ty =
            map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).ok_or_else(|| {
                InputsError {
                    name: name.to_string(),
                    message: "metadata.name (the trait type) is missing".into(),
                }
            })?;
        let rendering = map.get("spec").and_then(|s| s.get("rendering")).cloned().unwrap_or(Value::Null);
        self.capabilities.insert(ty.to_string(), rendering);
        Ok(())
    }

    /// Take a Package's parameter defaults (values given later win).
    pub fn add_package(&mut self, name: &str, doc: &Value) -> Result<(), InputsError> {
        let map = expect_kind(name, doc, "Package")?;
        let params = map.get("spec").and_then(|s| s.get("parameters")).and_then(Value::as_array);
        let package = map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or(name);
        let (_, schema) = self.parameters.get_or_insert_with(|| {
            (package.to_string(), crate::schema::Schema::of(crate::schema::Type::Object))
        });
        for p in params.into_iter().flatten() {
            let Some(n) = p.get("name").and_then(Value::as_str) else { continue };
            let declared = p.get("type").and_then(Value::as_str).and_then(crate::schema::Type::parse);
            let parameter = declared.map_or_else(crate::schema::Schema::any, crate::schema::Schema::of);
            schema.properties.insert(n.to_string(), std::sync::Arc::new(parameter));
        }
        let values = self.values.get_or_insert_with(Map::new);
        for p in params.into_iter().flatten() {
            if let (Some(n), Some(d)) = (p.get("name").and_then(Value::as_str), p.get("default")) {
                values.entry(n.to_string()).or_insert_with(|| d.clone());
            }
        }
        Ok(())
    }

    /// Take a values file: a mapping of parameter names to values.
    pub fn add_values(&mut self, name: &str, doc: &Value) -> Result<(), InputsError> {
        let map = doc.as_object().ok_or_else(|| InputsError {
            name: name.to_string(),
            message: "expected a mapping of parameter names to values".into(),
        })?;
        let values = self.values.get_or_insert_with(Map::new);
        for (k, v) in map {
            values.insert(k.clone(), v.clone());
        }
        Ok(())
    }

    /// The rendering of the capability binding a trait resolves against: `<type>.<scope>`
    /// when the trait names a scope and that binding exists, else `<type>`.
    pub fn binding(&self, trait_type: &str, properties: Option<&Value>) -> Option<&Map<String, Value>> {
        let scope = properties.and_then(|p| p.get("scope")).and_then(Value::as_str).filter(|s| !s.is_empty());
        scope
            .and_then(|s| self.bindings.get(&format!("{trait_type}.{s}")))
            .or_else(|| self.bindings.get(trait_type))
    }

    /// The value with every resolvable `${name}` placeholder substituted; `None` when there
    /// are no values or nothing changed. A string that is exactly one placeholder takes the
    /// value itself (typed); a placeholder inside a longer string is replaced by its text.
    pub fn substitute(&self, value: &Value) -> Option<Value> {
        let values = self.values.as_ref()?;
        let mut changed = false;
        let out = substitute(value, values, &mut changed);
        changed.then_some(out)
    }
}

fn substitute(value: &Value, values: &Map<String, Value>, changed: &mut bool) -> Value {
    match value {
        Value::String(s) if s.contains("${") => {
            if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
                if let Some(v) = values.get(name.trim()) {
                    *changed = true;
                    return v.clone();
                }
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("${") {
                let Some(j) = rest[i..].find('}') else { break };
                let name = rest[i + 2..i + j].trim();
                out.push_str(&rest[..i]);
                match values.get(name) {
                    Some(Value::String(v)) => out.push_str(v),
                    Some(v @ (Value::Number(_) | Value::Bool(_))) => out.push_str(&v.to_string()),
                    _ => out.push_str(&rest[i..i + j + 1]),
                }
                rest = &rest[i + j + 1..];
            }
            out.push_str(rest);
            if out != *s {
                *changed = true;
            }
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, values, changed)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute(v, values, changed))).collect())
        }
        other => other.clone(),
    }
}

/// The trait's properties over the capability rendering: objects merge key by key, the
/// authored value wins everywhere else (a list replaces, never merges).
pub fn merge(rendering: &Map<String, Value>, authored: &Value) -> Value {
    let mut out = rendering.clone();
    if let Value::Object(a) = authored {
        for (k, v) in a {
            let merged = match (out.get(k), v) {
                (Some(Value::Object(r)), Value::Object(_)) => merge(r, v),
                _ => v.clone(),
            };
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// What a build input gets wrong: the rule, the pointer in its document, the message's
/// arguments (the engine judges it as its own: selection, action, exemptions).
pub type InputProblem = (&'static str, String, Vec<(&'static str, String)>);

impl Inputs {
    /// A values document held to the parameters its package declares: an undeclared key is
    /// CVN-102, a value of the wrong type CVN-103. `None` without a package: nothing declares
    /// what the values may set.
    pub fn values_problems(&self, doc: &Value) -> Option<Vec<InputProblem>> {
        use crate::schema::validate::{validate, Required};
        let (package, schema) = self.parameters.as_ref()?;
        let owner = format!("the parameters of Package {package}");
        let at = crate::pointer::Location::default();
        Some(
            validate(schema, doc, &at, Required::Everywhere)
                .violations
                .into_iter()
                .map(|v| super::property_problem(&owner, None, None, v))
                .collect(),
        )
    }

    /// A ClusterProfile held to what its bindings bind: a binding of a trait a
    /// CapabilityDefinition declares is checked against the definition's rendering properties
    /// (an undeclared key CVN-102, a wrong type CVN-103, a required one missing CVN-104); a
    /// binding of a trait that is neither among `traits` nor declared is CVN-105 with the
    /// nearest name. A misspelled key never silently drops a binding.
    pub fn profile_problems(&self, doc: &Value, traits: &[String]) -> Vec<InputProblem> {
        use crate::pointer::At;
        use crate::schema::validate::{validate, Required};
        let mut out = Vec::new();
        let Some(caps) = doc.at("/spec/capabilities").and_then(Value::as_object) else { return out };
        for (key, binding) in caps {
            let at = format!("/spec/capabilities/{}", crate::pointer::escape(key));
            let trait_type = key.split('.').next().unwrap_or(key);
            let Some(definition) = self.capabilities.get(trait_type) else {
                if !traits.iter().any(|t| t == trait_type) {
                    let known =
                        traits.iter().map(String::as_str).chain(self.capabilities.keys().map(String::as_str));
                    let suggestion = crate::suggest::hint(trait_type, known);
                    let fix = format!("fix the key, or, if \"{trait_type}\" is a custom trait, give its CapabilityDefinition with --capability-def");
                    out.push((
                        "CVN-105",
                        at,
                        vec![
                            ("category", "capability binding's trait".into()),
                            ("type", trait_type.to_string()),
                            ("suggestion", suggestion),
                            (crate::rules::finding::FIX, fix),
                        ],
                    ));
                }
                continue;
            };
            let schema = super::capability_schema(definition);
            let rendering = binding.get("rendering").cloned().unwrap_or_else(|| serde_json::json!({}));
            // Properties are named below the rendering; the owner says which binding.
            let base = crate::pointer::Location::new(format!("{at}/rendering"), "");
            let owner = format!("spec.capabilities.{key} (CapabilityDefinition {trait_type})");
            for v in validate(&schema, &rendering, &base, Required::Everywhere).violations {
                out.push(super::property_problem(&owner, None, None, v));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_substitute_typed_whole_and_textual_inside() {
        let mut i = Inputs::default();
        i.add_values("v.yaml", &json!({"replicas": 2, "tag": "v1"})).unwrap();
        let out = i.substitute(&json!({"r": "${replicas}", "img": "app:${tag}", "x": "${missing}"})).unwrap();
        assert_eq!(out, json!({"r": 2, "img": "app:v1", "x": "${missing}"}));
        assert!(Inputs::default().substitute(&json!({"r": "${replicas}"})).is_none());
    }

    #[test]
    fn merge_recurses_into_objects_and_authored_wins() {
        let r = json!({"issuerRef": {"name": "le", "kind": "ClusterIssuer"}, "hosts": ["a"]});
        let m = merge(r.as_object().unwrap(), &json!({"issuerRef": {"name": "own"}, "hosts": ["b"]}));
        assert_eq!(m, json!({"issuerRef": {"name": "own", "kind": "ClusterIssuer"}, "hosts": ["b"]}));
    }

    #[test]
    fn a_scoped_binding_wins_over_the_bare_one() {
        let mut i = Inputs::default();
        let profile = json!({"apiVersion": "launcher.gokure.dev/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": "p"}, "spec": {"capabilities": {
                "expose": {"rendering": {"a": 1}}, "expose.internal": {"rendering": {"a": 2}}}}});
        i.add_profile("p.yaml", &profile).unwrap();
        assert_eq!(i.binding("expose", Some(&json!({"scope": "internal"}))).unwrap()["a"], 2);
        assert_eq!(i.binding("expose", Some(&json!({"scope": "other"}))).unwrap()["a"], 1);
        assert_eq!(i.binding("expose", Some(&json!({"scope": null}))).unwrap()["a"], 1);
        assert!(i.add_profile("x.yaml", &json!({"kind": "Application"})).is_err());
    }
}
