//! Kubernetes' own kinds (a Deployment, a Service, …) and the schemas `covenant check` holds
//! them to: the JSON Schemas the k8s-openapi crate carries for the Kubernetes release it was
//! generated from (`K8S`), one per kind, generated and loaded at first use. They state each
//! kind's fields, their types (int-or-string, int32/int64, date-time) and required fields, as
//! the API server's OpenAPI does; they do not state its enums or the validation the API
//! server runs in code (name formats, port ranges, immutable fields): those are not checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::Resource;

use crate::pointer::Location;
use crate::schema::openapi::{load, Dialect};
use crate::schema::Schema;

/// The Kubernetes release the schemas are of.
pub const K8S: &str = "1.33";

/// A kind's schema, generated from its type.
type Generate = fn() -> schemars::Schema;

/// The kinds covenant knows the schema of, by (group, version, kind).
fn table() -> &'static HashMap<(&'static str, &'static str, &'static str), Generate> {
    static TABLE: OnceLock<HashMap<(&'static str, &'static str, &'static str), Generate>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: HashMap<(&'static str, &'static str, &'static str), Generate> = HashMap::new();
        macro_rules! kinds {
            ($($ty:ty),* $(,)?) => {
                $(t.insert((<$ty>::GROUP, <$ty>::VERSION, <$ty>::KIND), || schemars::schema_for!($ty));)*
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

/// The loaded schemas, by kind: each generated and loaded once.
type Loaded = HashMap<(String, String, String), Result<Arc<Schema>, String>>;

/// The schema of a Kubernetes kind, when covenant carries it: `None` for any other kind; an
/// error when it could not be loaded (said, never passed silently).
pub fn schema(group: &str, version: &str, kind: &str) -> Option<Result<Arc<Schema>, String>> {
    static LOADED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    let generate = table().get(&(group, version, kind))?;
    let key = (group.to_string(), version.to_string(), kind.to_string());
    let loaded = LOADED.get_or_init(Mutex::default);
    if let Some(hit) = loaded.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Some(hit.clone());
    }
    let mut value = generate().to_value();
    // A quantity is written as a string or a number (`cpu: 0.5`): the API server reads either.
    if let Some(quantity) = value.pointer_mut("/$defs/io.k8s.apimachinery.pkg.api.resource.Quantity") {
        *quantity = serde_json::json!({"type": ["string", "number"]});
    }
    let read = load(&value, &Location::default(), Dialect::JsonSchema).map(Arc::new).map_err(|problems| {
        let first = problems.first().map(ToString::to_string).unwrap_or_default();
        format!("the k8s-openapi schema of {kind} cannot be read: {first}")
    });
    loaded.lock().unwrap_or_else(|e| e.into_inner()).insert(key, read.clone());
    Some(read)
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
    }
}
