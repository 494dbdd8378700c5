//! What differs between the launcher release lines covenant judges for (`launcher.version`,
//! `covenant check --launcher-version`): the types each registers, `helmchart`'s meaning, and
//! whether the launcher itself refuses authored properties its schemas do not declare. The
//! built-in registry holds the later line; the alpha.22 line is read from it through these
//! lists, transcribed from launcher v0.1.0-alpha.22 (`pkg/oam/validate.go`'s allowlists,
//! `pkg/oam/builtin/components/helmchart.go`'s `PropertySchema()`).

use serde_json::json;

use crate::config::LauncherLine;
use crate::pointer::Location;
use crate::registry::TypeCategory;
use crate::schema::Schema;

/// The component types v0.1.0-alpha.22 accepts.
const ALPHA22_COMPONENTS: [&str; 11] = [
    "webservice",
    "worker",
    "postgresql",
    "cronjob",
    "helmchart",
    "daemonset",
    "statefulset",
    "passthrough",
    "crd",
    "manifests",
    "oci",
];

/// The trait types v0.1.0-alpha.22 accepts.
const ALPHA22_TRAITS: [&str; 16] = [
    "expose",
    "ingress",
    "httproute",
    "certificate",
    "external-secret",
    "configmap",
    "networkpolicy",
    "cilium-networkpolicy",
    "volsync",
    "scaler",
    "pvc",
    "rbac",
    "security-context",
    "fluxcd-patches",
    "fluxcd-postbuild",
    "prune-protection",
];

/// The component types the later line registers as projections of Kubernetes kinds, whose
/// schemas covenant does not carry; the built-in registry holds their alpha.22 schemas, which
/// the later line no longer states.
const LATER_UNSTATED: [&str; 3] = ["cronjob", "daemonset", "statefulset"];

/// Whether the line registers a built-in type.
pub fn registers(line: LauncherLine, category: TypeCategory, name: &str) -> bool {
    match (line, category) {
        (LauncherLine::Later, _) => true,
        (LauncherLine::Alpha22, TypeCategory::Component) => ALPHA22_COMPONENTS.contains(&name),
        (LauncherLine::Alpha22, TypeCategory::Trait) => ALPHA22_TRAITS.contains(&name),
        // alpha.22 has no policy allowlist: any policy type is accepted.
        (LauncherLine::Alpha22, TypeCategory::Policy) => true,
    }
}

/// How the line reads a built-in type's properties, where it differs from the registry.
pub enum Reading {
    /// As the built-in registry states them.
    AsRegistered,
    /// Against another schema.
    Schema(Schema),
    /// Against the registry's schema, but what it finds is a warning saying why (the line's
    /// own schema for the type is not one covenant carries).
    Advisory(String),
}

/// How `line` reads the properties of the built-in type `name`.
pub fn reading(line: LauncherLine, category: TypeCategory, name: &str) -> Reading {
    match (line, category, name) {
        (LauncherLine::Later, TypeCategory::Component, n) if LATER_UNSTATED.contains(&n) => {
            Reading::Advisory(format!(
            "launcher v0.2 projects \"{n}\" onto the Kubernetes kind, whose schema covenant does not carry; \
             checked against its v0.1.0-alpha.22 schema, as a warning"
        ))
        }
        (LauncherLine::Alpha22, TypeCategory::Component, "helmchart") => Reading::Schema(alpha22_helmchart()),
        _ => Reading::AsRegistered,
    }
}

/// Why what covenant finds in authored properties is a warning under `line`, when it is: a
/// launcher that does not validate them takes what its schemas do not declare.
pub fn advisory(line: LauncherLine) -> Option<&'static str> {
    match line {
        LauncherLine::Later => None,
        LauncherLine::Alpha22 => Some(
            "launcher v0.1.0-alpha.22 does not validate authored properties: it ignores what its schema does not declare",
        ),
    }
}

/// `helmchart` in v0.1.0-alpha.22: the composite that renders a Flux source and HelmRelease.
fn alpha22_helmchart() -> Schema {
    let open = json!({"type": "object", "open": true});
    let value = json!({
        "type": "object",
        "required": ["source"],
        "properties": {
            "chart": {"type": "string"},
            "version": {"type": "string"},
            "delivery": {"type": "string", "enum": ["native", "template"], "default": "native"},
            "interval": {"type": "string"},
            "releaseName": {"type": "string"},
            "targetNamespace": {"type": "string"},
            "source": open,
            "values": open,
            "driftDetection": open,
            "install": open,
            "upgrade": open,
            "valuesFrom": {"type": "array", "items": open},
        }
    });
    // A literal covered by a unit test: it always loads.
    crate::schema::property::load(&value, &Location::default()).unwrap_or_else(|_| Schema::any())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alpha22_helmchart_schema_loads_and_the_lists_name_registered_types() {
        let s = crate::schema::property::load(
            &serde_json::json!({"type": "object", "required": ["source"], "properties": {"source": {"type": "object", "open": true}}}),
            &Location::default(),
        );
        assert!(s.is_ok());
        assert!(alpha22_helmchart().properties.contains_key("valuesFrom"));
        let registry = crate::registry::Registry::builtin().unwrap();
        for name in ALPHA22_COMPONENTS {
            assert!(registry.launcher_type(TypeCategory::Component, name).is_some(), "{name}");
        }
        for name in ALPHA22_TRAITS {
            assert!(registry.launcher_type(TypeCategory::Trait, name).is_some(), "{name}");
        }
    }
}
