//! The `defined` family: a custom resource, a Crossplane composite or claim, judged against
//! the served version of the CRD or XRD that defines it, as the API server validates it with
//! strict field validation — undeclared fields (CVN-102, with the nearest declared name),
//! types, enums, bounds, patterns, formats, list types and `x-kubernetes-validations` CEL
//! rules (CVN-103), required keys (CVN-104), a version the definition does not serve
//! (CVN-106). Its metadata is held to ObjectMeta's fields, as the API server holds every
//! object's.
//!
//! It judges objects of every kind no other family claims, and only those whose definition
//! the cluster view holds: in `covenant check`, the CRDs and XRDs among the checked files,
//! `--context` or `--cluster`; at admission (where the API server already validates the
//! custom resources it serves) only when the config asks (`customResources.admission`).
//! A kind nothing defines is not this family's: it stays unjudged, as before.

pub mod kubernetes;

use std::sync::Arc;

use serde_json::Value;

use super::launcher::property_problem;
use super::loaded::{Loaded, Read};
use super::schema_bearing::{crossplane_machinery, Flavor};
use super::{Claim, Context, Family};
use crate::cluster::{Error as LookupError, Index};
use crate::pointer::{At, Location};
use crate::rules::Action;
use crate::schema::defaults::defaulted;
use crate::schema::evaluate::Evaluator;
use crate::schema::openapi::{load, Dialect};
use crate::schema::validate::{validate_evaluating, Required};
use crate::schema::{Additional, Schema, Type};
use crate::subject::{Operation, Subject};

/// Where a CRD or XRD is found by the kinds it defines: `group/Kind`, for the composite (or
/// custom resource) and, for an XRD that offers one, its claim.
pub const BY_DEFINED_KIND: Index = Index { name: "defined-kind", keys: defined_kinds };

fn defined_kinds(definition: &Value) -> Vec<String> {
    let Some(group) = definition.at("/spec/group").and_then(Value::as_str) else { return Vec::new() };
    ["/spec/names/kind", "/spec/claimNames/kind"]
        .iter()
        .filter_map(|p| definition.at(p).and_then(Value::as_str))
        .map(|kind| format!("{group}/{kind}"))
        .collect()
}

/// Where apiextensions.k8s.io/v1beta1 kept one schema for every version without its own.
const WHOLE_SCHEMA: &str = "/spec/validation/openAPIV3Schema";

/// The family.
#[derive(Debug, Default)]
pub struct Defined {
    /// Whether custom resources read from files are judged (`customResources.check`).
    check: bool,
    /// Whether custom resources under admission are judged (`customResources.admission`).
    admission: bool,
    /// Whether Kubernetes' own kinds read from files are judged (`kubernetesKinds.check`);
    /// never under admission, where the API server validates them itself.
    kubernetes: bool,
    schemas: Loaded,
}

impl Defined {
    /// The family, judging what the config's switches say.
    pub fn new(custom: crate::config::CustomResources, kubernetes: bool) -> Defined {
        Defined { check: custom.check, admission: custom.admission, kubernetes, schemas: Loaded::default() }
    }
}

thread_local! {
    /// The evaluator of custom resources (patterns, formats, list types, CEL rules), one per
    /// thread: what it compiles is kept across objects, as the schemas are.
    static EVALUATOR: std::cell::RefCell<Option<Evaluator>> = const { std::cell::RefCell::new(None) };
}

/// The definition found for an object, and which flavor it is.
struct Definition {
    flavor: Flavor,
    object: Arc<Value>,
}

impl Definition {
    fn name(&self) -> &str {
        self.object.at("/metadata/name").and_then(Value::as_str).unwrap_or("?")
    }

    /// `CustomResourceDefinition httproutes.gateway.networking.k8s.io version v1`.
    fn owner(&self, version: &str) -> String {
        format!("{} {} version {version}", self.flavor.kind(), self.name())
    }

    /// The served versions, in the definition's order.
    fn served(&self) -> Vec<&str> {
        self.versions().filter(|(_, v)| served(v)).map(|(name, _)| name).collect()
    }

    /// Each listed version by name (a v1beta1 CRD's single `spec.version` too).
    fn versions(&self) -> impl Iterator<Item = (&str, &Value)> {
        let listed = self.object.at("/spec/versions").and_then(Value::as_array);
        let single = match listed {
            Some(_) => None,
            None => self.object.at("/spec/version").and_then(Value::as_str).map(|v| (v, &*self.object)),
        };
        listed
            .into_iter()
            .flatten()
            .filter_map(|v| v.get("name").and_then(Value::as_str).map(|n| (n, v)))
            .chain(single)
    }

    /// Where the schema of `version` lies in the definition, when it states one.
    fn schema_pointer(&self, version: &str) -> Option<String> {
        let listed = self.object.at("/spec/versions").and_then(Value::as_array);
        let index =
            listed.into_iter().flatten().position(|v| v.get("name").and_then(Value::as_str) == Some(version));
        let own = index.map(|i| format!("/spec/versions/{i}/schema/openAPIV3Schema"));
        own.filter(|p| self.object.at(p).is_some()).or_else(|| {
            (self.flavor == Flavor::Crd && self.object.at(WHOLE_SCHEMA).is_some())
                .then(|| WHOLE_SCHEMA.into())
        })
    }
}

/// A version entry is served (a v1beta1 CRD's single version always is).
fn served(v: &Value) -> bool {
    v.get("served").and_then(Value::as_bool).unwrap_or(v.get("spec").is_some())
}

impl Family for Defined {
    fn name(&self) -> &'static str {
        "defined"
    }

    fn claims(&self) -> Vec<Claim> {
        vec![Claim::Defined]
    }

    fn reading(&self) -> crate::subject::Reading {
        crate::subject::Reading::Whole
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        if subject.operation == Operation::Delete {
            cx.decline();
            return;
        }
        if !subject.admitted && self.kubernetes {
            let gvk = &subject.gvk;
            if let Some(schema) = kubernetes::schema(&gvk.group, &gvk.version, &gvk.kind) {
                let owner =
                    format!("{} {} (Kubernetes {} schema)", api_version(subject), gvk.kind, kubernetes::K8S);
                self.hold(subject, schema.map(Some), &owner, cx);
                return;
            }
            if let Some((release, replacement)) = kubernetes::removed(&gvk.group, &gvk.version, &gvk.kind) {
                let args = vec![
                    (
                        "schema",
                        format!(
                            "{} (Kubernetes stopped serving {} in {release})",
                            gvk.kind,
                            api_version(subject)
                        ),
                    ),
                    ("found", api_version(subject)),
                    ("expected", replacement.to_string()),
                ];
                cx.report("CVN-106", "/apiVersion", args);
                return;
            }
        }
        if !(if subject.admitted { self.admission } else { self.check }) {
            cx.decline();
            return;
        }
        let definition = match find(subject, cx) {
            Ok(Some(definition)) => definition,
            Ok(None) => {
                cx.decline();
                return;
            }
            // Said under the failure policy (CVN-901).
            Err(()) => return,
        };
        let version = subject.gvk.version.as_str();
        let entry = definition.versions().find(|(name, _)| *name == version).map(|(_, v)| v);
        if !entry.is_some_and(served) {
            let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return };
            let resource = resource(subject, doc);
            let served = definition.served();
            let expected =
                if served.is_empty() { "(none served)".to_string() } else { served.join("\" or \"") };
            let args = vec![
                ("schema", format!("{resource} ({} {})", definition.flavor.kind(), definition.name())),
                ("found", version.to_string()),
                ("expected", expected),
            ];
            cx.report("CVN-106", "/apiVersion", args);
            return;
        }
        let owner = definition.owner(version);
        self.hold(subject, self.schema(&definition, version), &owner, cx);
    }
}

/// `apps/v1`, or `v1` for the core group.
fn api_version(subject: &Subject) -> String {
    match subject.gvk.group.as_str() {
        "" => subject.gvk.version.clone(),
        group => format!("{group}/{}", subject.gvk.version),
    }
}

impl Defined {
    /// Hold the subject's object to `schema` (as read), after the defaults it states: every
    /// problem a finding, and what covenant cannot evaluate a warning.
    fn hold(&self, subject: &Subject, schema: Read, owner: &str, cx: &mut Context<'_>) {
        let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return };
        let resource = resource(subject, doc);
        let schema = match schema {
            Ok(Some(schema)) => schema,
            // A version that states no schema (apiextensions.k8s.io/v1beta1 allowed it) takes
            // any value: there is nothing to hold the object to.
            Ok(None) => return,
            Err(why) => {
                let found =
                    format!("a schema covenant cannot read ({why}), so nothing of {resource} was checked");
                unprovable(owner, found, cx);
                return;
            }
        };
        let (outcome, unprovables) = EVALUATOR.with_borrow_mut(|slot| {
            let ev = slot.get_or_insert_with(Evaluator::new);
            ev.forget_when_large();
            ev.set_stop(cx.stop.flag());
            ev.unprovable.clear();
            // As the API server does: defaults first, then validation.
            let defaulted = defaulted(&schema, doc);
            let doc = defaulted.as_ref().unwrap_or(doc);
            let outcome = validate_evaluating(&schema, doc, &Location::default(), Required::Everywhere, ev);
            (outcome, std::mem::take(&mut ev.unprovable))
        });
        for v in outcome.violations {
            let (id, pointer, args) = property_problem(owner, None, Some(&resource), v);
            cx.report(id, pointer, args);
        }
        for why in unprovables {
            unprovable(owner, format!("a value covenant cannot fully check: {why}"), cx);
        }
    }

    /// The schema `version` of `definition` holds an object to: its own, with the members the
    /// API server owns (apiVersion, kind, metadata as ObjectMeta) and, for an XRD, Crossplane's
    /// machinery and status, as the CRD Crossplane generates from it declares them.
    fn schema(&self, definition: &Definition, version: &str) -> Read {
        let Some(pointer) = definition.schema_pointer(version) else { return Ok(None) };
        let flavor = definition.flavor;
        self.schemas.read(&definition.object, &pointer, |d| {
            let Some(raw) = d.at(&pointer) else { return Ok(None) };
            let mut schema =
                load(raw, &Location::new(pointer.clone(), ""), Dialect::OpenApi).map_err(|problems| {
                    let more = if problems.len() > 1 {
                        format!(" (and {} more)", problems.len() - 1)
                    } else {
                        String::new()
                    };
                    format!("{}{more}", problems.first().map(ToString::to_string).unwrap_or_default())
                })?;
            if schema.types.is_empty() {
                schema.types = smallvec::smallvec![Type::Object];
            }
            schema.properties.insert("apiVersion".into(), Arc::new(Schema::of(Type::String)));
            schema.properties.insert("kind".into(), Arc::new(Schema::of(Type::String)));
            schema.properties.insert("metadata".into(), Arc::new(object_meta()));
            if flavor == Flavor::Xrd {
                crossplane_machinery(&mut schema);
            }
            Ok(Some(Arc::new(schema)))
        })
    }
}

/// ObjectMeta as the API server reads it in a request: its fields, of their types (maps of
/// strings for labels and annotations); anything else is an unknown field.
fn object_meta() -> Schema {
    let strings = || {
        let mut map = Schema::of(Type::Object);
        map.additional = Additional::Schema(Arc::new(Schema::of(Type::String)));
        map
    };
    let mut meta = Schema::object([
        ("name", Schema::of(Type::String)),
        ("generateName", Schema::of(Type::String)),
        ("namespace", Schema::of(Type::String)),
        ("labels", strings()),
        ("annotations", strings()),
        ("finalizers", Schema::array(Schema::of(Type::String))),
        ("ownerReferences", Schema::array(Schema::any())),
        ("uid", Schema::of(Type::String)),
        ("resourceVersion", Schema::of(Type::String)),
        ("generation", Schema::of(Type::Integer)),
        ("creationTimestamp", Schema::any()),
        ("deletionTimestamp", Schema::any()),
        ("deletionGracePeriodSeconds", Schema::of(Type::Integer)),
        ("managedFields", Schema::array(Schema::any())),
        ("selfLink", Schema::of(Type::String)),
    ]);
    meta.additional = Additional::Closed;
    meta
}

/// `HTTPRoute shop/web`, or `XNopResource nop-1` for a cluster-scoped object.
fn resource(subject: &Subject, doc: &Value) -> String {
    let name = doc.at("/metadata/name").and_then(Value::as_str).unwrap_or(&subject.name);
    let namespace =
        subject.namespace.as_deref().or_else(|| doc.at("/metadata/namespace").and_then(Value::as_str));
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{} {ns}/{name}", subject.gvk.kind),
        _ => format!("{} {name}", subject.gvk.kind),
    }
}

/// The definition of the subject's kind the cluster view holds: a CRD, else an XRD (whose
/// claims it defines too). `None` when none does, or when there is no cluster state to look
/// in (the kind stays unjudged, as any kind nothing defines); `Err` when a lookup failed,
/// which is said under the failure policy.
fn find(subject: &Subject, cx: &mut Context<'_>) -> Result<Option<Definition>, ()> {
    let key = format!("{}/{}", subject.gvk.group, subject.gvk.kind);
    for flavor in [Flavor::Crd, Flavor::Xrd] {
        match cx.cluster.lookup(flavor.group(), flavor.kind(), None, &BY_DEFINED_KIND, &key, cx.budget) {
            Ok(found) => {
                if let Some(object) = found.into_iter().next() {
                    return Ok(Some(Definition { flavor, object }));
                }
            }
            Err(LookupError::Offline { .. }) => {}
            Err(e) => {
                cx.lookup_failed("CVN-102", &e);
                return Err(());
            }
        }
    }
    Ok(None)
}

/// What covenant could not check: a CVN-103 warning naming it, never a silent pass.
fn unprovable(owner: &str, found: String, cx: &mut Context<'_>) {
    let args = vec![
        ("property", "(object)".to_string()),
        ("owner", owner.to_string()),
        ("expected", "what its schema states".to_string()),
        ("found", found),
    ];
    cx.report_change("CVN-103", "", args, None, Some(Action::Warn));
}
