//! Findings told to the people who own the objects: an `events.k8s.io/v1` Event on the object
//! for a denial at admission (never a dry run) and for an audit finding, so `kubectl describe
//! component web` shows why. `regarding` is the object, `reason` the rule's slug, `note` the
//! finding's message, the reporting controller `covenant.dev/covenant`.
//!
//! kube's `Recorder` writes them and folds a repeat of one event into a series (a patch that
//! counts it) rather than a new object. Before it, the sink bounds what reaches the API server:
//! what is emitted waits in a bounded queue (a full queue drops, counted, and never blocks a
//! review), one object gets at most one event per reason per `per_object`, and all of them at
//! most `burst` at once and `per_second` after — so a burst of denials cannot flood the API
//! server. Each drop is counted in `covenant_events_total{result="dropped"}`.
//!
//! Among replicas that elect a leader, only the leader writes: a replica that does not lead
//! hands what is emitted to it (through a `Leader`, `server::peer`'s), in batches of up to
//! `HAND_BATCH`, counted as `forwarded` (or `failed`), and the leader's limits then hold for
//! the whole deployment.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use crate::metrics::Metrics;

/// The reporting controller's name on every Event.
pub const CONTROLLER: &str = "covenant.dev/covenant";

/// How many events may be emitted, and how often for one object.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Events waiting to be written, at most; past it new ones are dropped.
    pub queue: usize,
    /// Events written at once after a quiet spell.
    pub burst: f64,
    /// Events written per second, sustained.
    pub per_second: f64,
    /// One object gets at most one event per reason this often.
    pub per_object: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { queue: 1024, burst: 25.0, per_second: 5.0, per_object: Duration::from_secs(60) }
    }
}

/// One event to write.
#[derive(Clone, Debug)]
pub struct Pending {
    /// The object it regards.
    pub regarding: ObjectReference,
    /// The rule's slug (`floating-image`).
    pub reason: String,
    /// The finding's message.
    pub note: String,
    /// What covenant did: `Denied` (admission) or `Audited`.
    pub action: &'static str,
}

/// Where events are emitted; cheap to clone; emitting never waits.
#[derive(Clone, Debug)]
pub struct EventSink {
    tx: tokio::sync::mpsc::Sender<Pending>,
    metrics: Metrics,
    relay: Arc<OnceLock<Arc<dyn Leader>>>,
}

/// Events handed to the leader at once, at most.
pub const HAND_BATCH: usize = 64;

/// The leader, as a replica that writes only while it leads sees it.
pub trait Leader: Send + Sync + std::fmt::Debug {
    /// Whether this replica leads (and so writes its events itself).
    fn leading(&self) -> bool;
    /// Hand `events` to the replica that leads; why not, when they could not be.
    fn hand<'a>(&'a self, events: &'a [Pending]) -> futures_util::future::BoxFuture<'a, Result<(), String>>;
}

impl EventSink {
    /// Queue `event`; a full queue drops it (counted).
    pub fn emit(&self, event: Pending) {
        if self.tx.try_send(event).is_err() {
            self.metrics.events.with_label_values(&["dropped"]).inc();
        }
    }

    /// From now on, write only while `leader` finds this replica leading, and hand to the
    /// leader otherwise. Set once; a second is ignored.
    pub fn relay_through(&self, leader: Arc<dyn Leader>) {
        let _ = self.relay.set(leader);
    }
}

/// Start writing events through `client` as `instance` (the pod's name): the sink to emit to.
pub fn start(client: kube::Client, instance: Option<String>, limits: Limits, metrics: Metrics) -> EventSink {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Pending>(limits.queue.max(1));
    let recorder = Recorder::new(client, Reporter { controller: CONTROLLER.into(), instance });
    let counted = metrics.clone();
    let relay: Arc<OnceLock<Arc<dyn Leader>>> = Arc::default();
    let relayed = relay.clone();
    tokio::spawn(async move {
        let mut bucket = limits.burst;
        let mut filled = Instant::now();
        let mut last: HashMap<(String, String), Instant> = HashMap::new();
        let mut failing: Option<String> = None;
        while let Some(event) = rx.recv().await {
            if let Some(relay) = relayed.get().filter(|r| !r.leading()) {
                let mut batch = vec![event];
                while batch.len() < HAND_BATCH {
                    match rx.try_recv() {
                        Ok(e) => batch.push(e),
                        Err(_) => break,
                    }
                }
                let n = batch.len() as u64;
                match relay.hand(&batch).await {
                    Ok(()) => {
                        counted.events.with_label_values(&["forwarded"]).inc_by(n);
                        if failing.take().is_some() {
                            tracing::info!("denials are handed to the leader again");
                        }
                    }
                    Err(why) => {
                        counted.events.with_label_values(&["failed"]).inc_by(n);
                        // Said once while it goes on failing the same way.
                        if failing.as_deref() != Some(why.as_str()) {
                            tracing::warn!(error = %why, events = n, "could not hand events to the leader; they are not written");
                            failing = Some(why);
                        }
                    }
                }
                continue;
            }
            let key = (object_key(&event.regarding), event.reason.clone());
            if last.get(&key).is_some_and(|at| at.elapsed() < limits.per_object) {
                counted.events.with_label_values(&["dropped"]).inc();
                continue;
            }
            // The overall rate: wait for a token rather than drop, the queue bounds the wait.
            bucket = (bucket + filled.elapsed().as_secs_f64() * limits.per_second).min(limits.burst);
            filled = Instant::now();
            if bucket < 1.0 {
                let wait = (1.0 - bucket) / limits.per_second.max(f64::MIN_POSITIVE);
                tokio::time::sleep(Duration::from_secs_f64(wait.min(60.0))).await;
                bucket = 1.0;
                filled = Instant::now();
            }
            bucket -= 1.0;
            last.insert(key, Instant::now());
            if last.len() > 10_000 {
                last.retain(|_, at| at.elapsed() < limits.per_object);
            }
            let e = Event {
                type_: EventType::Warning,
                reason: event.reason,
                note: Some(truncate(&event.note, 1024)),
                action: event.action.to_string(),
                secondary: None,
            };
            match recorder.publish(&e, &event.regarding).await {
                Ok(()) => counted.events.with_label_values(&["written"]).inc(),
                Err(err) => {
                    counted.events.with_label_values(&["failed"]).inc();
                    tracing::debug!(error = %err, "could not write an event");
                }
            }
        }
    });
    EventSink { tx, metrics, relay }
}

/// Tell the object `subject` names of `findings`, one Event per rule, the first three: what
/// covenant did (`Denied`, `Audited`), the rule's slug as the reason, the finding as the note.
/// An object without a name (yet to get one from `generateName`) is told nothing.
pub fn tell<'a>(
    sink: &EventSink,
    subject: &crate::subject::Subject,
    findings: impl Iterator<Item = &'a crate::rules::Finding>,
    action: &'static str,
) {
    if subject.name.is_empty() {
        return;
    }
    use crate::pointer::At;
    let uid = subject
        .object
        .as_ref()
        .and_then(|o| o.value().ok())
        .and_then(|v| v.at("/metadata/uid"))
        .and_then(serde_json::Value::as_str);
    let regarding = reference(
        subject.gvk.api_version(),
        &subject.gvk.kind,
        subject.namespace.as_deref(),
        &subject.name,
        uid,
    );
    let mut rules = std::collections::BTreeSet::new();
    for f in findings.filter(|f| rules.insert(f.rule.id)).take(3) {
        sink.emit(Pending {
            regarding: regarding.clone(),
            reason: f.rule.slug.to_string(),
            note: f.line(),
            action,
        });
    }
}

/// The reference to the object a subject names.
pub fn reference(
    api_version: String,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    uid: Option<&str>,
) -> ObjectReference {
    ObjectReference {
        api_version: Some(api_version),
        kind: Some(kind.to_string()),
        namespace: namespace.map(str::to_string),
        name: Some(name.to_string()),
        uid: uid.map(str::to_string),
        ..ObjectReference::default()
    }
}

fn object_key(r: &ObjectReference) -> String {
    format!(
        "{}/{}/{}/{}",
        r.api_version.as_deref().unwrap_or_default(),
        r.kind.as_deref().unwrap_or_default(),
        r.namespace.as_deref().unwrap_or_default(),
        r.name.as_deref().unwrap_or_default()
    )
}

/// The API server refuses an Event note over 1 KiB.
fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max - 3;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}
