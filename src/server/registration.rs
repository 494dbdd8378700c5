//! What the API server is told to send covenant, checked against what covenant judges. A
//! fail-closed entry that sends kinds no family judges makes those writes wait on covenant for
//! nothing — and refuses them while covenant is down — so `serve` says so at start-up, from
//! the ValidatingWebhookConfigurations it can read. Likewise the mutating entries and the
//! stamps: entries with no mutation rule on make every write they name wait on a call that
//! patches nothing, and rules on with no entry patch nothing either.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};

/// The plural resource name Kubernetes derives from a kind (`Registry` → `registries`), as
/// CRDs name their resources.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if let Some(stem) = lower.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'i', 'o', 'u'])) {
        format!("{stem}ies")
    } else if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") || lower.ends_with("sh") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

/// One line per rule of covenant's validating entries (named `*.covenant.dev`) that sends
/// CREATE or UPDATE of a resource no family judges, or every resource of a group (`*`).
/// `judged` is the engine's (group, kind) list.
pub fn unjudged(configs: &[ValidatingWebhookConfiguration], judged: &[(String, String)]) -> Vec<String> {
    let judged: std::collections::BTreeSet<(String, String)> =
        judged.iter().map(|(g, k)| (g.clone(), plural(k))).collect();
    let mut out = Vec::new();
    for config in configs {
        let name = config.metadata.name.as_deref().unwrap_or_default();
        for entry in config.webhooks.iter().flatten().filter(|w| w.name.ends_with(".covenant.dev")) {
            let policy = entry.failure_policy.as_deref().unwrap_or("Fail");
            for rule in entry.rules.iter().flatten() {
                let ops = rule.operations.iter().flatten();
                if !ops.clone().any(|o| o == "CREATE" || o == "UPDATE" || o == "*") {
                    continue;
                }
                for group in rule.api_groups.iter().flatten() {
                    for resource in rule.resources.iter().flatten() {
                        let base = resource.split('/').next().unwrap_or_default();
                        let unjudged = group == "*"
                            || base == "*"
                            || !judged.contains(&(group.clone(), base.to_string()));
                        if unjudged {
                            out.push(format!(
                                "ValidatingWebhookConfiguration {name}, entry {entry} (failurePolicy {policy}), sends covenant {what} of API group {group}, which no rule judges{cost}",
                                entry = entry.name,
                                what = if base == "*" { "every resource".to_string() } else { format!("\"{resource}\"") },
                                group = if group.is_empty() { "core" } else { group },
                                cost = if policy == "Fail" {
                                    ": those writes wait on covenant for nothing, and are refused while it is down; list only the judged resources (deploy/webhooks.yaml)"
                                } else {
                                    ""
                                }
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

/// What is wrong between covenant's mutating entries (named `*.covenant.dev`, with rules) and
/// whether it patches (`patches`: `mutation.enabled` and CVN-501 or CVN-502 set to mutate):
/// entries while nothing patches, or patching with no entry; `None` when they agree.
pub fn unstamped(configs: &[MutatingWebhookConfiguration], patches: bool) -> Option<String> {
    let entries: Vec<String> = configs
        .iter()
        .flat_map(|c| {
            let name = c.metadata.name.clone().unwrap_or_default();
            c.webhooks
                .iter()
                .flatten()
                .filter(|w| {
                    w.name.ends_with(".covenant.dev") && w.rules.as_ref().is_some_and(|r| !r.is_empty())
                })
                .map(move |w| format!("{name}/{}", w.name))
        })
        .collect();
    match (entries.is_empty(), patches) {
        (false, false) => Some(format!(
            "MutatingWebhookConfiguration entries {} send covenant writes to patch, but no mutation rule is on (CVN-501 and CVN-502 are off, or mutation.enabled is false): every write they name waits on a call that patches nothing; turn the rules on (rules.actions: {{CVN-501: mutate, CVN-502: mutate}}) or remove the entries (deploy/components/stamps)",
            entries.join(", ")
        )),
        (true, true) => Some(
            "CVN-501 or CVN-502 is set to mutate, but no MutatingWebhookConfiguration sends covenant anything to patch: add deploy/components/stamps to the install"
                .to_string(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_as_kubernetes_derives_them() {
        for (kind, plural_) in [
            ("Component", "components"),
            ("Registry", "registries"),
            ("ClusterComponentType", "clustercomponenttypes"),
            ("CustomResourceDefinition", "customresourcedefinitions"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
        ] {
            assert_eq!(plural(kind), plural_);
        }
    }
}
