//! The `versioned` family (seed 002): YAML or JSON documents with top-level `schema` and
//! `version` members. Both members are required; a version other than the one the reader
//! speaks is refused naming both; a member the schema does not declare is refused.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Claim, Context, Family};
use crate::pointer::escape;
use crate::registry::VersionedSchema;
use crate::strict::describe;
use crate::subject::Subject;
use crate::suggest::closest;

/// The family over the registry's versioned schemas.
#[derive(Debug)]
pub struct Versioned {
    schemas: BTreeMap<String, VersionedSchema>,
}

impl Versioned {
    /// A family judging the given schemas.
    pub fn new(schemas: BTreeMap<String, VersionedSchema>) -> Versioned {
        Versioned { schemas }
    }
}

/// The members every versioned document carries.
const IDENTITY: [&str; 2] = ["schema", "version"];

/// The members of a Kubernetes object that carries a versioned format (see `resources`).
const K8S_ENVELOPE: [&str; 3] = ["apiVersion", "kind", "metadata"];

impl Family for Versioned {
    fn name(&self) -> &'static str {
        "versioned"
    }

    fn claims(&self) -> Vec<Claim> {
        let mut claims = vec![Claim::AnySchema];
        for s in self.schemas.values() {
            claims.push(Claim::Schema(s.schema.clone()));
            for r in &s.resources {
                claims.push(Claim::Kind { group: r.group.clone(), kind: r.kind.clone() });
            }
        }
        claims
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        let Some(object) = &subject.object else {
            return;
        };
        let doc = match object.value() {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                let reason = format!("expected a mapping, found {}", describe(other));
                cx.report("CVN-109", "", vec![("reason", reason)]);
                return;
            }
            // Reported by the engine for every family (CVN-109).
            Err(_) => return,
        };

        let Some(schema_member) = doc.get("schema") else {
            let reason = "required member \"schema\" is missing; a versioned document carries \
                          both \"schema\" and \"version\""
                .to_string();
            cx.report("CVN-109", "", vec![("reason", reason)]);
            return;
        };
        let Some(name) = schema_member.as_str() else {
            let reason = format!("member \"schema\" must be a string, found {}", describe(schema_member));
            cx.report("CVN-109", "/schema", vec![("reason", reason)]);
            return;
        };
        let Some(schema) = self.schemas.get(name) else {
            let near = closest(name, self.schemas.keys().map(String::as_str));
            let hint = match near.first() {
                Some(n) => format!("; did you mean \"{n}\"?"),
                None => String::new(),
            };
            let declared: Vec<_> = self.schemas.keys().map(|k| format!("\"{k}\"")).collect();
            let reason = format!(
                "schema \"{name}\" is not declared by any registry{hint} (declared: {})",
                declared.join(", ")
            );
            cx.report("CVN-109", "/schema", vec![("reason", reason)]);
            return;
        };

        match doc.get("version") {
            None => {
                let reason = format!(
                    "required member \"version\" is missing; a {name} document carries version \"{}\"",
                    schema.version
                );
                cx.report("CVN-109", "", vec![("reason", reason)]);
            }
            Some(Value::String(v)) => {
                if schema.check_version && *v != schema.version {
                    cx.report(
                        "CVN-106",
                        "/version",
                        vec![
                            ("schema", name.to_string()),
                            ("found", v.clone()),
                            ("expected", schema.version.clone()),
                        ],
                    );
                }
            }
            Some(found) => {
                let reason = format!(
                    "member \"version\" must be a string such as \"{}\", found {}",
                    schema.version,
                    describe(found)
                );
                cx.report("CVN-109", "/version", vec![("reason", reason)]);
            }
        }

        let Some(members) = &schema.members else {
            return;
        };
        if !cx.runs("CVN-101") {
            return;
        }
        // A format carried by a custom resource also has the Kubernetes object envelope.
        let envelope: &[&str] = if subject.gvk.kind.is_empty() { &[] } else { &K8S_ENVELOPE };
        let allowed: Vec<&str> =
            IDENTITY.iter().chain(envelope).copied().chain(members.iter().map(String::as_str)).collect();
        for key in doc.keys() {
            if allowed.contains(&key.as_str()) {
                continue;
            }
            let near = closest(key, allowed.iter().copied());
            let suggestion = match near.first() {
                Some(n) => format!(" (did you mean \"{n}\"?)"),
                None => String::new(),
            };
            cx.report(
                "CVN-101",
                format!("/{}", escape(key)),
                vec![
                    ("member", key.clone()),
                    ("schema", name.to_string()),
                    ("allowed", allowed.join(", ")),
                    ("suggestion", suggestion),
                ],
            );
        }
    }
}
