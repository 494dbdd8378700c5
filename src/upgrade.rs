//! Will this manifest still apply? For a consumer (a Component, Project or Resource) and each
//! construct it names: what it resolves to now, the newest supported version (or a chosen
//! one), the pin move that reaches it (the major pin), the contract diff between the two, and
//! whether the consumer itself — its parameters and traits — validates against the target,
//! judged by the same engine with the pin moved — and whether each of its ReleaseBindings'
//! environment configs for that construct validate against the target, judged as a release
//! that froze the target would judge them. One answer for `covenant upgrade` and the admin
//! API's `/api/v0/upgrade`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cluster::{ClusterView, Error};
use crate::contract::ContractDiff;
use crate::engine::Engine;
use crate::families::construct::GROUP;
use crate::families::consumer::SupportWindow;
use crate::families::labels::BY_LOGICAL_NAME;
use crate::families::pins::{published, referenced, references, scope, BY_REFERENCE};
use crate::families::schema_bearing::Outline;
use crate::pointer::At;
use crate::rules::Finding;
use crate::subject::Subject;
use crate::versioning::{resolve, Pin, Published};

/// The upgrade of one reference.
#[derive(Debug)]
pub struct Plan {
    /// Where the reference is (`/spec/componentType`).
    pub pointer: String,
    /// The construct kind and logical name.
    pub kind: String,
    /// The logical name.
    pub name: String,
    /// The pin as written (empty: floating).
    pub pin: String,
    /// The version it resolves to now.
    pub from: semver::Version,
    /// The target version.
    pub to: semver::Version,
    /// The pin that reaches the target (its major, as the seed recommends).
    pub new_pin: String,
    /// The contract diff from what it resolves to now to the target.
    pub diff: ContractDiff,
    /// What the engine says of the consumer with the pin moved (denials and warnings).
    pub findings: Vec<Finding>,
    /// What it says of each ReleaseBinding of the consumer that configures this construct per
    /// environment, judged against the target (`ReleaseBinding ns/name`, its findings).
    pub bindings: Vec<(String, Vec<Finding>)>,
}

fn denies(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.action == crate::rules::Action::Deny)
}

fn findings_json(findings: &[Finding]) -> Vec<Value> {
    findings
        .iter()
        .map(|f| json!({"rule": f.rule.id, "action": f.action.as_str(), "pointer": f.pointer, "message": f.message}))
        .collect()
}

impl Plan {
    /// Whether the consumer would still apply with the pin moved.
    pub fn applies(&self) -> bool {
        !denies(&self.findings) && !self.bindings.iter().any(|(_, f)| denies(f))
    }

    /// The JSON the CLI and the admin API answer with.
    pub fn to_json(&self) -> Value {
        let bindings: Vec<Value> = self
            .bindings
            .iter()
            .map(|(b, f)| json!({"binding": b, "applies": !denies(f), "findings": findings_json(f)}))
            .collect();
        json!({"pointer": self.pointer, "kind": self.kind, "name": self.name, "pin": self.pin,
            "from": self.from.to_string(), "to": self.to.to_string(), "newPin": self.new_pin,
            "implied": self.diff.implied().as_str(), "diff": serde_json::from_str::<Value>(&crate::report::diff::render_json(&self.diff)).unwrap_or(Value::Null),
            "applies": self.applies(), "findings": findings_json(&self.findings), "bindings": bindings})
    }
}

/// The upgrades a consumer has: every reference resolving below the newest supported version
/// (or below `to`), each judged — the consumer itself, and its ReleaseBindings found in the
/// cluster view or among `siblings` (the other documents of the manifests being upgraded). An
/// error says why a reference cannot be planned.
pub fn plan(
    engine: &Engine,
    cluster: &dyn ClusterView,
    doc: &Value,
    to: Option<&semver::Version>,
    siblings: &[Value],
) -> Vec<Result<Plan, String>> {
    // A kind of another group (OAM's `core.oam.dev` Component) is not a consumer, whatever
    // its fields: the engine judges it by its own group, and so is it planned.
    let Some(kind) = openchoreo_kind(doc) else { return Vec::new() };
    let namespace = doc.at("/metadata/namespace").and_then(Value::as_str);
    let mut out = Vec::new();
    // The consumer's bindings, read once, when a reference first moves.
    let mut stored_bindings: Option<Result<Vec<Value>, String>> = None;
    for r in references(kind, doc) {
        let (pointer, construct_kind, name, pin) = (r.pointer, r.kind, r.logical, r.pin);
        let scope = scope(&construct_kind, namespace);
        let objects =
            match cluster.lookup(GROUP, &construct_kind, scope.as_deref(), &BY_LOGICAL_NAME, &name, None) {
                Ok(o) => o,
                Err(e) => {
                    out.push(Err(format!("{pointer}: {e}")));
                    continue;
                }
            };
        let candidates = published(&objects, &name);
        let published: Vec<Published> = candidates.iter().map(|(p, _)| p.clone()).collect();
        let current = match Pin::parse(&pin)
            .map_err(|e| e.reason)
            .and_then(|p| resolve(&p, &name, &published).map_err(|e| e.to_string()))
        {
            Ok(c) => c.clone(),
            Err(why) => {
                out.push(Err(format!("{pointer}: {construct_kind} {name} pin \"{pin}\": {why}")));
                continue;
            }
        };
        // A target this construct does not publish is no plan, whatever the pin resolves to
        // now: said, naming what is published, never "nothing to move".
        if let Some(t) = to.filter(|t| !published.iter().any(|p| p.version.as_ref() == Some(*t))) {
            out.push(Err(format!(
                "{pointer}: {construct_kind} {name} is not published at {t}; published: {}",
                crate::versioning::published_list(&published)
            )));
            continue;
        }
        let Some(from) = current.version.clone() else { continue };
        let target = match to {
            Some(t) => t.clone(),
            None => match SupportWindow::of(&published) {
                Some(w) => w.newest,
                None => continue,
            },
        };
        if from >= target {
            continue;
        }
        let object_at = |v: &semver::Version| {
            candidates.iter().find(|(p, _)| p.version.as_ref() == Some(v)).map(|(_, o)| (**o).clone())
        };
        let (Some(old), Some(new)) = (object_at(&from), object_at(&target)) else {
            out.push(Err(format!("{pointer}: {construct_kind} {name} is not published at {target}")));
            continue;
        };
        let diff = match crate::contract::compute(
            &Outline::of_value(&old),
            &Outline::of_value(&new),
            engine.policy(),
        ) {
            Ok(d) => d,
            Err(e) => {
                out.push(Err(format!("{pointer}: {e}")));
                continue;
            }
        };
        let new_pin = target.major.to_string();
        let mut moved = doc.clone();
        if let Some(r) = moved.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            r.insert("version".into(), Value::String(new_pin.clone()));
        }
        let verdict = engine.evaluate(&Subject::from_document(moved), cluster);
        // Only what the move is about: findings at this reference or its values.
        let findings = verdict.findings.into_iter().filter(|f| f.rule.id != "CVN-411").collect();
        let target_object = object_at(&target).unwrap_or_default();
        let frozen =
            Frozen { pointer: &pointer, kind: &construct_kind, version: &target, object: &target_object };
        let bindings = if kind == "Component" {
            match stored_bindings
                .get_or_insert_with(|| bindings_of(cluster, doc, siblings).map_err(|e| e.to_string()))
            {
                Ok(b) => b.iter().filter_map(|b| judge_binding(engine, cluster, doc, &frozen, b)).collect(),
                Err(e) => {
                    // Whether the move applies cannot be proved without them.
                    out.push(Err(format!("{pointer}: cannot read the Component's ReleaseBindings: {e}")));
                    continue;
                }
            }
        } else {
            Vec::new()
        };
        out.push(Ok(Plan {
            pointer,
            kind: construct_kind,
            name,
            pin,
            from,
            to: target,
            new_pin,
            diff,
            findings,
            bindings,
        }));
    }
    out
}

/// The kind of an object of OpenChoreo's group (`openchoreo.dev/<version>`); `None` for any
/// other object.
pub fn openchoreo_kind(doc: &Value) -> Option<&str> {
    (crate::subject::group_of(doc)? == GROUP).then(|| doc.get("kind").and_then(Value::as_str)).flatten()
}

/// The construct version a reference moves to, as a release would freeze it.
struct Frozen<'a> {
    /// The reference in the consumer (`/spec/componentType`, `/spec/traits/0`).
    pointer: &'a str,
    kind: &'a str,
    version: &'a semver::Version,
    /// The published object at that version.
    object: &'a Value,
}

/// The ReleaseBindings of a Component: in the cluster view and among the sibling documents
/// (which win: they are what is about to be applied), by `spec.owner.componentName`.
fn bindings_of(
    cluster: &dyn ClusterView,
    component: &Value,
    siblings: &[Value],
) -> Result<Vec<Value>, Error> {
    let namespace = component.at("/metadata/namespace").and_then(Value::as_str);
    let name = component.at("/metadata/name").and_then(Value::as_str);
    let owned = |b: &Value| {
        openchoreo_kind(b) == Some("ReleaseBinding")
            && b.at("/metadata/namespace").and_then(Value::as_str) == namespace
            && b.at("/spec/owner/componentName").and_then(Value::as_str) == name
    };
    let key = |b: &Value| b.at("/metadata/name").and_then(Value::as_str).map(str::to_string);
    let mut out: Vec<Value> = siblings.iter().filter(|b| owned(b)).cloned().collect();
    let stored = match cluster.list(GROUP, "ReleaseBinding", namespace, None) {
        Ok(stored) => stored,
        // Offline with no context: only the sibling documents are known.
        Err(Error::Offline { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    for b in stored.iter().filter(|b| owned(b)) {
        if !out.iter().any(|o| key(o) == key(b)) {
            out.push((**b).clone());
        }
    }
    Ok(out)
}

/// A binding's environment configs for the moved construct, judged as the engine judges a
/// binding whose release froze the target: a release that freezes the target's spec, as the
/// next release after the move would (only the configs of the moved construct are kept from
/// the verdict, so nothing else of the release matters). `None` when the binding configures
/// nothing of this construct.
fn judge_binding(
    engine: &Engine,
    cluster: &dyn ClusterView,
    component: &Value,
    frozen: &Frozen<'_>,
    binding: &Value,
) -> Option<(String, Vec<Finding>)> {
    let namespace = binding.at("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
    let reference = component.at(frozen.pointer)?;
    let name = reference.get("name").and_then(Value::as_str)?;
    let spec = frozen.object.get("spec").cloned().unwrap_or_default();
    // Never stored, so named for what it is: messages read "frozen by the next release".
    let release_name = "the next release".to_string();
    let mut release = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ComponentRelease",
        "metadata": {"name": release_name, "namespace": namespace}, "spec": {}});
    let values = if frozen.pointer == "/spec/componentType" {
        release["spec"]["componentType"] =
            json!({"kind": frozen.kind, "name": name, "version": frozen.version.to_string(), "spec": spec});
        "/spec/componentTypeEnvironmentConfigs".to_string()
    } else if frozen.pointer.starts_with("/spec/traits/") {
        let instance = reference.get("instanceName").and_then(Value::as_str).unwrap_or(name);
        release["spec"]["componentProfile"] = json!({"traits": [{"kind": frozen.kind, "name": name,
            "instanceName": instance, "version": frozen.version.to_string()}]});
        release["spec"]["traits"] = json!([{"kind": frozen.kind, "name": name, "spec": spec}]);
        format!("/spec/traitEnvironmentConfigs/{}", crate::pointer::escape(instance))
    } else {
        return None;
    };
    binding.at(&values)?;
    let mut moved = binding.clone();
    moved["spec"]["releaseName"] = Value::String(release_name);
    let view = WithRelease { base: cluster, release: Arc::new(release) };
    let verdict = engine.evaluate(&Subject::from_document(moved), &view);
    let within = |p: &str| p == values || p.starts_with(&format!("{values}/"));
    let findings = verdict.findings.into_iter().filter(|f| within(&f.pointer)).collect();
    let who = binding.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
    Some((format!("ReleaseBinding {namespace}/{who}"), findings))
}

/// A cluster view with one more ComponentRelease: the release a binding would have after the
/// upgrade.
struct WithRelease<'a> {
    base: &'a dyn ClusterView,
    release: Arc<Value>,
}

impl ClusterView for WithRelease<'_> {
    fn answers_without_waiting(&self, group: &str, kind: &str) -> bool {
        self.base.answers_without_waiting(group, kind)
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        let mut objects = self.base.list(group, kind, namespace, budget)?;
        let ns = self.release.at("/metadata/namespace").and_then(Value::as_str);
        if group == GROUP && kind == "ComponentRelease" && namespace.is_none_or(|n| Some(n) == ns) {
            objects.push(self.release.clone());
        }
        Ok(objects)
    }

    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &crate::cluster::Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        let mut objects = self.base.lookup(group, kind, namespace, index, key, budget)?;
        let ns = self.release.at("/metadata/namespace").and_then(Value::as_str);
        if group == GROUP
            && kind == "ComponentRelease"
            && namespace.is_none_or(|n| Some(n) == ns)
            && index.files(&self.release, key)
        {
            objects.push(self.release.clone());
        }
        Ok(objects)
    }
}

/// The text of a manifest with the `version:` of the reference at `pointer` set to `pin`, every
/// other byte kept; `None` when the reference writes no version to replace (a floating
/// reference gains one by hand).
pub fn write_pin(text: &str, doc_index: usize, pointer: &str, pin: &str) -> Option<String> {
    let docs = crate::source::parse_stream(text).0;
    let doc = docs.iter().find(|d| d.index == doc_index)?;
    let at = format!("{pointer}/version");
    let old = doc.value.at(&at)?.as_str()?;
    let pos = doc.positions.iter().find(|(p, _)| *p == at)?.1;
    let line_start: usize = text.split_inclusive('\n').take(pos.line - 1).map(str::len).sum();
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    // The value follows the key on its line; replace it, quoted the way it was.
    let key = line.find("version")?;
    let rest = &line[key..];
    let value_at = key + rest.find(old).filter(|i| *i > "version".len())?;
    let quoted = matches!(line.as_bytes().get(value_at.wrapping_sub(1)), Some(b'"' | b'\''));
    // An unquoted number would read back as a number, not a pin: quote what was bare.
    let written = if quoted { pin.to_string() } else { format!("\"{pin}\"") };
    let mut out = String::with_capacity(text.len() + 2);
    out.push_str(&text[..line_start + value_at]);
    out.push_str(&written);
    out.push_str(&text[line_start + value_at + old.len()..]);
    Some(out)
}

/// A consumer (`Component ns/web`) and the plans of its references to one construct.
pub type ConsumerPlans = (String, Vec<Result<Plan, String>>);

/// The upgrades of every stored consumer of one construct (`kind`, logical `name`; for a
/// namespaced kind, those in `namespace`): per consumer (`Component ns/web`), the plans of its
/// references to that construct, at most `limit` consumers, and how many more there were. What
/// the console's construct page shows; the same plan `covenant upgrade` makes of each.
pub fn of_construct(
    engine: &Engine,
    cluster: &dyn ClusterView,
    consumer_kinds: &[String],
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    limit: usize,
) -> Result<(Vec<ConsumerPlans>, usize), Error> {
    let scope = namespace.filter(|_| !kind.starts_with("Cluster"));
    let (mut out, mut more) = (Vec::new(), 0);
    for consumer_kind in consumer_kinds {
        let key = referenced(kind, name);
        for o in cluster.lookup(GROUP, consumer_kind, scope, &BY_REFERENCE, &key, None)? {
            let pointers: Vec<String> = references(consumer_kind, &o)
                .into_iter()
                .filter(|r| r.kind == kind && r.logical == name)
                .map(|r| r.pointer)
                .collect();
            if pointers.is_empty() {
                continue;
            }
            if out.len() == limit {
                more += 1;
                continue;
            }
            let ns = o.at("/metadata/namespace").and_then(Value::as_str);
            let obj = o.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
            let who =
                ns.map_or_else(|| format!("{consumer_kind} {obj}"), |n| format!("{consumer_kind} {n}/{obj}"));
            // Only the references to this construct: a plan names its pointer, an error
            // begins with it.
            let ours = |p: &Result<Plan, String>| match p {
                Ok(p) => pointers.contains(&p.pointer),
                Err(why) => pointers.iter().any(|at| why.starts_with(&format!("{at}:"))),
            };
            let plans: Vec<Result<Plan, String>> =
                plan(engine, cluster, &o, None, &[]).into_iter().filter(ours).collect();
            out.push((who, plans));
        }
    }
    Ok((out, more))
}
