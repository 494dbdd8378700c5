//! The engine: one pure function from a subject to a verdict. It dispatches the subject to
//! its family through the table, lets the family report findings under the configured rule
//! selection, and returns them. No I/O, no clock, no globals: cluster state arrives through
//! the `ClusterView`, time through the subject. The webhook and `covenant check` both call
//! it, so they cannot disagree.

use serde_json::Value;

use crate::cluster::ClusterView;
use crate::config::{Config, Exemption};
pub use crate::families::launcher::Inputs;
use crate::families::launcher::Launcher;
use crate::families::schema_bearing::{Flavor, SchemaBearing};
use crate::families::{versioned::Versioned, Context, FamilyTable};
use crate::pointer::At;
use crate::rules::evolution::Stability;
use crate::rules::{Action, Finding, RuleSet};
use crate::subject::{Operation, Subject};

/// The outcome of judging one subject.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The family that judged the subject; `None` when no family concerns it.
    pub family: Option<&'static str>,
    /// Every finding, in the order the family reported them.
    pub findings: Vec<Finding>,
    /// The reason of the exemption that let the subject through unjudged.
    pub exempted: Option<String>,
    /// Exemptions that would have applied but have expired: they no longer apply, and say so.
    pub expired: Vec<String>,
    /// What a rule could not check for want of cluster state (offline), said, not skipped.
    pub unchecked: Vec<String>,
}

impl Verdict {
    /// Whether any finding denies.
    pub fn denied(&self) -> bool {
        self.findings.iter().any(|f| f.action == Action::Deny)
    }

    /// The findings at one action.
    pub fn at(&self, action: Action) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.action == action)
    }

    /// Each rule that fired, once, in first-seen order, with a count where it fired more
    /// than once (`CVN-201×83`): what logs and audit annotations name.
    pub fn rule_counts(&self) -> Vec<String> {
        let mut counted: Vec<(&str, usize)> = Vec::new();
        for f in &self.findings {
            match counted.iter_mut().find(|(id, _)| *id == f.rule.id) {
                Some((_, n)) => *n += 1,
                None => counted.push((f.rule.id, 1)),
            }
        }
        counted.iter().map(|(id, n)| if *n == 1 { id.to_string() } else { format!("{id}×{n}") }).collect()
    }
}

/// What judging a subject costs (`Engine::cost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// Reading the exemptions: no family judges the subject.
    Exemptions,
    /// Work bounded by the subject, plus its lookups.
    Subject,
    /// Work the subject's size does not bound.
    Open,
}

/// The outcome of the mutating path for one subject.
#[derive(Debug, Default)]
pub struct Mutation {
    /// The JSONPatch operations (RFC 6902), in rule order; empty: nothing to write.
    pub ops: Vec<Value>,
    /// The object with the operations applied.
    pub patched: Option<Value>,
    /// The rules that wrote something.
    pub rules: Vec<&'static str>,
    /// What the response warns about (an unresolvable release, a conflict, a refusal).
    pub warnings: Vec<String>,
}

/// How an exemption is matched against a subject: the config holds what it names.
impl Exemption {
    fn matches(&self, s: &Subject) -> bool {
        self.selects(s) && !self.expired(s)
    }

    /// Whether every selector matches, expiry aside.
    fn selects(&self, s: &Subject) -> bool {
        let ns = s.namespace.as_deref().unwrap_or("");
        (self.namespaces.is_empty() || self.namespaces.iter().any(|n| n == ns))
            && (self.names.is_empty() || self.names.iter().any(|g| g.is_match(&s.name)))
            && (self.users.is_empty() || s.user.as_deref().is_some_and(|u| self.users.iter().any(|x| x == u)))
            && (self.groups.is_empty() || s.groups.iter().any(|g| self.groups.contains(g)))
    }

    fn expired(&self, s: &Subject) -> bool {
        matches!((self.expires, s.received_at), (Some(expires), Some(now)) if now >= expires)
    }
}

/// The engine, built once from a config and shared by every request.
#[derive(Debug)]
pub struct Engine {
    rules: RuleSet,
    families: FamilyTable,
    exemptions: Vec<Exemption>,
    lookup_budget: std::time::Duration,
    failure_policy: crate::config::FailurePolicy,
    release_labels: (String, String),
    policy: crate::contract::Policy,
    /// Whether objects under admission of kinds no family claims are judged against their
    /// definition (`customResources.admission`).
    defined_at_admission: bool,
    metric_kinds: MetricKinds,
}

/// The `group` and `kind` labels a request is counted under in metrics: as the review names
/// them when a family claims that kind, else `other`, so a client cannot grow the label sets
/// with made-up kinds (a claimed group keeps its name; its unclaimed kinds are `other`).
/// Each label pair is numbered, densely from 0, so the server can find a request's series
/// by index rather than by hashing its labels.
#[derive(Debug)]
pub struct MetricKinds {
    /// Each claimed group: the number of its `other`, and of each kind claimed by name.
    groups: rustc_hash::FxHashMap<String, (usize, rustc_hash::FxHashMap<String, usize>)>,
    /// The label pairs, by number; the last is (`other`, `other`).
    labels: Vec<(String, String)>,
}

impl MetricKinds {
    fn of(families: &FamilyTable) -> MetricKinds {
        let mut labels = Vec::new();
        let mut groups = rustc_hash::FxHashMap::default();
        for group in families.groups() {
            labels.push((group.clone(), "other".to_string()));
            groups.insert(group, (labels.len() - 1, rustc_hash::FxHashMap::default()));
        }
        for (group, kind) in families.kinds() {
            labels.push((group.clone(), kind.clone()));
            if let Some((_, kinds)) = groups.get_mut(&group) {
                kinds.insert(kind, labels.len() - 1);
            }
        }
        labels.push(("other".to_string(), "other".to_string()));
        MetricKinds { groups, labels }
    }

    /// The number of the label pair a review of this group and kind is counted under.
    pub fn of_kind(&self, group: &str, kind: &str) -> usize {
        match self.groups.get(group) {
            Some((other, kinds)) => kinds.get(kind).copied().unwrap_or(*other),
            None => self.labels.len() - 1,
        }
    }

    /// The `group` and `kind` labels of a number `of_kind` gave.
    pub fn labels(&self, number: usize) -> (&str, &str) {
        let (group, kind) = &self.labels[number];
        (group, kind)
    }

    /// How many label pairs there are.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Never: (`other`, `other`) is always one.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl Engine {
    /// Build the engine a config describes.
    pub fn new(config: &Config) -> Engine {
        Engine::with_inputs(config, Inputs::default())
    }

    /// Build the engine a config describes, with the launcher build inputs `covenant check`
    /// was given (a cluster profile, CapabilityDefinitions, parameter values). The webhook
    /// has none: it judges each document as it is applied.
    pub fn with_inputs(config: &Config, inputs: Inputs) -> Engine {
        let mut families = FamilyTable::default();
        if config.families.contains("versioned") {
            families.add(Box::new(Versioned::new(config.registry.versioned.clone())));
        }
        for (name, flavor) in [("crd", Flavor::Crd), ("xrd", Flavor::Xrd)] {
            if config.families.contains(name) {
                let policy = config.stability.get(name).copied().unwrap_or(Stability::Always);
                families.add(Box::new(SchemaBearing::new(flavor, policy, config.enforcement.clone())));
            }
        }
        if config.families.contains("construct") {
            families
                .add(Box::new(crate::families::construct::Construct::new(config.construct_kinds.clone())));
        }
        if config.families.contains("consumer") {
            families.add(Box::new(crate::families::consumer::Consumer::new(config.consumer_kinds.clone())));
        }
        if !config.enforcement.composite_groups.is_empty() {
            families.add(Box::new(crate::families::derived::Composites::new(
                config.enforcement.composite_groups.clone(),
            )));
        }
        if config.families.contains("launcher") {
            families.add(Box::new(Launcher::new(&config.registry, inputs, config.launcher_line)));
        }
        let custom = config.custom_resources;
        if custom.check || custom.admission || config.kubernetes_kinds {
            families.add(Box::new(crate::families::defined::Defined::new(custom, config.kubernetes_kinds)));
        }
        Engine {
            rules: config.rules.clone(),
            exemptions: config.exemptions.clone(),
            lookup_budget: config.lookup_budget,
            failure_policy: config.failure_policy,
            release_labels: config.release_labels.clone(),
            policy: crate::contract::Policy::of(config),
            defined_at_admission: custom.admission,
            metric_kinds: MetricKinds::of(&families),
            families,
        }
    }

    /// The stability policy contract diffs are judged by: the families' own, so a diff any face
    /// shows refuses what the webhook refuses.
    pub fn policy(&self) -> &crate::contract::Policy {
        &self.policy
    }

    /// Every (group, kind) the enabled families judge by name: what the webhook should be
    /// sent, and all a fail-closed entry should send.
    pub fn judged_kinds(&self) -> Vec<(String, String)> {
        self.families.kinds()
    }

    /// What a request is counted under in metrics (`MetricKinds`).
    pub fn metric_kinds(&self) -> &MetricKinds {
        &self.metric_kinds
    }

    /// The rule selection in force.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The context a family judges a subject in: the rule selection, the cluster view, what
    /// the subject may spend on lookups (the webhook stamps what is left of the request's
    /// deadline; a file has the configured budget) and the failure policy.
    fn context<'c>(&'c self, subject: &Subject, cluster: &'c dyn ClusterView) -> Context<'c> {
        let mut cx = Context::new(&self.rules, cluster);
        cx.budget = Some(subject.budget.unwrap_or(self.lookup_budget));
        cx.failure_policy = self.failure_policy;
        cx.stop = subject.stop.clone();
        cx
    }

    /// What judging this admitted subject costs, for a caller deciding where to judge it:
    /// nothing but reading the exemptions (no family concerns its kind, and custom resources
    /// are not judged at admission), work bounded by the subject (its family says so:
    /// `Family::bounded_by_subject`), or work a subject's size does not bound (a schema it
    /// carries to load, a proof over live objects).
    pub fn cost(&self, subject: &Subject) -> Cost {
        if !subject.admitted || subject.gvk.kind.is_empty() {
            return Cost::Open;
        }
        match self.families.by_kind(&subject.gvk.group, &subject.gvk.kind) {
            None if !self.defined_at_admission => Cost::Exemptions,
            Some(f) if f.bounded_by_subject() => Cost::Subject,
            _ => Cost::Open,
        }
    }

    /// How a review's decoding reads an object of this group and kind (`Family::reading`).
    pub fn reading(&self, group: &str, kind: &str) -> crate::subject::Reading {
        self.families.by_kind(group, kind).map(|f| f.reading()).unwrap_or_default()
    }

    /// Judge a subject, as long as every lookup answers without waiting: `None` as soon
    /// as the judgement asks the view for a kind it would have to wait on the cluster for (the
    /// caller then judges it where waiting is allowed). The verdict, when there is one, is the
    /// one `evaluate` gives.
    pub fn evaluate_without_waiting(&self, subject: &Subject, cluster: &dyn ClusterView) -> Option<Verdict> {
        let view = NoWaiting { inner: cluster, waited: std::sync::atomic::AtomicBool::new(false) };
        let verdict = self.evaluate(subject, &view);
        (!view.waited.load(std::sync::atomic::Ordering::Relaxed)).then_some(verdict)
    }

    /// Judge a subject.
    pub fn evaluate(&self, subject: &Subject, cluster: &dyn ClusterView) -> Verdict {
        let expired: Vec<String> = self
            .exemptions
            .iter()
            .filter(|e| e.selects(subject) && e.expired(subject))
            .map(|e| {
                let when =
                    e.expires.map(|t| humantime::format_rfc3339_seconds(t).to_string()).unwrap_or_default();
                format!("exemption \"{}\" expired at {when} and no longer applies", e.reason)
            })
            .collect();
        if let Some(e) = self.exemptions.iter().find(|e| e.matches(subject) && e.rules.is_empty()) {
            return Verdict { exempted: Some(e.reason.clone()), expired, ..Verdict::default() };
        }
        let mut cx = self.context(subject, cluster);
        // A document from a file that names a kind but no apiVersion cannot be dispatched:
        // it is reported like one that names neither, never passed as "no family concerns
        // it" (an admitted object always has both).
        let identified =
            !subject.gvk.kind.is_empty() && (subject.admitted || !subject.gvk.version.is_empty());
        let family = if identified {
            self.families.by_kind(&subject.gvk.group, &subject.gvk.kind).or_else(|| self.families.defined())
        } else {
            match self.unidentified(subject, &mut cx) {
                Some(schema) => self.families.by_schema(schema),
                None => None,
            }
        };
        let name = family.and_then(|f| {
            f.check(subject, &mut cx);
            if cx.declined() {
                return None;
            }
            report_unreadable(subject, &mut cx);
            Some(f.name())
        });
        let (mut findings, unchecked) = cx.into_parts();
        // Exemptions scoped to rules drop those rules' findings only.
        let mut exempted = None;
        for e in self.exemptions.iter().filter(|e| !e.rules.is_empty() && e.matches(subject)) {
            let before = findings.len();
            findings.retain(|f| !e.rules.iter().any(|s| s.covers(f.rule)));
            if findings.len() < before {
                exempted = Some(e.reason.clone());
            }
        }
        if subject.operation == Operation::Update
            && findings.iter().any(|f| f.action == Action::Deny)
            && !subject.stop.raised()
        {
            self.ratchet(subject, cluster, &mut findings);
        }
        // A subject that produced findings concerned the engine even without a family
        // (an unidentifiable document).
        let family = name.or_else(|| (!findings.is_empty()).then_some("document"));
        Verdict { family, findings, exempted, expired, unchecked }
    }

    /// A finding the reader made before any family judged (CVN-108 a repeated key, CVN-109 a
    /// document that cannot be read, CVN-110 a scalar kubectl reads otherwise), or a launcher
    /// build input's, judged as the engine judges its own: rule selection and the action from
    /// the config, then the exemptions that match the document (`document`: the object the
    /// finding is in, when there is one; with none only an exemption that selects nothing but
    /// rules can match). `Err` names the exemption that let it through.
    pub fn reader_finding(
        &self,
        document: Option<&serde_json::Value>,
        id: &'static str,
        pointer: &str,
        args: Vec<(&'static str, String)>,
    ) -> Result<Option<Finding>, String> {
        let Some(rule) = crate::rules::lookup(id) else { return Ok(None) };
        if !self.rules.runs(rule) {
            return Ok(None);
        }
        let mut subject = match document {
            Some(d) => Subject::from_document(d.clone()),
            None => Subject::from_document(serde_json::Value::Null),
        };
        subject.received_at = Some(std::time::SystemTime::now());
        let exempt = self
            .exemptions
            .iter()
            .find(|e| e.matches(&subject) && (e.rules.is_empty() || e.rules.iter().any(|s| s.covers(rule))));
        if let Some(e) = exempt {
            return Err(e.reason.clone());
        }
        Ok(Some(Finding::new(rule, self.rules.action(rule), pointer, args)))
    }

    /// UPDATE ratcheting, as the apiserver ratchets its own CRD validation: judge what the
    /// update changed, not what the object already carried. A denial the old object already
    /// drew on its own (same rule, pointer and arguments: the fingerprint) becomes a warning
    /// saying so; an object being deleted is never held back, so a finalizer can always be
    /// removed. Only runs when something denies, so an admitted update costs nothing more.
    fn ratchet(&self, subject: &Subject, cluster: &dyn ClusterView, findings: &mut [Finding]) {
        let new = subject.object.as_ref().and_then(|o| o.value().ok());
        let deleting = new.and_then(|v| v.at("/metadata/deletionTimestamp")).is_some_and(|t| !t.is_null());
        if deleting {
            for f in findings.iter_mut().filter(|f| f.action == Action::Deny) {
                f.demote("the object is being deleted (metadata.deletionTimestamp is set); deletion always completes");
            }
            return;
        }
        let Some(Ok(old)) = subject.old_object.as_ref().map(|o| o.value()) else { return };
        let mut before = Subject::from_document(old.clone());
        before.gvk = subject.gvk.clone();
        before.dry_run = subject.dry_run;
        before.user = subject.user.clone();
        before.groups = subject.groups.clone();
        before.budget = subject.budget;
        before.received_at = subject.received_at;
        before.admitted = subject.admitted;
        before.stop = subject.stop.clone();
        let mut carried = self.evaluate(&before, cluster).findings;
        for f in findings.iter_mut().filter(|f| f.action == Action::Deny) {
            if let Some(i) = carried.iter().position(|c| c.fingerprint() == f.fingerprint()) {
                carried.swap_remove(i);
                f.demote("pre-existing: the object already violated this before this update, which does not change it; fix it when you next edit it");
            }
        }
    }

    /// The mutating path: what the mutation rules (off by default) want written, as a
    /// JSONPatch against the subject's object. The patched object is judged again: a patch
    /// that would make it refused where it was not is dropped, with a warning.
    pub fn mutate(&self, subject: &Subject, cluster: &dyn ClusterView) -> Mutation {
        let mut out = Mutation::default();
        // As in `evaluate`: an exemption with no rules lets the subject through untouched; one
        // scoped to rules drops only those rules' edits.
        let exemptions: Vec<&Exemption> = self.exemptions.iter().filter(|e| e.matches(subject)).collect();
        if exemptions.iter().any(|e| e.rules.is_empty()) {
            return out;
        }
        let exempt = |rule: &str| {
            let meta = crate::rules::CATALOG.iter().find(|m| m.id == rule);
            meta.is_some_and(|m| exemptions.iter().any(|e| e.rules.iter().any(|s| s.covers(m))))
        };
        let Some(Ok(object)) = subject.object.as_ref().map(|o| o.value()) else { return out };
        let mut cx = self.context(subject, cluster);
        let mut edits = match self.families.by_kind(&subject.gvk.group, &subject.gvk.kind) {
            Some(f) => f.edits(subject, &mut cx),
            None => Vec::new(),
        };
        out.warnings.append(&mut cx.notes);
        let labels = (self.release_labels.0.as_str(), self.release_labels.1.as_str());
        match crate::families::construct::rendered_edits(object, labels, &cx) {
            Ok(more) => edits.extend(more),
            Err(why) => out.warnings.push(format!("covenant: not stamped: {why}")),
        }
        edits.retain(|e| !exempt(e.rule));
        if edits.is_empty() {
            return out;
        }
        let plan = match crate::mutation::plan(object, edits) {
            Ok(p) => p,
            Err(e) => {
                out.warnings.push(format!("covenant: not stamped: {e}"));
                return out;
            }
        };
        if plan.ops.is_empty() {
            return out;
        }
        // Judge the patched object again: a patch never turns an admitted object into a
        // refused one.
        let before = self.evaluate(subject, cluster);
        let mut patched = Subject::from_document(plan.patched.clone());
        patched.gvk = subject.gvk.clone();
        patched.operation = subject.operation.clone();
        patched.namespace = subject.namespace.clone();
        patched.old_object = subject
            .old_object
            .as_ref()
            .and_then(|o| o.value().ok())
            .map(|v| crate::subject::Object::from_value(v.clone()));
        patched.admitted = subject.admitted;
        patched.budget = subject.budget;
        let after = self.evaluate(&patched, cluster);
        let key = |f: &Finding| (f.rule.id, f.pointer.clone());
        let new_denials: Vec<String> = after
            .at(Action::Deny)
            .filter(|f| !before.at(Action::Deny).any(|b| key(b) == key(f)))
            .map(|f| f.line())
            .collect();
        if !new_denials.is_empty() {
            out.warnings.push(format!(
                "covenant: not stamped: the stamped object would be refused: {}",
                new_denials.join("; ")
            ));
            return out;
        }
        out.ops = plan.ops;
        out.patched = Some(plan.patched);
        out.rules = plan.rules;
        out
    }

    /// A subject with no kind: a document read from a file. Returns its `schema` member for
    /// dispatch, or reports why the document cannot be identified.
    fn unidentified<'s>(&self, subject: &'s Subject, cx: &mut Context<'_>) -> Option<&'s str> {
        let object = subject.object.as_ref()?;
        let value = match object.value() {
            Ok(v) => v,
            Err(e) => {
                cx.report("CVN-109", "", vec![("reason", format!("not valid JSON: {e}"))]);
                return None;
            }
        };
        let Value::Object(map) = value else {
            let reason = format!("expected a mapping, found {}", crate::strict::describe(value));
            cx.report("CVN-109", "", vec![("reason", reason)]);
            return None;
        };
        if let Some(schema) = map.get("schema").and_then(Value::as_str) {
            return Some(schema);
        }
        let reason = match (map.contains_key("apiVersion"), map.contains_key("kind")) {
            (true, false) => "required member \"kind\" is missing".to_string(),
            (false, true) => "required member \"apiVersion\" is missing".to_string(),
            (true, true) => "members \"apiVersion\" and \"kind\" must be non-empty strings".to_string(),
            (false, false) => "document names neither \"apiVersion\" and \"kind\" nor \"schema\" \
                               and \"version\""
                .to_string(),
        };
        cx.report("CVN-109", "", vec![("reason", reason)]);
        None
    }
}

/// The webhook keeps objects as raw JSON and parses them on first use, so an object that is
/// well-formed JSON but cannot be parsed (nested past the parser's depth limit) shows only
/// when a family reads it. Whatever a family tried to read and could not is reported here,
/// once for every family, under CVN-109: never passed unjudged.
fn report_unreadable(subject: &Subject, cx: &mut Context<'_>) {
    for (member, object) in [("object", &subject.object), ("oldObject", &subject.old_object)] {
        if let Some(e) = object.as_ref().and_then(|o| o.unreadable()) {
            cx.report("CVN-109", "", vec![("reason", format!("{member} cannot be read: {e}"))]);
        }
    }
}

/// A view that answers only what it can without waiting, and notes a lookup it would have waited on.
struct NoWaiting<'a> {
    inner: &'a dyn ClusterView,
    waited: std::sync::atomic::AtomicBool,
}

impl NoWaiting<'_> {
    /// Whether a lookup of this kind may go ahead; when it would wait, noted and refused.
    fn without_waiting(&self, group: &str, kind: &str) -> Result<(), crate::cluster::Error> {
        if self.inner.answers_without_waiting(group, kind) {
            return Ok(());
        }
        self.waited.store(true, std::sync::atomic::Ordering::Relaxed);
        Err(crate::cluster::Error::Unavailable {
            resource: format!("{kind}.{group}"),
            reason: "not answered at once; judged again where a lookup may wait".into(),
        })
    }
}

impl ClusterView for NoWaiting<'_> {
    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<std::time::Duration>,
    ) -> Result<Vec<std::sync::Arc<serde_json::Value>>, crate::cluster::Error> {
        self.without_waiting(group, kind)?;
        self.inner.list(group, kind, namespace, budget)
    }

    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &crate::cluster::Index,
        key: &str,
        budget: Option<std::time::Duration>,
    ) -> Result<Vec<std::sync::Arc<serde_json::Value>>, crate::cluster::Error> {
        self.without_waiting(group, kind)?;
        self.inner.lookup(group, kind, namespace, index, key, budget)
    }

    fn page(
        &self,
        group: &str,
        kind: &str,
        after: Option<&str>,
        limit: usize,
        budget: Option<std::time::Duration>,
    ) -> Result<crate::cluster::Page, crate::cluster::Error> {
        self.without_waiting(group, kind)?;
        self.inner.page(group, kind, after, limit, budget)
    }

    fn synced(&self) -> bool {
        self.inner.synced()
    }

    fn answers_without_waiting(&self, group: &str, kind: &str) -> bool {
        self.inner.answers_without_waiting(group, kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::EmptyCluster;
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    const REGISTRY: &str = "apiVersion: covenant.dev/v1alpha1\nkind: Registry\nversioned:\n  - schema: shop.app\n    version: \"1\"\n    members: [name]\n    resources: [{group: shop.example.com, kind: App}]\n";

    fn engine(exemptions: &str) -> Engine {
        // A folder of its own per call: tests run in parallel, and one rewriting a shared
        // registry file while another reads it made them flaky.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.yaml"), REGISTRY).unwrap();
        let text =
            format!("apiVersion: covenant.dev/v1alpha1\nkind: Config\nregistries: [r.yaml]\n{exemptions}");
        Engine::new(&Config::from_text("c.yaml", &text, Some(dir.path())).unwrap())
    }

    fn subject(namespace: &str, name: &str, user: &str, at: Option<SystemTime>) -> Subject {
        let mut s = Subject::from_document(json!({
            "apiVersion": "shop.example.com/v1", "kind": "App",
            "metadata": {"name": name, "namespace": namespace},
            "schema": "shop.app", "version": "2"
        }));
        s.user = Some(user.to_string());
        s.received_at = at;
        s
    }

    #[test]
    fn a_document_with_a_kind_and_no_api_version_is_reported_not_passed() {
        let e = engine("");
        let v = e.evaluate(
            &Subject::from_document(json!({"kind": "Application", "metadata": {"name": "a"}})),
            &EmptyCluster,
        );
        let found: Vec<(&str, &str)> = v.findings.iter().map(|f| (f.rule.id, f.message.as_str())).collect();
        assert_eq!(found, [("CVN-109", "required member \"apiVersion\" is missing")]);
        assert!(v.denied());
    }

    #[test]
    fn what_a_judgement_costs() {
        use crate::subject::Gvk;
        let e = engine("");
        let admitted = |group: &str, version: &str, kind: &str| {
            let mut s = Subject::from_document(json!({}));
            s.gvk = Gvk::from_api_version(&format!("{group}/{version}"), kind);
            s.admitted = true;
            s
        };
        assert_eq!(e.cost(&admitted("apps", "v1", "Deployment")), Cost::Exemptions);
        assert_eq!(e.cost(&admitted("openchoreo.dev", "v1alpha1", "Component")), Cost::Subject);
        assert_eq!(e.cost(&admitted("apiextensions.k8s.io", "v1", "CustomResourceDefinition")), Cost::Open);
        // A file's document is never costed as an admitted one.
        assert_eq!(e.cost(&Subject::from_document(json!({"apiVersion": "v1", "kind": "Pod"}))), Cost::Open);
        // Custom resources judged at admission: an unclaimed kind may need its definition.
        let e = engine("customResources:\n  admission: true\n");
        assert_eq!(e.cost(&admitted("gateway.networking.k8s.io", "v1", "HTTPRoute")), Cost::Open);
    }

    #[test]
    fn dispatch_by_kind_judges_and_unknown_kinds_are_not_concerned() {
        let e = engine("");
        let v = e.evaluate(&subject("a", "x", "u", None), &EmptyCluster);
        assert_eq!(v.family, Some("versioned"));
        assert!(v.denied());
        // A Pod read from a file is held to Kubernetes' schema of it (`kubernetesKinds`); at
        // admission the API server validates it, and covenant is not concerned.
        let mut pod =
            Subject::from_document(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}));
        let v = e.evaluate(&pod, &EmptyCluster);
        assert_eq!(v.family, Some("defined"));
        assert!(v.findings.is_empty());
        pod.admitted = true;
        let v = e.evaluate(&pod, &EmptyCluster);
        assert_eq!(v.family, None);
        assert!(v.findings.is_empty());
        // Not concerned means not parsed: a raw object stays raw.
        let raw = bytes::Bytes::from_static(b"{\"kind\":\"Pod\"}");
        let mut pod = Subject::from_document(json!({}));
        pod.gvk = crate::subject::Gvk::from_api_version("v1", "Pod");
        pod.admitted = true;
        pod.object = Some(crate::subject::Object::from_raw(raw));
        e.evaluate(&pod, &EmptyCluster);
        assert!(!pod.object.as_ref().unwrap().is_parsed());
    }

    #[test]
    fn exemptions_by_group_by_rule_and_expired_ones_are_reported() {
        let e = engine(
            "exemptions:\n  - groups: [platform-admins]\n    reason: admins migrate by hand\n  - namespaces: [legacy]\n    rules: [CVN-101]\n    reason: legacy members are known\n  - namespaces: [old]\n    reason: gone\n    expires: 2020-01-01T00:00:00Z\n",
        );
        let now = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000));
        // By group: the requester's groups are matched.
        let mut s = subject("prod", "shop", "alice", now);
        s.groups = vec!["platform-admins".into()];
        assert_eq!(e.evaluate(&s, &EmptyCluster).exempted.as_deref(), Some("admins migrate by hand"));
        // By rule: only that rule's findings go; the object is still judged.
        let mut legacy = subject("legacy", "shop", "alice", now);
        legacy.object = Some(crate::subject::Object::from_value(json!({
            "apiVersion": "shop.example.com/v1", "kind": "App", "metadata": {"name": "shop", "namespace": "legacy"},
            "schema": "shop.app", "version": "2", "nmae": "x"})));
        let v = e.evaluate(&legacy, &EmptyCluster);
        let rules: Vec<&str> = v.findings.iter().map(|f| f.rule.id).collect();
        assert_eq!(rules, ["CVN-106"], "CVN-101 exempted, CVN-106 still judged");
        assert_eq!(v.exempted.as_deref(), Some("legacy members are known"));
        // Expired: it no longer applies, and the verdict says so.
        let v = e.evaluate(&subject("old", "shop", "alice", now), &EmptyCluster);
        assert!(v.denied());
        assert_eq!(v.expired, ["exemption \"gone\" expired at 2020-01-01T00:00:00Z and no longer applies"]);
    }

    #[test]
    fn exemptions_match_every_listed_selector_and_expire() {
        let e = engine(
            "exemptions:\n  - namespaces: [legacy]\n    names: [\"old-*\"]\n    reason: migrating\n    expires: 2030-01-01T00:00:00Z\n  - users: [ci-bot]\n    reason: the bot is trusted\n",
        );
        let before = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000); // 2027
        let after = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000); // 2030
        let exempted = e.evaluate(&subject("legacy", "old-shop", "alice", Some(before)), &EmptyCluster);
        assert_eq!(exempted.exempted.as_deref(), Some("migrating"));
        assert!(!exempted.denied());
        // Every selector must match: right namespace, wrong name.
        assert!(e.evaluate(&subject("legacy", "new-shop", "alice", Some(before)), &EmptyCluster).denied());
        // Expired.
        assert!(e.evaluate(&subject("legacy", "old-shop", "alice", Some(after)), &EmptyCluster).denied());
        // By user, anywhere.
        let bot = e.evaluate(&subject("prod", "shop", "ci-bot", Some(after)), &EmptyCluster);
        assert_eq!(bot.exempted.as_deref(), Some("the bot is trusted"));
    }
}
