//! Derived names (CVN-218): the names a composite's controller derives from its fields
//! (`app-{spec.app}-{spec.env}` for a namespace, `{metadata.name}-tektoncicd` for a release)
//! must fit a 63-character Kubernetes name or label. An XRD (or CRD) declares the names it
//! derives in the annotation `covenant.dev/derived-names`, one template per line; a
//! `{path}` is a field of the composite (`metadata.name`, `spec.app`).
//!
//! - On the definition: every field a template uses is limited — `maxLength`, a string enum,
//!   or a CEL rule `size(self) <= N` / `self.size() <= N` on the field, or
//!   `size(self.<path>) <= N` on an ancestor (metadata.name is limited by a rule at the
//!   root) — so the longest derived name fits in 63 characters, and every limit states its
//!   reason (the field's `description` for `maxLength`, the rule's `message` for CEL).
//! - On a composite: the names its values derive are at most 63 characters.
//!
//! Pure: documents and schemas in, problems out.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::{Claim, Context, Family};
use crate::pointer::At;
use crate::schema::Schema;
use crate::subject::Operation;

/// The annotation that declares the derived names.
pub const ANNOTATION: &str = "covenant.dev/derived-names";

/// The longest Kubernetes name or label value a derived name may be.
pub const LIMIT: usize = 63;

/// One piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Field(Vec<String>),
}

/// One declared template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// As written.
    pub text: String,
    parts: Vec<Part>,
}

/// The definition's derived-names annotation, if it carries one.
fn declaration(definition: &Value) -> Option<&Value> {
    definition.at("/metadata/annotations").and_then(|a| a.get(ANNOTATION))
}

/// Whether the definition declares names it derives (whatever the declaration holds).
pub fn declares(definition: &Value) -> bool {
    declaration(definition).is_some()
}

/// The templates a definition declares; none without the annotation, an error naming the
/// line when one cannot be read.
pub fn templates(definition: &Value) -> Result<Vec<Template>, String> {
    let Some(raw) = declaration(definition) else {
        return Ok(Vec::new());
    };
    let Some(text) = raw.as_str() else { return Err(format!("{ANNOTATION} is not a string")) };
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(parse).collect()
}

impl Template {
    /// The pointer of the first field the template uses (`/spec/app`).
    fn first_field(&self) -> Option<String> {
        self.parts.iter().find_map(|p| match p {
            Part::Field(path) => {
                Some(path.iter().map(|s| format!("/{}", crate::pointer::escape(s))).collect())
            }
            Part::Literal(_) => None,
        })
    }
}

fn parse(line: &str) -> Result<Template, String> {
    let mut parts = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(rest[..open].to_string()));
        }
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("derived name {line:?}: a '{{' is not closed"));
        };
        let path = &rest[open + 1..open + close];
        let steps: Vec<String> = path.split('.').map(str::trim).map(str::to_string).collect();
        if steps.iter().any(|s| s.is_empty()) {
            return Err(format!(
                "derived name {line:?}: {{{path}}} is not a field path such as {{spec.app}}"
            ));
        }
        parts.push(Part::Field(steps));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_string()));
    }
    if !parts.iter().any(|p| matches!(p, Part::Field(_))) {
        return Err(format!("derived name {line:?} uses no field; write fields as {{spec.app}}"));
    }
    Ok(Template { text: line.to_string(), parts })
}

/// How long a field can be, and why, as a schema states it.
struct Limit {
    length: usize,
    /// The reason the schema gives; empty when it gives none.
    reason: String,
}

/// `size(self.a.b) <= N`, `self.a.b.size() < N`: the path below `self` and the bound.
fn size_rule(rule: &str) -> Vec<(Vec<String>, usize)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = RE
        .get_or_init(|| {
            Regex::new(r"^\s*(?:size\(\s*self((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\)|self((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.size\(\))\s*(<=|<)\s*(\d+)\s*$").ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    rule.split("&&")
        .filter_map(|conjunct| {
            let c = re.captures(conjunct)?;
            let path = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or_default();
            let n: usize = c.get(4)?.as_str().parse().ok()?;
            let n = if &c[3] == "<" { n.checked_sub(1)? } else { n };
            Some((path.split('.').filter(|s| !s.is_empty()).map(str::to_string).collect(), n))
        })
        .collect()
}

/// The tightest limit the schema states on the field at `path`.
fn limit(root: &Schema, path: &[String]) -> Option<Limit> {
    let mut best: Option<Limit> = None;
    let mut consider = |l: Limit| {
        if best.as_ref().is_none_or(|b| l.length < b.length) {
            best = Some(l);
        }
    };
    let mut node = Some(root);
    for depth in 0..=path.len() {
        let Some(n) = node else { break };
        let below = &path[depth..];
        for rule in &n.validations {
            for (p, length) in size_rule(&rule.rule) {
                if p == below {
                    consider(Limit { length, reason: rule.message.clone().unwrap_or_default() });
                }
            }
        }
        if depth == path.len() {
            if let Some(max) = n.bounds.max_length {
                let length = usize::try_from(max).unwrap_or(usize::MAX);
                consider(Limit { length, reason: n.description.clone().unwrap_or_default() });
            }
            if let Some(members) = &n.enumeration {
                if members.iter().all(Value::is_string) {
                    let length = members.iter().filter_map(Value::as_str).map(|s| s.chars().count()).max();
                    // The enum is its own reason: the values are listed.
                    consider(Limit { length: length.unwrap_or(0), reason: "enum".into() });
                }
            }
            break;
        }
        node = n.properties.get(&path[depth]).map(|c| c.as_ref());
    }
    best
}

/// What is wrong with one template against one version's schema, if anything.
pub fn judge_template(template: &Template, schema: &Schema) -> Option<String> {
    let mut length = 0usize;
    let mut unbounded = Vec::new();
    let mut unreasoned = Vec::new();
    for part in &template.parts {
        match part {
            Part::Literal(l) => length += l.chars().count(),
            Part::Field(path) => match limit(schema, path) {
                Some(l) => {
                    length = length.saturating_add(l.length);
                    if l.reason.trim().is_empty() {
                        unreasoned.push(path.join("."));
                    }
                }
                None => unbounded.push(path.join(".")),
            },
        }
    }
    let text = &template.text;
    if !unbounded.is_empty() {
        let hint = if unbounded.iter().any(|p| p == "metadata.name") {
            " (metadata.name is limited by a rule such as `size(self.metadata.name) <= 40` at the schema's root)"
        } else {
            ""
        };
        return Some(format!(
            "derived name {text:?} has no bound: {} declares no maxLength, string enum or CEL size limit{hint}",
            unbounded.join(", ")
        ));
    }
    if length > LIMIT {
        return Some(format!(
            "derived name {text:?} can reach {length} characters, over the {LIMIT} a Kubernetes name or label allows"
        ));
    }
    if !unreasoned.is_empty() {
        return Some(format!(
            "derived name {text:?} fits ({length} characters at most), but the limit on {} states no reason: say it in the field's description (maxLength) or the rule's message (CEL)",
            unreasoned.join(", ")
        ));
    }
    None
}

/// The names a composite's values derive, each with its length, for the templates whose
/// fields it sets (a template with a field the object leaves out derives nothing yet).
pub fn derive<'t>(templates: &'t [Template], object: &Value) -> Vec<(&'t Template, String)> {
    templates
        .iter()
        .filter_map(|t| {
            let mut name = String::new();
            for part in &t.parts {
                match part {
                    Part::Literal(l) => name.push_str(l),
                    Part::Field(path) => {
                        let mut v = object;
                        for step in path {
                            v = v.get(step)?;
                        }
                        match v {
                            Value::String(s) => name.push_str(s),
                            Value::Number(n) => name.push_str(&n.to_string()),
                            _ => return None,
                        }
                    }
                }
            }
            Some((t, name))
        })
        .collect()
}

/// The family for composites: objects of the configured API groups, each held to the names
/// its definition (the XRD or CRD of its group and kind) declares it derives.
#[derive(Debug)]
pub struct Composites {
    groups: Vec<String>,
}

impl Composites {
    /// The family over these API groups.
    pub fn new(groups: Vec<String>) -> Composites {
        Composites { groups }
    }
}

/// Where definitions live: Crossplane XRDs (composite and claim kinds) and CRDs.
const DEFINITIONS: [(&str, &str); 2] = [
    ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
];

impl Family for Composites {
    fn name(&self) -> &'static str {
        "composite"
    }

    fn claims(&self) -> Vec<Claim> {
        self.groups.iter().map(|g| Claim::Group(g.clone())).collect()
    }

    fn check(&self, subject: &crate::subject::Subject, cx: &mut Context<'_>) {
        if subject.operation == Operation::Delete {
            return;
        }
        let Some(Ok(object)) = subject.object.as_ref().map(|o| o.value()) else { return };
        let (group, kind) = (subject.gvk.group.as_str(), subject.gvk.kind.as_str());
        let mut templates = Vec::new();
        let mut definition = None;
        for (g, k) in DEFINITIONS {
            let found = match cx.cluster.list(g, k, None, cx.budget) {
                Ok(found) => found,
                Err(e) => {
                    cx.lookup_failed("CVN-218", &e);
                    continue;
                }
            };
            let defines = |d: &&std::sync::Arc<Value>| {
                let at = |p: &str| d.at(p).and_then(Value::as_str);
                at("/spec/group") == Some(group)
                    && (at("/spec/names/kind") == Some(kind) || at("/spec/claimNames/kind") == Some(kind))
            };
            if let Some(d) = found.iter().find(defines) {
                // A definition whose declaration cannot be read is judged where it is applied.
                templates = super::derived::templates(d).unwrap_or_default();
                definition = d.at("/metadata/name").and_then(Value::as_str).map(str::to_string);
                break;
            }
        }
        let Some(definition) = definition else { return };
        let name = object.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
        for (template, derived) in derive(&templates, object) {
            let length = derived.chars().count();
            if length > LIMIT {
                let reason = format!(
                    "derives {derived:?} from {:?} ({length} characters, over the {LIMIT} a Kubernetes name or label allows; {definition} declares it)",
                    template.text
                );
                let pointer = template.first_field().unwrap_or_else(|| "/metadata/name".into());
                cx.report(
                    "CVN-218",
                    pointer,
                    vec![("subject", format!("{kind} {name}")), ("reason", reason)],
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::Location;
    use crate::schema::openapi::{load, Dialect};
    use serde_json::json;

    fn schema(v: Value) -> Schema {
        load(&v, &Location::default(), Dialect::OpenApi).unwrap()
    }

    fn definition(lines: &str) -> Value {
        json!({"metadata": {"annotations": {ANNOTATION: lines}}})
    }

    #[test]
    fn templates_parse_and_bad_ones_are_named() {
        let t =
            templates(&definition("app-{spec.app}-{spec.env}\n\n  {metadata.name}-tektoncicd\n")).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].text, "{metadata.name}-tektoncicd");
        assert!(templates(&definition("app-{spec.app")).unwrap_err().contains("not closed"));
        assert!(templates(&definition("plain")).unwrap_err().contains("uses no field"));
        assert!(templates(&definition("a-{spec..x}")).unwrap_err().contains("not a field path"));
        assert_eq!(templates(&json!({})).unwrap(), []);
    }

    #[test]
    fn limits_come_from_max_length_enums_and_cel_rules_with_their_reasons() {
        let s = schema(json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "size(self.metadata.name) <= 40", "message": "the -tektoncicd release name must fit 63"}],
            "properties": {"spec": {"type": "object",
                "x-kubernetes-validations": [{"rule": "self.app.size() < 21 && size(self.app) > 0", "message": "app-<app>-<env> is a namespace"}],
                "properties": {
                    "app": {"type": "string"},
                    "env": {"type": "string", "enum": ["dev", "staging", "prod"]},
                    "team": {"type": "string", "maxLength": 30},
                    "owner": {"type": "string", "maxLength": 10, "description": "owner-<owner> label: at most 63"},
                    "free": {"type": "string"}}}}}));
        let t = |line: &str| templates(&definition(line)).unwrap().remove(0);
        assert_eq!(judge_template(&t("app-{spec.app}-{spec.env}"), &s), None, "4 + 20 + 1 + 7 = 32");
        assert_eq!(judge_template(&t("{metadata.name}-tektoncicd"), &s), None, "40 + 11 = 51");
        assert_eq!(judge_template(&t("{metadata.name}-{spec.app}-x"), &s), None, "exactly 63 fits");
        let long = judge_template(&t("{metadata.name}-{spec.app}-xy"), &s).unwrap();
        assert!(long.contains("can reach 64 characters"), "{long}");
        let free = judge_template(&t("x-{spec.free}"), &s).unwrap();
        assert!(free.contains("has no bound: spec.free"), "{free}");
        let unreasoned = judge_template(&t("team-{spec.team}"), &s).unwrap();
        assert!(unreasoned.contains("states no reason"), "{unreasoned}");
        assert_eq!(judge_template(&t("owner-{spec.owner}"), &s), None);
    }

    #[test]
    fn a_composite_derives_its_names() {
        let t = templates(&definition("app-{spec.app}-{spec.env}\n{metadata.name}-cicd\n{spec.missing}-x"))
            .unwrap();
        let object = json!({"metadata": {"name": "shop"}, "spec": {"app": "web", "env": "prod"}});
        let names: Vec<(String, String)> =
            derive(&t, &object).into_iter().map(|(t, n)| (t.text.clone(), n)).collect();
        assert_eq!(
            names,
            [
                ("app-{spec.app}-{spec.env}".to_string(), "app-web-prod".to_string()),
                ("{metadata.name}-cicd".to_string(), "shop-cicd".to_string())
            ]
        );
    }
}
