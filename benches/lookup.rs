//! What a lookup of the live view costs as the cluster grows: the published versions of one
//! construct (a pin's candidates) among 1k, 10k and 100k cached ClusterComponentTypes, through
//! the view's index (what the rules use) beside a pass over the kind (`list`, then keep the
//! name's), and the whole evaluation of a pinned Component at each size. The view watches the
//! stand-in API server the integration tests use, over plain HTTP on loopback. Flat, not linear:
//! the index is built once after the kind changes, and a lookup costs what it finds.

use std::hint::black_box;
use std::time::{Duration, Instant};

use covenant::cluster::live::{Following, LiveCluster};
use covenant::cluster::ClusterView;
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::families::labels::BY_LOGICAL_NAME;
use covenant::subject::Subject;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

#[allow(dead_code)]
#[path = "../tests/integration/common/apiserver.rs"]
mod apiserver;
#[allow(dead_code)]
#[path = "support/platform.rs"]
mod platform;

const GROUP: &str = "openchoreo.dev";

/// A live view of a stand-in API server holding `objects` ClusterComponentTypes, synced.
fn view_of(objects: usize) -> (apiserver::FakeServer, LiveCluster) {
    let mut fake = apiserver::Fake::default();
    for (kind, plural, namespaced) in
        [("ClusterComponentType", "clustercomponenttypes", false), ("Component", "components", true)]
    {
        fake.resources.push((GROUP.into(), plural.into(), kind.into(), namespaced));
    }
    fake.objects.insert(
        (GROUP.into(), "clustercomponenttypes".into()),
        platform::constructs(objects / platform::VERSIONS as usize),
    );
    fake.objects.insert((GROUP.into(), "components".into()), Vec::new());
    let server = apiserver::FakeServer::start(fake);
    let watched =
        ["ClusterComponentType", "Component"].iter().map(|k| (GROUP.to_string(), k.to_string())).collect();
    let view = LiveCluster::connect(
        kube::Config::new(format!("http://{}", server.addr).parse().unwrap()),
        watched,
        Following::default(),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !view.synced() {
        assert!(Instant::now() < deadline, "the view of {objects} objects never synced");
        std::thread::sleep(Duration::from_millis(20));
    }
    (server, view)
}

fn lookups(c: &mut Criterion) {
    let engine = Engine::new(&Config::embedded().unwrap());
    let mut g = c.benchmark_group("live_view_lookup");
    g.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for objects in [1_000, 10_000, 100_000] {
        let (_server, view) = view_of(objects);
        let names = objects / platform::VERSIONS as usize;
        let key = format!("svc-{}", names / 2);
        let found = view.lookup(GROUP, "ClusterComponentType", None, &BY_LOGICAL_NAME, &key, None).unwrap();
        assert_eq!(found.len(), platform::VERSIONS as usize);
        g.bench_with_input(BenchmarkId::new("index", objects), &key, |b, key| {
            b.iter(|| {
                view.lookup(GROUP, "ClusterComponentType", None, &BY_LOGICAL_NAME, black_box(key), None)
                    .unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("list_and_keep", objects), &key, |b, key| {
            b.iter(|| {
                let mut all = view.list(GROUP, "ClusterComponentType", None, None).unwrap();
                all.retain(|o| BY_LOGICAL_NAME.files(o, black_box(key)));
                all
            })
        });
        let component = platform::component(names / 2, names);
        let probe = engine.evaluate(&Subject::from_document(component.clone()), &view);
        assert!(probe.findings.is_empty(), "{:?}", probe.findings);
        g.bench_with_input(
            BenchmarkId::new("evaluate_pinned_component", objects),
            &component,
            |b, component| {
                b.iter_batched_ref(
                    || Subject::from_document(component.clone()),
                    |s| engine.evaluate(black_box(s), &view),
                    criterion::BatchSize::SmallInput,
                )
            },
        );
    }
    g.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
