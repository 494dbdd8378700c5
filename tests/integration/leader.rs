//! One leader among the replicas, through a Lease in the stand-in API server (which answers a
//! stale write 409 Conflict, as the API server does): two candidates elect exactly one; the
//! Lease names it; killed without releasing, it is replaced within the lease duration; a leader
//! that cannot renew stops leading within the renew deadline; one that shuts down releases the
//! Lease, and the other takes it at its next try; and only the leader audits.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use covenant::audit::Auditor;
use covenant::cluster::lease::{elect, release, Leadership, Timing};
use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::metrics::Metrics;

const TIMING: Timing = Timing {
    lease: Duration::from_secs(2),
    renew_deadline: Duration::from_millis(1500),
    retry: Duration::from_millis(200),
};

fn leases(server: &common::apiserver::FakeServer) -> kube::Api<k8s_openapi::api::coordination::v1::Lease> {
    let client =
        kube::Client::try_from(kube::Config::new(format!("http://{}", server.addr).parse().unwrap()))
            .unwrap();
    kube::Api::namespaced(client, "covenant-system")
}

fn holder(server: &common::apiserver::FakeServer) -> Option<String> {
    let lease = server.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader")?;
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

/// Wait until `done`, at most `limit`; how long it took.
fn within(limit: Duration, what: &str, done: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    started.elapsed()
}

/// Two candidates electing through `server` (in the runtime entered), once one of them leads.
fn two_candidates(server: &common::apiserver::FakeServer) -> [(Leadership, tokio::task::JoinHandle<()>); 2] {
    let [a, b] =
        ["covenant-a", "covenant-b"].map(|name| elect(leases(server), "covenant-leader", name, TIMING));
    within(Duration::from_secs(3), "a leader", || a.0.leading() || b.0.leading());
    [a, b]
}

#[test]
fn two_replicas_elect_one_leader_and_a_dead_leader_is_replaced_within_the_lease() {
    let server = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let [(a, task_a), (b, task_b)] = two_candidates(&server);
    // Never two at once, and the Lease names the one that leads.
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        assert!(!(a.leading() && b.leading()), "two leaders at once");
        std::thread::sleep(Duration::from_millis(25));
    }
    let (leader, follower, leader_task, follower_task) =
        if a.leading() { (&a, &b, task_a, task_b) } else { (&b, &a, task_b, task_a) };
    assert_eq!(holder(&server).as_deref(), Some(leader.identity.as_str()));
    assert_eq!(follower.holder().as_deref(), Some(leader.identity.as_str()), "the follower knows who leads");
    // The leader dies without releasing the Lease: the other takes it once the lease has gone
    // unrenewed for its duration (as the follower observed it), and not before.
    leader_task.abort();
    let took =
        within(TIMING.lease + Duration::from_secs(2), "the follower to take over", || follower.leading());
    assert!(
        took + Duration::from_millis(400) >= TIMING.lease,
        "taken over after {took:?}, before the lease ran out"
    );
    assert_eq!(holder(&server).as_deref(), Some(follower.identity.as_str()));
    let lease =
        server.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader").unwrap();
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
    eprintln!("the follower led {took:?} after the leader died (lease {:?})", TIMING.lease);
    follower_task.abort();
}

/// A leader that shuts down gives up the Lease (client-go's ReleaseOnCancel): it stops leading
/// at once, and the other replica takes the Lease at its next try, well before the lease would
/// have run out.
#[test]
fn a_leader_that_shuts_down_releases_the_lease_and_the_other_takes_it_at_its_next_try() {
    let server = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let [(a, task_a), (b, task_b)] = two_candidates(&server);
    let (leader, follower, leader_task) = if a.leading() { (&a, &b, task_a) } else { (&b, &a, task_b) };
    leader_task.abort();
    let released = rt.block_on(release(&leases(&server), "covenant-leader", leader)).unwrap();
    assert!(released && !leader.leading());
    let lease =
        server.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader").unwrap();
    assert!(lease["spec"]["holderIdentity"].is_null(), "{lease}");
    let took = within(TIMING.lease, "the follower to take the released Lease", || follower.leading());
    assert!(took < TIMING.lease - TIMING.retry, "taken {took:?} after the release: not at its next try");
    assert_eq!(holder(&server).as_deref(), Some(follower.identity.as_str()));
    // Releasing a Lease another replica holds changes nothing.
    assert!(!rt.block_on(release(&leases(&server), "covenant-leader", leader)).unwrap());
    assert_eq!(holder(&server).as_deref(), Some(follower.identity.as_str()));
}

#[test]
fn a_leader_that_cannot_renew_stops_leading_within_the_renew_deadline() {
    let mut server = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let (a, task) = elect(leases(&server), "covenant-leader", "covenant-a", TIMING);
    within(Duration::from_secs(3), "a leader", || a.leading());
    server.stop();
    let took = within(TIMING.renew_deadline + Duration::from_secs(1), "to stop leading", || !a.leading());
    // It stopped before the lease could pass to anyone else.
    assert!(took < TIMING.lease, "stopped leading {took:?} after the API server went away");
    task.abort();
}

/// Only the leader audits: two auditors over the same objects, one led and one not; the
/// follower's summary says who leads and holds no run.
#[test]
fn only_the_leader_audits() {
    let config = Config::embedded().unwrap();
    let cluster: Arc<dyn ClusterView> =
        Arc::new(OfflineCluster::load_dir(&crate::audit::samples_dir()).unwrap());
    let options = crate::audit::options(&config);
    let auditor = |leadership: Leadership| {
        let registry = prometheus::Registry::new();
        Auditor::new(
            Arc::new(Engine::new(&config)),
            cluster.clone(),
            Metrics::register(&registry).unwrap(),
            options.clone(),
        )
        .led_by(leadership)
        .spawn()
        .unwrap()
    };
    let leader = auditor(Leadership::alone("covenant-a"));
    // A follower: an election that never succeeds (no API server behind it).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _guard = rt.enter();
    let nowhere = kube::Client::try_from(kube::Config::new("http://127.0.0.1:9".parse().unwrap())).unwrap();
    let (following, task) =
        elect(kube::Api::namespaced(nowhere, "covenant-system"), "covenant-leader", "covenant-b", TIMING);
    let follower = auditor(following);
    within(Duration::from_secs(30), "the leader's run", || leader.status.summary().last_run.is_some());
    std::thread::sleep(Duration::from_millis(600));
    let (l, f) = (leader.status.summary(), follower.status.summary());
    assert!(l.leader && l.last_run.is_some_and(|r| r.objects > 0));
    assert!(!f.leader && f.last_run.is_none() && !f.running, "the follower audited: {f:?}");
    task.abort();
}
