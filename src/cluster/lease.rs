//! One leader among covenant's replicas, chosen as client-go's leader election chooses: a
//! `coordination.k8s.io/v1` Lease in covenant's namespace, held by the replica named in
//! `holderIdentity` (its pod name) while it renews it. Every write covenant makes to the cluster
//! — today the background audit's — runs on the leader only; every replica keeps serving
//! admission.
//!
//! The semantics are client-go's (`k8s.io/client-go/tools/leaderelection`): a candidate takes a
//! Lease that is absent, or whose holder has not renewed it for `lease` as this replica observed
//! it (its own clock, never the holder's timestamps, so clock skew cannot steal a lease); every
//! write is an optimistic update on the Lease's resourceVersion, so of two candidates only one
//! succeeds and the other sees a conflict; the leader renews every `retry` and, if it has not
//! renewed for `renew_deadline`, stops leading at once — before the lease could pass to another
//! replica, so two never lead together. At shutdown the leader releases the Lease (`release`,
//! client-go's `ReleaseOnCancel`), so another replica takes it at its next try. kube has no
//! elector of its own and the crates that wrap this are thin and tied to older kube releases,
//! so it is written here against kube's `Api`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};

/// How long a lease lasts, and how often it is renewed or tried.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// How long a Lease not renewed stays its holder's (client-go's default: 15 s).
    pub lease: Duration,
    /// How long the leader goes on leading without a successful renewal (10 s).
    pub renew_deadline: Duration,
    /// How often a candidate tries, and the leader renews (2 s).
    pub retry: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            lease: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry: Duration::from_secs(2),
        }
    }
}

/// Whether this replica leads, as the elector last found; shared with what only a leader does.
#[derive(Clone, Debug)]
pub struct Leadership {
    leading: Arc<AtomicBool>,
    /// This replica's identity.
    pub identity: String,
    holder: Arc<Mutex<Option<String>>>,
    /// Where this replica is reached by the others when it leads (`host:port`).
    advertised: Arc<Mutex<Option<String>>>,
    /// Where the leader said it is reached, as last read from the Lease.
    leader_address: Arc<Mutex<Option<String>>>,
}

/// The Lease annotation in which the leader names where the other replicas reach it.
pub const PEER_ADDRESS: &str = "covenant.dev/peer-address";

fn locked<T: Clone>(m: &Mutex<T>) -> T {
    m.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn put<T>(m: &Mutex<T>, value: T) {
    *m.lock().unwrap_or_else(|e| e.into_inner()) = value;
}

impl Leadership {
    /// A replica that leads without an election: `--offline`, `--dev`, a single process.
    pub fn alone(identity: &str) -> Leadership {
        Leadership::new(identity, true)
    }

    /// `identity`'s leadership, leading or not (and then holding the Lease, as far as it knows).
    fn new(identity: &str, leading: bool) -> Leadership {
        Leadership {
            leading: Arc::new(AtomicBool::new(leading)),
            identity: identity.to_string(),
            holder: Arc::new(Mutex::new(leading.then(|| identity.to_string()))),
            advertised: Arc::default(),
            leader_address: Arc::default(),
        }
    }

    /// Whether this replica leads now.
    pub fn leading(&self) -> bool {
        self.leading.load(Ordering::SeqCst)
    }

    /// Who holds the Lease, as last read (none before the first read, or when nobody does).
    pub fn holder(&self) -> Option<String> {
        locked(&self.holder)
    }

    /// Name where the other replicas reach this one while it leads (written into the Lease
    /// at the next renewal).
    pub fn advertise(&self, address: Option<String>) {
        put(&self.advertised, address);
    }

    /// Where the leader is reached, as the Lease last said: none while this replica leads,
    /// before the first read, when nobody leads, or when the leader named no address.
    pub fn leader_address(&self) -> Option<String> {
        if self.leading() {
            return None;
        }
        locked(&self.leader_address)
    }

    fn set(&self, leading: bool, holder: Option<String>, address: Option<String>) {
        let was = self.leading.swap(leading, Ordering::SeqCst);
        if was != leading {
            if leading {
                tracing::info!(identity = %self.identity, "leading: this replica now runs the audit");
            } else {
                tracing::warn!(identity = %self.identity, holder = ?holder, "no longer leading: the audit stops here");
            }
        }
        put(&self.holder, holder);
        put(&self.leader_address, address);
    }
}

/// Run the election for the Lease `name` through `api` as `identity`, until the task is
/// dropped: the returned leadership follows it.
pub fn elect(
    api: Api<Lease>,
    name: &str,
    identity: &str,
    timing: Timing,
) -> (Leadership, tokio::task::JoinHandle<()>) {
    let leadership = Leadership::new(identity, false);
    let elector =
        Elector { api, name: name.to_string(), leadership: leadership.clone(), timing, observed: None };
    let task = tokio::spawn(elector.run());
    (leadership, task)
}

/// Give up the Lease `name` as client-go's `ReleaseOnCancel` does, once this replica's election
/// has been stopped (its task aborted): this replica stops leading at once, and if the Lease
/// still names it, it is written with no holder (and its peer address removed), so another
/// replica takes it at its next try instead of after the lease duration. Whether it was
/// released.
pub async fn release(api: &Api<Lease>, name: &str, leadership: &Leadership) -> Result<bool, kube::Error> {
    leadership.set(false, None, None);
    let Some(mut lease) = api.get_opt(name).await? else { return Ok(false) };
    let before = lease.spec.clone().unwrap_or_default();
    if before.holder_identity.as_deref() != Some(leadership.identity.as_str()) {
        return Ok(false);
    }
    let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
    lease.spec = Some(LeaseSpec {
        holder_identity: None,
        lease_duration_seconds: Some(1),
        acquire_time: Some(now.clone()),
        renew_time: Some(now),
        lease_transitions: before.lease_transitions,
        ..LeaseSpec::default()
    });
    if let Some(annotations) = lease.metadata.annotations.as_mut() {
        annotations.remove(PEER_ADDRESS);
    }
    api.replace(name, &PostParams::default(), &lease).await?;
    tracing::info!(identity = %leadership.identity, "leader Lease released");
    Ok(true)
}

struct Elector {
    api: Api<Lease>,
    name: String,
    leadership: Leadership,
    timing: Timing,
    /// The Lease's spec as last read, and when this replica saw it change.
    observed: Option<(LeaseSpec, Instant)>,
}

/// What one try found.
enum Tried {
    /// This replica holds the Lease (acquired or renewed).
    Held,
    /// Another replica holds it, and has renewed it within the lease duration: who, and where
    /// it said it is reached.
    Other(Option<String>, Option<String>),
    /// The read or write failed (a conflict, the API server away).
    Failed(String),
}

impl Elector {
    async fn run(mut self) {
        let mut renewed: Option<Instant> = None;
        loop {
            match self.try_once().await {
                Tried::Held => {
                    renewed = Some(Instant::now());
                    self.leadership.set(true, Some(self.leadership.identity.clone()), None);
                }
                Tried::Other(holder, address) => {
                    renewed = None;
                    self.leadership.set(false, holder, address);
                }
                Tried::Failed(why) => {
                    // A leader that cannot renew stops before its lease can pass to another.
                    let expired = renewed.is_none_or(|at| at.elapsed() >= self.timing.renew_deadline);
                    if self.leadership.leading() && expired {
                        tracing::warn!(error = %why, "could not renew the leader Lease within the renew deadline");
                        self.leadership.set(false, None, None);
                    } else if !self.leadership.leading() {
                        tracing::debug!(error = %why, "leader election try failed");
                    }
                }
            }
            tokio::time::sleep(self.timing.retry).await;
        }
    }

    async fn try_once(&mut self) -> Tried {
        let now = k8s_openapi::jiff::Timestamp::now();
        let me = self.leadership.identity.clone();
        let current = match self.api.get_opt(&self.name).await {
            Ok(c) => c,
            Err(e) => return Tried::Failed(e.to_string()),
        };
        let Some(mut lease) = current else {
            let mut lease = Lease {
                metadata: ObjectMeta { name: Some(self.name.clone()), ..ObjectMeta::default() },
                spec: Some(self.spec_for(&me, now, None)),
            };
            self.mark(&mut lease.metadata);
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Tried::Held,
                Err(e) => Tried::Failed(e.to_string()),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        // When this replica saw the record change: the holder's own timestamps are not trusted
        // (clocks differ between nodes).
        let changed = self.observed.as_ref().is_none_or(|(seen, _)| *seen != spec);
        if changed {
            self.observed = Some((spec.clone(), Instant::now()));
        }
        let seen_at = self.observed.as_ref().map_or_else(Instant::now, |(_, at)| *at);
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.timing.lease, Duration::from_secs);
        let held_by_other = holder.as_deref().is_some_and(|h| h != me) && seen_at.elapsed() < duration;
        if held_by_other {
            let address = lease.metadata.annotations.as_ref().and_then(|a| a.get(PEER_ADDRESS)).cloned();
            return Tried::Other(holder, address);
        }
        // Ours to renew, or free to take: an optimistic update on the resourceVersion read.
        lease.spec = Some(self.spec_for(&me, now, Some(&spec)));
        self.mark(&mut lease.metadata);
        match self.api.replace(&self.name, &PostParams::default(), &lease).await {
            Ok(written) => {
                if let Some(spec) = written.spec {
                    self.observed = Some((spec, Instant::now()));
                }
                Tried::Held
            }
            Err(e) => Tried::Failed(e.to_string()),
        }
    }

    /// Name this replica's address in the Lease it writes (or none, removing a former
    /// holder's).
    fn mark(&self, metadata: &mut ObjectMeta) {
        let annotations = metadata.annotations.get_or_insert_with(Default::default);
        match locked(&self.leadership.advertised) {
            Some(address) => annotations.insert(PEER_ADDRESS.to_string(), address),
            None => annotations.remove(PEER_ADDRESS),
        };
        if annotations.is_empty() {
            metadata.annotations = None;
        }
    }

    /// The spec that says `me` holds the Lease from `now`: a renewal keeps the acquire time
    /// and transition count; a takeover counts one more transition.
    fn spec_for(&self, me: &str, now: k8s_openapi::jiff::Timestamp, before: Option<&LeaseSpec>) -> LeaseSpec {
        let ours = before.and_then(|b| b.holder_identity.as_deref()) == Some(me);
        let transitions = before.and_then(|b| b.lease_transitions).unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(me.to_string()),
            lease_duration_seconds: i32::try_from(self.timing.lease.as_secs()).ok(),
            acquire_time: if ours {
                before.and_then(|b| b.acquire_time.clone())
            } else {
                Some(MicroTime(now))
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(if ours || before.is_none() { transitions } else { transitions + 1 }),
            ..LeaseSpec::default()
        }
    }
}
