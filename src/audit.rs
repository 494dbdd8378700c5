//! The background audit: re-check the objects the cluster already stores with the same engine
//! the webhook runs, so a refusal that could not happen at admission (a consumer applied
//! before its construct, a construct withdrawn under a pin) still reaches someone.
//!
//! What it finds goes to metrics (`covenant_audit_findings{rule,kind}`) and to one capped
//! summary served on the admin port (`GET /api/v0/audit`) — never a report object per
//! resource. The walk is bounded: kind by kind, page by page through the `ClusterView`, paced
//! to a rate of objects per second, and it stops between pages when the server stops.

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::cluster::lease::Leadership;
use crate::cluster::ClusterView;
use crate::engine::Engine;
use crate::metrics::Metrics;
use crate::rules::Action;
use crate::subject::Subject;

/// How the audit walks the cluster.
#[derive(Clone, Debug)]
pub struct Options {
    /// Time from the end of one run to the start of the next.
    pub interval: Duration,
    /// Objects fetched and judged per page.
    pub page_size: usize,
    /// Objects judged per second, at most.
    pub rate: f64,
    /// Findings the summary lists in full; the counts always cover every finding.
    pub summary_limit: usize,
    /// The kinds re-checked, as (group, kind).
    pub kinds: Vec<(String, String)>,
    /// Budget of each object's cluster lookups, and of each page's list.
    pub lookup_budget: Duration,
}

/// One finding as the summary lists it: which object, which rule, where, what.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// Rule id.
    pub rule: &'static str,
    /// Configured action (`deny`, `warn`, `audit`).
    pub action: &'static str,
    /// The object's apiVersion.
    pub api_version: String,
    /// The object's kind.
    pub kind: String,
    /// The object's namespace (absent: cluster-scoped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// RFC 6901 pointer into the object.
    pub pointer: String,
    /// The rule's message.
    pub message: String,
}

/// A kind the run could not list (whole or in part).
#[derive(Clone, Debug, Serialize)]
pub struct ListError {
    /// `Kind.group`.
    pub resource: String,
    /// Why.
    pub message: String,
}

/// What one completed run found.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// Which run this was (1 for the first).
    pub run: u64,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it finished (RFC 3339).
    pub finished_at: String,
    /// How long it took.
    pub duration_seconds: f64,
    /// Objects judged.
    pub objects: usize,
    /// Findings, all of them.
    pub findings: usize,
    /// Objects judged, by kind.
    pub objects_by_kind: BTreeMap<String, usize>,
    /// Findings by rule id.
    pub by_rule: BTreeMap<&'static str, usize>,
    /// Findings by kind.
    pub by_kind: BTreeMap<String, usize>,
    /// Findings by rule and kind: what `covenant_audit_findings` exports.
    #[serde(skip)]
    pub by_rule_and_kind: BTreeMap<(&'static str, String), usize>,
    /// Kinds that could not be listed; their objects are missing from the counts.
    pub errors: Vec<ListError>,
    /// How many findings `items` may hold.
    pub limit: usize,
    /// Whether `items` holds fewer findings than `findings` counts.
    pub truncated: bool,
    /// The first `limit` findings, in (rule, kind, namespace, name, pointer) order.
    pub items: Vec<Item>,
}

/// What `GET /api/v0/audit` answers: the last completed run, whether one is under way, and
/// which replica leads (only the leader audits).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// `covenant.dev/v1alpha1`.
    pub api_version: &'static str,
    /// `AuditSummary`.
    pub kind: &'static str,
    /// Time between runs.
    pub interval_seconds: f64,
    /// Whether a run is under way now.
    pub running: bool,
    /// Whether this replica leads, and so audits.
    pub leader: bool,
    /// Which replica holds the leader Lease, as this one last read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// The last completed run (on this replica, while it led); absent until the first finishes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<Run>,
}

/// The audit's state as the admin listener reads it.
#[derive(Debug)]
pub struct Status {
    interval: Duration,
    running: RwLock<bool>,
    last: RwLock<Option<Run>>,
    leadership: RwLock<Leadership>,
}

impl Status {
    /// The summary to serve now.
    pub fn summary(&self) -> Summary {
        Summary {
            api_version: "covenant.dev/v1alpha1",
            kind: "AuditSummary",
            interval_seconds: self.interval.as_secs_f64(),
            running: *self.running.read().unwrap_or_else(|e| e.into_inner()),
            leader: self.leading(),
            holder: self.leadership.read().unwrap_or_else(|e| e.into_inner()).holder(),
            last_run: self.last.read().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }

    /// Whether this replica leads, and so audits.
    pub fn leading(&self) -> bool {
        self.leadership.read().unwrap_or_else(|e| e.into_inner()).leading()
    }
}

/// The running audit: dropping it (or calling `stop`) stops the walk between pages.
#[derive(Debug)]
pub struct Handle {
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What the admin listener serves.
    pub status: Arc<Status>,
}

impl Handle {
    /// Stop the audit and wait for its thread.
    pub fn stop(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shut();
    }
}

/// The auditor: the engine, the view it reads, where it reports.
pub struct Auditor {
    engine: Arc<Engine>,
    cluster: Arc<dyn ClusterView>,
    metrics: Metrics,
    options: Options,
    status: Arc<Status>,
    events: Option<crate::cluster::events::EventSink>,
    reports: Option<(std::sync::Mutex<crate::cluster::reports::Reports>, tokio::runtime::Handle)>,
}

/// A run's findings by namespace (none: cluster-scoped), for the reports.
type ByNamespace = BTreeMap<Option<String>, crate::cluster::reports::Findings>;

/// A run ended early: the server is stopping, or this replica stopped leading.
enum Stopped {
    /// The server is stopping.
    Server,
    /// Another replica leads now: the run is dropped, the next waits for leadership.
    Deposed,
}

impl Auditor {
    /// An auditor judging `cluster` with `engine`, reporting into `metrics`.
    pub fn new(
        engine: Arc<Engine>,
        cluster: Arc<dyn ClusterView>,
        metrics: Metrics,
        options: Options,
    ) -> Auditor {
        let status = Arc::new(Status {
            interval: options.interval,
            running: RwLock::new(false),
            last: RwLock::new(None),
            leadership: RwLock::new(Leadership::alone("covenant")),
        });
        Auditor { engine, cluster, metrics, options, status, events: None, reports: None }
    }

    /// After each completed run, write its findings as OpenReports through `reports` (on
    /// `runtime`: the audit's own thread blocks on the writes).
    pub fn with_reports(
        mut self,
        reports: crate::cluster::reports::Reports,
        runtime: tokio::runtime::Handle,
    ) -> Auditor {
        self.reports = Some((std::sync::Mutex::new(reports), runtime));
        self
    }

    /// Tell each finding's object, with an Event (the sink's rate limits apply).
    pub fn with_events(mut self, sink: crate::cluster::events::EventSink) -> Auditor {
        self.events = Some(sink);
        self
    }

    /// Audit only while `leadership` says this replica leads (the leader election's; without
    /// one, a single process always leads).
    pub fn led_by(self, leadership: Leadership) -> Auditor {
        *self.status.leadership.write().unwrap_or_else(|e| e.into_inner()) = leadership;
        self
    }

    /// What the admin listener serves.
    pub fn status(&self) -> Arc<Status> {
        self.status.clone()
    }

    /// Start the loop on a thread of its own (the engine's lookups block while they wait):
    /// once the view is synced, run, wait the interval, run again, until stopped.
    pub fn spawn(self) -> std::io::Result<Handle> {
        let (tx, rx) = std::sync::mpsc::channel();
        let status = self.status.clone();
        let thread = std::thread::Builder::new().name("covenant-audit".into()).spawn(move || {
            let mut run = 0;
            loop {
                if !self.cluster.synced() || !self.status.leading() {
                    if wait(&rx, Duration::from_millis(500)).is_err() {
                        return;
                    }
                    continue;
                }
                run += 1;
                match self.run_once(run, &rx) {
                    Err(Stopped::Server) => return,
                    Err(Stopped::Deposed) => {
                        tracing::info!(run, "audit run dropped: another replica leads now");
                        continue;
                    }
                    Ok(()) => {}
                }
                if wait(&rx, self.options.interval).is_err() {
                    return;
                }
            }
        })?;
        Ok(Handle { stop: Some(tx), thread: Some(thread), status })
    }

    /// One run over every audited kind; publishes the run when it completes.
    fn run_once(&self, run: u64, stop: &Receiver<()>) -> Result<(), Stopped> {
        *self.status.running.write().unwrap_or_else(|e| e.into_inner()) = true;
        let outcome = self.walk(run, stop);
        *self.status.running.write().unwrap_or_else(|e| e.into_inner()) = false;
        let (finished, by_namespace) = outcome?;
        // A replica that lost the lease during the run writes nothing more to the cluster.
        if !self.status.leading() {
            return Err(Stopped::Deposed);
        }
        self.report(&by_namespace);
        self.publish(finished);
        Ok(())
    }

    /// Walk every kind page by page, paced, judging each object.
    fn walk(&self, run: u64, stop: &Receiver<()>) -> Result<(Run, ByNamespace), Stopped> {
        let started_wall = SystemTime::now();
        let started = Instant::now();
        let mut result = Run { run, limit: self.options.summary_limit, ..Run::default() };
        let mut items = Vec::new();
        let mut by_namespace = ByNamespace::new();
        let mut judged = 0usize;
        for (group, kind) in &self.options.kinds {
            let resource = if group.is_empty() { kind.clone() } else { format!("{kind}.{group}") };
            let mut after: Option<String> = None;
            loop {
                let budget = Some(self.options.lookup_budget);
                let page =
                    match self.cluster.page(group, kind, after.as_deref(), self.options.page_size, budget) {
                        Ok(p) => p,
                        Err(e) => {
                            tracing::warn!(%resource, error = %e, "audit could not list a kind");
                            result
                                .errors
                                .push(ListError { resource: resource.clone(), message: e.to_string() });
                            break;
                        }
                    };
                for object in &page.objects {
                    let mut subject = Subject::from_stored((**object).clone(), SystemTime::now());
                    subject.budget = budget;
                    let verdict = self.engine.evaluate(&subject, self.cluster.as_ref());
                    result.objects += 1;
                    *result.objects_by_kind.entry(subject.gvk.kind.clone()).or_default() += 1;
                    // An Event on the object per rule that would refuse it or warns of it.
                    if let Some(sink) = &self.events {
                        let loud = verdict
                            .findings
                            .iter()
                            .filter(|f| matches!(f.action, Action::Deny | Action::Warn));
                        crate::cluster::events::tell(sink, &subject, loud, "Audited");
                    }
                    if self.reports.is_some() {
                        use crate::pointer::At;
                        let uid = object.at("/metadata/uid").and_then(serde_json::Value::as_str);
                        for f in verdict
                            .findings
                            .iter()
                            .filter(|f| matches!(f.action, Action::Deny | Action::Warn))
                        {
                            by_namespace.entry(subject.namespace.clone()).or_default().add(
                                crate::cluster::reports::Finding {
                                    rule: f.rule.id,
                                    slug: f.rule.slug,
                                    fails: f.action == Action::Deny,
                                    api_version: subject.gvk.api_version(),
                                    kind: subject.gvk.kind.clone(),
                                    name: subject.name.clone(),
                                    uid: uid.map(str::to_string),
                                    pointer: f.pointer.clone(),
                                    message: f.message.clone(),
                                    fix: f.help.clone(),
                                },
                            );
                        }
                    }
                    for f in verdict.findings.iter().filter(|f| f.action != Action::Off) {
                        result.findings += 1;
                        *result.by_rule.entry(f.rule.id).or_default() += 1;
                        *result.by_kind.entry(subject.gvk.kind.clone()).or_default() += 1;
                        *result.by_rule_and_kind.entry((f.rule.id, subject.gvk.kind.clone())).or_default() +=
                            1;
                        items.push(Item {
                            rule: f.rule.id,
                            action: f.action.as_str(),
                            api_version: subject.gvk.api_version(),
                            kind: subject.gvk.kind.clone(),
                            namespace: subject.namespace.clone(),
                            name: subject.name.clone(),
                            pointer: f.pointer.clone(),
                            message: f.message.clone(),
                        });
                    }
                    // The summary is capped: however many findings the cluster holds, no more
                    // than twice the cap are kept while walking.
                    if items.len() > 2 * result.limit.max(1) {
                        keep_first(&mut items, result.limit);
                    }
                }
                judged += page.objects.len();
                // Pace: the next page starts no sooner than the rate allows for what was judged
                // (no rate: at once); either way a stop is noticed here, between pages.
                let due = if self.options.rate > 0.0 {
                    Duration::from_secs_f64(judged as f64 / self.options.rate)
                } else {
                    Duration::ZERO
                };
                wait(stop, due.saturating_sub(started.elapsed()))?;
                if !self.status.leading() {
                    return Err(Stopped::Deposed);
                }
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
        }
        keep_first(&mut items, result.limit);
        result.truncated = result.findings > items.len();
        result.items = items;
        result.started_at = humantime::format_rfc3339_seconds(started_wall).to_string();
        result.finished_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        result.duration_seconds = started.elapsed().as_secs_f64();
        Ok((result, by_namespace))
    }

    /// Write a completed run's findings as OpenReports, when asked to.
    fn report(&self, by_namespace: &ByNamespace) {
        let Some((reports, runtime)) = &self.reports else { return };
        let seconds = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let mut reports = reports.lock().unwrap_or_else(|e| e.into_inner());
        match runtime.block_on(reports.write(by_namespace, seconds)) {
            Ok(n) => tracing::info!(reports = n, "audit findings written as OpenReports"),
            Err(why) => tracing::debug!(%why, "no OpenReports written"),
        }
    }

    /// Replace the metrics and the summary with a completed run's.
    fn publish(&self, run: Run) {
        let m = &self.metrics;
        // Reset first: a rule that no longer finds anything drops to no series, not a stale
        // count.
        m.audit_findings.reset();
        for ((rule, kind), n) in &run.by_rule_and_kind {
            m.audit_findings.with_label_values(&[rule, kind.as_str()]).set(*n as i64);
        }
        m.audit_objects.reset();
        for (kind, n) in &run.objects_by_kind {
            m.audit_objects.with_label_values(&[kind.as_str()]).set(*n as i64);
        }
        let result = if run.errors.is_empty() { "complete" } else { "partial" };
        m.audit_runs.with_label_values(&[result]).inc();
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
        m.audit_last_run.set(now.as_secs_f64());
        m.audit_duration.set(run.duration_seconds);
        tracing::info!(
            run = run.run,
            objects = run.objects,
            findings = run.findings,
            errors = run.errors.len(),
            duration_seconds = run.duration_seconds,
            "audit run finished"
        );
        *self.status.last.write().unwrap_or_else(|e| e.into_inner()) = Some(run);
    }
}

/// Keep the first `limit` items in (rule, kind, namespace, name, pointer) order.
fn keep_first(items: &mut Vec<Item>, limit: usize) {
    items.sort_by(|a, b| {
        (a.rule, &a.kind, &a.namespace, &a.name, &a.pointer).cmp(&(
            b.rule,
            &b.kind,
            &b.namespace,
            &b.name,
            &b.pointer,
        ))
    });
    items.truncate(limit);
}

/// Wait `d`, or less if the audit is being stopped (its sender dropped).
fn wait(stop: &Receiver<()>, d: Duration) -> Result<(), Stopped> {
    match stop.recv_timeout(d) {
        Err(RecvTimeoutError::Timeout) => Ok(()),
        Ok(()) | Err(RecvTimeoutError::Disconnected) => Err(Stopped::Server),
    }
}
