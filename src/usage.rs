//! Who uses which version of each construct: the picture `covenant status`, the read API's
//! `/api/v0/status`, the console and the usage metrics show, counted by the one resolution of
//! pins the consumer family judges with (`versioning::resolve`), so no face counts on its own.

use std::sync::Arc;

use serde_json::Value;

use crate::families::consumer::SupportWindow;
use crate::families::labels::logical_name;
use crate::families::pins::{published, references};
use crate::openchoreo::GROUP;
use crate::pointer::At;
use crate::versioning::{resolve, Pin, Published};

/// Who uses which version: for every logical construct (by `openchoreo.dev/name`, per kind and
/// namespace), its published versions, the default, and its consumers per resolved version —
/// pinned and floating, resolved by the same `resolve` the webhook uses, and frozen in
/// ComponentReleases (the version each recorded, traits included) — with the references that
/// resolve to nothing, and the upgrade gap (constructs that declare no version). One
/// `satisfies()`, so the answer is the admission's answer.
pub fn usage(
    cluster: &dyn crate::cluster::ClusterView,
    construct_kinds: &[String],
    consumer_kinds: &[String],
) -> Result<Value, crate::cluster::Error> {
    use std::collections::BTreeMap;
    type Key = (String, Option<String>, String);
    struct Entry {
        published: Vec<(Published, Arc<Value>)>,
        pinned: BTreeMap<String, Vec<String>>,
        floating: BTreeMap<String, Vec<String>>,
        frozen: BTreeMap<String, Vec<String>>,
        unresolved: Vec<Value>,
    }
    let mut constructs: BTreeMap<Key, Entry> = BTreeMap::new();
    for kind in construct_kinds {
        let objects = cluster.list(GROUP, kind, None, None)?;
        let mut names: Vec<(Option<String>, String)> = objects
            .iter()
            .map(|o| {
                let ns = (!kind.starts_with("Cluster"))
                    .then(|| o.at("/metadata/namespace").and_then(Value::as_str).map(str::to_string))
                    .flatten();
                (ns, logical_name(o))
            })
            .collect();
        names.sort();
        names.dedup();
        for (ns, logical) in names {
            let in_scope: Vec<Arc<Value>> = objects
                .iter()
                .filter(|o| {
                    ns.is_none() || o.at("/metadata/namespace").and_then(Value::as_str) == ns.as_deref()
                })
                .cloned()
                .collect();
            let entry = Entry {
                published: published(&in_scope, &logical),
                pinned: BTreeMap::new(),
                floating: BTreeMap::new(),
                frozen: BTreeMap::new(),
                unresolved: Vec::new(),
            };
            constructs.insert((kind.clone(), ns, logical), entry);
        }
    }
    let key_of = |kind: &str, namespace: Option<&str>, logical: &str| -> Key {
        let ns = if kind.starts_with("Cluster") { None } else { namespace.map(str::to_string) };
        (kind.to_string(), ns, logical.to_string())
    };
    let who = |kind: &str, o: &Value| {
        let name = o.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
        match o.at("/metadata/namespace").and_then(Value::as_str) {
            Some(ns) => format!("{kind} {ns}/{name}"),
            None => format!("{kind} {name}"),
        }
    };
    for kind in consumer_kinds {
        for o in cluster.list(GROUP, kind, None, None)? {
            let namespace = o.at("/metadata/namespace").and_then(Value::as_str);
            for r in references(kind, &o) {
                let Some(entry) = constructs.get_mut(&key_of(&r.kind, namespace, &r.logical)) else {
                    continue;
                };
                let list: Vec<Published> = entry.published.iter().map(|(p, _)| p.clone()).collect();
                let consumer = who(kind, &o);
                let resolved = Pin::parse(&r.pin).map_err(|e| e.reason).and_then(|pin| {
                    resolve(&pin, &r.logical, &list).map(|p| (pin, p.clone())).map_err(|e| e.to_string())
                });
                match resolved {
                    Ok((pin, p)) => {
                        let version = p.version.map(|v| v.to_string()).unwrap_or_else(|| p.object.clone());
                        let map = if pin == Pin::Floating { &mut entry.floating } else { &mut entry.pinned };
                        let shown = if r.pin.is_empty() {
                            consumer
                        } else {
                            format!("{consumer} (pin \"{}\")", r.pin)
                        };
                        map.entry(version).or_default().push(shown);
                    }
                    Err(why) => entry
                        .unresolved
                        .push(serde_json::json!({"consumer": consumer, "pin": r.pin, "reason": why})),
                }
            }
        }
    }
    for release in cluster.list(GROUP, "ComponentRelease", None, None).unwrap_or_default() {
        let namespace = release.at("/metadata/namespace").and_then(Value::as_str);
        let recorded = release.at("/spec/componentType").into_iter().map(|c| (c, "ComponentType")).chain(
            release
                .at("/spec/componentProfile/traits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|t| (t, "Trait")),
        );
        for (r, default_kind) in recorded {
            let kind = r.get("kind").and_then(Value::as_str).unwrap_or(default_kind);
            let Some(name) = r.get("name").and_then(Value::as_str) else { continue };
            let logical = name.rsplit('/').next().unwrap_or(name);
            let Some(version) = r.get("version").and_then(Value::as_str) else { continue };
            if let Some(entry) = constructs.get_mut(&key_of(kind, namespace, logical)) {
                entry.frozen.entry(version.to_string()).or_default().push(who("ComponentRelease", &release));
            }
        }
    }
    let mut gap = 0;
    let list: Vec<Value> = constructs
        .into_iter()
        .map(|((kind, namespace, name), e)| {
            let mut published: Vec<&(Published, Arc<Value>)> = e.published.iter().collect();
            published.sort_by(|a, b| b.0.version.cmp(&a.0.version));
            if published.iter().any(|(p, _)| p.version.is_none()) {
                gap += 1;
            }
            let version_of = |p: &Published| p.version.as_ref().map(|v| v.to_string()).unwrap_or_else(|| p.object.clone());
            let default = published.iter().find(|(p, _)| p.default).map(|(p, _)| version_of(p));
            let list: Vec<Published> = published.iter().map(|(p, _)| p.clone()).collect();
            let window = SupportWindow::of(&list);
            let (mut below_newest, mut outside) = (0, 0);
            let versions: Vec<Value> = published
                .iter()
                .map(|(p, _)| {
                    let v = version_of(p);
                    let of = |m: &BTreeMap<String, Vec<String>>| m.get(&v).cloned().unwrap_or_default();
                    // Releases are frozen on purpose: only live pins and floats count as behind.
                    let using = of(&e.pinned).len() + of(&e.floating).len();
                    let supported = match (&window, &p.version) {
                        (Some(w), Some(version)) => {
                            if version < &w.newest {
                                below_newest += using;
                            }
                            w.supports(version)
                        }
                        _ => false,
                    };
                    if !supported {
                        outside += using;
                    }
                    serde_json::json!({"version": v, "object": p.object, "default": p.default, "supported": supported,
                        "consumers": {"pinned": of(&e.pinned), "floating": of(&e.floating), "frozen": of(&e.frozen)}})
                })
                .collect();
            serde_json::json!({"kind": kind, "namespace": namespace, "name": name, "default": default,
                "newest": window.as_ref().map(|w| w.newest.to_string()), "window": window.as_ref().map(SupportWindow::range),
                "versions": versions, "belowNewest": below_newest, "outsideWindow": outside, "unresolved": e.unresolved})
        })
        .collect();
    Ok(serde_json::json!({"constructs": list, "upgradeGap": gap}))
}
