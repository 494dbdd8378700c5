//! OpenChoreo's names that covenant's configuration and its families both read: the API
//! group its documents live in, the kinds judged by default, and the labels its renderer
//! sets. Plain facts, importing nothing, so the config reads them without reading the
//! families that judge them.

/// The API group of OpenChoreo's documents.
pub const GROUP: &str = "openchoreo.dev";

/// The construct kinds judged by default.
pub const CONSTRUCT_KINDS: [&str; 10] = [
    "ComponentType",
    "ClusterComponentType",
    "Trait",
    "ClusterTrait",
    "Workflow",
    "ClusterWorkflow",
    "ProjectType",
    "ClusterProjectType",
    "ResourceType",
    "ClusterResourceType",
];

/// The consumer kinds judged by default.
pub const CONSUMER_KINDS: [&str; 5] = ["Component", "Project", "Resource", "ReleaseBinding", "Workload"];

/// The release labels OpenChoreo sets on what it renders: the release's name and namespace.
pub const RELEASE_LABELS: (&str, &str) =
    ("openchoreo.dev/rendered-release-name", "openchoreo.dev/rendered-release-namespace");
