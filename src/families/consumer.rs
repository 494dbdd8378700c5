//! The `consumer` family (seed 001): what names a construct — Component (`componentType`,
//! each `traits[]` entry, `workflow`), Project and Resource (`spec.type`) — and what fills one
//! in per environment (ReleaseBinding), plus the Workloads whose images must not float.
//!
//! Every pin resolves through the cluster view by the `openchoreo.dev/name` label, exactly as
//! `versioning::resolve` states: CVN-406 when the name is published and no version satisfies
//! (naming every published version and the `kubectl` that lists them), a warning when nothing
//! of that name is published yet (GitOps apply order); CVN-405 when two objects carry the
//! resolved version; CVN-408 for a pin that is not one. The consumer's parameters validate
//! strictly against the resolved version's schema, and a ReleaseBinding's environment configs
//! against the schemas its release froze (CVN-107); a key a later major removed is named with
//! the version that removed it. CVN-407 refuses floating images, CVN-411 warns about a pin
//! below the support window, and CVN-410 warns when a construct version still pinned is
//! deleted.

use std::sync::Arc;

use serde_json::Value;

use super::pins::{references, scope, Reference, Versions};
use super::{Claim, Context, Family};
use crate::openchoreo::GROUP;
use crate::pointer::At;
use crate::pointer::{escape, Location};
use crate::rules::Action;
use crate::schema::evaluate::Evaluator;
use crate::schema::validate::{validate_evaluating, Problem, Required};
use crate::schema::{Additional, Schema};
use crate::subject::{Operation, Subject};
use crate::versioning::{published_list, resolve, Pin, Published, ResolveError};

pub use crate::openchoreo::CONSUMER_KINDS as KINDS;

/// The schema under `section` of a construct's spec (`parameters`, `environmentConfigs`):
/// none when the section declares none, an error naming the first problem when covenant
/// cannot read it.
fn schema_of(spec: &Value, section: &str) -> Section {
    match super::construct::section_schema(spec, section) {
        Ok(s) => Ok(s.map(Arc::new)),
        Err(problems) => {
            let more = match problems.len() {
                0 | 1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            Err(format!("{}{more}", problems.first().map(ToString::to_string).unwrap_or_default()))
        }
    }
}

/// A construct's schema section as read: absent, loaded, or why it cannot be read.
type Section = super::loaded::Read;

/// The loaded schema sections of stored objects (constructs, and the constructs a release
/// froze), read once each.
#[derive(Debug, Default)]
struct Schemas(super::loaded::Loaded);

impl Schemas {
    /// The schema at pointer `at` (`/spec/parameters`: the spec `/spec`, its section
    /// `parameters`) in the stored object `owner`, when there is one that covenant can read.
    fn of(&self, owner: &Arc<Value>, at: &str) -> Option<Arc<crate::schema::Schema>> {
        self.read(owner, at).ok().flatten()
    }

    /// The schema at pointer `at`, as read. The pointer is the cache's key as it is: on the
    /// admission path it is a constant, so finding a schema read before allocates nothing.
    fn read(&self, owner: &Arc<Value>, at: &str) -> Section {
        self.0.read(owner, at, |o| {
            let (spec, section) = at.rsplit_once('/').unwrap_or(("", at));
            o.at(spec).map_or(Ok(None), |s| schema_of(s, section))
        })
    }
}

/// The family.
#[derive(Debug)]
pub struct Consumer {
    kinds: Vec<String>,
    schemas: Schemas,
    versions: Versions,
}

impl Consumer {
    /// The family over these consumer kinds.
    pub fn new(kinds: Vec<String>) -> Consumer {
        Consumer { kinds, schemas: Schemas::default(), versions: Versions::default() }
    }
}

impl Family for Consumer {
    fn name(&self) -> &'static str {
        "consumer"
    }

    /// A consumer is checked against the published constructs it pins (their schemas read
    /// once per published version and kept), never against a schema of its own.
    fn bounded_by_subject(&self) -> bool {
        true
    }

    /// Every judgement reads the whole object: it is parsed in the pass that decodes the
    /// review.
    fn reading(&self) -> crate::subject::Reading {
        crate::subject::Reading::Whole
    }

    fn claims(&self) -> Vec<Claim> {
        self.kinds.iter().map(|k| Claim::Kind { group: GROUP.into(), kind: k.clone() }).collect()
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        if subject.operation == Operation::Delete {
            return;
        }
        let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return };
        let kind = subject.gvk.kind.as_str();
        let name = doc.at("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let consumer = format!("{kind} {name}");
        let namespace = subject
            .namespace
            .clone()
            .or_else(|| doc.at("/metadata/namespace").and_then(Value::as_str).map(str::to_string));
        images(doc, cx);
        for r in references(kind, doc) {
            pin(doc, &r, &consumer, namespace.as_deref(), &self.schemas, &self.versions, cx);
        }
        if kind == "ReleaseBinding" {
            binding(doc, &consumer, namespace.as_deref(), &self.schemas, &self.versions, cx);
        }
    }
}

/// CVN-407: images with `:latest` or no tag (digests are fine).
fn images(doc: &Value, cx: &mut Context<'_>) {
    let mut found = Vec::new();
    if let Some(i) = doc.at("/spec/container/image").and_then(Value::as_str) {
        found.push(("/spec/container/image".to_string(), i));
    }
    if let Some(map) = doc.at("/spec/containers").and_then(Value::as_object) {
        for (k, c) in map {
            if let Some(i) = c.get("image").and_then(Value::as_str) {
                found.push((format!("/spec/containers/{}/image", escape(k)), i));
            }
        }
    }
    for (pointer, image) in found {
        if image.contains("${") || image.contains('@') {
            continue;
        }
        let last = image.rsplit('/').next().unwrap_or(image);
        let floats = match last.split_once(':') {
            None => true,
            Some((_, tag)) => tag == "latest",
        };
        if floats {
            cx.report("CVN-407", pointer, vec![("image", image.to_string())]);
        }
    }
}

/// Resolve one pin; judge the parameters against the resolved version.
#[allow(clippy::too_many_arguments)]
fn pin(
    doc: &Value,
    r: &Reference,
    consumer: &str,
    namespace: Option<&str>,
    schemas: &Schemas,
    versions: &Versions,
    cx: &mut Context<'_>,
) {
    let pin_pointer = || format!("{}/version", r.pointer);
    let pin = match Pin::parse(&r.pin) {
        Ok(p) => p,
        Err(e) => {
            cx.report("CVN-408", pin_pointer(), vec![("version", r.pin.clone()), ("reason", e.reason)]);
            return;
        }
    };
    let budget = cx.budget;
    let scope = scope(&r.kind, namespace);
    let objects = match cx.cluster.lookup(
        GROUP,
        &r.kind,
        scope.as_deref(),
        &super::labels::BY_LOGICAL_NAME,
        &r.logical,
        budget,
    ) {
        Ok(o) => o,
        Err(e) => {
            // Offline: nothing to resolve against. A cluster view that cannot answer now
            // (not synced, a watch relisting, a list refused): never answered from stale
            // state; the failure policy decides.
            cx.lookup_failed("CVN-406", &e);
            return;
        }
    };
    let found = versions.of(&r.kind, scope.as_deref(), &r.logical, objects);
    let (candidates, list) = (&found.candidates, &found.list);
    let at = || if r.pin.is_empty() { r.pointer.clone() } else { pin_pointer() };
    if candidates.is_empty() {
        // GitOps tools apply in no fixed order: the construct may arrive after its consumer.
        let args = vec![
            ("pin", r.pin.clone()),
            ("logical", r.logical.clone()),
            ("published", "nothing yet (if it is still being applied, this resolves on its own)".to_string()),
            ("kind", r.kind.clone()),
        ];
        cx.report_change("CVN-406", at(), args, None, Some(Action::Warn));
        return;
    }
    let resolved = match resolve(&pin, &r.logical, list) {
        Ok(p) => p,
        Err(ResolveError::Duplicate { version, a, b }) => {
            cx.report(
                "CVN-405",
                at(),
                vec![("version", version), ("logical", r.logical.clone()), ("a", a), ("b", b)],
            );
            return;
        }
        Err(_) => {
            let args = vec![
                ("pin", r.pin.clone()),
                ("logical", r.logical.clone()),
                ("published", published_list(list)),
                ("kind", r.kind.clone()),
            ];
            cx.report("CVN-406", at(), args);
            return;
        }
    };
    let Some((_, construct)) = candidates.iter().find(|(p, _)| p.object == resolved.object) else { return };
    window(r, resolved, list, cx);
    if let Some(params_at) = &r.parameters {
        let schema = schemas.read(construct, "/spec/parameters");
        let values = doc.at(params_at).filter(|v| !v.is_null());
        // The words findings use are built only when one is reported: this runs for every
        // pin on the admission path, and most reviews report nothing.
        let what = || {
            let version = resolved.version.as_ref().map(|v| v.to_string());
            format!("{} {}", r.logical, version.unwrap_or_else(|| resolved.object.clone()))
        };
        let schema = match (schema, values) {
            (Err(why), Some(_)) => {
                unchecked(params_at, "parameters", consumer, &what(), &why, cx);
                None
            }
            (Err(_), None) => None,
            (Ok(schema), _) => Some(declared(schema)),
        };
        if let (Some(schema), Some(values)) = (schema, values) {
            let how = || {
                let v = resolved.version.as_ref().map(ToString::to_string).unwrap_or_default();
                match r.pin.as_str() {
                    "" => format!("the reference floats to the default, {v}"),
                    pin => format!("the pin \"{pin}\" resolves to {v}"),
                }
            };
            let chosen: Chosen<'_> = resolved.version.clone().map(|v| (v, &how as Words<'_>));
            judge_values(
                &schema,
                values,
                params_at,
                "parameters",
                consumer,
                &what,
                candidates,
                &chosen,
                "parameters",
                schemas,
                cx,
            );
        }
    }
}

/// The supported range of a logical construct: the current major, plus the previous major
/// until the current major reaches its next minor; and the newest supported version.
#[derive(Clone, Debug)]
pub struct SupportWindow {
    /// The lowest supported major.
    pub lowest: u64,
    /// The current major.
    pub current: u64,
    /// The newest release of the current major.
    pub newest: semver::Version,
}

impl SupportWindow {
    /// The window of these published versions (pre-releases do not move it).
    pub fn of(list: &[Published]) -> Option<SupportWindow> {
        let plain: Vec<&semver::Version> =
            list.iter().filter_map(|p| p.version.as_ref()).filter(|v| v.pre.is_empty()).collect();
        let current = plain.iter().map(|v| v.major).max()?;
        let current_has_minor = plain.iter().any(|v| v.major == current && v.minor > 0);
        let lowest = if current_has_minor || current == 0 { current } else { current - 1 };
        let newest = plain.iter().filter(|v| v.major == current).max().map(|v| (*v).clone())?;
        Some(SupportWindow { lowest, current, newest })
    }

    /// Whether a version is inside the window.
    pub fn supports(&self, v: &semver::Version) -> bool {
        v.major >= self.lowest
    }

    /// `1.x–2.x`, or `2.x`.
    pub fn range(&self) -> String {
        if self.lowest == self.current {
            format!("{}.x", self.current)
        } else {
            format!("{}.x–{}.x", self.lowest, self.current)
        }
    }
}

/// CVN-411: a pin below the supported range — the current major, plus the previous major
/// until the current major reaches its next minor.
fn window(r: &Reference, resolved: &Published, list: &[Published], cx: &mut Context<'_>) {
    let Some(w) = SupportWindow::of(list) else { return };
    let Some(v) = &resolved.version else { return };
    if w.supports(v) {
        return;
    }
    let (newest, range) = (w.newest.to_string(), w.range());
    let pin = if r.pin.is_empty() { "(floating)".to_string() } else { r.pin.clone() };
    let args =
        vec![("pin", pin), ("range", format!("{range} of {} (newest supported: {newest})", r.logical))];
    cx.report("CVN-411", format!("{}/version", r.pointer), args);
}

/// What a construct's section declares, as a consumer is held to it: a section that is
/// absent, or an object that declares no properties (`properties: {}`), declares **no**
/// values, so a consumer that sets one is refused like any other undeclared key. Only an
/// object that says it is open (`x-kubernetes-preserve-unknown-fields`,
/// `additionalProperties`) takes what it does not declare.
fn declared(section: Option<Arc<Schema>>) -> Arc<Schema> {
    match section {
        None => Arc::new(Schema::object([])),
        Some(s) if s.properties.is_empty() && s.additional == Additional::Unstated => {
            let mut closed = Schema::clone(&s);
            closed.additional = Additional::Closed;
            Arc::new(closed)
        }
        Some(s) => s,
    }
}

thread_local! {
    /// The evaluator of consumers' values (patterns, formats, list types, CEL rules), one per
    /// thread: what it compiles is kept across reviews, as the schemas are.
    static EVALUATOR: std::cell::RefCell<Option<Evaluator>> = const { std::cell::RefCell::new(None) };
}

/// Words a finding uses, built only when a finding is reported.
type Words<'a> = &'a dyn Fn() -> String;

/// How the version judged came to be chosen: the version, and the words that say how (`the
/// pin "2.0" resolves to 2.0.0`, `the release froze 1.0.0`).
type Chosen<'a> = Option<(semver::Version, Words<'a>)>;

/// Validate consumer-supplied values against a construct's schema; every problem is a
/// CVN-107 finding. A key the schema does not declare is named with the published versions
/// that declare it, truthfully: an older one that a later version removed it from, or a newer
/// one the consumer's pin does not reach.
#[allow(clippy::too_many_arguments)]
fn judge_values(
    schema: &crate::schema::Schema,
    values: &Value,
    pointer: &str,
    field: &str,
    consumer: &str,
    construct: Words<'_>,
    candidates: &[(Published, Arc<Value>)],
    chosen: &Chosen<'_>,
    section: &str,
    schemas: &Schemas,
    cx: &mut Context<'_>,
) {
    let at = Location::new(pointer, field);
    // Every keyword the schema states is applied, as the apiserver applies it: what covenant
    // cannot apply is said (a warning naming it), never passed in silence.
    let (outcome, unprovable) = EVALUATOR.with_borrow_mut(|slot| {
        let ev = slot.get_or_insert_with(Evaluator::new);
        ev.forget_when_large();
        ev.set_stop(cx.stop.flag());
        ev.unprovable.clear();
        let outcome = validate_evaluating(schema, values, &at, Required::Everywhere, ev);
        (outcome, std::mem::take(&mut ev.unprovable))
    });
    for why in unprovable {
        let why = format!("not fully checked: {why}");
        warn_unchecked(pointer, field, consumer, &construct(), why, cx);
    }
    for v in outcome.violations {
        let mut reason = v.message();
        if let Problem::Undeclared { key, .. } = &v.problem {
            let section_at = format!("/spec/{section}");
            let mut declared_by: Vec<semver::Version> = candidates
                .iter()
                .filter(|(_, o)| schemas.of(o, &section_at).is_some_and(|s| s.properties.contains_key(key)))
                .filter_map(|(p, _)| p.version.clone())
                .collect();
            declared_by.sort();
            let list =
                |vs: &[&semver::Version]| vs.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
            match chosen {
                Some((at, how)) => {
                    let older: Vec<&semver::Version> = declared_by.iter().filter(|v| *v < at).collect();
                    let newer: Vec<&semver::Version> = declared_by.iter().filter(|v| *v > at).collect();
                    if let Some(first) = newer.first() {
                        reason.push_str(&format!("; \"{key}\" is declared from {first} on; {}", how()));
                    } else if !older.is_empty() {
                        reason.push_str(&format!("; version {} declared it, {at} removed it", list(&older)));
                    }
                }
                None if !declared_by.is_empty() => {
                    let all: Vec<&semver::Version> = declared_by.iter().collect();
                    reason.push_str(&format!("; version {} declares it", list(&all)));
                }
                None => {}
            }
        }
        let args = vec![
            ("field", v.at.path.clone()),
            ("consumer", consumer.to_string()),
            ("construct", construct()),
            ("reason", reason),
        ];
        cx.report("CVN-107", v.at.pointer, args);
    }
}

/// CVN-107, at most a warning: values that cannot be checked because covenant cannot read the
/// schema they answer to. Said, never passed silently; not a denial, since the consumer did
/// nothing wrong.
fn unchecked(pointer: &str, field: &str, consumer: &str, construct: &str, why: &str, cx: &mut Context<'_>) {
    let why = format!("not checked: covenant cannot read the schema these values answer to: {why}");
    warn_unchecked(pointer, field, consumer, construct, why, cx);
}

/// CVN-107 as a warning: values, or a keyword of their schema, covenant cannot check (a CEL
/// function its evaluator lacks, a rule past the evaluation bounds, a format it does not know).
fn warn_unchecked(
    pointer: &str,
    field: &str,
    consumer: &str,
    construct: &str,
    reason: String,
    cx: &mut Context<'_>,
) {
    let args = vec![
        ("field", field.to_string()),
        ("consumer", consumer.to_string()),
        ("construct", construct.to_string()),
        ("reason", reason),
    ];
    cx.report_change("CVN-107", pointer, args, None, Some(crate::rules::Action::Warn));
}

/// A ReleaseBinding's environment configs against the schemas its release froze.
fn binding(
    doc: &Value,
    consumer: &str,
    namespace: Option<&str>,
    schemas: &Schemas,
    versions: &Versions,
    cx: &mut Context<'_>,
) {
    let Some(release_name) = doc.at("/spec/releaseName").and_then(Value::as_str) else { return };
    let budget = cx.budget;
    let key = format!("{}/{release_name}", namespace.unwrap_or_default());
    let releases =
        match cx.cluster.lookup(GROUP, "ComponentRelease", namespace, &crate::cluster::BY_NAME, &key, budget)
        {
            Ok(releases) => releases,
            Err(e) => {
                cx.lookup_failed("CVN-107", &e);
                return;
            }
        };
    let Some(release) =
        releases.iter().find(|r| r.at("/metadata/name").and_then(Value::as_str) == Some(release_name))
    else {
        return;
    };
    let frozen_type = release.at("/spec/componentType");
    if let (Some(ct), Some(values)) = (frozen_type, doc.at("/spec/componentTypeEnvironmentConfigs")) {
        let name = ct.get("name").and_then(Value::as_str).unwrap_or("?");
        let version = ct.get("version").and_then(Value::as_str).unwrap_or("?");
        let what =
            format!("{} {version} (frozen by {release_name})", name.rsplit('/').next().unwrap_or(name));
        let field = "componentTypeEnvironmentConfigs";
        match schemas.read(release, "/spec/componentType/spec/environmentConfigs") {
            Err(why) => unchecked(&format!("/spec/{field}"), field, consumer, &what, &why, cx),
            Ok(schema) => {
                judge_values(
                    &declared(schema),
                    values,
                    "/spec/componentTypeEnvironmentConfigs",
                    "componentTypeEnvironmentConfigs",
                    consumer,
                    &|| what.clone(),
                    &[],
                    &None,
                    "environmentConfigs",
                    schemas,
                    cx,
                );
            }
        }
    }
    let Some(per_instance) = doc.at("/spec/traitEnvironmentConfigs").and_then(Value::as_object) else {
        return;
    };
    let profile =
        release.at("/spec/componentProfile/traits").and_then(Value::as_array).cloned().unwrap_or_default();
    let frozen = release.at("/spec/traits").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (instance, values) in per_instance {
        let Some(p) =
            profile.iter().find(|t| t.get("instanceName").and_then(Value::as_str) == Some(instance))
        else {
            // An override for an instance the release does not have would be ignored: refused,
            // naming the instances there are.
            let instances: Vec<&str> =
                profile.iter().filter_map(|t| t.get("instanceName").and_then(Value::as_str)).collect();
            let there = match instances.as_slice() {
                [] => "it has no trait instances".to_string(),
                names => format!("its trait instances are {}", names.join(", ")),
            };
            let near = crate::suggest::closest(instance, instances.iter().copied())
                .first()
                .map(|n| format!(" (did you mean \"{n}\"?)"))
                .unwrap_or_default();
            let args = vec![
                ("field", format!("traitEnvironmentConfigs.{instance}")),
                ("consumer", consumer.to_string()),
                ("construct", release_name.to_string()),
                (
                    "reason",
                    format!("release {release_name} has no trait instance \"{instance}\"{near}; {there}"),
                ),
            ];
            cx.report("CVN-107", format!("/spec/traitEnvironmentConfigs/{}", escape(instance)), args);
            continue;
        };
        let trait_name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(at) = frozen.iter().position(|t| t.get("name").and_then(Value::as_str) == Some(trait_name))
        else {
            continue;
        };
        let version = p.get("version").and_then(Value::as_str).unwrap_or("?");
        let what = format!("{trait_name} {version} (frozen by {release_name})");
        let pointer = format!("/spec/traitEnvironmentConfigs/{}", escape(instance));
        let field = format!("traitEnvironmentConfigs.{instance}");
        let schema = match schemas.read(release, &format!("/spec/traits/{at}/spec/environmentConfigs")) {
            Ok(schema) => declared(schema),
            Err(why) => {
                unchecked(&pointer, &field, consumer, &what, &why, cx);
                continue;
            }
        };
        // The other published versions of the trait, to name the one that removed a key.
        let kind = p.get("kind").and_then(Value::as_str).unwrap_or("Trait");
        let in_scope = scope(kind, namespace);
        let others = cx
            .cluster
            .lookup(GROUP, kind, in_scope.as_deref(), &super::labels::BY_LOGICAL_NAME, trait_name, budget)
            .unwrap_or_default();
        let found = versions.of(kind, in_scope.as_deref(), trait_name, others);
        let parsed = semver::Version::parse(version).ok();
        let froze = || {
            format!("{release_name} froze {}", parsed.as_ref().map(ToString::to_string).unwrap_or_default())
        };
        let chosen: Chosen<'_> = parsed.clone().map(|v| (v, &froze as Words<'_>));
        judge_values(
            &schema,
            values,
            &pointer,
            &field,
            consumer,
            &|| what.clone(),
            &found.candidates,
            &chosen,
            "environmentConfigs",
            schemas,
            cx,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn construct(version: Option<&str>, uid: &str) -> Value {
        let mut metadata = json!({"name": "shop-v1", "uid": uid});
        if let Some(v) = version {
            metadata["resourceVersion"] = json!(v);
        }
        json!({"metadata": metadata, "spec": {"parameters": {"openAPIV3Schema": {"type": "object",
            "properties": {"replicas": {"type": "integer"}}}}}})
    }

    #[test]
    fn stored_schemas_load_once_per_resource_version() {
        let schemas = Schemas::default();
        let first = schemas.of(&Arc::new(construct(Some("7"), "u1")), "/spec/parameters").unwrap();
        let again = schemas.of(&Arc::new(construct(Some("7"), "u1")), "/spec/parameters").unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same stored version is loaded once");
        let written = schemas.of(&Arc::new(construct(Some("8"), "u1")), "/spec/parameters").unwrap();
        assert!(!Arc::ptr_eq(&first, &written), "a write is a new version");
        assert!(written.properties.contains_key("replicas"));
        // From a file: no resourceVersion, known by the allocation that holds it.
        let held = Arc::new(construct(None, "u1"));
        let a = schemas.of(&held, "/spec/parameters").unwrap();
        let b = schemas.of(&held, "/spec/parameters").unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the same held object is loaded once");
        let other = Arc::new(construct(None, "u1"));
        let c = schemas.of(&other, "/spec/parameters").unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "another object is loaded on its own");
        // A held object dropped: its allocation stays reserved while the entry lasts, so a
        // new object never finds the old one's schema.
        drop((held, other));
        let mut changed = construct(None, "u1");
        changed["spec"]["parameters"]["openAPIV3Schema"]["properties"] = json!({"port": {"type": "integer"}});
        for _ in 0..64 {
            let s = schemas.of(&Arc::new(changed.clone()), "/spec/parameters").unwrap();
            assert!(s.properties.contains_key("port") && !s.properties.contains_key("replicas"));
        }
        assert!(schemas.of(&Arc::new(construct(Some("7"), "u1")), "/spec/environmentConfigs").is_none());
    }
}
