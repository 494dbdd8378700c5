//! The raw shape of `covenant.yaml` (`covenant.dev/v1alpha1`, `kind: Config`). Decoded by
//! `strict::decode`, so every undeclared member is reported; `Config::from_file` then
//! resolves and validates the values.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `covenant.yaml` as written.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFile {
    /// Checked to be `covenant.dev/v1alpha1` before decoding.
    #[allow(dead_code)]
    pub api_version: String,
    /// Checked to be `Config` before decoding.
    #[allow(dead_code)]
    pub kind: String,
    /// Optional name, for humans.
    #[serde(default)]
    #[allow(dead_code)]
    pub metadata: Option<Metadata>,
    /// Rule selection and actions.
    #[serde(default)]
    pub rules: Rules,
    /// Families to judge; absent means all.
    #[serde(default)]
    pub families: Option<Vec<String>>,
    /// The document kinds a family judges, for the families whose list is configurable
    /// (`construct`, `consumer`).
    #[serde(default)]
    pub kinds: BTreeMap<String, Vec<String>>,
    /// Stability policy per family (`always`, `from-ga`, `declared-bump`).
    #[serde(default)]
    pub stability: BTreeMap<String, String>,
    /// Which CRDs and XRDs have their evolution enforced.
    #[serde(default)]
    pub evolution: Evolution,
    /// Extra registry files, or directories of them (relative to the config file).
    #[serde(default)]
    pub registries: Vec<String>,
    /// Exemptions.
    #[serde(default)]
    pub exemptions: Vec<Exemption>,
    /// Cluster lookups.
    #[serde(default)]
    pub cluster: Cluster,
    /// Mutation switches.
    #[serde(default)]
    pub mutation: Mutation,
    /// Server knobs that belong in the file rather than flags.
    #[serde(default)]
    pub server: Server,
    /// `customResources`.
    #[serde(default)]
    pub custom_resources: CustomResources,
    /// `kubernetesKinds`.
    #[serde(default)]
    pub kubernetes_kinds: KubernetesKinds,
    /// `launcher`.
    #[serde(default)]
    pub launcher: Launcher,
}

/// `metadata`.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    /// A name for humans.
    #[allow(dead_code)]
    pub name: Option<String>,
}

/// `rules`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rules {
    /// Ids or categories to run; empty means all.
    #[serde(default)]
    pub select: Vec<String>,
    /// Ids or categories to turn off.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Id or category to action.
    #[serde(default)]
    pub actions: BTreeMap<String, String>,
}

/// One `exemptions` entry.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exemption {
    /// Namespaces, exact.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Name globs.
    #[serde(default)]
    pub names: Vec<String>,
    /// Users, exact.
    #[serde(default)]
    pub users: Vec<String>,
    /// User groups, exact (any one of the requester's groups).
    #[serde(default)]
    pub groups: Vec<String>,
    /// Rule ids or categories: only their findings are exempted; empty: the whole object.
    #[serde(default)]
    pub rules: Vec<String>,
    /// Why; required.
    #[serde(default)]
    pub reason: Option<String>,
    /// RFC 3339 instant after which the exemption ends.
    #[serde(default)]
    pub expires: Option<String>,
}

/// `evolution`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evolution {
    /// The label whose value `enforce` opts a CRD or XRD in.
    #[serde(default)]
    pub enforce_label: Option<String>,
    /// API groups (`spec.group`) whose CRDs and XRDs are enforced.
    #[serde(default)]
    pub enforce_groups: Vec<String>,
    /// API groups whose objects (composites, claims) are held to the names their XRD or CRD
    /// declares it derives (CVN-218).
    #[serde(default)]
    pub composite_groups: Vec<String>,
}

/// `cluster`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// Duration such as `2s`.
    #[serde(default)]
    pub lookup_budget: Option<String>,
    /// `deny` or `allow`.
    #[serde(default)]
    pub failure_policy: Option<String>,
    /// Duration such as `5s`: how long the API server keeps each of covenant's watches open.
    #[serde(default)]
    pub watch_timeout: Option<String>,
}

/// `mutation`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mutation {
    /// Whether the mutating route writes patches.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// The label naming the release a rendered object came from.
    #[serde(default)]
    pub release_name_label: Option<String>,
    /// The label naming that release's namespace.
    #[serde(default)]
    pub release_namespace_label: Option<String>,
}

/// `server`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    /// Body limit in bytes.
    #[serde(default)]
    pub body_limit_bytes: Option<usize>,
    /// Reviews judged at once.
    #[serde(default)]
    pub max_reviews_in_flight: Option<usize>,
    /// Bytes of review bodies held at once.
    #[serde(default)]
    pub max_buffered_bytes: Option<usize>,
}

/// `customResources`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResources {
    /// Whether `covenant check` validates custom resources against their definitions.
    #[serde(default)]
    pub check: Option<bool>,
    /// Whether the webhook does.
    #[serde(default)]
    pub admission: Option<bool>,
}

/// `kubernetesKinds`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesKinds {
    /// Whether `covenant check` holds Kubernetes' own kinds to their schemas.
    #[serde(default)]
    pub check: Option<bool>,
}

/// `launcher`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Launcher {
    /// The release line documents are judged for (`v0.2`, `v0.1.0-alpha.22`).
    #[serde(default)]
    pub version: Option<String>,
}
