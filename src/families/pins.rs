//! Where consumers name constructs, and what a logical name publishes: the references a
//! Component, Project or Resource makes, the published objects of a logical name, and CVN-410
//! (deleting a version consumers still pin). Shared by the consumer family (resolving pins)
//! and the construct family (a deletion), so neither imports the other.

use std::sync::Arc;

use hashbrown::Equivalent;
use serde_json::Value;

use super::labels::{
    declared_version, label, logical_name, BY_LOGICAL_NAME, DEFAULT_LABEL, NAME_LABEL, VERSION_KEY,
};
use super::Context;
use crate::openchoreo::GROUP;
use crate::pointer::At;
use crate::subject::Subject;
use crate::versioning::{resolve, Pin, Published};

/// Consumers by the constructs they name (`ClusterComponentType/ruby-service`, the key
/// `referenced` gives): who uses a construct, without a pass over every consumer.
pub const BY_REFERENCE: crate::cluster::Index = crate::cluster::Index {
    name: "openchoreo.dev/references",
    keys: |o| {
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
        references(kind, o).into_iter().map(|r| referenced(&r.kind, &r.logical)).collect()
    },
};

/// The key `BY_REFERENCE` files a consumer of construct `kind` `logical` under.
pub fn referenced(kind: &str, logical: &str) -> String {
    format!("{kind}/{logical}")
}

/// One place a consumer names a construct.
#[derive(Clone, Debug)]
pub(crate) struct Reference {
    /// Pointer to the reference object (`/spec/traits/0`).
    pub(crate) pointer: String,
    /// The construct kind.
    pub(crate) kind: String,
    /// The logical name.
    pub(crate) logical: String,
    /// The pin as written.
    pub(crate) pin: String,
    /// Pointer to the parameters that fill it in, if any.
    pub(crate) parameters: Option<String>,
}

fn reference(
    r: Option<&Value>,
    pointer: &str,
    default_kind: &str,
    parameters: Option<&str>,
) -> Option<Reference> {
    let r = r?;
    let name = r.get("name").and_then(Value::as_str)?;
    // A componentType is named `<workloadType>/<name>`.
    let logical = name.rsplit('/').next().unwrap_or(name).to_string();
    Some(Reference {
        pointer: pointer.to_string(),
        kind: r.get("kind").and_then(Value::as_str).unwrap_or(default_kind).to_string(),
        logical,
        pin: r.get("version").and_then(Value::as_str).unwrap_or_default().to_string(),
        parameters: parameters.map(str::to_string),
    })
}

pub(crate) fn references(kind: &str, doc: &Value) -> Vec<Reference> {
    let mut out = Vec::new();
    match kind {
        "Component" => {
            // The spec found once: this runs for every Component on the admission path.
            let spec = doc.get("spec");
            let at = |member: &str| spec.and_then(|s| s.get(member));
            out.extend(reference(
                at("componentType"),
                "/spec/componentType",
                "ComponentType",
                Some("/spec/parameters"),
            ));
            for (i, t) in at("traits").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let at = format!("/spec/traits/{i}");
                out.extend(reference(Some(t), &at, "Trait", Some(&format!("{at}/parameters"))));
            }
            out.extend(reference(
                at("workflow"),
                "/spec/workflow",
                "ClusterWorkflow",
                Some("/spec/workflow/parameters"),
            ));
        }
        "Project" => out.extend(reference(
            doc.at("/spec/type"),
            "/spec/type",
            "ClusterProjectType",
            Some("/spec/parameters"),
        )),
        "Resource" => out.extend(reference(
            doc.at("/spec/type"),
            "/spec/type",
            "ResourceType",
            Some("/spec/parameters"),
        )),
        _ => {}
    }
    out
}

/// Cluster-scoped construct kinds are listed across namespaces.
pub(crate) fn scope(kind: &str, namespace: Option<&str>) -> Option<String> {
    if kind.starts_with("Cluster") {
        None
    } else {
        namespace.map(str::to_string)
    }
}

/// The published objects of a logical name: labelled with it, or (before the scheme) named it.
pub(crate) fn published(objects: &[Arc<Value>], logical: &str) -> Vec<(Published, Arc<Value>)> {
    let mut found = Vec::with_capacity(objects.len());
    for o in objects {
        // Each object's metadata and labels found once, not once a label: this runs for every
        // pin on the admission path.
        let metadata = o.get("metadata");
        let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str);
        let labels = metadata.and_then(|m| m.get("labels"));
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        let ours = match label(NAME_LABEL) {
            Some(named) => named == logical,
            None => name == Some(logical),
        };
        if !ours {
            continue;
        }
        let p = Published {
            object: name.unwrap_or_default().to_string(),
            version: label(VERSION_KEY).and_then(|v| semver::Version::parse(v).ok()),
            default: label(DEFAULT_LABEL) == Some("true"),
        };
        found.push((p, o.clone()));
    }
    found
}

/// How many logical names `Versions` keeps before it starts over.
const VERSIONS_KEPT: usize = 4096;

/// The published versions of logical names, each as read from the objects a lookup returned,
/// kept while lookups return those same objects: a pin on the admission path resolves against
/// a construct's versions as the view holds them, and most reviews find them unchanged since
/// the last. An entry is used only when the lookup returned the very objects it was read
/// from, in the same order (the same allocations, which the entry holds, so none can be
/// reused for another object while it lasts; a stored object is never changed in place): a
/// cache of a pure function of the objects, so the judgement is the same with it or without.
/// Bounded: emptied when full.
#[derive(Debug, Default)]
pub(crate) struct Versions(super::loaded::Kept<NameKey, Arc<Found>, VERSIONS_KEPT>);

/// The published versions of one logical name, read from `from`.
#[derive(Debug)]
pub(crate) struct Found {
    from: Vec<Arc<Value>>,
    /// Each published version with its object.
    pub(crate) candidates: Vec<(Published, Arc<Value>)>,
    /// The versions alone, as `resolve` and the support window take them.
    pub(crate) list: Vec<Published>,
}

/// (kind, scope, logical name): a namespaced kind's lookups differ by namespace.
#[derive(Debug, PartialEq, Eq, Hash)]
struct NameKey(String, String, String);

/// `NameKey` as the lookup spells it, before anything is allocated; hashes as `NameKey` does.
#[derive(Hash)]
struct NameRef<'a>(&'a str, &'a str, &'a str);

impl Equivalent<NameKey> for NameRef<'_> {
    fn equivalent(&self, key: &NameKey) -> bool {
        self.0 == key.0 && self.1 == key.1 && self.2 == key.2
    }
}

impl Versions {
    /// The published versions of `logical` among `objects`, the lookup of construct `kind`
    /// in `scope` (`None`: cluster-wide).
    pub(crate) fn of(
        &self,
        kind: &str,
        scope: Option<&str>,
        logical: &str,
        objects: Vec<Arc<Value>>,
    ) -> Arc<Found> {
        let key = NameRef(kind, scope.unwrap_or_default(), logical);
        let same = |found: &Arc<Found>| {
            let same = found.from.len() == objects.len()
                && found.from.iter().zip(&objects).all(|(a, b)| Arc::ptr_eq(a, b));
            same.then(|| found.clone())
        };
        if let Some(found) = self.0.find(&key, same).flatten() {
            return found;
        }
        let candidates = published(&objects, logical);
        let list = candidates.iter().map(|(p, _)| p.clone()).collect();
        let found = Arc::new(Found { from: objects, candidates, list });
        self.0.keep(NameKey(key.0.to_string(), key.1.to_string(), key.2.to_string()), found.clone());
        found
    }
}

/// CVN-410: deleting a construct version that consumers still pin.
pub fn retired(subject: &Subject, cx: &mut Context<'_>) {
    let Some(Ok(old)) = subject.old_object.as_ref().map(|o| o.value()) else { return };
    let kind = subject.gvk.kind.as_str();
    let logical = logical_name(old);
    let object = old.at("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
    let namespace = subject.namespace.as_deref();
    let budget = cx.budget;
    let Ok(siblings) =
        cx.cluster.lookup(GROUP, kind, scope(kind, namespace).as_deref(), &BY_LOGICAL_NAME, &logical, budget)
    else {
        return;
    };
    let mut candidates = published(&siblings, &logical);
    if !candidates.iter().any(|(p, _)| p.object == object) {
        let p = Published {
            object: object.clone(),
            version: declared_version(old).and_then(|v| semver::Version::parse(v).ok()),
            default: label(old, DEFAULT_LABEL) == Some("true"),
        };
        candidates.push((p, Arc::new(old.clone())));
    }
    let list: Vec<Published> = candidates.into_iter().map(|(p, _)| p).collect();
    let mut pinned = Vec::new();
    for consumer_kind in ["Component", "Project", "Resource"] {
        let key = referenced(kind, &logical);
        let Ok(consumers) = cx.cluster.lookup(GROUP, consumer_kind, None, &BY_REFERENCE, &key, budget) else {
            continue;
        };
        for c in consumers.iter() {
            for r in
                references(consumer_kind, c).into_iter().filter(|r| r.kind == kind && r.logical == logical)
            {
                let Ok(pin) = Pin::parse(&r.pin) else { continue };
                if resolve(&pin, &logical, &list).is_ok_and(|p| p.object == object) {
                    let ns = c.at("/metadata/namespace").and_then(Value::as_str);
                    let name = c.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
                    pinned.push(format!(
                        "{consumer_kind} {}{name}",
                        ns.map(|n| format!("{n}/")).unwrap_or_default()
                    ));
                }
            }
        }
    }
    if !pinned.is_empty() {
        let version = declared_version(old).unwrap_or("(unversioned)").to_string();
        cx.report(
            "CVN-410",
            "",
            vec![("version", format!("{object} ({version})")), ("consumers", pinned.join(", "))],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn construct(name: &str, version: &str) -> Arc<Value> {
        Arc::new(json!({
            "apiVersion": "openchoreo.dev/v1alpha1",
            "kind": "ClusterComponentType",
            "metadata": {"name": name, "labels": {NAME_LABEL: "web", VERSION_KEY: version}},
        }))
    }

    fn versions_of(found: &Found) -> Vec<String> {
        found.list.iter().map(|p| p.version.as_ref().map(ToString::to_string).unwrap_or_default()).collect()
    }

    #[test]
    fn a_logical_names_versions_are_read_again_only_when_the_lookup_returns_other_objects() {
        let versions = Versions::default();
        let (v1, v2) = (construct("web-v1", "1.0.0"), construct("web-v2", "2.0.0"));
        let first = versions.of("ClusterComponentType", None, "web", vec![v1.clone(), v2.clone()]);
        assert_eq!(versions_of(&first), ["1.0.0", "2.0.0"]);
        // The same objects: what was read, not a new reading.
        let again = versions.of("ClusterComponentType", None, "web", vec![v1.clone(), v2.clone()]);
        assert!(Arc::ptr_eq(&first, &again));
        // An object written again is another allocation, even with the same name: read again.
        let v2_relabelled = construct("web-v2", "2.1.0");
        let changed = versions.of("ClusterComponentType", None, "web", vec![v1.clone(), v2_relabelled]);
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(versions_of(&changed), ["1.0.0", "2.1.0"]);
        // A version removed, and another scope, each read on their own.
        assert_eq!(
            versions_of(&versions.of("ClusterComponentType", None, "web", vec![v1.clone()])),
            ["1.0.0"]
        );
        let scoped = versions.of("ComponentType", Some("team-a"), "web", vec![v2.clone()]);
        assert_eq!(versions_of(&scoped), ["2.0.0"]);
        // And what each returns is what `published` reads from the same objects.
        let direct = published(&[v1.clone(), v2.clone()], "web");
        let memo = versions.of("ClusterComponentType", None, "web", vec![v1, v2]);
        assert_eq!(memo.candidates.len(), direct.len());
        for ((a, oa), (b, ob)) in memo.candidates.iter().zip(&direct) {
            assert_eq!((&a.object, &a.version, a.default), (&b.object, &b.version, b.default));
            assert!(Arc::ptr_eq(oa, ob));
        }
    }
}
