//! The audit's findings in the format report readers already read: OpenReports
//! (`openreports.io/v1alpha1`), one `Report` per namespace with findings and one
//! `ClusterReport` for cluster-scoped objects, so Policy Reporter and other readers show
//! covenant's findings beside Kyverno's and Kubewarden's.
//!
//! Each result is one finding: `policy` the rule id, `rule` its slug, `result` `fail` (it would
//! be refused) or `warn`, the object in `resources`, the message, and `properties` with the
//! pointer and the fix. A report holds at most `MAX_RESULTS` results (etcd objects stay
//! small); its summary counts every finding. Written by the leader after each audit run with
//! server-side apply (field manager `covenant`), labelled `app.kubernetes.io/managed-by:
//! covenant`; a namespace found clean has its report deleted. When the OpenReports CRDs are not
//! served, covenant says so once and writes nothing.

use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{json, Value};

/// Results one report holds at most; the summary counts the rest.
pub const MAX_RESULTS: usize = 500;

/// The API group and version of OpenReports.
pub const GROUP_VERSION: (&str, &str) = ("openreports.io", "v1alpha1");

/// The label every report covenant writes carries.
pub const MANAGED: (&str, &str) = ("app.kubernetes.io/managed-by", "covenant");

/// The name of covenant's report in each namespace (and of its ClusterReport).
pub const NAME: &str = "covenant-audit";

/// One finding, as a report result.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The rule id.
    pub rule: &'static str,
    /// The rule's slug.
    pub slug: &'static str,
    /// Whether it would be refused (`fail`) or only warns (`warn`).
    pub fails: bool,
    /// The object's apiVersion, kind, name and uid.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// UID, when the object has one.
    pub uid: Option<String>,
    /// Where in the object.
    pub pointer: String,
    /// The message.
    pub message: String,
    /// The fix, when the rule states one.
    pub fix: Option<String>,
}

/// A namespace's findings (none: cluster-scoped objects), capped, with every one counted.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    /// The first `MAX_RESULTS` findings.
    pub kept: Vec<Finding>,
    /// Findings that would be refused.
    pub fail: usize,
    /// Findings that warn.
    pub warn: usize,
}

impl Findings {
    /// Count `f`, and keep it while there is room.
    pub fn add(&mut self, f: Finding) {
        if f.fails {
            self.fail += 1;
        } else {
            self.warn += 1;
        }
        if self.kept.len() < MAX_RESULTS {
            self.kept.push(f);
        }
    }
}

/// The Report (or, for `None`, the ClusterReport) for one namespace's findings.
pub fn report(namespace: Option<&str>, findings: &Findings, seconds: i64) -> Value {
    let results: Vec<Value> = findings
        .kept
        .iter()
        .map(|f| {
            let mut resource = json!({"apiVersion": f.api_version, "kind": f.kind, "name": f.name});
            if let Some(ns) = namespace {
                resource["namespace"] = json!(ns);
            }
            if let Some(uid) = &f.uid {
                resource["uid"] = json!(uid);
            }
            let mut properties = json!({"pointer": f.pointer});
            if let Some(fix) = &f.fix {
                properties["fix"] = json!(fix);
            }
            json!({
                "source": "covenant",
                "policy": f.rule,
                "rule": f.slug,
                "result": if f.fails { "fail" } else { "warn" },
                "severity": if f.fails { "high" } else { "medium" },
                "scored": true,
                "message": f.message,
                "resources": [resource],
                "properties": properties,
                "timestamp": {"seconds": seconds, "nanos": 0},
            })
        })
        .collect();
    let kind = if namespace.is_some() { "Report" } else { "ClusterReport" };
    let mut metadata = json!({"name": NAME, "labels": {MANAGED.0: MANAGED.1}});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": format!("{}/{}", GROUP_VERSION.0, GROUP_VERSION.1),
        "kind": kind,
        "metadata": metadata,
        "source": "covenant",
        "configuration": {"limits": {"maxResults": MAX_RESULTS}},
        "summary": {"pass": 0, "fail": findings.fail, "warn": findings.warn, "error": 0, "skip": 0},
        "results": results,
    })
}

/// Writes the reports of each audit run.
pub struct Reports {
    client: kube::Client,
    /// Whether the CRDs were found served (none: not asked yet).
    served: Option<bool>,
}

impl Reports {
    /// Reports written through `client`.
    pub fn new(client: kube::Client) -> Reports {
        Reports { client, served: None }
    }

    fn api(&self, kind: &str, plural: &str, namespace: Option<&str>) -> Api<DynamicObject> {
        let (group, version) = GROUP_VERSION;
        let resource = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: format!("{group}/{version}"),
            kind: kind.into(),
            plural: plural.into(),
        };
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        }
    }

    /// Apply one report per namespace with findings (and the ClusterReport), and delete
    /// covenant's reports of namespaces now clean. Returns how many were written, or why none.
    pub async fn write(
        &mut self,
        by_namespace: &BTreeMap<Option<String>, Findings>,
        seconds: i64,
    ) -> Result<usize, String> {
        if self.served.is_none() {
            let (group, version) = GROUP_VERSION;
            let gvk = kube::api::GroupVersionKind::gvk(group, version, "Report");
            let served = kube::discovery::oneshot::pinned_kind(&self.client, &gvk).await.is_ok();
            if !served {
                tracing::info!("the OpenReports CRDs (reports.openreports.io) are not served: the audit writes no reports");
            }
            self.served = Some(served);
        }
        if self.served != Some(true) {
            return Err("the OpenReports CRDs are not served".into());
        }
        let apply = PatchParams::apply("covenant").force();
        let mut written = 0;
        for (namespace, findings) in by_namespace {
            let body = report(namespace.as_deref(), findings, seconds);
            let api = match namespace {
                Some(ns) => self.api("Report", "reports", Some(ns)),
                None => self.api("ClusterReport", "clusterreports", None),
            };
            api.patch(NAME, &apply, &Patch::Apply(&body)).await.map_err(|e| e.to_string())?;
            written += 1;
        }
        // Namespaces found clean: their reports go.
        let managed = ListParams::default().labels(&format!("{}={}", MANAGED.0, MANAGED.1));
        let keep: BTreeSet<Option<String>> = by_namespace.keys().cloned().collect();
        for (kind, plural) in [("Report", "reports"), ("ClusterReport", "clusterreports")] {
            let listed = self.api(kind, plural, None).list(&managed).await.map_err(|e| e.to_string())?;
            for o in listed.items {
                let ns = o.metadata.namespace.clone();
                let stale = if kind == "Report" { !keep.contains(&ns) } else { !keep.contains(&None) };
                if stale {
                    let name = o.metadata.name.clone().unwrap_or_default();
                    self.api(kind, plural, ns.as_deref())
                        .delete(&name, &DeleteParams::default())
                        .await
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(written)
    }
}
