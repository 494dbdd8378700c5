//! Kubernetes' own kinds (a Deployment, a Service, …) and the schemas `covenant check` holds
//! them to: the JSON Schemas the k8s-openapi crate carries for the Kubernetes release it was
//! generated from (`K8S`), one per kind, generated and loaded at first use. They state each
//! kind's fields, their types (int-or-string, int32/int64, date-time) and required fields, as
//! the API server's OpenAPI does; they do not state its enums or the validation the API
//! server runs in code (name formats, port ranges, immutable fields): those are not checked.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use k8s_openapi::Resource;

use crate::pointer::Location;
use crate::schema::openapi::{load, Dialect};
use crate::schema::Schema;

/// The Kubernetes release the schemas are of.
pub const K8S: &str = "1.33";

/// A kind's schema, generated from its type.
type Generate = fn() -> schemars::Schema;

/// (group, version, kind).
type Gvk = (&'static str, &'static str, &'static str);

/// A kind covenant knows the schema of: how to generate it, and the schema as loaded, once.
struct Kind {
    generate: Generate,
    loaded: OnceLock<Result<Arc<Schema>, String>>,
}

/// The kinds covenant knows the schema of, by (group, version, kind).
fn table() -> &'static HashMap<Gvk, Kind> {
    static TABLE: OnceLock<HashMap<Gvk, Kind>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: HashMap<Gvk, Kind> = HashMap::new();
        macro_rules! kinds {
            ($($ty:ty),* $(,)?) => {
                $(t.insert(
                    (<$ty>::GROUP, <$ty>::VERSION, <$ty>::KIND),
                    Kind { generate: || schemars::schema_for!($ty), loaded: OnceLock::new() },
                );)*
            };
        }
        use k8s_openapi::api::{
            admissionregistration::v1 as admission, apps::v1 as apps, autoscaling::v2 as autoscaling,
            batch::v1 as batch, coordination::v1 as coordination, core::v1 as core,
            networking::v1 as networking, policy::v1 as policy, rbac::v1 as rbac,
            scheduling::v1 as scheduling, storage::v1 as storage,
        };
        kinds!(
            core::Pod,
            core::Service,
            core::ConfigMap,
            core::Secret,
            core::ServiceAccount,
            core::PersistentVolumeClaim,
            core::PersistentVolume,
            core::Namespace,
            core::LimitRange,
            core::ResourceQuota,
            core::Endpoints,
            apps::Deployment,
            apps::StatefulSet,
            apps::DaemonSet,
            apps::ReplicaSet,
            batch::Job,
            batch::CronJob,
            networking::Ingress,
            networking::IngressClass,
            networking::NetworkPolicy,
            autoscaling::HorizontalPodAutoscaler,
            policy::PodDisruptionBudget,
            rbac::Role,
            rbac::RoleBinding,
            rbac::ClusterRole,
            rbac::ClusterRoleBinding,
            k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
            storage::StorageClass,
            scheduling::PriorityClass,
            coordination::Lease,
            admission::ValidatingWebhookConfiguration,
            admission::MutatingWebhookConfiguration,
            admission::ValidatingAdmissionPolicy,
            admission::ValidatingAdmissionPolicyBinding,
        );
        t
    })
}

/// API versions Kubernetes served once and no longer does, by (group, version, kinds), with
/// the release that stopped serving them and the version that replaces them (Kubernetes'
/// deprecated API migration guide): a manifest still written for one is refused by the API
/// server of any later release.
const REMOVED: &[(&str, &str, &[&str], &str, &str)] = &[
    ("extensions", "v1beta1", &["Deployment", "DaemonSet", "ReplicaSet"], "1.16", "apps/v1"),
    ("extensions", "v1beta1", &["NetworkPolicy"], "1.16", "networking.k8s.io/v1"),
    ("extensions", "v1beta1", &["Ingress"], "1.22", "networking.k8s.io/v1"),
    ("apps", "v1beta1", &["Deployment", "StatefulSet"], "1.16", "apps/v1"),
    ("apps", "v1beta2", &["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"], "1.16", "apps/v1"),
    ("networking.k8s.io", "v1beta1", &["Ingress", "IngressClass"], "1.22", "networking.k8s.io/v1"),
    (
        "rbac.authorization.k8s.io",
        "v1beta1",
        &["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"],
        "1.22",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io",
        "v1beta1",
        &["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"],
        "1.22",
        "admissionregistration.k8s.io/v1",
    ),
    ("scheduling.k8s.io", "v1beta1", &["PriorityClass"], "1.22", "scheduling.k8s.io/v1"),
    ("coordination.k8s.io", "v1beta1", &["Lease"], "1.22", "coordination.k8s.io/v1"),
    ("batch", "v1beta1", &["CronJob"], "1.25", "batch/v1"),
    ("policy", "v1beta1", &["PodDisruptionBudget"], "1.25", "policy/v1"),
    ("autoscaling", "v2beta1", &["HorizontalPodAutoscaler"], "1.25", "autoscaling/v2"),
    ("autoscaling", "v2beta2", &["HorizontalPodAutoscaler"], "1.26", "autoscaling/v2"),
];

/// When Kubernetes stopped serving this group, version and kind, and what replaces it.
pub fn removed(group: &str, version: &str, kind: &str) -> Option<(&'static str, &'static str)> {
    REMOVED
        .iter()
        .find(|(g, v, kinds, _, _)| *g == group && *v == version && kinds.contains(&kind))
        .map(|(_, _, _, release, replacement)| (*release, *replacement))
}

/// The schema of a Kubernetes kind, when covenant carries it (generated and loaded at its first
/// use): `None` for any other kind; an error when it could not be loaded (said, never passed
/// silently).
pub fn schema(group: &str, version: &str, kind: &str) -> Option<Result<Arc<Schema>, String>> {
    let entry = table().get(&(group, version, kind))?;
    let loaded = entry.loaded.get_or_init(|| {
        let mut value = (entry.generate)().to_value();
        // A quantity is written as a string or a number (`cpu: 0.5`): the API server reads either.
        if let Some(quantity) = value.pointer_mut("/$defs/io.k8s.apimachinery.pkg.api.resource.Quantity") {
            *quantity = serde_json::json!({"type": ["string", "number"]});
        }
        load(&value, &Location::default(), Dialect::JsonSchema).map(Arc::new).map_err(|problems| {
            let first = problems.first().map(ToString::to_string).unwrap_or_default();
            format!("the k8s-openapi schema of {kind} cannot be read: {first}")
        })
    });
    Some(loaded.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of the table loads into covenant's model, closed where Kubernetes declares
    /// fields.
    #[test]
    fn every_kind_carried_loads() {
        for (group, version, kind) in table().keys() {
            let s = schema(group, version, kind).unwrap().unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert!(s.properties.contains_key("metadata"), "{kind}");
        }
        assert!(schema("apps", "v1", "Deploymnt").is_none());
        assert_eq!(removed("batch", "v1beta1", "CronJob"), Some(("1.25", "batch/v1")));
        assert!(removed("batch", "v1", "CronJob").is_none());
    }
}
