//! Derived names (CVN-218): the names a composite's controller derives from its fields
//! (`app-{spec.app}-{spec.env}` for a namespace, `{metadata.name}-tektoncicd` for a release)
//! must fit a 63-character Kubernetes name or label. An XRD (or CRD) declares the names it
//! derives in the annotation `covenant.dev/derived-names`, one template per line; a
//! `{path}` is a field of the composite (`metadata.name`, `spec.app`).
//!
//! - On the definition: every field a template uses is limited — `maxLength`, a string enum,
//!   or a CEL rule `size(self) <= N` / `self.size() <= N` on the field, or
//!   `size(self.<path>) <= N` on an ancestor (metadata.name is limited by a rule at the
//!   root), or a rule bounding a sum (`size(self.app) + size(self.env) <= 58`), which bounds
//!   its fields together — so the longest derived name fits in 63 characters, and every limit states its
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

/// The size bounds a CEL rule states, each with the paths below `self` whose sizes it bounds
/// together: `size(self.a.b) <= N` and `self.a.b.size() < N` bound one field;
/// `size(self.app) + size(self.env) <= 58` bounds the sum of two (the spelling Airframe's
/// ApplicationEnvironment uses for its `app-<app>-<env>` namespace), as do the same written
/// `N >= …`, in parentheses, or as one conjunct of several joined by `&&`.
fn size_rule(rule: &str) -> Vec<(Vec<Vec<String>>, usize)> {
    static TERM: OnceLock<Option<Regex>> = OnceLock::new();
    static BOUND: OnceLock<Option<Regex>> = OnceLock::new();
    let (Some(term), Some(bound)) = (
        TERM.get_or_init(|| {
            Regex::new(r"^\s*(?:size\(\s*self((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\)|self((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.size\(\))\s*$").ok()
        })
        .as_ref(),
        BOUND.get_or_init(|| Regex::new(r"^([^<>=]*)(<=|<|>=|>)([^<>=]*)$").ok()).as_ref(),
    ) else {
        return Vec::new();
    };
    let sizes = |side: &str| -> Option<Vec<Vec<String>>> {
        unparenthesised(side)
            .split('+')
            .map(|t| {
                let c = term.captures(t)?;
                let path = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str()).unwrap_or_default();
                Some(path.split('.').filter(|s| !s.is_empty()).map(str::to_string).collect())
            })
            .collect()
    };
    rule.split("&&")
        .filter_map(|conjunct| {
            let c = bound.captures(conjunct)?;
            let (left, op, right) = (c.get(1)?.as_str(), &c[2], c.get(3)?.as_str());
            // `sizes <= N`, or `N >= sizes`.
            let number = |side: &str| unparenthesised(side).parse::<usize>();
            let (paths, n, strict) = match (sizes(left), number(right), number(left)) {
                (Some(p), Ok(n), _) if op.starts_with('<') => (p, n, op == "<"),
                (_, _, Ok(n)) if op.starts_with('>') => (sizes(right)?, n, op == ">"),
                _ => return None,
            };
            let n = if strict { n.checked_sub(1)? } else { n };
            Some((paths, n))
        })
        .collect()
}

/// `side` without the parentheses around all of it.
fn unparenthesised(side: &str) -> &str {
    let mut s = side.trim();
    while let Some(inner) = s.strip_prefix('(').and_then(|i| i.strip_suffix(')')) {
        // Only a pair that encloses everything: `(a) + (b)` keeps its own.
        let mut depth = 0i32;
        if inner.chars().any(|c| {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            depth < 0
        }) {
            break;
        }
        s = inner.trim();
    }
    s
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
            for (paths, length) in size_rule(&rule.rule) {
                if paths.len() == 1 && paths[0] == below {
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

/// A rule that bounds the sum of several fields' sizes: the fields (paths from the root),
/// the bound, and its reason.
struct SumLimit {
    fields: Vec<Vec<String>>,
    length: usize,
    reason: String,
}

/// The sum bounds stated on the nodes along `paths` (a rule on `spec` bounding
/// `size(self.app) + size(self.env)` bounds `spec.app` and `spec.env` together).
fn sum_limits(root: &Schema, paths: &[&Vec<String>]) -> Vec<SumLimit> {
    let mut out = Vec::new();
    let mut seen: Vec<&[String]> = Vec::new();
    for path in paths {
        let mut node = Some(root);
        for depth in 0..=path.len() {
            let Some(n) = node else { break };
            let prefix = &path[..depth];
            if !seen.contains(&prefix) {
                seen.push(prefix);
                for rule in &n.validations {
                    for (below, length) in size_rule(&rule.rule).into_iter().filter(|(p, _)| p.len() > 1) {
                        let fields = below.into_iter().map(|b| [prefix.to_vec(), b].concat()).collect();
                        out.push(SumLimit {
                            fields,
                            length,
                            reason: rule.message.clone().unwrap_or_default(),
                        });
                    }
                }
            }
            if depth < path.len() {
                node = n.properties.get(&path[depth]).map(|c| c.as_ref());
            }
        }
    }
    out.sort_by_key(|l| l.length);
    out
}

/// What is wrong with one template against one version's schema, if anything.
pub fn judge_template(template: &Template, schema: &Schema) -> Option<String> {
    let fields: Vec<&Vec<String>> = template
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Field(path) => Some(path),
            Part::Literal(_) => None,
        })
        .collect();
    let mut length: usize =
        template.parts.iter().map(|p| if let Part::Literal(l) = p { l.chars().count() } else { 0 }).sum();
    let mut unbounded = Vec::new();
    let mut unreasoned = Vec::new();
    // Fields a sum bound covers, tightest bound first, each field in one group: the group
    // reaches at most the bound times the most any of its fields repeats in the template,
    // and no more than its fields' own limits allow.
    let mut grouped: Vec<&Vec<String>> = Vec::new();
    for sum in sum_limits(schema, &fields) {
        let mut covered: Vec<&Vec<String>> =
            fields.iter().copied().filter(|f| sum.fields.contains(f) && !grouped.contains(f)).collect();
        covered.sort();
        covered.dedup();
        if covered.is_empty() {
            continue;
        }
        let repeats = |f: &Vec<String>| fields.iter().filter(|x| **x == f).count();
        let own: Option<usize> =
            covered.iter().map(|f| limit(schema, f).map(|l| l.length.saturating_mul(repeats(f)))).sum();
        let most = covered.iter().map(|f| repeats(f)).max().unwrap_or(1);
        let group = sum.length.saturating_mul(most);
        length = length.saturating_add(own.map_or(group, |o| o.min(group)));
        if sum.reason.trim().is_empty() {
            unreasoned.extend(covered.iter().map(|f| f.join(".")));
        }
        grouped.extend(covered);
    }
    for path in fields.iter().filter(|f| !grouped.contains(f)) {
        match limit(schema, path) {
            Some(l) => {
                length = length.saturating_add(l.length);
                if l.reason.trim().is_empty() && !unreasoned.contains(&path.join(".")) {
                    unreasoned.push(path.join("."));
                }
            }
            None if !unbounded.contains(&path.join(".")) => unbounded.push(path.join(".")),
            None => {}
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

    /// Airframe's ApplicationEnvironment bounds `app-<app>-<env>` with one rule over the sum of
    /// both fields' sizes; each spelling of that bound bounds the name, and a sum that leaves
    /// the name over 63 is still refused.
    #[test]
    fn a_rule_that_bounds_a_sum_of_sizes_bounds_the_derived_name() {
        let with = |rule: &str, message: Option<&str>| {
            let mut r = json!({"rule": rule});
            if let Some(m) = message {
                r["message"] = json!(m);
            }
            schema(json!({"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-validations": [r],
                "properties": {"app": {"type": "string"}, "env": {"type": "string"}}}}}))
        };
        let t = |line: &str| templates(&definition(line)).unwrap().remove(0);
        let namespace = t("app-{spec.app}-{spec.env}");
        let why = Some("app-<app>-<env> is a namespace name: 63 characters at most");
        for rule in [
            "size(self.app) + size(self.env) <= 58",
            "self.app.size() + self.env.size() < 59",
            "(size(self.app) + size(self.env)) <= 58",
            "58 >= size(self.app) + size(self.env)",
            "size(self.app) > 0 && size(self.app) + size(self.env) <= 58",
        ] {
            assert_eq!(judge_template(&namespace, &with(rule, why)), None, "{rule}");
        }
        let over = judge_template(&namespace, &with("size(self.app) + size(self.env) <= 59", why)).unwrap();
        assert!(over.contains("can reach 64 characters"), "{over}");
        let unreasoned =
            judge_template(&namespace, &with("size(self.app) + size(self.env) <= 58", None)).unwrap();
        assert!(unreasoned.contains("states no reason") && unreasoned.contains("spec.app"), "{unreasoned}");
        // A field the sum does not cover stays unbounded.
        let other =
            judge_template(&t("{spec.app}-{spec.team}"), &with("size(self.app) + size(self.env) <= 58", why));
        assert!(other.unwrap().contains("has no bound: spec.team"));
        // A field twice in the name doubles what it may add.
        let twice =
            judge_template(&t("{spec.app}-{spec.app}"), &with("size(self.app) + size(self.env) <= 40", why));
        assert!(twice.unwrap().contains("can reach 81 characters"));
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
