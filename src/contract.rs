//! The contract door: the diff of two versions of one document's contract — a CRD, an XRD,
//! an OpenChoreo construct, a launcher Package, or a bare OpenAPI schema — every change with
//! its bump and rule, the implied bump beside the declared one, and the verdict under the
//! family's stability policy and the enforced/advisory split. `covenant diff`, the read API's
//! `/api/v0/compare` and `upgrade` call `compute`; `check --base` and the webhook's UPDATE path
//! judge the same pair through the engine's families, which classify with the same evolution
//! code and advise under the same `Enforcement` — a test holds every face to one verdict.

use serde_json::Value;

use crate::config::{Config, Enforcement};
pub use crate::families::construct::Unpublished;
pub use crate::families::schema_bearing::Outline;
use crate::families::schema_bearing::{evolve_outlines, Flavor};
use crate::pointer::At;
use crate::pointer::Location;
use crate::rules::evolution::{is_ga, judge, Judged, Stability};
use crate::rules::{lookup, Action};
use crate::schema::diff::diff;
use crate::schema::openapi::{load_noting_unknown, Dialect};
use crate::versioning::Bump;

/// What a diff is judged by: each family's stability policy, and which CRDs and XRDs are
/// enforced (the rest are advisory: what the policy would refuse is a warning).
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// The stability policy per family (`crd`, `xrd`, `launcher`, `construct`).
    pub stability: std::collections::BTreeMap<String, Stability>,
    /// Which CRDs and XRDs are enforced.
    pub enforcement: Enforcement,
    /// The rules' configured actions: a verdict fails `diff` only where the rule behind it
    /// denies, as it then denies in `check` and the webhook.
    pub rules: crate::rules::RuleSet,
}

impl Policy {
    /// The policy a config states.
    pub fn of(config: &Config) -> Policy {
        Policy {
            stability: config.stability.clone(),
            enforcement: config.enforcement.clone(),
            rules: config.rules.clone(),
        }
    }

    fn stability(&self, family: &str) -> Stability {
        self.stability.get(family).copied().unwrap_or(Stability::Always)
    }
}

/// One changed place.
#[derive(Clone, Debug)]
pub struct Row {
    /// The version of a multi-version document the change is in.
    pub version: Option<String>,
    /// The change and its judgement.
    pub judged: Judged,
    /// Whether the family's stability policy refuses it.
    pub refused: bool,
}

/// A finding about the document rather than one schema change (versions, identity, shape).
#[derive(Clone, Debug)]
pub struct Note {
    /// The rule.
    pub rule: &'static str,
    /// The bump it implies (`None`: a warning that breaks no one).
    pub bump: Option<Bump>,
    /// What it says.
    pub message: String,
    /// Whether the family's policy refuses it (a version added implies MINOR, refused by no
    /// policy; every structural finding that implies a bump is refused).
    pub refused: bool,
}

/// The whole diff.
#[derive(Clone, Debug)]
pub struct ContractDiff {
    /// What was diffed: `CustomResourceDefinition widgets.example.com`.
    pub title: String,
    /// Every change, in document order.
    pub rows: Vec<Row>,
    /// Version, identity and shape findings (each that implies a bump is refused).
    pub notes: Vec<Note>,
    /// The declared bump, where the document declares a version.
    pub declared: Option<Bump>,
    /// The policy the refusals follow.
    pub policy: Stability,
    /// For a CRD or XRD not opted in to enforcement: why what the policy refuses is only
    /// advised (`advisory (… not opted in to enforcement: label …=enforce)`), as the
    /// webhook and `check --base` advise it.
    pub advisory: Option<String>,
    /// Rows a face left out of its rendering (`diff --ignore-descriptions`), counted.
    pub omitted: usize,
}

/// A pair that cannot be diffed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DiffError(pub String);

impl ContractDiff {
    /// The bump all changes imply.
    pub fn implied(&self) -> Bump {
        let notes = self.notes.iter().filter_map(|n| n.bump);
        Bump::implied(self.rows.iter().map(|r| r.judged.bump).chain(notes))
    }

    /// `ok`, `bump-too-small`, `bump-too-large`, `refused` (the declared bump, if any, is
    /// right, but the family's policy refuses a change), or `advised` (the policy would refuse
    /// a change of a CRD or XRD not opted in to enforcement): never `ok` when the diff fails.
    pub fn verdict(&self) -> &'static str {
        match self.declared {
            Some(d) if d < self.implied() => "bump-too-small",
            Some(d) if d > self.implied() => "bump-too-large",
            _ if self.refused() > 0 && self.advisory.is_some() => "advised",
            _ if self.refused() > 0 => "refused",
            _ => "ok",
        }
    }

    /// How many changes and notes the policy refuses.
    pub fn refused(&self) -> usize {
        self.rows.iter().filter(|r| r.refused).count() + self.notes.iter().filter(|n| n.refused).count()
    }

    /// Whether `covenant diff` exits 1: where the webhook and `check --base` deny the pair —
    /// a verdict whose rule denies under `policy`'s actions (a declared bump too small is
    /// CVN-212, deny by default; one too large CVN-213, a warning by default; a change the
    /// policy refuses its own rule, CVN-201 …, deny by default) — never for what is only
    /// advised or warned.
    pub fn fails(&self, policy: &Policy) -> bool {
        let denies = |rule: &str| lookup(rule).is_none_or(|r| policy.rules.action(r) == Action::Deny);
        match self.verdict() {
            "bump-too-small" => denies("CVN-212"),
            "bump-too-large" => denies("CVN-213"),
            "refused" => {
                let rows = self.rows.iter().filter(|r| r.refused).map(|r| r.judged.rule);
                let notes = self.notes.iter().filter(|n| n.refused).map(|n| Some(n.rule));
                rows.chain(notes).any(|rule| rule.is_none_or(denies))
            }
            _ => false,
        }
    }
}

fn refused(policy: Stability, version: Option<&str>, j: &Judged) -> bool {
    j.bump == Bump::Major
        && match policy {
            Stability::Always => true,
            Stability::FromGa => version.is_some_and(is_ga),
            Stability::DeclaredBump => false,
        }
}

/// Why two published versions of a construct were not compared.
#[derive(Debug, thiserror::Error)]
pub enum Uncompared {
    /// A version (or the name, or the kind) is not published, or the cluster cannot be read.
    #[error(transparent)]
    Unpublished(#[from] Unpublished),
    /// Both are published, and cannot be diffed.
    #[error("{name} {from} → {to}: {why}")]
    NotComparable {
        /// The logical name.
        name: String,
        /// The version compared from.
        from: String,
        /// The version compared to.
        to: String,
        /// Why.
        why: DiffError,
    },
}

/// The contract diff of two published versions of a construct (of `kind`, or of any construct
/// kind; in `namespace`, or anywhere): the one comparison `covenant diff --context DIR NAME FROM
/// TO`, `/api/v0/compare` and the console's compare page make, so they answer the same bytes.
pub fn between_published(
    cluster: &dyn crate::cluster::ClusterView,
    policy: &Policy,
    kind: Option<&str>,
    namespace: Option<&str>,
    name: &str,
    from: &str,
    to: &str,
) -> Result<ContractDiff, Uncompared> {
    use crate::families::construct::published_at;
    let old = published_at(cluster, kind, namespace, name, from)?;
    let new = published_at(cluster, kind, namespace, name, to)?;
    compute(&Outline::of_value(&old), &Outline::of_value(&new), policy).map_err(|why| {
        Uncompared::NotComparable { name: name.to_string(), from: from.to_string(), to: to.to_string(), why }
    })
}

/// Diff two documents: both CRDs, both XRDs, both constructs, both Packages, or both bare
/// OpenAPI schemas, judged by `policy`.
///
/// Each side is an outline: a CRD's or XRD's version schemas apart (as text when the document
/// was read from JSON text), everything else its tree.
pub fn compute(
    old_outline: &Outline<'_>,
    new_outline: &Outline<'_>,
    judged_by: &Policy,
) -> Result<ContractDiff, DiffError> {
    let stability = |family: &str| judged_by.stability(family);
    let (old, new): (&Value, &Value) = (&old_outline.doc, &new_outline.doc);
    match (Flavor::of(old), Flavor::of(new)) {
        (Some(a), Some(b)) if a == b => {
            let policy = stability(a.family());
            // As the family advises it: an update that removes the opt-in is still enforced.
            let advisory = (!judged_by.enforcement.enforces(new) && !judged_by.enforcement.enforces(old))
                .then(|| {
                    format!(
                        "advisory ({} not opted in to enforcement: label {}=enforce)",
                        a.kind(),
                        judged_by.enforcement.label
                    )
                });
            let e = evolve_outlines(old_outline, new_outline);
            if let Some((at, why)) = e.unreadable.first() {
                return Err(DiffError(format!("a schema cannot be read at {at}: {why}")));
            }
            let mut rows = Vec::new();
            for v in &e.versions {
                for j in &v.changes {
                    let refused = refused(policy, Some(&v.version), j);
                    rows.push(Row { version: Some(v.version.clone()), judged: j.clone(), refused });
                }
            }
            let notes = e
                .structural
                .iter()
                .map(|s| {
                    let mut args = s.args.clone();
                    args.insert(0, ("subject", e.subject(None)));
                    args.insert(0, ("name", e.name.clone()));
                    let rule = lookup(s.rule).map(|r| r.message).unwrap_or("");
                    let message = crate::rules::meta::render(rule, &args);
                    Note { rule: s.rule, bump: s.bump(), refused: s.bump().is_some(), message }
                })
                .chain(version_notes(old, new))
                // A keyword the new schemas carry that validates nothing: a warning, changed
                // or not (a change to it is also a row, unclassified).
                .chain(e.unknown_keywords.iter().map(|(at, why)| Note {
                    rule: "CVN-109",
                    bump: None,
                    refused: false,
                    message: format!("{at}: {why}"),
                }))
                .collect();
            Ok(ContractDiff {
                title: e.subject(None),
                rows,
                notes,
                declared: None,
                policy,
                advisory,
                omitted: 0,
            })
        }
        (Some(a), Some(b)) => Err(DiffError(format!("cannot diff a {} against a {}", a.kind(), b.kind()))),
        (None, None) if is_construct(old) && is_construct(new) => {
            use crate::families::construct::{contract, contract_diff, declared_version, logical_name, read};
            let (a, problems_a) = contract(old);
            let b = read(new);
            // What cannot be read is said, and a change to it is an unclassified row; a keyword
            // of the new schemas that validates nothing is said too, changed or not.
            let notes = [("old", &problems_a), ("new", &b.problems)]
                .into_iter()
                .flat_map(|(side, ps)| ps.iter().map(move |p| (side, p)))
                .map(|(side, p)| Note {
                    rule: "CVN-109",
                    bump: None,
                    refused: false,
                    message: format!("the {side} document's contract schema cannot be read: {p}"),
                })
                .chain(b.unknown.iter().map(unknown_keyword_note))
                .collect();
            let b = b.contract;
            let rows = contract_diff(&a, &b)
                .into_iter()
                .map(|j| Row { version: None, refused: false, judged: j })
                .collect();
            let parse = |d: &Value| declared_version(d).and_then(|v| semver::Version::parse(v).ok());
            let (from, to) = (parse(old), parse(new));
            let declared = match (&from, &to) {
                (Some(a), Some(b)) => Some(Bump::between(a, b).unwrap_or(Bump::Patch)),
                _ => None,
            };
            let kind = new.get("kind").and_then(Value::as_str).unwrap_or_default();
            let title = match (from, to) {
                (Some(a), Some(b)) => format!("{kind} {} {a} → {b}", logical_name(new)),
                _ => format!("{kind} {}", logical_name(new)),
            };
            Ok(ContractDiff {
                title,
                rows,
                notes,
                declared,
                policy: Stability::DeclaredBump,
                advisory: None,
                omitted: 0,
            })
        }
        (None, None) if is_package(old) && is_package(new) => {
            use crate::families::launcher::{declared_version, package_contract};
            let policy = Stability::DeclaredBump;
            let rows = judge(diff(&package_contract(old), &package_contract(new), ""))
                .into_iter()
                .map(|j| Row { version: None, refused: false, judged: j })
                .collect();
            let declared = match (declared_version(old), declared_version(new)) {
                (Some(a), Some(b)) => Some(Bump::between(&a, &b)),
                _ => None,
            };
            let name = new.at("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            let title = match (declared_version(old), declared_version(new)) {
                (Some(a), Some(b)) => format!("Package {name} {a} → {b}"),
                _ => format!("Package {name}"),
            };
            // A version that did not move declares nothing: an explicit "none", not a bump.
            let declared = declared.map(|d| d.unwrap_or(Bump::Patch));
            Ok(ContractDiff { title, rows, notes: Vec::new(), declared, policy, advisory: None, omitted: 0 })
        }
        (None, None) if looks_like_schema(old) && looks_like_schema(new) => {
            let read = |v: &Value, which: &str| {
                let (schema, unknown) = load_noting_unknown(v, &Location::default(), Dialect::OpenApi);
                let schema = schema.map_err(|ps| {
                    let list: Vec<String> = ps.iter().map(|p| p.to_string()).collect();
                    DiffError(format!("the {which} schema cannot be read: {}", list.join("; ")))
                })?;
                Ok::<_, DiffError>((schema, unknown))
            };
            let ((a, _), (b, unknown)) = (read(old, "old")?, read(new, "new")?);
            let notes = unknown.iter().map(unknown_keyword_note).collect();
            let policy = stability("crd");
            let rows = judge(diff(&a, &b, ""))
                .into_iter()
                .map(|j| Row { version: None, refused: refused(policy, None, &j), judged: j })
                .collect();
            Ok(ContractDiff {
                title: "schema".into(),
                rows,
                notes,
                declared: None,
                policy,
                advisory: None,
                omitted: 0,
            })
        }
        _ => Err(DiffError(
            "covenant diff compares two CustomResourceDefinitions, two CompositeResourceDefinitions, two \
             launcher Packages, two OpenChoreo constructs, or two OpenAPI v3 schemas"
                .into(),
        )),
    }
}

/// A keyword of the new schema that no schema knows: a CVN-109 note, a warning that refuses
/// nothing, where it is.
fn unknown_keyword_note(u: &crate::schema::openapi::UnknownKeyword) -> Note {
    let at = if u.at.pointer.is_empty() { "(root)" } else { &u.at.pointer };
    Note {
        rule: "CVN-109",
        bump: None,
        refused: false,
        message: format!(
            "{at}: keyword \"{}\" is not known to a structural schema, so it validates nothing{}",
            u.keyword, u.hint
        ),
    }
}

/// What changed in `spec.versions` itself, beside the schemas: a version added (MINOR), the
/// storage version moved, a version taken out of the list (safe only if nothing is stored at
/// it). A version made unserved or a served one removed is a structural finding already.
fn version_notes(old: &Value, new: &Value) -> Vec<Note> {
    let versions = |d: &Value| -> Vec<(String, bool, bool, bool)> {
        d.at("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| {
                vs.iter()
                    .filter_map(|v| {
                        let name = v.get("name")?.as_str()?.to_string();
                        let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
                        // A CRD's storage version; an XRD's referenceable one.
                        let storage = flag("storage") || flag("referenceable");
                        Some((name, flag("served"), storage, flag("deprecated")))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (before, after) = (versions(old), versions(new));
    let storage = |vs: &[(String, bool, bool, bool)]| vs.iter().find(|v| v.2).map(|v| v.0.clone());
    let stored: Vec<&str> = old
        .at("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut notes = Vec::new();
    for (name, served, _, _) in after.iter().filter(|v| !before.iter().any(|b| b.0 == v.0)) {
        let how = if *served { "served" } else { "not served" };
        notes.push(Note {
            rule: "version",
            bump: Some(Bump::Minor),
            message: format!("version {name} was added ({how})"),
            refused: false,
        });
    }
    // Unserving a version the previous release deprecated is the promotion's next step.
    for (name, ..) in
        before.iter().filter(|b| b.1 && b.3).filter(|b| after.iter().any(|a| a.0 == b.0 && !a.1))
    {
        notes.push(Note {
            rule: "version",
            bump: None,
            message: format!("version {name} is no longer served; it was deprecated in the previous release, so its clients were warned"),
            refused: false,
        });
    }
    if let (Some(from), Some(to)) = (storage(&before), storage(&after)) {
        if from != to {
            notes.push(Note {
                rule: "version",
                bump: None,
                message: format!(
                    "the storage version moved from {from} to {to}: objects written from now on are stored at {to}; those stored at {from} stay there until rewritten"
                ),
                refused: false,
            });
        }
    }
    for (name, ..) in before.iter().filter(|v| !after.iter().any(|a| a.0 == v.0)) {
        // One that storedVersions still lists is a structural finding (CVN-210) already.
        if stored.contains(&name.as_str()) {
            continue;
        }
        let at = if stored.is_empty() {
            "check status.storedVersions on the cluster first".to_string()
        } else {
            format!("status.storedVersions ({}) does not list it", stored.join(", "))
        };
        notes.push(Note {
            rule: "version",
            bump: None,
            message: format!(
                "version {name} was removed from spec.versions; that is safe only if no object is stored at it ({at})"
            ),
            refused: false,
        });
    }
    notes
}

fn is_construct(v: &Value) -> bool {
    v.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("openchoreo.dev/"))
        && v.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| crate::families::construct::KINDS.contains(&k))
}

fn is_package(v: &Value) -> bool {
    v.get("kind").and_then(Value::as_str) == Some("Package")
        && v.get("apiVersion").and_then(Value::as_str).is_some_and(|a| a.starts_with("launcher.gokure.dev/"))
}

fn looks_like_schema(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        !m.contains_key("apiVersion")
            && ["type", "properties", "items", "x-kubernetes-preserve-unknown-fields"]
                .iter()
                .any(|k| m.contains_key(*k))
    })
}
